"""Node and Graph: what tapes record and what ``tl.function`` builds.

A Graph is a list of Nodes in execution order over symbolic Tensors, each
defined once (SSA).  Values enter a graph in three ways:

- **inputs**: placeholders for the traced function's tensor arguments;
- **captures**: arrays, Tensors and Variables the function closed over,
  held *by reference* and fed at every run (never copied into the graph);
- **constants**: small literals (Python scalars, small arrays), at most
  ``CONSTANT_BYTES`` bytes each, so a graph never embeds a big array.

>>> import tensorlib as tl
>>> f = tl.function(lambda x: tl.sum(x * 2.0))
>>> g = f.get_graph(tl.TensorSpec((None, 3), "float32"))
>>> [n.op_type for n in g.nodes], g.outputs[0].shape
(['Mul', 'Sum'], ())
"""

from __future__ import annotations

import linecache

import numpy as np

from ..ops.registry import OpDef, _ops
from ..tensor import Node, current_phase, make_symbolic, scopes

# A constant larger than this is captured by reference instead (DESIGN §2, the seeds' 10 s first call).
CONSTANT_BYTES = 1024

# Assignments to Variables are graph nodes of this op type; it is no registered op (no kernel, no gradient).
ASSIGN = OpDef(
    "AssignVariable",
    ("resource", "value"),
    {"how": "assign"},
    lambda resource, value, how="assign": (),
    differentiable=False,
    doc="Store value into the captured Variable `resource` when the graph runs; `how` names the method traced "
    "(`assign`, or `assign_add`/`assign_sub`: an update, whose value no later op reads but as the Variable's).",
)
UPDATES = ("assign_add", "assign_sub")


class Capture:
    """A value the traced function closed over, fed by reference at each run.

    ``kind`` is ``"variable"`` (a ``tl.Variable``: its current value is read
    at every run, and assignments inside the graph update it), ``"tensor"``,
    ``"array"`` (a NumPy/CuPy array), ``"temporary"`` (a tensor the trace
    itself made, too big to embed as a constant: no one outside can supply
    it, so ``save`` always writes it) or ``"feed"`` (a loaded graph whose
    value was not saved: pass it as a keyword argument named ``name``).
    """

    __slots__ = ("name", "tensor", "source", "kind", "site")

    def __init__(self, name, tensor, source, kind, site):
        self.name = name
        self.tensor = tensor
        self.source = source
        self.kind = kind
        self.site = site

    @property
    def shape(self) -> tuple:
        return self.tensor.shape

    @property
    def dtype(self):
        return self.tensor.dtype

    @property
    def nbytes(self) -> int:
        return _nbytes(self.shape, self.dtype)

    def __repr__(self):
        return (
            f"Capture({self.name!r}, {_type_str(self.tensor)}, {self.kind}, {_human_bytes(self.nbytes)}, "
            f"from {self.site})"
        )


