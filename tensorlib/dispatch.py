"""The single dispatch path: every op call, built-in or user-defined, goes through ``apply``.

``apply`` converts and validates the inputs, runs the op's pure shape/dtype
rule, then hands the op to the active mode: the innermost tracing context
adds a graph node, otherwise the backend kernel runs.  Active tapes that
watch an input record the node either way.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from . import dtypes as _dtypes
from .backends import base as _backends
from .grad import registry as _grad_registry
from .tensor import Node, Tensor, Variable, _ids, make

# Mutated in place, never rebound: the hot path reads them as globals.
tapes: list = []        # recording GradientTapes, innermost last
modes: list = []        # tracing contexts, innermost last
observers: list = []    # profilers and numerics checkers
_EMPTY: dict = {}
_scalars: dict = {}      # (type, value, dtype, backend) -> shared constant Tensor
_cast_op = None          # set by tensorlib.ops.math (Cast) to break the import cycle
_rules = _grad_registry.rules
_new = object.__new__
_next_id = _ids.__next__
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def apply(op, args, attrs=_EMPTY):
    """Run ``op`` on ``args`` with ``attrs``; return a Tensor or a tuple of Tensors."""
    for a in args:
        if not isinstance(a, Tensor):
            args = convert_inputs(op, args)
            break
    given = args
    if op.promote is not None and len(args) > 1:
        first = args[0].dtype
        for t in args:
            if t.dtype is not first:
                args = _promote(op, args)
                break
    if op.defaults:
        attrs = op.bind_attrs(attrs) if attrs else op.defaults
        try:
            specs = op.infer(*args, **attrs)
        except (ValueError, TypeError, IndexError) as e:
            raise type(e)(f"{op.name}: {e} ({describe_inputs(op, given)})") from None
    else:
        if attrs:
            op.bind_attrs(attrs)
        attrs = _EMPTY
        try:
            specs = op.infer(*args)
        except (ValueError, TypeError, IndexError) as e:
            raise type(e)(f"{op.name}: {e} ({describe_inputs(op, given)})") from None
    if modes:
        outputs = modes[-1].bind(op, args, attrs, specs)
    else:
        backend = args[0].backend if args else _backends.current()
        for t in args:
            if t.backend is not backend or t._value is None:
                _raise_unrunnable(op, args, t, backend)
        if observers:
            outputs = _run_observed(op, args, attrs, specs, backend)
        else:
            kernel = op.kernels.get(backend.name) or op.resolve_kernel(backend)
            n = len(args)
            if attrs:
                raw = kernel(*[t._value for t in args], **attrs)
            elif n == 2:
                raw = kernel(args[0]._value, args[1]._value)
            elif n == 1:
                raw = kernel(args[0]._value)
            else:
                raw = kernel(*[t._value for t in args])
            if specs.__class__ is tuple:
                outputs = _wrap(raw, specs, backend)
            else:
                dtype = specs.dtype
                if raw.__class__ is not np.ndarray:
                    raw = backend.asarray(raw) if backend.name != "numpy" or not hasattr(raw, "shape") \
                        else np.asarray(raw)
                if raw.dtype is not dtype and raw.dtype != dtype:
                    raw = raw.astype(dtype)
                outputs = _new(Tensor)
                outputs._value = raw
                outputs.shape = raw.shape
                outputs.dtype = dtype
                outputs.backend = backend
                outputs._id = _next_id()
                outputs._node = None
                outputs._index = 0
    if tapes and op.differentiable:
        record(op, args, outputs, attrs)
    return outputs


def _raise_unrunnable(op, args, t, backend):
    if t._value is None:
        raise ValueError(f"{op.name}: a symbolic tensor {t._describe()} from a tl.function trace "
                         "was used outside of it")
    raise ValueError(f"{op.name}: inputs are on different backends ({describe_inputs(op, args)}; "
                     f"backends {', '.join(a.backend.name for a in args)}); "
                     "move them with tl.tensor(x, backend=...)")


def _wrap(raw, specs, backend):
    if isinstance(specs, tuple):
        return tuple(_wrap_one(r, s, backend) for r, s in zip(raw, specs))
    return _wrap_one(raw, specs, backend)


def _wrap_one(raw, spec, backend):
    dtype = spec.dtype
    if not hasattr(raw, "shape") or (type(raw) is not np.ndarray and backend.name == "numpy"):
        raw = backend.asarray(raw)
    if raw.dtype != dtype:
        raw = raw.astype(dtype)
    return make(raw, backend, raw.shape, dtype)


def _run_observed(op, args, attrs, specs, backend):
    kernel = op.kernels.get(backend.name) or op.resolve_kernel(backend)
    start = time.perf_counter()
    raw = kernel(*[t._value for t in args], **attrs)
    backend.synchronize()
    seconds = time.perf_counter() - start
    outputs = _wrap(raw, specs, backend)
    for obs in observers:
        obs.on_op(op, args, outputs, attrs, seconds, kernel, backend)
    return outputs


def record(op, inputs, outputs, attrs):
    """Record the op on every active tape that watches one of its inputs."""
    node = None
    for tape in tapes:
        watched = tape._watched
        hit = False
        has_variable = False
        for t in inputs:
            if t.__class__ is Variable:
                has_variable = True
                if t.trainable and tape._watch_accessed_variables:
                    tape._watch_variable(t)
            if t._id in watched:
                hit = True
        if not hit:
            continue
        if node is None:
            if has_variable:
                ins = tuple(_snapshot(t) if t.__class__ is Variable else t for t in inputs)
            else:
                ins = inputs
            outs = outputs if outputs.__class__ is tuple else (outputs,)
            node = Node(op, ins, outs, attrs, None if op.name in _rules else user_site())
        if has_variable:
            for t in inputs:
                if t.__class__ is Variable:
                    t._readers.add(tape)
        for o in node.outputs:
            if o.dtype.kind == "f":
                watched.add(o._id)
        tape._nodes.append(node)


def _snapshot(var):
    """A Variable's value at read time, with the Variable's identity (for gradient keys)."""
    if modes:
        return modes[-1].snapshot(var)
    if var._value is None:
        return var
    t = make(var._value, var.backend, var.shape, var.dtype)
    t._id = var._id
    return t


def user_site() -> str:
    """``file:line`` of the innermost frame outside the tensorlib package."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
    if f is None:
        return "<unknown>"
    return f"{f.f_code.co_filename}:{f.f_lineno}"


