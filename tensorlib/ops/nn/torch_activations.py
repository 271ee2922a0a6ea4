"""PyTorch's further activations, built from ops: ``hardshrink``, ``softshrink``, ``tanhshrink``, ``softmin``,
``threshold`` and ``rrelu`` (``torch.nn.functional``'s names, arguments and derivatives at the kinks).

Each is an exact composition (``where``, ``tanh``, ``softmax``, a uniform draw), so gradients (to any order),
tracing, ``tl.vmap`` and every backend come from the ops used.  Integer inputs give float64 (NumPy's rule for
float-valued functions); complex inputs are refused, naming the function."""

from __future__ import annotations

import math as _math

from ...tensor import Tensor
from .. import elementwise as elementwise_ops
from .. import math as math_ops
from .. import random as random_ops
from ._common import _float_or_float64, _op_type
from .activations import erf, finite_number, leaky_relu, softmax


@_op_type(None, tensors=("input",))
def hardshrink(input, lambd: float = 0.5) -> Tensor:
    """``input`` where ``|input| > lambd``, else 0 (PyTorch's ``F.hardshrink``; derivative 0 at ``+-lambd``).

    >>> import tensorlib as tl
    >>> tl.nn.hardshrink(tl.tensor([-1.0, -0.5, 0.2, 0.7])).numpy().tolist()
    [-1.0, 0.0, 0.0, 0.699999988079071]
    """
    x = _float_or_float64(input, "hardshrink", "input")
    lambd = finite_number(lambd, "lambd", "hardshrink")
    return elementwise_ops.where(math_ops.abs(x) > lambd, x, 0.0)


@_op_type(None, tensors=("input",))
def softshrink(input, lambd: float = 0.5) -> Tensor:
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0 (PyTorch's ``F.softshrink``,
    ``lambd >= 0``; derivative 0 at ``+-lambd``).

    >>> import tensorlib as tl
    >>> tl.nn.softshrink(tl.tensor([-2.0, 0.25, 1.5]), 1.0).numpy().tolist()
    [-1.0, 0.0, 0.5]
    """
    x = _float_or_float64(input, "softshrink", "input")
    lambd = finite_number(lambd, "lambd", "softshrink")
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd} (input shape {tuple(x.shape)}, {x.dtype})")
    shrunk = elementwise_ops.where(x > lambd, x - lambd, x + lambd)
    return elementwise_ops.where(math_ops.abs(x) > lambd, shrunk, 0.0)


@_op_type(None, tensors=("input",))
def tanhshrink(input) -> Tensor:
    """``input - tanh(input)`` (PyTorch's ``F.tanhshrink``).

    >>> import tensorlib as tl
    >>> tl.nn.tanhshrink(tl.tensor([0.0, 1.0])).numpy().round(4).tolist()
    [0.0, 0.2384]
    """
    x = _float_or_float64(input, "tanhshrink", "input")
    return x - math_ops.tanh(x)


@_op_type(None, tensors=("input",))
def softmin(input, axis: int = -1) -> Tensor:
    """``softmax(-input, axis)``: weights summing to one along ``axis``, the largest at the smallest entry
    (PyTorch's ``F.softmin``, whose ``dim`` is ``axis`` here).

    >>> import tensorlib as tl
    >>> tl.nn.softmin(tl.tensor([[0.0, 0.0], [0.0, 1000.0]])).numpy().tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    return softmax(-_float_or_float64(input, "softmin", "input"), axis=axis)


@_op_type(None, tensors=("input",))
def threshold(input, threshold: float, value: float) -> Tensor:
    """``input`` where ``input > threshold``, else ``value`` (PyTorch's ``F.threshold``; derivative 0 at
    ``threshold``).

    >>> import tensorlib as tl
    >>> tl.nn.threshold(tl.tensor([-1.0, 0.5, 2.0]), 0.5, -7.0).numpy().tolist()
    [-7.0, -7.0, 2.0]
    """
    x = _float_or_float64(input, "threshold", "input")
    bound = finite_number(threshold, "threshold", "threshold")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"threshold: value must be a number, got {value!r} (input shape {tuple(x.shape)})") from None
    return elementwise_ops.where(x > bound, x, value)


@_op_type(None, tensors=("input",))
def rrelu(input, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, training: bool = False, seed=None) -> Tensor:
    """Randomized leaky ReLU (PyTorch's ``F.rrelu``): ``input`` where ``input > 0``, else ``a * input``.  While
    ``training``, each element draws its own slope ``a ~ U(lower, upper)`` (from the stream ``tl.random.seed``
    resets, or from ``seed``), and the gradient below 0 is that slope; otherwise ``a`` is the mean slope
    ``(lower + upper) / 2`` (:func:`leaky_relu`).

    >>> import tensorlib as tl
    >>> tl.nn.rrelu(tl.tensor([-2.0, 3.0]), 0.25, 0.75).numpy().tolist()
    [-1.0, 3.0]
    >>> y = tl.nn.rrelu(tl.tensor([-2.0, -2.0]), 0.25, 0.75, training=True, seed=0).numpy()
    >>> bool(((-1.5 <= y) & (y <= -0.5)).all())
    True
    """
    x = _float_or_float64(input, "rrelu", "input")
    lower, upper = finite_number(lower, "lower", "rrelu"), finite_number(upper, "upper", "rrelu")
    if not 0.0 <= lower <= upper:
        raise ValueError(f"rrelu: need 0 <= lower <= upper, got lower={lower}, upper={upper}")
    if not training:
        return leaky_relu(x, alpha=(lower + upper) / 2.0)
    # Uniforms as Phi(z) of standard normals drawn like x: exactly U(0, 1), and of x's shape also where that is
    # known only when a graph runs (a traced batch of unknown size), which tl.random.uniform cannot take.
    uniforms = 0.5 + 0.5 * erf(random_ops.normal_like(x, salt=seed) * _math.sqrt(0.5))
    slopes = lower + (upper - lower) * uniforms
    return elementwise_ops.where(x > 0.0, x, x * slopes)
