"""The executor: an optimized Graph compiled to a flat plan over numbered slots.

Every node's kernel is looked up once.  The first run interprets the plan
node by node, checks each kernel's result against its node's shape rule as an
eager call is checked (``KernelResultError`` naming the op and the kernel),
and records which kernel results need a type or dtype fix; from
the second on, a tight loop runs the compiled plan: each step reads its
inputs from slots, calls its bound kernel and writes its outputs to slots,
then clears the slots of values it was the last user of (the memory plan: an
intermediate lives exactly as long as something still needs it).  No code is
generated or compiled.  Profilers (``dispatch.observers``) see every node
of the same compiled plan, timed step by step; a graph called under a recording
GradientTape (or inside another trace) is replayed op by op through
``dispatch.apply``, so tapes see every op.

>>> import tensorlib as tl
>>> f = tl.function(lambda x: tl.exp(x) * 2.0)
>>> x = tl.tensor([0.0, 1.0, 2.0])
>>> y = f(x); y = f(x)
>>> print(f.get_graph(x).optimize().executable().plan_text())
v2 = Exp(v0); free v0
v3 = Mul(v2, c1); free v2
return v3
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time

import numpy as np

from .. import dispatch
from .. import dtypes as _dtypes
from .. import tree
from ..tensor import Tensor, Variable, make, scopes
from .ir import ASSIGN, UPDATES, Graph, _nbytes
from .passes import optimized


class _Step:
    __slots__ = ("node", "kernel", "inputs", "outputs", "multi", "frees")

    def __init__(self, node, kernel, inputs, outputs, multi):
        self.node, self.kernel, self.inputs, self.outputs, self.multi = node, kernel, inputs, outputs, multi
        self.frees = ()


class Executable:
    """A graph ready to run: ``run(feeds, targets)`` over raw backend arrays.

    The first run interprets the plan node by node and records which kernel
    results need a type or dtype fix; the second compiles the plan into
    straight-line Python (see :attr:`source`) that every later run calls.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        if graph.quiet:
            self.run = self._run_quiet
        names = graph.value_names()
        self.local = {k: "v" + v[1:] for k, v in names.items()}
        used = {t._id for n in graph.nodes for t in n.inputs} | {t._id for t in graph.outputs}
        self.capture_slots = [i for i, c in enumerate(graph.captures) if c.tensor._id in used]
        self.assigned = []  # capture index of each AssignVariable target, in step order
        capture_index = {c.tensor._id: i for i, c in enumerate(graph.captures)}
        self.params = [t._id for t in graph.inputs] + [graph.captures[i].tensor._id for i in self.capture_slots]
        self.steps = []
        for node in graph.nodes:
            if node.op is ASSIGN:
                self.assigned.append(capture_index[node.inputs[0]._id])
                self.steps.append(_Step(node, None, [t._id for t in node.inputs], [], False))
                continue
            backend = node.inputs[0].backend if node.inputs else graph.backend
            kernel = node.op.kernels.get(backend.name) or node.op.resolve_kernel(backend)
            multi = isinstance(node.op.infer(*node.inputs, **node.attrs), tuple)
            self.steps.append(_Step(node, kernel, [t._id for t in node.inputs], [o._id for o in node.outputs], multi))
        # Assigning a fed or constant array as it is would let the Variable alias the caller's memory.
        produced = {o._id for n in graph.nodes for o in n.outputs}
        self.copied_assigns = {
            k for k, step in enumerate(self.steps) if step.kernel is None and step.inputs[1] not in produced
        }
        self._plan_frees()
        self.fixups = None  # steps whose results need a type/dtype fix (known after the first run)
        self._views = None  # step -> the inputs its results were views of on the first run
        self._program = None
        self._pooled = None  # the program writing into self._buffers, or None when nothing is pooled
        self._buffers = []  # the buffer pool: raw bytes, kept from run to run
        self.buffer_of: dict = {}  # step -> buffer index, for the steps that write into the pool
        self._pool_lock = threading.Lock()  # one run at a time uses the pool (a concurrent one allocates); compiling

    def _plan_frees(self):
        """Free each value right after its last use: graph outputs and constants are never freed."""
        keep = {t._id for t in self.graph.outputs} | set(self.graph.constants)
        last = {v: -1 for v in self.params}
        for k, step in enumerate(self.steps):
            for v in step.inputs:
                last[v] = k
            for v in step.outputs:
                last.setdefault(v, k)
        by_step: dict = {}
        for v, k in last.items():
            if v not in keep:
                by_step.setdefault(k, []).append(v)
        self.initial_frees = by_step.get(-1, [])
        for k, step in enumerate(self.steps):
            step.frees = by_step.get(k, [])

    def plan_text(self) -> str:
        """The compiled plan, one line per step (for reading; ``c`` marks constants)."""
        graph, local = self.graph, self.local

        def name(v):
            return local[v].replace("v", "c", 1) if v in graph.constants else local[v]

        lines = []
        for k, step in enumerate(self.steps):
            free = f"; free {', '.join(name(v) for v in step.frees)}" if step.frees else ""
            if self.fixups is not None and k in self.fixups:
                free = "; fix type" + free
            if step.kernel is None:
                lines.append(f"assign {name(step.inputs[0])} := {name(step.inputs[1])}{free}")
            else:
                outs = ", ".join(name(v) for v in step.outputs)
                into = f" into {_buffer_text(self.buffer_of[k])}" if k in self.buffer_of else ""
                lines.append(f"{outs} = {step.node.op_type}({', '.join(name(v) for v in step.inputs)}){into}{free}")
        lines.append("return " + ", ".join(name(t._id) for t in graph.outputs))
        return "\n".join(lines)

    def _compile(self):
        """The flat plan: values numbered into slots, one tuple per step, constants pre-filled."""
        graph = self.graph
        slot = {}
        for v in list(self.params) + list(graph.constants):
            slot.setdefault(v, len(slot))
        for step in self.steps:
            for v in step.outputs:
                slot.setdefault(v, len(slot))
        template = [None] * len(slot)
        for v, (t, raw) in graph.constants.items():
            template[slot[v]] = raw
        program = []
        for k, step in enumerate(self.steps):
            ins = tuple(slot[v] for v in step.inputs)
            frees = tuple(slot[v] for v in step.frees)
            if step.kernel is None:
                program.append((_ASSIGN, None, ins, k in self.copied_assigns, None, frees, step.node))
                continue
            outs = tuple(slot[v] for v in step.outputs)
            attrs = step.node.attrs or None
            fixes = (
                tuple((o, o.backend, step.node.op, step.kernel) for o in step.node.outputs)
                if k in self.fixups
                else None
            )
            if attrs is None and fixes is None and not step.multi and len(ins) in (1, 2):
                # The common steps: one or two inputs, one output, no attributes, nothing to fix.
                program.append((len(ins), step.kernel, ins[0], ins[-1], outs[0], frees, step.node))
            else:
                program.append(
                    (_GENERAL, step.kernel, ins, (attrs, fixes), outs if step.multi else outs[0], frees, step.node)
                )
        self._template = template
        self._param_slots = tuple(slot[v] for v in self.params)
        self._output_slots = tuple(slot[t._id] for t in graph.outputs)
        self._plan_buffers()
        if self.buffer_of:
            self._pooled = self._pooled_program(program)
        self._program = program  # last: a run that sees it sees everything above

    def _plan_buffers(self):
        """Which steps write into pooled buffers, and which buffer each gets (``self.buffer_of``).

        A result is pooled when its op has an ``out_kernel`` for its backend, it has a static shape of
        at least :data:`POOL_MIN_BYTES`, its step needed no fix on the first run, and neither it nor
        anything viewing it (the views seen on the first run) is returned or assigned to a Variable.
        A buffer is busy from its step to the last use of its value or of any view of it; a free
        buffer is reused (the smallest that fits, else the largest, grown); an ``inplace`` kernel
        takes the buffer of an input that dies at that step.  ``buffer_of[step]`` is the buffer of a
        single-output step, or per output the buffer or None for a multi-output step.
        """
        steps, graph = self.steps, self.graph
        escaping = {t._id for t in graph.outputs} | {s.inputs[1] for s in steps if s.kernel is None}
        candidates = {}  # step -> (out_kernel entry, indices of the outputs it writes into buffers)
        for k, step in enumerate(steps):
            entry = _out_kernel(step)
            if entry is not None and k not in self.fixups:
                pooled = tuple(
                    i
                    for i, out in enumerate(step.node.outputs)
                    if None not in out.shape
                    and _nbytes(out.shape, out.dtype) >= POOL_MIN_BYTES
                    and step.outputs[i] not in escaping
                )
                if pooled:
                    candidates[k] = (entry, pooled)
        last = {}
        for k, step in enumerate(steps):
            for v in step.inputs:
                last[v] = k
        while True:
            # roots[v]: the pooled results whose memory v may be (themselves, or views of them)
            roots: dict = {}
            for k, step in enumerate(steps):
                pooled = candidates[k][1] if k in candidates else ()
                viewed = set().union(*(roots.get(v, ()) for v in self._views.get(k, ())))
                for i, v in enumerate(step.outputs):
                    if i in pooled:
                        roots[v] = {v}
                    elif viewed:
                        roots[v] = viewed
            end = {steps[k].outputs[i]: k for k, (_, pooled) in candidates.items() for i in pooled}
            escaped = set()
            for v, rs in roots.items():
                for r in rs:
                    end[r] = max(end[r], last.get(v, -1))
                    if v in escaping:
                        escaped.add(r)
            if not escaped:
                break
            candidates = {
                k: (entry, kept)
                for k, (entry, pooled) in candidates.items()
                if (kept := tuple(i for i in pooled if steps[k].outputs[i] not in escaped))
            }
        sizes: list = []
        free: list = []
        holder: dict = {}  # value -> buffer, while the value (or a view of it) is alive
        release: dict = {}
        self.buffer_of = {}
        for k, step in enumerate(steps):
            if k in candidates:
                (_, inplace), pooled = candidates[k]
                taken = [None] * len(step.outputs)
                for i in pooled:
                    value, out = step.outputs[i], step.node.outputs[i]
                    buffer = None if step.multi else self._inplace_buffer(step, k, inplace, holder, end, roots)
                    if buffer is not None:
                        release[k].remove(buffer)
                    else:
                        buffer = _best_fit(free, sizes, _nbytes(out.shape, out.dtype))
                        if buffer is None:
                            buffer = len(sizes)
                            sizes.append(0)
                        sizes[buffer] = max(sizes[buffer], _nbytes(out.shape, out.dtype))
                    holder[value] = buffer
                    release.setdefault(max(end[value], k), []).append(buffer)
                    taken[i] = buffer
                self.buffer_of[k] = tuple(taken) if step.multi else taken[0]
            free.extend(release.pop(k, ()))
        self._buffer_sizes = sizes

    @staticmethod
    def _inplace_buffer(step, k, inplace, holder, end, roots):
        """The buffer of an input an ``inplace`` single-output kernel may overwrite at step ``k``, or None."""
        out = step.node.outputs[0]

        def may_write(i):
            return inplace is True or (inplace and i in inplace)

        for i, v in enumerate(step.inputs):
            t = step.node.inputs[i]
            if (
                # every input the value is (ReluGrad(h, h)) must be one the kernel may write over
                all(may_write(j) for j, u in enumerate(step.inputs) if u == v)
                and v in holder
                and end[v] == k
                and t.shape == out.shape
                and t.dtype == out.dtype
                # no other input may view that memory in another layout (a blocked kernel
                # would read what it already overwrote)
                and not any(u != v and v in roots.get(u, ()) for u in step.inputs)
            ):
                return holder.pop(v)
        return None

    def _pooled_program(self, program):
        """``program`` with the pooled steps writing into their buffers (allocated here, kept)."""
        self._buffers = [np.empty(size, np.uint8) for size in self._buffer_sizes]
        views: dict = {}

        def view(buffer, out):
            key = (buffer, out.shape, out.dtype)
            if key not in views:
                views[key] = self._buffers[buffer][: _nbytes(out.shape, out.dtype)].view(out.dtype).reshape(out.shape)
            return key

        keys = {}
        for k, taken in self.buffer_of.items():
            outs = self.steps[k].node.outputs
            keys[k] = (
                tuple(None if b is None else view(b, o) for b, o in zip(taken, outs))
                if self.steps[k].multi
                else (view(taken, outs[0]))
            )
        # A buffer is free when only the pool and its typed views hold it: a view of it held anywhere
        # else (a kernel that kept one, a view the first run did not show) makes the step allocate.
        expected = {key: _pool_refs(v) for key, v in views.items()}
        pooled = list(program)
        for k, key in keys.items():
            step, entry = self.steps[k], program[k]
            ins = (entry[2],) if entry[0] == 1 else (entry[2], entry[3]) if entry[0] == 2 else entry[2]
            if step.multi:
                targets = tuple(None if q is None else (views[q], expected[q]) for q in key)
                plan = (step.node.attrs or {}, targets)
                pooled[k] = (_POOLED_MULTI, _out_kernel(step)[0], ins, plan, entry[4], entry[5], entry[6])
            else:
                plan = (step.node.attrs or {}, views[key], step.kernel, expected[key])
                pooled[k] = (_POOLED, _out_kernel(step)[0], ins, plan, entry[4], entry[5], entry[6])
        self._pool_ids = frozenset(id(buffer) for buffer in self._buffers)
        return pooled

    def _run_quiet(self, feeds, targets):
        """:meth:`run` with NumPy's floating-point warnings off, as eager: the ``run`` of a graph that calls
        tl.stats (``Graph.quiet``), chosen once in ``__init__`` so that other graphs' runs pay nothing for it."""
        with np.errstate(all="ignore"):
            return Executable.run(self, feeds, targets)

    def run(self, feeds, targets):
        """Raw outputs for raw ``feeds`` (inputs, then the used captures) and assignment ``targets``."""
        if self.fixups is None:
            return self._interpret(feeds, targets, list(dispatch.observers))
        if self._program is None:
            with self._pool_lock:  # threads calling a new graph at once compile it once
                if self._program is None:
                    self._compile()
        # Observers (profilers, numerics checks) see the compiled plan, pooled buffers and all, timed
        # step by step: what they measure is what an unobserved run does.
        execute = self._execute_observed if dispatch.observers else self._execute
        if self._pooled is not None and self._pool_lock.acquire(blocking=False):
            try:
                return execute(self._pooled, feeds, targets, self._pool_ids)
            finally:
                self._pool_lock.release()
        return execute(self._program, feeds, targets, ())

    def _execute(self, program, feeds, targets, pool):
        env = self._template.copy()
        for i, value in zip(self._param_slots, feeds):
            env[i] = value
        assigns = iter(targets)
        node = None
        try:
            for kind, kernel, a, b, out, frees, node in program:
                if kind == 1:
                    env[out] = kernel(env[a])
                elif kind == 2:
                    env[out] = kernel(env[a], env[b])
                elif kind == _POOLED:
                    _run_pooled(env, kernel, a, out, *b)
                elif kind == _POOLED_MULTI:
                    _run_pooled_multi(env, kernel, a, out, *b)
                elif kind == _ASSIGN:
                    value = env[a[1]]
                    copy = b or (pool and _owner(value) in pool) or _fed_memory(value, feeds)
                    _assign(next(assigns), value.copy() if copy else value)
                else:
                    _run_general(env, kernel, a, out, *b)
                for i in frees:
                    env[i] = None
        except Exception as e:
            if node is not None:
                self._note(e, node)
            raise
        if pool:
            # The plan returns no pooled memory; this guards against views the first run did not show.
            return tuple(r.copy() if _owner(r) in pool else r for r in (env[i] for i in self._output_slots))
        return tuple(env[i] for i in self._output_slots)

    def _execute_observed(self, program, feeds, targets, pool):
        """:meth:`_execute` with every step's kernel timed and reported to the observers, as
        :meth:`_interpret` reports nodes."""
        observers = list(dispatch.observers)
        return self._execute([_observed(entry, observers, pool) for entry in program], feeds, targets, pool)

    def _interpret(self, feeds, targets, observers):
        """One node at a time: records the fixes kernels need, times and reports nodes to ``observers``."""
        graph = self.graph
        env = dict(zip(self.params, feeds))
        env.update({k: raw for k, (t, raw) in graph.constants.items()})
        targets = iter(targets)
        fixups = set()
        views = {} if self.fixups is None else None  # the first run records which results are views
        for k, step in enumerate(self.steps):
            try:
                with _in_scope(step.node) if observers else _NO_SCOPE:
                    self._interpret_step(k, step, env, targets, observers, fixups, views, feeds)
            except Exception as e:
                self._note(e, step.node)
                raise
            for v in step.frees:
                env.pop(v, None)
        if self.fixups is None:
            self.fixups, self._views = fixups, views
        return tuple(env[t._id] for t in graph.outputs)

    def _interpret_step(self, k, step, env, targets, observers, fixups, views, feeds):
        node = step.node
        args = [env[v] for v in step.inputs]
        if step.kernel is None:
            copy = k in self.copied_assigns or _fed_memory(args[1], feeds)
            _assign(next(targets), args[1].copy() if copy else args[1])
            return
        backend = node.outputs[0].backend if node.outputs else self.graph.backend
        start = time.perf_counter()
        raw = step.kernel(*args, **node.attrs)
        if observers:
            backend.synchronize()
        seconds = time.perf_counter() - start
        # Checked as dispatch checks an eager call (None, wrong shape or count, truncating dtype raise
        # KernelResultError naming the op and kernel); the compiled runs after this one trust the kernel.
        checked = dispatch._wrap(
            raw, tuple(node.outputs) if step.multi else node.outputs[0], backend, node.op, step.kernel
        )
        raws = []
        for r, t in zip(raw if step.multi else (raw,), checked if step.multi else (checked,)):
            if t._value is not r:
                fixups.add(k)
            raws.append(t._value)
        env.update(zip(step.outputs, raws))
        if views is not None:
            seen = [v for v, a in zip(step.inputs, args) if any(_may_view(r, a) for r in raws)]
            if seen:
                views[k] = seen
        if observers:
            inputs = tuple(make(a, t.backend, a.shape, t.dtype) for a, t in zip(args, node.inputs))
            outputs = tuple(make(r, o.backend, r.shape, o.dtype) for r, o in zip(raws, node.outputs))
            _tell(observers, node, inputs, outputs, step.multi, seconds, step.kernel, backend)

    def _note(self, error, node):
        if hasattr(error, "add_note"):
            names = self.graph.value_names()
            ins = ", ".join(f"{names[t._id]}: {t.dtype}{list(t.shape)}" for t in node.inputs)
            error.add_note(
                f"while running node {node.op_type}({ins}) of graph {self.graph.name!r}, "
                f"traced at {node.site or '<unknown>'}"
            )


