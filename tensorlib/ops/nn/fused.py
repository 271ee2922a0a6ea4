"""The optimizer's fusions of a bias add and an activation, as ops of their own.

``AddActivation``: ``activation(x + y)``, made of a bias add (any broadcasting ``Add``) followed by
``Relu``, ``Tanh`` or ``Sigmoid``.  Its NumPy kernel
(:func:`tensorlib.backends.numpy_nn.fused.add_activation`) streams the data once instead of twice
and writes into the executor's pooled buffers; its results are bit for bit the unfused ones.  The
gradient with respect to both inputs is the activation's, written from the output as the unfused
rules are (``ReluGrad(g, y)``, ``g * (1 - y * y)``, ``g * y * (1 - y)``), so higher orders and
traced backward passes come free.

``Conv2DAddActivation``: ``activation(conv2d(input, filters) + bias)`` for a ``(Cout,)`` bias, made of
a ``Conv2D`` whose only use is such an ``AddActivation`` (TensorFlow's ``_FusedConv2D``).  On NumPy the
bias and activation are applied to each block of the convolution's result while it is in cache, bit
for bit as unfused; elsewhere the kernel is the unfused kernels in a row.  Its gradients are the
activation's, then ``Conv2D``'s (``Conv2DBackpropInput`` and ``Conv2DBackpropFilter``) and the bias's sum.

``Conv2DAddActivationMaxPool``: a ``Conv2DAddActivation`` and the ``MaxPool`` of its result, as two outputs
``(h, pooled)`` (h is still read by the pool's gradient).  On NumPy each block of images of ``h`` is pooled
just after its bias and activation, while it is in cache, instead of being read back by a separate pass;
its gradient is ``Conv2DAddActivation``'s, of what reaches ``h`` directly plus ``MaxPoolGrad`` of the pooled
output's gradient.
"""

from __future__ import annotations

from ...backends.numpy_nn import fused as _kernels
from ...dispatch import apply
from ...grad.registry import register_gradient
from ...tensor import Tensor
from .. import math as math_ops
from .. import reduce as reduce_ops
from ..registry import defop, get
from ._common import _check_float, _geometry, _op_type, _padding_attr, _window_pair
from .activations import _relu_grad
from .batch_norm import _shared_by_inputs
from .conv import _CONV_ATTRS, _backprop_filter, _backprop_input, _conv2d_infer, _conv_attrs
from .pool import _max_pool_grad, _pool_infer, _pool_pads

# activation attribute -> the op type whose kernel (on other backends) and gradient the fused op follows
ACTIVATIONS = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid"}


def _add_activation_infer(x, y, *, activation):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    _check_float("x", x)
    return math_ops._broadcast(x, y)


_add_activation = defop(
    "AddActivation",
    inputs=("x", "y"),
    attrs={"activation": "relu"},
    infer=_add_activation_infer,
    promote=(0, 1),
    doc="activation(x + y) with broadcasting, in one pass (the optimizer's bias + activation fusion).",
)
_add_activation.generic(lambda xp, x, y, *, activation: get(ACTIVATIONS[activation]).generic_kernel(xp, x + y))
_add_activation.kernel("numpy")(_kernels.add_activation)
_add_activation.out_kernel("numpy", inplace=True)(_kernels.add_activation)


def _through_activation(node, g):
    """The gradient before a fused op's ``activation``, from its output (as the unfused rules write it)."""
    y, activation = node.outputs[0], node.attrs["activation"]
    if activation == "relu":
        return _relu_grad(g, y)
    if activation == "tanh":
        return g * (1.0 - y * y)
    return g * y * (1.0 - y)


# x + y passes the gradient to both inputs unchanged; the engine sums it back to a broadcast bias's shape.
register_gradient("AddActivation", _through_activation, _through_activation)


@_op_type("AddActivation")
def add_activation(x, y, activation: str = "relu") -> Tensor:
    """``activation(x + y)`` in one op: ``activation`` is ``"relu"``, ``"tanh"`` or ``"sigmoid"``.

    >>> import tensorlib as tl
    >>> from tensorlib.ops.nn.fused import add_activation
    >>> add_activation(tl.tensor([[-2.0, 1.0]]), tl.tensor([1.0, 1.0])).numpy().tolist()
    [[0.0, 2.0]]
    """
    return apply(_add_activation, (x, y), {"activation": activation})


