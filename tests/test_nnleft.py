"""tl.nn.conv3d_transpose and the Conv3DTranspose layer (TensorFlow's ``tf.nn.conv3d_transpose``, Keras'
``Conv3DTranspose``, PyTorch's ``conv_transpose3d`` / ``nn.ConvTranspose3d``), checked against a NumPy scatter-add
loop (always), torch in float64 (when installed) and float64 central differences; and the conv family's gaps."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(20261203)


def _transpose_ref(x, w, out_shape, strides, pads, dilations, cotangent=None):
    """The transposed conv as the scatter-add it is: input cell ``o`` times filter tap ``k`` lands on output cell
    ``o * s + k * d - pad_before``.  NDHWC ``x``, ``w`` (kd, kh, kw, out_channels, in_channels), explicit pads.
    With ``cotangent`` (the output's shape), also the gradients of ``sum(y * cotangent)`` for ``x`` and ``w``."""
    n, depth, height, width, channels = out_shape
    size = [depth + sum(pads[0]), height + sum(pads[1]), width + sum(pads[2])]
    y = np.zeros((n, *size, channels))
    c = None
    if cotangent is not None:
        c = np.zeros_like(y)
        c[:, pads[0][0] : pads[0][0] + depth, pads[1][0] : pads[1][0] + height, pads[2][0] : pads[2][0] + width] = (
            cotangent
        )
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for o in itertools.product(*map(range, x.shape[1:4])):
        for k in itertools.product(*map(range, w.shape[:3])):
            p = tuple(o[a] * strides[a] + k[a] * dilations[a] for a in range(3))
            y[(slice(None), *p)] += x[(slice(None), *o)] @ w[k].T
            if c is not None:
                gx[(slice(None), *o)] += c[(slice(None), *p)] @ w[k]
                gw[k] += c[(slice(None), *p)].T @ x[(slice(None), *o)]
    y = y[:, pads[0][0] : pads[0][0] + depth, pads[1][0] : pads[1][0] + height, pads[2][0] : pads[2][0] + width]
    return y if c is None else (y, gx, gw)


def _same_pads(out_dhw, kernel, strides, dilations):
    """TensorFlow's SAME pads for a conv of ``out_dhw`` (the transpose's output): the odd cell after."""
    pads = []
    for n, k, s, d in zip(out_dhw, kernel, strides, dilations):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _conv_size(n, k, s, d, pad):
    return (n + sum(pad) - (k - 1) * d - 1) // s + 1


# (output spatial size, kernel, strides, dilations, padding)
_CASES = [
    ((4, 5, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), "VALID"),
    ((7, 6, 5), (3, 2, 1), (2, 3, 1), (1, 2, 1), "VALID"),
    ((6, 7, 8), (3, 3, 2), (2, 2, 3), (1, 1, 1), "SAME"),
    ((5, 6, 7), (2, 3, 2), (1, 2, 2), (2, 1, 1), "SAME"),
    ((6, 5, 7), (3, 2, 3), (2, 1, 2), (1, 2, 1), ((1, 2), (0, 1), (2, 0))),
]


def _case_arrays(out_dhw, kernel, strides, dilations, padding, batch=2, channels=3, in_channels=2):
    pads = _same_pads(out_dhw, kernel, strides, dilations) if padding == "SAME" else padding
    if padding == "VALID":
        pads = ((0, 0),) * 3
    in_dhw = tuple(_conv_size(*args) for args in zip(out_dhw, kernel, strides, dilations, pads))
    x = RNG.normal(size=(batch, *in_dhw, in_channels))
    w = RNG.normal(size=(*kernel, channels, in_channels))
    return x, w, (batch, *out_dhw, channels), pads


@pytest.mark.parametrize(("out_dhw", "kernel", "strides", "dilations", "padding"), _CASES)
def test_conv3d_transpose_matches_scatter_add_loop_values_and_gradients(out_dhw, kernel, strides, dilations, padding):
    x, w, out_shape, pads = _case_arrays(out_dhw, kernel, strides, dilations, padding)
    cot = RNG.normal(size=out_shape)
    want, want_gx, want_gw = _transpose_ref(x, w, out_shape, strides, pads, dilations, cot)

    def f(x, w):
        return tl.nn.conv3d_transpose(x, w, out_shape, strides, padding, dilations=dilations)

    np.testing.assert_allclose(f(x, w).numpy(), want, rtol=1e-12, atol=1e-12)
    gx, gw = tl.grad(lambda x, w: tl.sum(f(x, w) * cot), argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx.numpy(), want_gx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), want_gw, rtol=1e-12, atol=1e-12)
    # channels first: the same numbers, moved
    to_first = (0, 4, 1, 2, 3)
    first_shape = tuple(out_shape[i] for i in to_first)
    y = tl.nn.conv3d_transpose(x.transpose(to_first), w, first_shape, strides, padding, "NCDHW", dilations)
    np.testing.assert_allclose(y.numpy(), want.transpose(to_first), rtol=1e-12, atol=1e-12)


