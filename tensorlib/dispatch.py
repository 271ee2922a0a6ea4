"""The single dispatch path: every op call, built-in or user-defined, goes through ``apply``.

``apply`` converts and validates the inputs, runs the op's pure shape/dtype
rule, then hands the op to the active mode: the innermost tracing context
adds a graph node, otherwise the backend kernel runs.  Active tapes that
watch an input record the node either way.
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import math
import os
import sys
import time

import numpy as np

from . import dtypes as _dtypes
from .backends import base as _backends
from .tensor import Node, Tensor, TensorSpec, Variable, _ids, make, scopes


class State:
    """What is active in one thread (or context): tapes, tracing modes, observers, gradient overrides.

    Every list is innermost last.  Each thread starts with nothing active,
    as in PyTorch and TensorFlow: a tape or a trace opened in one thread
    never sees another thread's ops.
    """

    __slots__ = ("tapes", "modes", "observers", "overrides", "assign_logs")

    def __init__(self, empty=list):
        self.tapes = empty()  # recording GradientTapes
        self.modes = empty()  # tracing contexts
        self.observers = empty()  # profilers and numerics checkers
        self.overrides = empty()  # tl.grad.override scopes
        self.assign_logs = empty()  # see assigns_logged


# A context variable, not threading.local: reading it costs one C call (about 20 ns, against
# 60 ns for a threading.local attribute, measured with timeit on this machine).  Until a thread
# opens something its state is this shared, immutable one (tuples), so reading never allocates.
_IDLE = State(tuple)
_state = contextvars.ContextVar("tensorlib_state", default=_IDLE)
current_state = _state.get


def local_state() -> State:
    """This thread's state, made on first use; the one way to push or pop tapes, modes, observers."""
    st = _state.get()
    if st is _IDLE:
        st = State()
        _state.set(st)
    return st


