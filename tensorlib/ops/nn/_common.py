"""Attribute parsing, shape checks and the public-function marker shared by the nn op families."""

from __future__ import annotations

import functools
import operator

import numpy as np

from ... import dtypes as _dt
from ...backends import numpy_nn as _kernels
from ...dispatch import as_tensor
from ...tensor import Tensor
from .. import math as math_ops
from ..registry import get


# ------------------------------------------------------------------ attribute and shape helpers
def _index(value) -> int:
    """``value`` as an int when it is an integer (an int, a NumPy integer, an integer Tensor); a TypeError for a
    float, a bool or a string, which ``int()`` would have truncated (1.5 -> 1) or converted ("2", True) silently."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"expected an integer, got {value!r}")
    return operator.index(value)


def _window_pair(value, what: str, op_name: str) -> tuple:
    """An int, a (rows, cols) pair or TensorFlow's ``[1, rows, cols, 1]`` -> ``(rows, cols)``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        pair = (int(value), int(value))
    else:
        try:
            items = tuple(_index(v) for v in value)
        except (TypeError, ValueError):
            items = ()
        if len(items) == 2:
            pair = items
        elif len(items) == 4 and items[0] == 1 and items[3] == 1:
            pair = items[1:3]
        else:
            raise ValueError(
                f"{op_name}: {what} must be an int, a (rows, cols) pair or [1, rows, cols, 1], got {value!r}"
            )
    if min(pair) < 1:
        raise ValueError(f"{op_name}: {what} must be >= 1, got {value!r}")
    return pair


def _padding_attr(padding, op_name: str, explicit: bool = True):
    """``"VALID"``, ``"SAME"`` or explicit ``((top, bottom), (left, right))`` (TF's 4-pair form too)."""
    if isinstance(padding, str):
        if padding.upper() in ("VALID", "SAME"):
            return padding.upper()
    elif explicit:
        try:
            pairs = tuple(tuple(_index(v) for v in pair) for pair in padding)
        except (TypeError, ValueError):
            pairs = ()
        if len(pairs) == 4 and pairs[0] == (0, 0) and pairs[3] == (0, 0):
            pairs = pairs[1:3]
        if len(pairs) == 2 and all(len(p) == 2 and min(p) >= 0 for p in pairs):
            return pairs
    form = "'VALID', 'SAME' or ((top, bottom), (left, right))" if explicit else "'VALID' or 'SAME'"
    raise ValueError(f"{op_name}: padding must be {form}, got {padding!r}")


@functools.lru_cache(maxsize=4096)
def _geometry(in_hw, window_hw, strides, dilations, padding):
    """((out_h, out_w), ((top, bottom), (left, right))): cached, the kernels ask on every call."""
    return _kernels.resolve_conv_padding(in_hw, window_hw, strides, dilations, padding)


def _output_hw(in_hw, window_hw, strides, dilations, padding) -> tuple:
    """Output height and width; ``None`` where the input size is unknown (tracing)."""
    if None not in in_hw and None not in window_hw:
        return _geometry(tuple(in_hw), tuple(window_hw), strides, dilations, padding)[0]
    return tuple(
        None
        if in_hw[d] is None or window_hw[d] is None
        else _kernels.conv_output_size_and_padding(
            in_hw[d], window_hw[d], strides[d], dilations[d], padding if isinstance(padding, str) else padding[d]
        )[0]
        for d in range(2)
    )


def _float_or_float64(x, name: str, what: str = "x") -> Tensor:
    """``x`` as a tensor for a float-valued function ``name``: integers and bools as float64 (DESIGN §6, NumPy's
    rule: never float32, which rounds integers past 2**24), floats unchanged, complex refused naming ``what``.

    The one conversion of the composed ``tl.nn`` functions (normalizations, losses, activations built from
    ops); an op defined with ``defop(..., float_valued=True)`` gets the same cast from dispatch."""
    x = as_tensor(x)
    kind = x.dtype.kind
    if kind == "f":
        return x
    if kind in "biu":
        return math_ops.cast(x, _dt.float64)
    raise TypeError(f"{name}: {what} must be a real tensor, got {x.dtype} ({what} shape {tuple(x.shape)})")


def _check_float(what: str, t) -> None:
    if t.dtype.kind != "f":
        raise TypeError(f"{what} must be a floating-point tensor, got {t.dtype}")


def _check_rank4(what: str, shape, layout: str) -> None:
    if len(shape) != 4:
        raise ValueError(f"{what} must be 4-D {layout}, got shape {tuple(shape)}")


def _check_conv_operands(input_shape, filter_shape) -> None:
    _check_rank4("input", input_shape, "NHWC (batch, height, width, channels)")
    _check_rank4("filter", filter_shape, "HWIO (height, width, in_channels, out_channels)")
    if 0 in filter_shape:  # TensorFlow's rule; the kernels would fail reshaping an empty patch matrix
        raise ValueError(
            f"filter must not have zero elements (every dimension non-zero), got filter shape "
            f"{tuple(filter_shape)} (input shape {tuple(input_shape)})"
        )
    if None not in (input_shape[3], filter_shape[2]) and input_shape[3] != filter_shape[2]:
        hint = ""
        if input_shape[1] == filter_shape[2]:
            hint = (
                f"; this looks like NCHW (channels-first) input with {input_shape[1]} channels: pass "
                'data_format="NCHW", or transpose it to NHWC'
            )
        raise ValueError(
            f"input depth {input_shape[3]} does not match filter in_channels {filter_shape[2]} "
            f"(input shape {tuple(input_shape)}, filter shape {tuple(filter_shape)}){hint}"
        )


