"""Creating tensors: tl.tensor, zeros, ones, full, arange, eye, linspace."""

from __future__ import annotations

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..backends import base as _backends
from ..grad.registry import not_differentiable
from ..tensor import Tensor, make
from ._shapes import as_int, as_ints
from .registry import defop


def _backend(backend):
    return _backends.current() if backend is None else _backends.get(backend)


def tensor(data, dtype=None, backend=None) -> Tensor:
    """A new tensor holding a copy of ``data``.

    NumPy arrays keep their dtype; a Python list of floats becomes float32,
    of ints int64; a Tensor is copied (onto ``backend`` if given), and keeps its gradient under a
    tape or ``tl.function``, as with TensorFlow's ``convert_to_tensor`` and JAX's ``asarray``.  Complex data
    asked for as a real ``dtype`` is a TypeError, as in TensorFlow (NumPy drops
    the imaginary part with a warning); ``tl.cast`` takes the real part on purpose.

    >>> import numpy as np, tensorlib as tl
    >>> tl.tensor(np.zeros(2)).dtype, tl.tensor([1.0]).dtype, tl.tensor([1]).dtype
    (dtype('float64'), dtype('float32'), dtype('int64'))
    """
    if isinstance(data, Tensor):
        _dt.check_keeps_imaginary(data.dtype, dtype, "tensor")
        if data._value is None:
            if data.__class__ is dispatch.WeakScalar and data.dtype.kind == "f":
                # A traced Python-float argument (float64 to hold it exactly): eagerly tl.tensor(1.5) is float32 and
                # tl.tensor(1.5, dtype) is exactly 1.5 in that dtype, a strong tensor.  Times a strong 1.0 it is
                # strong and exact (tl.cast of a Python float rounds it to the default float first, as eagerly).
                data = data * make(np.ones((), data.dtype), data.backend)
                dtype = dtype or _dt.default_float
            if dtype is not None and _dt.as_dtype(dtype) != data.dtype:
                from .math import cast

                if _dt.as_dtype(dtype).kind in "iu" and not np.can_cast(data.dtype, dtype):
                    # Checked when the graph runs, as eagerly (a cast would wrap 2**40 to 0 silently).
                    data = check_int_range(data, dtype, "tensor: data")
                return cast(data, dtype)
            return data
        target = data.backend if backend is None else _backends.get(backend)
        if dtype is not None:
            dispatch.check_int_array_range(data._value, _dt.as_dtype(dtype), "tensor: data")
        if target is data.backend and dispatch.current_state().tapes:
            # Under a tape the result stays a function of ``data``, as when traced (and as TensorFlow's and
            # JAX's conversions do): a copy of the value would be a silent zero gradient.  Values are
            # immutable, so sharing the memory is no alias.
            from .math import cast, identity

            return identity(data) if dtype is None or _dt.as_dtype(dtype) == data.dtype else cast(data, dtype)
        host = data.numpy() if target is not data.backend else data._value
        arr = target.asarray(host, dtype=None if dtype is None else _dt.as_dtype(dtype))
        return make(target.copy(arr) if arr is data._value else arr, target)
    b = _backend(backend)
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    if isinstance(data, complex) or hasattr(data, "dtype"):
        _dt.check_keeps_imaginary(np.complex128 if isinstance(data, complex) else data.dtype, dtype, "tensor")
    if isinstance(data, (bool, int, float)) and not isinstance(data, np.generic):
        dtype = dtype or _dt.weak_scalar_dtype(data, None)
        dispatch.check_int_range(data, dtype, "tensor: data")
        return make(b.asarray(data, dtype=dtype), b)
    if hasattr(data, "dtype") and hasattr(data, "shape"):
        src = _dt.of_array(data.dtype) if dtype is None else dtype
        host = data if b.is_array(data) else np.asarray(data)
        if dtype is not None:  # as for Python ints: integers that the dtype asked for cannot hold are never wrapped
            dispatch.check_int_array_range(host, dtype, "tensor: data")
        arr = b.asarray(host, dtype=src)
        if arr is data or (
            isinstance(arr, np.ndarray) and isinstance(data, np.ndarray) and np.shares_memory(arr, data)
        ):
            arr = b.copy(arr)
        return make(arr, b)
    t = dispatch.to_tensor(data, b)
    if dtype is not None and t.dtype != dtype:
        _dt.check_keeps_imaginary(t.dtype, dtype, "tensor")
        if dtype.kind == "i" and t.dtype.kind == "i" and t.size:
            # Python ints are checked against the dtype asked for, as a single one is: never wrapped silently.
            values = np.asarray(b.to_numpy(t._value))
            for v in (int(values.min()), int(values.max())):
                dispatch.check_int_range(v, dtype, "tensor: data holds")
        if isinstance(data, (list, tuple)) and dispatch._holds_tensor(data):
            # Tensors stacked by Pack keep their gradient through a cast (the raw value lost it: a silent 0).
            from .math import cast

            return cast(t, dtype)
        if dtype.kind in "fc":
            # Python floats are rounded once, to the dtype asked for (as NumPy and TensorFlow do), not first to
            # the default float32 (twice for float16): tensor([0.1], dtype="float64") held 0.10000000149011612.
            return make(b.asarray(np.asarray(data, dtype=dtype)), b)
        return make(b.fit(t._value, dtype), b)
    return t


