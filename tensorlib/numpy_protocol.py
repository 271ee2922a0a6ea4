"""NumPy's own functions on Tensors: ``np.exp(t)``, ``np.sum(t)``, ``np.concatenate([t, u])``.

Tensor implements NEP 13 (``__array_ufunc__``) and NEP 18 (``__array_function__``): a NumPy
function called with a Tensor runs the tensorlib function of the same name (``np.concatenate``
runs ``tl.concat``, ``np.linalg.inv`` runs ``tl.linalg.inv``), so the call is recorded by tapes and
traced by ``tl.function`` like any other op.  A NumPy function that tensorlib lacks raises a
TypeError naming it, rather than converting the Tensor to a plain array and silently dropping
its gradient.  ``np.asarray(t)`` (``__array__``) still gives the values, without a gradient.

Predicates and reductions run tensorlib's too (``np.isnan(t)`` is ``tl.isnan(t)``, a bool Tensor;
``np.allclose`` and ``np.array_equal`` give Python bools); the few value queries tensorlib lacks
(``np.array_equiv``, ``np.array_repr``) compare the values and return NumPy results; ``np.save``,
``np.savez`` and ``np.savetxt`` write the values.  ``np.vectorize(f)(t)`` maps ``f`` over a Tensor's elements
with ``tl.vmap`` (``signature=`` and ``excluded=`` as NumPy's), as ``jax.numpy.vectorize`` does.

>>> import numpy as np, tensorlib as tl
>>> x = tl.tensor([0.0, 1.0], dtype="float64")
>>> with tl.GradientTape() as tape:
...     tape.watch(x)
...     y = np.sum(np.exp(x) * 2.0)
>>> type(y).__name__, tape.gradient(y, x).numpy().round(4).tolist()
('Tensor', [2.0, 5.4366])
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
import re

import numpy as np

from . import tree
from .dtypes import as_dtype
from .ops.numpy_more import pad_with_mode
from .tensor import Tensor

_NO_VALUE = getattr(np, "_NoValue", object())
_table: dict = {}  # NumPy function -> (tensorlib function, NumPy signature, renames, its parameters)
_ufuncs: dict = {}  # ufunc -> tensorlib callable
_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
    "fmax": "nanmax",  # fmax and fmin skip NaNs
    "fmin": "nanmin",
    "logaddexp": "logsumexp",
}
# The keyword arguments of ufunc.reduce / ufunc.accumulate that the tensorlib function takes as NumPy does.
_REDUCTION_OPTIONS = {
    "sum": {"dtype", "initial", "where"},
    "prod": {"dtype", "initial", "where"},
    "max": {"initial", "where"},
    "min": {"initial", "where"},
    "cumsum": {"dtype"},
    "cumprod": {"dtype"},
}
_ACCUMULATE = {
    "add": "cumsum",
    "multiply": "cumprod",
    "maximum": "cummax",
    "minimum": "cummin",
    "logaddexp": "logcumsumexp",
}

# NumPy names whose tensorlib function is named differently, or takes the argument under another name.
_RENAMED = {
    "amax": "max",
    "amin": "min",
    "absolute": "abs",
    "true_divide": "divide",
    "conjugate": "conj",
    "mod": "remainder",
}
_ARGUMENTS = {
    "clip": {"a_min": "clip_value_min", "a_max": "clip_value_max", "min": "clip_value_min", "max": "clip_value_max"},
    "transpose": {"axes": "perm"},
    "full_like": {"fill_value": "value"},
}
# tensorlib parameters that NumPy's function lacks, set to what NumPy's function does (tensorlib's
# cholesky/eigh read the symmetric part by default; NumPy reads one triangle).  NumPy's fill_diagonal, put,
# put_along_axis and place write into their argument: inplace=True, which a Tensor refuses (tensorlib's
# functional form, inplace=False, returns a new Tensor and would leave the caller's t unfilled).
_NUMPY_MEANING = {
    "cholesky": {"symmetrize_input": False},
    "eigh": {"symmetrize_input": False},
    "eigvalsh": {"symmetrize_input": False},
    **{name: {"inplace": True} for name in ("fill_diagonal", "put", "place")},
    "put_along_axis": {"inplace": True, "mode": "raise"},  # NumPy's put_along_axis raises out of bounds
    "bincount": {"length": None},  # jnp's length= (a fixed number of bins): NumPy has none
    "unique": {"size": None, "fill_value": None},  # jnp's size= and fill_value= (a fixed-size result): neither
}
# NumPy functions that create arrays (never dispatched on a Tensor argument) or mean something else.
_CREATION = {"identity", "zeros", "ones", "full", "empty", "eye", "arange", "linspace", "asarray"}
_VALUE_QUERIES = (
    "array_equiv",
    "array_repr",
    "array_str",
    "array2string",
    "save",  # writing values needs no gradient
    "savez",
    "savez_compressed",
    "savetxt",
    "common_type",
    "min_scalar_type",
)


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # a C function without a text signature: arguments pass as given
        return None


def _build_table():
    """Fill the tables on first use (tl.linalg and tl.fft are imported by then).  Built aside and
    published at the end, functions table last: a thread that sees it filled sees all of it."""
    import tensorlib as tl

    table, ufuncs = {}, {}
    pairs = [(np, tl), (np.linalg, getattr(tl, "linalg", None)), (np.fft, getattr(tl, "fft", None))]
    pairs.append((np.lib.stride_tricks, tl))  # sliding_window_view
    for np_module, tl_module in pairs:
        if tl_module is None:
            continue
        for name in dir(np_module):
            target = _RENAMED.get(name, name)
            if name.startswith("_") or name in _CREATION or not hasattr(tl_module, target):
                continue
            np_fn, tl_fn = getattr(np_module, name), getattr(tl_module, target)
            if not callable(tl_fn) or isinstance(tl_fn, type) or inspect.ismodule(tl_fn):
                continue
            if isinstance(np_fn, np.ufunc):
                ufuncs[np_fn] = tl_fn
            elif callable(np_fn):
                renames = _ARGUMENTS.get(name, {})
                sig = _signature(np_fn)
                defaults = {**_numpy_defaults(sig, renames, tl_fn), **_NUMPY_MEANING.get(name, {})}
                table[np_fn] = (tl_fn, sig, renames, _parameters(tl_fn), defaults, _binding(sig))
    for np_fn, tl_fn in _SPECIAL.items():
        table[np_fn] = (tl_fn, None, {}, (), {}, None)
    for name in _VALUE_QUERIES:
        if hasattr(np, name):
            table[getattr(np, name)] = (_on_values(getattr(np, name)), None, {}, (), {}, None)
    _ufuncs.update(ufuncs)
    _table.update(table)


def _parameters(fn) -> tuple:
    sig = _signature(fn)
    return tuple(sig.parameters) if sig is not None else ()


def _binding(sig):
    """What binding a call to ``sig`` needs, for the common signature without ``*args``/``**kwargs``: its
    parameter names in order, those a keyword may give, and the required ones (``inspect.Signature.bind``
    took half the time of ``t.sum(axis=0)``); None for another signature, which ``bind`` binds."""
    if sig is None or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        return None
    params = sig.parameters.values()
    keywords = frozenset(p.name for p in params if p.kind is not p.POSITIONAL_ONLY)
    required = tuple(p.name for p in params if p.default is p.empty)
    positional = tuple(p.name for p in params if p.kind is not p.KEYWORD_ONLY)
    return positional, keywords, required


def _bound(name, sig, binding, args, kwargs) -> dict:
    """``{parameter: value}`` of a call to NumPy's function ``name`` (``sig``), as ``sig.bind`` gives."""
    if binding is not None:
        positional, keywords, required = binding
        if 0 < len(args) <= len(positional) and keywords.issuperset(kwargs):  # the first by position, as bind orders
            arguments = dict(zip(positional, args))
            if arguments.keys().isdisjoint(kwargs):
                arguments.update(kwargs)
                if all(r in arguments for r in required):
                    return arguments
    try:
        return sig.bind(*args, **kwargs).arguments
    except TypeError as e:
        raise TypeError(f"numpy.{name}: {e}") from None


