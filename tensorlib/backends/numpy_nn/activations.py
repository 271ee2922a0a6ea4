"""ReLU and its gradient: memory-bound elementwise kernels shared out between threads."""

from __future__ import annotations

import numpy as np

from .blocks import _parallel, _share_blocks, _shared_blocks

# Rows of a block: big enough that NumPy's per-call cost is noise, small
# enough that threads share the rows out evenly.
_ELEMENTWISE_BLOCK_BYTES = 1 << 20


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
            np.maximum(x[first:last], 0, out=out[first:last])

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