# ------------------------------------------------------------------ Conv2DAddActivation
def _conv2d_add_activation_infer(input, filters, bias, *, strides, padding, dilations, activation):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    out = _conv2d_infer(input, filters, strides=strides, padding=padding, dilations=dilations)
    if tuple(bias.shape) != (filters.shape[3],) or bias.dtype != out.dtype:
        raise ValueError(
            f"bias must be a {out.dtype} vector of the {filters.shape[3]} output channels, "
            f"got {bias.dtype}{list(bias.shape)} (input {input.dtype}{list(input.shape)}, "
            f"filters {filters.dtype}{list(filters.shape)})"
        )
    return out


_conv2d_add_activation = defop(
    "Conv2DAddActivation",
    inputs=("input", "filters", "bias"),
    attrs={**_CONV_ATTRS, "activation": "relu"},
    infer=_conv2d_add_activation_infer,
    promote=(0, 1, 2),
    doc="activation(conv2d(input, filters) + bias) in one op (the optimizer's conv + bias + activation fusion).",
)


@_conv2d_add_activation.kernel("numpy")
def _conv2d_add_activation_numpy(input, filters, bias, *, strides, padding, dilations, activation, out=None):
    pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_add_activation(
        input, filters, bias, strides, dilations, pads, activation=activation, out=out
    )


_conv2d_add_activation.out_kernel("numpy")(_conv2d_add_activation_numpy)


@_conv2d_add_activation.per_backend
def _conv2d_add_activation_generic(backend, input, filters, bias, *, strides, padding, dilations, activation):
    conv = get("Conv2D").resolve_kernel(backend)(input, filters, strides=strides, padding=padding, dilations=dilations)
    return get("AddActivation").resolve_kernel(backend)(conv, bias, activation=activation)


register_gradient(
    "Conv2DAddActivation",
    input=lambda node, g: _backprop_input(
        node.inputs[1], _through_activation(node, g), input_shape=node.inputs[0].shape, **_conv_attrs(node)
    ),
    filters=lambda node, g: _backprop_filter(
        node.inputs[0], _through_activation(node, g), filter_shape=node.inputs[1].shape, **_conv_attrs(node)
    ),
    bias=lambda node, g: reduce_ops.sum(_through_activation(node, g), axis=(0, 1, 2)),
)


@_op_type("Conv2DAddActivation")
def conv2d_add_activation(input, filters, bias, strides=1, padding="VALID", dilations=1, activation="relu") -> Tensor:
    """``activation(tl.nn.conv2d(input, filters, strides, padding, dilations) + bias)`` in one op, NHWC, for a
    bias of one value per output channel: what the graph optimizer makes of that pattern.

    >>> import numpy as np, tensorlib as tl
    >>> from tensorlib.ops.nn.fused import conv2d_add_activation
    >>> x, w = tl.tensor(np.arange(8.0).reshape(1, 2, 2, 2)), np.ones((1, 1, 2, 2))
    >>> conv2d_add_activation(x, w, np.array([-4.0, 0.0])).numpy()[0, :, :, 0]
    array([[0., 1.],
           [5., 9.]])
    """
    attrs = {
        "strides": _window_pair(strides, "strides", "Conv2DAddActivation"),
        "padding": _padding_attr(padding, "Conv2DAddActivation"),
        "dilations": _window_pair(dilations, "dilations", "Conv2DAddActivation"),
        "activation": activation,
    }
    return apply(_conv2d_add_activation, (input, filters, bias), attrs)


# ------------------------------------------------------------------ Conv2DAddActivationMaxPool
_POOL_ATTRS = {"pool_ksize": (1, 1), "pool_strides": (1, 1), "pool_padding": "VALID"}


def _conv2d_add_activation_max_pool_infer(
    input, filters, bias, *, strides, padding, dilations, activation, pool_ksize, pool_strides, pool_padding
):
    h = _conv2d_add_activation_infer(
        input, filters, bias, strides=strides, padding=padding, dilations=dilations, activation=activation
    )
    try:
        pooled = _pool_infer(h, ksize=pool_ksize, strides=pool_strides, padding=pool_padding)
    except ValueError as error:
        raise ValueError(
            f"the pool (pool_ksize {tuple(pool_ksize)}, pool_strides {tuple(pool_strides)}, pool_padding "
            f"{pool_padding!r}) does not fit the conv's result {h.dtype}{list(h.shape)}: {error}"
        ) from None
    return h, pooled


_conv2d_add_activation_max_pool = defop(
    "Conv2DAddActivationMaxPool",
    inputs=("input", "filters", "bias"),
    attrs={**_CONV_ATTRS, "activation": "relu", **_POOL_ATTRS},
    infer=_conv2d_add_activation_max_pool_infer,
    promote=(0, 1, 2),
    doc="(h, max_pool(h)) for h = activation(conv2d(input, filters) + bias), in one op (the optimizer's "
    "conv + bias + activation + max pool fusion).",
)


