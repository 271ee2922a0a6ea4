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
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

SUPPORTED = (float16, float32, float64, int32, int64, bool_, complex64, complex128)
COMPLEX = (complex64, complex128)
FLOATS = (float16, float32, float64)
_SUPPORTED_SET = frozenset(SUPPORTED)
# Dtypes a caller's NumPy array may carry, held in the smallest supported dtype that
# represents every value exactly.  Asked for by name (``cast(x, "int8")``) they are an error:
# a result of another width would silently differ from NumPy's.
_WIDENED = {
    np.dtype("int8"): int32,
    np.dtype("int16"): int32,
    np.dtype("uint8"): int32,
    np.dtype("uint16"): int32,
    np.dtype("uint32"): int64,
}

default_float = float32
default_int = int64
default_complex = complex64  # a Python list of complex numbers, as a list of floats gives float32


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
    raise TypeError(f"tensorlib: dtype {d} is not supported (supported: {', '.join(str(s) for s in SUPPORTED)})")


def check_keeps_imaginary(source, dtype, where: str) -> None:
    """Refuse to make a real tensor of complex data (``source``: its dtype), as ``tf.constant(1j,
    dtype=tf.float32)`` does; NumPy only warns.  ``tl.cast`` and ``tl.real`` take the real part on purpose.

    >>> check_keeps_imaginary(np.complex64, np.float32, "tensor")
    Traceback (most recent call last):
    ...
    TypeError: tensor: complex64 data cannot become float32 without losing its imaginary part; take the real part with tl.real(x) or tl.cast(x, 'float32')
    """
    if dtype is not None and np.dtype(source).kind == "c" and np.dtype(dtype).kind != "c":
        dtype = np.dtype(dtype)
        raise TypeError(
            f"{where}: {np.dtype(source)} data cannot become {dtype} without losing its imaginary part; "
            f"take the real part with tl.real(x) or tl.cast(x, {dtype.name!r})"
        )


def of_array(dtype) -> np.dtype:
    """The supported dtype that holds every value of an array of ``dtype`` exactly (int8 -> int32), in native
    byte order (a big-endian array, as FITS files and some HDF5 files hold, is converted, as JAX and TF do).

    >>> of_array("uint8"), of_array("float64"), of_array(">f8")
    (dtype('int32'), dtype('float64'), dtype('float64'))
    """
    d = np.dtype(dtype)
    if not d.isnative:
        d = d.newbyteorder("=")
    return _WIDENED.get(d) or as_dtype(d)


def is_floating(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def is_inexact(dtype) -> bool:
    """Float or complex: the dtypes that carry gradients."""
    return np.dtype(dtype).kind in "fc"


def real_dtype(dtype) -> np.dtype:
    """The dtype of the real and imaginary parts: complex64 -> float32, complex128 -> float64; others unchanged.

    >>> real_dtype("complex64"), real_dtype("float16")
    (dtype('float32'), dtype('float16'))
    """
    d = np.dtype(dtype)
    return {complex64: float32, complex128: float64}.get(d, d)


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype with parts of ``dtype``'s precision (float16 -> complex64, integers -> complex128).

    >>> complex_dtype("float32"), complex_dtype("int64")
    (dtype('complex64'), dtype('complex128'))
    """
    d = np.dtype(dtype)
    if d.kind == "c":
        return d
    return complex64 if d in (float16, float32) else complex128


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def promote_types(*dtypes) -> np.dtype:
    """NumPy promotion restricted to the supported dtypes."""
    return as_dtype(np.result_type(*dtypes))


def weak_scalar_dtype(value, strong: np.dtype | None) -> np.dtype:
    """The dtype a Python scalar takes next to a tensor of dtype ``strong``.

    A scalar of a lower or equal kind adopts ``strong``; one of a higher kind
    takes :func:`weak_above`'s dtype (an int next to bool int64, a float next to
    integers or bools float64, as in NumPy 2).

    >>> weak_scalar_dtype(0.5, float32), weak_scalar_dtype(0.5, int32), weak_scalar_dtype(1j, float32)
    (dtype('float32'), dtype('float64'), dtype('complex64'))
    """
    kind = (
        "b"
        if isinstance(value, bool)
        else "i"
        if isinstance(value, int)
        else "c"
        if isinstance(value, complex)
        else "f"
    )
    if strong is None:
        return {"b": bool_, "i": default_int, "f": default_float, "c": default_complex}[kind]
    return weak_kind_dtype(kind, strong)


def weak_kind_dtype(kind: str, strong: np.dtype) -> np.dtype:
    """The dtype a weak value of ``kind`` (``"b"``, ``"i"``, ``"f"``, ``"c"``) takes next to typed values of
    dtype ``strong``: see :func:`weak_scalar_dtype`.

    >>> weak_kind_dtype("c", float16), weak_kind_dtype("f", bool_)
    (dtype('complex64'), dtype('float64'))
    """
    if kind == "c" and strong.kind == "f":  # 1j next to float32 gives complex64, as in NumPy 2 and JAX
        return complex_dtype(strong)
    order = "bifc"
    if order.index(kind) <= order.index(strong.kind if strong.kind != "u" else "i"):
        return strong
    return weak_above(kind)


def weak_above(kind: str) -> np.dtype:
    """The dtype of a weak Python scalar of ``kind`` (``"i"``, ``"f"``, ``"c"``) next to typed values of a
    lower kind: int64, float64, complex128, as NumPy 2 (and JAX with 64-bit types, whose int64 tensorlib
    has) give; never float32, which would round ints above 2**24 (``int64 * 1.0`` changed 16777217).

    >>> weak_above("f"), weak_above("c")
    (dtype('float64'), dtype('complex128'))
    """
    return {"i": default_int, "f": float64, "c": complex128}[kind]