class Graph:
    """A traced computation: ``nodes`` in execution order, ``inputs``, ``captures``, ``outputs``.

    ``graph(*args, **captures)`` runs it (args in the order of ``inputs``;
    keyword arguments only for captures a loaded graph did not save);
    ``print(graph)`` lists it, ``graph.to_dot()`` draws it and
    ``graph.save(path)`` stores it (see :func:`tensorlib.graph.load`).  Those
    methods and ``optimize``/``executable`` come from the executor, the passes,
    the serializer and the visualizer (installed by :mod:`tensorlib.graph`).
    """

    def __init__(self, name: str, backend):
        self.name = name
        self.backend = backend
        self.inputs: list = []
        self.input_names: list[str] = []
        self.captures: list[Capture] = []
        self.constants: dict = {}  # tensor _id -> (symbolic tensor, raw backend array)
        self.nodes: list[Node] = []
        self.outputs: list = []
        # How outputs nest: a tensorlib.tree.TreeDef whose leaves are ``outputs`` in order (Python
        # constants the function returned sit in it as constants).
        self.structure = None
        # How the traced function took its inputs, for ``graph(...)`` to take them alike: ``(parameter names
        # of the positional arguments, TreeDef of (args, kwargs))``, whose leaves are ``inputs`` in order (the
        # other values it was traced with sit in it as constants); None: flat positional inputs only.
        self.signature = None
        # Runs under np.errstate(all="ignore"): set where the trace called tl.stats, whose formulas (and their
        # gradients) are taken at the support's ends on purpose (log 0, 0 * inf in a branch not taken).
        self.quiet = False

    # ------------------------------------------------------------ building
    def add_input(self, shape, dtype, name: str):
        t = make_symbolic(shape, dtype, self.backend, None, 0)
        self.inputs.append(t)
        self.input_names.append(name)
        return t

    def add_capture(self, name, shape, dtype, source, kind, site):
        t = make_symbolic(shape, dtype, self.backend, None, 0)
        self.captures.append(Capture(name, t, source, kind, site))
        return t

    def add_constant(self, raw, cls=None, backend=None):
        """A symbolic tensor standing for the small array ``raw`` (on ``backend``, by default this graph's)."""
        backend = self.backend if backend is None else backend
        t = make_symbolic(tuple(raw.shape), backend.dtype_of(raw), backend, None, 0)
        if cls is not None:
            t.__class__ = cls
        self.constants[t._id] = (t, raw)
        return t

    def add_node(self, op, inputs, attrs, specs=None, site=None, phase=None, scope=None) -> tuple:
        """Append ``op(*inputs, **attrs)``; returns its outputs as a tuple (the shape rule runs if no specs).

        ``phase`` defaults to the current one (``"gradient"`` inside the reverse-mode engine), ``scope`` to the
        enclosing ``tl.profiler.annotate`` blocks' names.
        """
        if specs is None:
            specs = op.infer(*inputs, **attrs)
        node = Node(
            op, tuple(inputs), (), attrs, site, phase or current_phase(), scopes.get() if scope is None else scope
        )
        many = specs if isinstance(specs, tuple) else (specs,)
        backend = inputs[0].backend if inputs else self.backend
        node.outputs = tuple(make_symbolic(s.shape, s.dtype, backend, node, i) for i, s in enumerate(many))
        self.nodes.append(node)
        return node.outputs

    def empty_copy(self) -> "Graph":
        """Same name, backend, inputs, captures, constants and structure; no nodes (for passes)."""
        g = Graph(self.name, self.backend)
        g.inputs, g.input_names = list(self.inputs), list(self.input_names)
        g.captures, g.constants, g.structure = list(self.captures), dict(self.constants), self.structure
        g.signature, g.quiet = self.signature, self.quiet
        return g

    def constant_value(self, t):
        """The raw value if ``t`` is one of this graph's constants, else None."""
        entry = self.constants.get(t._id)
        return None if entry is None else entry[1]

    # ------------------------------------------------------------ checking and printing
    # Running and the tools (graph(...), optimize, executable, save, to_dot) are installed by
    # tensorlib/graph/__init__.py from the modules that implement them: the IR imports none of them.
    def verify(self) -> "Graph":
        """Check the graph is well formed; raise ValueError naming the first bad node.

        Every value is defined once before use, every op type is known, and
        every node's shape rule reproduces its recorded output shapes and dtypes.
        """
        defined = {t._id for t in self.inputs} | {c.tensor._id for c in self.captures} | set(self.constants)
        names = self.value_names()
        for k, node in enumerate(self.nodes):
            where = f"Graph.verify: node {k} ({node.op_type})"
            for t in node.inputs:
                if t._id not in defined:
                    raise ValueError(f"{where}: input {names.get(t._id, '?')} is used before it is defined")
            if node.op is not ASSIGN and _ops.get(node.op_type) is not node.op:
                raise ValueError(f"{where}: op type {node.op_type!r} is not registered")
            unknown = set(node.attrs) - set(node.op.defaults)
            if unknown:
                raise ValueError(f"{where}: unknown attributes {sorted(unknown)}")
            specs = node.op.infer(*node.inputs, **node.attrs)
            specs = specs if isinstance(specs, tuple) else (specs,)
            if len(specs) != len(node.outputs):
                raise ValueError(f"{where}: {len(node.outputs)} outputs recorded, the shape rule gives {len(specs)}")
            for s, o in zip(specs, node.outputs):
                if tuple(s.shape) != tuple(o.shape) or s.dtype != o.dtype:
                    raise ValueError(
                        f"{where}: output {names[o._id]} recorded as {_type_str(o)}, "
                        f"the shape rule gives {_type_str(s)}"
                    )
            for o in node.outputs:
                if o._id in defined:
                    raise ValueError(f"{where}: output {names[o._id]} is defined twice")
                defined.add(o._id)
        for t in self.outputs:
            if t._id not in defined:
                raise ValueError(f"Graph.verify: output {names.get(t._id, '?')} is not defined by the graph")
        return self

    def value_names(self) -> dict:
        """``{tensor _id: "%k"}``, numbered in definition order (as in ``print(graph)``)."""
        names = {}
        values = list(self.inputs) + [c.tensor for c in self.captures] + [t for t, _ in self.constants.values()]
        values += [o for n in self.nodes for o in n.outputs]
        for t in values:
            names.setdefault(t._id, f"%{len(names)}")
        return names

    def __str__(self):
        names = self.value_names()
        params = ", ".join(f"{names[t._id]}: {_type_str(t)} {n}" for t, n in zip(self.inputs, self.input_names))
        lines = [f"graph {self.name}({params}) {{"]
        for c in self.captures:
            lines.append(
                f"  {names[c.tensor._id]} = capture {c.name!r}: {_type_str(c.tensor)}  "
                f"[{c.kind}, {_human_bytes(c.nbytes)}, {_site_text(c.site)}]"
            )
        for t, raw in self.constants.values():
            lines.append(f"  {names[t._id]} = const {_type_str(t)} {_short_value(raw, t.backend)}")
        for node in self.nodes:
            outs = ", ".join(names[o._id] for o in node.outputs)
            ins = ", ".join(names.get(t._id, "?") for t in node.inputs)
            attrs = "".join(f" {k}={_attr_text(v)}" for k, v in node.attrs.items())
            types = ", ".join(_type_str(o) for o in node.outputs)
            lhs = f"{outs} = " if outs else ""
            scope = f"  # scope {'/'.join(node.scope)}" if node.scope else ""
            lines.append(f"  {lhs}{node.op_type}({ins}){attrs}" + (f" : {types}" if types else "") + scope)
            for k, v in node.attrs.items():
                if isinstance(v, Graph):  # control flow: the subgraph, nested under its node
                    sub = str(v).splitlines()
                    lines.append(f"    {k}: {sub[0]}")
                    lines.extend("    " + line for line in sub[1:])
        lines.append(f"  return ({', '.join(names.get(t._id, '?') for t in self.outputs)})")
        lines.append("}")
        return "\n".join(lines)

    def __repr__(self):
        return (
            f"<tl.Graph {self.name!r}: {len(self.inputs)} inputs, {len(self.captures)} captures, "
            f"{len(self.constants)} constants, {len(self.nodes)} nodes, {len(self.outputs)} outputs>"
        )