def test_conv3d_transpose_is_the_adjoint_of_conv3d():
    """<conv3d(u, w), x> == <u, conv3d_transpose(x, w)>: the transpose of the very conv3d it inverts the shape of."""
    x, w, out_shape, _ = _case_arrays((6, 7, 8), (3, 3, 2), (2, 2, 3), (1, 1, 1), "SAME")
    u = RNG.normal(size=out_shape)
    lhs = np.sum(tl.nn.conv3d(u, w, (2, 2, 3), "SAME").numpy() * x)
    rhs = np.sum(u * tl.nn.conv3d_transpose(x, w, out_shape, (2, 2, 3), "SAME").numpy())
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs))


@pytest.mark.parametrize("case", [0, 1, 4])
def test_conv3d_transpose_gradients_central_differences_to_second_order(case):
    out_dhw, kernel, strides, dilations, padding = _CASES[case]
    x, w, out_shape, _ = _case_arrays(out_dhw, kernel, strides, dilations, padding, batch=1, channels=2)
    tl.testing.check_grads(
        lambda x, w: tl.nn.conv3d_transpose(x, w, out_shape, strides, padding, dilations=dilations),
        (x, w),
        order=2,
        modes=("rev",),
    )


def test_conv3d_transpose_traced_with_unknown_batch_and_vmapped():
    x, w, out_shape, _ = _case_arrays((6, 7, 8), (3, 3, 2), (2, 2, 3), (1, 1, 1), "SAME", batch=3)
    eager = tl.nn.conv3d_transpose(x, w, out_shape, (2, 2, 3), "SAME").numpy()
    traced = tl.function(lambda x, w: tl.nn.conv3d_transpose(x, w, (None, *out_shape[1:]), (2, 2, 3), "SAME"))
    graph = traced.get_graph(tl.TensorSpec((None, *x.shape[1:]), "float64"), tl.TensorSpec(w.shape, "float64"))
    assert graph.outputs[0].shape == (None, *out_shape[1:])
    np.testing.assert_allclose(traced(x, w).numpy(), eager, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(traced(x[:1], w).numpy(), eager[:1], rtol=1e-12, atol=1e-12)
    gw = tl.function(
        lambda x, w: tl.grad(lambda w: tl.sum(tl.nn.conv3d_transpose(x, w, out_shape, (2, 2, 3), "SAME")))(w)
    )
    np.testing.assert_allclose(
        gw(x, w).numpy(),
        tl.grad(lambda w: tl.sum(tl.nn.conv3d_transpose(x, w, out_shape, (2, 2, 3), "SAME")))(w).numpy(),
    )
    one = (1, *out_shape[1:])
    mapped = tl.vmap(lambda xi: tl.nn.conv3d_transpose(xi[None], w, one, (2, 2, 3), "SAME")[0])(x)
    np.testing.assert_allclose(mapped.numpy(), eager, rtol=1e-12, atol=1e-12)


def test_conv3d_transpose_empty_batch_and_integer_input():
    x, w, out_shape, pads = _case_arrays((5, 6, 7), (2, 3, 2), (1, 2, 2), (2, 1, 1), "SAME")
    empty = tl.nn.conv3d_transpose(x[:0], w, (0, *out_shape[1:]), (1, 2, 2), "SAME", dilations=(2, 1, 1))
    assert empty.shape == (0, *out_shape[1:])
    gw = tl.grad(lambda w: tl.sum(tl.nn.conv3d_transpose(x[:0], w, (0, *out_shape[1:]), (1, 2, 2), "SAME")))(w)
    assert gw.shape == w.shape and not gw.numpy().any()
    # DESIGN 6: an integer input next to float filters gives float64 (NumPy's promotion, as conv2d_transpose)
    ints = RNG.integers(-4, 5, size=x.shape)
    y = tl.nn.conv3d_transpose(ints, w.astype(np.float32), out_shape, (1, 2, 2), "SAME", dilations=(2, 1, 1))
    assert y.dtype == np.float64
    want = _transpose_ref(
        ints.astype(np.float64), w.astype(np.float32).astype(np.float64), out_shape, (1, 2, 2), pads, (2, 1, 1)
    )
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-5)
    with pytest.raises(TypeError, match="int64"):
        tl.grad(lambda a: tl.sum(tl.nn.conv3d_transpose(a, w, out_shape, (1, 2, 2), "SAME", dilations=(2, 1, 1))))(ints)
    # conv3d takes an integer input too now, as conv2d always did
    u = RNG.integers(-4, 5, size=out_shape)
    got = tl.nn.conv3d(u, w, (1, 2, 2), "SAME", dilations=(2, 1, 1))
    assert got.dtype == np.float64
    np.testing.assert_allclose(
        got.numpy(), tl.nn.conv3d(u.astype(np.float64), w, (1, 2, 2), "SAME", dilations=(2, 1, 1)).numpy()
    )