def _shape_tuple(shape, what):
    dims = as_ints(shape, f"{what}: shape")
    if any(d < 0 for d in dims):
        raise ValueError(f"{what}: negative dimension in shape {dims}")
    return dims


def full(shape, value, dtype=None, backend=None) -> Tensor:
    """A tensor of ``shape`` filled with ``value`` (float32 by default for floats)."""
    if isinstance(value, Tensor):
        # A tensor fill value (a traced Python-float argument too) stays a value of the graph: broadcast it.
        from .math import cast
        from .shape import broadcast_to

        if dtype is None:
            weak = value.__class__ is dispatch.WeakScalar and value.dtype.kind == "f"
            dtype = _dt.default_float if weak else value.dtype
        return broadcast_to(cast(value, dtype), _shape_tuple(shape, "full"))
    b = _backend(backend)
    dtype = _dt.weak_scalar_dtype(value, None) if dtype is None else _dt.as_dtype(dtype)
    _dt.check_keeps_imaginary(np.asarray(value).dtype, dtype, "full: value")
    shape = _shape_tuple(shape, "full")
    dispatch.check_int_range(value, dtype, "full: value")
    if isinstance(value, np.generic):
        dispatch.check_int_array_range(np.asarray(value), dtype, "full: value")
    return make(b.xp.full(shape, value, dtype=dtype), b)


def zeros(shape, dtype=_dt.float32, backend=None) -> Tensor:
    """>>> import tensorlib as tl; tl.zeros((2, 3)).shape
    (2, 3)
    """
    return full(shape, 0, dtype, backend)


def ones(shape, dtype=_dt.float32, backend=None) -> Tensor:
    return full(shape, 1, dtype, backend)


def arange(start, stop=None, step=1, dtype=None, backend=None) -> Tensor:
    """Like ``numpy.arange``; the dtype follows the bounds (:func:`bounds_dtype`): int64 for Python ints,
    float32 for Python floats, a NumPy scalar's dtype otherwise.

    >>> import numpy as np, tensorlib as tl
    >>> tl.arange(3).dtype, tl.arange(0.0, 1.0, 0.5).dtype, tl.arange(np.float64(1.0)).dtype
    (dtype('int64'), dtype('float32'), dtype('float64'))
    """
    b = _backend(backend)
    if stop is None:
        start, stop = 0, start
    bounds = (start, stop, step)
    if any((v.dtype if isinstance(v, Tensor) else np.asarray(v).dtype).kind == "c" for v in bounds):
        # NumPy's arange(1j, 3) is empty; Python's error named no function ("must be real number").
        raise TypeError(f"arange: start, stop and step must be real numbers, got {start!r}, {stop!r}, {step!r}")
    dtype = bounds_dtype(bounds, dtype)
    start, stop, step = (v.item() if isinstance(v, Tensor) else v for v in bounds)
    return make(b.xp.arange(start, stop, step, dtype=dtype), b)