def _numpy_defaults(sig, renames: dict, tl_fn) -> dict:
    """``{tensorlib parameter: NumPy's default}`` where the two functions default one argument differently
    (``np.linalg.eigh``'s ``UPLO="L"`` against tensorlib's None, which symmetrizes): a call that leaves it
    out must still mean what it means in NumPy."""
    tl_sig = _signature(tl_fn)
    if sig is None or tl_sig is None:
        return {}
    out = {}
    for name, param in sig.parameters.items():
        target = renames.get(name, name)
        theirs = tl_sig.parameters.get(target)
        if param.default in (inspect.Parameter.empty, _NO_VALUE) or theirs is None:
            continue
        if theirs.default is inspect.Parameter.empty or not _same_default(param.default, theirs.default):
            out[target] = param.default
    return out


def _same_default(a, b) -> bool:
    """Whether NumPy's default ``a`` and tensorlib's ``b`` mean the same: as flags (None and False), as dtypes
    (``int`` and ``np.int64``; Python's ``float`` is float64 to NumPy but float32 to tensorlib; None is no
    dtype), or as equal values."""
    if (a is None or a is False) and (b is None or b is False):
        return True
    if a is not None and b is not None:
        try:
            return np.dtype(_numpy_dtype(a)) == as_dtype(b)
        except TypeError:
            pass
    return type(a) is type(b) and _equal(a, b)