_GENERAL, _ASSIGN, _POOLED, _POOLED_MULTI = 3, 4, 5, 6
_NO_SCOPE = contextlib.nullcontext()

# Results at least this big are written into pooled buffers (when their op has an out_kernel): below
# it malloc recycles freed blocks without touching new pages, and the pooled call's extra keyword
# argument and reference check (about 0.3 us) would be a measurable share of a small op.
POOL_MIN_BYTES = 64 * 1024


def _out_kernel(step):
    """(kernel writing into ``out=``, inplace) for a step's backend, or None."""
    if step.kernel is None:
        return None
    return step.node.op.out_kernels.get(step.node.outputs[0].backend.name)


def _buffer_text(taken) -> str:
    """``b3``, or ``(b3, -)`` for a multi-output step (``-``: that result is not pooled)."""
    if isinstance(taken, tuple):
        return "(" + ", ".join("-" if b is None else f"b{b}" for b in taken) + ")"
    return f"b{taken}"


def _best_fit(free: list, sizes: list, need: int):
    """Take from ``free`` the smallest buffer of at least ``need`` bytes, else the largest (to be grown)."""
    if not free:
        return None
    fits = [b for b in free if sizes[b] >= need]
    buffer = min(fits, key=sizes.__getitem__) if fits else max(free, key=sizes.__getitem__)
    free.remove(buffer)
    return buffer