def bounds_dtype(values, dtype=None, float_valued: bool = False) -> np.dtype:
    """The dtype of a creation function's result from its bounds, by DESIGN's promotion rules: ``dtype`` if
    given; else NumPy scalars, arrays and tensors are strong and promote as NumPy does, and Python numbers are
    weak (alone they give int64, float32 or complex64).  A ``float_valued`` function (linspace, logspace) of
    integer bounds gives the default float, or float64 where an integer bound is strong, as ``mean`` does.

    >>> import numpy as np
    >>> [str(bounds_dtype(b, float_valued=True)) for b in [(0, 1), (np.float64(0), 1), (np.int32(0), 2), (0, 1j)]]
    ['float32', 'float64', 'float64', 'complex64']
    """
    if dtype is not None:
        return _dt.as_dtype(dtype)
    strong = [_dt.of_array(v.dtype) for v in values if hasattr(v, "dtype") and v.__class__ is not dispatch.WeakScalar]
    weak = [v.dtype if hasattr(v, "dtype") else _dt.weak_scalar_dtype(v, None) for v in values]
    if strong:
        result = _dt.promote_types(*strong)
        for kind in {d.kind for d in weak}:
            result = _dt.promote_types(result, _dt.weak_kind_dtype(kind, result))
    else:
        result = max(weak, key=lambda d: "bifc".index(d.kind))
    if float_valued and result.kind in "biu":
        return _dt.float64 if strong else _dt.default_float
    return result


def linspace(
    start, stop, num=50, dtype=None, backend=None, *, endpoint: bool = True, retstep: bool = False, axis: int = 0
):
    """``num`` evenly spaced values from ``start`` to ``stop``, as NumPy computes them (in float64 or
    complex128, then cast; floored for an integer dtype).  The default dtype follows the bounds
    (:func:`bounds_dtype`): float32 for Python numbers (complex64 for complex ones), a NumPy scalar's or
    tensor's float dtype (float64 for integer ones, as NumPy gives); complex bounds of a real dtype raise.
    ``endpoint``, ``retstep`` and ``axis`` are NumPy's: bounds may be arrays or tensors (broadcast together),
    the samples along ``axis``.  Tensor bounds are inputs: gradients reach them and traced ones stay symbolic.

    >>> import tensorlib as tl
    >>> tl.linspace(0.0, tl.tensor(1.0), 3).numpy().tolist()
    [0.0, 0.5, 1.0]
    >>> tl.linspace(0, 2j, 3).numpy().tolist()
    [0j, 1j, 2j]
    >>> tl.linspace(tl.tensor([0.0, 1.0]), 2.0, 2, endpoint=False, axis=-1).numpy().tolist()
    [[0.0, 1.0], [1.0, 1.5]]
    """
    dtype = _linspace_dtype(start, stop, dtype)
    if any(isinstance(v, Tensor) or np.ndim(v) for v in (start, stop)):
        return _linspace_of_tensors(start, stop, num, dtype, backend, endpoint, retstep, axis)
    b = _backend(backend)
    if as_int(axis, "linspace: axis") not in (0, -1):
        raise ValueError(f"linspace: axis {axis} is out of bounds for the 1-d result of scalar start and stop")
    values, step = np.linspace(start, stop, as_int(num, "linspace: num"), endpoint=bool(endpoint), retstep=True)
    values = make(b.asarray(np.floor(values) if dtype.kind in "iu" else values, dtype=dtype), b)
    return (values, step) if retstep else values


def _linspace_dtype(start, stop, dtype) -> np.dtype:
    """float32 unless asked; complex bounds give complex (a tensor's dtype, or complex64 as a list of complex
    numbers does) and refuse a real dtype: their imaginary parts were dropped with only a ComplexWarning."""
    result = bounds_dtype((start, stop), dtype, float_valued=True)
    for v in (start, stop):
        _dt.check_keeps_imaginary(
            v.dtype if isinstance(v, Tensor) else np.asarray(v).dtype, result, "linspace: start and stop"
        )
    return result


