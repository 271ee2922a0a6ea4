"""``AddActivation``: ``activation(x + y)`` as one op, which the graph optimizer makes of a bias add (any
broadcasting ``Add``) followed by ``Relu``, ``Tanh`` or ``Sigmoid``.

Its NumPy kernel (:func:`tensorlib.backends.numpy_nn.fused.add_activation`)
streams the data once instead of twice and writes into the executor's pooled
buffers; its results are bit for bit the unfused ones.  The gradient with
respect to both inputs is the activation's, written from the output as the
unfused rules are (``ReluGrad(g, y)``, ``g * (1 - y * y)``,
``g * y * (1 - y)``), so higher orders and traced backward passes come free.
"""

from __future__ import annotations

from ...backends.numpy_nn import fused as _kernels
from ...dispatch import apply
from ...grad.registry import register_gradient
from ...tensor import Tensor
from .. import math as math_ops
from ..registry import defop, get
from ._common import _check_float, _op_type
from .activations import _relu_grad

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


def _add_activation_gradient(node, g):
    y = node.outputs[0]
    activation = node.attrs["activation"]
    if activation == "relu":
        return _relu_grad(g, y)
    if activation == "tanh":
        return g * (1.0 - y * y)
    return g * y * (1.0 - y)


# x + y passes the gradient to both inputs unchanged; the engine sums it back to a broadcast bias's shape.
register_gradient("AddActivation", _add_activation_gradient, _add_activation_gradient)


@_op_type("AddActivation")
def add_activation(x, y, activation: str = "relu") -> Tensor:
    """``activation(x + y)`` in one op: ``activation`` is ``"relu"``, ``"tanh"`` or ``"sigmoid"``.

    >>> import tensorlib as tl
    >>> from tensorlib.ops.nn.fused import add_activation
    >>> add_activation(tl.tensor([[-2.0, 1.0]]), tl.tensor([1.0, 1.0])).numpy().tolist()
    [[0.0, 2.0]]
    """
    return apply(_add_activation, (x, y), {"activation": activation})
