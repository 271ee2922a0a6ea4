"""Random tensors with explicit seeding.

Every function takes ``seed=``: the same seed gives the same numbers.  Without
one, numbers come from a global generator that ``tl.random.seed(s)`` resets.
The module-level functions are ops, so a traced function draws new numbers on
each run; a :class:`Generator` object's methods draw when called (inside
``tl.function``, once, at trace time).

>>> import tensorlib as tl
>>> a = tl.random.normal((2,), seed=0); b = tl.random.normal((2,), seed=0)
>>> bool((a == b).numpy().all())
True
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..backends import base as _backends
from ..dispatch import apply
from ..tensor import Tensor, make
from .registry import defop, spec


class Generator:
    """A seeded stream of random tensors (NumPy's PCG64 underneath, on any backend)."""

    def __init__(self, seed: int | None = None):
        self._rng = np.random.default_rng(seed)

    def _finish(self, host, dtype, backend) -> Tensor:
        b = _backends.current() if backend is None else _backends.get(backend)
        return make(b.asarray(host.astype(_dt.as_dtype(dtype), copy=False)), b)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        return self._finish(self._rng.normal(mean, stddev, size=tuple(shape)), dtype, backend)

    def uniform(self, shape, minval=0.0, maxval=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        d = _dt.as_dtype(dtype)
        if d.kind in "iu":
            return self._finish(self._rng.integers(minval, maxval, size=tuple(shape)), d, backend)
        return self._finish(self._rng.uniform(minval, maxval, size=tuple(shape)), d, backend)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        """Normal samples redrawn until within two standard deviations (TensorFlow's rule)."""
        out = self._rng.normal(size=tuple(shape))
        bad = np.abs(out) > 2
        while bad.any():
            out[bad] = self._rng.normal(size=int(bad.sum()))
            bad = np.abs(out) > 2
        return self._finish(mean + stddev * out, dtype, backend)

    def bernoulli(self, shape, p=0.5, dtype=_dt.bool_, backend=None) -> Tensor:
        return self._finish(self._rng.random(size=tuple(shape)) < p, dtype, backend)

    def permutation(self, n: int, backend=None) -> Tensor:
        return self._finish(self._rng.permutation(n), _dt.int64, backend)


_global = [Generator()]


def seed(value: int) -> None:
    """Reset the global generator."""
    _global[0] = Generator(value)


def _gen(seed):
    return _global[0] if seed is None else Generator(seed)


# The module-level draws are ops (stateful, not differentiable), so a traced function draws new
# numbers on every run instead of baking the trace-time draw into its graph.
def _draw_infer(*, shape, dtype, seed, a, b):
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    return spec(shape, dtype)


def _draw_op(name, draw, doc):
    op = defop(
        name,
        inputs=(),
        attrs={"shape": (), "dtype": _dt.float32, "seed": None, "a": 0.0, "b": 1.0},
        infer=_draw_infer,
        differentiable=False,
        stateful=True,
        doc=doc,
    )

    @op.generic
    def _kernel(xp, *, shape, dtype, seed, a, b):
        host = draw(_gen(seed), shape, a, b, dtype)
        return xp.asarray(host.astype(dtype, copy=False))

    return op


_normal = _draw_op(
    "RandomStandardNormal",
    lambda g, shape, a, b, dtype: g._rng.normal(a, b, size=shape),
    "Normal samples with mean a and standard deviation b.",
)
_uniform = _draw_op(
    "RandomUniform",
    lambda g, shape, a, b, dtype: (
        g._rng.integers(a, b, size=shape) if dtype.kind in "iu" else g._rng.uniform(a, b, size=shape)
    ),
    "Uniform samples in [a, b).",
)
_truncated = _draw_op(
    "TruncatedNormal",
    lambda g, shape, a, b, dtype: g.truncated_normal(shape, a, b, _dt.float64).numpy(),
    "Normal samples within two standard deviations of the mean a (standard deviation b).",
)
_bernoulli = _draw_op(
    "RandomBernoulli", lambda g, shape, a, b, dtype: g._rng.random(size=shape) < a, "True with probability a."
)


def _sample(op, shape, dtype, seed, backend, a=0.0, b=1.0) -> Tensor:
    attrs = {
        "shape": tuple(int(d) for d in shape),
        "dtype": _dt.as_dtype(dtype),
        "seed": None if seed is None else int(seed),
        "a": a,
        "b": b,
    }
    if backend is None:
        return apply(op, (), attrs)
    with _backends.backend(backend):
        return apply(op, (), attrs)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _sample(_normal, shape, dtype, seed, backend, float(mean), float(stddev))


def uniform(shape, minval=0.0, maxval=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _sample(_uniform, shape, dtype, seed, backend, minval, maxval)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _sample(_truncated, shape, dtype, seed, backend, float(mean), float(stddev))


def bernoulli(shape, p=0.5, dtype=_dt.bool_, seed=None, backend=None) -> Tensor:
    return _sample(_bernoulli, shape, dtype, seed, backend, float(p))


def permutation(n: int, seed=None, backend=None) -> Tensor:
    """A random permutation of ``range(n)`` (drawn when called, also inside ``tl.function``)."""
    return _gen(seed).permutation(n, backend)
