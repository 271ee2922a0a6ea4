"""Layers for ``tl.nn``: Dense, Conv2D, pools, BatchNorm, LayerNorm, Embedding, Dropout, Flatten, LSTM, GRU,
MultiHeadAttention, TransformerEncoderLayer, TransformerDecoderLayer.

Sizes are explicit (no shape inference on the first call), weights are
created in ``__init__`` from a seeded initializer, and images are NHWC with
HWIO filters as in the rest of ``tl.nn``; ``data_format="NCHW"`` makes the
image layers take PyTorch's channels-first layout.

>>> import tensorlib as tl
>>> layer = tl.nn.Dense(3, 2, seed=0)
>>> layer(tl.ones((5, 3))).shape, layer.kernel.shape
((5, 2), (3, 2))
"""

from __future__ import annotations

import math

import numpy as np

from . import debugging as _debugging
from . import dtypes as _dt
from . import initializers as _init
from .module import Module
from .ops import control_flow as _control_flow
from .ops import linalg as _linalg
from .ops import math as _math
from .ops import nn as _nn
from .ops import reduce as _reduce
from .ops import shape as _shape
from .ops.creation import tensor as _tensor
from .ops.creation import zeros as _zeros
from .tensor import Tensor, Variable

__all__ = [
    "Dense",
    "Conv2D",
    "MaxPool2D",
    "AvgPool2D",
    "BatchNorm",
    "LayerNorm",
    "Embedding",
    "Dropout",
    "Flatten",
    "LSTM",
    "GRU",
    "MultiHeadAttention",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]


def _positive(what: str, value, layer: str) -> int:
    try:
        whole = not isinstance(value, bool) and int(value) == value and value >= 1
    except (TypeError, ValueError):  # None or a string: int() raised naming neither the layer nor the argument
        whole = False
    if not whole:
        raise ValueError(f"{layer}: {what} must be a positive integer, got {value!r}")
    return int(value)


def _number_in(value, low: float, high: float) -> bool:
    """A real number (not a bool or a string) in ``[low, high]``: None or a string had raised a raw Python error."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return False
    try:
        return low <= float(value) <= high
    except (TypeError, ValueError):
        return False


def _epsilon(value, layer: str) -> float:
    """A non-negative epsilon: a negative one made ``sqrt(var + eps)`` NaN for a small variance, silently."""
    if not _number_in(value, 0.0, math.inf):
        raise ValueError(f"{layer}: epsilon must be a number >= 0, got {value!r}")
    return float(value)


def _float_dtype(dtype, layer: str):
    """Normalization weights are floats (an int32 BatchNorm had int32 scale and running statistics)."""
    dtype = _dt.as_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"{layer}: dtype must be a float dtype, got {dtype}")
    return dtype


def _activation(activation, layer: str, none: bool = True):
    """None (where ``none``), a callable, or the name of a ``tl.nn`` function (``"relu"``, as Keras takes)."""
    if (activation is None and none) or callable(activation):
        return activation
    if isinstance(activation, str):
        from . import nn

        function = getattr(nn, activation, None)
        if callable(function) and not isinstance(function, type):
            return function
    raise ValueError(
        f"{layer}: activation must be {'None, ' if none else ''}a callable or the name of a tl.nn function "
        f"(such as 'relu'), got {activation!r}"
    )


def _linear(x):
    """The identity: Keras' ``"linear"`` activation, what ``activation=None`` means for the recurrent layers."""
    return x


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else _tensor(x)


def _data_format(value, layer: str) -> str:
    if value not in ("NHWC", "NCHW"):
        raise ValueError(f"{layer}: data_format must be 'NHWC' or 'NCHW', got {value!r}")
    return value


def _seed(value, layer: str):
    """None or an integer >= 0: a string or a negative seed raised NumPy's SeedSequence error, naming no layer, and
    MultiHeadAttention took 1.5 as 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{layer}: seed must be None or an integer >= 0, got {value!r}")
    return int(value)


def _seed_for(seed, k: int):
    """A different seed per weight of one layer (kernel, bias, ...), all from the layer's one seed."""
    return None if seed is None else int(seed) * 1000003 + k