@_conv2d_add_activation_max_pool.kernel("numpy")
def _conv2d_add_activation_max_pool_numpy(
    input, filters, bias, *, strides, padding, dilations, activation, pool_ksize, pool_strides, pool_padding, out=None
):
    out_hw, pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)
    pool_pads = _pool_pads(out_hw, pool_ksize, pool_strides, pool_padding)
    return _kernels.conv2d_add_activation_max_pool(
        input,
        filters,
        bias,
        strides,
        dilations,
        pads,
        pool_ksize,
        pool_strides,
        pool_pads,
        activation=activation,
        out=out,
    )


_conv2d_add_activation_max_pool.out_kernel("numpy")(_conv2d_add_activation_max_pool_numpy)


@_conv2d_add_activation_max_pool.per_backend
def _conv2d_add_activation_max_pool_generic(
    backend, input, filters, bias, *, strides, padding, dilations, activation, pool_ksize, pool_strides, pool_padding
):
    h = get("Conv2DAddActivation").resolve_kernel(backend)(
        input, filters, bias, strides=strides, padding=padding, dilations=dilations, activation=activation
    )
    return h, get("MaxPool").resolve_kernel(backend)(h, ksize=pool_ksize, strides=pool_strides, padding=pool_padding)


def _before_activation_and_pool(node, g_h, g_pooled):
    """The gradient before the activation: what reaches ``h`` directly plus what the pool routes back to it."""
    h, pooled = node.outputs
    a = node.attrs
    routed = _max_pool_grad(
        h, pooled, g_pooled, ksize=a["pool_ksize"], strides=a["pool_strides"], padding=a["pool_padding"]
    )
    return _through_activation(node, g_h + routed)


# Computed once for the three inputs' rules (a traced backward would merge the copies, a tape would not).
_shared_gradient = _shared_by_inputs(_before_activation_and_pool, ("input", "filters", "bias"))

register_gradient(
    "Conv2DAddActivationMaxPool",
    input=lambda node, *g: _backprop_input(
        node.inputs[1], _shared_gradient(node, "input", *g), input_shape=node.inputs[0].shape, **_conv_attrs(node)
    ),
    filters=lambda node, *g: _backprop_filter(
        node.inputs[0], _shared_gradient(node, "filters", *g), filter_shape=node.inputs[1].shape, **_conv_attrs(node)
    ),
    bias=lambda node, *g: reduce_ops.sum(_shared_gradient(node, "bias", *g), axis=(0, 1, 2)),
)


@_op_type("Conv2DAddActivationMaxPool")
def conv2d_add_activation_max_pool(
    input,
    filters,
    bias,
    strides=1,
    padding="VALID",
    dilations=1,
    activation="relu",
    pool_ksize=2,
    pool_strides=2,
    pool_padding="VALID",
) -> tuple[Tensor, Tensor]:
    """``h = conv2d_add_activation(input, filters, bias, strides, padding, dilations, activation)`` and
    ``tl.nn.max_pool(h, pool_ksize, pool_strides, pool_padding)`` in one op, NHWC: what the graph optimizer makes
    of that pattern.  Returns ``(h, pooled)``.

    >>> import numpy as np, tensorlib as tl
    >>> from tensorlib.ops.nn.fused import conv2d_add_activation_max_pool
    >>> x, w = tl.tensor(np.arange(16.0).reshape(1, 4, 4, 1)), np.ones((1, 1, 1, 1))
    >>> h, pooled = conv2d_add_activation_max_pool(x, w, np.array([-5.0]))
    >>> h.shape, pooled.numpy()[0, :, :, 0]
    ((1, 4, 4, 1), array([[ 0.,  2.],
           [ 8., 10.]]))
    """
    name = "Conv2DAddActivationMaxPool"
    attrs = {
        "strides": _window_pair(strides, "strides", name),
        "padding": _padding_attr(padding, name),
        "dilations": _window_pair(dilations, "dilations", name),
        "activation": activation,
        "pool_ksize": _window_pair(pool_ksize, "pool_ksize", name),
        "pool_strides": _window_pair(pool_strides, "pool_strides", name),
        "pool_padding": _padding_attr(pool_padding, name, explicit=False),
    }
    return apply(_conv2d_add_activation_max_pool, (input, filters, bias), attrs)
