"""Testing tools for tensorlib and for users' own ops.

- :func:`check_grads`: reverse and forward mode against float64 finite differences, to any order.
- :func:`opcheck`: the op catalogue's whole battery for a custom op, from one call.
- :mod:`tensorlib.testing.strategies`: hypothesis strategies (imported on first use; needs hypothesis).
- :mod:`tensorlib.testing.op_db`: the catalogue of OpInfos that drives tensorlib's own tests.
- :func:`isolated_registries`: backends, ops, kernels and gradient rules registered inside it are undone on exit.
"""

import importlib

from .check import (
    KinkError,
    check_error,
    check_forward,
    check_grads,
    check_kernels,
    check_sample_grads,
    check_traced,
    opcheck,
)
from .isolation import isolated_registries
from .opinfo import ErrorInput, OpInfo, SampleInput
from ..graph.tracing import no_retrace
from . import backends

__all__ = [
    "check_grads",
    "KinkError",
    "opcheck",
    "check_forward",
    "check_kernels",
    "check_sample_grads",
    "check_traced",
    "check_error",
    "isolated_registries",
    "OpInfo",
    "SampleInput",
    "ErrorInput",
    "strategies",
    "op_db",
    "all_opinfos",
    "backends",
]


def __getattr__(name):
    # hypothesis is a test dependency: load the modules that need it only when asked for.
    if name in ("strategies", "op_db"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "all_opinfos":
        return importlib.import_module(f"{__name__}.op_db").all_opinfos
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