def _on_values(np_fn):
    def query(*args, **kwargs):
        return np_fn(*_values(args), **{k: _values([v])[0] for k, v in kwargs.items()})

    return query


def _values(args) -> list:
    """``args`` with every Tensor, also inside lists, tuples and dicts, as its NumPy array."""
    return tree.map(_numpy_of, list(args))


def _numpy_of(value):
    return value.numpy() if isinstance(value, Tensor) else value


def _call(name, tl_fn, sig, renames, tl_params, defaults, binding, args, kwargs):
    """Call ``tl_fn`` with NumPy's arguments: the first, positional-only ones and ``*arrays`` by position, the others by
    (renamed) name; an argument tensorlib lacks may only hold NumPy's default, and one that tensorlib
    defaults otherwise gets NumPy's default when left out."""
    if sig is None or (not kwargs and len(args) == 1 and not defaults):  # np.sum(t): nothing to translate
        return tl_fn(*args, **kwargs)
    positional, call_kwargs = [], {}
    arguments = _bound(name, sig, binding, args, kwargs)
    # Those before a ``*args`` go by position too: np.apply_along_axis(f, 0, t, 2.0) passed axis= and arr= by
    # name after 2.0 ("got multiple values for argument 'axis'"), np.piecewise(t, c, fs, 2.0) condlist=.
    before_args = next((k for k, p in enumerate(sig.parameters.values()) if p.kind is p.VAR_POSITIONAL), 1)
    for k, (arg, value) in enumerate(arguments.items()):
        param = sig.parameters[arg]
        if param.kind is param.VAR_POSITIONAL:
            positional.extend(value)
            continue
        if k < before_args or param.kind is param.POSITIONAL_ONLY:  # (np.linalg.matmul's x2 has no name to pass)
            positional.append(value)
            continue
        given = value.items() if param.kind is param.VAR_KEYWORD else [(arg, value)]
        for key, v in given:
            target = renames.get(key, key)
            if v is _NO_VALUE:
                continue
            if target in call_kwargs:
                raise TypeError(f"numpy.{name}: arguments {_given(renames, target)} both set {target}; give one")
            if target in tl_params:
                call_kwargs[target] = _numpy_dtype(v) if target == "dtype" else v
            elif param.kind is param.VAR_KEYWORD and arg in tl_params:  # both forward them (to func1d, funclist)
                call_kwargs[key] = v
            elif param.kind is param.VAR_KEYWORD or not _equal(v, param.default):
                raise TypeError(
                    f"numpy.{name}: argument {key}={v!r:.40} is not supported on tensorlib Tensors "
                    f"({tl_fn.__module__}.{tl_fn.__name__} takes {', '.join(tl_params)})"
                )
    for target, value in defaults.items():
        call_kwargs.setdefault(target, value)
    return tl_fn(*positional, **call_kwargs)


def _given(renames: dict, target: str) -> str:
    return " and ".join(sorted({target} | {key for key, to in renames.items() if to == target}))


def _numpy_dtype(dtype):
    """A ``dtype=`` as NumPy reads it: Python's ``float`` is float64 (tensorlib reads it as its default float,
    float32), ``complex`` complex128."""
    return np.dtype(dtype) if dtype is float or dtype is complex else dtype


