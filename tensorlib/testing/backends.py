"""Which backends the op catalogue runs on here, and which entries each one can run.

The catalogue tests run on NumPy always, on ``array_api_strict`` when the
package is installed (it proves the generic kernels use only the Array API
standard), and on CuPy when a GPU is present.  An entry is skipped on a
backend only for a dtype the backend lacks (the Array API standard has no
float16).  An op with no kernel on a backend (its kernels need NumPy/SciPy
or CuPy, as ``tl.ops.explain`` says) is not skipped: the catalogue asserts
the clear error it raises there.

    >>> import tensorlib as tl
    >>> "numpy" in tl.testing.backends.available()
    True
"""

from __future__ import annotations

import numpy as np

from ..backends import base as _backends
from ..ops.registry import all_ops as _all_ops
from ..ops.registry import get as _get_op

__all__ = ["available", "skip_reason", "lacks_kernel", "ops_without_kernel"]


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


def lacks_kernel(op_type: str, backend: str) -> bool:
    """True when op ``op_type`` has neither a kernel of its own nor a generic one for ``backend``."""
    op = _get_op(op_type)
    return backend not in op.kernels and op.generic_kernel is None


def ops_without_kernel(backend: str) -> list:
    """The op types that cannot run on ``backend``: calling one raises a LookupError naming the op and
    the backend (tensors never go through the host)."""
    return sorted(name for name in _all_ops() if lacks_kernel(name, backend))


def skip_reason(info, dtype, backend: str) -> str | None:
    """Why catalogue entry ``info`` cannot run in ``dtype`` on ``backend`` (None: it can).

    An op without a kernel there is not a reason: the catalogue asserts its clear error instead."""
    b = _backends.get(backend)
    lacking = getattr(b, "unsupported_dtypes", ())
    if np.dtype(dtype) in lacking:
        return f"backend {backend!r} has no {np.dtype(dtype)}"
    return None
