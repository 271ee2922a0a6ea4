"""Dropout: a stateful op that outputs the result and its scaled mask."""

from __future__ import annotations

import numpy as np

from ...backends import base as _backends
from ...dispatch import apply, as_tensor
from ...grad.registry import register_gradient
from ...tensor import Tensor, Variable
from .. import math as math_ops
from .. import random as _random
from ..registry import defop, spec
from ._common import _check_float, _op_type, _shape_tuple


# ------------------------------------------------------------------ Dropout
def _dropout_infer(x, *key, rate, seed, noise_shape):
    _check_float("x", x)
    _random.check_key(key)
    if noise_shape is None:
        return x, spec(x.shape, x.dtype)
    if len(noise_shape) != len(x.shape) or any(
        n not in (1, d) and None not in (n, d) for n, d in zip(noise_shape, x.shape)
    ):
        raise ValueError(f"noise_shape {noise_shape} does not broadcast to x's shape {tuple(x.shape)}")
    return x, spec(noise_shape, x.dtype)


_dropout = defop(
    "Dropout",
    inputs=("x",),
    attrs={"rate": 0.5, "seed": None, "noise_shape": None},
    infer=_dropout_infer,
    variadic=True,
    stateful=True,
    doc="x * keep / (1 - rate) with keep ~ Bernoulli(1 - rate); outputs (y, scaled mask).  A second input, "
    "a key (a dropout in a branch or loop body), makes the mask a function of the key and the seed.",
)
_random.KEYED["Dropout"] = 1


@_dropout.kernel("numpy")
def _dropout_numpy(x, *key, rate, seed, noise_shape):
    # unseeded draws follow tl.random.seed()
    rng = _random.keyed_generator(_backends.get("numpy"), key[0], seed) if key else _random._gen(seed)._rng
    shape = x.shape if noise_shape is None else tuple(x.shape[i] if d is None else d for i, d in enumerate(noise_shape))
    mask = (rng.random(shape, dtype=np.float32) >= rate).astype(x.dtype)
    mask *= x.dtype.type(1.0 / (1.0 - rate))
    return x * mask, mask


@_dropout.per_backend
def _dropout_kernel(backend, x, *key, rate, seed, noise_shape):
    # The uniforms come from the backend's own generator (on the GPU for CuPy): the same stream and
    # numbers as the NumPy kernel's on the host backends.
    xp = backend.xp
    shape = x.shape if noise_shape is None else tuple(x.shape[i] if d is None else d for i, d in enumerate(noise_shape))
    if key:
        uniforms = backend.random(_random.keyed_generator(backend, key[0], seed), "random", shape, np.dtype(np.float32))
    else:
        uniforms = _random._gen(seed).draw_array(backend, "random", shape, np.dtype(np.float32))
    mask = xp.astype(uniforms >= rate, x.dtype) * (1.0 / (1.0 - rate))
    return x * mask, mask


register_gradient("Dropout", lambda node, g_y, g_mask, index: g_y * node.outputs[1] if index == 0 else None)


@_op_type("Dropout")
def dropout(x, rate: float, seed: int | None = None, noise_shape=None) -> Tensor:
    """Zero each element with probability ``rate`` and scale the rest by ``1 / (1 - rate)``.

    The same ``seed`` gives the same mask; ``noise_shape`` (broadcastable to
    ``x``'s shape, ``None`` entries meaning x's size) shares one draw along its
    size-1 axes.  ``rate=0`` returns ``x`` unchanged (as a Tensor, without drawing).

    >>> import tensorlib as tl
    >>> y = tl.nn.dropout(tl.ones((2, 4)), rate=0.5, seed=1)
    >>> sorted(set(y.numpy().ravel().tolist())) == [0.0, 2.0]
    True
    """
    rate = float(rate)
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
    if rate == 0.0:  # no draw, but the same contract: a float Tensor of tensorlib's own, never x's array
        x = as_tensor(x)
        if x.dtype.kind != "f":
            raise TypeError(f"Dropout: x must be a floating-point tensor, got {x.dtype} (x shape {tuple(x.shape)})")
        # A Variable is read into a value (it was returned itself: a later assign changed the result).
        return math_ops.identity(x) if isinstance(x, Variable) else x
    attrs = {"rate": rate, "seed": None if seed is None else int(seed), "noise_shape": _noise_shape(x, noise_shape)}
    return apply(_dropout, (x,), attrs)[0]


def keyed_dropout(x, rate: float, key, salt: int, noise_shape=None) -> Tensor:
    """:func:`dropout` (``0 < rate < 1``) whose mask is a function of ``key`` (an int64 scalar tensor) and ``salt``
    alone: a layer's own seeded stream (``tl.nn.Dropout(rate, seed=...)``) gives the key of each call."""
    attrs = {"rate": float(rate), "seed": int(salt), "noise_shape": _noise_shape(x, noise_shape)}
    return apply(_dropout, (x, key), attrs)[0]


def _noise_shape(x, noise_shape):
    """``noise_shape`` as a tuple, its None entries x's sizes where x's rank is known."""
    if noise_shape is None:
        return None
    noise_shape = _shape_tuple(noise_shape, "noise_shape", "Dropout")
    shape = getattr(x, "shape", None)
    if shape is not None and len(shape) == len(noise_shape):
        noise_shape = tuple(shape[i] if d is None else d for i, d in enumerate(noise_shape))
    return noise_shape