class Dense(Module):
    """``activation(x @ kernel + bias)`` with ``kernel`` of shape ``(in_features, out_features)``.

    ``activation`` is a callable or, as in Keras, the name of a ``tl.nn`` function (``"relu"``).

    >>> import numpy as np, tensorlib as tl
    >>> d = tl.nn.Dense(2, 1, kernel_initializer="ones", seed=0)
    >>> d(np.array([[1.0, 2.0]], np.float32)).numpy().tolist()
    [[3.0]]
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__()
        self.in_features = _positive("in_features", in_features, "Dense")
        self.out_features = _positive("out_features", out_features, "Dense")
        seed = _seed(seed, "Dense")
        self.activation = _activation(activation, "Dense")
        self.kernel = Variable(
            _init.get(kernel_initializer)((self.in_features, self.out_features), seed=seed, dtype=dtype), name="kernel"
        )
        self.bias = (
            Variable(
                _init.get(bias_initializer)((self.out_features,), seed=_seed_for(seed, 1), dtype=dtype), name="bias"
            )
            if use_bias
            else None
        )

    def forward(self, x):
        x = _as_tensor(x)
        if not x.shape or x.shape[-1] != self.in_features:
            raise ValueError(
                f"Dense: input's last dimension must be in_features={self.in_features}, "
                f"got input shape {tuple(x.shape)}"
            )
        y = x @ self.kernel
        if self.bias is not None:
            y = y + self.bias
        return y if self.activation is None else self.activation(y)

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}" + (
            f", activation={getattr(self.activation, '__name__', self.activation)}" if self.activation else ""
        )


class Conv2D(Module):
    """2-D convolution of NHWC images with an HWIO ``kernel`` of shape ``(kh, kw, in_channels, out_channels)``.

    ``padding`` is ``"SAME"`` (TensorFlow's rule), ``"VALID"`` or explicit pairs, as for :func:`tl.nn.conv2d`;
    ``data_format="NCHW"`` takes and returns channels-first images (the kernel stays HWIO).

    >>> import tensorlib as tl
    >>> conv = tl.nn.Conv2D(3, 8, kernel_size=3, seed=0)
    >>> conv(tl.ones((2, 16, 16, 3))).shape
    (2, 16, 16, 8)
    >>> tl.nn.Conv2D(3, 8, kernel_size=3, seed=0, data_format="NCHW")(tl.ones((2, 3, 16, 16))).shape
    (2, 8, 16, 16)
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        strides=1,
        padding="SAME",
        dilations=1,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
        data_format: str = "NHWC",
    ):
        super().__init__()
        self.data_format = _data_format(data_format, "Conv2D")
        self.in_channels = _positive("in_channels", in_channels, "Conv2D")
        self.out_channels = _positive("out_channels", out_channels, "Conv2D")
        seed = _seed(seed, "Conv2D")
        sizes = (kernel_size, kernel_size) if isinstance(kernel_size, (int, np.integer)) else tuple(kernel_size)
        if len(sizes) != 2:
            raise ValueError(f"Conv2D: kernel_size must be an int or a pair (kh, kw), got {kernel_size!r}")
        kh, kw = sizes
        self.kernel_size = (_positive("kernel_size", kh, "Conv2D"), _positive("kernel_size", kw, "Conv2D"))
        self.strides, self.padding, self.dilations = strides, padding, dilations
        self.activation = _activation(activation, "Conv2D")
        self.kernel = Variable(
            _init.get(kernel_initializer)(
                (*self.kernel_size, self.in_channels, self.out_channels), seed=seed, dtype=dtype
            ),
            name="kernel",
        )
        self.bias = (
            Variable(
                _init.get(bias_initializer)((self.out_channels,), seed=_seed_for(seed, 1), dtype=dtype), name="bias"
            )
            if use_bias
            else None
        )

    def forward(self, x):
        y = _nn.conv2d(x, self.kernel, self.strides, self.padding, self.dilations, data_format=self.data_format)
        if self.bias is not None:
            y = y + (self.bias if self.data_format == "NHWC" else _shape.reshape(self.bias, (-1, 1, 1)))
        return y if self.activation is None else self.activation(y)

    def extra_repr(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, strides={self.strides}, "
            f"padding={self.padding!r}"
        )


class _Pool2D(Module):
    _function = None

    def __init__(self, ksize=2, strides=None, padding="VALID", data_format: str = "NHWC"):
        super().__init__()
        self.ksize = ksize
        self.strides = ksize if strides is None else strides
        self.padding = padding
        self.data_format = _data_format(data_format, type(self).__name__)

    def forward(self, x):
        return type(self)._function(x, self.ksize, self.strides, self.padding, data_format=self.data_format)

    def extra_repr(self) -> str:
        return f"ksize={self.ksize}, strides={self.strides}, padding={self.padding!r}"


class MaxPool2D(_Pool2D):
    """Max over ``ksize`` windows of NHWC images (``strides`` defaults to ``ksize``).

    >>> import tensorlib as tl
    >>> tl.nn.MaxPool2D(2)(tl.ones((1, 4, 6, 3))).shape
    (1, 2, 3, 3)
    """

    _function = staticmethod(_nn.max_pool)


class AvgPool2D(_Pool2D):
    """Mean over ``ksize`` windows of NHWC images (``strides`` defaults to ``ksize``).

    >>> import tensorlib as tl
    >>> tl.nn.AvgPool2D(2)(tl.ones((1, 4, 4, 1))).numpy().ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """

    _function = staticmethod(_nn.avg_pool)