_X, _W = np.ones((2, 2, 3, 2, 3)), np.ones((3, 2, 2, 2, 3))


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda: tl.nn.conv3d_transpose(_X, _W, (2, 5, 6, 4, 2), 2, "SAME"),
            ValueError,
            r"^conv3d_transpose: input must have the shape \(2, 3, 3, 2, 3\) that conv3d gives for output_shape "
            r"\(2, 5, 6, 4, 2\) .*\(input shape \(2, 2, 3, 2, 3\) float64, filter shape \(3, 2, 2, 2, 3\) float64",
        ),
        (
            lambda: tl.nn.conv3d_transpose(_X, _W, (3, 4, 6, 4, 2), 2, "SAME"),
            ValueError,
            r"^conv3d_transpose: input must have the shape \(3, 2, 3, 2, 3\)",
        ),
        (
            lambda: tl.nn.conv3d_transpose(_X, _W, (2, 4, 6, 4, 3), 2, "SAME"),
            ValueError,
            r"^conv3d_transpose: output_shape has 3 channels, filters output_channels 2",
        ),
        (
            lambda: tl.nn.conv3d_transpose(_X, _W, (2, 4, 6, 4), 2, "SAME"),
            ValueError,
            r"^conv3d_transpose: output_shape must be 5 ints",
        ),
        (
            lambda: tl.nn.conv3d_transpose(_X, _W[..., :2], (2, 4, 6, 4, 2), 2, "SAME"),
            ValueError,
            r"^conv3d_transpose: input must have the shape \(2, 2, 3, 2, 2\)",
        ),
        (
            lambda: tl.nn.conv3d_transpose(_X.astype(int), _W.astype(int), (2, 4, 6, 4, 2), 2, "SAME"),
            TypeError,
            r"^conv3d_transpose: input or filters must be floating-point \(input shape .* int64",
        ),
        (
            lambda: tl.nn.conv3d_transpose(_X[0], _W, (2, 4, 6, 4, 2), 2, "SAME"),
            ValueError,
            r"^conv3d_transpose: input must be 5-D NDHWC .* filters 5-D \(depth, height, width, output_channels",
        ),
        (lambda: tl.nn.conv3d_transpose(_X, _W, (2, 4, 6, 4, 2), 2, "FULL"), ValueError, r"padding must be"),
        (lambda: tl.nn.conv3d_transpose(_X, _W, (2, 4, 6, 4, 2), 0, "SAME"), ValueError, r"strides must be"),
        (
            lambda: tl.nn.conv3d_transpose(_X, _W, (2, 4, 6, 4, 2), 2, "SAME", "NHWC"),
            ValueError,
            r"^conv3d_transpose: data_format must be 'NDHWC' or 'NCDHW'",
        ),
    ],
)
def test_conv3d_transpose_errors_name_the_op_shapes_and_dtypes(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------------------------ the layer
def _layer_ref(layer, x):
    """The PyTorch-form layer as the loop: output size from torch's formula, groups split by hand, bias added."""
    first = layer.data_format == "NCDHW"
    x = x.transpose(0, 2, 3, 4, 1) if first else x
    kernel = layer.kernel.numpy().astype(np.float64)
    g, per_in, per_out = layer.groups, layer.in_channels // layer.groups, layer.out_channels // layer.groups
    pads = layer.padding if not isinstance(layer.padding, str) else ((0, 0),) * 3
    extra = layer.output_padding or (0, 0, 0)
    full = [
        (n - 1) * s + (k - 1) * d + 1 + p
        for n, s, k, d, p in zip(x.shape[1:4], layer.strides, layer.kernel_size, layer.dilations, extra)
    ]
    parts = []
    for i in range(g):
        xi = x[..., i * per_in : (i + 1) * per_in]
        wi = kernel[..., i * per_in : (i + 1) * per_in]
        y = _transpose_ref(xi, wi, (x.shape[0], *full, per_out), layer.strides, ((0, 0),) * 3, layer.dilations)
        parts.append(y)
    y = np.concatenate(parts, -1)
    y = y[:, pads[0][0] : full[0] - pads[0][1], pads[1][0] : full[1] - pads[1][1], pads[2][0] : full[2] - pads[2][1]]
    y = y + layer.bias.numpy()
    return y.transpose(0, 4, 1, 2, 3) if first else y


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(strides=2, padding="VALID"),
        dict(strides=(2, 1, 3), padding=((1, 1), (0, 0), (2, 2)), output_padding=(1, 0, 2), dilations=(1, 2, 1)),
        dict(strides=(1, 2, 2), padding="VALID", output_padding=(1, 1, 0), dilations=(2, 1, 1), groups=2),
        dict(strides=2, padding=((1, 1), (1, 1), (1, 1)), output_padding=1, groups=2, data_format="NCDHW"),
    ],
)
def test_conv3d_transpose_layer_pytorch_form_matches_loop(kwargs):
    layer = tl.nn.Conv3DTranspose(4, 6, (3, 2, 3), seed=1, dtype="float64", **kwargs)
    layer.bias.assign(RNG.normal(size=layer.bias.shape))
    shape = (2, 4, 3, 2, 3) if kwargs.get("data_format") == "NCDHW" else (2, 3, 2, 3, 4)
    x = RNG.normal(size=shape)
    y = layer(x)
    np.testing.assert_allclose(y.numpy(), _layer_ref(layer, x), rtol=1e-12, atol=1e-12)


