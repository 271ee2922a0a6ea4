"""The Array API standard's spellings (``acos``, ``pow``, ``permute_dims``, ``astype``, ``unstack``, ...) and its
dtype queries (``result_type``, ``can_cast``, ``isdtype``, ``finfo``, ``iinfo``), so that code written against
the standard with ``xp = tl`` runs on tensorlib.

The elementwise names are the NumPy-named functions themselves: ``tl.acos is tl.arccos``.

>>> import tensorlib as tl
>>> [float(v) for v in tl.acos(tl.tensor([1.0, 0.0])) * 2]
[0.0, 3.1415927410125732]
>>> tl.result_type(tl.tensor([1.0]), 2.0), tl.result_type("int32", "float32")
(dtype('float32'), dtype('float64'))
"""

from __future__ import annotations

import math as _math

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from .creation import tensor, zeros
from .elementwise import arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, bitwise_not
from .math import cast, power, unaliased, zeros_like
from .shape import getitem, transpose

__all__ = [
    "acos",
    "acosh",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_invert",
    "can_cast",
    "e",
    "empty",
    "empty_like",
    "finfo",
    "iinfo",
    "inf",
    "isdtype",
    "nan",
    "newaxis",
    "permute_dims",
    "pi",
    "pow",
    "result_type",
    "unstack",
]

acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atan2, atanh = arctan, arctan2, arctanh
bitwise_invert = bitwise_not
pow = power  # noqa: A001  (the standard's name)
e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi
newaxis = None


def asarray(obj, /, *, dtype=None, device=None, copy=None) -> Tensor:
    """The standard's ``asarray``: :func:`tl.tensor <tensorlib.tensor>` (a Tensor is returned as it is when no
    other dtype is asked for; Tensors are immutable, so ``copy=True`` changes nothing a caller can observe; a
    Variable gives its current value, which a later ``assign`` does not change).
    ``copy=False`` raises ValueError where a copy is needed, as the standard and NumPy 2 ask: for a list, a
    NumPy array (converting one makes a value tensorlib owns) or another dtype.

    >>> import tensorlib as tl
    >>> tl.asarray([1, 2], dtype="float64").dtype
    dtype('float64')
    """
    _no_device("asarray", device)
    same = isinstance(obj, Tensor) and (dtype is None or _dt.as_dtype(dtype) == obj.dtype)
    if copy is False and not same:
        what = f"a Tensor of dtype {obj.dtype}" if isinstance(obj, Tensor) else f"a {type(obj).__name__}"
        raise ValueError(
            f"asarray: copy=False, but {what} becomes a tensor{f' of dtype {dtype}' if dtype is not None else ''} "
            f"only by a copy (copy=None copies where needed)"
        )
    if isinstance(obj, Tensor):
        return unaliased(obj) if same else cast(obj, dtype)
    return tensor(obj, dtype=dtype)


def astype(x, dtype, *, copy: bool = True, device=None) -> Tensor:
    """The standard's ``astype``: ``x`` cast to ``dtype`` (:func:`tl.cast <tensorlib.cast>`; a complex ``x`` to a
    real dtype keeps its real part, as the cast does); with ``copy=False`` a Tensor already of ``dtype`` is
    returned as it is.

    >>> import tensorlib as tl
    >>> tl.astype(tl.tensor([1.7, -1.7]), "int32").tolist()
    [1, -1]
    """
    _no_device("astype", device)
    if not copy and isinstance(x, Tensor) and x.dtype == _dt.as_dtype(dtype):
        return x
    return cast(x, dtype)