class BatchNorm(Module):
    """Batch normalization over every axis but the channels (the last; axis 1 with ``data_format="NCHW"``).

    Training normalises with the batch mean and (biased) variance and updates
    ``running_mean``/``running_var`` as PyTorch does:
    ``running = (1 - momentum) * running + momentum * batch``, the variance
    Bessel-corrected.  (Keras' ``momentum`` weighs the old value instead: its
    ``momentum=0.99`` is ``momentum=0.01`` here, and Keras keeps the biased variance.)  ``eval()`` mode normalises with the running statistics.
    ``scale`` and ``offset`` (gamma and beta) are trainable; the running
    statistics are not.  Training on one value per channel (a batch of one dense
    example) is a ValueError, as in PyTorch; ``eval()`` mode takes it.

    >>> import numpy as np, tensorlib as tl
    >>> bn = tl.nn.BatchNorm(1, momentum=0.5)
    >>> y = bn(np.array([[1.0], [3.0]], np.float32))
    >>> y.numpy().ravel().round(3).tolist(), bn.running_mean.numpy().tolist(), bn.running_var.numpy().tolist()
    ([-1.0, 1.0], [1.0], [1.5])
    """

    def __init__(
        self,
        num_features: int,
        momentum: float = 0.1,
        epsilon: float = 1e-5,
        dtype=_dt.float32,
        data_format: str = "NHWC",
    ):
        super().__init__()
        self.data_format = _data_format(data_format, "BatchNorm")
        self.num_features = _positive("num_features", num_features, "BatchNorm")
        if not _number_in(momentum, 0.0, 1.0):
            raise ValueError(f"BatchNorm: momentum must be in [0, 1], got {momentum!r}")
        self.momentum, self.epsilon = float(momentum), _epsilon(epsilon, "BatchNorm")
        dtype = _float_dtype(dtype, "BatchNorm")
        self.scale = Variable(_init.ones((self.num_features,), dtype=dtype), name="scale")
        self.offset = Variable(_init.zeros((self.num_features,), dtype=dtype), name="offset")
        self.running_mean = Variable(
            _init.zeros((self.num_features,), dtype=dtype), name="running_mean", trainable=False
        )
        self.running_var = Variable(_init.ones((self.num_features,), dtype=dtype), name="running_var", trainable=False)

    def forward(self, x):
        x = _as_tensor(x)
        channel = -1 if self.data_format == "NHWC" else 1
        if len(x.shape) < 2 or x.shape[channel] != self.num_features:
            where = "last" if channel == -1 else "second (NCHW)"
            raise ValueError(
                f"BatchNorm: input's {where} (channel) dimension must be num_features="
                f"{self.num_features}, got input shape {tuple(x.shape)}"
            )
        # Per-channel vectors broadcast along the channel axis: (C,) for NHWC, (C, 1, ..., 1) for NCHW.
        along = (lambda v: v) if channel == -1 else (lambda v: _shape.reshape(v, (-1,) + (1,) * (len(x.shape) - 2)))
        if not self.training:
            return _nn.batch_normalization(
                x,
                along(self.running_mean),
                along(self.running_var),
                along(self.offset),
                along(self.scale),
                self.epsilon,
            )
        axes = tuple(a for a in range(len(x.shape)) if a != channel % len(x.shape))
        sizes = [x.shape[a] for a in axes]
        if None in sizes:  # traced with a size known only at run time
            count = _math.cast(_shape.shape_size(x, axes), _dt.float32)
            bessel = _math.cast(count / _math.maximum(count - 1.0, 1.0), x.dtype)
        else:
            count = math.prod(sizes)
            if count == 1:
                # Each value would be its own mean: the output all zeros, the running variance 0.
                raise ValueError(
                    "BatchNorm: expected more than 1 value per channel when training, got input shape "
                    f"{tuple(x.shape)}; use eval() mode for single examples"
                )
            bessel = count / max(count - 1, 1)
        # A float16 x is normalized in float32 with float32 statistics, as PyTorch does: moments() rounds them
        # to float16 (TensorFlow's rule), and the mean of x ~ 100 +- 0.3 rounded shifted y by up to 0.3.
        dtype = _dt.promote_types(x.dtype, self.scale.dtype)
        wide = _math.cast(x, _dt.float32) if x.dtype == _dt.float16 else x
        mean, variance = _nn.moments(wide, axes)
        # The running averages must not be differentiated through, nor make a recording tape keep them.
        batch_mean, batch_var = _math.stop_gradient(mean), _math.stop_gradient(variance) * bessel
        m = self.momentum
        for running, batch in ((self.running_mean, batch_mean), (self.running_var, batch_var)):
            update = running * (1.0 - m) + batch * m
            running.assign(update if update.dtype == running.dtype else _math.cast(update, running.dtype))
        y = _nn.batch_normalization(
            wide, along(mean), along(variance), along(self.offset), along(self.scale), self.epsilon
        )
        return y if y.dtype == dtype else _math.cast(y, dtype)

    def extra_repr(self) -> str:
        return f"{self.num_features}, momentum={self.momentum}, epsilon={self.epsilon}"


class Dropout(Module):
    """Zero elements with probability ``rate`` while training (scaling the rest); identity in ``eval()`` mode.

    Masks come from the global stream that ``tl.random.seed`` resets (a new mask per call).

    >>> import tensorlib as tl
    >>> drop = tl.nn.Dropout(0.5)
    >>> drop.eval()(tl.ones((2,))).numpy().tolist()
    [1.0, 1.0]
    """

    def __init__(self, rate: float):
        super().__init__()
        if not _number_in(rate, 0.0, 1.0) or rate == 1.0:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate!r}")
        self.rate = float(rate)

    def forward(self, x):
        x = _as_tensor(x)
        return _nn.dropout(x, self.rate) if self.training and self.rate > 0 else x

    def extra_repr(self) -> str:
        return f"rate={self.rate}"


class LayerNorm(Module):
    """Layer normalization over the trailing dimensions ``normalized_shape`` (an int or a tuple), as
    PyTorch's ``nn.LayerNorm`` and Keras' ``LayerNormalization``: :func:`tl.nn.layer_norm` with a trainable
    ``scale`` (ones) and ``offset`` (zeros) of that shape, each dropped with ``scale=False`` / ``center=False``.

    >>> import numpy as np, tensorlib as tl
    >>> ln = tl.nn.LayerNorm(2)
    >>> ln(np.array([[1.0, 3.0]], np.float32)).numpy().round(4).tolist(), ln.scale.shape
    ([[-1.0, 1.0]], (2,))
    """

    def __init__(
        self, normalized_shape, epsilon: float = 1e-5, center: bool = True, scale: bool = True, dtype=_dt.float32
    ):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape = tuple(_positive("normalized_shape", d, "LayerNorm") for d in shape)
        if not self.normalized_shape:
            raise ValueError("LayerNorm: normalized_shape must name at least one dimension, got ()")
        self.epsilon = _epsilon(epsilon, "LayerNorm")
        dtype = _float_dtype(dtype, "LayerNorm")
        self.scale = Variable(_init.ones(self.normalized_shape, dtype=dtype), name="scale") if scale else None
        self.offset = Variable(_init.zeros(self.normalized_shape, dtype=dtype), name="offset") if center else None

    def forward(self, x):
        x = _as_tensor(x)
        k = len(self.normalized_shape)
        if tuple(x.shape[len(x.shape) - k :]) != self.normalized_shape or len(x.shape) < k:
            raise ValueError(
                f"LayerNorm: input's trailing dimensions must be normalized_shape={self.normalized_shape}, "
                f"got input shape {tuple(x.shape)}"
            )
        return _nn.layer_norm(x, self.scale, self.offset, axis=tuple(range(-k, 0)), epsilon=self.epsilon)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, epsilon={self.epsilon}"


