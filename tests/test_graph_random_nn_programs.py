"""The optimizer and the NumPy nn kernels, proven on random conv layers: traced + optimized == eager == float64 references.

Hypothesis draws a conv layer (strides, dilations, VALID / SAME / explicit padding, non-square filters, batch
and channels of 1), a bias added before or after, an activation (the ones the bias + activation fusions take
and one they do not), and a max or average pool (non-square, overlapping or strided windows, padding), with
NaN, inf, -0.0 and exact ties in the input.  Each program runs eagerly and traced (the first, checked run, then
runs into pooled buffers), with the conv + pool fusion off and on; its values are compared with NumPy loop
references (:mod:`tensorlib.testing.references`), NaN for NaN, and, on finite inputs, its traced gradients
(the fused conv backprops, ReluGrad moved before MaxPoolGrad) with the eager ones.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.graph import passes
from tensorlib.testing import references

ACTIVATIONS = {
    "relu": (tl.nn.relu, lambda v: np.maximum(v, 0.0)),
    "tanh": (tl.tanh, np.tanh),
    "sigmoid": (tl.sigmoid, lambda v: 1.0 / (1.0 + np.exp(-v))),
    "elu": (tl.nn.elu, lambda v: np.where(v > 0, v, np.expm1(np.minimum(v, 0.0)))),
    "none": (lambda v: v, lambda v: v),
}


@st.composite
def conv_layers(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if strides == (1, 1) else (1, 1)
    padding = draw(
        st.one_of(
            st.sampled_from(["SAME", "VALID"]),
            st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2)), st.tuples(st.integers(0, 2), st.integers(0, 2))),
        )
    )
    reach_h, reach_w = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    return {
        "dtype": draw(st.sampled_from(["float32", "float64"])),
        "shape": (
            draw(st.integers(1, 2)),
            draw(st.integers(reach_h, 8)),
            draw(st.integers(reach_w, 8)),
            draw(st.integers(1, 3)),
        ),
        "filter_hw": (kh, kw),
        "out_channels": draw(st.integers(1, 3)),
        "strides": strides,
        "dilations": dilations,
        "padding": padding,
        "bias_first": draw(st.booleans()),
        "activation": draw(st.sampled_from(sorted(ACTIVATIONS))),
        "pool": draw(st.sampled_from(["max", "avg"])),
        "pool_ksize": (draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        "pool_strides": (draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        "pool_padding": draw(st.sampled_from(["SAME", "VALID"])),
        "special": draw(st.sampled_from(["none", "ties", "nan", "inf", "-0.0"])),
        "seed": draw(st.integers(0, 2**16)),
    }


def _arrays(layer):
    rng = np.random.default_rng(layer["seed"])
    dtype, shape = layer["dtype"], layer["shape"]
    x = rng.standard_normal(shape)
    w = rng.standard_normal((*layer["filter_hw"], shape[3], layer["out_channels"]))
    b = rng.standard_normal(layer["out_channels"])
    if layer["special"] == "ties":
        x, w, b = np.round(x), np.round(w), np.round(b)
    elif layer["special"] != "none":
        x.flat[rng.integers(0, x.size, 2)] = float(layer["special"])
    return x.astype(dtype), w.astype(dtype), b.astype(dtype)


def _program(layer):
    activation = ACTIVATIONS[layer["activation"]][0]
    pool = tl.nn.max_pool if layer["pool"] == "max" else tl.nn.avg_pool

    def fn(x, w, b):
        conv = tl.nn.conv2d(x, w, layer["strides"], layer["padding"], layer["dilations"])
        h = activation(b + conv if layer["bias_first"] else conv + b)
        return pool(h, layer["pool_ksize"], layer["pool_strides"], layer["pool_padding"]), h

    return fn


def _reference(layer, x, w, b):
    conv = references.conv2d(x, w, layer["strides"], layer["padding"], layer["dilations"])
    with np.errstate(over="ignore"):
        h = ACTIVATIONS[layer["activation"]][1](conv + b.astype(np.float64))
    pool = references.max_pool if layer["pool"] == "max" else references.avg_pool
    return pool(h, layer["pool_ksize"], layer["pool_strides"], layer["pool_padding"]), h


def _close(got, want, what, rtol):
    got = got.numpy()
    scale = np.max(np.abs(want[np.isfinite(want)]), initial=1.0)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol * scale, err_msg=what)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf - inf, 0 * inf, exp overflow in the drawn values
@pytest.mark.parametrize("pool_fusion", [False, True])
@settings(max_examples=40, deadline=None)
@given(layer=conv_layers())
def test_a_traced_optimized_conv_layer_equals_eager_and_the_float64_references(layer, pool_fusion):
    saved, passes.FUSE_CONV_MAX_POOL = passes.FUSE_CONV_MAX_POOL, pool_fusion
    try:
        _check(layer)
    finally:
        passes.FUSE_CONV_MAX_POOL = saved


def _check(layer):
    fn = _program(layer)
    x, w, b = _arrays(layer)
    try:
        expected = _reference(layer, x, w, b)
        empty = any(0 in e.shape for e in expected)
    except ValueError:  # negative sizes
        empty = True
    if empty:  # a window bigger than the padded input: the ops refuse it, naming the sizes
        with pytest.raises(ValueError, match="smaller than the dilated kernel size"):
            fn(tl.tensor(x), tl.tensor(w), tl.tensor(b))
        return
    rtol = 1e-4 if layer["dtype"] == "float32" else 1e-10
    eager = fn(tl.tensor(x), tl.tensor(w), tl.tensor(b))
    traced = tl.function(fn)
    for run in range(3):
        got = traced(x, w, b)
        for k, name in enumerate(("pooled", "activation")):
            assert got[k].dtype == eager[k].dtype == np.dtype(layer["dtype"]) and got[k].shape == expected[k].shape
            _close(eager[k], expected[k], f"eager {name}", rtol)
            _close(got[k], expected[k], f"traced run {run} {name}", rtol)
    if layer["special"] in ("nan", "inf"):
        return  # gradients through inf and NaN: the values above already pin the kernels down

    def loss(x, w, b):
        pooled, h = fn(x, w, b)
        return tl.sum(pooled * pooled) + tl.sum(tl.tanh(h))

    grad = tl.grad(loss, argnums=(0, 1, 2))
    want = grad(tl.tensor(x), tl.tensor(w), tl.tensor(b))
    traced_grad = tl.function(grad)
    for run in range(2):
        for k, (got, expected_grad) in enumerate(zip(traced_grad(x, w, b), want)):
            _close(got, expected_grad.numpy().astype(np.float64), f"traced gradient {k}, run {run}", 10 * rtol)