def _equal(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _unsupported(what):
    return TypeError(
        f"tensorlib has no implementation of {what} for Tensors, so it would drop the gradient; "
        f"use a tensorlib function, or np.asarray(t) to work on the values (no gradient)"
    )


def _qualified(fn) -> str:
    return f"{getattr(fn, '__module__', None) or 'numpy'}.{fn.__name__}"


# NEP 35: ``np.ones(3, like=t)`` asks the Tensor type for NumPy's creation function (``like`` is dropped before
# the call reaches ``__array_function__``).
_LIKE_CREATION = {np.ones, np.zeros, np.empty, np.full, np.eye, np.identity, np.arange, np.array, np.asarray}


def _made_like(func, args, kwargs):
    """A Tensor made by a NumPy creation function called with ``like=`` a Tensor: NumPy's values and dtypes
    (``np.ones(3, like=t)`` is float64, as NumPy's), or None for any other function.  ``np.array`` of
    tensors stacks them as ``tl.tensor`` does, keeping their gradients; other creation functions given a
    Tensor would read its values without a gradient, so they refuse it."""
    from .ops.creation import tensor

    if func not in _LIKE_CREATION:
        return None
    holds_tensor = any(isinstance(leaf, Tensor) for leaf in tree.leaves([list(args), kwargs]))
    if func in (np.array, np.asarray) and holds_tensor:
        if len(args) != 1 or set(kwargs) - {"dtype"}:
            raise TypeError(f"numpy.{func.__name__}(..., like=Tensor) of tensors takes only dtype=")
        return tensor(args[0], dtype=kwargs.get("dtype"))
    if holds_tensor:
        raise TypeError(
            f"numpy.{func.__name__}(..., like=Tensor) was given a Tensor among its arguments, whose gradient it "
            "would drop; use the tensorlib function of that name"
        )
    return tensor(func(*args, **kwargs))


def array_function(self, func, types, args, kwargs):
    """NEP 18: NumPy's non-ufunc functions on Tensors run the tensorlib function of the same name."""
    if not _table:
        _build_table()
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented  # another array library's type: let it (or NumPy) decide
    entry = _table.get(func)
    if entry is None:
        made = _made_like(func, args, kwargs)
        if made is not None:
            return made
        raise _unsupported(_qualified(func))
    if func in _JOINS:
        args, kwargs = _joined_in_dtype(func, args, dict(kwargs))
    return _call(func.__name__, *entry, args, kwargs)


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NEP 13: NumPy's ufuncs (``np.exp``, ``ndarray + Tensor``) and their ``outer``, ``reduce``, ``accumulate``
    and ``reduceat``."""
    if not _table:
        _build_table()
    name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    if kwargs.get("out") is not None:
        raise TypeError(
            f"{name}: out= cannot write a Tensor's result into an array (tensorlib values are "
            "immutable); assign the returned Tensor instead"
        )
    kwargs.pop("out", None)
    if method == "at" and isinstance(inputs[0], Tensor):
        raise TypeError(
            f"{name}: a Tensor cannot change in place (tensorlib values are immutable); "
            "t.at[indices].add(values) (numpy.add.at's) and t.at[indices].set(values) return a new Tensor"
        )
    inputs = tuple(map(_as_numpy_operand, inputs))
    if method == "outer":  # NumPy's a[..., None, ..., None] (op) b
        method, inputs = "__call__", _outer_operands(inputs)
    if method == "__call__" and ufunc.__name__ in _VALUE_QUERIES:
        return ufunc(*_values(inputs), **kwargs)
    if method == "__call__":
        fn = _ufuncs.get(ufunc)
        if fn is None:
            raise _unsupported(name)
        inputs, place_result = _core_axes(name, ufunc, inputs, kwargs.pop("axes", None), kwargs.pop("axis", None))
        dtype, casting = kwargs.pop("dtype", None), kwargs.pop("casting", "same_kind")
        if kwargs.pop("order", "K") not in ("K", "A", "C", "F"):  # a memory layout: a Tensor's values have none
            raise ValueError(f"{name}: order must be 'K', 'A', 'C' or 'F'")
        if kwargs.get("subok") is True:
            del kwargs["subok"]
        if kwargs:
            raise TypeError(f"{name}: argument(s) {sorted(kwargs)} are not supported on tensorlib Tensors")
        if dtype is not None and all(t.endswith("->?") for t in ufunc.types if "O" not in t):  # a predicate
            raise TypeError(f"{name}: dtype={np.dtype(dtype)} names no loop of this predicate (its result is bool)")
        if dtype is None and casting in ("no", "equiv"):
            dtypes = sorted({str(np.dtype(x.dtype)) for x in inputs if hasattr(x, "dtype")})
            if len(dtypes) > 1:
                raise TypeError(f"{name}: casting={casting!r} needs inputs of one dtype, got {' and '.join(dtypes)}")
        return place_result(fn(*_cast_for_loop(name, inputs, dtype, casting)) if dtype is not None else fn(*inputs))
    import tensorlib as tl

    if method == "reduceat" and ufunc.__name__ in _REDUCE and len(inputs) == 2:
        kwargs.pop("indices", None)  # NumPy passes indices= given by name in inputs too
        return _reduceat(name, ufunc, *inputs, **kwargs)
    table = {"reduce": _REDUCE, "accumulate": _ACCUMULATE}.get(method, {})
    if ufunc.__name__ not in table or len(inputs) != 1:
        raise _unsupported(name)
    axis = kwargs.pop("axis", 0)  # ufunc.reduce and ufunc.accumulate work along axis 0 by default
    if method == "accumulate" and (axis is None or isinstance(axis, tuple) or not getattr(inputs[0], "shape", ())):
        # NumPy refuses these; tensorlib's cumsum would have flattened the input or made a 0-d one 1-d.
        raise ValueError(
            f"{name}: accumulates along one axis of an array with at least one dimension, got axis="
            f"{axis!r} for shape {tuple(getattr(inputs[0], 'shape', ()))}"
        )
    keepdims = kwargs.pop("keepdims", False)
    target = table[ufunc.__name__]
    if kwargs.get("dtype", 0) is None:
        del kwargs["dtype"]
    elif "dtype" in kwargs:
        kwargs["dtype"] = _numpy_dtype(kwargs["dtype"])
    unsupported = sorted(set(kwargs) - _REDUCTION_OPTIONS.get(target, set()))
    if unsupported:
        raise TypeError(f"{name}: argument(s) {unsupported} are not supported on tensorlib Tensors")
    fn = getattr(tl, target)
    if method == "reduce":
        return fn(inputs[0], axis=axis, keepdims=keepdims, **kwargs)
    return fn(inputs[0], axis=axis, **kwargs)


def _reduceat(name, ufunc, x, indices, axis=0, dtype=None):
    """``ufunc.reduceat``: the reduction over ``x[indices[i]:indices[i+1]]`` along ``axis``, or ``x[indices[i]]``
    where the next index is not larger (NumPy's rule), each a differentiable slice of ``x``."""
    import tensorlib as tl

    x = tl.asarray(x)
    if x.ndim == 0:
        raise TypeError(f"{name}: cannot reduceat on a scalar (x shape (), {x.dtype}), as in NumPy")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(f"{name}: axis {axis} is out of bounds for shape {x.shape}")
    axis %= x.ndim
    if dtype is not None or ufunc.__name__.startswith("logical_"):  # a logical ufunc's result is bool
        x = tl.astype(x, _numpy_dtype(dtype) if dtype is not None else bool)
    if isinstance(indices, Tensor):
        try:
            indices = indices.numpy()
        except TypeError:  # traced, or one per element under tl.vmap: no value to read
            return _reduceat_of_symbolic_indices(name, ufunc, x, indices, axis)
    indices = np.asarray(indices)
    if indices.size == 0:  # [] reads as float64
        indices = indices.astype(np.intp)
    length = x.shape[axis]
    # NumPy's own checks and errors (index types, bounds, dimensions) on a stand-in of the axis' length.
    try:
        ufunc.reduceat(np.zeros(length, np.int8), indices)
    except (IndexError, TypeError, ValueError) as e:
        raise type(e)(f"{name}: {e} (x shape {x.shape}, {x.dtype}; indices {indices.dtype})") from None
    indices = np.asarray(indices, dtype=np.intp).tolist()
    reduce = getattr(tl, _REDUCE[ufunc.__name__])
    parts = []
    for i, start in enumerate(indices):
        stop = indices[i + 1] if i + 1 < len(indices) else length
        if stop > start:
            parts.append(reduce(tl.take(x, tl.arange(start, stop), axis=axis), axis=axis, keepdims=True))
        else:
            parts.append(tl.take(x, tl.tensor([start]), axis=axis))
    if not parts:
        return tl.take(x, tl.zeros((0,), dtype="int64"), axis=axis)
    return tl.concat(parts, axis=axis)


def _reduceat_of_symbolic_indices(name, ufunc, x, indices, axis):
    """``reduceat`` with indices whose values are not known (traced, or batched under ``tl.vmap``): output ``i``
    reduces ``x`` where a (k, n) mask holds NumPy's rule (``indices[i] <= j < indices[i+1]``, or ``j ==
    indices[i]`` where the next index is not larger), the rest set to the reduction's identity.  Indices out
    of range cannot be checked there: their outputs are the identity."""
    import tensorlib as tl

    if indices.dtype.kind not in "iu" or indices.ndim != 1:
        raise TypeError(f"{name}: indices must be 1-d integers, got shape {indices.shape} {indices.dtype}")
    length = x.shape[axis]
    if length is None:
        raise ValueError(f"{name}: the length of axis {axis} must be known (x shape {x.shape}, {x.dtype})")
    starts = tl.reshape(tl.astype(indices, "int64"), (-1, 1))
    stops = tl.concat([starts[1:], tl.full((1, 1), length, "int64")], axis=0)
    position = tl.arange(length)
    inside = tl.where(stops > starts, (position >= starts) & (position < stops), position == starts)
    reduction = _REDUCE[ufunc.__name__]
    identity = _reduction_identity(reduction, x.dtype)
    values = tl.where(inside, tl.expand_dims(tl.moveaxis(x, axis, -1), -2), tl.astype(identity, x.dtype))
    return tl.moveaxis(getattr(tl, reduction)(values, axis=-1), -1, axis)


def _reduction_identity(reduction: str, dtype: np.dtype):
    """The value that leaves ``reduction`` unchanged: 0, 1, True, False, or the lowest or highest of ``dtype``."""
    fixed = {"sum": 0, "prod": 1, "all": True, "any": False}
    if reduction in fixed:
        return fixed[reduction]
    lowest = reduction in ("max", "nanmax", "logsumexp")
    if dtype.kind in "fc":
        return -np.inf if lowest else np.inf
    if dtype.kind == "b":
        return not lowest
    return np.iinfo(dtype).min if lowest else np.iinfo(dtype).max


def _core_axes(name, ufunc, inputs, axes, axis):
    """A gufunc's ``axes=`` (one entry per operand, and the result's) or ``axis=`` (gufuncs of one core axis,
    ``np.vecdot``): the operands with their core axes moved last, and what moves the result's back."""
    if axes is None and axis is None:
        return inputs, _unchanged
    import tensorlib as tl

    core = [spec.count(",") + 1 if spec else 0 for spec in re.findall(r"\(([^)]*)\)", ufunc.signature or "")]
    if axis is not None:
        if axes is not None or any(n != 1 for n in core[: ufunc.nin]):
            raise TypeError(f"{name}: axis= is for a gufunc of one core axis per input, without axes= (got {axis!r})")
        axes = [axis] * (ufunc.nin + (core[-1] > 0))
    entries = [(entry,) if isinstance(entry, int) else tuple(entry) for entry in axes]
    if not core or len(entries) not in (ufunc.nin, ufunc.nin + 1):
        raise TypeError(f"{name}: axes={axes!r} needs one entry per operand and one for the result")
    moved = [tl.moveaxis(x, e, tuple(range(-len(e), 0))) for x, e in zip(inputs, entries)]
    if len(entries) == ufunc.nin:
        return moved, _unchanged
    result = entries[-1]
    return moved, lambda out: tl.moveaxis(out, tuple(range(-len(result), 0)), result)


def _unchanged(out):
    return out


def _outer_operands(inputs) -> tuple:
    """``ufunc.outer(a, b)``'s operands: ``a`` with one new axis per axis of ``b``, so the ufunc broadcasts."""
    a, b = inputs
    new_axes = (None,) * np.ndim(b)
    return (a[(..., *new_axes)] if new_axes and np.ndim(a) else a), b


def _cast_for_loop(name, inputs, dtype, casting="same_kind") -> list:
    """A ufunc's ``dtype=`` (or a join's, einsum's) as NumPy reads it (Python's ``float`` is float64): the
    inputs cast to it by NumPy's ``casting`` rule (``tensorlib.ops.math.cast_for_loop``)."""
    from .ops.math import cast_for_loop

    return cast_for_loop(name, inputs, _numpy_dtype(dtype), casting)


# NumPy's joins whose dtype= and casting= cast the arrays before joining them.
_JOINS = {np.concatenate, np.stack, np.vstack, np.hstack}


def _joined_in_dtype(func, args, kwargs):
    """A join's arrays as NumPy reads them (a list of numbers is NumPy's array), cast to its ``dtype=``."""
    dtype, casting = kwargs.pop("dtype", None), kwargs.pop("casting", "same_kind")
    if not args:
        return args, kwargs
    arrays = [_as_numpy_operand(a) for a in args[0]]
    if dtype is not None:
        arrays = _cast_for_loop(f"numpy.{func.__name__}", arrays, dtype, casting)
    return (arrays, *args[1:]), kwargs


def _concatenate(arrays, axis=0, out=None):
    import tensorlib as tl

    if out is not None:
        raise TypeError("numpy.concatenate: out= is not supported on tensorlib Tensors (they are immutable)")
    return tl.concatenate(arrays, axis=axis)


def _take(a, indices, axis=None, out=None, mode="raise"):
    import tensorlib as tl

    if out is not None:
        raise TypeError("numpy.take: out= is not supported on tensorlib Tensors (they are immutable)")
    return tl.take(a, indices, axis=axis, mode=mode)


def _clip(a, a_min=_NO_VALUE, a_max=_NO_VALUE, out=None, *, min=_NO_VALUE, max=_NO_VALUE, **kwargs):  # noqa: A002
    import tensorlib as tl

    if out is not None or kwargs:
        raise TypeError(f"numpy.clip: out= and {sorted(kwargs)} are not supported on tensorlib Tensors")
    lo = a_min if a_min is not _NO_VALUE else None if min is _NO_VALUE else min
    hi = a_max if a_max is not _NO_VALUE else None if max is _NO_VALUE else max
    return tl.clip(a, lo, hi)  # tl.clip's gradient: x keeps it at a bound (maximum and minimum split ties)


def _pad(array, pad_width, mode="constant", **kwargs):
    import tensorlib as tl

    if mode == "constant":
        return tl.pad(array, pad_width, **kwargs)
    return pad_with_mode(tl.asarray(array), pad_width, mode, "numpy.pad", **kwargs)


def _reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """``numpy.reshape`` (``copy`` does not matter: the values are immutable)."""
    import tensorlib as tl

    return tl.reshape(a, newshape if shape is None else shape, order)  # NumPy before 2.1 named it newshape


def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``numpy.linspace`` with Tensor bounds: NumPy's dtype (float64 for float64 or Python bounds, where
    ``tl.linspace`` defaults to float32); the rest is ``tl.linspace``'s (gradients reach the bounds)."""
    import tensorlib as tl

    if device is not None:
        raise TypeError(f"numpy.linspace: device= is not supported on tensorlib Tensors, got {device!r}")
    kinds = [np.dtype(v.dtype) if hasattr(v, "dtype") else v for v in (start, stop)]
    dtype = np.dtype(_numpy_dtype(dtype)) if dtype is not None else np.result_type(*kinds, float(num))
    return tl.linspace(start, stop, num, dtype, endpoint=endpoint, retstep=retstep, axis=axis)


def _einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    import tensorlib as tl

    from .ops.shape import fortran_order

    if out is not None:
        raise TypeError("numpy.einsum: out= is not supported on tensorlib Tensors (they are immutable)")
    fortran_order(order, "numpy.einsum", ("K", "A", "C", "F"))  # a memory layout: a Tensor's values have none
    return tl.einsum(*operands, dtype=_numpy_dtype(dtype), casting=casting)


def _where(condition, *xy):
    import tensorlib as tl

    if not any(hasattr(v, "dtype") for v in xy):  # only Python numbers: NumPy's dtypes, as np.where(c, 1.0, 2)'s
        xy = [np.asarray(v) for v in xy]
    return tl.where(condition, *map(_as_numpy_operand, xy))


def _as_numpy_operand(x):
    """A list or tuple operand as NumPy reads it (``np.add(t, [0.1])``: a float64 array, where tensorlib's
    rule makes a list of floats float32); one holding a Tensor stays, for tensorlib to stack with its gradient."""
    if isinstance(x, (list, tuple)) and not any(isinstance(leaf, Tensor) for leaf in tree.leaves(list(x))):
        return np.asarray(x)
    return x


def _binary(name):
    def call(a, b, out=None):
        import tensorlib as tl

        if out is not None:
            raise TypeError(f"numpy.{name}: out= is not supported on tensorlib Tensors")
        return getattr(tl, name)(a, b)

    return call


def _astype(x, dtype, /, *, copy=True, device=None):
    import tensorlib as tl

    if device is not None:
        raise TypeError(f"numpy.astype: device={device!r} is not supported on tensorlib Tensors")
    return tl.cast(x, _numpy_dtype(dtype))  # a new value either way: tensorlib values are immutable


_SPECIAL = {
    np.concatenate: _concatenate,
    np.take: _take,
    np.clip: _clip,
    np.pad: _pad,
    np.linspace: _linspace,
    np.reshape: _reshape,
    np.einsum: _einsum,
    np.where: _where,
    np.dot: _binary("dot"),
    np.inner: _binary("inner"),
    np.vdot: _binary("vdot"),
}

if hasattr(np, "astype"):  # NumPy 2.1 and later
    _SPECIAL[np.astype] = _astype


# ndarray's methods that Tensor has with ndarray's arguments, by position too (``t.sum(0, np.float32)`` is dtype
# float32, where tl.sum's second parameter is keepdims): NumPy's function of that name, through the table.
_NDARRAY_METHODS = {
    name: getattr(np, name)
    for name in ("sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin", "any", "all", "ptp")
}
_NDARRAY_METHODS.update({name: getattr(np, name) for name in ("cumsum", "cumprod", "trace", "diagonal", "repeat")})
# ndarray.sort and .partition work in place; Tensor's return the new values (JAX's): tensorlib values are immutable.
_NDARRAY_METHODS.update(swapaxes=np.swapaxes, sort=np.sort, argsort=np.argsort, ravel=np.ravel, flatten=np.ravel)
_NDARRAY_METHODS.update({name: getattr(np, name) for name in ("partition", "argpartition", "searchsorted", "choose")})


def _ndarray_method(name, np_fn):
    def method(self, *args, **kwargs):
        if not _table:
            _build_table()
        return _call(np_fn.__name__, *_table[np_fn], (self, *args), kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``ndarray.{name}``: ``numpy.{np_fn.__name__}(self, ...)`` with NumPy's arguments."
    return method


def _reshape_method(self, *shape, order="C", copy=None):
    """``ndarray.reshape``: the shape as one tuple or as its sizes; ``order='F'`` as ``numpy.reshape``."""
    return _reshape(self, shape[0] if len(shape) == 1 else shape, order)


def _compress_method(self, condition, axis=None, out=None):
    """``ndarray.compress``: ``numpy.compress(condition, self, axis)``."""
    return np.compress(condition, self, axis, out)


_numpy_vectorize_call = getattr(np.vectorize.__call__, "numpys", np.vectorize.__call__)


def _vectorize_call(self, *args, **kwargs):
    """``np.vectorize(f)(t)`` with a Tensor argument maps ``f`` over the elements with ``tl.vmap``, as
    ``jax.numpy.vectorize`` does, so the result is a Tensor recorded by tapes and traced; NumPy's own loop
    read the values with ``__array__`` and silently dropped the gradient.  Without a Tensor it is NumPy's."""
    if not any(isinstance(v, Tensor) for v in tree.leaves((args, kwargs))):
        return _numpy_vectorize_call(self, *args, **kwargs)
    return _vectorize_tensors(self, args, kwargs)


_vectorize_call.numpys = _numpy_vectorize_call


def _call_with_keywords(fn, n, names, fixed, *args):
    return fn(*args[:n], **dict(zip(names, args[n:])), **fixed)


def _vectorize_tensors(vectorized, args, kwargs):
    from .grad.vmap import BatchedValueError, vmap
    from .ops import creation, shape

    fn = vectorized.pyfunc
    if kwargs:  # excluded keywords pass as they are; the others map as positional arguments do
        names = [k for k in kwargs if k not in vectorized.excluded]
        fixed = {k: v for k, v in kwargs.items() if k in vectorized.excluded}
        fn = functools.partial(_call_with_keywords, fn, len(args), names, fixed)
        args = (*args, *(kwargs[k] for k in names))
    mapped = [i for i in range(len(args)) if i not in vectorized.excluded]
    if vectorized.signature is None:
        core_dims = [()] * len(mapped)
    else:
        core_dims = np.lib._function_base_impl._parse_gufunc_signature(vectorized.signature)[0]
        if len(core_dims) != len(mapped):
            raise TypeError(
                f"np.vectorize: signature {vectorized.signature!r} has {len(core_dims)} inputs, the call "
                f"maps {len(mapped)} arguments"
            )
    values = [args[i] if isinstance(args[i], Tensor) else creation.tensor(np.asarray(args[i])) for i in mapped]
    for v, core in zip(values, core_dims):
        if v.ndim < len(core):
            raise ValueError(
                f"np.vectorize: an argument of shape {v.shape} ({v.dtype}) has fewer dimensions than its core "
                f"dimensions {core} in signature {vectorized.signature!r}"
            )
    loops = [tuple(v.shape[: v.ndim - len(c)]) for v, c in zip(values, core_dims)]

    def one(*elements):
        full = list(args)
        for i, e in zip(mapped, elements):
            full[i] = e
        return fn(*full)

    try:
        if any(None in loop for loop in loops):  # traced with sizes known only at run time: one vmap per loop axis
            if len({len(loop) for loop in loops}) != 1:
                raise ValueError(
                    f"np.vectorize: traced with sizes known only at run time, the mapped arguments need the same "
                    f"number of loop dimensions (no broadcasting), got shapes {[tuple(v.shape) for v in values]}"
                )
            each = one
            for _ in loops[0]:
                each = vmap(each)
            return _with_otypes(vectorized, each(*values))
        loop = np.broadcast_shapes(*loops)
        size = math.prod(loop)
        flat = [
            shape.reshape(shape.broadcast_to(v, loop + v.shape[len(s) :]), (size, *v.shape[len(s) :]))
            for v, s in zip(values, loops)
        ]
        out = vmap(one, axis_size=size)(*flat)
    except BatchedValueError as e:
        name = getattr(vectorized.pyfunc, "__name__", "f")
        raise BatchedValueError(
            f"np.vectorize({name}) of a Tensor maps {name} over the elements with tl.vmap (keeping the gradient), "
            f"so {name} must be written with tensorlib ops; it used an element's value: {e}"
        ) from None
    return _with_otypes(vectorized, tree.map(lambda o: shape.reshape(o, loop + tuple(o.shape[1:])), out))


def _with_otypes(vectorized, out):
    """``out`` with each output cast to its entry of ``otypes`` (NumPy's; they were ignored: ``otypes=[int]`` gave
    floats)."""
    from .ops import math as math_ops

    if not vectorized.otypes:
        return out
    leaves, treedef = tree.flatten(out)
    if len(leaves) != len(vectorized.otypes):
        raise ValueError(
            f"np.vectorize: otypes {vectorized.otypes!r} names {len(vectorized.otypes)} outputs, the function "
            f"returned {len(leaves)}"
        )
    return tree.unflatten(treedef, [math_ops.cast(o, np.dtype(t)) for o, t in zip(leaves, vectorized.otypes)])


def install():
    np.vectorize.__call__ = _vectorize_call
    Tensor.__array_ufunc__ = array_ufunc
    Tensor.__array_function__ = array_function
    Tensor.reshape = _reshape_method
    Tensor.compress = _compress_method
    for name, np_fn in _NDARRAY_METHODS.items():
        setattr(Tensor, name, _ndarray_method(name, np_fn))


install()