def test_conv3d_transpose_layer_keras_sizes_and_config_round_trip():
    up = tl.nn.Conv3DTranspose(4, 2, kernel_size=3, strides=(1, 2, 2), seed=0)
    assert up.kernel.shape == (3, 3, 3, 2, 4)
    assert up(tl.ones((1, 3, 5, 5, 4))).shape == (1, 3, 10, 10, 2)  # SAME: n * s
    valid = tl.nn.Conv3DTranspose(4, 2, kernel_size=(3, 2, 1), strides=2, padding="VALID", seed=0)
    assert valid(tl.ones((1, 3, 5, 4, 4))).shape == (1, 7, 10, 8, 2)  # VALID: n * s + max(k - s, 0)
    copy = tl.nn.Conv3DTranspose.from_config(valid.get_config())
    assert copy.get_config() == valid.get_config()
    with pytest.raises(ValueError, match=r"Conv3DTranspose: kernel_size must be an int or a triple"):
        tl.nn.Conv3DTranspose(2, 2, (3, 3))
    with pytest.raises(ValueError, match=r"Conv3DTranspose: output_padding must be"):
        tl.nn.Conv3DTranspose(2, 2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match=r"\(depth, height, width\)"):
        tl.nn.Conv3DTranspose(1, 1, 1, padding=((2, 2), (0, 0), (0, 0)))(np.ones((1, 1, 1, 1, 1)))