def _pool_refs(view) -> int:
    """References to the pooled buffer under ``view`` (the same expression at planning and at run time)."""
    return sys.getrefcount(view.base)


def _may_view(result, arg) -> bool:
    """Could ``result`` be (a view of) ``arg``'s memory?  Bounds only; other array types: assume so."""
    if result.__class__ is np.ndarray and arg.__class__ is np.ndarray:
        return np.may_share_memory(result, arg)
    return result is arg or not isinstance(result, np.ndarray)


def _owner(value) -> int:
    """id of the array owning ``value``'s memory (views of a pooled buffer have it as their base)."""
    base = getattr(value, "base", None)
    return id(value if base is None else base)


def _run_pooled(env, kernel, ins, out, attrs, buffer, allocate, expected):
    """A step writing into its pooled ``buffer``, unless something outside the plan still views it."""
    args = [env[i] for i in ins]
    if _pool_refs(buffer) == expected:
        env[out] = kernel(*args, out=buffer, **attrs)
    else:
        env[out] = allocate(*args, **attrs)


def _run_pooled_multi(env, kernel, ins, outs, attrs, targets):
    """A multi-output step writing each pooled result into its buffer (``targets``: per output, the
    buffer's view and its expected reference count, or None); a buffer something outside the plan
    still views is passed as None, and the kernel allocates that result."""
    args = [env[i] for i in ins]
    out = tuple(None if t is None or _pool_refs(t[0]) != t[1] else t[0] for t in targets)
    for i, r in zip(outs, kernel(*args, out=out, **attrs)):
        env[i] = r