class Embedding(Module):
    """A trainable table of ``input_dim`` vectors of size ``output_dim``; calling it with integer ids looks
    them up (:func:`tl.nn.embedding_lookup`: ids outside ``[0, input_dim)`` are an IndexError, repeated ids
    add up their gradients).  The table starts from ``embeddings_initializer`` (Glorot uniform).

    >>> import numpy as np, tensorlib as tl
    >>> emb = tl.nn.Embedding(10, 3, seed=0)
    >>> emb(np.array([[1, 2, 1]])).shape, emb.embeddings.shape
    ((1, 3, 3), (10, 3))
    """

    def __init__(
        self, input_dim: int, output_dim: int, embeddings_initializer="glorot_uniform", seed=None, dtype=_dt.float32
    ):
        super().__init__()
        self.input_dim = _positive("input_dim", input_dim, "Embedding")
        self.output_dim = _positive("output_dim", output_dim, "Embedding")
        seed = _seed(seed, "Embedding")
        self.embeddings = Variable(
            _init.get(embeddings_initializer)((self.input_dim, self.output_dim), seed=seed, dtype=dtype),
            name="embeddings",
        )

    def forward(self, ids):
        return _nn.embedding_lookup(self.embeddings, ids)

    def extra_repr(self) -> str:
        return f"{self.input_dim}, {self.output_dim}"


class Flatten(Module):
    """Reshape ``(N, ...)`` to ``(N, prod(...))``.

    >>> import tensorlib as tl
    >>> tl.nn.Flatten()(tl.ones((2, 3, 4))).shape
    (2, 12)
    """

    def forward(self, x):
        x = _as_tensor(x)
        if len(x.shape) < 1:
            raise ValueError(f"Flatten: input needs a batch dimension, got shape {tuple(x.shape)}")
        rest = 1
        for d in x.shape[1:]:
            rest *= d
        # -1 keeps a traced batch dimension of unknown size; with zero-size features it would be
        # ambiguous, and the batch size is given instead.
        return _shape.reshape(x, (-1, rest) if rest else (x.shape[0], 0))


# ------------------------------------------------------------------ recurrent layers (on tl.scan)
class _Recurrent(Module):
    """Keras' recurrent layers over ``(batch, time, features)`` inputs: one ``tl.scan`` over time (a ``Scan`` node
    when traced, differentiable by a reverse scan), the input's product with ``kernel`` computed for every step
    at once before it.  The steps run in the dtype the input, the weights and the initial states promote to;
    ``activation=None`` is the identity (Keras' ``"linear"``); 0 time steps give the initial state and an
    empty sequence."""

    gates = 1
    name = "Recurrent"

    def __init__(self, input_size, units, activation, recurrent_activation, use_bias, return_sequences, return_state,
                 kernel_initializer, recurrent_initializer, seed, dtype):  # fmt: skip
        super().__init__()
        name = self.name
        self.input_size = _positive("input_size", input_size, name)
        self.units = _positive("units", units, name)
        seed = _seed(seed, name)
        # None is the identity, as in Keras (the step called None: a raw "'NoneType' object is not callable").
        self.activation = _activation(activation, name) or _linear
        self.recurrent_activation = _activation(recurrent_activation, name) or _linear
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.use_bias = bool(use_bias)
        dtype = _float_dtype(dtype, name)
        width = self.gates * self.units
        self.kernel = Variable(
            _init.get(kernel_initializer)((self.input_size, width), seed=seed, dtype=dtype), name="kernel"
        )
        # Keras initializes the whole (units, gates * units) recurrent kernel at once: "orthogonal" gives it
        # orthonormal rows (R R^T = I). Block by block, R R^T was 4 I for an LSTM (3 I for a GRU): twice
        # (sqrt(3) times) Keras' scale.
        self.recurrent_kernel = Variable(
            _init.get(recurrent_initializer)((self.units, width), seed=_seed_for(seed, 10), dtype=dtype),
            name="recurrent_kernel",
        )

    def _inputs(self, x, initial_state, states: int):
        """The input and the initial states, checked; the states (zeros by default) in the dtype of the steps'
        arithmetic: the input's projection promoted with the given states (a float64 layer fed float32 had
        float32 zero states that its float64 steps could not carry)."""
        x = _as_tensor(x)
        if len(x.shape) != 3 or x.shape[2] != self.input_size:
            raise ValueError(
                f"{self.name}: input must be (batch, time, input_size={self.input_size}), got shape "
                f"{tuple(x.shape)} ({x.dtype})"
            )
        if x.shape[1] is None:
            raise ValueError(
                f"{self.name}: the number of time steps must be known (tl.scan runs over them), got input shape "
                f"{tuple(x.shape)}: give the TensorSpec that size"
            )
        batch, given = x.shape[0], initial_state is not None
        if not given:
            initial_state = []
        elif not isinstance(initial_state, (list, tuple)):  # one tensor or array: a GRU's h (an LSTM needs two)
            initial_state = [initial_state]
        initial_state = [_as_tensor(s) for s in initial_state]
        if given and (
            len(initial_state) != states
            or any(
                len(s.shape) != 2 or s.shape[1] != self.units or None not in (s.shape[0], batch) and s.shape[0] != batch
                for s in initial_state
            )
        ):
            raise ValueError(
                f"{self.name}: initial_state must be {states} tensor(s) of shape (batch, units={self.units}), got "
                f"{[tuple(s.shape) for s in initial_state]} (input shape {tuple(x.shape)})"
            )
        if any(s.dtype.kind != "f" for s in initial_state):
            raise TypeError(
                f"{self.name}: initial_state must be floating-point, got "
                f"{[str(s.dtype) for s in initial_state]} (input {x.dtype}, layer {self.kernel.dtype})"
            )
        dtype = _dt.promote_types(
            x.dtype, self.kernel.dtype, self.recurrent_kernel.dtype, *(s.dtype for s in initial_state)
        )
        if not given:
            if batch is not None:
                zeros = _zeros((batch, self.units), dtype=dtype, backend=x.backend.name)
            else:  # zeros (batch, units) for a batch of unknown size (also of 0 steps)
                first = _math.zeros_like(_reduce.sum(x[:, :, :1], axis=1), dtype=dtype)
                zeros = first + _zeros((1, self.units), dtype=dtype, backend=x.backend.name)
            initial_state = [zeros] * states
        return x, [s if s.dtype == dtype else _math.cast(s, dtype) for s in initial_state]

    def _run(self, x, state, step):
        """Scan ``step(state, projected x_t) -> (state, h_t)`` over time; the layer's outputs.  A sequence of 0
        steps gives the initial state and an empty sequence ``(batch, 0, units)``, as ``tl.scan`` does."""
        projected = _linalg.matmul(x, self.kernel)  # (batch, time, gates * units): all steps in one product
        if self.use_bias:
            projected = projected + self._input_bias()
        state, hs = _control_flow.scan(step, tuple(state), _shape.transpose(projected, (1, 0, 2)))
        output = _shape.transpose(hs, (1, 0, 2)) if self.return_sequences else state[0]
        return (output, *state) if self.return_state else output

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.units}" + (", return_sequences=True" if self.return_sequences else "")


