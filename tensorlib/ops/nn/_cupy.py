"""Registers the CuPy kernels of ``tensorlib.backends.cupy_nn`` on their ops (CuPy loads on first call).

Dropout's kernel lives here: its mask comes from tensorlib's generator (``tl.random.seed``), so one
seed gives the same mask on every backend; the uniforms are drawn on the host and the mask is
made on the device.
"""

from __future__ import annotations

import numpy as np

from ...backends import cupy_nn as _kernels
from .. import random as _random
from .. import reduce as _reduce  # noqa: F401  (Sum is registered before its kernel is)
from .. import shape as _shape  # noqa: F401  (GatherV2, GatherV2Grad)
from ..registry import get

for _op_type, _kernel in _kernels.KERNELS.items():
    get(_op_type).kernel("cupy")(_kernel)


@get("Dropout").kernel("cupy")
def dropout(x, *, rate, seed, noise_shape):
    shape = x.shape if noise_shape is None else tuple(x.shape[i] if d is None else d for i, d in enumerate(noise_shape))
    uniforms = _random._gen(seed)._rng.random(shape, dtype=np.float32)
    return _kernels.dropout(x, uniforms, rate=rate)