def _observed(entry, observers, pool):
    """A compiled step whose kernel (and a pooled step's allocating fallback) reports to ``observers``."""
    kind, kernel, a, b, out, frees, node = entry
    if kind == _ASSIGN:
        return entry
    multi = out.__class__ is not int
    if kind == _POOLED:
        attrs, buffer, allocate, expected = b
        b = (attrs, buffer, _reporting(allocate, node, multi, None, observers, pool), expected)
    fixes = b[1] if kind == _GENERAL else None
    return (kind, _reporting(kernel, node, multi, fixes, observers, pool), a, b, out, frees, node)


def _reporting(kernel, node, multi, fixes, observers, pool):
    """``kernel``, timed, its inputs and results reported to ``observers`` (results as the step fixes them)."""
    backend = node.outputs[0].backend

    def run(*args, **kwargs):
        with _in_scope(node):
            start = time.perf_counter()
            result = kernel(*args, **kwargs)
            backend.synchronize()
            seconds = time.perf_counter() - start
            results = result if multi else (result,)
            if fixes is not None:
                results = [dispatch.fit_result(r, *fix) for r, fix in zip(results, fixes)]
            # Observers get new views of pooled memory: one they keep counts as a reference to the
            # buffer, so the next run's step allocates instead of overwriting it.
            shown = [r.view() if pool and _owner(r) in pool else r for r in (*args, *results)]
            values = [make(r, t.backend, r.shape, t.dtype) for r, t in zip(shown, (*node.inputs, *node.outputs))]
            _tell(observers, node, values[: len(args)], values[len(args) :], multi, seconds, kernel, backend)
        return result

    return run


