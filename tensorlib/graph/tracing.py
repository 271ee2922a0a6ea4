"""``tl.function``: trace a Python function into a Graph once per input signature, then run the graph.

While a trace is active it sits on ``dispatch.modes`` and every op call lands
in :meth:`_Trace.bind`, which adds a node and returns symbolic outputs.
Tensor and NumPy arguments become placeholders; what the function closes
over is captured by reference (see :class:`tensorlib.graph.ir.Capture`).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import functools
import inspect
import itertools
import sys
import threading
import types
import warnings
import weakref

import numpy as np

from .. import dispatch
from .. import dtypes as _dtypes
from .. import tree
from ..backends import base as _backends
from ..grad import registry as _grad_registry
from ..grad.api import _FLOAT0
from ..ops.registry import _ops
from ..tensor import Tensor, TensorSpec, Variable, _ids, make_symbolic, scopes
from . import executor
from .ir import ASSIGN, CONSTANT_BYTES, Capture, Graph, _nbytes

RETRACE_WARNING_AFTER = 5
# Graphs a tl.function keeps (least recently used first out); JAX's jit keeps 4096 executables, but a
# tensorlib graph pins its captures, so the bound is smaller.
CACHE_SIZE = 64


def _owns_its_data(array) -> bool:
    """Whether no one outside can write to ``array``'s memory: it owns it, or it is a view of an array
    that only it holds (``np.ones(4)[::2]``).  A temporary view of a live array (``WEIGHTS.T``) is
    not: writing to ``WEIGHTS`` changes it, so it stays a capture, read at every call."""
    base = array.base
    # NumPy points ``base`` at the array that owns the memory; the view, `base` and the argument hold it.
    return base is None or base.__class__ is np.ndarray and base.base is None and sys.getrefcount(base) <= 3


class RetracingWarning(UserWarning):
    """A ``tl.function`` was traced many times: some argument keeps changing its signature."""


class _NeedsValue(Exception):
    """A Python float fed as a weak input (or a value computed from such floats alone) was needed as a Python
    value: make the arguments it came from static.

    Not a ValueError/TypeError, so that ``dispatch.apply`` does not rewrap it on its way out."""

    def __init__(self, arguments):
        super().__init__(arguments)
        self.arguments = arguments


# The ops a Python float has as operators.  Eagerly, ``lr * 0.5`` or ``lr > 0`` on a Python float argument is
# Python arithmetic and gives a Python number (weak, float64); traced, the same expression on the weak
# placeholder must stay weak too, or ``x32 * (lr * 0.5)`` would promote to float64.
_PYTHON_OPERATORS = frozenset(
    ("Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal")
    + ("NotEqual",)
)


class _Trace(dispatch.Mode):
    """The tracing mode: builds ``graph`` from the ops the function calls."""

    builds_graph = True  # tl.remat recomputes under this mode (a tl.vmap's mode runs its function as it is)

    def __init__(self, graph: Graph):
        self.graph = graph
        self.first_id = next(_ids)  # tensors with a larger _id were created while tracing
        self.known: set = set()  # _ids of this graph's symbolic tensors
        self.lifted: dict = {}  # _id of a concrete Tensor/Variable -> its symbolic value now
        self.variable_refs: dict = {}  # Variable _id -> its capture placeholder (the assign target)
        self.reads: dict = {}  # id(snapshot) -> (snapshot, the Variable's value when a tape read it)
        self.arrays: dict = {}  # id(array) -> placeholder of a captured array
        self.constants: dict = {}  # value key -> constant (one per distinct literal)
        self.sources: list = []  # closed-over objects, for the retrace guards
        self.state: dict = {}  # (id(owner), name) -> (owner, name): Python state read that picks ops (Module.training)
        # _id of a weak Python-float placeholder, or of a value computed from those and literals alone -> the
        # (position, name) of the top-level arguments it comes from (made static if its value is needed)
        self.weak_args: dict = {}
        self.observers = tuple(dispatch.observers)  # active when the trace began: they watch every run

    def placeholder(self, shape, dtype, backend, name):
        t = self.graph.add_input(shape, dtype, name)
        t.backend = backend
        self.known.add(t._id)
        return t

    def reads_state(self, owner, name):
        self.state.setdefault((id(owner), name), (owner, name))

    def needs_value(self, t):
        """``t``'s concrete value is asked for (``float(t)``, an attribute): a Python-float argument then
        becomes static and the function traces again; any other symbolic tensor has no value."""
        arguments = self.weak_args.get(t._id)
        if arguments:
            raise _NeedsValue(arguments)

    def bind(self, op, inputs, attrs, specs):
        for v in attrs.values():
            if isinstance(v, Tensor):
                for mode in dispatch.modes:
                    mode.needs_value(v)
        ins = [t if t._id in self.known else self.lift(t, op) for t in inputs]
        for t in ins:
            if t.backend is not ins[0].backend:
                raise ValueError(
                    f"{op.name}: inputs are on different backends "
                    f"({dispatch.describe_inputs(op, ins)}; backends "
                    f"{', '.join(a.backend.name for a in ins)}); move them with tl.tensor(x, backend=...)"
                )
        arguments = None
        if self.weak_args:
            arguments = self._weak_arguments(ins)
            # A Cast reads a weak float exactly (float64), as eagerly: tl.cast(lr, dtype) casts the Python float,
            # and a weak scalar promoted beside a float16 tensor is made float16 from its value, rounded once.
            if op.name not in _PYTHON_OPERATORS and op.name != "Cast":
                group = ins if op.promote in (None, "all") else [ins[i] for i in op.promote if i < len(ins)]
                # A tensor a function made from them (tl.cast(lr, "float64")) is strong: literals adopt its dtype.
                weak = all(t.__class__ is dispatch.WeakScalar for t in group)
                if weak and self._weak_arguments(group) is not None:
                    ins, specs = self._as_eager_floats(op, ins, attrs)
        outs = self.graph.add_node(op, ins, attrs, specs, dispatch.user_site())
        self.known.update(o._id for o in outs)
        if arguments is not None:
            # A Python operator on weak values is Python arithmetic eagerly (weak); on a value a tensorlib function
            # made (a strong tensor eagerly) it is not, though its result still comes from the weak arguments.
            weak = op.name in _PYTHON_OPERATORS and all(t.__class__ is dispatch.WeakScalar for t in ins)
            for o in outs:
                self.weak_args[o._id] = arguments
                if weak:
                    o.__class__ = dispatch.WeakScalar
        return outs if isinstance(specs, tuple) else outs[0]

    def observe(self, op, outputs):
        """An observer started inside the traced function (``with tl.debugging.enable_check_numerics():`` in its
        body) watches the ops bound under it at every run, as it would eagerly: its ``on_trace(op, outputs)``
        adds the nodes that do (a CheckNumerics per output); when it runs, the graph has no observer of it."""
        for obs in dispatch.observers:
            if obs not in self.observers and hasattr(obs, "on_trace"):
                obs.on_trace(op, outputs)

    def _weak_arguments(self, ins):
        """The arguments behind ``ins`` if every input is a weak float argument, a value computed from such
        arguments alone, or a literal (at least one not a literal); else None."""
        arguments = frozenset()
        derived = False
        for t in ins:
            tops = self.weak_args.get(t._id)
            if tops is not None:
                arguments |= tops
                derived = True
            elif t.__class__ is not dispatch.WeakScalar:
                return None
        return arguments if derived else None

    def _as_eager_floats(self, op, ins, attrs):
        """An op other than a Python operator whose promoted inputs are weak floats alone: eagerly, each Python
        float becomes a tensor of the default float dtype first (``tl.sqrt(lr)``, ``tl.where(c, lr, 0.0)`` are
        float32), so the float64 placeholders are cast to it here, and the op's specs follow."""
        cast = _ops["Cast"]
        cast_attrs = cast.bind_attrs({"dtype": _dtypes.default_float})
        group = range(len(ins)) if op.promote in (None, "all") else op.promote
        out = []
        for i, t in enumerate(ins):
            # The literals beside them were made float64 next to the float64 placeholders: cast too.
            if i in group and t.__class__ is dispatch.WeakScalar and t.dtype == _dtypes.float64:
                arguments = self.weak_args.get(t._id)
                (t,) = self.graph.add_node(cast, (t,), cast_attrs, None, dispatch.user_site())
                self.known.add(t._id)
                if arguments is not None:
                    self.weak_args[t._id] = arguments
            out.append(t)
        return out, op.infer(*out, **attrs)

    def convert(self, value, dtype, backend):
        """A Python or NumPy scalar becomes a constant (neither can be written to; a NumPy float32 was a
        capture, so a graph saved without its captures could not run); an array, whatever its size, is
        captured by reference (read at every call, so writing to it later is seen, as for big arrays,
        never frozen).  Only an array that was a temporary of the trace (nothing outside holds it when
        the trace ends) becomes a constant then: see ``freeze_temporaries``."""
        if isinstance(value, (bool, int, float, complex, np.generic)):
            raw = backend.asarray(value, dtype=dtype)
            return self._constant(("scalar", dtype, backend.to_numpy(raw).tobytes()), raw, backend)
        self.sources.append(value)

        t = self.arrays.get(id(value))
        if t is None:
            t = self._capture(value, tuple(value.shape), dtype, "array", backend)
            self.arrays[id(value)] = t
        return t

    def freeze_temporaries(self):
        """Array captures that only this trace still holds (``x * np.ones(3)`` made while tracing) can no
        longer be written to by anyone: a small one becomes a constant, a big one a capture of kind
        ``"temporary"`` (fed by reference, but saved with the graph), so the graph is self-contained."""
        kept = []
        for c in self.graph.captures:
            source = c.source
            if c.kind == "array" and source.__class__ is np.ndarray:
                ours = 3 + sum(1 for s in self.sources if s is source)  # c.source, `source`, getrefcount's argument
                if sys.getrefcount(source) <= ours and _owns_its_data(source):
                    if source.nbytes > CONSTANT_BYTES:
                        c.kind = "temporary"
                    else:
                        self.graph.constants[c.tensor._id] = (
                            c.tensor,
                            c.tensor.backend.asarray(np.array(source, dtype=c.tensor.dtype)),
                        )
                        continue
            kept.append(c)
        if len(kept) != len(self.graph.captures):
            frozen = {id(c.source) for c in self.graph.captures if c not in kept}
            self.sources[:] = [s for s in self.sources if id(s) not in frozen]
            self.graph.captures[:] = kept

    def drop_unread_temporaries(self):
        """Temporaries no node reads (made by a loop body's discarded first trace) leave the graph: nothing
        outside holds them, and kept they were fed at every run, saved, and held while the graph is cached."""
        used = _used_values(self.graph)
        unread = [c for c in self.graph.captures if c.kind == "temporary" and c.tensor._id not in used]
        if unread:
            gone = {id(c.source) for c in unread}
            self.sources[:] = [s for s in self.sources if id(s) not in gone]
            self.graph.captures[:] = [c for c in self.graph.captures if c not in unread]

    def _constant(self, key, raw, backend):
        key += (backend.name,)  # a constant lives on the backend of the op that uses it
        t = self.constants.get(key)
        if t is None:
            t = self.constants[key] = self.graph.add_constant(raw, backend=backend)
            self.known.add(t._id)
        return t

    def _capture(self, source, shape, dtype, kind, backend):
        name = _unique_name(_name_of(source), {c.name for c in self.graph.captures})
        t = self.graph.add_capture(name, shape, dtype, source, kind, dispatch.user_site())
        t.backend = backend
        self.known.add(t._id)
        self.sources.append(source)
        return t

    def _in_graph(self, t):
        """``t`` itself if it is this graph's, the value a tape read of a Variable stands for, else None."""
        if t._id in self.known:
            return t
        read = self.reads.get(id(t))
        if read is not None and read[0] is t:
            return read[1]
        return None

    def lift(self, t, op=None):
        """The symbolic value of a Tensor from outside the trace: Variables and closed-over tensors are
        captured (the same object gives the same placeholder), tensors made while tracing may be constants."""
        value = self._in_graph(t)
        if value is not None:
            return value
        value = self.lifted.get(t._id)
        if value is not None:
            return value
        if t._value is None:
            other = dispatch.rebound(t)  # a custom gradient's closure, read in a replay of its graph
            if other is not None and other is not t:
                return self.lift(other, op)
            where = f"{op.name}: " if op is not None else ""
            raise ValueError(
                f"{where}a symbolic tensor {t._describe()} from another tl.function trace was "
                f"used while tracing {self.graph.name!r}; pass it as an argument instead"
            )
        if isinstance(t, Variable):
            value = self._capture(t, t.shape, t.dtype, "variable", t.backend)
            self.variable_refs[t._id] = value
        elif t._id > self.first_id and _nbytes(t.shape, t.dtype) <= CONSTANT_BYTES:
            value = self.graph.add_constant(t._value, t.__class__ if t.__class__ is not Tensor else None, t.backend)
            self.known.add(value._id)
        elif t._id > self.first_id:  # made while tracing, too big to embed: fed by reference, saved with the graph
            value = self._capture(t, t.shape, t.dtype, "temporary", t.backend)
        else:
            value = self._capture(t, t.shape, t.dtype, "tensor", t.backend)
        self.lifted[t._id] = value
        return value

    def _variable_table(self) -> dict:
        """Variable ``_id`` -> the symbolic value its reads give now (a Variable not assigned here: its capture)."""
        return self.lifted

    def _variable_before(self, key):
        """What a Variable that :meth:`variable_values` did not list read as then: its capture."""
        return self.variable_refs.get(key)

    def variable_values(self) -> dict:
        """Variable ``_id`` -> what a read of it gives now, for :meth:`reading_as_before`."""
        table = self._variable_table()
        return {k: table[k] for k in self.variable_refs if k in table} if table is self.lifted else dict(table)

    def assigned_since(self, before: dict) -> bool:
        """Whether a Variable was assigned here since :meth:`variable_values` gave ``before``."""
        return any(v is not before.get(k, self._variable_before(k)) for k, v in self.variable_values().items())

    @contextlib.contextmanager
    def reading_as_before(self, before: dict):
        """tl.remat's recomputation of a function that assigned Variables here: in the block, each Variable reads
        as it did before the first run (``before``, from :meth:`variable_values`), and an assign only changes what
        later reads in the block see (the first run's assign nodes stay the only ones: the state changes once);
        after the block, reads give what they gave before it."""
        table = self._variable_table()
        now = self.variable_values()
        for k in now:
            was = before.get(k, self._variable_before(k))
            if was is None:
                table.pop(k, None)
            else:
                table[k] = was

        def assign(var, value, checked=False, how="assign"):
            self.lift(var)
            table[var._id] = self.lift(value)
            return var

        self.assign = assign
        try:
            yield
        finally:
            del self.assign
            for k in self.variable_values():
                if k not in now:  # first read in the block: as outside it
                    was = self._variable_before(k)
                    if was is None:
                        table.pop(k, None)
                    else:
                        table[k] = was
            table.update(now)

    def snapshot(self, var):
        """What a tape records for a read of ``var``: its value now, keyed like the Variable (so gradients
        reach it), and still this value if the Variable is assigned before the gradient is taken."""
        alias = make_symbolic(var.shape, var.dtype, var.backend, None, 0)
        alias._id = var._id
        self.reads[id(alias)] = (alias, self.lift(var))
        return alias

    def update(self, var, value, how):
        return self.assign(var, value, how=how)

    def assign(self, var, value, checked: bool = False, how: str = "assign"):
        """``var.assign(value)`` inside the trace (or ``how``, the update that computed ``value``): an
        AssignVariable node; later reads see ``value``.  ``checked``: a branch or loop body checked it already
        (its node's own reads do not count)."""
        value = self.lift(value)
        if not checked:
            dispatch.check_assignable(var, value.backend, how)
        self.lift(var)
        attrs = {"how": how} if how != "assign" else {}
        self.graph.add_node(ASSIGN, (self.variable_refs[var._id], value), attrs, (), dispatch.user_site())
        self.lifted[var._id] = value
        return var


