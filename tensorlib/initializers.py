"""Initial values for weights, each drawn from an explicit seed.

Every initializer is called as ``init(shape, seed=None, dtype=float32)`` and
returns a Tensor.  ``seed=None`` draws from the global stream that
``tl.random.seed(s)`` resets, so a whole model is reproducible from one call.
Fans follow Keras: a ``(in, out)`` matrix has ``fan_in = in``; a conv filter
``(kh, kw, in, out)`` (HWIO) has ``fan_in = kh * kw * in`` and ``fan_out = kh * kw * out``; a vector has
``fan_in = fan_out = len``.  (PyTorch's ``(out, in, kh, kw)`` weights give the same fans for the same layer.)

Keras' set: :func:`variance_scaling` and its special cases :func:`lecun_uniform`, :func:`lecun_normal`,
:func:`glorot_uniform`, :func:`he_uniform`; :func:`random_normal`, :func:`random_uniform`,
:func:`truncated_normal`, :func:`constant`, :func:`identity` and :func:`orthogonal`.  torch.nn.init's:
:func:`kaiming_uniform`, :func:`kaiming_normal` with :func:`calculate_gain`, ``xavier_uniform_`` as
:func:`glorot_uniform`, ``xavier_normal_`` as :func:`variance_scaling` with ``mode="fan_avg"`` and
``distribution="untruncated_normal"`` (Keras' :func:`glorot_normal` is truncated), and ``eye_``/``dirac_`` as
:func:`identity`.  Parameters follow
the dtype as keywords; bind them with ``functools.partial`` to hand one to a layer, as
``Dense(..., kernel_initializer=partial(tl.initializers.variance_scaling, scale=2.0))``.

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

__all__ = [
    "zeros",
    "ones",
    "constant",
    "glorot_uniform",
    "glorot_normal",
    "he_uniform",
    "he_normal",
    "lecun_uniform",
    "lecun_normal",
    "variance_scaling",
    "kaiming_uniform",
    "kaiming_normal",
    "calculate_gain",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "orthogonal",
    "identity",
    "eye",
    "get",
]


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


def _fans(shape, who: str) -> tuple:
    if len(shape) < 1:
        raise ValueError(
            f"initializers.{who}: a weight needs at least one dimension to define its fans, got shape {shape}"
        )
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
    fan_in, fan_out = _fans(shape, "glorot_uniform")
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return _draw("uniform", shape, seed, dtype, -limit, limit, "glorot_uniform")


def glorot_normal(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Keras' ``GlorotNormal``: a normal truncated at two deviations, of variance ``2 / (fan_in + fan_out)`` (its
    deviation before truncation divided by 0.8796...; an untruncated normal had tails past 4.7 deviations where
    Keras' draws stop at 2.27).  PyTorch's untruncated ``xavier_normal_`` is :func:`variance_scaling` with
    ``mode="fan_avg"`` and ``distribution="untruncated_normal"``.

    >>> import tensorlib as tl
    >>> w = tl.initializers.glorot_normal((300, 500), seed=0).numpy()
    >>> round(float(w.std() * (800 / 2) ** 0.5), 2), bool(abs(w).max() <= 2 * (2 / 800) ** 0.5 / 0.87962566)
    (1.0, True)
    """
    return _scaled(shape, seed, dtype, 1.0, "fan_avg", "truncated_normal", "glorot_normal")