@contextlib.contextmanager
def _in_scope(node):
    """The block runs inside the ``tl.profiler.annotate`` blocks ``node`` was traced in, nested in the current
    ones: observers see its run there, as they would see its op eagerly, and a control-flow node's subgraph
    steps (whose scopes are relative to the node) inside it."""
    if not node.scope:
        yield
        return
    token = scopes.set(scopes.get() + node.scope)
    try:
        yield
    finally:
        scopes.reset(token)


def _tell(observers, node, inputs, outputs, multi, seconds, kernel, backend):
    """Report a run of ``node`` to ``observers`` (called inside :func:`_in_scope`)."""
    for obs in observers:
        obs.on_op(
            node.op,
            tuple(inputs),
            tuple(outputs) if multi else outputs[0],
            node.attrs,
            seconds,
            kernel,
            backend,
            mode="graph",
            phase=node.phase,
        )


def _run_general(env, kernel, ins, out, attrs, fixes):
    """A step with attributes, several inputs or outputs, or results to fix."""
    args = [env[i] for i in ins]
    result = kernel(*args) if attrs is None else kernel(*args, **attrs)
    if out.__class__ is int:
        env[out] = result if fixes is None else dispatch.fit_result(result, *fixes[0])
    else:
        for i, r, fix in zip(out, result, fixes or [None] * len(out)):
            env[i] = r if fix is None else dispatch.fit_result(r, *fix)


