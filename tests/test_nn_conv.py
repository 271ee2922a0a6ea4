"""tl.nn.conv2d, conv2d_backprop_input, conv2d_backprop_filter and conv2d_transpose.

References are ``tensorlib.testing.references`` (NumPy, one strided view per
filter tap, TensorFlow's SAME rule worked out independently); PyTorch and
TensorFlow are compared where installed.
"""

import itertools
import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads, references


# ------------------------------------------------------------------ the sweep
def _sweep():
    rng = np.random.default_rng(1234)
    cases = []
    paddings = ["VALID", "SAME", ((1, 0), (2, 1)), ((0, 2), (1, 1))]
    for strides, dilations, padding in itertools.product(
        [(1, 1), (2, 2), (3, 1), (1, 3)], [(1, 1), (2, 2), (1, 2)], paddings
    ):
        kh, kw = rng.integers(1, 5, size=2)
        h, w = rng.integers(5, 10, size=2) + (np.array([kh, kw]) - 1) * np.array(dilations)
        cin, cout = rng.integers(1, 6, size=2)
        cases.append(
            ((2, int(h), int(w), int(cin)), (int(kh), int(kw), int(cin), int(cout)), strides, padding, dilations)
        )
    return cases


SWEEP = _sweep()


def _ids(case):
    return f"x{case[0]}-w{case[1]}-s{case[2]}-{case[3]}-d{case[4]}"


@pytest.mark.parametrize("case", SWEEP, ids=[_ids(c) for c in SWEEP])
def test_conv2d_and_backprops_match_loop_references(case):
    x_shape, w_shape, strides, padding, dilations = case
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    y = tl.nn.conv2d(x, w, strides, padding, dilations)
    np.testing.assert_allclose(y.numpy(), references.conv2d(x, w, strides, padding, dilations), rtol=1e-10, atol=1e-10)
    dy = rng.standard_normal(y.shape)
    dx = tl.nn.conv2d_backprop_input(x_shape, w, dy, strides, padding, dilations)
    np.testing.assert_allclose(
        dx.numpy(),
        references.conv2d_backprop_input(x_shape, w, dy, strides, padding, dilations),
        rtol=1e-10,
        atol=1e-10,
    )
    dw = tl.nn.conv2d_backprop_filter(x, w_shape, dy, strides, padding, dilations)
    np.testing.assert_allclose(
        dw.numpy(),
        references.conv2d_backprop_filter(x, w_shape, dy, strides, padding, dilations),
        rtol=1e-10,
        atol=1e-10,
    )


def test_the_sweep_covers_the_promised_grid():
    assert {c[2][0] for c in SWEEP} >= {1, 2, 3} and {c[4][0] for c in SWEEP} == {1, 2}
    assert {c[0][3] for c in SWEEP} | {c[1][3] for c in SWEEP} >= {1, 2, 3, 4, 5}
    assert {c[1][0] % 2 for c in SWEEP} == {0, 1} and {c[0][1] % 2 for c in SWEEP} == {0, 1}


@pytest.mark.parametrize(
    "strides, padding, dilations",
    [
        (1, "SAME", 1),
        ([1, 2, 2, 1], "VALID", [1, 1, 1, 1]),
        ((2, 1), [[0, 0], [1, 2], [2, 1], [0, 0]], (1, 2)),
        (2, "same", 1),
    ],
)
def test_attribute_forms_are_normalised(strides, padding, dilations):
    x, w = np.ones((1, 7, 8, 2)), np.ones((3, 2, 2, 3))
    y = tl.nn.conv2d(x, w, strides, padding, dilations)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v[1:3]) if len(v) == 4 else tuple(v)
    explicit = padding.upper() if isinstance(padding, str) else tuple(tuple(p) for p in padding[1:3])
    expected = references.conv2d(x, w, pair(strides), explicit, pair(dilations))
    np.testing.assert_allclose(y.numpy(), expected)