# ------------------------------------------------------------------ torch (optional)
@pytest.mark.parametrize(
    ("stride", "padding", "output_padding", "dilation", "groups"),
    [
        (1, 0, 0, 1, 1),
        ((2, 1, 3), (1, 0, 2), (1, 0, 2), (1, 2, 1), 1),
        (2, 1, 1, (2, 1, 1), 2),
        ((1, 2, 2), 0, (0, 1, 1), 1, 3),
    ],
)
def test_conv3d_transpose_layer_matches_torch_values_and_gradients(stride, padding, output_padding, dilation, groups):
    torch = pytest.importorskip("torch")
    cin, cout = 6, 3 * groups if groups == 3 else 4
    x = RNG.normal(size=(2, cin, 3, 4, 3))
    weight = RNG.normal(size=(cin, cout // groups, 2, 3, 2))
    bias = RNG.normal(size=cout)
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, weight, bias))
    yt = torch.nn.functional.conv_transpose3d(xt, wt, bt, stride, padding, output_padding, groups, dilation)
    cot = RNG.normal(size=tuple(yt.shape))
    yt.backward(torch.tensor(cot))
    q = padding if isinstance(padding, tuple) else (padding,) * 3
    layer = tl.nn.Conv3DTranspose(
        cin, cout, (2, 3, 2), stride, tuple((p, p) for p in q), output_padding, dilation, groups=groups,
        dtype="float64", data_format="NCDHW",
    )  # fmt: skip
    layer.kernel.assign(weight.transpose(2, 3, 4, 1, 0))
    layer.bias.assign(bias)
    np.testing.assert_allclose(layer(x).numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    with tl.GradientTape() as tape:
        xs = tl.tensor(x)
        tape.watch(xs)
        loss = tl.sum(layer(xs) * cot)
    gx, gk, gb = tape.gradient(loss, [xs, layer.kernel, layer.bias])
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(gk.numpy(), wt.grad.numpy().transpose(2, 3, 4, 1, 0), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(gb.numpy(), bt.grad.numpy(), rtol=1e-11, atol=1e-11)


# ------------------------------------------------------------------ conv1d_transpose, conv2d_transpose's errors
def _transpose_1d_ref(x, w, width, stride, pads, dilation):
    """NWC scatter-add: input cell ``o`` times tap ``k`` lands on ``o * stride + k * dilation - left``."""
    y = np.zeros((x.shape[0], width + sum(pads), w.shape[1]))
    for o in range(x.shape[1]):
        for k in range(w.shape[0]):
            y[:, o * stride + k * dilation] += x[:, o] @ w[k].T
    return y[:, pads[0] : pads[0] + width]


@pytest.mark.parametrize(
    ("width", "kernel", "stride", "dilation", "padding"),
    [(11, 3, 2, 1, "VALID"), (10, 3, 2, 1, "SAME"), (9, 2, 3, 2, (1, 2)), (7, 4, 1, 2, "SAME")],
)
def test_conv1d_transpose_matches_scatter_add_loop(width, kernel, stride, dilation, padding):
    if padding == "SAME":
        total = max((-(-width // stride) - 1) * stride + (kernel - 1) * dilation + 1 - width, 0)
        pads = (total // 2, total - total // 2)
    else:
        pads = (0, 0) if padding == "VALID" else padding
    in_width = (width + sum(pads) - (kernel - 1) * dilation - 1) // stride + 1
    x, w = RNG.normal(size=(2, in_width, 3)), RNG.normal(size=(kernel, 4, 3))
    want = _transpose_1d_ref(x, w, width, stride, pads, dilation)
    y = tl.nn.conv1d_transpose(x, w, (2, width, 4), stride, padding, dilations=dilation)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    first = tl.nn.conv1d_transpose(x.transpose(0, 2, 1), w, (None, 4, width), [1, stride, 1], padding, "NCW", dilation)
    np.testing.assert_allclose(first.numpy(), want.transpose(0, 2, 1), rtol=1e-12, atol=1e-12)
    tl.testing.check_grads(
        lambda x, w: tl.nn.conv1d_transpose(x, w, (2, width, 4), stride, padding, dilations=dilation),
        (x, w),
        order=2,
        modes=("rev",),
    )


def test_conv1d_transpose_matches_torch():
    torch = pytest.importorskip("torch")
    x, w = RNG.normal(size=(2, 3, 5)), RNG.normal(size=(3, 4, 3))  # NCW; (width, out, in)
    want = torch.nn.functional.conv_transpose1d(
        torch.tensor(x), torch.tensor(w.transpose(2, 1, 0)), stride=3, padding=2, output_padding=1, dilation=2
    ).numpy()
    y = tl.nn.conv1d_transpose(x, w, want.shape, 3, (2, 1), "NCW", 2)  # output_padding 1: one pad fewer after
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: tl.nn.conv1d_transpose(np.ones((2, 5, 4)), np.ones((3, 6, 4)), (2, 11, 6), 2, "SAME"),
            r"^conv1d_transpose: input must have width 6 and 4 \(filter in_channels\) channels, what conv1d gives "
            r"for output_shape \(2, 11, 6\) .*\(input shape \(2, 5, 4\) float64, filter shape \(3, 6, 4\) float64",
        ),
        (
            lambda: tl.nn.conv1d_transpose(np.ones((2, 5, 4)), np.ones((3, 6, 4)), (2, 10, 5), 2, "SAME"),
            r"^conv1d_transpose: output_shape has 5 channels, filters output_channels 6",
        ),
        (
            lambda: tl.nn.conv1d_transpose(np.ones((2, 5, 4)), np.ones((3, 6, 4)), (2, 10), 2, "SAME"),
            r"^conv1d_transpose: output_shape must be 3 ints",
        ),
        (
            lambda: tl.nn.conv1d_transpose(np.ones((2, 5, 4)), np.ones((3, 6, 4)), (2, 10, 6), 2, "SAME", "NHWC"),
            r"^conv1d_transpose: data_format must be 'NWC' or 'NCW'",
        ),
        (
            # the error named Conv2DBackpropInput's input_shape and in_channels, none of conv2d_transpose's arguments
            lambda: tl.nn.conv2d_transpose(np.ones((2, 5, 5, 4)), np.ones((3, 3, 6, 4)), (2, 10, 10, 5), 2, "SAME"),
            r"input depth 5 does not match filter in_channels 6 .* conv2d_transpose\(input, filters, output_shape\) "
            r"runs it with input_shape=output_shape \(\(2, 10, 10, 5\)\), out_backprop=input",
        ),
    ],
)
def test_transposed_conv_errors_name_their_own_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ the gathered pools (dilated, indices, 3-D)
def _max_pool_ref(x, k, s, d, pads):
    """NCHW max pool by loops: values, PyTorch's flat indices (first maximum) and the gradient of their sum."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), pads[0], pads[1]), constant_values=-np.inf)
    oh = (h + sum(pads[0]) - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + sum(pads[1]) - d[1] * (k[1] - 1) - 1) // s[1] + 1
    values, flat, grad = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow), np.int64), np.zeros_like(x)
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        best, where = -np.inf, None
        for p, q in itertools.product(range(k[0]), range(k[1])):
            r, t = i * s[0] + p * d[0], j * s[1] + q * d[1]
            if xp[b, ch, r, t] > best:
                best, where = xp[b, ch, r, t], (r - pads[0][0], t - pads[1][0])
        values[b, ch, i, j], flat[b, ch, i, j] = best, where[0] * w + where[1]
        grad[(b, ch, *where)] += 1
    return values, flat, grad


@pytest.mark.parametrize("first", [True, False])
def test_gathered_max_pool_values_indices_gradient_and_ties(first):
    x = RNG.normal(size=(2, 3, 9, 8))
    x[0, 0, :4, :4] = 0.5  # tied windows: the first maximum takes the gradient (PyTorch's)
    values, flat, grad = _max_pool_ref(x, (3, 2), (2, 1), (2, 3), ((1, 1), (1, 0)))
    xin = x if first else x.transpose(0, 2, 3, 1)
    fmt = "NCHW" if first else "NHWC"
    opts = dict(dilations=(2, 3), return_indices=True)
    y, idx = tl.nn.max_pool(xin, (3, 2), (2, 1), ((1, 1), (1, 0)), data_format=fmt, **opts)
    g = tl.grad(
        lambda a: tl.sum(tl.nn.max_pool(a, (3, 2), (2, 1), ((1, 1), (1, 0)), data_format=fmt, dilations=(2, 3)))
    )(xin)
    to_first = (lambda a: a) if first else (lambda a: a.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(to_first(y.numpy()), values)
    np.testing.assert_array_equal(to_first(idx.numpy()), flat)
    np.testing.assert_array_equal(to_first(g.numpy()), grad)


def test_gathered_pools_match_torch_values_and_gradients():
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=(2, 3, 7, 6, 5))
    x3, x2 = torch.tensor(x, requires_grad=True), torch.tensor(x[:, :, 0], requires_grad=True)
    y3, i3 = torch.nn.functional.max_pool3d(x3, 3, 2, 1, 1, ceil_mode=True, return_indices=True)
    cot3 = RNG.normal(size=tuple(y3.shape))
    (y3 * torch.tensor(cot3)).sum().backward()
    a3 = torch.nn.functional.avg_pool3d(x3.detach(), 3, 2, 1, ceil_mode=True, count_include_pad=False)
    y2 = torch.nn.functional.max_pool2d(x2, (3, 2), (1, 2), (1, 1), (2, 1))
    y2.sum().backward()

    def pool3(a):
        return tl.nn.max_pool3d(a, 3, 2, 1, "NCDHW", ceil_mode=True, return_indices=True)

    ours, idx = pool3(x)
    np.testing.assert_array_equal(ours.numpy(), y3.detach().numpy())
    np.testing.assert_array_equal(idx.numpy(), i3.numpy())
    g3 = tl.grad(lambda a: tl.sum(pool3(a)[0] * cot3))(x)
    np.testing.assert_allclose(g3.numpy(), x3.grad.numpy(), rtol=1e-12, atol=1e-12)
    avg = tl.nn.avg_pool3d(x, 3, 2, 1, "NCDHW", ceil_mode=True, count_include_pad=False)
    np.testing.assert_allclose(avg.numpy(), a3.numpy(), rtol=1e-12, atol=1e-12)
    g2 = tl.grad(lambda a: tl.sum(tl.nn.max_pool(a, (3, 2), (1, 2), 1, data_format="NCHW", dilations=(2, 1))))(
        x[:, :, 0]
    )
    np.testing.assert_array_equal(g2.numpy(), x2.grad.numpy())


def test_take_along_axis_gradient_of_one_pick_per_line_and_of_repeats():
    """The pick's gradient (one index per line: a put) and a repeated index's (summed) against NumPy by hand."""
    x = RNG.normal(size=(4, 3, 5))
    pick = RNG.integers(-4, 4, size=(1, 3, 5))
    cot = RNG.normal(size=pick.shape)
    g = tl.grad(lambda a: tl.sum(tl.take_along_axis(a, pick, axis=0) * cot))(x).numpy()
    want = np.zeros_like(x)
    for j, k in itertools.product(range(3), range(5)):
        want[pick[0, j, k] % 4, j, k] += cot[0, j, k]
    np.testing.assert_array_equal(g, want)
    repeats = np.array([[[0, 0, 2]]] * 2)  # (2, 1, 3): the same cell twice along axis 2
    cot = RNG.normal(size=(2, 1, 3))
    g = tl.grad(lambda a: tl.sum(tl.take_along_axis(a, repeats, axis=2) * cot))(x[:2, :1, :3]).numpy()
    want = np.zeros((2, 1, 3))
    for i, k in itertools.product(range(2), range(3)):
        want[i, 0, repeats[i, 0, k]] += cot[i, 0, k]
    np.testing.assert_allclose(g, want, rtol=1e-15, atol=0)
