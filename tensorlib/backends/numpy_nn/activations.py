"""ReLU and its gradient: memory-bound elementwise kernels shared out between threads."""

from __future__ import annotations

import numpy as np

from .blocks import _parallel, _share_blocks, _shared_blocks

# Rows of a block: big enough that NumPy's per-call cost is noise, small
# enough that threads share the rows out evenly.
_ELEMENTWISE_BLOCK_BYTES = 1 << 20

# NumPy's maximum runs its vectorized loop only when both operands are arrays: against the scalar 0 it takes the
# element-by-element one, five times slower (NumPy 2.4, AVX2, 50176 float32 values in cache: 61 us against 12.6
# us).  So ReLU compares with a read-only array of zeros (the same ufunc, so the same bits, NaN and -0.0
# included), kept per dtype up to this size; a bigger block (a single row over it) compares with the scalar.
_ZEROS_MAX_BYTES = 4 << 20
# Below this many values the scalar's slower loop costs less than finding the zeros (about a microsecond).
_ZEROS_MIN_SIZE = 2048
_zeros: dict = {}


def _zeros_like(x: np.ndarray):
    """A read-only array of zeros of ``x``'s floating shape and dtype, or the scalar 0 when ``x`` is small, too big
    for the kept zeros or not floating (where the scalar's type rules would differ)."""
    dtype = x.dtype
    if dtype.kind != "f" or x.size < _ZEROS_MIN_SIZE or x.nbytes > _ZEROS_MAX_BYTES:
        return 0
    zeros = _zeros.get(dtype)
    if zeros is None or zeros.size < x.size:
        zeros = np.zeros(max(x.size, 4096), dtype)
        zeros.flags.writeable = False
        _zeros[dtype] = zeros  # (one assignment: a thread that raced it keeps its own, as good)
    return zeros[: x.size].reshape(x.shape)


def relu_block(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``np.maximum(x, 0, out=out)`` bit for bit, on NumPy's vectorized loop (see :data:`_ZEROS_MAX_BYTES`)."""
    return np.maximum(x, _zeros_like(x), out=out)


def _row_blocks(array: np.ndarray):
    row_bytes = max(1, array.nbytes // max(1, array.shape[0]))
    return _shared_blocks(array.shape[0], max(1, _ELEMENTWISE_BLOCK_BYTES // row_bytes), _parallel(array.nbytes))


def relu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(x, 0); big inputs are shared out between threads by rows (memory-bound).
    ``out`` (optional, may be ``x`` itself) receives the result."""
    out = np.empty_like(x) if out is None else out
    if x.ndim == 0:
        return np.maximum(x, 0, out=out)

    def run(blocks):
        for first, last in blocks:
            relu_block(x[first:last], out[first:last])

    _share_blocks(run, _row_blocks(x), _parallel(x.nbytes))
    return out


def relu_grad(dy: np.ndarray, features: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """dy where features > 0, else 0, in dy's dtype: the mask is written as 1.0 / 0.0 into the
    output itself (no mask-sized temporary); big inputs are shared out between threads.  ``out``
    (optional) receives the result: it may be ``features`` itself, never ``dy``."""
    out = np.empty(np.broadcast_shapes(dy.shape, features.shape), dy.dtype) if out is None else out
    if out.ndim == 0 or dy.shape != features.shape:
        np.greater(features, 0, out=out)
        return np.multiply(out, dy, out=out)

    def run(blocks):
        for first, last in blocks:
            part = out[first:last]
            np.greater(features[first:last], 0, out=part)
            np.multiply(part, dy[first:last], out=part)

    _share_blocks(run, _row_blocks(out), _parallel(out.nbytes))
    return out