class _TapeReads:
    """What the tapes recording around a branch or loop body would have recorded in it had it run eagerly, op
    by op: the values they watch and the Variables they read.  An assign there is refused where an eager one
    would be (a tape that is still recording read the Variable), no more: the tape records the control-flow
    node as one op, which reads every Variable of every branch."""

    def __init__(self, parent, tapes: list):
        self.parent = parent  # the enclosing branch's or body's, or None
        self.tapes = tapes
        self.watched = {tape: set() for tape in tapes}  # tape -> _ids of values here it watches
        self.stands_for: dict = {}  # _id of a value here -> the Variable it is a read of
        self.read: dict = {}  # Variable _id -> the tapes that recorded a read of it here

    def _watched_outside(self, tape, value) -> bool:
        if isinstance(value, Variable) and value.trainable and tape._watch_accessed_variables:
            return True
        if self.parent is not None and tape in self.parent.watched:
            return value._id in self.parent.watched[tape]
        return value._id in tape._watched

    def placed(self, value, placeholder) -> None:
        """``placeholder`` stands here for ``value``, from outside (an argument, an outer value)."""
        for tape in self.tapes:
            if self._watched_outside(tape, value):
                self.watched[tape].add(placeholder._id)
        if isinstance(value, Variable):
            self.stands_for[placeholder._id] = value

    def holds(self, var, value) -> None:
        """``value`` is ``var``'s value here (assigned here, or a loop's carry): reading it reads ``var``."""
        self.stands_for[value._id] = var
        for tape in self.tapes:
            if var.trainable and tape._watch_accessed_variables or var._id in tape._watched:
                self.watched[tape].add(value._id)

    def recorded(self, node) -> None:
        # A control-flow node's reads are those its branches or body recorded (see ``absorb``), not all it takes.
        nested = any(isinstance(a, Graph) for a in node.attrs.values())
        for tape in self.tapes:
            watched = self.watched[tape]
            if any(t._id in watched for t in node.inputs):
                for t in () if nested else node.inputs:
                    var = self.stands_for.get(t._id)
                    if var is not None:
                        self.read.setdefault(var._id, set()).add(tape)
                watched.update(o._id for o in node.outputs if o.dtype.kind in "fc")

    def absorb(self, inner: _TapeReads) -> None:
        """Count the reads that a branch or body traced inside recorded."""
        for var_id, tapes in inner.read.items():
            self.read.setdefault(var_id, set()).update(t for t in tapes if t in self.watched)

    def check(self, var, value_backend, later: str = "", how: str = "assign") -> None:
        """``check_assignable`` with the tapes paused around this branch or body: refused if one of them read
        ``var`` before the node, or would have read it here (``later``: the reason a read after counts)."""
        dispatch.check_assignable(var, value_backend, how)
        reads = self
        while reads is not None:
            if reads.read.get(var._id) or dispatch.read_by(var, reads.tapes):
                raise RuntimeError(
                    f"Variable.{how}: variable {var.name!r} (shape {var.shape}, {var.dtype}) was read by a "
                    f"GradientTape that is still recording{later}; its gradient would mix old and new values. "
                    "Assign after tape.gradient(), or inside `with tape.stop_recording():`."
                )
            reads = reads.parent


