"""Graphviz DOT text for a Graph: op types as node labels, shapes and dtypes on the edges.

>>> import tensorlib as tl
>>> g = tl.function(lambda x: tl.exp(x) + 1.0).get_graph(tl.TensorSpec((2,)))
>>> print(g.to_dot())  # doctest: +ELLIPSIS
digraph "<lambda>" {
...
  n0 [label="Exp"];
  v0 -> n0 [label="float32[2]"];
...
}
"""
from __future__ import annotations

from .ir import Graph, _short_value, _type_str


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: Graph) -> str:
    """The graph in the DOT language (render with ``dot -Tsvg``)."""
    lines = [f"digraph {_quote(graph.name)} {{", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    source = {}
    for k, (t, name) in enumerate(zip(graph.inputs, graph.input_names)):
        source[t._id] = f"v{k}"
        lines.append(f"  v{k} [label={_quote(name)}, shape=ellipse];")
    for k, c in enumerate(graph.captures):
        source[c.tensor._id] = f"c{k}"
        lines.append(f"  c{k} [label={_quote(f'capture {c.name}')}, shape=ellipse, style=dashed];")
    for k, (t, raw) in enumerate(graph.constants.values()):
        source[t._id] = f"k{k}"
        lines.append(f"  k{k} [label={_quote(_short_value(raw, t.backend))}, shape=plaintext];")
    for k, node in enumerate(graph.nodes):
        lines.append(f"  n{k} [label={_quote(node.type)}];")
        for t in node.inputs:
            lines.append(f"  {source.get(t._id, '?')} -> n{k} [label={_quote(_type_str(t))}];")
        for o in node.outputs:
            source[o._id] = f"n{k}"
    for k, t in enumerate(graph.outputs):
        lines.append(f"  out{k} [label={_quote(f'output {k}')}, shape=ellipse];")
        lines.append(f"  {source.get(t._id, '?')} -> out{k} [label={_quote(_type_str(t))}];")
    lines.append("}")
    return "\n".join(lines)