# ---------------------------------------------------------------- conversion

def describe_inputs(op, args) -> str:
    names = op.input_names
    parts = []
    for i, a in enumerate(args):
        name = names[i] if i < len(names) else f"{names[-1] if names else 'input'}[{i}]"
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            parts.append(f"{name}: shape {tuple(a.shape)} {a.dtype}")
        else:
            parts.append(f"{name}: {type(a).__name__} {a!r:.40}")
    return "inputs " + ", ".join(parts) if parts else "no inputs"


def convert_inputs(op, args):
    """Turn arrays, lists and Python scalars into Tensors; scalars are weak."""
    if len(args) == 2 and op.promote is not None and not modes:
        a, b = args
        if b.__class__ in _SCALARS and isinstance(a, Tensor):
            return a, _cached_scalar(b, a)
        if a.__class__ in _SCALARS and isinstance(b, Tensor):
            return _cached_scalar(a, b), b
    return _convert_general(op, args)


_SCALARS = (float, int, bool)


def _cached_scalar(value, like):
    """The weak constant ``value`` next to ``like`` (shared: constants are immutable and never watched)."""
    backend = like.backend
    key = (value.__class__, value, like.dtype, backend.name)
    t = _scalars.get(key)
    if t is None:
        t = make(backend.asarray(value, dtype=_dtypes.weak_scalar_dtype(value, like.dtype)), backend)
        t.__class__ = WeakScalar
        if len(_scalars) < 4096 and value == value:
            _scalars[key] = t
    return t


def _convert_general(op, args):
    backend = None
    strong = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            backend = backend or a.backend
            if _in_group(op, i):
                strong.append(a.dtype)
        elif hasattr(a, "dtype") and hasattr(a, "shape"):
            if _in_group(op, i):
                strong.append(_checked_dtype(op, i, a.dtype))
            backend = backend or _backends.backend_of_array(a)
    strong_dtype = _dtypes.promote_types(*strong) if strong else None
    if backend is None:
        backend = _backends.current()
    out = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            out.append(a)
            continue
        out.append(to_tensor(a, backend, strong_dtype if _in_group(op, i) else None, op, i))
    return tuple(out)


def _in_group(op, i) -> bool:
    return op.promote == "all" or (op.promote is not None and i in op.promote)


def _checked_dtype(op, i, dtype):
    try:
        return _dtypes.as_dtype(dtype)
    except TypeError:
        raise TypeError(f"{op.name}: input {_input_name(op, i)} has unsupported dtype {dtype}") from None