def test_conv2d_transpose_is_the_input_gradient_of_conv2d():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((3, 3, 2, 5))
    y = tl.nn.conv2d_transpose(x, w, (2, 6, 8, 2), strides=2, padding="SAME")
    np.testing.assert_allclose(y.numpy(), references.conv2d_backprop_input((2, 6, 8, 2), w, x, (2, 2), "SAME", (1, 1)))
    # <conv2d(a, w), x> == <a, conv2d_transpose(x, w)>: the adjoint identity.
    a = rng.standard_normal((2, 6, 8, 2))
    lhs = np.sum(tl.nn.conv2d(a, w, 2, "SAME").numpy() * x)
    np.testing.assert_allclose(lhs, np.sum(a * y.numpy()))
    assert tl.nn.conv2d_transpose(x, w, (None, 6, 8, 2), 2, "SAME").shape == (2, 6, 8, 2)


# ------------------------------------------------------------------ gradients, to second order
@pytest.mark.parametrize("strides, padding, dilations", [(1, "VALID", 1), (2, "SAME", 1), (1, ((1, 0), (0, 2)), 2)])
def test_conv2d_gradients_second_order(strides, padding, dilations):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 5, 6, 2)), rng.standard_normal((2, 3, 2, 3))
    check_grads(lambda x, w: tl.nn.conv2d(x, w, strides, padding, dilations), [x, w], order=2)


@pytest.mark.parametrize("strides, padding, dilations", [(1, "VALID", 1), (2, "SAME", 1), (1, ((1, 0), (0, 2)), 2)])
def test_backprop_ops_gradients_second_order(strides, padding, dilations):
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 5, 6, 2)), rng.standard_normal((2, 3, 2, 3))
    dy = rng.standard_normal(tl.nn.conv2d(x, w, strides, padding, dilations).shape)
    check_grads(
        lambda w, dy: tl.nn.conv2d_backprop_input(x.shape, w, dy, strides, padding, dilations), [w, dy], order=2
    )
    check_grads(
        lambda x, dy: tl.nn.conv2d_backprop_filter(x, w.shape, dy, strides, padding, dilations), [x, dy], order=2
    )


def _backward_conv_ops(f, operand, *args):
    """The Conv2D-family op types that computing d f(*args) / d operand runs."""
    with tl.GradientTape() as tape:
        tape.watch(operand)
        y = f(*args)
    with tl.profile() as prof:
        tape.gradient(y, operand)
    return [e.op_type for e in prof.events if e.op_type.startswith("Conv2D")]


def test_the_three_conv_ops_differentiate_into_each_other():
    x, w = tl.tensor(np.ones((1, 4, 4, 2))), tl.tensor(np.ones((3, 3, 2, 2)))
    expected = {
        "Conv2D": {"input": "Conv2DBackpropInput", "filters": "Conv2DBackpropFilter"},
        "Conv2DBackpropInput": {"filters": "Conv2DBackpropFilter", "out_backprop": "Conv2D"},
        "Conv2DBackpropFilter": {"input": "Conv2DBackpropInput", "out_backprop": "Conv2D"},
    }
    dy = tl.tensor(np.ones((1, 2, 2, 2)))
    calls = {
        "Conv2D": lambda a, b: tl.nn.conv2d(a, b, 1, "VALID"),
        "Conv2DBackpropInput": lambda a, b: tl.nn.conv2d_backprop_input((1, 4, 4, 2), a, b, 1, "VALID"),
        "Conv2DBackpropFilter": lambda a, b: tl.nn.conv2d_backprop_filter(a, (3, 3, 2, 2), b, 1, "VALID"),
    }
    operands = {"Conv2D": (x, w), "Conv2DBackpropInput": (w, dy), "Conv2DBackpropFilter": (x, dy)}
    for op_type, per_input in expected.items():
        a, b = operands[op_type]
        names = tl.ops.get(op_type).input_names
        for name, operand in zip(names, (a, b)):
            assert _backward_conv_ops(calls[op_type], operand, a, b) == [per_input[name]], (op_type, name)


def test_only_needed_gradients_are_computed():
    x, w = tl.tensor(np.ones((1, 4, 4, 1))), tl.tensor(np.ones((3, 3, 1, 2)))
    ops = _backward_conv_ops(lambda x, w: tl.nn.conv2d(x, w, 1, "VALID"), w, x, w)
    assert ops == ["Conv2DBackpropFilter"]  # the images need no gradient: no Conv2DBackpropInput runs


