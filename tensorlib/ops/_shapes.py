"""Shape helpers shared by shape rules (pure functions on tuples; ``None`` = unknown size)."""

from __future__ import annotations

import operator

import numpy as np


def broadcast_shapes(*shapes) -> tuple:
    """NumPy broadcasting of shapes that may hold ``None``; ValueError quotes them all."""
    ndim = max((len(s) for s in shapes), default=0)  # of no shapes: () as np.broadcast_shapes()
    out = []
    for axis in range(ndim):
        size = 1
        for s in shapes:
            k = axis - ndim + len(s)
            if k < 0:
                continue
            d = s[k]
            if d == 1 or d == size:
                continue
            if size == 1:
                size = d
            elif d is None or size is None:
                size = size if d is None else d
            else:
                raise ValueError(f"shapes {' and '.join(str(tuple(x)) for x in shapes)} are not broadcastable")
        out.append(size)
    return tuple(out)


def as_int(value, what: str) -> int:
    """``value`` as a Python int, read as NumPy reads a size, an offset or a shift: NumPy and tensorlib
    integers pass, a float (even 2.0) is a TypeError naming ``what`` (``int()`` truncated 2.5 to 2)."""
    if not hasattr(value, "__index__"):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    return operator.index(value)


def as_count(value, what: str, minimum: int = 0, context: str = "") -> int:
    """``value`` as a Python int >= ``minimum``: any integer that has a value passes (Python, NumPy, a 0-d array,
    an eager tensor: TensorFlow takes its counts as tensors, JAX as concrete arrays); a bool, a float, a vector,
    a traced tensor or a smaller number is a ValueError ``"<what> must be an int >= <minimum>, got ..."``, with
    why and ``context`` after it.

    >>> as_count(np.array(3), "frames")
    3
    """
    reason = " (a bool)" if isinstance(value, (bool, np.bool_)) else ""
    if not reason:
        try:
            count = operator.index(value)
        except TypeError as error:
            reason = f" ({error})"
    if reason or count < minimum:
        raise ValueError(f"{what} must be an int >= {minimum}, got {value!r}{reason}{context}")
    return count


def as_ints(values, what: str) -> tuple:
    """A shape, or any sequence of sizes (one int for one size), as a tuple of ints; see ``as_int``."""
    items = values if isinstance(values, (tuple, list)) or np.ndim(values) else (values,)
    try:
        return tuple(map(operator.index, items))
    except TypeError:
        if any(v is None for v in items):  # a traced tensor's unknown size, most often
            raise TypeError(f"{what} must be known integers, got {tuple(items)!r} (None: an unknown size)") from None
        if all(hasattr(v, "__index__") for v in items):
            raise  # an index that refuses itself (a float or symbolic tensor) says why
        raise TypeError(f"{what} must be integers, got {values!r}") from None


def normalize_axis(axis: int, ndim: int, what: str = "axis", *, scalar_axis: bool = True) -> int:
    """``axis`` of a tensor of rank ``ndim`` as a non-negative int; one out of range is NumPy's ``AxisError``
    (a ValueError and an IndexError) naming ``what``.  NumPy's ufunc reductions and cumsum/cumprod also take
    an int axis 0 or -1 of a 0-d array (``scalar_axis``); its mean, var, std, quantiles and sorts do not.

    >>> normalize_axis(-1, 3), normalize_axis(0, 0)
    (2, 0)
    >>> normalize_axis(0, 0, "median: axis", scalar_axis=False)
    Traceback (most recent call last):
    ...
    numpy.exceptions.AxisError: median: axis 0 is out of range for a tensor of rank 0
    """
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"{what} must be an int, got {axis!r}")
    axis = operator.index(axis)  # NumPy integers are axes too
    if not (-ndim <= axis < ndim or (scalar_axis and ndim == 0 and axis in (0, -1))):
        raise np.exceptions.AxisError(f"{what} {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, *, scalar_axis: bool = True) -> tuple:
    """``None`` -> all axes; an int or sequence -> sorted tuple of non-negative axes, checked.  Only an int
    names axis 0 or -1 of a 0-d tensor (``scalar_axis``: see ``normalize_axis``), as in NumPy: a tuple never."""
    if axis is None:
        return tuple(range(ndim))
    several = isinstance(axis, (tuple, list))
    axes = tuple(axis) if several else (axis,)
    out = tuple(sorted(normalize_axis(a, ndim, scalar_axis=scalar_axis and not several) for a in axes))
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate axis in {axis!r}")
    return out