def _linspace_of_tensors(start, stop, num, dtype, backend, endpoint, retstep, axis):
    """NumPy's steps, ``start + i * ((stop - start) / div)`` (``div`` is ``num - 1``, or ``num`` without the
    endpoint) with the last value ``stop``, in tensor ops over the bounds' broadcast shape (it read 0-d tensor
    bounds with ``.item()``: their gradient was silently 0, and a traced one raised)."""
    from .array import moveaxis
    from .math import cast, floor, where
    from .shape import broadcast_to

    num = as_int(num, "linspace: num")
    if num < 0:
        raise ValueError(f"linspace: number of samples {num} must be non-negative")
    b = next((v.backend for v in (start, stop) if isinstance(v, Tensor)), None) if backend is None else None
    b = b or _backend(backend)
    wide = _dt.complex128 if dtype.kind == "c" else _dt.float64
    start, stop = (cast(v, wide) if isinstance(v, Tensor) else tensor(np.asarray(v), wide, b) for v in (start, stop))
    shape = np.broadcast_shapes(tuple(start.shape), tuple(stop.shape))
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    steps = tensor(np.arange(num, dtype=np.float64).reshape((num,) + (1,) * len(shape)), _dt.float64, b)
    div = num - 1 if endpoint else num
    delta = stop - start
    if div > 0:
        step = delta / div
        values = steps * step + start
        if endpoint:
            values = where(steps == num - 1, stop, values)
    else:  # NumPy's: no step (NaN), the samples arange(num) * delta + start
        step = np.nan
        values = steps * delta + start
    values = cast(floor(values) if dtype.kind in "iu" else values, dtype=dtype)
    if axis != 0:
        values = moveaxis(values, 0, as_int(axis, "linspace: axis"))
    if retstep and isinstance(step, Tensor) and dtype.kind in "fc":
        step = cast(step, dtype)
    return (values, step) if retstep else values


def eye(n: int, m: int | None = None, dtype=_dt.float32, backend=None) -> Tensor:
    """The identity matrix (n x m)."""
    b = _backend(backend)
    return make(b.xp.eye(n, m, dtype=_dt.as_dtype(dtype)), b)


_check_int_range = defop(
    "CheckIntRange",
    inputs=("x",),
    attrs={"dtype": _dt.int32, "where": ""},
    infer=lambda x, *, dtype, where: x,
    doc="Identity that raises OverflowError when a value of x does not fit in the integer dtype: a traced "
    "narrowing conversion (tl.tensor(x, dtype=...)) checked when it runs, as the eager one is.",
)


@_check_int_range.generic
def _check_int_range_kernel(xp, x, *, dtype, where):
    if x.size:  # a float NaN fits, as eagerly: read as 0 here, so that it hides no other value
        integral = xp.isdtype(x.dtype, "integral")
        values = x if integral else xp.where(xp.isnan(x), xp.zeros_like(x), x)
        scalar = int if integral else float
        dispatch.check_int_bounds(scalar(xp.min(values)), scalar(xp.max(values)), dtype, where)
    return x


not_differentiable("CheckIntRange")


def check_int_range(x, dtype, where: str) -> Tensor:
    """``x`` unchanged, checked when it runs to fit in the integer ``dtype``: an OverflowError naming ``where``
    otherwise (traced, the values are known only then).

    >>> import numpy as np, tensorlib as tl
    >>> check_int_range(tl.tensor(np.array([2**40])), "int32", "data")
    Traceback (most recent call last):
    OverflowError: CheckIntRange: data holds 1099511627776, which does not fit in int32 (range ...) (inputs x: ...)
    """
    return _check_int_range(x, dtype=_dt.as_dtype(dtype), where=where)


dispatch._check_int_range_op = check_int_range