def __getattr__(name):
    # ``dispatch.tapes`` / ``.modes`` / ``.observers`` name the calling thread's lists.
    if name in ("tapes", "modes", "observers"):
        return getattr(local_state(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Mode(abc.ABC):
    """What op calls go to while the mode is active (``with dispatch.in_mode(mode):``), instead of kernels.

    Tracing (``tl.function``) and ``tl.ops.explain``'s dry run are modes.  Dispatch calls, on the
    innermost active mode of the thread:

    - ``bind(op, inputs, attrs, specs)`` for every op call, once the op's shape rule gave ``specs``
      (a TensorSpec, or a tuple of them for an op with several outputs): it returns the output
      Tensor (or the tuple of them) in place of the kernel's;
    - ``convert(value, dtype, backend)`` for a Python scalar or an array given as an op input, already
      checked and given its ``dtype``: it returns the Tensor that stands for it;
    - ``snapshot(var)`` when a tape opened inside the mode records a read of the Variable ``var``;
    - ``assign(var, value)`` for ``var.assign(value)``, ``value`` a Tensor of ``var``'s shape and dtype.

    and ``needs_value(t)`` on every active mode before a symbolic tensor's value is refused (a mode may
    then raise an exception of its own, as tracing does to make a Python-float argument static).

    ``python_control_flow``: whether ``tl.cond``, ``tl.while_loop`` and ``tl.scan`` run as Python loops and
    branches under the mode, as they do eagerly (``tl.vmap``'s mode), instead of tracing their functions into
    subgraphs of the mode's graph (tracing).  Such a mode gives ``any_element(pred)``: whether a scalar
    predicate of its own, with a value per element, is true for any element; ``knows_values(pred)``:
    whether those values are known (not when traced; a loop then traces its body into a subgraph, asking the
    mode ``lift(t)`` for each tensor it reads from outside, and binds a ``While`` op in the mode); and
    ``gradients_only_where(pred)``, a context manager for a branch or loop body that runs on every element
    though only those where ``pred`` holds keep its result: while it is open the mode's ``guards`` are set,
    and dispatch hands every op's inputs to ``guarded(inputs)`` first, whose result the op and the tapes see.

    >>> import tensorlib as tl
    >>> from tensorlib import dispatch
    >>> from tensorlib.tensor import make_symbolic
    >>> class ShapesOnly(dispatch.Mode):
    ...     '''Runs only shape rules: op calls give symbolic tensors and are listed in ``calls``.'''
    ...     def __init__(self):
    ...         self.calls = []
    ...     def bind(self, op, inputs, attrs, specs):
    ...         self.calls.append(op.name)
    ...         many = specs if isinstance(specs, tuple) else (specs,)
    ...         outs = tuple(make_symbolic(s.shape, s.dtype, tl.backends.current(), None, 0) for s in many)
    ...         return outs if isinstance(specs, tuple) else outs[0]
    ...     def convert(self, value, dtype, backend):
    ...         return make_symbolic(getattr(value, "shape", ()), dtype, backend, None, 0)
    >>> x = tl.ones((1000, 1000))
    >>> with dispatch.in_mode(ShapesOnly()) as mode:
    ...     y = tl.sum(tl.exp(x) * 2.0, axis=0)
    >>> mode.calls, y.shape
    (['Exp', 'Mul', 'Sum'], (1000,))
    """

    python_control_flow = False
    guards: list | tuple = ()  # non-empty: ``guarded(inputs)`` replaces an op's inputs before bind and the tapes

    @abc.abstractmethod
    def bind(self, op, inputs: tuple, attrs: dict, specs):
        """The output Tensor(s) of ``op(*inputs, **attrs)``, whose shape rule gave ``specs``."""

    @abc.abstractmethod
    def convert(self, value, dtype, backend) -> Tensor:
        """The Tensor that stands for the Python scalar or array ``value`` (of ``dtype``) given as an op input."""

    def snapshot(self, var: Variable) -> Tensor:
        """What a tape records for a read of ``var``: by default the Variable itself."""
        return var

    def assign(self, var: Variable, value: Tensor) -> Variable:
        """``var.assign(value)`` inside the mode: by default an error (a mode that builds no graph has
        nowhere to put it, and changing the Variable would leak out of the mode)."""
        return self.update(var, value, "assign")

    def update(self, var: Variable, value: Tensor, how: str) -> Variable:
        """``var.assign_add`` or ``var.assign_sub`` (``how``) inside the mode, ``value`` the new value it computed
        (reading ``var`` as no differentiable read): by default as ``assign`` would (for ``how="assign"`` the
        base error, naming ``how``)."""
        if how != "assign":
            return self.assign(var, value)
        raise ValueError(
            f"Variable.{how}: variable {var.name!r} (shape {var.shape}, {var.dtype}) cannot be assigned "
            f"while a {type(self).__name__} mode is active"
        )

    def needs_value(self, t: Tensor) -> None:
        """Called before a symbolic tensor's value is refused; by default nothing to do."""

    def reads_state(self, owner, name: str) -> None:
        """Called when Python state that decides which ops run (a Module's ``training``) is read inside
        the mode: ``getattr(owner, name)``.  By default nothing to do; tracing keys its graph by it."""

    def observe(self, op, outputs) -> None:
        """Called after ``bind`` while observers (profilers, numerics checks) are active; by default nothing to
        do.  Tracing gives the observers started inside the traced function their say (see ``on_trace``)."""


def state_read(owner, name: str) -> None:
    """Tell every active mode that ``getattr(owner, name)``, Python state that picks ops, was read."""
    for mode in current_state().modes:
        mode.reads_state(owner, name)


@contextlib.contextmanager
def in_mode(mode: Mode):
    """Make ``mode`` the innermost mode of this thread for the block, then restore what was active.

    The tapes recording outside pause for the block (they must not record the mode's symbolic
    calls); on the way out, normally or by an exception, the mode leaves and the tapes resume.
    Modes nest: an inner one gets the op calls until its block ends.

    >>> import tensorlib as tl
    >>> from tensorlib import dispatch
    >>> class Refuse(dispatch.Mode):
    ...     def bind(self, op, inputs, attrs, specs):
    ...         raise RuntimeError(f"no {op.name} here")
    ...     def convert(self, value, dtype, backend):
    ...         raise RuntimeError("no constants here")
    >>> x = tl.tensor([1.0, 2.0])
    >>> with tl.GradientTape() as tape:
    ...     tape.watch(x)
    ...     try:
    ...         with dispatch.in_mode(Refuse()):
    ...             tl.exp(x)
    ...     except RuntimeError as e:
    ...         print(e)
    ...     y = tl.sum(tl.exp(x))  # eager again, and recorded
    no Exp here
    >>> dispatch.current_state().modes, tape.gradient(y, x).shape
    ([], (2,))
    """
    if not isinstance(mode, Mode):
        raise TypeError(f"dispatch.in_mode: expected a dispatch.Mode, got {type(mode).__name__} {mode!r:.60}")
    modes = local_state().modes
    with tapes_paused():
        modes.append(mode)
        try:
            yield mode
        finally:
            for i in range(len(modes) - 1, -1, -1):  # the innermost entry: one mode may be entered twice
                if modes[i] is mode:
                    del modes[i]
                    break


@contextlib.contextmanager
def tapes_paused():
    """Pause every tape recording in this thread for the block; they resume on the way out, also by an exception.

    >>> import tensorlib as tl
    >>> from tensorlib import dispatch
    >>> x = tl.tensor(3.0)
    >>> with tl.GradientTape() as tape:
    ...     tape.watch(x)
    ...     with dispatch.tapes_paused():
    ...         hidden = x * x  # not recorded: no gradient flows through it
    ...     y = x * hidden
    >>> float(tape.gradient(y, x))
    9.0
    """
    st = local_state()
    tapes = st.tapes[:]
    st.tapes.clear()
    try:
        yield
    finally:
        st.tapes[:] = tapes


_rebinds: contextvars.ContextVar = contextvars.ContextVar("tensorlib_rebinds", default=())


@contextlib.contextmanager
def rebinding(values: dict):
    """In the block, a symbolic tensor whose ``_id`` is a key of ``values`` stands for that value.

    A graph replayed op by op (a differentiated ``tl.cond`` branch or ``tl.scan`` body, a traced
    function called under a tape) makes new values for its tensors, but a custom gradient's
    ``grad_fn`` closed over the old, symbolic ones while tracing: it reads the new ones through this.
    Only the paths that would otherwise raise look the tensors up, so ops pay nothing for it.

    >>> import tensorlib as tl
    >>> from tensorlib import dispatch
    >>> old = tl.TensorSpec((2,), "float32")
    >>> old = tl.function(lambda x: x).get_graph(old).inputs[0]  # a symbolic tensor of a trace
    >>> with dispatch.rebinding({old._id: tl.tensor([1.0, 2.0])}):
    ...     (old * 2.0).numpy().tolist()
    [2.0, 4.0]
    """
    token = _rebinds.set(_rebinds.get() + (values,))
    try:
        yield
    finally:
        _rebinds.reset(token)


def rebound(t):
    """What stands for the symbolic tensor ``t`` in the enclosing :func:`rebinding` blocks, else None.

    Followed through them: a replay of a replay (a gradient of a graph that was itself replayed to be
    differentiated) maps the trace's tensor to the first replay's, and that one to the second's."""
    found, chain = None, _rebinds.get()
    for _ in range(len(chain)):
        for values in reversed(chain):
            value = values.get(t._id)
            if value is not None and value is not t:
                break
        else:
            return found
        found = t = value
        if t._value is not None:
            return found
    return found


_EMPTY: dict = {}
_scalars: dict = {}  # (type, value, dtype, backend) -> shared constant Tensor
_cast_op = None  # set by tensorlib.ops.math (Cast) to break the import cycle
_stack_op = None  # set by tensorlib.ops.shape (Pack), likewise
_check_int_range_op = None  # set by tensorlib.ops.creation (CheckIntRange), likewise
_new = object.__new__
_next_id = _ids.__next__
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def apply(op, args, attrs=_EMPTY):
    """Run ``op`` on ``args`` with ``attrs``; return a Tensor or a tuple of Tensors."""
    st = current_state()
    for a in args:
        if not isinstance(a, Tensor):
            args = convert_inputs(op, args, st)
            break
    given = args
    if op.promote is not None and len(args) > 1:
        first = args[0].dtype
        for t in args:
            if t.dtype is not first:
                args = _promote(op, args)
                break
    if op.float_valued and args[0].dtype.kind not in "fc":
        args = _in_float64(op, args)
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
    inputs = args
    if st.modes:
        mode = st.modes[-1]
        if mode.guards:
            args = inputs = mode.guarded(args)
        if st.observers:
            outputs = _bind_observed(mode, op, args, attrs, specs, st.observers)
        else:
            outputs = mode.bind(op, args, attrs, specs)
    elif st.observers and _stands_in(st.observers):
        inputs, args, outputs = _stood_in(op, args, given, attrs, specs, st)
    else:
        backend = args[0].backend if args else _backends.current()
        for t in args:
            if t.backend is not backend or t._value is None:
                args = inputs = _runnable(op, args)
                backend = args[0].backend
                break
        if st.tapes and op.differentiable:
            args = _read_variables(args)
        kernel = op.kernels.get(backend.name) or op.resolve_kernel(backend)
        try:
            if st.observers:
                outputs = _run_observed(op, args, attrs, specs, backend, kernel, st.observers)
            else:
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
                    outputs = _wrap(raw, specs, backend, op, kernel)
                else:
                    dtype = specs.dtype
                    if raw.__class__ is not np.ndarray or raw.dtype is not dtype and raw.dtype != dtype:
                        raw = fit_result(raw, specs, backend, op, kernel)
                    shape = specs.shape
                    if raw.shape != shape:
                        shape = _filled_shape(raw, specs, op, kernel)
                    outputs = _new(Tensor)
                    outputs._value = raw
                    outputs.shape = shape
                    outputs.dtype = dtype
                    outputs.backend = backend
                    outputs._id = _next_id()
                    outputs._node = None
                    outputs._index = 0
        except Exception as e:
            error = _kernel_error(op, kernel, given, e)
            if error is e:
                raise
            raise error from e
    if st.tapes and op.differentiable:
        record(op, inputs, outputs, attrs, args)
    return outputs


def _read_variables(args) -> tuple:
    """``args`` with each Variable replaced by its value, read once, for the kernel and the tapes alike: read
    again after the kernel, the value another thread assigned meanwhile was recorded (a gradient computed with
    values the op never saw)."""
    for t in args:
        cls = t.__class__
        if cls is Variable or cls is not Tensor and isinstance(t, Variable):
            return tuple(_snapshot(a) if isinstance(a, Variable) else a for a in args)
    return args


def _in_float64(op, args) -> tuple:
    """NumPy's rule: float-valued functions of integers and bools compute in float64.  The cast comes first
    (NumPy's ufuncs compute bools in float16: ``np.hypot(True, True)`` is 1.414, not 1.4142135623730951), to the
    promoted inputs of a function of several, else to the first."""
    cast = op.promote if op.promote is not None and len(args) > 1 else (0,)
    return tuple(_cast_op(a, dtype=_dtypes.float64) if i in cast else a for i, a in enumerate(args))


class KernelResultError(RuntimeError):
    """A kernel returned something other than what its op's shape/dtype rule promised."""


def _kernel_error(op, kernel, given, error):
    """The one error path of kernels: the same exception type, naming the op and the caller's inputs."""
    if (
        isinstance(error, KernelResultError)
        or getattr(error, "_raised_by_observer", False)
        or str(error).startswith(f"{op.name}:")
    ):
        return error  # already names the op (a kernel that validates its own inputs)
    message = f"{op.name}: {error} ({describe_inputs(op, given)})"
    try:
        return type(error)(message)
    except Exception:  # an exception type that needs other constructor arguments
        return RuntimeError(message)


def _kernel_name(op, kernel) -> str:
    fn = getattr(kernel, "func", kernel)
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


def _bad_result(op, kernel, raw, spec) -> str:
    got = "None" if raw is None else f"shape {tuple(raw.shape)} {raw.dtype}"
    who = f"kernel {_kernel_name(op, kernel)}" if kernel is not None else "its kernel"
    return f"{op.name if op is not None else 'tensorlib'}: {who} returned {got}, but the op's shape rule gives shape {tuple(spec.shape)} {spec.dtype}"


def _filled_shape(raw, spec, op, kernel) -> tuple:
    """The result's shape where it only fills the rule's unknown (None) sizes, as for the
    data-dependent length of ``where(condition)``; any other difference is the kernel's error."""
    shape = tuple(raw.shape)
    if len(shape) != len(spec.shape) or any(r is not None and r != d for d, r in zip(shape, spec.shape)):
        raise KernelResultError(_bad_result(op, kernel, raw, spec))
    return shape


def fit_result(raw, spec, backend, op=None, kernel=None):
    """A kernel's result as ``backend``'s array of the dtype that ``op``'s shape rule declared (``spec``).

    The one fix-up of kernel results, eagerly, in the executor and where passes fold constants: a
    scalar or another array type becomes the backend's array, and the dtype is cast within its kind
    only (float64 to float32, an integer to another); a result of another kind (a float from an
    integer op) or no array at all is the kernel's error, a ``KernelResultError`` naming the op and
    the kernel.  Shapes are the caller's to check.

    >>> import numpy as np
    >>> import tensorlib as tl
    >>> from tensorlib.dispatch import fit_result
    >>> numpy, sqrt = tl.backends.get("numpy"), tl.ops.get("Sqrt")
    >>> fit_result(np.float64(1.5), tl.TensorSpec((), "float32"), numpy, sqrt)
    array(1.5, dtype=float32)
    >>> fit_result(np.ones(2), tl.TensorSpec((2,), "int32"), numpy, sqrt)
    Traceback (most recent call last):
    ...
    tensorlib.dispatch.KernelResultError: Sqrt: its kernel returned shape (2,) float64, but the op's shape rule gives shape (2,) int32
    """
    # NumPy: a NumPy scalar or an ndarray subclass becomes a plain ndarray, as kernels' results do.
    if raw.__class__ is not np.ndarray and (backend.name == "numpy" or not backend.is_array(raw)):
        if raw is None or not hasattr(raw, "shape") and not isinstance(raw, (int, float, bool, complex)):
            raise KernelResultError(_bad_result(op, kernel, None, spec))
        raw = backend.asarray(raw)
    got, want = backend.dtype_of(raw), spec.dtype
    if got == want:
        return raw
    if got.kind != want.kind and not (got.kind in "iu" and want.kind in "iu"):
        raise KernelResultError(_bad_result(op, kernel, raw, spec))
    return backend.fit(raw, want)


def _runnable(op, args) -> tuple:
    """``args`` with each symbolic tensor replaced by what stands for it in a replay (see
    :func:`rebinding`); else the error naming the tensor that cannot run."""
    args = tuple(t if t._value is not None or rebound(t) is None else rebound(t) for t in args)
    backend = args[0].backend
    for t in args:
        if t.backend is not backend or t._value is None:
            _raise_unrunnable(op, args, t, backend)
    return args


def _raise_unrunnable(op, args, t, backend):
    if t._value is None:
        raise ValueError(
            f"{op.name}: a symbolic tensor {t._describe()} from a tl.function trace was used outside of it"
        )
    raise ValueError(
        f"{op.name}: inputs are on different backends ({describe_inputs(op, args)}; "
        f"backends {', '.join(a.backend.name for a in args)}); "
        "move them with tl.tensor(x, backend=...)"
    )


def _wrap(raw, specs, backend, op, kernel):
    if isinstance(specs, tuple):
        if raw is None or len(raw) != len(specs):
            got = "None" if raw is None else f"{len(raw)} results"
            raise KernelResultError(
                f"{op.name}: kernel {_kernel_name(op, kernel)} returned {got}, "
                f"but the op's shape rule gives {len(specs)} outputs"
            )
        return tuple(_wrap_one(r, s, backend, op, kernel) for r, s in zip(raw, specs))
    return _wrap_one(raw, specs, backend, op, kernel)


def _wrap_one(raw, spec, backend, op, kernel):
    if raw.__class__ is not np.ndarray or raw.dtype != spec.dtype:
        raw = fit_result(raw, spec, backend, op, kernel)
    if tuple(raw.shape) != tuple(spec.shape):
        _filled_shape(raw, spec, op, kernel)
    return make(raw, backend, tuple(raw.shape), spec.dtype)


DEFERRED = object()  # an observer's ``replayed`` answer: run the kernel when a result's value is first read


class _Deferred(Tensor):
    """A result whose kernel runs when its value is first read, if ever: in tl.remat's recomputation, an op whose
    results only ops that the policy kept read (JAX's dead-code elimination skips it), though a gradient rule may
    still read them (``tanh``'s rule reads its output, ``matmul``'s its inputs)."""

    __slots__ = ("_run", "_raw")

    @property
    def _value(self):
        if self._run is not None:
            self._run()
        return self._raw

    @_value.setter
    def _value(self, raw):
        self._raw, self._run = raw, None


def _deferred(op, args, attrs, specs, backend, kernel):
    """``op``'s results on ``args``, made now, computed when one is first read (None: their shapes are known only
    from the kernel's result)."""
    many = specs if specs.__class__ is tuple else (specs,)
    if any(d is None for s in many for d in s.shape):
        return None
    outs = []
    for s in many:
        t = _new(_Deferred)
        t._raw, t.shape, t.dtype, t.backend = None, tuple(s.shape), s.dtype, backend
        t._id, t._node, t._index = _next_id(), None, 0
        outs.append(t)

    def run():
        # Profilers and numerics checks active now hear of the kernel; tl.remat's observers, counting ops, do not.
        observers = [
            obs
            for obs in current_state().observers
            if getattr(obs, "replayed", None) is None and getattr(obs, "replayed_traced", None) is None
        ]
        try:
            if observers:
                got = _run_observed(op, args, attrs, specs, backend, kernel, observers)
            else:
                got = _wrap(kernel(*[t._value for t in args], **attrs), specs, backend, op, kernel)
        except Exception as e:
            error = _kernel_error(op, kernel, args, e)
            if error is e:
                raise
            raise error from e
        for o, g in zip(outs, got if got.__class__ is tuple else (got,)):
            o._raw, o._run = g._value, None

    for t in outs:
        t._run = run
    return tuple(outs) if specs.__class__ is tuple else outs[0]


def _bind_observed(mode, op, args, attrs, specs, observers):
    """``mode.bind`` while observers are active.  An observer with ``replayed_traced`` (tl.remat's recomputation
    under tl.function) may stand in for the node, giving the value its policy kept; those observers hear of every
    op bound (``traced``), to count them in order, as ``on_op`` does eagerly."""
    counting = [obs for obs in observers if getattr(obs, "replayed_traced", None) is not None]
    for obs in counting:
        outputs = obs.replayed_traced(op, args, attrs, specs)
        if outputs is not None:
            for other in counting:
                if other is not obs:
                    other.traced(op, args, outputs, attrs)
            return outputs
    outputs = mode.bind(op, args, attrs, specs)
    mode.observe(op, outputs)
    for obs in counting:
        obs.traced(op, args, outputs, attrs)
    return outputs


def _stands_in(observers) -> bool:
    """Whether an observer may stand in for kernels (tl.remat's recomputation): it is asked before the inputs'
    values are read (a deferred result is then read only by a kernel that runs)."""
    return any(getattr(obs, "replaying", False) for obs in observers)


def _stood_in(op, args, given, attrs, specs, st):
    """``apply``'s eager path while an observer may stand in for the kernel: ``(inputs, args, outputs)``, as there."""
    inputs = args
    backend = args[0].backend if args else _backends.current()
    if st.tapes and op.differentiable:
        args = _read_variables(args)
    observers = st.observers
    for obs in observers:
        # An observer may stand in for the kernel (tl.remat's recomputation, giving the results its policy kept,
        # or results computed when first read): profilers and numerics checks then hear of no op, as none ran;
        # other such observers (a tl.remat inside the one recomputing) hear of it, to count the ops in the same
        # order as when the kernels ran.
        replayed = getattr(obs, "replayed", None)
        if replayed is not None:
            outputs = replayed(op, args, attrs, specs)
            if outputs is DEFERRED:
                kernel = op.kernels.get(backend.name) or op.resolve_kernel(backend)
                outputs = _deferred(op, args, attrs, specs, backend, kernel)
            if outputs is not None:
                for other in observers:
                    if other is not obs and getattr(other, "replayed", None) is not None:
                        other.on_op(op, args, outputs, attrs, 0.0, None, backend)
                return inputs, args, outputs
    for t in args:
        if t.backend is not backend or t._value is None:
            args = inputs = _runnable(op, args)
            backend = args[0].backend
            if st.tapes and op.differentiable:
                args = _read_variables(args)
            break
    kernel = op.kernels.get(backend.name) or op.resolve_kernel(backend)
    try:
        return inputs, args, _run_observed(op, args, attrs, specs, backend, kernel, observers)
    except Exception as e:
        error = _kernel_error(op, kernel, given, e)
        if error is e:
            raise
        raise error from e


def _run_observed(op, args, attrs, specs, backend, kernel, observers):
    start = time.perf_counter()
    raw = kernel(*[t._value for t in args], **attrs)
    backend.synchronize()
    seconds = time.perf_counter() - start
    outputs = _wrap(raw, specs, backend, op, kernel)
    try:
        for obs in observers:
            obs.on_op(op, args, outputs, attrs, seconds, kernel, backend)
    except Exception as e:
        e._raised_by_observer = True  # a profiler's or check_numerics' own error: no kernel error to rename
        raise
    return outputs


def record(op, inputs, outputs, attrs, read=None):
    """Record the op on every active tape that watches one of its inputs; ``read``: the inputs as the kernel
    read them (each Variable's value, see :func:`_read_variables`), by default ``inputs``."""
    node = None
    for tape in current_state().tapes:
        watched = tape._watched
        hit = False
        has_variable = False
        for t in inputs:
            # A user's subclass of Variable is one too (isinstance only off the plain-Tensor fast path).
            cls = t.__class__
            if cls is Variable or cls is not Tensor and isinstance(t, Variable):
                has_variable = True
                if t.trainable and tape._watch_accessed_variables:
                    tape._watch_variable(t)
            if t._id in watched:
                hit = True
        if not hit:
            continue
        if node is None:
            if has_variable:
                ins = tuple(_snapshot(t) if isinstance(t, Variable) else t for t in (inputs if read is None else read))
            else:
                ins = inputs
            outs = outputs if outputs.__class__ is tuple else (outputs,)
            node = Node(op, ins, outs, attrs, None if op.has_gradient else user_site(), "forward", scopes.get())
        if has_variable:
            for t in inputs:
                if isinstance(t, Variable):
                    t._readers.add(tape)
        for o in node.outputs:
            if o.dtype.kind in "fc":
                watched.add(o._id)
        tape._nodes.append(node)


def _snapshot(var):
    """A Variable's value at read time, with the Variable's identity (for gradient keys)."""
    modes = current_state().modes
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


def convert_inputs(op, args, st=None):
    """Turn arrays, lists and Python scalars into Tensors; scalars are weak."""
    if len(args) == 2 and op.promote is not None and not (st or current_state()).modes:
        a, b = args
        if b.__class__ in _SCALARS and isinstance(a, Tensor):
            return a, _cached_scalar(b, a, op, 1)
        if a.__class__ in _SCALARS and isinstance(b, Tensor):
            return _cached_scalar(a, b, op, 0), b
    return _convert_general(op, args)


_SCALARS = (float, int, bool, complex)


def _cached_scalar(value, like, op, index):
    """The weak constant ``value`` next to ``like`` (shared: constants are immutable and never watched)."""
    backend = like.backend
    key = (value.__class__, value, like.dtype, backend.name)
    t = _scalars.get(key)
    if t is None:
        dtype = _dtypes.weak_scalar_dtype(value, like.dtype)
        check_int_range(value, dtype, _where(op, index))
        t = make(backend.asarray(value, dtype=dtype), backend)
        t.__class__ = WeakScalar
        # NaN never equals its key; 0.0 and -0.0 share one (as 0j, -0j and complex(-0.0, -0.0) do), so no
        # float or complex zero is cached.
        if len(_scalars) < 4096 and value == value and (value or value.__class__ not in (float, complex)):
            _scalars[key] = t
    return t


def check_int_range(value, dtype, where):
    """A Python int that the integer ``dtype`` cannot hold is an OverflowError, never a wrapped value."""
    if value.__class__ is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{where} {value} does not fit in {dtype} (range {info.min}..{info.max})")


def check_int_array_range(arr: np.ndarray, dtype, where) -> None:
    """An integer array holding a value that the integer ``dtype`` cannot hold is an OverflowError, as
    :func:`check_int_range` for one Python int: a list next to an int32 tensor is read at its dtype, never
    wrapped (``int32 + [2**40]`` gave ``[1]``)."""
    if dtype.kind not in "iu" or not arr.size or np.can_cast(arr.dtype, dtype):
        return
    if arr.dtype.kind == "f":  # a NaN fits (as the cast reads it); it must not hide the other values' range
        arr = arr[~np.isnan(arr)]
        if not arr.size:
            return
    check_int_bounds(arr.min(), arr.max(), dtype, where)


def check_int_bounds(low, high, dtype, where) -> None:
    """The OverflowError of :func:`check_int_array_range` for values from ``low`` to ``high`` (also run by the
    graph op ``CheckIntRange``, so that a traced conversion says what an eager one says).  Floats are truncated
    toward zero, as the cast does, and compared as Python numbers: exactly (NumPy compares a float64 with the
    bound rounded to float64, and 2.0**63 passed int64's 2**63 - 1)."""
    info = np.iinfo(dtype)
    for bad in (low, high):
        value = bad.item() if isinstance(bad, np.generic) else bad
        if isinstance(value, float):
            fits = math.isnan(value) or (math.isfinite(value) and info.min <= math.trunc(value) <= info.max)
        else:
            fits = info.min <= value <= info.max
        if not fits:
            raise OverflowError(f"{where} holds {bad}, which does not fit in {dtype} (range {info.min}..{info.max})")


def _where(op, index):
    return f"{op.name}: input {_input_name(op, index)}" if op is not None else "tensorlib: value"


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
        return _dtypes.of_array(dtype)
    except TypeError:
        raise TypeError(f"{op.name}: input {_input_name(op, i)} has unsupported dtype {dtype}") from None


def _input_name(op, i):
    names = op.input_names
    return repr(names[i]) if i < len(names) else f"{i}"


def as_tensor(value, op=None, index=0) -> Tensor:
    """The one conversion of a public function's input: a Tensor as is, anything else as ``apply`` converts it.

    An array is read on its own backend (a NumPy array on the current one); under tracing the
    mode decides, so a closed-over array is captured by reference as for any op input, never
    copied into the graph.  ``tl.tensor`` is the user's explicit copy; ops never call it.
    """
    if isinstance(value, Tensor):
        return value
    backend = hasattr(value, "dtype") and _backends.backend_of_array(value) or _backends.current()
    return to_tensor(value, backend, None, op, index)


def as_tensors(*values, floor=None) -> tuple:
    """Several inputs of one public function converted together, as ``apply`` converts an op's promoted
    inputs: Tensors and arrays as :func:`as_tensor` converts them, lists and Python numbers read at the
    dtype the Tensors and arrays (and ``floor``, a function's float64 result) promote to (TensorFlow's
    ``convert_to_tensor`` with a dtype hint), so ``isin(float64_array, [0.1])`` looks for the float64
    ``0.1``, not a float32 one widened; ``None`` stays ``None`` (an argument not given).

    >>> import numpy as np
    >>> x, v = as_tensors(np.array([0.1]), [0.1])
    >>> str(v.dtype), bool(x.numpy()[0] == v.numpy()[0])
    ('float64', True)
    """

    for v in values:  # all Tensors, the common case, kept cheap: matmul and einsum call this
        if v.__class__ is not Tensor:
            break
    else:
        return values

    def is_array(v):
        return isinstance(v, Tensor) or hasattr(v, "dtype") and hasattr(v, "shape")

    arrays = [as_tensor(v) for v in values if is_array(v)]
    dtypes = [t.dtype for t in arrays] + ([floor] if floor is not None else [])
    if not dtypes:
        return tuple(None if v is None else as_tensor(v) for v in values)
    strong_dtype = _dtypes.promote_types(*dtypes)
    backend = arrays[0].backend if arrays else _backends.current()
    converted = iter(arrays)
    return tuple(
        None if v is None else next(converted) if is_array(v) else to_tensor(v, backend, strong_dtype) for v in values
    )


def to_tensor(value, backend, strong_dtype=None, op=None, index=0) -> Tensor:
    """Convert one non-Tensor input; under tracing the tracer decides (constant or capture)."""
    modes = current_state().modes
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        dtype = _dtypes.weak_scalar_dtype(value, strong_dtype)
        check_int_range(value, dtype, _where(op, index))
        if modes:
            t = modes[-1].convert(value, dtype, backend)
        else:
            t = make(backend.asarray(value, dtype=dtype), backend)
        if t.__class__ is Tensor:
            t.__class__ = WeakScalar
        return t
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        dtype = _checked_dtype(op, index, value.dtype) if op is not None else _dtypes.of_array(value.dtype)
        if modes:
            return modes[-1].convert(value, dtype, backend)
        arr = backend.asarray(value)
        # The caller's array becomes a value tensorlib owns: a later write to it changes no result.
        if backend.dtype_of(arr) != dtype:  # a dtype tensorlib holds in a wider one of its kind (int8 -> int32)
            arr = fit_result(arr, TensorSpec(arr.shape, dtype), backend, op)
        elif _may_alias(arr, value):
            arr = backend.copy(arr)
        return make(arr, backend, None, dtype)
    name = op.name if op is not None else "tensor"
    where = f" input {_input_name(op, index)}" if op is not None else ""
    if isinstance(value, (list, tuple)):
        if _holds_tensor(value):
            # Stacked with the Pack op, so the gradient reaches every tensor in the list.
            return _stack_op(
                [to_tensor(v, backend, strong_dtype, op, index) if isinstance(v, (list, tuple)) else v for v in value]
            )
        try:
            arr = np.asarray(value)
        except ValueError as e:
            raise ValueError(f"{name}:{where or ' data'} is a ragged nested sequence: {e}") from None
        if (
            arr.dtype.kind == "u"
            and arr.dtype.itemsize == 8
            or arr.dtype.kind == "O"
            and any(v.__class__ is int for v in arr.ravel())
            # NumPy makes float64 of ints mixing signs past int64 ([-1, 2**63]): never a silent float.
            or arr.dtype.kind == "f"
            and arr.size
            and np.abs(arr).max() >= 2.0**63
            and _holds_big_int(value)
        ):
            raise OverflowError(f"{name}:{where or ' data'} holds an integer outside int64: {value!r:.60}")
        if arr.dtype.kind in "OUSV":
            raise TypeError(f"{name}:{where or ' data'} is not numeric: {value!r:.60}")
        if arr.dtype.kind == "f":
            # next to complex128 a float list is float64 (its real dtype), never a float32 widened
            arr = arr.astype(
                _dtypes.real_dtype(strong_dtype)
                if strong_dtype is not None and strong_dtype.kind in "fc"
                else _dtypes.default_float
            )
        elif arr.dtype.kind in "iu":
            int_dtype = strong_dtype if strong_dtype is not None and strong_dtype.kind in "if" else _dtypes.default_int
            check_int_array_range(arr, int_dtype, f"{name}:{where or ' data'}")
            arr = arr.astype(int_dtype)
        elif arr.dtype.kind == "c":
            # next to float64 the complex list is complex128, never a complex64 widened (as floats, above)
            arr = arr.astype(
                _dtypes.complex_dtype(strong_dtype)
                if strong_dtype is not None and strong_dtype.kind in "fc"
                else _dtypes.default_complex
            )
        # A new array made here from literals, not a caller's: under tracing it may become a constant.
        return make(backend.asarray(arr.astype(_dtypes.of_array(arr.dtype), copy=False)), backend)
    raise TypeError(f"{name}:{where} expected a tensor, array or number, got {type(value).__name__} {value!r:.60}")


def _holds_big_int(value) -> bool:
    """Whether a nested list holds a Python int outside int64."""
    return any(
        _holds_big_int(v) if isinstance(v, (list, tuple)) else v.__class__ is int and not -(2**63) <= v < 2**63
        for v in value
    )


def _holds_tensor(value) -> bool:
    return any(isinstance(v, Tensor) or isinstance(v, (list, tuple)) and _holds_tensor(v) for v in value)


def _may_alias(arr, value) -> bool:
    return arr is value or getattr(arr, "base", None) is not None or isinstance(value, np.ndarray)


class WeakScalar(Tensor):
    """A constant made from a Python scalar: it adopts its neighbours' dtype in promotion."""

    __slots__ = ()


_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _promote(op, args):
    group = range(len(args)) if op.promote == "all" else [i for i in op.promote if i < len(args)]
    first = args[group[0]].dtype
    for i in group:
        if args[i].dtype != first:
            break
    else:
        return args
    strong = [args[i].dtype for i in group if args[i].__class__ is not WeakScalar]
    if strong:
        target = _dtypes.promote_types(*strong)
    else:  # Python numbers alone: the highest kind wins, as in JAX (tl.maximum(3, 0.5) is float32, not float64)
        target = max((args[i].dtype for i in group), key=lambda d: (_KIND_ORDER[d.kind], d.itemsize))
    for i in group:  # a float scalar next to integer tensors makes the result float64, as in NumPy 2
        d = args[i].dtype
        if args[i].__class__ is WeakScalar and _KIND_ORDER[d.kind] > _KIND_ORDER[target.kind]:
            target = _dtypes.weak_kind_dtype(d.kind, target)
    return tuple(_cast_op(a, dtype=target) if (i in group and a.dtype != target) else a for i, a in enumerate(args))


# ---------------------------------------------------------------- variables


def read_by(var: Variable, tapes) -> bool:
    """Whether one of ``tapes`` recorded a read of ``var``: membership tests only, since other threads' tapes
    join ``var._readers`` at any time (listing the set then raised 'Set changed size during iteration')."""
    readers = var._readers
    return any(tape in readers for tape in tapes)


def check_assignable(var: Variable, backend=None, how: str = "assign") -> None:
    """The one check before a Variable's value changes, eagerly, in a trace or in a compiled graph: no
    GradientTape that is still recording has read it, and the new value (on ``backend``) is on its backend."""
    if read_by(var, current_state().tapes):
        raise RuntimeError(
            f"Variable.{how}: variable {var.name!r} (shape {var.shape}, {var.dtype}) was read by a "
            "GradientTape that is still recording; its gradient would mix old and new values. "
            "Assign after tape.gradient(), or inside `with tape.stop_recording():`."
        )
    if backend is not None and backend is not var.backend:
        raise ValueError(
            f"Variable.{how}: value is on backend {backend.name}, variable {var.name!r} on {var.backend.name}"
        )


def _check_int_narrowing(var: Variable, value: Tensor, raw, how: str) -> Tensor:
    """An integer value of a wider dtype than ``var``'s is assigned only where every element fits: the cast
    would wrap it (2**40 into int32 became 0).  The caller's array or an eager tensor is checked now; a traced
    tensor when the graph runs (returned through a ``CheckIntRange`` node, raising the eager error)."""
    if not (value.dtype.kind in "iu" and var.dtype.kind in "iu") or np.can_cast(value.dtype, var.dtype):
        return value
    where = f"Variable.{how}: value of shape {tuple(value.shape)} {value.dtype} for variable {var.name!r} {var.dtype}"
    if value is not raw:  # the caller's array (a list was read at the variable's dtype already)
        concrete = np.asarray(raw)
    elif value._value is not None:
        concrete = value.backend.to_numpy(value._value)
    else:
        return _check_int_range_op(value, var.dtype, where)
    check_int_array_range(concrete, var.dtype, where)
    return value


def assign_variable(var: Variable, value, how: str) -> Variable:
    from_caller = not isinstance(value, Tensor)
    raw = value
    if from_caller:
        try:
            value = to_tensor(value, var.backend, var.dtype, None)
        except OverflowError as e:
            raise OverflowError(f"Variable.{how} of variable {var.name!r} {var.dtype}: {e}") from None
    if tuple(value.shape) != tuple(var.shape) or value.dtype != var.dtype:
        value = _check_int_narrowing(var, value, raw, how)
        if (
            value.dtype != var.dtype
            and value.dtype.kind == var.dtype.kind
            or (value.dtype.kind in "iu" and var.dtype.kind == "f")
        ):
            value = _cast_op(value, dtype=var.dtype)
        if tuple(value.shape) != tuple(var.shape) or value.dtype != var.dtype:
            raise ValueError(
                f"Variable.{how}: value of shape {tuple(value.shape)} {value.dtype} does not "
                f"match variable {var.name!r} of shape {var.shape} {var.dtype}"
            )
    st = current_state()
    if st.modes:
        mode = st.modes[-1]
        return mode.assign(var, value) if how == "assign" else mode.update(var, value, how)
    check_assignable(var, value.backend, how)
    log_assign(var, st)
    # A value converted from the caller's array may alias it: keep a copy, as Variable() does.
    put_value(var, var.backend.copy(value._value) if from_caller else value._value, "eager")
    return var


def log_assign(var: Variable, st=None) -> None:
    """Tell this thread's :func:`assigns_logged` blocks that ``var`` is about to be assigned (eagerly, or by a
    graph's assign step)."""
    for log in (st or current_state()).assign_logs:
        log.setdefault(var._id, (var, var._value))


@contextlib.contextmanager
def assigns_logged():
    """A dict that, inside the block, gets ``{var._id: (var, its raw value before its first assign)}`` for
    every Variable this thread assigns, eagerly or in a graph run (tl.remat's recomputation puts back what its
    first run changed; tl.jacfwd refuses an f that assigns)."""
    log: dict = {}
    logs = local_state().assign_logs
    logs.append(log)
    try:
        yield log
    finally:
        del logs[next(i for i, other in enumerate(logs) if other is log)]  # by identity: empty logs are equal


def hold_variables(variables) -> list:
    """Acquire the locks of the Variables among ``variables`` (in ``_id`` order, so two threads holding sets
    that overlap cannot deadlock) and return them, for :func:`release_variables`.  Held across a read-modify-write
    (``assign_add``, a graph run that assigns them): another thread's update waits instead of being lost.
    Reentrant: a thread may update a Variable it holds (an observer's assign)."""
    held = sorted({v._id: v._lock for v in variables if isinstance(v, Variable)}.items())
    taken = []
    try:
        for _, lock in held:
            lock.acquire()
            taken.append(lock)
    except BaseException:
        release_variables(taken)
        raise
    return taken


def release_variables(locks) -> None:
    for lock in reversed(locks):
        lock.release()


def put_value(var: Variable, raw, mode: str | None = None) -> None:
    """Give ``var`` the raw backend value ``raw`` (checked by the caller).  ``mode`` (``"eager"``, or ``"graph"`` for
    a graph's assign step) makes it an assign the observers see first, as they see ops: each one's
    ``on_assign(var, raw, mode)`` where it has one (a profile records it; ``enable_check_numerics`` refuses a
    NaN or Inf before the Variable changes).  Without ``mode`` (a value put back), nothing is reported."""
    if mode is not None:
        observers = current_state().observers
        if observers:
            _report_assign(var, raw, mode, observers)
    var._value = raw
    var._version += 1


def _report_assign(var: Variable, raw, mode: str, observers) -> None:
    for obs in observers:
        on_assign = getattr(obs, "on_assign", None)
        if on_assign is not None:
            on_assign(var, raw, mode)
