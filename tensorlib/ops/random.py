"""Random tensors with explicit seeding.

Every function takes ``seed=``: the same seed gives the same numbers.  Without
one, numbers come from a global generator that ``tl.random.seed(s)`` resets.

>>> import tensorlib as tl
>>> a = tl.random.normal((2,), seed=0); b = tl.random.normal((2,), seed=0)
>>> bool((a == b).numpy().all())
True
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..backends import base as _backends
from ..tensor import Tensor, make


class Generator:
    """A seeded stream of random tensors (NumPy's PCG64 underneath, on any backend)."""

    def __init__(self, seed: int | None = None):
        self._rng = np.random.default_rng(seed)

    def _finish(self, host, dtype, backend) -> Tensor:
        b = _backends.current() if backend is None else _backends.get(backend)
        return make(b.asarray(host.astype(_dt.as_dtype(dtype), copy=False)), b)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        return self._finish(self._rng.normal(mean, stddev, size=tuple(shape)), dtype, backend)

    def uniform(self, shape, minval=0.0, maxval=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        d = _dt.as_dtype(dtype)
        if d.kind in "iu":
            return self._finish(self._rng.integers(minval, maxval, size=tuple(shape)), d, backend)
        return self._finish(self._rng.uniform(minval, maxval, size=tuple(shape)), d, backend)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        """Normal samples redrawn until within two standard deviations (TensorFlow's rule)."""
        out = self._rng.normal(size=tuple(shape))
        bad = np.abs(out) > 2
        while bad.any():
            out[bad] = self._rng.normal(size=int(bad.sum()))
            bad = np.abs(out) > 2
        return self._finish(mean + stddev * out, dtype, backend)

    def bernoulli(self, shape, p=0.5, dtype=_dt.bool_, backend=None) -> Tensor:
        return self._finish(self._rng.random(size=tuple(shape)) < p, dtype, backend)

    def permutation(self, n: int, backend=None) -> Tensor:
        return self._finish(self._rng.permutation(n), _dt.int64, backend)


_global = [Generator()]


def seed(value: int) -> None:
    """Reset the global generator."""
    _global[0] = Generator(value)


def _gen(seed):
    return _global[0] if seed is None else Generator(seed)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _gen(seed).normal(shape, mean, stddev, dtype, backend)


def uniform(shape, minval=0.0, maxval=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _gen(seed).uniform(shape, minval, maxval, dtype, backend)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _gen(seed).truncated_normal(shape, mean, stddev, dtype, backend)


def bernoulli(shape, p=0.5, dtype=_dt.bool_, seed=None, backend=None) -> Tensor:
    return _gen(seed).bernoulli(shape, p, dtype, backend)


def permutation(n: int, seed=None, backend=None) -> Tensor:
    return _gen(seed).permutation(n, backend)