def he_uniform(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Uniform in ``[-a, a]`` with ``a = sqrt(6 / fan_in)`` (He et al. 2015, for ReLU layers)."""
    shape = _as_shape(shape, "he_uniform")
    fan_in, _ = _fans(shape, "he_uniform")
    limit = math.sqrt(6.0 / fan_in)
    return _draw("uniform", shape, seed, dtype, -limit, limit, "he_uniform")


def he_normal(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Keras' ``HeNormal``: a normal truncated at two deviations, of variance ``2 / fan_in`` (He et al. 2015, for
    ReLU layers); PyTorch's untruncated ``kaiming_normal_`` is :func:`kaiming_normal`.

    >>> import tensorlib as tl
    >>> w = tl.initializers.he_normal((400, 300), seed=0).numpy()
    >>> round(float(w.std() * (400 / 2) ** 0.5), 2), bool(abs(w).max() <= 2 * (2 / 400) ** 0.5 / 0.87962566)
    (1.0, True)
    """
    return _scaled(shape, seed, dtype, 2.0, "fan_in", "truncated_normal", "he_normal")


_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")
# The standard deviation of a standard normal truncated to [-2, 2]: Keras divides by it so that a truncated draw
# has the variance asked for (scipy.stats.truncnorm(-2, 2).std()).
_TRUNCATED_STDDEV = 0.87962566103423978


def _fan(shape, mode: str, who: str, modes: tuple = _MODES) -> float:
    """The fan that ``mode`` names (``fan_avg``: the mean of the two), at least 1 as in Keras."""
    if mode not in modes:
        raise ValueError(f"initializers.{who}: mode must be one of {', '.join(map(repr, modes))}, got {mode!r}")
    fan_in, fan_out = _fans(shape, who)
    return {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[mode]


def _positive_number(value, what: str, who: str) -> float:
    if isinstance(value, (bool, str, bytes)) or not _is_real(value) or not 0.0 < float(value) < math.inf:
        raise ValueError(f"initializers.{who}: {what} must be a finite number > 0, got {value!r}")
    return float(value)


def _real(value, what: str, who: str) -> float:
    if isinstance(value, (bool, str, bytes)) or not _is_real(value) or not math.isfinite(float(value)):
        raise ValueError(f"initializers.{who}: {what} must be a finite number, got {value!r}")
    return float(value)


def _is_real(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, complex)


def variance_scaling(
    shape,
    seed: int | None = None,
    dtype=_dt.float32,
    scale: float = 1.0,
    mode: str = "fan_in",
    distribution: str = "truncated_normal",
) -> Tensor:
    """Keras' ``VarianceScaling``: draws of variance ``scale / n``, ``n`` the ``mode``'s fan (``"fan_in"``,
    ``"fan_out"`` or ``"fan_avg"``, their mean).

    ``distribution="truncated_normal"`` draws a normal of standard deviation ``sqrt(scale / n) / 0.8796...``
    truncated at two of those deviations (the divisor, the deviation of a standard normal truncated there, gives
    back the variance asked for), ``"untruncated_normal"`` a normal of deviation ``sqrt(scale / n)``, and
    ``"uniform"`` draws in ``[-sqrt(3 scale / n), sqrt(3 scale / n)]``.

    >>> import numpy as np, tensorlib as tl
    >>> w = tl.initializers.variance_scaling((400, 500), seed=0, scale=2.0, mode="fan_in").numpy()
    >>> round(float(w.var() * 400), 1), bool(abs(w).max() <= 2 * (2.0 / 400) ** 0.5 / 0.87962566)
    (2.0, True)
    """
    return _scaled(shape, seed, dtype, scale, mode, distribution, "variance_scaling")


def _scaled(shape, seed, dtype, scale, mode: str, distribution: str, who: str) -> Tensor:
    """:func:`variance_scaling`, its errors naming ``who``."""
    shape = _as_shape(shape, who)
    scale = _positive_number(scale, "scale", who)
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(
            f"initializers.{who}: distribution must be one of {', '.join(map(repr, _DISTRIBUTIONS))}, "
            f"got {distribution!r}"
        )
    variance = scale / _fan(shape, mode, who)
    if distribution == "uniform":
        limit = math.sqrt(3.0 * variance)
        return _draw("uniform", shape, seed, dtype, -limit, limit, who)
    if distribution == "untruncated_normal":
        return _draw("normal", shape, seed, dtype, 0.0, math.sqrt(variance), who)
    return _draw("truncated_normal", shape, seed, dtype, 0.0, math.sqrt(variance) / _TRUNCATED_STDDEV, who)


def lecun_uniform(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Uniform in ``[-a, a]`` with ``a = sqrt(3 / fan_in)`` (LeCun et al. 1998; Keras' ``LecunUniform``).

    >>> import tensorlib as tl
    >>> bool((abs(tl.initializers.lecun_uniform((3, 4), seed=0).numpy()) <= 1.0).all())
    True
    """
    return _scaled(shape, seed, dtype, 1.0, "fan_in", "uniform", "lecun_uniform")


def lecun_normal(shape, seed: int | None = None, dtype=_dt.float32) -> Tensor:
    """Truncated normal of variance ``1 / fan_in`` (Keras' ``LecunNormal``, the initializer for SELU networks).

    >>> import tensorlib as tl
    >>> bool((abs(tl.initializers.lecun_normal((4, 2), seed=0).numpy()) <= 2 * 0.5 / 0.8796257).all())
    True
    """
    return _scaled(shape, seed, dtype, 1.0, "fan_in", "truncated_normal", "lecun_normal")


_LINEAR = ("linear", "identity", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's ``nn.init.calculate_gain``: the factor that keeps activations' variance through ``nonlinearity``:
    1 for ``"linear"``, the convolutions and ``"sigmoid"``, 5/3 for ``"tanh"``, ``sqrt(2)`` for ``"relu"``,
    ``sqrt(2 / (1 + slope**2))`` for ``"leaky_relu"`` (``param`` is the slope, 0.01 by default) and 3/4 for
    ``"selu"``.

    >>> import tensorlib as tl
    >>> tl.initializers.calculate_gain("relu") == 2**0.5, round(tl.initializers.calculate_gain("leaky_relu", 0.2), 6)
    (True, 1.386750)
    """
    if nonlinearity in (*_LINEAR, "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "selu":
        return 0.75
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else _real(param, "the leaky_relu slope (param)", "calculate_gain")
        return math.sqrt(2.0 / (1.0 + slope**2))
    raise ValueError(
        "initializers.calculate_gain: nonlinearity must be one of 'linear', 'conv1d', 'conv2d', 'conv3d', "
        f"'conv_transpose1d/2d/3d', 'sigmoid', 'tanh', 'relu', 'leaky_relu', 'selu', got {nonlinearity!r}"
    )


def _kaiming_stddev(shape, a, mode: str, nonlinearity: str, who: str) -> float:
    fan = _fan(shape, mode, who, ("fan_in", "fan_out"))
    return calculate_gain(nonlinearity, _real(a, "a", who)) / math.sqrt(fan)


def kaiming_uniform(
    shape, seed: int | None = None, dtype=_dt.float32, a: float = 0.0, mode: str = "fan_in", nonlinearity="leaky_relu"
) -> Tensor:
    """PyTorch's ``nn.init.kaiming_uniform_``: uniform in ``[-b, b]``, ``b = gain * sqrt(3 / fan)``, the gain
    ``calculate_gain(nonlinearity, a)`` (``a``: the leaky ReLU's negative slope), the fan ``mode``'s
    (``"fan_in"`` or ``"fan_out"``).  The defaults give :func:`he_uniform`.

    >>> import tensorlib as tl
    >>> w = tl.initializers.kaiming_uniform((100, 200), seed=0, a=5**0.5).numpy()  # nn.Linear's default weights
    >>> bool(abs(w).max() <= 0.1)
    True
    """
    shape = _as_shape(shape, "kaiming_uniform")
    bound = math.sqrt(3.0) * _kaiming_stddev(shape, a, mode, nonlinearity, "kaiming_uniform")
    return _draw("uniform", shape, seed, dtype, -bound, bound, "kaiming_uniform")


def kaiming_normal(
    shape, seed: int | None = None, dtype=_dt.float32, a: float = 0.0, mode: str = "fan_in", nonlinearity="leaky_relu"
) -> Tensor:
    """PyTorch's ``nn.init.kaiming_normal_``: a normal of deviation ``calculate_gain(nonlinearity, a) / sqrt(fan)``
    (untruncated).  The defaults give the variance of :func:`he_normal` (Keras' truncated normal).

    >>> import tensorlib as tl
    >>> w = tl.initializers.kaiming_normal((500, 400), seed=0, mode="fan_out", nonlinearity="relu").numpy()
    >>> round(float(w.std() * 400**0.5), 1)
    1.4
    """
    shape = _as_shape(shape, "kaiming_normal")
    stddev = _kaiming_stddev(shape, a, mode, nonlinearity, "kaiming_normal")
    return _draw("normal", shape, seed, dtype, 0.0, stddev, "kaiming_normal")


def random_normal(shape, seed: int | None = None, dtype=_dt.float32, mean: float = 0.0, stddev: float = 0.05) -> Tensor:
    """Normal draws of ``mean`` and ``stddev`` (Keras' ``RandomNormal`` and its defaults; ``nn.init.normal_``).

    >>> import tensorlib as tl
    >>> round(float(tl.initializers.random_normal((300, 300), seed=0, mean=1.0).numpy().mean()), 2)
    1.0
    """
    shape = _as_shape(shape, "random_normal")
    mean, stddev = _real(mean, "mean", "random_normal"), _real(stddev, "stddev", "random_normal")
    return _draw("normal", shape, seed, dtype, mean, stddev, "random_normal")


def random_uniform(
    shape, seed: int | None = None, dtype=_dt.float32, minval: float = -0.05, maxval: float = 0.05
) -> Tensor:
    """Uniform draws in ``[minval, maxval)`` (Keras' ``RandomUniform`` and its defaults; ``nn.init.uniform_``).

    >>> import tensorlib as tl
    >>> w = tl.initializers.random_uniform((1000,), seed=0, minval=2.0, maxval=3.0).numpy()
    >>> bool((w >= 2.0).all() and (w < 3.0).all())
    True
    """
    shape = _as_shape(shape, "random_uniform")
    minval, maxval = _real(minval, "minval", "random_uniform"), _real(maxval, "maxval", "random_uniform")
    if minval > maxval:
        raise ValueError(f"initializers.random_uniform: minval must not exceed maxval, got {minval} and {maxval}")
    return _draw("uniform", shape, seed, dtype, minval, maxval, "random_uniform")


def truncated_normal(
    shape, seed: int | None = None, dtype=_dt.float32, mean: float = 0.0, stddev: float = 0.05
) -> Tensor:
    """A normal of ``mean`` and ``stddev`` redrawn until within two ``stddev`` of the mean (Keras'
    ``TruncatedNormal`` and its defaults; the draws' deviation is ``0.8796 * stddev``).

    >>> import tensorlib as tl
    >>> bool((abs(tl.initializers.truncated_normal((1000,), seed=0, stddev=1.0).numpy()) <= 2.0).all())
    True
    """
    shape = _as_shape(shape, "truncated_normal")
    mean, stddev = _real(mean, "mean", "truncated_normal"), _real(stddev, "stddev", "truncated_normal")
    return _draw("truncated_normal", shape, seed, dtype, mean, stddev, "truncated_normal")


def constant(shape, seed: int | None = None, dtype=_dt.float32, value=0.0) -> Tensor:
    """Every element ``value`` (Keras' ``Constant``; ``nn.init.constant_``); ``value`` may also be an array that
    broadcasts to ``shape``.

    >>> import tensorlib as tl
    >>> tl.initializers.constant((2, 2), value=0.5).numpy().tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    shape = _as_shape(shape, "constant")
    try:
        host = np.broadcast_to(np.asarray(value.numpy() if isinstance(value, Tensor) else value), shape)
    except ValueError:
        raise ValueError(
            f"initializers.constant: value of shape {np.shape(value)} does not broadcast to shape {shape}"
        ) from None
    if host.dtype.kind not in "biuf":
        raise TypeError(f"initializers.constant: value must be a number or an array of numbers, got {value!r}")
    return _finish(np.array(host), dtype)


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
    gain = _real(gain, "gain", "orthogonal")
    rows, cols = math.prod(shape[:-1]), shape[-1]
    if rows * cols == 0:  # an empty weight (QR of an empty matrix could not be reshaped)
        return _finish(np.zeros(shape), dtype)
    gaussian = _rng(seed).normal(size=(max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(gaussian)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _finish(gain * q.reshape(shape), dtype)


def identity(shape, seed: int | None = None, dtype=_dt.float32, gain: float = 1.0) -> Tensor:
    """``gain`` times the identity: for a matrix ``(in, out)`` its ``min(in, out)`` diagonal ones (Keras'
    ``Identity``, ``nn.init.eye_``); for a convolution filter ``(*kernel, in, out)`` a one at the kernel's centre
    tap (index ``k // 2``) from channel ``i`` to channel ``i`` (``nn.init.dirac_`` in the HWIO layout), so the
    convolution with ``padding="SAME"`` passes its input through.  ``eye`` is this function.

    >>> import tensorlib as tl
    >>> tl.initializers.identity((2, 3), gain=2.0).numpy().tolist()
    [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    >>> tl.initializers.identity((3, 3, 1, 1)).numpy()[:, :, 0, 0].tolist()
    [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    shape = _as_shape(shape, "identity")
    if len(shape) < 2:
        raise ValueError(f"initializers.identity: needs a matrix or a convolution filter, got shape {shape}")
    gain = _real(gain, "gain", "identity")
    host = np.zeros(shape)
    if host.size:
        channels = np.arange(min(shape[-2:]))
        host[(*(k // 2 for k in shape[:-2]), channels, channels)] = gain
    return _finish(host, dtype)


eye = identity

_BY_NAME = {
    f.__name__.replace("_", ""): f
    for f in (
        zeros,
        ones,
        constant,
        glorot_uniform,
        glorot_normal,
        he_uniform,
        he_normal,
        lecun_uniform,
        lecun_normal,
        variance_scaling,
        kaiming_uniform,
        kaiming_normal,
        random_normal,
        random_uniform,
        truncated_normal,
        orthogonal,
        identity,
    )
}
# PyTorch's names for the same initializers (torch.nn.init.xavier_uniform_, eye_, normal_, ...).
_BY_NAME |= {
    "xavieruniform": glorot_uniform,
    "xaviernormal": glorot_normal,
    "eye": identity,
    "normal": random_normal,
    "uniform": random_uniform,
    "truncnormal": truncated_normal,
}


def get(initializer):
    """An initializer from its name or a callable ``(shape, seed, dtype) -> Tensor``.  Names are Keras' in either
    spelling (``"he_uniform"``, ``"HeUniform"``) or PyTorch's (``"kaiming_normal"``, ``"xavier_uniform"``,
    ``"eye"``); a named initializer with parameters takes its defaults.

    >>> import tensorlib as tl
    >>> tl.initializers.get("LecunNormal") is tl.initializers.get("lecun_normal") is tl.initializers.lecun_normal
    True
    """
    if callable(initializer):
        return initializer
    found = _BY_NAME.get(initializer.replace("_", "").lower()) if isinstance(initializer, str) else None
    if found is None:
        names = sorted(f.__name__ for f in set(_BY_NAME.values()))
        raise ValueError(
            f"initializers: unknown initializer {initializer!r}; choose one of {names} (or PyTorch's name: "
            "'xavier_uniform', 'kaiming_normal', 'eye', ...) or pass a callable"
        )
    return found