# ---------------------------------------------------------------- data_format="NCHW" (PyTorch's layout)
# The kernels are NHWC; an NCHW call transposes in and out around the same op (filters stay HWIO, as
# in TensorFlow), so gradients, tracing and every check are shared with the NHWC path.
def _is_nchw(data_format, op_name: str) -> bool:
    if data_format == "NHWC":
        return False
    if data_format == "NCHW":
        return True
    raise ValueError(f"{op_name}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")


def _to_nhwc(x, op_name: str, what: str = "input"):
    from ..shape import transpose

    shape = tuple(getattr(x, "shape", np.shape(x)))
    if len(shape) != 4:
        raise ValueError(
            f"{op_name}: {what} must be 4-D NCHW (batch, channels, height, width) with "
            f'data_format="NCHW", got shape {shape}'
        )
    return transpose(x, (0, 2, 3, 1))


def _nchw_error(e: Exception, **passed) -> Exception:
    """The error to raise for ``e``, raised by the NHWC op an NCHW call runs on transposes: it quoted the
    transposes' shapes ("input shape (1, 6, 7, 5)" for the (1, 5, 6, 7) passed), so the shapes as passed are
    added.  Called from an ``except`` clause: the call that succeeds pays nothing."""
    if type(e) not in (ValueError, TypeError) or "NCHW" in str(e):
        return e
    shapes = ", ".join(f"{name} shape {tuple(getattr(v, 'shape', np.shape(v)))}" for name, v in passed.items())
    return type(e)(f"{e}; with data_format='NCHW' those are the NHWC transposes of the {shapes} passed")


def _to_nchw(x):
    from ..shape import transpose

    return transpose(x, (0, 3, 1, 2))


def _nhwc_shape(shape, what: str, op_name: str) -> tuple:
    """An NCHW shape (the batch may be None) reordered to NHWC."""
    shape = _shape_tuple(shape, what, op_name)
    if len(shape) != 4:
        raise ValueError(f"{op_name}: {what} must have 4 entries (NCHW), got {shape}")
    return (shape[0], shape[2], shape[3], shape[1])


def _nchw_window(value, nchw: bool):
    """TensorFlow's NCHW 4-element form ``[1, 1, rows, cols]`` -> ``(rows, cols)``; anything else unchanged."""
    if nchw and not isinstance(value, (int, np.integer)):
        try:
            items = tuple(_index(v) for v in value)
        except (TypeError, ValueError):
            return value
        if len(items) == 4 and items[:2] == (1, 1):
            return items[2:]
    return value


def _nchw_padding(padding, nchw: bool):
    """Explicit NCHW pairs ``[[0, 0], [0, 0], [t, b], [l, r]]`` -> the NHWC order."""
    if nchw and not isinstance(padding, str):
        pairs = list(padding)
        if len(pairs) == 4:
            return [pairs[0], pairs[2], pairs[3], pairs[1]]
    return padding


def _check_known_shape(what: str, shape, first: int) -> tuple:
    shape = tuple(shape)
    if len(shape) != 4 or None in shape[first:]:
        known = "height, width and channels" if first else "all four dimensions"
        raise ValueError(f"{what} must be 4-D with known {known}, got {shape}")
    return shape


def _check_matches(what: str, shape, expected) -> None:
    if len(shape) != len(expected) or any(a is not None and b is not None and a != b for a, b in zip(shape, expected)):
        raise ValueError(f"{what} shape {tuple(shape)} does not match the expected {tuple(expected)}")


def _batch(shape_attr, like) -> tuple:
    """``shape_attr`` with an unknown batch size taken from ``like``'s first dimension."""
    return shape_attr if shape_attr[0] is not None else (like[0], *shape_attr[1:])


def _delegates_to(adapter, kernel):
    """Mark ``adapter`` (resolves padding, then calls ``kernel``) so that ``kernel_source`` names ``kernel``."""
    adapter.__wrapped__ = kernel
    return adapter


def _op_type(name, tensors=None):
    """Name the op type a public function dispatches (for ``tl.ops.explain``) and its tensor parameters."""

    def mark(fn):
        fn.op_type = name
        fn.tensor_params = tensors if tensors is not None else _ops_input_names(name)
        return fn

    return mark


def _ops_input_names(name):
    return get(name).input_names


def _shape_tuple(shape, what, op_name) -> tuple:
    if isinstance(shape, Tensor) and shape.dtype.kind in "iu" and shape._value is not None:
        shape = shape.numpy().tolist()
    try:
        return tuple(None if d is None else _index(d) for d in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{op_name}: {what} must be a sequence of 4 ints, got {shape!r}") from None