def _input_name(op, i):
    names = op.input_names
    return repr(names[i]) if i < len(names) else f"{i}"


def to_tensor(value, backend, strong_dtype=None, op=None, index=0) -> Tensor:
    """Convert one non-Tensor input; under tracing the tracer decides (constant or capture)."""
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        dtype = _dtypes.weak_scalar_dtype(value, strong_dtype)
        if modes:
            t = modes[-1].convert(value, dtype, backend)
        else:
            t = make(backend.asarray(value, dtype=dtype), backend)
        if t.__class__ is Tensor:
            t.__class__ = WeakScalar
        return t
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        dtype = _checked_dtype(op, index, value.dtype) if op is not None else _dtypes.as_dtype(value.dtype)
        if modes:
            return modes[-1].convert(value, dtype, backend)
        arr = backend.asarray(value)
        if arr.dtype != dtype:
            arr = arr.astype(dtype)
        return make(arr, backend)
    name = op.name if op is not None else "tensor"
    where = f" input {_input_name(op, index)}" if op is not None else ""
    if isinstance(value, (list, tuple)):
        try:
            arr = np.asarray(value)
        except ValueError as e:
            raise ValueError(f"{name}:{where or ' data'} is a ragged nested sequence: {e}") from None
        if arr.dtype.kind in "OUSV":
            raise TypeError(f"{name}:{where or ' data'} is not numeric: {value!r:.60}")
        if arr.dtype.kind == "f":
            arr = arr.astype(strong_dtype if strong_dtype is not None and strong_dtype.kind == "f"
                             else _dtypes.default_float)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(strong_dtype if strong_dtype is not None and strong_dtype.kind in "if"
                             else _dtypes.default_int)
        return to_tensor(arr, backend, None, op, index)
    raise TypeError(f"{name}:{where} expected a tensor, array or number, got "
                    f"{type(value).__name__} {value!r:.60}")


class WeakScalar(Tensor):
    """A constant made from a Python scalar: it adopts its neighbours' dtype in promotion."""
    __slots__ = ()


_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2}


def _promote(op, args):
    group = range(len(args)) if op.promote == "all" else [i for i in op.promote if i < len(args)]
    first = args[group[0]].dtype
    for i in group:
        if args[i].dtype != first:
            break
    else:
        return args
    strong = [args[i].dtype for i in group if args[i].__class__ is not WeakScalar]
    target = _dtypes.promote_types(*(strong or [args[i].dtype for i in group]))
    for i in group:  # a float scalar next to integer tensors makes the result float, as in JAX
        d = args[i].dtype
        if args[i].__class__ is WeakScalar and _KIND_ORDER[d.kind] > _KIND_ORDER[target.kind]:
            target = _dtypes.default_float if d.kind == "f" else d   # a traced float argument is float64
    return tuple(_cast_op(a, dtype=target) if (i in group and a.dtype != target) else a
                 for i, a in enumerate(args))


# ---------------------------------------------------------------- variables

def assign_variable(var: Variable, value, how: str) -> Variable:
    from_caller = not isinstance(value, Tensor)
    if from_caller:
        value = to_tensor(value, var.backend, var.dtype, None)
    if tuple(value.shape) != tuple(var.shape) or value.dtype != var.dtype:
        if value.dtype != var.dtype and value.dtype.kind == var.dtype.kind or (
                value.dtype.kind in "iu" and var.dtype.kind == "f"):
            value = _cast_op(value, dtype=var.dtype)
        if tuple(value.shape) != tuple(var.shape) or value.dtype != var.dtype:
            raise ValueError(f"Variable.{how}: value of shape {tuple(value.shape)} {value.dtype} does not "
                             f"match variable {var.name!r} of shape {var.shape} {var.dtype}")
    if modes:
        return modes[-1].assign(var, value)
    for tape in list(var._readers):
        if tape in tapes:
            raise RuntimeError(
                f"Variable.{how}: variable {var.name!r} (shape {var.shape}, {var.dtype}) was read by a "
                "GradientTape that is still recording; its gradient would mix old and new values. "
                "Assign after tape.gradient(), or inside `with tape.stop_recording():`.")
    if value.backend is not var.backend:
        raise ValueError(f"Variable.{how}: value is on backend {value.backend.name}, "
                         f"variable {var.name!r} on {var.backend.name}")
    # A value converted from the caller's array may alias it: keep a copy, as Variable() does.
    var._value = value._value.copy() if from_caller else value._value
    var._version += 1
    return var
