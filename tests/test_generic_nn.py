"""The Array API nn kernels (backends/generic_nn: conv, pools, batch norm) against NumPy's tuned kernels,
on NumPy and on array_api_strict, over strides, dilations, SAME/VALID padding and tied maxima."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorlib.backends import generic_nn
from tensorlib.backends import numpy_nn as nn


def _namespaces():
    out = [np]
    try:
        import tensorlib as tl

        out.append(tl.backends.get("array_api_strict").xp)
    except ImportError:
        pass
    return out


def _run(fn, xp, *arrays_then_rest, n_arrays):
    """``fn`` on ``xp`` arrays (the first ``n_arrays`` arguments), back as NumPy arrays."""
    if xp is np:
        out = fn(np, *arrays_then_rest)
    else:
        arrays = [xp._module.asarray(a) for a in arrays_then_rest[:n_arrays]]
        out = fn(xp, *arrays, *arrays_then_rest[n_arrays:])
    return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)


@st.composite
def _conv_case(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = draw(st.sampled_from(["VALID", "SAME", ((1, 0), (0, 2))]))
    h = draw(st.integers((kh - 1) * dilations[0] + 1, 6))
    w = draw(st.integers((kw - 1) * dilations[1] + 1, 6))
    n, cin, cout = draw(st.integers(0, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.standard_normal((n, h, w, cin)), rng.standard_normal((kh, kw, cin, cout)), strides, dilations, padding


@pytest.mark.parametrize("xp", _namespaces(), ids=lambda xp: getattr(xp, "__name__", "array_api_strict"))
@settings(max_examples=15, deadline=None)
@given(case=_conv_case())
def test_conv_and_its_transposes_match_numpys_kernels(xp, case):
    x, w, strides, dilations, padding = case
    out_hw, pads = nn.resolve_conv_padding(x.shape[1:3], w.shape[:2], strides, dilations, padding)
    y = nn.conv2d(x, w, strides, dilations, pads)
    np.testing.assert_allclose(_run(generic_nn.conv2d, xp, x, w, strides, dilations, pads, n_arrays=2), y, atol=1e-12)
    dy = np.random.default_rng(1).standard_normal(y.shape)
    want_dx = nn.conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads)
    got_dx = _run(
        lambda xp, w, dy, *rest: generic_nn.conv2d_backprop_input(xp, x.shape, w, dy, *rest),
        xp,
        w,
        dy,
        strides,
        dilations,
        pads,
        n_arrays=2,
    )
    np.testing.assert_allclose(got_dx, want_dx, atol=1e-12)
    want_dw = nn.conv2d_backprop_filter(x, w.shape, dy, strides, dilations, pads)
    got_dw = _run(
        lambda xp, x, dy, *rest: generic_nn.conv2d_backprop_filter(xp, x, w.shape, dy, *rest),
        xp,
        x,
        dy,
        strides,
        dilations,
        pads,
        n_arrays=2,
    )
    np.testing.assert_allclose(got_dw, want_dw, atol=1e-12)


@st.composite
def _pool_case(draw):
    ksize = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    h, w = draw(st.integers(ksize[0], 6)), draw(st.integers(ksize[1], 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # Few distinct values: windows with tied maxima, which the gradient routes to the first one.
    x = rng.integers(0, 3, size=(draw(st.integers(1, 2)), h, w, 2)).astype(np.float64)
    return x, ksize, strides, padding


@pytest.mark.parametrize("xp", _namespaces(), ids=lambda xp: getattr(xp, "__name__", "array_api_strict"))
@settings(max_examples=15, deadline=None)
@given(case=_pool_case())
def test_pools_and_their_gradients_match_numpys_kernels_with_ties(xp, case):
    x, ksize, strides, padding = case
    pads = nn.resolve_conv_padding(x.shape[1:3], ksize, strides, (1, 1), padding)[1]
    rng = np.random.default_rng(2)
    for name in ("avg_pool", "max_pool"):
        y = getattr(nn, name)(x, ksize, strides, pads)
        np.testing.assert_allclose(_run(getattr(generic_nn, name), xp, x, ksize, strides, pads, n_arrays=1), y)
    y = nn.max_pool(x, ksize, strides, pads)
    dy = rng.standard_normal(y.shape)
    np.testing.assert_allclose(
        _run(generic_nn.max_pool_grad, xp, x, y, dy, ksize, strides, pads, n_arrays=3),
        nn.max_pool_grad(x, y, dy, ksize, strides, pads),
    )
    ddx = rng.standard_normal(x.shape)
    np.testing.assert_allclose(
        _run(generic_nn.max_pool_grad_grad, xp, x, y, ddx, ksize, strides, pads, n_arrays=3),
        nn.max_pool_grad_grad(x, y, ddx, ksize, strides, pads),
    )
    np.testing.assert_allclose(
        _run(
            lambda xp, dy, *rest: generic_nn.avg_pool_grad(xp, x.shape, dy, *rest),
            xp,
            dy,
            ksize,
            strides,
            pads,
            n_arrays=1,
        ),
        nn.avg_pool_grad(x.shape, dy, ksize, strides, pads),
    )


@pytest.mark.parametrize("xp", _namespaces(), ids=lambda xp: getattr(xp, "__name__", "array_api_strict"))
def test_batch_norm_matches_numpys_kernels(xp):
    rng = np.random.default_rng(3)
    x, dy = rng.standard_normal((2, 3, 3, 4)), rng.standard_normal((2, 3, 3, 4))
    scale, offset = rng.standard_normal(4), rng.standard_normal(4)
    want = nn.fused_batch_norm_forward(x, scale, offset, 1e-3)
    got = _run(generic_nn.batch_norm_forward, xp, x, scale, offset, 1e-3, n_arrays=3)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    mean, inv_std = want[1], want[3]
    got = _run(generic_nn.batch_norm_backward, xp, dy, x, scale, mean, inv_std, n_arrays=5)
    for g, e in zip(got, nn.fused_batch_norm_backward(dy, x, scale, mean, inv_std)):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("xp", _namespaces(), ids=lambda xp: getattr(xp, "__name__", "array_api_strict"))
def test_erf_and_gelu_match_the_math_module_to_float64_precision(xp):
    import math

    x = np.concatenate([np.linspace(-7.0, 7.0, 2801), [0.0, -0.0, 1e-300, 2.9999999, 3.0, 3.0000001, 40.0, -np.inf]])
    want = np.array([math.erf(v) for v in x])
    got = _run(generic_nn.erf, xp, x, n_arrays=1)
    np.testing.assert_allclose(got, want, rtol=3e-15, atol=0)
    assert np.isnan(_run(generic_nn.erf, xp, np.array([np.nan]), n_arrays=1)).all()
    got32 = _run(generic_nn.erf, xp, x.astype(np.float32), n_arrays=1)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, np.array([math.erf(v) for v in x.astype(np.float32)]), rtol=1.2e-7, atol=1e-45)
    complement = _run(generic_nn.erfc, xp, x, n_arrays=1)
    np.testing.assert_allclose(complement, [math.erfc(v) for v in x], rtol=1e-10, atol=0)  # 1 - series below 3
    # Phi(x) = erfc(-x / sqrt 2) / 2: 1 + erf(x / sqrt 2) cancels for negative x (4e-5 off at x = -7 in float64).
    gelu = _run(lambda xp, v: generic_nn.gelu(xp, v, False), xp, x[:-1], n_arrays=1)
    np.testing.assert_allclose(gelu, 0.5 * x[:-1] * np.array([math.erfc(-v / math.sqrt(2.0)) for v in x[:-1]]))
    tanh_form = _run(lambda xp, v: generic_nn.gelu(xp, v, True), xp, x[:-1], n_arrays=1)
    cubic = x[:-1] + 0.044715 * x[:-1] ** 3
    np.testing.assert_allclose(tanh_form, x[:-1] / (1.0 + np.exp(-2.0 * math.sqrt(2.0 / math.pi) * cubic)))