def _fed_memory(value, feeds) -> bool:
    """Whether ``value`` may be a fed array or a view of one (a caller's array, read by reference): a Variable
    assigned it would change when the caller writes to that array.  Fresh kernel results are no views."""
    if any(value is f for f in feeds):
        return True
    if getattr(value, "base", None) is None:
        return False
    return any(
        value.__class__ is not np.ndarray or f.__class__ is not np.ndarray or np.may_share_memory(value, f)
        for f in feeds
    )


def _assign(var, raw):
    """An AssignVariable step: the same rules as ``Variable.assign`` in eager mode."""
    if not isinstance(var, Variable):
        raise TypeError(f"the graph assigns to its capture; pass a tl.Variable for it, got {type(var).__name__}")
    dispatch.check_assignable(var)
    dispatch.log_assign(var)
    dispatch.put_value(var, raw, "graph")


# ---------------------------------------------------------------- calling a graph
def run(graph: Graph, leaves, sources=None):
    """Run ``graph`` on its tensor arguments ``leaves`` (Tensors or arrays, in ``graph.inputs`` order)."""
    if sources is None:
        sources = [c.source for c in graph.captures]
    assigned = _assigned_captures(graph)
    if assigned and not dispatch.modes:
        # The run reads the Variables it assigns (fed at the start) and writes them at its end: under their
        # locks, so that the same graph (or an eager assign_add) running in another thread loses no update.
        held = dispatch.hold_variables([sources[i] for i in assigned])
        try:
            return _run(graph, leaves, sources)
        finally:
            dispatch.release_variables(held)
    return _run(graph, leaves, sources)


def _run(graph: Graph, leaves, sources):
    if dispatch.modes or (dispatch.tapes and _recorded(graph, leaves, sources)):
        # A custom gradient's grad_fn reads the tensors of the graph as traced, not of its optimized copy.
        flat = replay(graph if _has_custom_gradient(graph) else optimized(graph, keep_gradients=True), leaves, sources)
    else:
        exe = graph.__dict__.get("_runner") or runner(graph)
        feeds = [
            x._value if x.__class__ is Tensor and x.backend is t.backend else _raw(x, t)
            for x, t in zip(leaves, graph.inputs)
        ]
        feeds += [_raw(sources[i], graph.captures[i].tensor) for i in exe.capture_slots]
        raws = exe.run(feeds, [sources[i] for i in exe.assigned])
        callers = [
            f
            for f, x in zip(feeds, list(leaves) + [sources[i] for i in exe.capture_slots])
            if not isinstance(x, Tensor)
        ]
        if callers:
            raws = [_owned(r, callers) for r in raws]
        flat = [make(r, t.backend, r.shape, t.dtype) for r, t in zip(raws, graph.outputs)]
        weak = _weak_outputs(graph)
        if weak:
            for i in weak:
                flat[i].__class__ = dispatch.WeakScalar
    return tree.unflatten(graph.structure, flat)


def _weak_outputs(graph: Graph) -> tuple:
    """Positions of the outputs computed from Python-float arguments and literals alone, looked up once per
    graph: a call returns them weakly typed, as eagerly they are Python numbers (JAX returns weakly typed
    arrays), so ``x32 + f(lr)`` stays float32.  (Replayed inside a trace, the trace marks them itself.)"""
    found = graph.__dict__.get("_weak_outputs")
    if found is None:
        found = graph._weak_outputs = tuple(
            i for i, t in enumerate(graph.outputs) if t.__class__ is dispatch.WeakScalar
        )
    return found


def _owned(raw, callers):
    """``raw``, copied if it is (a view of) a caller's array: a result never changes after it is returned."""
    for f in callers:
        if raw is f or np.may_share_memory(raw, f):
            return raw.copy()
    return raw


def _raw(value, placeholder):
    """The raw array to feed for ``placeholder``: a Tensor's value, or an array converted to its dtype."""
    if isinstance(value, Tensor):
        if value.backend is not placeholder.backend:
            raise ValueError(
                f"graph input is on backend {value.backend.name}, the graph expects "
                f"{placeholder.backend.name}; move it with tl.tensor(x, backend=...)"
            )
        return value._value
    backend = placeholder.backend
    if backend.name == "numpy" and isinstance(value, np.ndarray):
        return value if value.dtype == placeholder.dtype else value.astype(placeholder.dtype)
    return backend.asarray(value, dtype=placeholder.dtype)