# ------------------------------------------------------------------ dtypes
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_dtype_is_kept_forward_and_backward(dtype):
    rng = np.random.default_rng(7)
    x = tl.tensor(rng.standard_normal((2, 6, 6, 3)).astype(dtype))
    w = tl.Variable(rng.standard_normal((3, 3, 3, 4)).astype(dtype))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.nn.conv2d(x, w, 2, "SAME")
        loss = tl.sum(y * y)
    dx, dw = tape.gradient(loss, [x, w])
    assert y.dtype == dx.dtype == dw.dtype == np.dtype(dtype)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    ref = references.conv2d(x.numpy().astype(np.float64), w.numpy().astype(np.float64), (2, 2), "SAME", (1, 1))
    np.testing.assert_allclose(y.numpy(), ref, rtol=tol, atol=tol * np.abs(ref).max())
    ref_dx = references.conv2d_backprop_input(x.shape, w.numpy().astype(np.float64), 2 * ref, (2, 2), "SAME", (1, 1))
    np.testing.assert_allclose(dx.numpy(), ref_dx, rtol=tol, atol=tol * np.abs(ref_dx).max())


def test_mixed_float_dtypes_promote():
    y = tl.nn.conv2d(np.ones((1, 3, 3, 1), np.float32), np.ones((2, 2, 1, 1), np.float64), 1, "VALID")
    assert y.dtype == np.float64


# ------------------------------------------------------------------ errors
def _raises(exc, match, f, *args, **kwargs):
    with pytest.raises(exc, match=match):
        f(*args, **kwargs)


def test_depth_mismatch_names_op_and_both_shapes():
    _raises(
        ValueError,
        r"^Conv2D: input depth 3 does not match filter in_channels 1 \(input shape \(8, 32, 32, 3\), "
        r"filter shape \(3, 3, 1, 6\)\)",
        tl.nn.conv2d,
        np.ones((8, 32, 32, 3), np.float32),
        np.ones((3, 3, 1, 6), np.float32),
        1,
        "SAME",
    )


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (((8, 8, 3), (3, 3, 3, 1), 1, "SAME"), ValueError, r"^Conv2D: input must be 4-D NHWC .* got shape \(8, 8, 3\)"),
        (
            ((1, 8, 8, 3), (3, 3, 3), 1, "SAME"),
            ValueError,
            r"^Conv2D: filter must be 4-D HWIO .* got shape \(3, 3, 3\)",
        ),
        (((1, 8, 8, 1), (3, 3, 1, 1), 0, "SAME"), ValueError, r"^Conv2D: strides must be >= 1, got 0"),
        (
            ((1, 8, 8, 1), (3, 3, 1, 1), (1, 2, 3), "SAME"),
            ValueError,
            r"^Conv2D: strides must be an int, a \(rows, cols\) pair or \[1, rows, cols, 1\], got \(1, 2, 3\)",
        ),
        (((1, 8, 8, 1), (3, 3, 1, 1), [2, 1, 1, 1], "SAME"), ValueError, r"^Conv2D: strides must be an int"),
        (
            ((1, 8, 8, 1), (3, 3, 1, 1), 1, "FULL"),
            ValueError,
            r"^Conv2D: padding must be 'VALID', 'SAME' or \(\(top, bottom\), \(left, right\)\), got 'FULL'",
        ),
        (((1, 8, 8, 1), (3, 3, 1, 1), 1, ((1, -1), (0, 0))), ValueError, r"^Conv2D: padding must be"),
        (
            ((1, 2, 2, 1), (3, 3, 1, 1), 1, "VALID"),
            ValueError,
            r"^Conv2D: .*input size 2 .* smaller than the dilated kernel size 3",
        ),
    ],
)
def test_conv2d_error_messages(args, exc, match):
    x_shape, w_shape, strides, padding = args
    _raises(exc, match, tl.nn.conv2d, np.ones(x_shape), np.ones(w_shape), strides, padding)


