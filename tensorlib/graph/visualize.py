"""Pictures of a Graph: DOT text, SVG/PNG files through Graphviz, inline SVG in notebooks.

Each value is drawn under the name ``print(graph)`` gives it (``%3``): inputs
and captures as ellipses (a capture with its size, since it is fed by
reference at every run), small constants as plain text, each node as a box
labelled with its op type, forward nodes and gradient nodes (those a
``tape.gradient``/``tl.grad`` inside the traced function added) in two colours.
Edges carry the shape and dtype of the value they move.

>>> import tensorlib as tl
>>> g = tl.function(lambda x: tl.exp(x) + 1.0).get_graph(tl.TensorSpec((2,)))
>>> print(g.to_dot())  # doctest: +ELLIPSIS
digraph "<lambda>" {
...
  "%0" [label="%0: x", shape=ellipse...];
...
  "%2" [label="%2 = Exp", ...fillcolor="#dbe9f6"];
  "%0" -> "%2" [label="float32[2]"];
...
}
"""

from __future__ import annotations

from .ir import Graph, _human_bytes, _short_value, _type_str

FORWARD_COLOR = "#dbe9f6"  # light blue
GRADIENT_COLOR = "#fde2c8"  # light orange
INSTALL_GRAPHVIZ = (
    "install Graphviz's `dot` program (Debian/Ubuntu: apt-get install graphviz; macOS: "
    "brew install graphviz; conda: conda install graphviz; Windows: https://graphviz.org/download/) "
    "and make sure `dot` is on PATH"
)


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: Graph) -> str:
    """The graph in the DOT language, node ids as in ``print(graph)`` (render with ``graph.render(path)``)."""
    names = graph.value_names()
    lines = [
        f"digraph {_quote(graph.name)} {{",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    for t, name in zip(graph.inputs, graph.input_names):
        lines.append(
            f"  {_quote(names[t._id])} [label={_quote(f'{names[t._id]}: {name}')}, shape=ellipse, fillcolor=white];"
        )
    for c in graph.captures:
        v = names[c.tensor._id]
        label = f"{v}: capture {c.name}\n{_type_str(c.tensor)}, {_human_bytes(c.nbytes)}"
        lines.append(f"  {_quote(v)} [label={_quote(label)}, shape=ellipse, style=dashed];")
    for t, raw in graph.constants.values():
        v = names[t._id]
        lines.append(
            f"  {_quote(v)} [label={_quote(f'{v} = {_short_value(raw, t.backend)}')}, shape=plaintext, style=solid];"
        )
    drawn_as = {}  # value id -> the DOT node that produces it (a node with several outputs draws them all)
    for k, node in enumerate(graph.nodes):
        node_id = names[node.outputs[0]._id] if node.outputs else f"{node.op_type}#{k}"
        outs = ", ".join(names[o._id] for o in node.outputs)
        label = f"{outs} = {node.op_type}" if outs else node.op_type
        color = GRADIENT_COLOR if getattr(node, "phase", "forward") == "gradient" else FORWARD_COLOR
        lines.append(f"  {_quote(node_id)} [label={_quote(label)}, fillcolor={_quote(color)}];")
        for t in node.inputs:
            lines.append(
                f"  {_quote(drawn_as.get(t._id, names.get(t._id, '?')))} -> {_quote(node_id)} "
                f"[label={_quote(_edge_label(t, names, drawn_as))}];"
            )
        for o in node.outputs:
            drawn_as[o._id] = node_id
    for k, t in enumerate(graph.outputs):
        lines.append(f"  {_quote(f'output {k}')} [shape=ellipse, style=bold];")
        lines.append(
            f"  {_quote(drawn_as.get(t._id, names.get(t._id, '?')))} -> {_quote(f'output {k}')} "
            f"[label={_quote(_edge_label(t, names, drawn_as))}];"
        )
    if any(getattr(n, "phase", "forward") == "gradient" for n in graph.nodes):
        lines.append(
            f'  legend [shape=plaintext, style=solid, label=<<table border="0"><tr>'
            f'<td bgcolor="{FORWARD_COLOR}">forward</td><td bgcolor="{GRADIENT_COLOR}">gradient</td>'
            "</tr></table>>];"
        )
    lines.append("}")
    return "\n".join(lines)


def _edge_label(t, names, drawn_as) -> str:
    """The value's type; its name too when it is not its producer's first output (so ``%9`` stays findable)."""
    name = names.get(t._id, "?")
    return f"{name}: {_type_str(t)}" if drawn_as.get(t._id, name) != name else _type_str(t)


def _source(graph: Graph):
    try:
        import graphviz
    except ImportError:
        raise ImportError(
            "Graph.render needs the graphviz Python package: pip install 'tensorlib[pictures]' "
            f"(or pip install graphviz); it also needs Graphviz itself: {INSTALL_GRAPHVIZ}"
        ) from None
    return graphviz, graphviz.Source(to_dot(graph))


def render(graph: Graph, path, format: str | None = None) -> str:
    """Draw ``graph`` to ``path`` (SVG, PNG, PDF, ... from the suffix, or ``format``); returns the path written."""
    import os

    path = os.fspath(path)
    fmt = format or os.path.splitext(path)[1].lstrip(".").lower()
    if not fmt:
        raise ValueError(f"Graph.render: cannot tell the format of {path!r}; give a suffix (.svg, .png) or format=")
    graphviz, source = _source(graph)
    try:
        return source.render(outfile=path, format=fmt, cleanup=True)
    except graphviz.ExecutableNotFound:
        raise RuntimeError(f"Graph.render: Graphviz's `dot` program was not found; {INSTALL_GRAPHVIZ}") from None


def svg(graph: Graph) -> str:
    """The picture as SVG text (what notebooks show through ``Graph._repr_svg_``)."""
    graphviz, source = _source(graph)
    try:
        return source.pipe(format="svg").decode("utf-8")
    except graphviz.ExecutableNotFound:
        raise RuntimeError(f"Graph._repr_svg_: Graphviz's `dot` program was not found; {INSTALL_GRAPHVIZ}") from None
