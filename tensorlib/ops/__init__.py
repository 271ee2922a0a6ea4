"""Op families; each module defines its ops with the public registration API.

Every module of the package runs this file first when it is imported (the gradient registry, one
layer above the op registry, imports ``tensorlib.ops.registry``), so it loads only the registry;
the families, the Tensor methods (:mod:`._methods`) and ``explain`` are loaded by ``import
tensorlib``, or on first use of their names here (``tl.ops.math``).

>>> import tensorlib as tl
>>> tl.ops.get("Mul").input_names, tl.ops.explain.__module__
(('x', 'y'), 'tensorlib.ops._explain')
"""

import importlib

from .registry import OpDef, all_ops, defop, get

__all__ = [
    "OpDef",
    "defop",
    "get",
    "all_ops",
    "explain",
    "creation",
    "math",
    "reduce",
    "shape",
    "linalg",
    "elementwise",
    "array",
]


def __getattr__(name):
    if name == "explain":
        from ._explain import explain

        globals()["explain"] = explain
        return explain
    if not name.startswith("__"):
        try:
            return importlib.import_module(f".{name}", __name__)  # a family: tl.ops.math
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
