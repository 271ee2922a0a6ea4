"""Which backends the op catalogue runs on here, and which entries each one can run.

The catalogue tests run on NumPy always, on ``array_api_strict`` when the
package is installed (it proves the generic kernels use only the Array API
standard), and on CuPy when a GPU is present.  An entry is skipped on a
backend only for a stated reason: an op type with no kernel there (its
kernels are NumPy-only, as ``tl.ops.explain`` says) or a dtype the backend
lacks (the Array API standard has no float16).

    >>> import tensorlib as tl
    >>> "numpy" in tl.testing.backends.available()
    True
"""

from __future__ import annotations

import numpy as np

from ..backends import base as _backends
from ..ops.registry import all_ops as _all_ops
from ..ops.registry import get as _get_op

__all__ = ["available", "skip_reason", "unchecked_op_error", "STANDARD_FAMILIES"]


def _usable(name: str) -> bool:
    try:
        backend = _backends.get(name)
        backend.asarray(np.zeros(1, np.float32))  # imports the package; CuPy also needs a device
        return True
    except Exception:  # noqa: BLE001 - no package, no driver or no GPU: the backend is not available here
        return False


def available(extra: bool = False) -> list:
    """Names of the backends usable here: NumPy first; ``extra=True`` leaves NumPy out."""
    names = [] if extra else ["numpy"]
    return names + [name for name in ("array_api_strict", "cupy") if name in _backends.names() and _usable(name)]


# The op families whose generic kernels are written against the Array API standard (checked on
# array_api_strict); families added since run there once their kernels are (say so here).
STANDARD_FAMILIES = (
    "ops/math.py",
    "ops/reduce.py",
    "ops/shape.py",
    "ops/linalg.py",
    "ops/linalg_ops.py",
    "ops/random.py",
    "ops/nn/",
    "grad/custom.py",
    "debugging.py",
)


def _family(op) -> str:
    return op.defined_at.replace("\\", "/").rsplit("tensorlib/", 1)[-1].split(":")[0]


def unchecked_op_error(error: BaseException, backend: str) -> str | None:
    """The reason to skip when ``error`` comes from an op whose family is not yet written against the
    standard (an op a catalogue entry calls without listing it in ``op_types``); None otherwise."""
    name = str(error).split(":", 1)[0]
    if backend != "array_api_strict" or name not in _all_ops():
        return None
    return None
    return f"{name} ({family}) is not yet written against the Array API standard: {error}"


def skip_reason(info, dtype, backend: str) -> str | None:
    """Why catalogue entry ``info`` cannot run in ``dtype`` on ``backend`` (None: it can)."""
    b = _backends.get(backend)
    lacking = getattr(b, "unsupported_dtypes", ())
    if np.dtype(dtype) in lacking:
        return f"backend {backend!r} has no {np.dtype(dtype)}"
    for op_type in info.op_types:
        op = _get_op(op_type)
        if backend not in op.kernels and op.generic_kernel is None:
            return f"{op_type} has no kernel for backend {backend!r} ({op.kernels_note()})"
    return None
