"""Registers the CuPy kernels of ``tensorlib.backends.cupy_nn`` on their ops (CuPy loads on first call).

Dropout has none here: its generic kernel draws with the backend's own generator (``cupy.random``
on the GPU) under ``tl.random.seed``.
"""

from __future__ import annotations

from ...backends import cupy_nn as _kernels
from .. import array as _array  # noqa: F401  (TakeAlongAxisGrad)
from .. import reduce as _reduce  # noqa: F401  (Sum is registered before its kernel is)
from .. import shape as _shape  # noqa: F401  (GatherV2, GatherV2Grad)
from ..registry import get

for _op_type, _kernel in _kernels.KERNELS.items():
    get(_op_type).kernel("cupy")(_kernel)