class LSTM(_Recurrent):
    """Long short-term memory over ``(batch, time, input_size)`` inputs, Keras' ``LSTM``: ``kernel`` ``(input_size,
    4 units)``, ``recurrent_kernel`` ``(units, 4 units)`` and ``bias`` ``(4 units,)`` in the gate order input,
    forget, cell, output (PyTorch's ``nn.LSTM`` order: its ``weight_ih`` is ``kernel.T``); ``unit_forget_bias``
    starts the forget gate's bias at 1.  ``h`` ``(batch, units)`` at the last step, the sequence of ``h``
    ``(batch, time, units)`` with ``return_sequences``, and ``(output, h, c)`` with ``return_state``;
    ``initial_state`` is ``(h, c)`` (zeros by default).

    >>> import tensorlib as tl
    >>> lstm = tl.nn.LSTM(3, 4, return_sequences=True, seed=0)
    >>> lstm(tl.ones((2, 5, 3))).shape
    (2, 5, 4)
    """

    gates = 4
    name = "LSTM"

    def __init__(
        self,
        input_size: int,
        units: int,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias: bool = True,
        return_sequences: bool = False,
        return_state: bool = False,
        unit_forget_bias: bool = True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__(input_size, units, activation, recurrent_activation, use_bias, return_sequences,
                         return_state, kernel_initializer, recurrent_initializer, seed, dtype)  # fmt: skip
        dtype = self.kernel.dtype
        if use_bias:
            bias = _init.get(bias_initializer)((4 * self.units,), seed=_seed_for(seed, 1), dtype=dtype).numpy().copy()
            if unit_forget_bias:
                bias[self.units : 2 * self.units] = 1.0
            self.bias = Variable(bias, name="bias")
        else:
            self.bias = None

    def _input_bias(self):
        return self.bias

    def forward(self, x, initial_state=None):
        x, state = self._inputs(x, initial_state, 2)
        u, act, gate = self.units, self.activation, self.recurrent_activation
        recurrent = self.recurrent_kernel

        def step(carry, z_x):
            h, c = carry
            z = z_x + _linalg.matmul(h, recurrent)
            i, f, g, o = gate(z[:, :u]), gate(z[:, u : 2 * u]), act(z[:, 2 * u : 3 * u]), gate(z[:, 3 * u :])
            c = f * c + i * g
            h = o * act(c)
            return (h, c), h

        return self._run(x, state, step)


class GRU(_Recurrent):
    """Gated recurrent unit over ``(batch, time, input_size)`` inputs, Keras' ``GRU``: ``kernel`` ``(input_size,
    3 units)`` and ``recurrent_kernel`` ``(units, 3 units)`` in the gate order update, reset, candidate.  With
    ``reset_after=True`` (Keras' default, PyTorch's ``nn.GRU`` formula) the reset gate multiplies the recurrent
    product, and ``bias`` is ``(2, 3 units)``: the input's and the recurrent product's; with ``False`` it
    multiplies ``h`` before its product, and ``bias`` is ``(3 units,)``.  Outputs as :class:`LSTM`'s, the state
    being ``h`` alone.

    >>> import tensorlib as tl
    >>> gru = tl.nn.GRU(3, 4, return_state=True, seed=0)
    >>> [t.shape for t in gru(tl.ones((2, 5, 3)))]
    [(2, 4), (2, 4)]
    """

    gates = 3
    name = "GRU"

    def __init__(
        self,
        input_size: int,
        units: int,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias: bool = True,
        return_sequences: bool = False,
        return_state: bool = False,
        reset_after: bool = True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__(input_size, units, activation, recurrent_activation, use_bias, return_sequences,
                         return_state, kernel_initializer, recurrent_initializer, seed, dtype)  # fmt: skip
        self.reset_after = bool(reset_after)
        shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
        self.bias = (
            Variable(_init.get(bias_initializer)(shape, seed=_seed_for(seed, 1), dtype=self.kernel.dtype), name="bias")
            if use_bias
            else None
        )

    def _input_bias(self):
        return self.bias[0] if self.reset_after else self.bias

    def forward(self, x, initial_state=None):
        x, state = self._inputs(x, initial_state, 1)
        u, act, gate = self.units, self.activation, self.recurrent_activation
        recurrent, reset_after = self.recurrent_kernel, self.reset_after
        recurrent_bias = self.bias[1] if self.use_bias and reset_after else None

        def step(carry, z_x):
            (h,) = carry
            if reset_after:
                z_h = _linalg.matmul(h, recurrent)
                if recurrent_bias is not None:
                    z_h = z_h + recurrent_bias
                update = gate(z_x[:, :u] + z_h[:, :u])
                reset = gate(z_x[:, u : 2 * u] + z_h[:, u : 2 * u])
                candidate = act(z_x[:, 2 * u :] + reset * z_h[:, 2 * u :])
            else:
                z_h = _linalg.matmul(h, recurrent[:, : 2 * u])
                update = gate(z_x[:, :u] + z_h[:, :u])
                reset = gate(z_x[:, u : 2 * u] + z_h[:, u:])
                candidate = act(z_x[:, 2 * u :] + _linalg.matmul(reset * h, recurrent[:, 2 * u :]))
            h = update * h + (1.0 - update) * candidate
            return (h,), h

        return self._run(x, state, step)

    def extra_repr(self) -> str:
        return super().extra_repr() + ("" if self.reset_after else ", reset_after=False")


# ------------------------------------------------------------------ attention
class MultiHeadAttention(Module):
    """Multi-head attention over batch-first sequences, PyTorch's ``nn.MultiheadAttention(embed_dim,
    num_heads, batch_first=True)``: the query ``(batch, L, embed_dim)``, key ``(batch, S, kdim)`` and value
    ``(batch, S, vdim)`` (both default to the query) are projected by ``query_kernel``, ``key_kernel`` and
    ``value_kernel`` (``(in, embed_dim)``: PyTorch's ``in_proj_weight`` blocks transposed), split into
    ``num_heads`` heads, attended (:func:`tl.nn.scaled_dot_product_attention`'s scaled softmax) and projected back
    by ``output_kernel``.  Returns ``(output (batch, L, embed_dim), weights)``: the attention weights averaged
    over the heads ``(batch, L, S)``, per head ``(batch, num_heads, L, S)`` with ``average_attn_weights=False``,
    None with ``need_weights=False``.

    Masks follow ``nn.MultiheadAttention``: a bool ``attn_mask`` ``(L, S)`` or ``(batch * num_heads, L, S)`` and
    a bool ``key_padding_mask`` ``(batch, S)`` mark the positions *not* attended with True; float masks are
    added to the scores; ``is_causal=True`` masks the future (``j > i``).  A query row with nothing to attend gets
    weights 0 (PyTorch's layer gives NaN there).  ``dropout`` drops attention weights in training mode.  The
    weights start as Glorot-uniform matrices and zero biases.

    >>> import tensorlib as tl
    >>> mha = tl.nn.MultiHeadAttention(8, 2, seed=0)
    >>> out, weights = mha(tl.ones((3, 5, 8)))
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        kdim: int | None = None,
        vdim: int | None = None,
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__()
        name = "MultiHeadAttention"
        self.embed_dim = _positive("embed_dim", embed_dim, name)
        self.num_heads = _positive("num_heads", num_heads, name)
        seed = _seed(seed, name)
        if self.embed_dim % self.num_heads:
            raise ValueError(f"{name}: embed_dim={self.embed_dim} must be a multiple of num_heads={self.num_heads}")
        self.kdim = self.embed_dim if kdim is None else _positive("kdim", kdim, name)
        self.vdim = self.embed_dim if vdim is None else _positive("vdim", vdim, name)
        if not _number_in(dropout, 0.0, 1.0) or float(dropout) >= 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout!r}")
        self.dropout = float(dropout)
        dtype = _float_dtype(dtype, name)
        init = _init.get("glorot_uniform")
        e = self.embed_dim
        for k, (part, fan_in) in enumerate((("query", e), ("key", self.kdim), ("value", self.vdim), ("output", e))):
            setattr(
                self,
                f"{part}_kernel",
                Variable(init((fan_in, e), seed=_seed_for(seed, k), dtype=dtype), name=f"{part}_kernel"),
            )
            setattr(
                self, f"{part}_bias", Variable(_init.zeros((e,), dtype=dtype), name=f"{part}_bias") if bias else None
            )

    def _heads(self, x, part: str, size: int, what: str):
        x = _as_tensor(x)
        if len(x.shape) != 3 or x.shape[2] != size:
            raise ValueError(
                f"MultiHeadAttention: {what} must be (batch, length, {size}), got shape {tuple(x.shape)} ({x.dtype})"
            )
        y = _linalg.matmul(x, getattr(self, f"{part}_kernel"))
        if getattr(self, f"{part}_bias") is not None:
            y = y + getattr(self, f"{part}_bias")
        d = self.embed_dim // self.num_heads  # (batch, heads, length, d): slices, as batch and length may be unknown
        return _shape.stack([y[:, :, h * d : (h + 1) * d] for h in range(self.num_heads)], axis=1), x

    def forward(
        self,
        query,
        key=None,
        value=None,
        key_padding_mask=None,
        need_weights: bool = True,
        attn_mask=None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ):
        from .ops.nn.composed import attend

        key = query if key is None else key
        value = key if value is None else value
        q, query = self._heads(query, "query", self.embed_dim, "query")
        k, key = self._heads(key, "key", self.kdim, "key")
        v, value = self._heads(value, "value", self.vdim, "value")
        batch, length, source = query.shape[0], query.shape[1], key.shape[1]
        # A key of batch 1 broadcast over the queries' batch, and unequal key and value lengths failed in a
        # BatchMatMulV2 that named neither the layer nor its inputs.
        if not _same(batch, key.shape[0], value.shape[0]) or not _same(source, value.shape[1]):
            raise ValueError(
                "MultiHeadAttention: query, key and value must share the batch size, key and value the length; "
                f"got query {tuple(query.shape)} ({query.dtype}), key {tuple(key.shape)} ({key.dtype}), value "
                f"{tuple(value.shape)} ({value.dtype})"
            )
        q, k, v, mask = self._mask(attn_mask, key_padding_mask, is_causal, batch, length, source, q, k, v)
        out, weights = attend(
            q, k, v, mask, self.dropout if self.training else 0.0, 1.0 / math.sqrt(self.embed_dim // self.num_heads),
            None, "MultiHeadAttention: attn_mask",  # dropout: new draws on every call
        )  # fmt: skip
        out = _shape.concat([out[:, h] for h in range(self.num_heads)], axis=-1)  # the heads side by side
        out = _linalg.matmul(out, self.output_kernel)
        if self.output_bias is not None:
            out = out + self.output_bias
        if not need_weights:
            return out, None
        return out, (_reduce.mean(weights, axis=1) if average_attn_weights else weights)

    def _mask(self, attn_mask, key_padding_mask, is_causal, batch, length, source, q, k, v):
        """``(q, k, v, mask)``: one mask broadcasting to ``(batch, heads, L, S)``, bool (True: attended) when
        every part is bool, else additive floats; with sizes unknown when traced, the heads and masks checked
        again when the graph runs (a mask of batch 1, or of one batch entry's heads, had been broadcast)."""
        parts, dims, names = [], [], []  # each mask's part, its dimensions (named as the heads') and its name
        if is_causal:
            if attn_mask is not None:
                raise ValueError("MultiHeadAttention: give attn_mask or is_causal, not both")
            if None in (length, source):
                raise ValueError("MultiHeadAttention: is_causal needs known query and key lengths")
            parts.append(_as_tensor(np.triu(np.ones((length, source), dtype=bool), 1)))
            dims.append(("L", "S"))
            names.append("the causal mask")
        # The masks' shapes are checked, not broadcast (PyTorch's checks): an (num_heads, L, S) attn_mask had been
        # applied to every batch entry's heads, a (1, S) key_padding_mask to every batch entry.
        if attn_mask is not None:
            m = _mask_tensor(attn_mask, "attn_mask")
            rows = batch * self.num_heads if batch is not None else None
            if (
                len(m.shape) not in (2, 3)
                or not _same(m.shape[-2], length)
                or not _same(m.shape[-1], source)
                or (len(m.shape) == 3 and not _same(m.shape[0], rows))
            ):
                raise ValueError(
                    f"MultiHeadAttention: attn_mask must be (L, S) = {(length, source)} or (batch * num_heads, L, S) = "
                    f"{(rows, length, source)}, got {tuple(m.shape)} ({m.dtype})"
                )
            if len(m.shape) == 3:  # (batch * heads, L, S) -> (batch, heads, L, S): slices, as for the heads
                m = _shape.stack([m[h :: self.num_heads] for h in range(self.num_heads)], axis=1)
            parts.append(m)
            dims.append(("L", "S") if len(m.shape) == 2 else ("N", self.num_heads, "L", "S"))
            names.append("attn_mask" if len(m.shape) == 2 else "attn_mask (as batch, heads, L, S)")
        if key_padding_mask is not None:
            m = _mask_tensor(key_padding_mask, "key_padding_mask")
            if len(m.shape) != 2 or not _same(m.shape[0], batch) or not _same(m.shape[1], source):
                raise ValueError(
                    f"MultiHeadAttention: key_padding_mask must be (batch, S) = {(batch, source)}, got "
                    f"{tuple(m.shape)} ({m.dtype})"
                )
            parts.append(_shape.expand_dims(m, (1, 2)))  # (batch, 1, 1, S)
            dims.append(("N", 1, 1, "S"))
            names.append("key_padding_mask (as batch, 1, 1, S)")
        if None in (*q.shape, *k.shape, *v.shape) or any(None in m.shape for m in parts):
            heads = [(q, ("N", None, "L", None)), (k, ("N", None, "S", None)), (v, ("N", None, "S", None))]
            checked = _debugging.assert_shapes(
                heads + list(zip(parts, dims)),
                "MultiHeadAttention: the inputs are query, key and value (as batch, heads, length, depth)"
                + "".join(f", {name}" for name in names),
            )
            (q, k, v), parts = checked[:3], checked[3:]
        if not parts:
            return q, k, v, None
        if all(m.dtype.kind == "b" for m in parts):
            masked = parts[0]
            for m in parts[1:]:
                masked = _math.logical_or(masked, m)
            return q, k, v, _math.logical_not(masked)
        total = None
        for m in parts:
            term = _nn_where(m, -math.inf, 0.0, q.dtype) if m.dtype.kind == "b" else m.astype(q.dtype)
            total = term if total is None else total + term
        return q, k, v, total

    def extra_repr(self) -> str:
        return f"{self.embed_dim}, num_heads={self.num_heads}" + (f", dropout={self.dropout}" if self.dropout else "")


def _mask_tensor(value, what: str) -> Tensor:
    """A mask as a bool or floating tensor; the error names the mask, its shape and dtype."""
    m = _as_tensor(value)
    if m.dtype.kind not in "bf":
        raise TypeError(f"MultiHeadAttention: {what} must be bool or floating, got shape {tuple(m.shape)} ({m.dtype})")
    return m


def _same(*sizes) -> bool:
    """The known sizes among ``sizes`` are equal (None: unknown when traced)."""
    return len({d for d in sizes if d is not None}) <= 1


def _nn_where(mask, if_true: float, if_false: float, dtype):
    from .ops import elementwise as _elementwise

    return _elementwise.where(mask, _tensor(np.asarray(if_true, dtype)), _tensor(np.asarray(if_false, dtype)))


class _TransformerLayer(Module):
    """What PyTorch's encoder and decoder layers share: their arguments, the attention blocks (``_CROSS``: with
    attention to a memory too), the feed-forward block and the residual connections around each block."""

    _CROSS = False

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation="relu",
        layer_norm_eps: float = 1e-5,
        norm_first: bool = False,
        bias: bool = True,
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__()
        name = type(self).__name__
        d_model = _positive("d_model", d_model, name)
        seed = _seed(seed, name)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout, bias, seed=seed, dtype=dtype)
        if self._CROSS:
            self.multihead_attn = MultiHeadAttention(
                d_model, nhead, dropout, bias, seed=_seed_for(seed, 30), dtype=dtype
            )
        self.linear1 = Dense(d_model, dim_feedforward, use_bias=bias, seed=_seed_for(seed, 20), dtype=dtype)
        self.linear2 = Dense(dim_feedforward, d_model, use_bias=bias, seed=_seed_for(seed, 21), dtype=dtype)
        for k in range(1, 4 if self._CROSS else 3):
            # bias=False drops the LayerNorms' offsets too, as in PyTorch (they had stayed, trainable).
            setattr(self, f"norm{k}", LayerNorm(d_model, layer_norm_eps, center=bias, dtype=dtype))
        self.dropout = Dropout(dropout)
        # PyTorch's layer takes a name or a callable: None failed in forward, naming neither layer nor argument.
        self.activation = _activation(activation, name, none=False)
        self.norm_first = bool(norm_first)

    def _sequence(self, x, what: str):
        """``x`` as a ``(batch, length, d_model)`` tensor; the error names this layer (it named its attention)."""
        x, d = _as_tensor(x), self.self_attn.embed_dim
        if len(x.shape) != 3 or x.shape[2] != d:
            raise ValueError(
                f"{type(self).__name__}: {what} must be (batch, length, d_model={d}), got shape {tuple(x.shape)} "
                f"({x.dtype})"
            )
        return x

    def _attention(self, attention, x, memory, mask, padding, causal):
        out, _ = attention(
            x, memory, memory, attn_mask=mask, key_padding_mask=padding, need_weights=False, is_causal=causal
        )
        return self.dropout(out)

    def _feed_forward(self, x):
        return self.dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def _residuals(self, x, blocks):
        """Each block added to its input, layer-normalized after it (post-norm) or before the block (pre-norm)."""
        for k, block in enumerate(blocks, 1):
            norm = getattr(self, f"norm{k}")
            x = x + block(norm(x)) if self.norm_first else norm(x + block(x))
        return x

    def extra_repr(self) -> str:
        return "norm_first=True" if self.norm_first else ""


class TransformerEncoderLayer(_TransformerLayer):
    """PyTorch's ``nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
    layer_norm_eps, batch_first=True, norm_first)``: self-attention (:class:`MultiHeadAttention`) and a
    feed-forward block (``linear2(dropout(activation(linear1(x))))``), each added to its input and layer-normalized
    after (``norm_first=False``) or before (``norm_first=True``).  ``activation`` is ``"relu"``, ``"gelu"`` (the
    exact one, PyTorch's) or a callable; dropout acts in training mode; ``bias=False`` drops the biases of the
    projections and the layer norms' offsets, as in PyTorch.  ``forward(src, src_mask=None,
    src_key_padding_mask=None, is_causal=False)`` takes ``(batch, length, d_model)``; the masks as
    :class:`MultiHeadAttention`'s.

    >>> import tensorlib as tl
    >>> layer = tl.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, seed=0)
    >>> layer(tl.ones((3, 5, 8))).shape
    (3, 5, 8)
    """

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        def attention(x):
            return self._attention(self.self_attn, x, None, src_mask, src_key_padding_mask, is_causal)

        return self._residuals(self._sequence(src, "src"), [attention, self._feed_forward])


class TransformerDecoderLayer(_TransformerLayer):
    """PyTorch's ``nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
    layer_norm_eps, batch_first=True, norm_first)``: self-attention over the target, attention to ``memory`` (the
    encoder's output) and a feed-forward block, each added to its input and layer-normalized after
    (``norm_first=False``) or before.  ``forward(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``; the
    masks as :class:`MultiHeadAttention`'s.

    >>> import tensorlib as tl
    >>> layer = tl.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, seed=0)
    >>> layer(tl.ones((3, 4, 8)), tl.ones((3, 6, 8)), tgt_is_causal=True).shape
    (3, 4, 8)
    """

    _CROSS = True

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ):
        tgt, memory = self._sequence(tgt, "tgt"), self._sequence(memory, "memory")

        def self_attention(x):
            return self._attention(self.self_attn, x, None, tgt_mask, tgt_key_padding_mask, tgt_is_causal)

        def cross_attention(x):
            return self._attention(
                self.multihead_attn, x, memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )

        return self._residuals(tgt, [self_attention, cross_attention, self._feed_forward])
