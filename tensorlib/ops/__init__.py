"""Op families; each module defines its ops with the public registration API."""

from . import creation, linalg, math, nn, reduce, shape  # noqa: F401  (registers the ops)
from . import array, elementwise  # noqa: F401  (NumPy's functions)
from . import control_flow  # noqa: F401
from .registry import OpDef, all_ops, defop, get
from . import _methods  # noqa: F401,E402  (Tensor's operators and methods: after the families they call)
from .explain import explain

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
