"""ReLU and its gradient: memory-bound elementwise kernels split between threads."""

from __future__ import annotations

import numpy as np

from .blocks import _split_images


def relu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(x, 0); big inputs are split over their first axis between threads (memory-bound).
    ``out`` (optional, may be ``x`` itself) receives the result."""
    out = np.empty_like(x) if out is None else out
    if x.ndim == 0:
        return np.maximum(x, 0, out=out)

    def run(first, last):
        np.maximum(x[first:last], 0, out=out[first:last])

    _split_images(run, x.shape[0], x.nbytes)
    return out


def relu_grad(dy: np.ndarray, features: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """dy where features > 0, else 0, in dy's dtype: the mask is written as 1.0 / 0.0 into the
    output itself (no mask-sized temporary); big inputs are split between threads.  ``out``
    (optional) receives the result: it may be ``features`` itself, never ``dy``."""
    out = np.empty(np.broadcast_shapes(dy.shape, features.shape), dy.dtype) if out is None else out
    if out.ndim == 0 or dy.shape != features.shape:
        np.greater(features, 0, out=out)
        return np.multiply(out, dy, out=out)

    def run(first, last):
        part = out[first:last]
        np.greater(features[first:last], 0, out=part)
        np.multiply(part, dy[first:last], out=part)

    _split_images(run, out.shape[0], out.nbytes)
    return out
