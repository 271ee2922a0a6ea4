"""Every OpInfo in the catalogue gives the same values eager and traced, gradients included.

The eager result is the reference here (``tests/test_ops_*`` check eager
against NumPy); the traced side runs the optimized graph through the
executor, and its gradients are traced too (``tl.function(tl.grad(...))``).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing.op_db import all_opinfos

INFOS = all_opinfos()


def _dtypes(info):
    """float64 or complex128 (with gradients), plus the catalogue's first other dtype (forward only)."""
    chosen = [d for d in (np.dtype(np.float64), np.dtype(np.complex128)) if d in info.dtypes][:1]
    others = [d for d in info.dtypes if np.dtype(d) not in chosen]
    return chosen + others[:1]


def _assert_same(eager, traced, what, atol, rtol):
    assert len(eager) == len(traced), f"{what}: {len(eager)} eager outputs, {len(traced)} traced"
    for k, (e, t) in enumerate(zip(eager, traced)):
        if e is None or t is None:
            assert e is None and t is None, f"{what} output {k}: eager {e!r}, traced {t!r}"
            continue
        assert (e.dtype, tuple(e.shape)) == (t.dtype, tuple(t.shape)), (
            f"{what} output {k}: eager {e.dtype}{list(e.shape)}, traced {t.dtype}{list(t.shape)}"
        )
        np.testing.assert_allclose(
            t.numpy(), e.numpy(), atol=atol, rtol=rtol, equal_nan=True, err_msg=f"{what} output {k}"
        )


@pytest.mark.parametrize("info", INFOS, ids=lambda info: info.name)
@settings(max_examples=2)  # the rest from the hypothesis profile (tests/conftest.py); each example traces twice
@given(data=st.data())
def test_traced_matches_eager(info, data):
    for dtype in _dtypes(info):
        sample = data.draw(info.samples(dtype), label=f"sample {dtype}")
        positions, call = sample.split(info.op)
        tensors = [tl.tensor(sample.args[k]) for k in positions]
        atol, rtol = info.tolerances(dtype)
        what = f"{info.name} {dtype} {sample!r}"
        eager = tl.tree.leaves(call(*tensors))
        traced = tl.tree.leaves(tl.function(lambda *xs: call(*xs))(*tensors))
        _assert_same(eager, traced, f"{what} forward", atol, rtol)

        argnums = tuple(positions.index(k) for k in sample.grad_argnums if k in positions)
        if not info.differentiable or dtype not in (np.float64, np.complex128) or not argnums:
            continue
        rng = np.random.default_rng(0)
        weights = [
            rng.standard_normal(o.shape) + (1j * rng.standard_normal(o.shape) if o.dtype.kind == "c" else 0)
            if o.dtype.kind in "fc"
            else None
            for o in eager
        ]

        def loss(*xs):
            # A real loss (the real part of complex terms: Cast), so complex outputs are checked too.
            outs = tl.tree.leaves(call(*xs))
            return sum(tl.cast(tl.sum(o * w), "float64") for o, w in zip(outs, weights) if w is not None)

        grads_eager = tl.grad(loss, argnums=argnums)(*tensors)
        grads_traced = tl.function(tl.grad(loss, argnums=argnums))(*tensors)
        _assert_same(list(grads_eager), list(grads_traced), f"{what} gradient", info.grad_atol, info.grad_rtol)
