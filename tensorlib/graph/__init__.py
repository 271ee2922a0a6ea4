"""Graph mode: ``tl.function`` tracing, the Graph IR, passes, the executor, and safe save/load.

>>> import tensorlib as tl
>>> f = tl.function(lambda x: tl.sum(x * x))
>>> float(f(tl.tensor([1.0, 2.0])))
5.0
>>> type(f.get_graph(tl.TensorSpec((2,)))).__name__
'Graph'
"""
import importlib

from .ir import CONSTANT_BYTES, Capture, Graph, Node

__all__ = ["Node", "Graph", "Capture", "CONSTANT_BYTES", "function", "Function", "load", "GraphFormatError",
           "RetracingWarning", "no_retrace"]

# tracing/executor/serialize import the op modules, which import dispatch, which imports this package
# (for Node): load them on first use.
_LAZY = {"function": "tracing", "Function": "tracing", "RetracingWarning": "tracing", "no_retrace": "tracing",
         "load": "serialize", "GraphFormatError": "serialize"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
