"""dtypes and promotion.

tensorlib uses NumPy dtype objects.  Promotion follows NumPy between typed
values (``float32`` with ``float64`` gives ``float64``) while Python scalars
are *weak*: they take the dtype of the tensor they meet, as in JAX and
PyTorch, so ``float32_tensor * 2.0`` stays ``float32``.

>>> import tensorlib as tl
>>> (tl.tensor([1.0, 2.0]) * 2.0).dtype
dtype('float32')
"""
from __future__ import annotations

import numpy as np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")

SUPPORTED = (float16, float32, float64, int32, int64, bool_)
FLOATS = (float16, float32, float64)
_SUPPORTED_SET = frozenset(SUPPORTED)
# Dtypes a caller's NumPy array may carry, held in the smallest supported dtype that
# represents every value exactly.  Asked for by name (``cast(x, "int8")``) they are an error:
# a result of another width would silently differ from NumPy's.
_WIDENED = {np.dtype("int8"): int32, np.dtype("int16"): int32, np.dtype("uint8"): int32,
             np.dtype("uint16"): int32, np.dtype("uint32"): int64}

default_float = float32
default_int = int64


def as_dtype(dtype) -> np.dtype:
    """Return the NumPy dtype for ``dtype`` (a name, type or dtype); raise for unsupported ones.

    Python's ``bool``, ``int`` and ``float`` mean bool, the default int and the
    default float.  A dtype tensorlib does not hold (``int8``) raises rather
    than silently giving another width.

    >>> as_dtype(float), as_dtype(int), as_dtype("float64")
    (dtype('float32'), dtype('int64'), dtype('float64'))
    """
    if dtype is bool:
        return bool_
    if dtype is float:
        return default_float
    if dtype is int:
        return default_int
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"tensorlib: {dtype!r} is not a dtype") from e
    if d in _SUPPORTED_SET:
        return d
    raise TypeError(f"tensorlib: dtype {d} is not supported (supported: "
                    f"{', '.join(str(s) for s in SUPPORTED)})")


def of_array(dtype) -> np.dtype:
    """The supported dtype that holds every value of an array of ``dtype`` exactly (int8 -> int32).

    >>> of_array("uint8"), of_array("float64")
    (dtype('int32'), dtype('float64'))
    """
    d = np.dtype(dtype)
    return _WIDENED.get(d) or as_dtype(d)


def is_floating(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def promote_types(*dtypes) -> np.dtype:
    """NumPy promotion restricted to the supported dtypes."""
    return as_dtype(np.result_type(*dtypes))


def weak_scalar_dtype(value, strong: np.dtype | None) -> np.dtype:
    """The dtype a Python scalar takes next to a tensor of dtype ``strong``.

    A scalar of a lower or equal kind adopts ``strong``; a float scalar next to
    an integer or bool tensor gives the default float; an int next to bool
    gives the default int.
    """
    kind = "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f"
    if isinstance(value, complex):
        raise TypeError(f"tensorlib: complex scalars are not supported ({value!r})")
    if strong is None:
        return {"b": bool_, "i": default_int, "f": default_float}[kind]
    order = "bif"
    if order.index(kind) <= order.index(strong.kind if strong.kind != "u" else "i"):
        return strong
    return default_float if kind == "f" else default_int
