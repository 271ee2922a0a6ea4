"""Initial values for weights, each drawn from an explicit seed.

Every initializer is called as ``init(shape, seed=None, dtype=float32)`` and
returns a Tensor.  ``seed=None`` draws from the global stream that
``tl.random.seed(s)`` resets, so a whole model is reproducible from one call.
Fans follow Keras: a ``(in, out)`` matrix has ``fan_in = in``; a conv filter
``(kh, kw, in, out)`` (HWIO) has ``fan_in = kh * kw * in`` and ``fan_out = kh * kw * out``.

>>> import tensorlib as tl
>>> w = tl.initializers.glorot_uniform((3, 4), seed=0)
>>> w.shape, bool((abs(w.numpy()) <= (6 / 7) ** 0.5).all())
((3, 4), True)
>>> bool((tl.initializers.he_normal((2, 2), seed=1) == tl.initializers.he_normal((2, 2), seed=1)).numpy().all())
True
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import dtypes as _dt
from .ops import random as _random
from .ops.creation import tensor as _tensor
from .tensor import Tensor

__all__ = ["zeros", "ones", "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "orthogonal", "get"]


def _as_shape(shape, who: str) -> tuple:
    """A shape of non-negative Python/NumPy ints (2.5 had become 2, and -1 or None gave NumPy's errors)."""
    try:
        if isinstance(shape, (str, bytes)):
            raise TypeError
        dims = tuple(operator.index(d) for d in (shape if np.iterable(shape) else [shape]))
    except TypeError:
        raise TypeError(f"initializers.{who}: shape must be a tuple of integers, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"initializers.{who}: shape must not have negative dimensions, got {shape!r}")
    return dims


def _fans(shape) -> tuple:
    if len(shape) < 1:
        raise ValueError(f"initializers: a weight needs at least one dimension to define its fans, got shape {shape}")
    if len(shape) == 1:
        fan_in = fan_out = shape[0]
    else:
        receptive = math.prod(shape[:-2])
        fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    # A zero fan belongs to an empty weight: 1 instead, as Keras does, so its bound is no ZeroDivisionError.
    return max(fan_in, 1), max(fan_out, 1)


def _rng(seed) -> np.random.Generator:
    return _random._gen(seed)._rng


def _float_dtype(dtype, who: str):
    """Random weights are floats (an int32 glorot_uniform weight was its draws truncated, mostly 0)."""
    dtype = _dt.as_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"initializers.{who}: random weights need a float dtype, got {dtype}")
    return dtype


def _draw(distribution, shape, seed, dtype, a, b, who: str) -> Tensor:
    """Drawn on the current backend with its own generator (CuPy's on the GPU, NumPy's stream on the host)."""
    return _random._gen(seed).draw(distribution, shape, _float_dtype(dtype, who), a, b)


def _finish(host: np.ndarray, dtype) -> Tensor:
    return _tensor(host.astype(_dt.as_dtype(dtype), copy=False))


def zeros(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """All zeros (``seed`` is accepted and unused, so every initializer has one signature)."""
    return _finish(np.zeros(_as_shape(shape, "zeros")), dtype)


def ones(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """All ones."""
    return _finish(np.ones(_as_shape(shape, "ones")), dtype)


def glorot_uniform(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Uniform in ``[-a, a]`` with ``a = sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio 2010)."""
    shape = _as_shape(shape, "glorot_uniform")
    fan_in, fan_out = _fans(shape)
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return _draw("uniform", shape, seed, dtype, -limit, limit, "glorot_uniform")


def glorot_normal(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Normal with standard deviation ``sqrt(2 / (fan_in + fan_out))``."""
    shape = _as_shape(shape, "glorot_normal")
    fan_in, fan_out = _fans(shape)
    return _draw("normal", shape, seed, dtype, 0.0, math.sqrt(2.0 / (fan_in + fan_out)), "glorot_normal")


def he_uniform(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Uniform in ``[-a, a]`` with ``a = sqrt(6 / fan_in)`` (He et al. 2015, for ReLU layers)."""
    shape = _as_shape(shape, "he_uniform")
    fan_in, _ = _fans(shape)
    limit = math.sqrt(6.0 / fan_in)
    return _draw("uniform", shape, seed, dtype, -limit, limit, "he_uniform")


def he_normal(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Normal with standard deviation ``sqrt(2 / fan_in)``."""
    shape = _as_shape(shape, "he_normal")
    fan_in, _ = _fans(shape)
    return _draw("normal", shape, seed, dtype, 0.0, math.sqrt(2.0 / fan_in), "he_normal")


def orthogonal(shape, seed: int | None = None, dtype=_dt.float32, gain: float = 1.0) -> Tensor:
    """A (semi-)orthogonal matrix over the last axis: rows or columns orthonormal, times ``gain``.

    The weight is viewed as ``(prod(shape[:-1]), shape[-1])``; the Q factor of
    a Gaussian matrix is sign-corrected with R's diagonal so it is uniformly
    distributed (Saxe et al. 2014; Mezzadri 2007).

    >>> import numpy as np, tensorlib as tl
    >>> q = tl.initializers.orthogonal((4, 3), seed=0).numpy()
    >>> bool(np.allclose(q.T @ q, np.eye(3), atol=1e-6))
    True
    """
    shape = _as_shape(shape, "orthogonal")
    if len(shape) < 2:
        raise ValueError(f"orthogonal: needs a weight of at least 2 dimensions, got shape {shape}")
    dtype = _float_dtype(dtype, "orthogonal")
    rows, cols = math.prod(shape[:-1]), shape[-1]
    if rows * cols == 0:  # an empty weight (QR of an empty matrix could not be reshaped)
        return _finish(np.zeros(shape), dtype)
    gaussian = _rng(seed).normal(size=(max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(gaussian)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _finish(gain * q.reshape(shape), dtype)


_BY_NAME = {f.__name__: f for f in (zeros, ones, glorot_uniform, glorot_normal, he_uniform, he_normal, orthogonal)}


def get(initializer):
    """An initializer from its name (``"he_uniform"``) or a callable ``(shape, seed, dtype) -> Tensor``."""
    if callable(initializer):
        return initializer
    try:
        return _BY_NAME[initializer]
    except (KeyError, TypeError):
        raise ValueError(
            f"initializers: unknown initializer {initializer!r}; choose one of {sorted(_BY_NAME)} or pass a callable"
        ) from None