def _recorded(graph, leaves, sources) -> bool:
    """Would an active tape record this call?  (It watches an argument or a capture, or reads variables.)"""
    for tape in dispatch.tapes:
        watched = tape._watched
        for x in leaves:
            if isinstance(x, Tensor) and x._id in watched:
                return True
        for c, s in zip(graph.captures, sources):
            if isinstance(s, Tensor) and (
                s._id in watched or (isinstance(s, Variable) and s.trainable and tape._watch_accessed_variables)
            ):
                return True
    return False


def _assigned_captures(graph: Graph) -> tuple:
    """The positions of the captures ``graph`` assigns: looked up once per graph (a traced graph does not change)."""
    found = graph.__dict__.get("_assigned_captures")
    if found is None:
        index = {c.tensor._id: i for i, c in enumerate(graph.captures)}
        found = graph._assigned_captures = tuple(
            sorted({index[node.inputs[0]._id] for node in graph.nodes if node.op is ASSIGN})
        )
    return found


def _has_custom_gradient(graph: Graph) -> bool:
    """Whether ``graph`` holds a CustomGradient node: looked up once per graph (a traced graph does not change)."""
    found = graph.__dict__.get("_has_custom_gradient")
    if found is None:
        found = graph._has_custom_gradient = any(node.op.name == "CustomGradient" for node in graph.nodes)
    return found


def _reading(grad_fn, env):
    """A custom gradient's ``grad_fn`` that reads this replay's values (``env``) where it closed over the
    graph's symbolic tensors while tracing (``lambda dy: dy * y``, ``y`` made in the traced function)."""

    @functools.wraps(grad_fn)  # prints as the user's grad_fn
    def replayed(*args, **kwargs):
        with dispatch.rebinding(env):
            return grad_fn(*args, **kwargs)

    return replayed


def replay(graph: Graph, leaves, sources):
    """Run the graph op by op through ``dispatch.apply``: tapes record it and an outer trace inlines it."""
    env = {t._id: x for t, x in zip(graph.inputs, leaves)}
    env.update({c.tensor._id: s for c, s in zip(graph.captures, sources)})
    for t, raw in graph.constants.values():
        value = make(raw, t.backend, raw.shape, t.dtype)
        if t.__class__ is not Tensor:
            value.__class__ = t.__class__
        env[t._id] = value
    for node in graph.nodes:
        args = tuple(env[t._id] for t in node.inputs)
        if node.op is ASSIGN:
            if not isinstance(args[0], Variable):
                raise TypeError(
                    f"the graph assigns to its capture; pass a tl.Variable for it, got {type(args[0]).__name__}"
                )
            how = node.attrs.get("how", "assign")
            dispatch.assign_variable(args[0], args[1], how)
            if how in UPDATES:  # later ops read the update's value as the Variable, as eagerly (tapes see reads of it)
                env[node.inputs[1]._id] = args[0]
            continue
        attrs = node.attrs
        if node.op.name == "CustomGradient":
            attrs = dict(attrs, grad_fn=_reading(attrs["grad_fn"], env))
        with _in_scope(node):  # profiles and an outer trace see the annotate blocks it was traced in
            outs = dispatch.apply(node.op, args, attrs)
        env.update(zip((o._id for o in node.outputs), outs if isinstance(outs, tuple) else (outs,)))
    return [
        x if isinstance(x, Tensor) else dispatch.to_tensor(x, t.backend, t.dtype)
        for x, t in ((env[t._id], t) for t in graph.outputs)
    ]


# A graph's compiled forms are kept on the graph itself: an Executable holds its graph, so a weak-keyed table
# of them would keep every graph ever run (its captures and buffer pools too) alive; a graph and what hangs
# on it are one garbage cycle instead.


def executable(graph: Graph) -> Executable:
    """``graph.executable()``: this graph compiled for the executor, once per graph."""
    exe = graph.__dict__.get("_executable")
    if exe is None:
        exe = graph._executable = Executable(graph)
    return exe


def runner(graph: Graph) -> Executable:
    """What ``graph(...)`` runs: the optimized graph compiled, once per graph."""
    exe = graph.__dict__.get("_runner")
    if exe is None:
        exe = graph._runner = executable(optimized(graph))
    return exe


def _structured(graph: Graph, args, kwargs) -> tuple:
    """``(flat arguments, captures)`` of a call ``graph(*args, **kwargs)`` made as the traced function was called
    (nested arguments, keywords; see ``Graph.signature``).  A call of the flat tensors alone is flat, as before."""
    names, treedef = graph.signature
    positional, by_name = treedef.children
    parameters = set(names) | set(by_name.meta)
    call_kwargs = {k: v for k, v in kwargs.items() if k in parameters}
    captures = {k: v for k, v in kwargs.items() if k not in parameters}
    flat = not by_name.meta and all(c.kind == "leaf" for c in positional.children)
    if not call_kwargs and (flat or len(args) == len(graph.inputs) and all(_flat_input(a) for a in args)):
        return args, captures  # the flat inputs, as before (checked as before)
    args = list(args)
    while len(args) < len(names) and names[len(args)] in call_kwargs:  # a positional parameter by name
        args.append(call_kwargs.pop(names[len(args)]))
    leaves = []
    where = f"graph {graph.name!r}"
    if len(args) != len(names) or set(call_kwargs) != set(by_name.meta):
        given = [*names[: len(args)], *sorted(call_kwargs)]
        wanted = [*names, *by_name.meta]
        raise TypeError(f"{where}: takes the arguments ({', '.join(wanted)}), as traced; got ({', '.join(given)})")
    for name, part, value in zip(names, positional.children, args):
        _match(part, value, name, leaves, where)
    for name, part in zip(by_name.meta, by_name.children):
        _match(part, call_kwargs[name], name, leaves, where)
    return leaves, captures