@pytest.mark.parametrize("mode", ["eager", "traced"])
@pytest.mark.parametrize(
    "x_shape, w_shape", [((1, 5, 5, 0), (3, 3, 0, 4)), ((1, 5, 5, 2), (3, 3, 2, 0)), ((1, 5, 5, 2), (0, 3, 2, 1))]
)
def test_a_filter_with_zero_elements_is_refused_naming_the_shapes(mode, x_shape, w_shape):
    # It failed inside the kernel with NumPy's "cannot reshape array of size 0" (traced: without the
    # op's name); TensorFlow refuses such a filter too.
    def f(x, w):
        return tl.nn.conv2d(x, w, 1, "SAME")

    match = rf"^Conv2D: filter must not have zero elements .* got filter shape {re.escape(str(w_shape))}"
    with pytest.raises(ValueError, match=match):
        (f if mode == "eager" else tl.function(f))(np.ones(x_shape, np.float32), np.ones(w_shape, np.float32))


def test_a_filter_with_zero_elements_is_refused_as_tensorflow_does():
    # (a filter of no output channels is accepted from TF 2.21 on: it gives an empty output there)
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.InvalidArgumentError, match="filter must not have zero elements"):
        tf.nn.conv2d(tf.ones((1, 5, 5, 2)), tf.ones((0, 3, 2, 4)), 1, "SAME")


def test_integer_input_is_rejected_with_its_dtype():
    _raises(
        TypeError,
        r"^Conv2D: input must be a floating-point tensor, got int64",
        tl.nn.conv2d,
        np.ones((1, 4, 4, 1), np.int64),
        np.ones((2, 2, 1, 1), np.int64),
        1,
        "VALID",
    )


def test_backprop_shape_errors():
    w = np.ones((3, 3, 2, 4))
    _raises(
        ValueError,
        r"^Conv2DBackpropInput: out_backprop shape \(1, 5, 5, 4\) does not match the expected "
        r"\(1, 6, 6, 4\)",
        tl.nn.conv2d_backprop_input,
        (1, 8, 8, 2),
        w,
        np.ones((1, 5, 5, 4)),
        1,
        "VALID",
    )
    _raises(
        ValueError,
        r"^Conv2DBackpropInput: input_shape must be 4-D with known height, width and channels, "
        r"got \(1, None, 8, 2\)",
        tl.nn.conv2d_backprop_input,
        (1, None, 8, 2),
        w,
        np.ones((1, 6, 6, 4)),
        1,
        "VALID",
    )
    _raises(
        ValueError,
        r"^Conv2DBackpropFilter: input depth 3 does not match filter in_channels 2",
        tl.nn.conv2d_backprop_filter,
        np.ones((1, 8, 8, 3)),
        w.shape,
        np.ones((1, 6, 6, 4)),
        1,
        "VALID",
    )
    _raises(
        TypeError,
        r"^Conv2DBackpropFilter: filter_shape must be a sequence of 4 ints, got 'abc'",
        tl.nn.conv2d_backprop_filter,
        np.ones((1, 8, 8, 2)),
        "abc",
        np.ones((1, 6, 6, 4)),
        1,
        "VALID",
    )


# ------------------------------------------------------------------ symbolic batch (tracing)
def test_shape_rules_accept_an_unknown_batch():
    from tensorlib.ops.nn import conv as ops_nn

    spec = tl.TensorSpec
    x, w = spec((None, 28, 28, 1)), spec((5, 5, 1, 32))
    attrs = {"strides": (2, 2), "padding": "SAME", "dilations": (1, 1)}
    y = ops_nn._conv2d_infer(x, w, **attrs)
    assert y.shape == (None, 14, 14, 32)
    dx = ops_nn._backprop_input_infer(w, y, input_shape=(None, 28, 28, 1), **attrs)
    assert dx.shape == (None, 28, 28, 1)
    assert ops_nn._backprop_filter_infer(x, y, filter_shape=(5, 5, 1, 32), **attrs).shape == (5, 5, 1, 32)


def test_backprop_input_takes_the_batch_from_out_backprop():
    w = np.ones((3, 3, 1, 1))
    dx = tl.nn.conv2d_backprop_input((None, 5, 5, 1), w, np.ones((3, 3, 3, 1)), 1, "VALID")
    np.testing.assert_allclose(
        dx.numpy(), references.conv2d_backprop_input((3, 5, 5, 1), w, np.ones((3, 3, 3, 1)), (1, 1), "VALID", (1, 1))
    )