class _SubTrace(_Trace):
    """Traces a branch or loop body of ``tl.cond``/``tl.while_loop``/``tl.scan`` into its own Graph.

    What the body takes from outside (a value of the enclosing trace, a capture, a Variable) is lifted
    into the enclosing trace and becomes an extra input of the subgraph (``outer``), so a subgraph has
    no captures of its own and the control-flow node lists everything it reads as an input.

    A Variable assigned here is not written in the subgraph (it has no state of its own): its new value
    is what later reads here see, ``written`` lists it, and the control-flow op returns it as one more
    output (a loop, as one more carry) and assigns it after the node, as TensorFlow's ``cond`` and
    ``while_loop`` thread resource variables."""

    def __init__(self, graph, parent, loop: bool = False):
        super().__init__(graph)
        self.parent = parent
        # a branch or body traced inside the block is in the block (a parent that does not trace: tl.vmap's mode)
        self.observers = getattr(parent, "observers", self.observers)
        self.outer: list = []  # values of the enclosing trace, in the order of their inputs here
        self.outer_map: dict = {}  # _id of an outer value -> its placeholder here
        # Unseeded random draws here take a key (see ops.random.KEYED): a replay for a gradient must draw
        # the numbers the run drew.  A branch's key comes from the enclosing trace; a loop body's changes per
        # step, so the loop traces its body again with a key input (``drew`` tells it to) and sets ``key``.
        self.key = None
        self.salt = 0  # tells the draws of one key apart
        self.loop = loop
        self.drew = False
        self.variables: dict = {}  # Variable _id -> its value here: assigned here, or a loop's carry of it
        self.written: dict = {}  # Variable _id -> the Variable, for each one assigned here (in order)
        outside = parent.tape_reads if isinstance(parent, _SubTrace) else None
        self.tape_reads = _TapeReads(outside, [*(outside.tapes if outside else ()), *dispatch.current_state().tapes])

    def bind(self, op, inputs, attrs, specs):
        if op.stateful and attrs.get("seed") is None:
            from ..ops.random import KEYED

            if KEYED.get(op.name) == len(inputs):
                key, salt = self.random_key()
                inputs, attrs = (*inputs, key), {**attrs, "seed": salt}
        outs = super().bind(op, inputs, attrs, specs)
        if self.tape_reads.tapes:
            self.tape_reads.recorded(self.graph.nodes[-1])
        return outs

    def random_key(self) -> tuple:
        """``(key, salt)`` for an unseeded draw traced here."""
        self.drew = True
        if self.key is None:
            if self.loop:  # traced a first time: the loop traces the body again with a key per step
                self.key = self.convert(0, _dtypes.int64, self.graph.backend)
            else:
                from ..ops.random import KEY_BOUND, uniform

                with dispatch.in_mode(self.parent):  # drawn per run there (from its own key if it has one)
                    self.key = self.from_outer(uniform((), 0, KEY_BOUND, dtype=_dtypes.int64))
        self.salt += 1
        return self.key, self.salt - 1

    def from_outer(self, value, lifted=None):
        """The placeholder here for ``value``, read from outside, whose symbolic value in the enclosing trace is
        ``lifted`` (default: ``value`` itself).  ``outer`` keeps ``value`` as the body read it: the node takes
        it as an input, so that a tape recording around the node (in an enclosing branch or body, where
        ``lifted`` is a placeholder no tape watches) connects the node to the tensor the tape watches."""
        t = self.outer_map.get(value._id)
        if t is None:
            lifted = value if lifted is None else lifted
            t = self.placeholder(lifted.shape, lifted.dtype, lifted.backend, f"outer[{len(self.outer)}]")
            _inherit_weakness(lifted, t, self.parent, self)
            self.tape_reads.placed(value, t)
            self.outer_map[value._id] = t
            self.outer.append(value)
        return t

    def lift(self, t, op=None):
        value = self._in_graph(t)
        if value is not None:
            return value
        value = self.variables.get(t._id) if isinstance(t, Variable) else None
        if value is not None:
            return value
        inner = self.outer_map.get(t._id)
        if inner is not None:
            return inner
        if isinstance(t, Variable):
            # The node takes the Variable itself, so that tapes outside watch and snapshot it as for any op.
            return self.from_outer(t)
        if (
            t._value is not None
            and not isinstance(t, Variable)
            and t._id > self.first_id
            and t._value.nbytes <= CONSTANT_BYTES
        ):
            return super().lift(t, op)  # a small literal made inside the body
        if t._value is None:
            other = dispatch.rebound(t)  # a custom gradient's closure, read in a replay of its graph
            if other is not None and other is not t:
                return self.lift(other, op)
        return self.from_outer(t, self.parent.lift(t, op))

    def convert(self, value, dtype, backend):
        # Arrays, whatever their size, are read by reference through the outer trace.
        if isinstance(value, (bool, int, float, complex)):
            return super().convert(value, dtype, backend)
        return self.from_outer(self.parent.convert(value, dtype, backend))

    def update(self, var, value, how):
        return self.assign(var, value, how=how)

    def _variable_table(self) -> dict:
        return self.variables

    def _variable_before(self, key):
        return None  # not assigned here: read from outside

    def assign(self, var, value, checked: bool = False, how: str = "assign"):
        """``var.assign(value)`` (or ``how``) in a branch or body: later reads here see ``value``; the node writes
        it back.  ``checked``: written back by a node inside, which checked it."""
        value = self.lift(value)
        if not checked:
            self.tape_reads.check(var, value.backend, how=how)
        if self.tape_reads.tapes:  # its own value, so that reads of the Variable are told from other uses
            (value,) = self.graph.add_node(_ops["Identity"], (value,), {}, None, dispatch.user_site())
            self.known.add(value._id)
            self.tape_reads.holds(var, value)
        self.variables[var._id] = value
        self.written.setdefault(var._id, var)
        return var

    def variable_outputs(self, variables: list, before: list) -> None:
        """Add one output per Variable of ``variables``: its value at the end of this branch (``before``, its
        value in the enclosing trace, where this branch does not assign it).  The graph's structure becomes
        ``(result, [values])``, so that it holds every output (a saved graph is checked so)."""
        g = self.graph
        values = [
            self.variables[v._id] if v._id in self.written else self.from_outer(old)
            for v, old in zip(variables, before)
        ]
        g.structure = tensor_leaves((tree.unflatten(g.structure, g.outputs), values), g.backend)[1]
        g.outputs = g.outputs + values

    def drop_unread_outer(self) -> None:
        """Forget the outer values that no node here reads: those a nested body's discarded first trace lifted
        (a loop traces its body again for a weak init's dtype or for random keys), which the enclosing node
        would otherwise take as inputs, and whose captures it would keep."""
        used = _used_values(self.graph)
        unread = {v._id for v in self.outer if self.outer_map[v._id]._id not in used}
        if unread:
            dropped = {self.outer_map.pop(i)._id for i in unread}
            self.outer = [v for v in self.outer if v._id not in unread]
            g = self.graph
            kept = [(t, n) for t, n in zip(g.inputs, g.input_names) if t._id not in dropped]
            g.inputs, g.input_names = [t for t, _ in kept], [n for _, n in kept]

    def with_outer(self, n_args: int, outer: list) -> Graph:
        """The graph with inputs ``args + outer`` (values it does not read get unused inputs), the outer ones
        named by their place in ``outer`` (as the node takes them: both branches of a cond name an input alike)."""
        for value in outer:
            self.from_outer(value)
        g = self.graph
        names = {t._id: n for t, n in zip(g.inputs, g.input_names)}
        g.input_names = [names[t._id] for t in g.inputs[:n_args]] + [f"outer[{k}]" for k in range(len(outer))]
        g.inputs = g.inputs[:n_args] + [self.outer_map[v._id] for v in outer]
        return g