def _flat_input(value) -> bool:
    return hasattr(value, "shape") or value.__class__ in (int, float, bool)


def _match(treedef, value, path: str, leaves: list, where: str) -> None:
    """Append ``value``'s leaves where ``treedef`` has its inputs; its constants must be the values traced."""
    kind = treedef.kind
    if kind == "leaf":
        leaves.append(value)
        return
    if kind in ("none", "constant"):
        expected = treedef.meta if kind == "constant" else None
        if value.__class__ is not expected.__class__ or value != expected:
            raise ValueError(f"{where}: {path} is {value!r:.60}; the graph was traced for {expected!r:.60}")
        return
    children = treedef.children
    if kind == "dict":
        if not isinstance(value, dict) or set(value) != set(treedef.meta):
            raise TypeError(f"{where}: {path} must be a dict with keys {list(treedef.meta)}, got {value!r:.60}")
        for key, child in zip(treedef.meta, children):
            _match(child, value[key], f"{path}[{key!r}]", leaves, where)
        return
    if kind == "namedtuple":
        fits = isinstance(value, tuple) and getattr(type(value), "_fields", None) == treedef.meta._fields
    else:
        fits = kind in ("tuple", "list") and isinstance(value, (tuple, list))
    if not fits or len(value) != len(children):
        raise TypeError(f"{where}: {path} must be a {kind} of {len(children)} items, got {value!r:.60}")
    for i, (child, item) in enumerate(zip(children, value)):
        _match(child, item, f"{path}[{i}]", leaves, where)


def call_graph(graph: Graph, *args, **captures):
    """``graph(*args, **captures)``: check the arguments against the placeholders, then run.  A traced graph (also
    a loaded one) takes its function's arguments as the function did: nested, and by keyword."""
    if graph.signature is not None:
        args, captures = _structured(graph, args, captures)
    if len(args) != len(graph.inputs):
        names = ", ".join(graph.input_names) or "none"
        raise TypeError(f"graph {graph.name!r}: takes {len(graph.inputs)} tensor arguments ({names}), got {len(args)}")
    leaves = []
    for i, (a, t, name) in enumerate(zip(args, graph.inputs, graph.input_names)):
        if not isinstance(a, Tensor) and not hasattr(a, "shape"):
            a = dispatch.to_tensor(a, t.backend, t.dtype)
        # A dtype tensorlib holds in a wider one (int8 -> int32) fits that one, as in the tl.function call.
        shape, dtype = tuple(a.shape), _dtypes.of_array(a.dtype)
        fits = len(shape) == len(t.shape) and all(d is None or d == s for d, s in zip(t.shape, shape))
        if not fits or dtype != t.dtype:
            raise ValueError(
                f"graph {graph.name!r}: argument {i} ({name}) must be {_spec_text(t)}, got {dtype.name}{list(shape)}"
            )
        leaves.append(a)
    by_name = {c.name: i for i, c in enumerate(graph.captures)}
    unknown = sorted(set(captures) - set(by_name))
    if unknown:
        raise TypeError(
            f"graph {graph.name!r}: unknown capture {unknown[0]!r}; its captures are {sorted(by_name) or 'none'}"
        )
    sources = [c.source for c in graph.captures]
    for name, value in captures.items():
        c = graph.captures[by_name[name]]
        shape = tuple(value.shape) if hasattr(value, "shape") else ()
        if shape != tuple(c.shape) or np.dtype(getattr(value, "dtype", c.dtype)) != c.dtype:
            raise ValueError(
                f"graph {graph.name!r}: capture {name!r} must be {_spec_text(c.tensor)}, got "
                f"{np.dtype(getattr(value, 'dtype', 'O')).name}{list(shape)}"
            )
        sources[by_name[name]] = value
    missing = [c.name for c, s in zip(graph.captures, sources) if s is None]
    if missing:
        raise TypeError(
            f"graph {graph.name!r}: missing captures {missing} (the file was saved without them); "
            f"pass them as keyword arguments: graph(..., {missing[0]}=array)"
        )
    return run(graph, leaves, sources)


def _spec_text(t) -> str:
    return f"{np.dtype(t.dtype).name}[{', '.join('?' if d is None else str(d) for d in t.shape)}]"