@pytest.mark.skipif(not hasattr(tl, "function"), reason="tl.function is not available yet")
def test_traced_gradient_with_unknown_batch():
    w = tl.Variable(np.random.default_rng(0).standard_normal((5, 5, 1, 4)).astype(np.float32))

    @tl.function
    def grads(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            loss = tl.sum(tl.nn.relu(tl.nn.conv2d(x, w, 2, "SAME")))
        return tape.gradient(loss, [x, w])

    graph = grads.get_graph(tl.TensorSpec((None, 28, 28, 1), "float32"))
    types = [n.op_type for n in graph.nodes]
    assert "Conv2DBackpropInput" in types and "Conv2DBackpropFilter" in types
    for batch in (3, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 28, 28, 1)).astype(np.float32)
        with tl.GradientTape() as tape:
            xt = tl.tensor(x)
            tape.watch(xt)
            loss = tl.sum(tl.nn.relu(tl.nn.conv2d(xt, w, 2, "SAME")))
        eager = tape.gradient(loss, [xt, w])
        traced = grads(x)
        for a, b in zip(traced, eager):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ other frameworks
@pytest.mark.parametrize(
    "strides, padding, dilations",
    [(1, "SAME", 1), (2, "SAME", 1), (2, "VALID", 1), (1, "SAME", 2), (3, [[0, 0], [1, 2], [0, 3], [0, 0]], 1)],
)
def test_against_tensorflow(strides, padding, dilations):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal((2, 9, 8, 3)), rng.standard_normal((3, 2, 3, 4))
    y_tf = tf.nn.conv2d(x, w, strides, padding, dilations=dilations)
    y = tl.nn.conv2d(x, w, strides, padding, dilations)
    np.testing.assert_allclose(y.numpy(), y_tf.numpy(), rtol=1e-9, atol=1e-9)
    if dilations != 1:  # TensorFlow's CPU kernels have no dilated gradients
        return
    dy = rng.standard_normal(y.shape)
    tf_dx = tf.compat.v1.nn.conv2d_backprop_input(x.shape, w, dy, [1, *y_strides(strides), 1], padding)
    tf_dw = tf.compat.v1.nn.conv2d_backprop_filter(x, w.shape, dy, [1, *y_strides(strides), 1], padding)
    np.testing.assert_allclose(
        tl.nn.conv2d_backprop_input(x.shape, w, dy, strides, padding).numpy(), tf_dx.numpy(), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_allclose(
        tl.nn.conv2d_backprop_filter(x, w.shape, dy, strides, padding).numpy(), tf_dw.numpy(), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_allclose(
        tl.nn.conv2d_transpose(dy, w, x.shape, strides, padding).numpy(),
        tf.nn.conv2d_transpose(dy, w, x.shape, strides, padding).numpy(),
        rtol=1e-9,
        atol=1e-9,
    )


def y_strides(strides):
    return (strides, strides) if isinstance(strides, int) else strides


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    x, w = rng.standard_normal((2, 9, 10, 3)), rng.standard_normal((3, 3, 3, 5))
    pads, strides, dilations = ((2, 2), (1, 1)), (2, 3), (2, 1)
    xt = torch.tensor(x.transpose(0, 3, 1, 2), requires_grad=True)
    wt = torch.tensor(w.transpose(3, 2, 0, 1), requires_grad=True)
    y_t = torch.nn.functional.conv2d(xt, wt, stride=strides, padding=(2, 1), dilation=dilations)
    (y_t**2).sum().backward()
    xs, ws = tl.tensor(x), tl.tensor(w)
    with tl.GradientTape() as t:
        t.watch([xs, ws])
        y = tl.nn.conv2d(xs, ws, strides, pads, dilations)
        loss = tl.sum(y * y)
    dx, dw = t.gradient(loss, [xs, ws])
    np.testing.assert_allclose(y.numpy(), y_t.detach().numpy().transpose(0, 2, 3, 1), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dx.numpy(), xt.grad.numpy().transpose(0, 2, 3, 1), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dw.numpy(), wt.grad.numpy().transpose(2, 3, 1, 0), rtol=1e-9, atol=1e-9)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the sums' inf - inf and 0 * inf
@pytest.mark.parametrize("strategy", ["shifted_gemm", "im2col_gemm", "fourier_gemm"])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_an_inf_or_nan_reaches_only_the_outputs_whose_sums_read_it_whatever_the_strategy(strategy, padding):
    # A spectrum spreads one inf over its whole image: fourier_gemm made every output of that image NaN.
    from tensorlib.backends import numpy_nn
    from tensorlib.backends.numpy_nn import fused_grad

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((3, 2, 3, 4))
    x[0, 0, 0, 0], x[1, 4, 2, 1] = np.inf, np.nan
    strides, dilations, pads = (1, 1), (1, 1), references.geometry(x.shape[1:3], w.shape[:2], 1, padding)[2]
    y = numpy_nn.conv2d(x, w, strides, dilations, pads, strategy=strategy)
    np.testing.assert_allclose(y, references.conv2d(x, w, 1, padding), rtol=1e-10, atol=1e-10)
    dy = rng.standard_normal(y.shape)
    dy[1, 1, 2, 3] = -np.inf
    finite_x = np.where(np.isfinite(x), x, 1.0)
    dx = references.conv2d_backprop_input(x.shape, w, dy, 1, padding)
    dw = references.conv2d_backprop_filter(finite_x, w.shape, dy, 1, padding)
    got_dx = numpy_nn.conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads, strategy=strategy)
    got_dw = numpy_nn.conv2d_backprop_filter(finite_x, w.shape, dy, strides, dilations, pads, strategy=strategy)
    fused = fused_grad.conv2d_backprop(finite_x, w, dy, strides, dilations, pads, strategy=strategy)
    dw_x = numpy_nn.conv2d_backprop_filter(x, w.shape, np.ones_like(y), strides, dilations, pads, strategy=strategy)
    expected_dw_x = references.conv2d_backprop_filter(x, w.shape, np.ones_like(y), 1, padding)
    np.testing.assert_allclose(got_dx, dx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got_dw, dw, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fused[0], dx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fused[1], dw, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fused[2], dy.sum(axis=(0, 1, 2)), rtol=1e-10)
    np.testing.assert_allclose(dw_x, expected_dw_x, rtol=1e-10, atol=1e-10)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_fourier_gemm_meeting_an_inf_in_a_later_chunk_or_the_filter_falls_back_to_direct_sums():
    # The fourier kernels find a non-finite image from its spectrum's zero frequency, chunk by chunk and in
    # whichever thread transforms it; a non-finite filter is checked up front.  Either way the whole result,
    # epilogues included, is written again by a patch strategy.
    from tensorlib.backends import numpy_nn
    from tensorlib.backends.numpy_nn import fused, fused_grad

    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((64, 9, 9, 4)), rng.standard_normal((3, 3, 4, 5))
    x[57, 3, 3, 2] = np.inf
    strides, dilations, pads = (1, 1), (1, 1), ((1, 1), (1, 1))
    expected = references.conv2d(x, w, 1, "SAME")
    y = numpy_nn.conv2d(x, w, strides, dilations, pads, strategy="fourier_gemm")
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-10)
    assert np.isfinite(y[:57]).all() and np.isfinite(y[57]).sum() > 0
    bias = rng.standard_normal(5)
    activated = fused.conv2d_add_activation(x, w, bias, strides, dilations, pads, activation="relu")
    np.testing.assert_allclose(activated, np.maximum(expected + bias, 0), rtol=1e-10, atol=1e-10)
    w_nan = w.copy()
    w_nan[1, 1, 0, 3] = np.nan
    finite_x = np.where(np.isfinite(x), x, 0.5)
    y = numpy_nn.conv2d(finite_x, w_nan, strides, dilations, pads, strategy="fourier_gemm")
    np.testing.assert_allclose(y, references.conv2d(finite_x, w_nan, 1, "SAME"), rtol=1e-10, atol=1e-10)
    assert np.isfinite(y[..., :3]).all()
    dy = rng.standard_normal(y.shape)
    dy[40, 0, 8, 1] = -np.inf
    dx, dw, db = fused_grad.conv2d_backprop(
        np.abs(finite_x), w, dy, strides, dilations, pads, strategy="fourier_gemm", relu_grad=True
    )
    np.testing.assert_allclose(dx, references.conv2d_backprop_input(x.shape, w, dy, 1, "SAME"), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(dw, references.conv2d_backprop_filter(np.abs(finite_x), w.shape, dy, 1, "SAME"))
    np.testing.assert_allclose(db, dy.sum(axis=(0, 1, 2)), rtol=1e-12)