def trace_subgraph(fn, args, name: str, loop: bool = False):
    """Trace ``fn(*args)`` inside the current trace, ``args`` a nested structure of Tensors/TensorSpecs.

    Returns ``(sub, leaves)``: the :class:`_SubTrace` (its ``graph`` has one input per tensor leaf of
    ``args``, then one per outer value in ``sub.outer``) and the result's tensor leaves (also
    ``sub.graph.outputs``; ``sub.graph.structure`` is the result's TreeDef).  Python numbers and arrays
    in the result become tensors; strings stay constants of the structure.  ``loop``: a loop body, whose
    random draws need a key per step (if ``sub.drew``, trace it again with one, set by :func:`keyed_call`)."""
    parent = dispatch.modes[-1]  # a trace, or tl.vmap's mode (a loop traced inside a mapped function)
    arg_leaves, arg_def = tree.flatten(args, is_constant=_not_a_tensor)
    parent_graph = getattr(parent, "graph", None)
    backend = (
        parent_graph.backend
        if parent_graph is not None
        else next((t.backend for t in arg_leaves if isinstance(t, Tensor)), _backends.current())
    )
    graph = Graph(name, backend)
    sub = _SubTrace(graph, parent, loop)
    placed = [
        sub.placeholder(t.shape, t.dtype, getattr(t, "backend", graph.backend), f"{name}[{i}]")
        for i, t in enumerate(arg_leaves)
    ]
    for t, p in zip(arg_leaves, placed):
        _inherit_weakness(t, p, parent, sub)
        sub.tape_reads.placed(t, p)
    # Its nodes' scopes are relative to the control-flow node (which has the enclosing blocks' names).
    outer_scopes = scopes.set(())
    try:
        with dispatch.in_mode(sub):
            result = fn(*tree.unflatten(arg_def, placed))
    finally:
        scopes.reset(outer_scopes)
    leaves, graph.structure = tensor_leaves(result, graph.backend)
    graph.outputs = [sub.lift(t) for t in leaves]
    sub.drop_unread_outer()
    if isinstance(parent, _SubTrace) and sub.tape_reads.read:
        parent.tape_reads.absorb(sub.tape_reads)
    return sub, graph.outputs


def variable_value(var: Variable):
    """``var``'s value in the active trace now (the value a branch or loop starts from), read by no tape."""
    return dispatch.modes[-1].lift(var)


def carried_variables(variables: list, values: list) -> None:
    """In the loop body traced now, ``variables`` are the carries ``values``: reads and assigns go to them."""
    sub = dispatch.modes[-1]
    for var, value in zip(variables, values):
        sub.variables[var._id] = value
        sub.tape_reads.holds(var, value)


def carried_out(variables: list) -> list:
    """The values of ``variables`` at the end of the loop body traced now, returned as its carries (so
    the body's node does not write them back itself).  A recording tape's read of one of them anywhere in
    the body is refused, as the next step's assign would be eagerly."""
    sub = dispatch.modes[-1]
    for var in variables:
        sub.written.pop(var._id, None)
        if sub.tape_reads.read.get(var._id):
            sub.tape_reads.check(var, None, " in an earlier step of the loop")
    return [sub.variables[v._id] for v in variables]


def write_back(variables: list, values) -> None:
    """Assign ``variables`` (assigned in a branch or loop body, and checked there) their ``values`` after the
    node: in the enclosing trace a write, or in an enclosing branch or body one more value for its node."""
    mode = dispatch.modes[-1]
    for var, value in zip(variables, values):
        mode.assign(var, value, checked=True)


def keyed_call(key, fn, *args, salt: int = 0):
    """``fn(*args)`` traced in a loop body whose random draws derive from ``key`` (from ``salt`` on)."""
    sub = dispatch.modes[-1]
    sub.key, sub.salt = key, salt
    return fn(*args)


def _inherit_weakness(value, placeholder, parent, sub) -> None:
    """A branch or body's placeholder for ``value`` promotes as it does (a weak scalar stays weak), and one
    standing for a weak float argument, or a value computed from such alone, is one in the subgraph too."""
    if value.__class__ is dispatch.WeakScalar:
        placeholder.__class__ = value.__class__
    arguments = parent.weak_args.get(value._id)
    if arguments is not None:
        sub.weak_args[placeholder._id] = arguments


def _not_a_tensor(value) -> bool:
    return not isinstance(value, (Tensor, TensorSpec))


def _is_string(value) -> bool:
    return isinstance(value, str)


def tensor_leaves(value, backend) -> tuple:
    """``(tensor leaves, treedef)`` of a nested value whose Python numbers and arrays become tensors
    (on ``backend``) and whose strings stay constants of the treedef (a subgraph's operands and results)."""
    leaves, treedef = tree.flatten(value, is_constant=_is_string)
    return [v if isinstance(v, Tensor) else dispatch.to_tensor(v, backend) for v in leaves], treedef


def _name_of(obj) -> str:
    """The Python name the user's code binds ``obj`` to (innermost frame first), else a generic one."""
    if isinstance(obj, Variable) and not obj.name.startswith("Variable:"):
        return _identifier(obj.name)
    frame = sys._getframe(1)
    inside = False
    while frame is not None:
        if not frame.f_code.co_filename.startswith(dispatch._PACKAGE_DIR):
            inside = True
            for scope in (frame.f_locals, frame.f_globals):
                for name, value in scope.items():
                    if value is obj and not name.startswith("_"):
                        return name
        elif inside:
            # Back in tensorlib below the traced function: the frames further out are the caller's, whose
            # f_locals snapshot would keep every object it binds alive (and they are not the function's names).
            break
        frame = frame.f_back
    if isinstance(obj, Variable):
        return _identifier(obj.name)
    return "capture"


