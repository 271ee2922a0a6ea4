"""Graph mode: ``tl.function`` tracing, the Graph IR, passes, the executor, and safe save/load.

>>> import tensorlib as tl
>>> f = tl.function(lambda x: tl.sum(x * x))
>>> float(f(tl.tensor([1.0, 2.0])))
5.0
>>> type(f.get_graph(tl.TensorSpec((2,)))).__name__
'Graph'
"""

from . import executor, passes, serialize, visualize
from .ir import CONSTANT_BYTES, Capture, Graph, Node
from .serialize import GraphFormatError, load
from .tracing import Function, RetracingWarning, function, no_retrace

__all__ = [
    "Node",
    "Graph",
    "Capture",
    "CONSTANT_BYTES",
    "function",
    "Function",
    "load",
    "GraphFormatError",
    "RetracingWarning",
    "no_retrace",
]

# The one place where the IR meets the tools: graph/ir.py is plain data and imports none of these;
# each method is the function of the module that implements it (their docstrings say what they do).
Graph.__call__ = executor.call_graph
Graph.optimize = passes.optimized
Graph.executable = executor.executable
Graph.save = serialize.save
Graph.__reduce__ = serialize.reduce
Graph.to_dot = visualize.to_dot
Graph.render = visualize.render


def _repr_svg_(graph):
    """Inline SVG for notebooks (None when Graphviz is not installed, so the text repr shows)."""
    try:
        return visualize.svg(graph)
    except (ImportError, RuntimeError):
        return None


Graph._repr_svg_ = _repr_svg_