# ---------------------------------------------------------------- text helpers
def _nbytes(shape, dtype) -> int:
    n = 1
    for d in shape:
        n *= d
    return n * np.dtype(dtype).itemsize


def _type_str(t) -> str:
    dims = ",".join("?" if d is None else str(d) for d in t.shape)
    return f"{np.dtype(t.dtype).name}[{dims}]"


def _human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _site_text(site) -> str:
    if not site or ":" not in site:
        return f"from {site or '<unknown>'}"
    filename, _, line = site.rpartition(":")
    code = linecache.getline(filename, int(line)).strip() if line.isdigit() else ""
    return f"from {site}" + (f": {code}" if code else "")


def _short_value(raw, backend) -> str:
    a = np.asarray(backend.to_numpy(raw))
    if a.ndim == 0:
        return repr(a.item())
    if a.size <= 6:
        return str(a.tolist())
    return f"<{a.size} values>"


def _attr_text(v) -> str:
    if isinstance(v, Graph):
        return f"<graph {v.name}>"
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, slice):
        text = f"{'' if v.start is None else v.start}:{'' if v.stop is None else v.stop}"
        return text if v.step is None else f"{text}:{v.step}"
    if isinstance(v, tuple):
        return "(" + ",".join(_attr_text(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if v is Ellipsis:
        return "..."
    if callable(v):
        return f"<{getattr(v, '__qualname__', type(v).__name__)}>"
    return repr(v)