def _identifier(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"v_{cleaned}"


def _unique_name(name, taken) -> str:
    if name not in taken:
        return name
    for k in itertools.count(1):
        if f"{name}_{k}" not in taken:
            return f"{name}_{k}"


# ---------------------------------------------------------------- nested values: keys, placeholders, outputs
_WEAK_FLOAT = ("weak float",)
# How static an argument is: ``True`` (static_argnums/static_argnames: every leaf is a value, hashable), or
# ``_FLOATS`` (a float of it was needed as a Python value: its floats are static, its arrays stay inputs).
_FLOATS = "floats"


_NESTED = (list, tuple, dict)
_NODES = tree.nodes  # registered node types (tl.tree.register_node): nested arguments too


def _nested_key(value, feeds, keep, static=False):
    """Hashable signature of a nested argument: its TreeDef and its leaves' keys (see ``_leaf_key``)."""
    leaves = []
    # tree._flatten gives TreeDef.key() without building the TreeDef (this runs at every call).
    structure = tree._flatten(value, leaves)
    return (structure, tuple([_leaf_key(v, feeds, keep, static) for v in leaves]))


def _leaf_key(value, feeds, keep, static=False):
    """Hashable signature of one leaf; tensor leaves (and Python floats unless ``static``) are appended
    to ``feeds`` in placeholder order; objects keyed by identity go to ``keep`` (held weakly by the cache)."""
    cls = value.__class__
    if cls is float or cls is complex:
        if cls is float and not static:
            feeds.append(value)
            return _WEAK_FLOAT
        return (cls, repr(value))  # repr: a NaN equals itself, 0.0 and -0.0 (0j and -0j) differ
    if static is True:
        return _static_key(value, keep)
    if isinstance(value, Tensor):
        if isinstance(value, Variable):
            keep.append(value)
            return ("variable", id(value))
        feeds.append(value)
        return (value.shape, value.dtype, value.backend.name)
    if cls in (int, bool, str) or value is None:
        return (cls, value)
    if cls is TensorSpec:
        return (value.known_shape("tl.function.get_graph"), value.dtype, _backends.current().name)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        feeds.append(value)
        backend = _backends.backend_of_array(value)
        return (tuple(value.shape), _dtypes.of_array(value.dtype), backend.name if backend else "numpy")
    if cls.__hash__ is object.__hash__:
        keep.append(value)  # hashed by identity: key by id, never keep it alive
        return ("id", id(value))
    try:
        hash(value)
        return (cls, value)
    except TypeError:
        keep.append(value)
        return ("id", id(value))


class _UnhashableStatic(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value


def _static_key(value, keep):
    """The key of a leaf of a static argument: its value, which must be hashable (JAX's rule).  An array or
    tensor has no hashable value (a static one was silently fed as a placeholder); a NumPy scalar is a value."""
    if value.__class__ in (int, bool, str) or value is None:
        return (value.__class__, value)
    if isinstance(value, np.generic):
        return (value.__class__, value.tobytes())
    if isinstance(value, Variable):  # a Variable is keyed by identity, static or not
        keep.append(value)
        return ("variable", id(value))
    if isinstance(value, (Tensor, TensorSpec)) or hasattr(value, "shape") and hasattr(value, "dtype"):
        raise _UnhashableStatic(value)
    if value.__class__.__hash__ is object.__hash__:
        keep.append(value)  # hashed by identity: key by id, never keep it alive
        return ("id", id(value))
    try:
        hash(value)
    except TypeError:
        raise _UnhashableStatic(value) from None
    return (value.__class__, value)


def _with_placeholders(value, name, trace, top=None, static=False):
    """``value`` with every tensor/array leaf (and Python float unless ``static``) replaced by a new
    placeholder named by its path from the argument ``name``; ``top`` is the argument it belongs to
    (to make it static later)."""
    pairs, treedef = tree.flatten_with_path(value)
    return tree.unflatten(treedef, [_placeholder(v, name + _path_text(p), trace, top, static) for p, v in pairs])


def _path_text(path) -> str:
    return "".join(f"[{k!r}]" for k in path)


def _placeholder(value, path, trace, top, static):
    if static is True:
        return value
    if value.__class__ is float and not static:
        t = trace.placeholder((), _dtypes.float64, _backends.current(), path)
        t.__class__ = dispatch.WeakScalar  # promotes like the Python float it stands for
        trace.weak_args[t._id] = frozenset((top,))
        return t
    if isinstance(value, TensorSpec):
        return trace.placeholder(value.known_shape(path), value.dtype, _backends.current(), path)
    if isinstance(value, Tensor):
        if isinstance(value, Variable):
            return value
        return trace.placeholder(value.shape, value.dtype, value.backend, path)
    if hasattr(value, "shape") and hasattr(value, "dtype"):  # NumPy arrays and scalars, CuPy arrays
        backend = _backends.backend_of_array(value) or _backends.get("numpy")
        return trace.placeholder(tuple(value.shape), _dtypes.of_array(value.dtype), backend, path)
    return value


def _describe(value, name, out, static=False):
    """``{path: description}`` for an argument's structure (if it is nested) and each leaf, to explain retraces."""
    pairs, treedef = tree.flatten_with_path(value)
    if treedef.kind != "leaf":
        out[name] = ("structure", repr(treedef))
    for path, leaf in pairs:
        _describe_leaf(leaf, name + _path_text(path), out, static)


def _describe_leaf(value, path, out, static):
    if value.__class__ is float and not static:
        out[path] = ("value", "a Python float fed as a weak scalar")
    elif isinstance(value, Variable):
        out[path] = ("variable", f"Variable {value.name!r} (id {value._id})")
    elif hasattr(value, "shape") and hasattr(value, "dtype") and static is not True:  # tensors, specs, arrays
        backend = value.backend.name if isinstance(value, Tensor) else "numpy"
        out[path] = ("tensor", tuple(value.shape), np.dtype(value.dtype).name, backend)
    elif value.__class__.__hash__ is object.__hash__ or value.__class__.__hash__ is None:
        # Keyed by identity: a new object may even have the old one's address (and repr), so say what it is.
        name = getattr(value, "__qualname__", None)
        out[path] = ("object", f"{type(value).__name__} {name if isinstance(name, str) else 'object'}")
    else:
        text = repr(value)
        out[path] = ("value", text if len(text) < 60 else f"{type(value).__name__} object")


def _explain(old: dict, new: dict) -> list[str]:
    """What changed between two call descriptions, by argument path (a changed container hides its items)."""
    reasons = []
    for path in list(new) + [p for p in old if p not in new]:
        before, after = old.get(path), new.get(path)
        if before == after or any(old.get(p) != new.get(p) for p in _ancestors(path)):
            continue
        if before is None:
            reasons.append(f"{path}: new argument ({_show(after)})")
        elif after is None:
            reasons.append(f"{path}: argument removed (was {_show(before)})")
        elif before[0] == after[0] == "tensor":
            reasons.extend(_tensor_changes(path, before, after))
        else:
            reasons.append(f"{path}: {_show(before)} -> {_show(after)}")
    return reasons


def _state_value(ref, name):
    """The value of a piece of Python state a trace read; None once its owner is gone."""
    owner = ref()
    return None if owner is None else getattr(owner, name)


def _identity_reason(call: dict) -> str:
    """The reason for a retrace no description changed: an argument keyed by identity is another object."""
    objects = [f"{path}: another {desc[1]}" for path, desc in call.items() if desc[0] == "object"]
    return "; ".join(objects) + " (objects are keyed by identity)" if objects else "new signature"


def _ancestors(path):
    return [path[:i] for i, c in enumerate(path) if c == "["]


def _tensor_changes(path, before, after) -> list[str]:
    _, shape0, dtype0, backend0 = before
    _, shape1, dtype1, backend1 = after
    out = []
    if len(shape0) != len(shape1):
        out.append(f"{path}.shape: {shape0} -> {shape1}")
    else:
        out += [f"{path}.shape[{i}]: {a} -> {b}" for i, (a, b) in enumerate(zip(shape0, shape1)) if a != b]
    if dtype0 != dtype1:
        out.append(f"{path}.dtype: {dtype0} -> {dtype1}")
    if backend0 != backend1:
        out.append(f"{path}.backend: {backend0} -> {backend1}")
    return out


def _show(desc) -> str:
    if desc[0] == "tensor":
        return f"tensor {desc[2]}{list(desc[1])}"
    return desc[1]


# ---------------------------------------------------------------- the traced function
class _ArgumentVariable(Capture):
    """The capture of a Variable passed as an argument, held weakly: the cache keys its graph by the Variable's
    identity and drops the graph when the Variable dies, so the graph must not keep it alive either."""

    __slots__ = ("_ref",)

    def __init__(self, capture: Capture):
        super().__init__(capture.name, capture.tensor, capture.source, capture.kind, capture.site)

    @property
    def source(self):
        return self._ref()

    @source.setter
    def source(self, value):
        self._ref = weakref.ref(value)


def _hold_argument_variables_weakly(graph: Graph, args, kwargs) -> None:
    variables = {id(v) for v in tree.leaves((args, kwargs)) if isinstance(v, Variable)}
    if variables:
        graph.captures[:] = [
            _ArgumentVariable(c) if c.kind == "variable" and id(c.source) in variables else c for c in graph.captures
        ]


class _Concrete:
    """One traced signature: its graph and the guards that keep closed-over names pointing at the captures."""

    __slots__ = ("graph", "guards", "keep")

    def __init__(self, graph, guards, keep):
        self.graph = graph
        self.guards = guards
        self.keep = keep

    def stale(self) -> str | None:
        for kind, scope, name, obj in self.guards:
            now = scope.cell_contents if kind == "closure" else scope.get(name)
            if now is not obj:
                return f"captured {kind} {name!r} now refers to a different object"
        return None


def _guards(fn, sources) -> list:
    """(kind, cell or globals, name, object) for each captured object the function names directly."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    wanted = {id(s): s for s in sources}
    guards = []
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if id(value) in wanted:
            guards.append(("closure", cell, name, value))
    for name in _global_names(code):
        value = fn.__globals__.get(name)
        if value is not None and id(value) in wanted:
            guards.append(("global", fn.__globals__, name, value))
    return guards


def _global_names(code) -> set:
    """The global names ``code`` reads, with those its nested functions read (a branch or loop body written
    inside the traced function reads its globals as directly as the function does)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


class _MethodCall:
    """A ``Function`` called as a method: ``__get__`` binds it to the instance with ``functools.partial``, and the
    first argument is that instance.  ``__wrapped__`` gives the bound method the function's signature."""

    def __init__(self, function):
        self.function = function
        self.__wrapped__ = function.python_function

    def __call__(self, instance, *args, **kwargs):
        return self.function._call(True, instance, *args, **kwargs)


class BoundFunction(functools.partial):
    """A ``tl.function`` method bound to its instance (``layer.call``): calls run the instance's graphs, and
    ``get_graph``/``save`` trace for it as :class:`Function`'s do for a function; the other attributes
    (``trace_count``, ``cache_info()``, ``python_function``, ...) are the ``tl.function``'s.  A partial, so a call
    costs what a partial's does.

    >>> import tensorlib as tl
    >>> class Scale:
    ...     def __init__(self):
    ...         self.w = tl.Variable(2.0)
    ...
    ...     @tl.function
    ...     def __call__(self, x):
    ...         return x * self.w
    >>> s = Scale()
    >>> [n.op_type for n in s.__call__.get_graph(tl.TensorSpec((3,))).nodes]
    ['Mul']
    """

    def get_graph(self, *args, **kwargs) -> Graph:
        """The traced (unoptimized) Graph of the method for these arguments (see :meth:`Function.get_graph`)."""
        return self.func.function._graph_for(self.args, args, kwargs)

    def save(self, path, *args, include_captures: bool = False, **kwargs) -> None:
        """Trace the method for ``args`` and save that graph (see :meth:`Function.save`)."""
        self.get_graph(*args, **kwargs).save(path, include_captures=include_captures)

    def __getattr__(self, name):
        if name.startswith("__"):  # __wrapped__ and the like stay the partial's (inspect.signature drops the instance)
            raise AttributeError(name)
        return getattr(self.func.function, name)

    def __repr__(self):
        return f"<bound tl.function {self.func.function.__qualname__} of {type(self.args[0]).__name__} object>"


class Function:
    """A Python function traced into graphs, one per input signature; see :func:`function`."""

    def __init__(
        self, fn, input_signature=None, max_traces=None, static_argnums=(), static_argnames=(), cache_size=CACHE_SIZE
    ):
        functools.update_wrapper(self, fn)
        self._options = (input_signature, max_traces, static_argnums, static_argnames, cache_size)
        if "__name__" not in self.__dict__:  # a callable object or functools.partial has none to copy
            self.__name__ = getattr(getattr(fn, "func", None), "__name__", None) or type(fn).__name__
        self.python_function = fn
        if input_signature is not None and not isinstance(input_signature, (list, tuple)):
            raise TypeError(
                f"tl.function({getattr(fn, '__name__', fn)}): input_signature must be a list of tl.TensorSpec, one per "
                f"argument, got {type(input_signature).__name__}"
            )
        self.input_signature = None if input_signature is None else tuple(input_signature)
        if self.input_signature is not None:
            for i, s in enumerate(self.input_signature):
                if not isinstance(s, TensorSpec):
                    raise TypeError(
                        f"tl.function({self.__name__}): input_signature[{i}] must be a "
                        f"tl.TensorSpec, got {type(s).__name__}"
                    )
        # positions of the specs of unknown rank (TensorSpec(None)): traced once per rank
        self._any_rank = tuple(i for i, s in enumerate(self.input_signature or ()) if s.shape is None)
        self._positional, self._varargs, keyword_only, has_kwargs = _parameters(fn)
        kinds = inspect.Parameter
        self._positional_only = sum(
            p.kind is kinds.POSITIONAL_ONLY for p in _signature_parameters(fn) if p.name in self._positional
        )
        self._static_pos, self._static_names = self._statics(static_argnums, static_argnames, keyword_only, has_kwargs)
        if cache_size < 1:
            raise ValueError(f"tl.function({self.__name__}): cache_size must be at least 1, got {cache_size}")
        self.cache_size = cache_size
        self.max_traces = max_traces
        self.trace_count = 0
        self.retrace_reasons: list[str] = []
        self._cache: collections.OrderedDict = collections.OrderedDict()
        self._hits = 0
        self._evicted = 0
        self._last_call: dict | None = None
        self._no_retrace = 0
        # Python state its traces read that picks ops (a Module's training flag), as (weakref to the owner,
        # attribute name, label): the graphs are keyed by its values too.  A tuple, replaced whole under the lock.
        self._state: tuple = ()
        # Held while tracing: threads calling a new signature at once trace it once and share the graph.
        self._trace_lock = threading.RLock()

    def _statics(self, argnums, argnames, keyword_only, has_kwargs):
        """Static positions and names, each completed from the other through the signature (as in JAX)."""
        argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
        n = len(self._positional)
        parameters = ", ".join(self._positional + keyword_only) or "none"
        positions = set()
        for i in argnums:
            # Past the last positional parameter only a *args entry can be static (a position no call fills
            # would make a typo silently static-free).
            if not isinstance(i, int) or (i < 0 and (self._varargs or -i > n)) or (i >= n and not self._varargs):
                raise ValueError(
                    f"tl.function({self.__name__}): static_argnums entry {i!r} is not a "
                    f"parameter position (positional parameters: {', '.join(self._positional) or 'none'})"
                )
            positions.add(i % n if i < 0 else i)
        names = set(argnames)
        for name in argnames:
            if name in self._positional:
                positions.add(self._positional.index(name))
            elif name not in keyword_only and not has_kwargs:
                raise ValueError(
                    f"tl.function({self.__name__}): static_argnames entry {name!r} is not a parameter "
                    f"(parameters: {parameters})"
                )
        names.update(self._positional[i] for i in positions if i < n)
        return dict.fromkeys(positions, True), dict.fromkeys(names, True)

    def __reduce__(self):
        # A copy (copy.deepcopy or pickle of a Module that holds one) is a new tl.function of the copied Python
        # function, with the same options and no graphs: the graphs captured the original's Variables (and
        # hold a lock and symbolic tensors, which made the copy fail).  A bound method is copied with its
        # Module, so the copy runs on the copy's Variables.  A decorated module-level function pickles by its
        # name, as functions do (pickling its Python function by name found this Function under that name
        # and failed: "it's not the same object").
        if self._importable():
            return self.__qualname__
        return (Function, (self.python_function, *self._options))

    def __copy__(self):
        return Function(self.python_function, *self._options)

    def __deepcopy__(self, memo):
        return Function(*copy.deepcopy((self.python_function, *self._options), memo))

    def _importable(self) -> bool:
        """Whether this Function is what its module's global of its qualified name is."""
        found = sys.modules.get(getattr(self, "__module__", None))
        for part in getattr(self, "__qualname__", "<locals>").split("."):
            found = getattr(found, part, None)
        return found is self

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        # A method's graphs are per instance, as tf.function's: the instance is keyed by identity (held weakly)
        # even where its class compares by value (two equal layers hold different Variables: a graph shared by
        # value ran the first one's), and an input_signature describes the arguments after it.
        return BoundFunction(self._as_method, instance)

    def __call__(self, *args, **kwargs):
        return self._call(False, *args, **kwargs)

    @functools.cached_property
    def _as_method(self):
        return _MethodCall(self)

    def _call(self, method, *args, **kwargs):
        """A call; ``method``: ``args[0]`` is the instance a method is bound to."""
        if dispatch.modes:
            # Called while another function traces: inline it into that trace.
            return self.python_function(*args, **kwargs)
        concrete, feeds = self._concrete_for(args, kwargs, method=method)
        if len(feeds) != len(concrete.graph.inputs):
            raise TypeError(
                f"tl.function {self.__name__}: TensorSpec arguments are for get_graph() and save(); "
                "call the function with tensors or arrays"
            )
        return executor.run(concrete.graph, feeds)

    def _key(self, args, kwargs, method=False):
        feeds, keep = [], []
        instance = ()
        if method:
            keep.append(args[0])
            instance = (("id", id(args[0])),)
        if self.input_signature is not None:
            # A spec of unknown rank traces once per rank: the ranks of its arguments pick the graph.
            ranks = tuple(len(args[i + len(instance)].shape) for i in self._any_rank)
            return (
                ("input_signature", *instance, ranks, _grad_registry.override_key(), _backends.current()),
                feeds,
                keep,
            )
        statics = self._static_pos
        # Plain leaves (the common case) skip the tree walk.
        key = [*instance] + [
            _nested_key(a, feeds, keep, statics.get(i, False))
            if isinstance(a, _NESTED) or a.__class__ in _NODES
            else _leaf_key(a, feeds, keep, statics.get(i, False))
            for i, a in enumerate(args[len(instance) :], len(instance))
        ]
        for k, v in sorted(kwargs.items()):
            static = self._static_names.get(k, False)
            key.append(
                (
                    k,
                    _nested_key(v, feeds, keep, static)
                    if isinstance(v, _NESTED) or v.__class__ in _NODES
                    else _leaf_key(v, feeds, keep, static),
                )
            )
        key.append(_grad_registry.override_key())
        # The backend new tensors are made on (a `with tl.backend(...)` block, set_backend): a graph bakes in
        # where its tl.ones / tl.random draws live, as tf.function's key holds the device scope.
        key.append(_backends.current())
        return tuple(key), feeds, keep

    def _concrete_for(self, args, kwargs, warn=True, method=False):
        if self.input_signature is not None:
            args, kwargs = self._check_signature(args, kwargs, method), {}
        elif kwargs:
            args, kwargs = self._positional_form(args, kwargs)
        while True:
            try:
                key, feeds, keep = self._key(args, kwargs, method)
            except _UnhashableStatic as e:
                raise TypeError(
                    f"tl.function {self.__name__}: static argument {self._path_of(args, kwargs, e.value)} is a "
                    f"{type(e.value).__name__}, which is not hashable; a static argument selects a graph by its "
                    "value: pass a hashable one (a tuple, a number, a string), or leave the argument traced"
                ) from None
            if self.input_signature is not None:
                feeds = list(args[1:] if method else args)
            base_key, key = key, self._with_state(key)
            hit = self._cached(key)
            if hit is not None:
                return hit, feeds
            try:
                with self._trace_lock:
                    # Another thread may have traced this signature while this one waited.
                    hit = self._cached(key)
                    if hit is not None:
                        return hit, feeds
                    concrete = self._cache.get(key)
                    stale = concrete.stale() if concrete is not None and concrete.guards else None
                    return self._trace(args, kwargs, base_key, keep, stale, warn, method), feeds
            except _NeedsValue as e:
                # The float was needed as a Python value: it is static from now on, and the call traces again.
                for position, name in e.arguments:
                    if position is not None:
                        self._static_pos.setdefault(position, _FLOATS)
                    if name is not None:
                        self._static_names.setdefault(name, _FLOATS)

    def _positional_form(self, args, kwargs):
        """Keyword arguments that fill the next positional parameters move into ``args``, so that ``f(x, y=1.0)``
        and ``f(x, 1.0)`` are one signature and one graph (as TensorFlow's FunctionSpec canonicalizes)."""
        names = self._positional
        n = len(args)
        if n >= len(names) or n < self._positional_only or names[n] not in kwargs:
            return args, kwargs
        args, kwargs = list(args), dict(kwargs)
        while len(args) < len(names) and names[len(args)] in kwargs:
            args.append(kwargs.pop(names[len(args)]))
        return tuple(args), kwargs

    def _path_of(self, args, kwargs, leaf) -> str:
        """The argument path (``idx[1]``) of ``leaf`` in the call."""
        tops = [(self._arg_name(i), a) for i, a in enumerate(args)] + sorted(kwargs.items())
        for name, value in tops:
            for path, v in tree.flatten_with_path(value)[0]:
                if v is leaf:
                    return name + _path_text(path)
        return "?"

    def _with_state(self, key):
        """``key`` and the values of the Python state that earlier traces read (none read: ``key`` itself)."""
        if not self._state:
            return key
        return (*key, ("python state", tuple(_state_value(ref, name) for ref, name, _ in self._state)))

    def _note_state(self, reads) -> None:
        """Add the (owner, name) pairs a trace read to the state that keys the graphs (under the trace lock)."""
        # Keyed by (owner, name): keyed by owner alone, a Module read for two names (training, trainable) kept
        # one of them, the other was added again at every retrace, and the graphs traced before no longer
        # matched their key: batch sizes 4, 4, 3 per epoch retraced twice an epoch, forever, and the list grew.
        known = {(id(ref()), name) for ref, name, _ in self._state if ref() is not None}
        fresh = [(o, n) for o, n in reads if (id(o), n) not in known]
        if not fresh:
            return
        live = [entry for entry in self._state if entry[0]() is not None]
        labels = {label for _, _, label in live}
        for owner, name in fresh:
            label = f"{type(owner).__name__}.{name}"
            k = 2
            while label in labels:
                label, k = f"{type(owner).__name__}#{k}.{name}", k + 1
            labels.add(label)
            live.append((weakref.ref(owner), name, label))
        self._state = tuple(live)

    def _cached(self, key):
        concrete = self._cache.get(key)
        if concrete is None or (concrete.guards and concrete.stale()):
            return None
        self._hits += 1
        try:
            self._cache.move_to_end(key)
        except KeyError:  # evicted by another thread just now: the graph is still valid for this call
            pass
        return concrete

    def _check_signature(self, args, kwargs, method=False):
        """Bind the call to the signature; every argument (after a method's instance) must be a tensor that fits
        its TensorSpec."""
        if kwargs:
            bound = inspect.signature(self.python_function).bind(*args, **kwargs)
            args = bound.args
        instance, args = (args[:1], args[1:]) if method else ((), args)
        specs = self.input_signature
        if len(args) != len(specs):
            raise TypeError(
                f"tl.function {self.__name__}: called with {len(args)} arguments, the input_signature has {len(specs)}"
            )
        out = list(instance)
        for i, (a, spec) in enumerate(zip(args, specs), len(instance)):
            if not isinstance(a, Tensor) and not hasattr(a, "shape"):
                # Converted as an op converts it next to a tensor of the spec's dtype: an int fits a float spec,
                # but 2.5 for an int32 spec becomes float32 and is refused below, never truncated to 2.
                try:
                    a = dispatch.to_tensor(a, _backends.current(), spec.dtype)
                except (OverflowError, TypeError, ValueError) as e:
                    raise type(e)(f"tl.function {self.__name__}: {self._arg_name(i)}: {e}") from None
            shape, dtype = tuple(a.shape), _dtypes.of_array(a.dtype)
            if not spec.is_compatible_with(shape, dtype):
                raise ValueError(
                    f"tl.function {self.__name__}: {self._arg_name(i)} has shape {shape} and dtype "
                    f"{dtype}, which does not fit input_signature[{i - len(instance)}] = {spec}"
                )
            out.append(a)
        return tuple(out)

    def _signature_for(self, args) -> tuple:
        """The input_signature for a call with ``args`` (after a method's instance): a spec of unknown rank takes
        its argument's rank, with every size unknown."""
        if not self._any_rank:
            return self.input_signature
        return tuple(s.with_rank(len(a.shape)) for s, a in zip(self.input_signature, args))

    def _arg_name(self, i: int) -> str:
        """The parameter name of positional argument ``i`` (``args[k]`` for the k-th of ``*args``)."""
        n = len(self._positional)
        return self._positional[i] if i < n else f"{self._varargs or 'args'}[{i - n}]"

    def _describe_call(self, args, kwargs, method=False) -> dict:
        # A method's instance is keyed by identity: say what it is (a new one may have the old one's repr)
        call = {self._arg_name(0): ("object", f"{type(args[0]).__name__} object")} if method else {}
        if self.input_signature is not None:
            call.update(
                (self._arg_name(i), ("tensor", s.shape, s.dtype.name, "signature"))
                for i, s in enumerate(self._signature_for(args[int(method) :]), int(method))
            )
        else:
            for i, a in enumerate(args[int(method) :], int(method)):
                _describe(a, self._arg_name(i), call, self._static_pos.get(i, False))
            for k, v in sorted(kwargs.items()):
                _describe(v, k, call, self._static_names.get(k, False))
        for ref, name, label in self._state:
            call[label] = ("value", repr(_state_value(ref, name)))
        overrides = _grad_registry.override_key()
        call["tl.grad.override"] = (
            "value",
            ", ".join(sorted({t for scope in overrides for t, _ in scope})) + " overridden"
            if overrides
            else "none active",
        )
        call["tl.backend"] = ("value", repr(_backends.current().name))
        return call

    def _trace(self, args, kwargs, key, keep, stale=None, warn=True, method=False):
        call = self._describe_call(args, kwargs, method)
        if self._last_call is None:
            reason = "first call"
        else:
            reason = "; ".join([stale] if stale else _explain(self._last_call, call)) or _identity_reason(call)
        if self._no_retrace and self.trace_count:
            raise AssertionError(
                f"tl.testing.no_retrace: tl.function {self.__name__!r} was retraced "
                f"(trace #{self.trace_count + 1}) because {reason}"
            )
        if self.max_traces is not None and self.trace_count >= self.max_traces:
            raise RuntimeError(
                f"tl.function {self.__name__!r}: tracing again would exceed max_traces="
                f"{self.max_traces}; the new trace is needed because {reason}. Pass a "
                "tl.TensorSpec with None dimensions in input_signature to accept varying sizes, "
                "or pass changing Python values as tensors"
            )
        if self.input_signature is not None:
            args, kwargs = (*args[: int(method)], *self._signature_for(args[int(method) :])), {}
        tops = [(i, self._positional[i] if i < len(self._positional) else None) for i in range(len(args))]
        graph, sources, state_reads = trace_graph(
            self.python_function,
            args,
            kwargs,
            self.__name__,
            [self._arg_name(i) for i in range(len(args))],
            tops,
            (self._static_pos, self._static_names),
            bound=int(method),
        )
        _hold_argument_variables_weakly(graph, args, kwargs)
        self._note_state(state_reads)
        key = self._with_state(key)
        for ref, name, label in self._state:  # what this trace read, for the next retrace's reason
            call[label] = ("value", repr(_state_value(ref, name)))
        concrete = _Concrete(graph, _guards(self.python_function, sources), self._weak_keep(key, keep))
        self._cache[key] = concrete
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
            self._evicted += 1
            if self._evicted == 1:
                warnings.warn(
                    RetracingWarning(
                        f"tl.function {self.__name__!r}: its cache of {self.cache_size} graphs is full; the least "
                        "recently used graphs are dropped from now on (pass changing values as tensors, or raise "
                        "cache_size)"
                    ),
                    stacklevel=4,
                )
        self.trace_count += 1
        self.retrace_reasons.append(reason)
        self._last_call = call
        if warn and self.trace_count > RETRACE_WARNING_AFTER:
            warnings.warn(
                RetracingWarning(
                    f"tl.function {self.__name__!r} was traced {self.trace_count} times; the last retrace was "
                    f"caused by: {reason}. Retracing is slow: use input_signature with None dimensions, pass "
                    "values that change as tensors, or list the arguments meant to retrace in static_argnums"
                ),
                stacklevel=4,
            )
        return concrete

    def _weak_keep(self, key, keep) -> list:
        """Weak references to the objects keyed by identity: when one dies its graph leaves the cache
        (so the cache never keeps a caller's object, or what its graph captured from it, alive)."""
        cache = weakref.ref(self._cache)

        def evict(_ref):
            c = cache()
            if c is not None:
                c.pop(key, None)

        refs = []
        for obj in keep:
            try:
                refs.append(weakref.ref(obj, evict))
            except TypeError:
                refs.append(obj)  # not weakly referenceable: held (the cache is bounded)
        return refs

    def get_graph(self, *args, **kwargs) -> Graph:
        """The traced (unoptimized) Graph for these arguments; a ``tl.TensorSpec`` stands for any tensor
        of its shape and dtype (None: any size)."""
        return self._graph_for((), args, kwargs)

    def _graph_for(self, instance: tuple, args, kwargs) -> Graph:
        """``get_graph`` for a call; ``instance``: ``(the instance,)`` of a method, or ``()``."""
        if self.input_signature is not None and not args and not kwargs:
            args = tuple(s.known_shape(f"tl.function {self.__name__}.get_graph()") and s for s in self.input_signature)
        return self._concrete_for((*instance, *args), kwargs, warn=False, method=bool(instance))[0].graph

    def save(self, path, *args, include_captures: bool = False, **kwargs) -> None:
        """Trace for ``args`` (tensors, arrays or TensorSpecs) and save that graph (see ``Graph.save``)."""
        self.get_graph(*args, **kwargs).save(path, include_captures=include_captures)

    def cache_info(self) -> dict:
        """Traces, cache hits and size, and why each trace happened."""
        return {
            "traces": self.trace_count,
            "hits": self._hits,
            "cached_graphs": len(self._cache),
            "retrace_reasons": list(self.retrace_reasons),
        }

    def __repr__(self):
        return f"<tl.function {self.__name__} ({self.trace_count} traces)>"


def _signature_parameters(fn) -> list:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []


def _parameters(fn) -> tuple:
    """(positional parameter names, the ``*args`` name or None, keyword-only parameter names, whether it
    takes ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return [], "args", [], True
    kinds = inspect.Parameter
    positional = [p.name for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in params if p.kind is kinds.VAR_POSITIONAL), None)
    keyword_only = [p.name for p in params if p.kind is kinds.KEYWORD_ONLY]
    return positional, varargs, keyword_only, any(p.kind is kinds.VAR_KEYWORD for p in params)


def trace_graph(fn, args, kwargs, name: str, arg_names=None, tops=None, static=None, bound: int = 0) -> tuple:
    """Run ``fn`` under a new trace: ``(graph, closed-over objects, [(owner, name) of the Python state it read]``.

    Tensor, array and TensorSpec leaves of the arguments (and Python floats) become placeholders, named by
    ``arg_names`` (default ``args[i]``), but in the arguments that ``static`` (two dicts: position -> mode,
    name -> mode) marks: mode True keeps every leaf a Python value, ``_FLOATS`` the floats only.  ``tops``
    says which (position, name) each argument is; the first ``bound`` arguments (a method's instance) are no
    part of the graph's call signature."""
    static = static or ({}, {})
    first = next((a for a in tree.leaves((args, kwargs)) if isinstance(a, Tensor)), None)
    graph = Graph(name, first.backend if first is not None else _backends.current())
    trace = _Trace(graph)
    arg_names = arg_names or [f"args[{i}]" for i in range(len(args))]
    tops = tops or [(i, None) for i in range(len(args))]
    placed_args = tuple(
        _with_placeholders(a, arg_names[i], trace, tops[i], static[0].get(i, False)) for i, a in enumerate(args)
    )
    placed_kwargs = {
        k: _with_placeholders(v, k, trace, (None, k), static[1].get(k, False)) for k, v in sorted(kwargs.items())
    }
    graph.signature = _call_signature(placed_args[bound:], placed_kwargs, arg_names[bound:], trace)
    # Nodes get the annotate blocks opened in the function (a call's blocks are its runs', whichever traced it).
    outer_scopes = scopes.set(())
    try:
        with dispatch.in_mode(trace):  # tapes recording outside pause: they must not see symbolic nodes
            result = fn(*placed_args, **placed_kwargs)
    finally:
        scopes.reset(outer_scopes)
    leaves, graph.structure = tree.flatten(_float0_constants(result), is_constant=_output_constant)
    graph.outputs = [trace.lift(t) for t in leaves]
    trace.freeze_temporaries()
    trace.drop_unread_temporaries()
    return graph, trace.sources, list(trace.state.values())


def _call_signature(args, kwargs, arg_names, trace):
    """``Graph.signature`` for a trace of ``fn(*args, **kwargs)`` (the placeholders in place), or None where a
    leaf is neither a placeholder nor a Python constant (a Variable argument: a capture)."""
    leaves, treedef = tree.flatten((tuple(args), dict(kwargs)), is_constant=_is_python_constant)
    inputs = [t._id for t in trace.graph.inputs]
    if not all(isinstance(t, Tensor) for t in leaves) or [t._id for t in leaves] != inputs:
        return None
    return list(arg_names[: len(args)]), treedef


def _is_python_constant(value) -> bool:
    return value is None or value.__class__ in (bool, int, float, str)


def _used_values(graph: Graph) -> set:
    """The ``_id`` of every value a node of ``graph`` reads or the graph returns."""
    return {t._id for n in graph.nodes for t in n.inputs} | {t._id for t in graph.outputs}


class _Float0Zeros(tree._Rebuilt):
    """The float0 gradient of an integer argument (``tl.grad(..., allow_int=True)``) in a traced function's result:
    it holds no data, only its shape, so the graph's structure keeps it and each call gets a new array of it."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple):
        self.shape = shape

    def rebuild(self) -> np.ndarray:
        return np.zeros(self.shape, _FLOAT0)

    def __eq__(self, other) -> bool:
        return type(other) is _Float0Zeros and other.shape == self.shape

    def __hash__(self):
        return hash((_Float0Zeros, self.shape))

    def __repr__(self) -> str:
        return f"float0{self.shape}"


def _float0_constants(result):
    """``result`` with each float0 array (the gradient of an integer argument) as a :class:`_Float0Zeros`."""
    return tree.map(lambda v: _Float0Zeros(v.shape) if isinstance(v, np.ndarray) and v.dtype == _FLOAT0 else v, result)


def _output_constant(value) -> bool:
    """Whether a leaf of a traced function's result is a Python constant (kept in the graph's structure
    and returned as it is); a leaf that is neither that nor a Tensor is an error."""
    if isinstance(value, Tensor):
        return False
    if isinstance(value, (bool, int, float, str, _Float0Zeros)):
        return True
    raise TypeError(
        f"tl.function: the function returned a {type(value).__name__} ({value!r:.60}); "
        "return tensors, Python numbers, strings, None, or tuples/lists/dicts of them"
    )


def function(
    fn=None,
    *,
    input_signature=None,
    max_traces: int | None = None,
    static_argnums=(),
    static_argnames=(),
    cache_size: int = CACHE_SIZE,
):
    """Trace ``fn`` into a graph once per input signature and run the optimized graph.

    The signature is the shapes, dtypes and backends of the tensor and NumPy
    arguments, the values of the other arguments, the active
    ``tl.grad.override`` scopes, and the identity of the objects the function
    closes over.  Python floats are fed as weak scalar inputs (a changing
    learning rate does not retrace) unless their argument is listed in
    ``static_argnums``/``static_argnames`` (or the function needs the float
    as a Python value, which makes it static by itself).  Each retrace records
    why it happened (``f.retrace_reasons``, naming parameters); after a few it
    warns, and ``max_traces=N`` makes the next one raise.  At most
    ``cache_size`` graphs are kept (least recently used out, with a warning).
    ``input_signature=[tl.TensorSpec((None, 3))]`` gives one graph for every
    batch size.

    >>> import tensorlib as tl
    >>> @tl.function
    ... def f(x, scale=2.0):
    ...     return tl.sum(x * scale)
    >>> float(f(tl.tensor([1.0, 2.0]), 2.0)), float(f(tl.tensor([3.0, 4.0]), 0.5)), f.trace_count
    (6.0, 3.5, 1)
    >>> _ = f(tl.tensor([1.0, 2.0, 3.0]), 2.0); f.retrace_reasons[-1]
    'x.shape[0]: 2 -> 3'
    >>> g = tl.function(lambda x, power: x ** power, static_argnums=1)
    >>> [float(g(tl.tensor(2.0), p)) for p in (2.0, 3.0)], g.trace_count
    ([4.0, 8.0], 2)
    """
    options = dict(
        input_signature=input_signature,
        max_traces=max_traces,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        cache_size=cache_size,
    )
    if fn is None:
        return lambda f: Function(f, **options)
    return Function(fn, **options)


@contextlib.contextmanager
def no_retrace(*functions):
    """Inside the block, tracing an already-traced ``tl.function`` again raises AssertionError with the reason.

    >>> import tensorlib as tl
    >>> f = tl.function(lambda x: x + 1.0)
    >>> _ = f(tl.tensor([1.0]))
    >>> with no_retrace(f):
    ...     _ = f(tl.tensor([2.0]))
    """
    for f in functions:
        if not isinstance(f, Function):
            raise TypeError(f"no_retrace: expected tl.function objects, got {type(f).__name__}")
        f._no_retrace += 1
    try:
        yield
    finally:
        for f in functions:
            f._no_retrace -= 1