def permute_dims(x, /, axes) -> Tensor:
    """The standard's ``permute_dims``: :func:`tl.transpose <tensorlib.transpose>` with the axes required.

    >>> import tensorlib as tl
    >>> tl.permute_dims(tl.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(x, tuple(axes))


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of ``x`` along ``axis``, as a tuple (the standard's ``unstack``, ``tf.unstack``,
    ``torch.unbind``); the inverse of :func:`tl.stack <tensorlib.stack>`.

    >>> import tensorlib as tl
    >>> [t.tolist() for t in tl.unstack(tl.tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    x = tensor(x) if not isinstance(x, Tensor) else x
    ndim = len(x.shape)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not -ndim <= axis < ndim:
        raise ValueError(f"unstack: axis {axis!r} is out of range for a tensor of shape {x.shape} ({x.dtype})")
    axis = int(axis) % ndim
    size = x.shape[axis]
    if size is None:
        raise ValueError(
            f"unstack: the size of axis {axis} of a tensor of shape {x.shape} ({x.dtype}) must be known to give "
            "one tensor per slice; it is unknown while tracing"
        )
    head = (slice(None),) * axis
    return tuple(getitem(x, (*head, i)) for i in range(size))


def empty(shape, *, dtype=None, device=None) -> Tensor:
    """The standard's ``empty``: a Tensor of ``shape`` filled with zeros (Tensors are immutable, so values left
    unset could never be written; ``jax.numpy.empty`` gives zeros too).

    >>> import tensorlib as tl
    >>> tl.empty((2,)).tolist()
    [0.0, 0.0]
    """
    _no_device("empty", device)
    return zeros(shape, dtype=_dt.default_float if dtype is None else dtype)


def empty_like(x, /, *, dtype=None, device=None) -> Tensor:
    """The standard's ``empty_like``: zeros shaped like ``x`` (see :func:`empty`).

    >>> import tensorlib as tl
    >>> tl.empty_like(tl.tensor([[1, 2]])).dtype
    dtype('int64')
    """
    _no_device("empty_like", device)
    return zeros_like(x, dtype=dtype)


def _dtype_of(value, who: str) -> np.dtype:
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, np.ndarray):
        return _dt.of_array(value.dtype)
    try:
        return _dt.as_dtype(value)
    except TypeError as e:
        raise TypeError(f"{who}: {value!r} is neither a tensor nor a dtype tensorlib holds ({e})") from None


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype tensorlib's arithmetic gives for these tensors, dtypes and Python scalars: NumPy 2's promotion
    among typed values, and Python scalars weak (they take a typed value's dtype when their kind allows, as
    in ``x + 2.0``); a Python int the resulting integer dtype cannot hold is an OverflowError, as that
    arithmetic raises it (and array_api_strict; NumPy answers int32 for ``int32`` and ``2**40``).

    >>> import tensorlib as tl
    >>> tl.result_type(tl.tensor([1], "int32"), 1.5), tl.result_type("float16", "complex64")
    (dtype('float64'), dtype('complex64'))
    """
    from ..dispatch import check_int_range

    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one tensor, dtype or scalar is needed")
    strong, weak = [], []
    for a in arrays_and_dtypes:
        if isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic):
            weak.append(a)
        else:
            strong.append(_dtype_of(a.dtype if isinstance(a, np.generic) else a, "result_type"))
    if strong:
        out = _dt.promote_types(*strong)
    else:  # scalars only: the default dtype of the highest kind among them (1 and 2.0 give float32, as in JAX)
        kinds = [_dt.weak_scalar_dtype(v, None) for v in weak]
        out = max(kinds, key=lambda d: "bifc".index(d.kind))
    for value in weak:  # each scalar against what the typed values (and the scalars before it) give
        out = _dt.weak_scalar_dtype(value, out)
    for value in weak:
        check_int_range(value, out, "result_type: the Python int")
    return out


def can_cast(from_, to, /, casting: str = "safe") -> bool:
    """Whether ``from_`` (a tensor or a dtype) converts to ``to`` without losing values, by NumPy's "safe" rule
    (the standard's ``can_cast``: int32 -> float64 yes, float64 -> float32 no), or by NumPy's other
    ``casting`` rules (``"no"``, ``"equiv"``, ``"same_kind"``, ``"unsafe"``).

    >>> import tensorlib as tl
    >>> tl.can_cast("int32", "float64"), tl.can_cast(tl.tensor([1.0], "float64"), "float32")
    (True, False)
    >>> tl.can_cast("float64", "float32", casting="same_kind")
    True
    """
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(
            f"can_cast: casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe', got {casting!r}"
        )
    return bool(np.can_cast(_dtype_of(from_, "can_cast"), _dtype_of(to, "can_cast"), casting=casting))


def isdtype(dtype, kind) -> bool:
    """The standard's ``isdtype``: whether ``dtype`` is of ``kind`` (a dtype, one of ``"bool"``, ``"signed
    integer"``, ``"unsigned integer"``, ``"integral"``, ``"real floating"``, ``"complex floating"``,
    ``"numeric"``, or a tuple of them).

    >>> import tensorlib as tl
    >>> tl.isdtype(tl.float32, "real floating"), tl.isdtype("int64", ("bool", "complex floating"))
    (True, False)
    """
    d = _dtype_of(dtype, "isdtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if (isinstance(k, str) and k not in _KINDS) or k is None:
            raise ValueError(f"isdtype: kind {k!r} is not a dtype nor one of {', '.join(map(repr, _KINDS))} ({d})")
    return bool(np.isdtype(d, tuple(k if isinstance(k, str) else _dtype_of(k, "isdtype") for k in kinds)))


_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric")


def finfo(type, /):  # noqa: A002  (the standard's parameter name)
    """Machine limits of a floating dtype (or a float/complex tensor's): NumPy's ``finfo`` (``eps``, ``max``,
    ``tiny``/``smallest_normal``, ...); a complex dtype gives its parts' limits, as the standard asks.

    >>> import tensorlib as tl
    >>> float(tl.finfo(tl.float32).eps)
    1.1920928955078125e-07
    """
    d = _dtype_of(type, "finfo")
    if d.kind not in "fc":
        raise TypeError(f"finfo: {d} is not a floating dtype (tl.iinfo gives an integer dtype's limits)")
    return np.finfo(d)


def iinfo(type, /):  # noqa: A002
    """Limits of an integer dtype (or an integer tensor's): NumPy's ``iinfo`` (``min``, ``max``, ``bits``).

    >>> import tensorlib as tl
    >>> tl.iinfo("int32").max
    2147483647
    """
    d = _dtype_of(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo: {d} is not an integer dtype (tl.finfo gives a floating dtype's limits)")
    return np.iinfo(d)


def _no_device(who: str, device) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"{who}: device {device!r}: tensors live on the current backend's device; give None")
