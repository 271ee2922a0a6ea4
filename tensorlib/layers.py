"""Layers for ``tl.nn``: Dense, Conv1D/2D/3D, Conv1DTranspose/Conv2DTranspose/Conv3DTranspose, DepthwiseConv2D, pools
(1-D, 2-D, 3-D, global and adaptive), BatchNorm, LayerNorm, RMSNorm, GroupNorm, InstanceNorm, Embedding, Dropout,
Flatten, SimpleRNN, LSTM, GRU, Bidirectional, MultiHeadAttention, TransformerEncoderLayer,
TransformerDecoderLayer; Keras' reshaping, merging, preprocessing and noise layers (Reshape, Permute, Add,
Concatenate, Dot, TimeDistributed, Normalization, AlphaDropout, ...) and PyTorch's Unflatten, PixelShuffle,
Bilinear and EmbeddingBag.

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

import functools
import inspect
import math
import operator

import numpy as np

from . import debugging as _debugging
from . import dtypes as _dt
from . import initializers as _init
from . import tree as _tree
from .debugging import check_numerics
from .module import Module
from .module import in_training as _in_training
from .ops import array as _array
from .ops import control_flow as _control_flow
from .ops import elementwise as _elementwise
from .ops import linalg as _linalg
from .ops import math as _math
from .ops import nn as _nn
from .ops import random as _random
from .ops import reduce as _reduce
from .ops import search as _search
from .ops import segment as _segment
from .ops import shape as _shape
from .ops.creation import tensor as _tensor
from .ops.creation import zeros as _zeros
from .ops.nn._common import _float_or_float64
from .ops.nn.dropout import keyed_dropout as _keyed_dropout
from .tensor import Tensor, Variable

__all__ = [
    "Conv1DTranspose",
    "Bidirectional",
    "SimpleRNN",
    "AdaptiveAvgPool1D",
    "AdaptiveAvgPool2D",
    "AdaptiveAvgPool3D",
    "AdaptiveMaxPool1D",
    "AdaptiveMaxPool2D",
    "AdaptiveMaxPool3D",
    "Dense",
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "Conv2DTranspose",
    "Conv3DTranspose",
    "DepthwiseConv2D",
    "MaxPool1D",
    "AvgPool1D",
    "MaxPool2D",
    "AvgPool2D",
    "MaxPool3D",
    "AvgPool3D",
    "LPPool1D",
    "LPPool2D",
    "LPPool3D",
    "MaxUnpool1D",
    "MaxUnpool2D",
    "MaxUnpool3D",
    "FractionalMaxPool2D",
    "GlobalAveragePooling1D",
    "GlobalMaxPooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling2D",
    "GlobalAveragePooling3D",
    "GlobalMaxPooling3D",
    "BatchNorm",
    "LayerNorm",
    "RMSNorm",
    "GroupNorm",
    "InstanceNorm",
    "Embedding",
    "Dropout",
    "Flatten",
    "LSTM",
    "GRU",
    "MultiHeadAttention",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "SeparableConv2D",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "ZeroPadding3D",
    "UpSampling2D",
    "PReLU",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "Activation",
    "ReLU",
    "LeakyReLU",
    "GELU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "Softmin",
    "Hardshrink",
    "Softshrink",
    "Tanhshrink",
    "Threshold",
    "Softplus",
    "RReLU",
    "LocalResponseNorm",
    "Unfold",
    "Fold",
    "Cropping1D",
    "Cropping2D",
    "Cropping3D",
    "UpSampling1D",
    "UpSampling3D",
    "Reshape",
    "Unflatten",
    "Permute",
    "RepeatVector",
    "Identity",
    "Lambda",
    "Add",
    "Subtract",
    "Multiply",
    "Average",
    "Maximum",
    "Minimum",
    "Concatenate",
    "Dot",
    "TimeDistributed",
    "Rescaling",
    "CenterCrop",
    "UnitNormalization",
    "Normalization",
    "ELU",
    "GaussianNoise",
    "GaussianDropout",
    "AlphaDropout",
    "PixelShuffle",
    "PixelUnshuffle",
    "Bilinear",
    "EmbeddingBag",
    "Masking",
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
    """None (where ``none``), a callable, or the name of a ``tl.nn`` function (``"relu"``, as Keras takes);
    Keras' ``"linear"`` is the identity (None where ``none``)."""
    if (activation is None and none) or callable(activation):
        return activation
    if activation == "linear":
        return None if none else _linear
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


def _as_tensor(x, layer=None) -> Tensor:
    """``x`` as a tensor.  A tuple, list or dict holding tensors or arrays is refused, naming ``layer`` (a Module or a
    name): a layer's several outputs (``LSTM(return_state=True)``'s) given to the next layer were stacked into one
    tensor and read as a batch (``Sequential(LSTM(4, 3, return_state=True), Dense(3, 2))`` gave (3, batch, 2))."""
    if isinstance(x, Tensor):
        return x
    values = x.values() if isinstance(x, dict) else x if isinstance(x, (tuple, list)) else ()
    if any(isinstance(v, (Tensor, np.ndarray)) for v in values):
        name = layer if isinstance(layer, str) else "a layer" if layer is None else type(layer).__name__
        shapes = ", ".join(_shown(v) if isinstance(v, (Tensor, np.ndarray)) else type(v).__name__ for v in values)
        raise TypeError(
            f"{name}: input must be one tensor, got a {type(x).__name__} of {len(x)} values ({shapes}); a layer with "
            "several outputs (such as LSTM(return_state=True)) returns a tuple: pass on the one this layer takes"
        )
    return _tensor(x)


def _as_result(x, layer=None) -> Tensor:
    """``x`` returned unchanged by a layer: a Variable is read into a value (Identity), so a later ``assign`` cannot
    change the result (it was returned itself); a Tensor, immutable, is returned as it is."""
    x = _as_tensor(x, layer)
    return _math.identity(x) if isinstance(x, Variable) else x


def _data_format(value, layer: str, formats: tuple = ("NHWC", "NCHW")) -> str:
    if value not in formats:
        raise ValueError(f"{layer}: data_format must be {' or '.join(map(repr, formats))}, got {value!r}")
    return value


def _layer_format(layer, data_format) -> str:
    """A layer's ``data_format``: its rank's channels-last layout (``_LAYOUTS[layer._rank][0]``) when None, else
    one of that rank's two layouts."""
    layouts = _LAYOUTS[layer._rank]
    return _data_format(layouts[0] if data_format is None else data_format, type(layer).__name__, layouts)


def _with_format(layer, text: str) -> str:
    """``text`` for a layer's repr, followed by its ``data_format`` where that is not the default."""
    return text if layer.data_format == _LAYOUTS[layer._rank][0] else f"{text}, data_format={layer.data_format!r}"


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
        x = _as_tensor(x, self)
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


_LAYOUTS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}
_AXES = {
    "NWC": "(batch, width, channels)",
    "NCW": "(batch, channels, width)",
    "NHWC": "(batch, height, width, channels)",
    "NCHW": "(batch, channels, height, width)",
    "NDHWC": "(batch, depth, height, width, channels)",
    "NCDHW": "(batch, channels, depth, height, width)",
}
_TUPLES = {1: "a 1-tuple (kw,)", 2: "a pair (kh, kw)", 3: "a triple (kd, kh, kw)"}


def _sizes(value, rank: int, what: str, layer: str) -> tuple:
    """An int or ``rank`` positive ints -> a ``rank``-tuple (``kernel_size=3`` of a Conv3D is ``(3, 3, 3)``)."""
    if isinstance(value, (int, np.integer)):
        sizes = (value,) * rank
    else:
        try:
            sizes = tuple(value)
        except TypeError:
            sizes = ()
    if len(sizes) != rank:
        form = _TUPLES[rank] if what == "kernel_size" else f"{rank} ints"
        raise ValueError(f"{layer}: {what} must be an int or {form}, got {value!r}")
    return tuple(_positive(what, s, layer) for s in sizes)


def _image(x, layer: str, rank: int, data_format: str, channels: int | None = None) -> Tensor:
    """``x`` as a tensor of ``rank`` spatial dimensions laid out as ``data_format`` with ``channels`` channels (when
    given): a wrong rank or channel count is one error naming the layer, the layout and the input's shape and dtype
    (the functional op's error named ``conv1d`` or ``MaxPool``, and the shape of an internal transpose)."""
    x = _as_tensor(x, layer)
    first = data_format[1] == "C"
    fits = len(x.shape) == rank + 2
    if fits and channels is not None:
        fits = x.shape[1 if first else -1] in (None, channels)
    if fits:
        return x
    want = f"{rank + 2}-D {data_format} {_AXES[data_format]}" + (f" with {channels} channels" if channels else "")
    hint = ""
    if len(x.shape) == rank + 2 and channels is not None and x.shape[-1 if first else 1] == channels:
        other = _LAYOUTS[rank][0 if first else 1]
        hint = f"; its channels match data_format={other!r}"
    raise ValueError(f"{layer}: input must be {want}, got shape {tuple(x.shape)} ({x.dtype}){hint}")


def _channels_to_last(x, data_format: str):
    """Channels-first ``x`` with its channels moved last (what the channels-last functional op takes)."""
    if data_format[1] != "C":
        return x
    return _shape.transpose(x, (0, *range(2, len(x.shape)), 1))


def _channels_to_first(y, data_format: str):
    if data_format[1] != "C":
        return y
    return _shape.transpose(y, (0, len(y.shape) - 1, *range(1, len(y.shape) - 1)))


class _Conv(Module):
    """What the convolution layers share: Keras' arguments, the ``kernel`` and ``bias`` Variables, the input's
    check, the bias (broadcast along the channels of ``data_format``) and the activation.  ``_rank`` spatial
    dimensions; ``data_format=None`` is channels-last.  Each layer defines ``_apply_kernel(x, kernel)``, its
    convolution of the checked input (``_convolve`` splits it into ``groups``), or ``_convolve(x)`` itself."""

    _rank = 2

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
        data_format: str | None = None,
        groups: int = 1,
    ):
        super().__init__()
        name = type(self).__name__
        self.data_format = _layer_format(self, data_format)
        self.in_channels = _positive("in_channels", in_channels, name)
        self.out_channels = _positive("out_channels", out_channels, name)
        self.groups = _positive("groups", groups, name)
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(
                f"{name}: groups={self.groups} must divide in_channels={self.in_channels} and "
                f"out_channels={self.out_channels}"
            )
        seed = _seed(seed, name)
        self.kernel_size = _sizes(kernel_size, self._rank, "kernel_size", name)
        self.strides, self.padding, self.dilations = strides, padding, dilations
        self.activation = _activation(activation, name)
        self._make_kernels(_init.get(kernel_initializer), seed, dtype)
        self.bias = (
            Variable(
                _init.get(bias_initializer)((self.out_channels,), seed=_seed_for(seed, 1), dtype=dtype), name="bias"
            )
            if use_bias
            else None
        )

    def _make_kernels(self, initializer, seed, dtype) -> None:
        self.kernel = Variable(initializer(self._kernel_shape(), seed=seed, dtype=dtype), name="kernel")

    def _kernel_shape(self) -> tuple:
        return (*self.kernel_size, self.in_channels // self.groups, self.out_channels)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format, self.in_channels)
        y = self._convolve(x)
        if self.bias is not None:
            last = self.data_format[-1] == "C"
            y = y + (self.bias if last else _shape.reshape(self.bias, (-1,) + (1,) * self._rank))
        return y if self.activation is None else self.activation(y)

    def _convolve(self, x):
        """The convolution of ``x`` with ``kernel``, or with ``groups`` groups: input channels ``[g * I, (g + 1) *
        I)`` (``I = in_channels / groups``) convolved with the kernel's output channels ``[g * O, (g + 1) * O)``,
        concatenated in group order (Keras' and PyTorch's ``groups``)."""
        if self.groups == 1:
            return self._apply_kernel(x, self.kernel)
        axis = 1 if self.data_format[1] == "C" else x.ndim - 1
        inputs, outputs = self.in_channels // self.groups, self.out_channels // self.groups
        lead = (slice(None),) * axis
        parts = [
            self._apply_kernel(
                x[(*lead, slice(g * inputs, (g + 1) * inputs))], self.kernel[..., g * outputs : (g + 1) * outputs]
            )
            for g in range(self.groups)
        ]
        return _shape.concat(parts, axis=axis)

    def _sizes_repr(self) -> str:
        return f"{self.in_channels}, {self.out_channels}"

    def extra_repr(self) -> str:
        text = f"{self._sizes_repr()}, kernel_size={self.kernel_size}, strides={self.strides}, padding={self.padding!r}"
        if self.dilations not in (1, (1,) * self._rank):
            text += f", dilations={self.dilations}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        text = _with_format(self, text)
        if self.activation is not None:
            text += f", activation={getattr(self.activation, '__name__', self.activation)}"
        return text


class Conv1D(_Conv):
    """1-D convolution of ``(batch, width, channels)`` inputs with a WIO ``kernel`` of shape ``(kw, in_channels,
    out_channels)``: :func:`tl.nn.conv1d`, Keras' ``Conv1D`` with explicit sizes, PyTorch's ``nn.Conv1d`` (whose
    weight ``(out, in, kw)`` is this kernel transposed ``(2, 1, 0)``).

    ``strides`` and ``dilations`` are an int; ``padding`` ``"SAME"`` (TensorFlow's rule), ``"VALID"``, Keras'
    ``"CAUSAL"`` (``dilations * (kernel_size - 1)`` zeros on the left: output ``t`` depends on inputs up to ``t``
    only) or explicit ``(left, right)``; ``data_format="NCW"`` takes and returns channels-first inputs.

    >>> import tensorlib as tl
    >>> conv = tl.nn.Conv1D(3, 8, kernel_size=5, strides=2, seed=0)
    >>> conv(tl.ones((2, 16, 3))).shape, conv.kernel.shape
    ((2, 8, 8), (5, 3, 8))
    """

    _rank = 1

    def _apply_kernel(self, x, kernel):
        padding = self.padding
        if isinstance(padding, str) and padding.upper() == "CAUSAL":  # Keras': output t sees inputs <= t only
            (dilation,) = _sizes(self.dilations, 1, "dilations", "Conv1D")
            padding = ((self.kernel_size[0] - 1) * dilation, 0)
        return _nn.conv1d(x, kernel, self.strides, padding, self.dilations, data_format=self.data_format)


class Conv2D(_Conv):
    """2-D convolution of NHWC images with an HWIO ``kernel`` of shape ``(kh, kw, in_channels, out_channels)``.

    ``padding`` is ``"SAME"`` (TensorFlow's rule), ``"VALID"`` or explicit pairs, as for :func:`tl.nn.conv2d`;
    ``data_format="NCHW"`` takes and returns channels-first images (the kernel stays HWIO).  ``groups=g``
    (Keras' and PyTorch's, as in Conv1D and Conv3D) convolves each of ``g`` groups of input channels with its own
    group of output channels: the kernel is ``(kh, kw, in_channels / g, out_channels)``, PyTorch's weight
    ``(out, in / g, kh, kw)`` transposed ``(2, 3, 1, 0)``.

    >>> import tensorlib as tl
    >>> conv = tl.nn.Conv2D(3, 8, kernel_size=3, seed=0)
    >>> conv(tl.ones((2, 16, 16, 3))).shape
    (2, 16, 16, 8)
    >>> tl.nn.Conv2D(3, 8, kernel_size=3, seed=0, data_format="NCHW")(tl.ones((2, 3, 16, 16))).shape
    (2, 8, 16, 16)
    >>> tl.nn.Conv2D(4, 6, kernel_size=3, groups=2, seed=0).kernel.shape
    (3, 3, 2, 6)
    """

    def _apply_kernel(self, x, kernel):
        return _nn.conv2d(x, kernel, self.strides, self.padding, self.dilations, data_format=self.data_format)


class Conv3D(_Conv):
    """3-D convolution of ``(batch, depth, height, width, channels)`` volumes with a DHWIO ``kernel`` of shape
    ``(kd, kh, kw, in_channels, out_channels)``: :func:`tl.nn.conv3d`, Keras' ``Conv3D`` with explicit sizes,
    PyTorch's ``nn.Conv3d`` (weight: this kernel transposed ``(4, 3, 0, 1, 2)``).

    ``padding`` is ``"SAME"``, ``"VALID"`` or ``((front, back), (top, bottom), (left, right))``;
    ``data_format="NCDHW"`` takes and returns channels-first volumes.

    >>> import tensorlib as tl
    >>> conv = tl.nn.Conv3D(2, 4, kernel_size=3, strides=(1, 2, 2), seed=0)
    >>> conv(tl.ones((1, 5, 8, 8, 2))).shape
    (1, 5, 4, 4, 4)
    """

    _rank = 3

    def _apply_kernel(self, x, kernel):
        return _nn.conv3d(x, kernel, self.strides, self.padding, self.data_format, self.dilations)


class DepthwiseConv2D(_Conv):
    """Depthwise 2-D convolution: each input channel convolved with its own ``depth_multiplier`` filters, the
    ``kernel`` of shape ``(kh, kw, in_channels, depth_multiplier)``, giving ``in_channels * depth_multiplier``
    channels (output channel ``c * depth_multiplier + m``): :func:`tl.nn.depthwise_conv2d`, Keras'
    ``DepthwiseConv2D``, PyTorch's ``nn.Conv2d(groups=in_channels)``.

    >>> import tensorlib as tl
    >>> conv = tl.nn.DepthwiseConv2D(3, kernel_size=3, depth_multiplier=2, seed=0)
    >>> conv(tl.ones((2, 8, 8, 3))).shape, conv.kernel.shape
    ((2, 8, 8, 6), (3, 3, 3, 2))
    """

    def __init__(
        self,
        in_channels: int,
        kernel_size,
        strides=1,
        padding="SAME",
        depth_multiplier: int = 1,
        dilations=1,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
        data_format: str | None = None,
    ):
        name = "DepthwiseConv2D"
        self.depth_multiplier = _positive("depth_multiplier", depth_multiplier, name)
        channels = _positive("in_channels", in_channels, name)
        super().__init__(
            channels, channels * self.depth_multiplier, kernel_size, strides, padding, dilations, activation,
            use_bias, kernel_initializer, bias_initializer, seed, dtype, data_format,
        )  # fmt: skip

    def _kernel_shape(self) -> tuple:
        return (*self.kernel_size, self.in_channels, self.depth_multiplier)

    def _convolve(self, x):
        return _nn.depthwise_conv2d(
            x, self.kernel, self.strides, self.padding, self.dilations, data_format=self.data_format
        )

    def _sizes_repr(self) -> str:
        return f"{self.in_channels}, depth_multiplier={self.depth_multiplier}"


class SeparableConv2D(_Conv):
    """Depthwise-separable 2-D convolution (Keras' ``SeparableConv2D``, TensorFlow's ``tf.nn.separable_conv2d``):
    a depthwise convolution with ``depthwise_kernel`` ``(kh, kw, in_channels, depth_multiplier)`` (as
    :class:`DepthwiseConv2D`: ``strides``, ``padding``, ``dilations``), then a 1x1 convolution with
    ``pointwise_kernel`` ``(1, 1, in_channels * depth_multiplier, out_channels)``, then the bias and the activation.
    ``kernel_initializer`` draws both kernels.  PyTorch: ``nn.Conv2d(groups=in_channels)`` then a 1x1
    ``nn.Conv2d`` without bias.

    >>> import tensorlib as tl
    >>> conv = tl.nn.SeparableConv2D(3, 8, kernel_size=3, depth_multiplier=2, seed=0)
    >>> conv(tl.ones((2, 8, 8, 3))).shape, conv.depthwise_kernel.shape, conv.pointwise_kernel.shape
    ((2, 8, 8, 8), (3, 3, 3, 2), (1, 1, 6, 8))
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        strides=1,
        padding="SAME",
        depth_multiplier: int = 1,
        dilations=1,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
        data_format: str | None = None,
    ):
        self.depth_multiplier = _positive("depth_multiplier", depth_multiplier, "SeparableConv2D")
        super().__init__(
            in_channels, out_channels, kernel_size, strides, padding, dilations, activation, use_bias,
            kernel_initializer, bias_initializer, seed, dtype, data_format,
        )  # fmt: skip

    def _make_kernels(self, initializer, seed, dtype) -> None:
        # Keras' shapes (and so its fans): the pointwise kernel as a 1x1 conv's.
        depthwise = (*self.kernel_size, self.in_channels, self.depth_multiplier)
        pointwise = (1, 1, self.in_channels * self.depth_multiplier, self.out_channels)
        self.depthwise_kernel = Variable(initializer(depthwise, seed=seed, dtype=dtype), name="depthwise_kernel")
        self.pointwise_kernel = Variable(
            initializer(pointwise, seed=_seed_for(seed, 2), dtype=dtype), name="pointwise_kernel"
        )

    def _convolve(self, x):
        fmt = self.data_format
        y = _nn.depthwise_conv2d(x, self.depthwise_kernel, self.strides, self.padding, self.dilations, data_format=fmt)
        return _nn.conv2d(y, self.pointwise_kernel, 1, "VALID", data_format=fmt)

    def extra_repr(self) -> str:
        text = super().extra_repr()
        return text if self.depth_multiplier == 1 else f"{text}, depth_multiplier={self.depth_multiplier}"


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution (the gradient of a :class:`Conv2D` with respect to its input): Keras'
    ``Conv2DTranspose`` with explicit sizes, :func:`tl.nn.conv2d_transpose` with the output size computed.  The
    ``kernel`` is ``(kh, kw, out_channels, in_channels)`` as in Keras and TensorFlow; PyTorch's
    ``nn.ConvTranspose2d`` weight ``(in, out, kh, kw)`` is it transposed ``(3, 2, 0, 1)``.  ``groups=g`` (PyTorch's)
    gives each of ``g`` groups of input channels its own ``out_channels / g`` outputs: the kernel is ``(kh, kw,
    out_channels / g, in_channels)``, PyTorch's ``(in, out / g, kh, kw)`` transposed the same way.

    The output size per spatial dimension (input size ``n``, stride ``s``, dilated kernel size ``k``), as Keras:
    ``"SAME"`` gives ``n * s``, ``"VALID"`` ``n * s + max(k - s, 0)``; with ``output_padding=p`` they are
    ``(n - 1) * s + k - 2 * (k // 2) + p`` and ``(n - 1) * s + k + p``.  Explicit ``((top, bottom), (left,
    right))`` padding crops the output: ``(n - 1) * s + k - top - bottom + p``, PyTorch's ``padding=q`` being
    ``((q, q), (q, q))``.  ``p`` (an int or a pair) must be smaller than the stride or the dilation.

    >>> import tensorlib as tl
    >>> up = tl.nn.Conv2DTranspose(4, 2, kernel_size=3, strides=2, seed=0)
    >>> up(tl.ones((1, 5, 5, 4))).shape, up.kernel.shape
    ((1, 10, 10, 2), (3, 3, 2, 4))
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        strides=1,
        padding="SAME",
        output_padding=None,
        dilations=1,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
        data_format: str | None = None,
        groups: int = 1,
    ):
        name, rank = type(self).__name__, self._rank
        super().__init__(
            in_channels, out_channels, kernel_size, strides, padding, dilations, activation, use_bias,
            kernel_initializer, bias_initializer, seed, dtype, data_format, groups,
        )  # fmt: skip
        # The output size needs the numbers: strides and dilations as tuples, padding checked here.
        self.strides = _sizes(strides, rank, "strides", name)
        self.dilations = _sizes(dilations, rank, "dilations", name)
        self.padding = _transpose_padding(padding, name, rank)
        if output_padding is None:
            self.output_padding = None
        else:
            pads = (output_padding,) * rank if isinstance(output_padding, (int, np.integer)) else output_padding
            try:
                pads = tuple(_index_value(p) for p in pads)
            except (TypeError, ValueError):
                pads = ()
            if len(pads) != rank or any(
                not 0 <= p < max(s, d) for p, s, d in zip(pads, self.strides, self.dilations, strict=True)
            ):
                raise ValueError(
                    f"{name}: output_padding must be None or an int{f' or {rank} ints' if rank > 1 else ''} >= 0 "
                    "smaller than the stride "
                    f"or the dilation (strides={self.strides}, dilations={self.dilations}), got {output_padding!r}"
                )
            self.output_padding = pads

    def _kernel_shape(self) -> tuple:
        return (*self.kernel_size, self.out_channels // self.groups, self.in_channels)

    def _output_size(self, n: int, axis: int) -> int:
        s, d = self.strides[axis], self.dilations[axis]
        k = (self.kernel_size[axis] - 1) * d + 1
        p = None if self.output_padding is None else self.output_padding[axis]
        if self.padding == "SAME":
            return n * s if p is None else (n - 1) * s + k - 2 * (k // 2) + p
        if self.padding == "VALID":
            return n * s + max(k - s, 0) if p is None else (n - 1) * s + k + p
        top, bottom = self.padding[axis]
        return (n - 1) * s + k - top - bottom + (p or 0)

    def _output_shape(self, x) -> tuple:
        """The output's shape for input ``x`` (checked: sizes known, a SAME output that maps back, none cropped away)."""
        name, rank = type(self).__name__, self._rank
        first = self.data_format[1] == "C"
        spatial = tuple(x.shape[2:] if first else x.shape[1:-1])
        axes = {1: "(width)", 2: "(height, width)", 3: "(depth, height, width)"}[rank]
        if None in spatial:
            raise ValueError(
                f"{name}: the input's spatial sizes {axes} must be known to size the output, got input shape "
                f"{tuple(x.shape)} ({x.dtype})"
            )
        size = tuple(self._output_size(n, axis) for axis, n in enumerate(spatial))
        if self.padding == "SAME" and any(-(-m // s) != n for m, s, n in zip(size, self.strides, spatial, strict=True)):
            # Keras' formula with an even kernel and output_padding 0 gives (n - 1) * s: a SAME conv maps that
            # to n - 1 values, not n (Keras fails there too).
            raise ValueError(
                f"{name}: output_padding={self.output_padding} with SAME padding gives an output of {size} "
                f"{axes}, which a SAME conv of strides {self.strides} does not map back to the input's "
                f"{spatial}; an even kernel needs output_padding >= 1 (up to the stride), an odd one below the stride "
                f"(input shape {tuple(x.shape)})"
            )
        if min(size) < 1:
            raise ValueError(
                f"{name}: the output would be {size} {axes}: the padding {self.padding!r} crops "
                f"more than the input of shape {tuple(x.shape)} gives"
            )
        return (x.shape[0], self.out_channels, *size) if first else (x.shape[0], *size, self.out_channels)

    def _op_geometry(self, shape) -> tuple:
        """The padding and output shape to give ``conv2d_transpose`` for the output ``shape``, and the zeros to
        append after each spatial axis.  An explicit (or VALID's zero) padding ``(top, bottom)`` with
        ``output_padding=p`` crops ``top`` and ``bottom - p``; where ``p > bottom`` (possible from ``p >= stride``,
        which the dilation allows, as in PyTorch) the last ``p - bottom`` cells are past the kernel's reach: zeros,
        which the op's shape check (a conv of the output must give the input back) cannot express."""
        if self.output_padding is None or self.padding == "SAME":
            return self.padding, shape, (0,) * self._rank
        first = self.data_format[1] == "C"
        pairs = ((0, 0),) * self._rank if self.padding == "VALID" else self.padding
        spatial = shape[2:] if first else shape[1:-1]
        cuts = [bottom - p for (_, bottom), p in zip(pairs, self.output_padding, strict=True)]
        padding = tuple((top, max(cut, 0)) for (top, _), cut in zip(pairs, cuts))
        sizes = tuple(m + min(cut, 0) for m, cut in zip(spatial, cuts))
        shape = (*shape[:2], *sizes) if first else (shape[0], *sizes, shape[-1])
        return padding, shape, tuple(max(-cut, 0) for cut in cuts)

    def _zeros_after(self, y, zeros: tuple):
        if not any(zeros):
            return y
        first = 2 if self.data_format[1] == "C" else 1
        pads = [(0, 0)] * len(y.shape)
        pads[first : first + self._rank] = [(0, z) for z in zeros]
        return _shape.pad(y, pads)

    def _convolve(self, x):
        """The transposed convolution, or with ``groups`` groups: input channels ``[g * I, (g + 1) * I)`` with the
        kernel's ``[g * I, (g + 1) * I)`` (its last axis) give output channels ``[g * O, (g + 1) * O)``,
        concatenated in group order (PyTorch's ``ConvTranspose2d(groups=)``)."""
        padding, shape, zeros = self._op_geometry(self._output_shape(x))
        if self.groups == 1:
            return self._zeros_after(self._transposed(x, self.kernel, shape, padding), zeros)
        axis = 1 if self.data_format[1] == "C" else x.ndim - 1
        inputs, outputs = self.in_channels // self.groups, self.out_channels // self.groups
        lead, shape = (slice(None),) * axis, list(shape)
        shape[axis] = outputs
        parts = [
            self._transposed(
                x[(*lead, slice(g * inputs, (g + 1) * inputs))],
                self.kernel[..., g * inputs : (g + 1) * inputs],
                tuple(shape),
                padding,
            )
            for g in range(self.groups)
        ]
        return self._zeros_after(_shape.concat(parts, axis=axis), zeros)

    def _transposed(self, x, kernel, shape, padding):
        return _nn.conv2d_transpose(
            x, kernel, shape, self.strides, padding, self.dilations, data_format=self.data_format
        )

    def extra_repr(self) -> str:
        text = super().extra_repr()
        return text if self.output_padding is None else f"{text}, output_padding={self.output_padding}"


class Conv1DTranspose(Conv2DTranspose):
    """Transposed 1-D convolution of ``(batch, width, channels)`` inputs (the gradient of a :class:`Conv1D` with
    respect to its input): Keras' ``Conv1DTranspose`` with explicit sizes; ``data_format="NCW"``: PyTorch's
    ``nn.ConvTranspose1d``, whose weight ``(in, out, kw)`` is this ``kernel`` ``(kw, out_channels,
    in_channels)`` transposed ``(2, 1, 0)``.  Output sizes, ``output_padding`` and explicit ``(left, right)``
    padding as :class:`Conv2DTranspose`'s along its one axis (PyTorch's ``padding=q`` is ``(q, q)``); it runs as
    a 2-D transposed convolution of a height-1 image.

    >>> import tensorlib as tl
    >>> up = tl.nn.Conv1DTranspose(4, 2, kernel_size=3, strides=2, seed=0)
    >>> up(tl.ones((1, 5, 4))).shape, up.kernel.shape
    ((1, 10, 2), (3, 2, 4))
    """

    _rank = 1

    def _transposed(self, x, kernel, shape, padding):
        first = self.data_format == "NCW"
        image = _shape.expand_dims(x, 2 if first else 1)  # (batch, 1, width, channels) or (batch, channels, 1, width)
        padding = padding if isinstance(padding, str) else ((0, 0), *padding)
        y = _nn.conv2d_transpose(
            image,
            _shape.expand_dims(kernel, 0),
            (shape[0], shape[1], 1, shape[2]) if first else (shape[0], 1, *shape[1:]),
            (1, *self.strides),
            padding,
            (1, *self.dilations),
            data_format="NCHW" if first else "NHWC",
        )
        return _shape.squeeze(y, 2 if first else 1)


class Conv3DTranspose(Conv2DTranspose):
    """Transposed 3-D convolution of ``(batch, depth, height, width, channels)`` volumes (the gradient of a
    :class:`Conv3D` with respect to its input): Keras' ``Conv3DTranspose`` with explicit sizes,
    :func:`tl.nn.conv3d_transpose` with the output size computed; ``data_format="NCDHW"``: PyTorch's
    ``nn.ConvTranspose3d``, whose weight ``(in, out / groups, kd, kh, kw)`` is this ``kernel`` ``(kd, kh, kw,
    out_channels / groups, in_channels)`` transposed ``(4, 3, 0, 1, 2)``.  Output sizes, ``output_padding``,
    ``groups`` and explicit ``((front, back), (top, bottom), (left, right))`` padding as :class:`Conv2DTranspose`'s
    along each of its three axes (PyTorch's ``padding=q`` is ``((q, q),) * 3``).

    >>> import tensorlib as tl
    >>> up = tl.nn.Conv3DTranspose(4, 2, kernel_size=3, strides=(1, 2, 2), seed=0)
    >>> up(tl.ones((1, 3, 5, 5, 4))).shape, up.kernel.shape
    ((1, 3, 10, 10, 2), (3, 3, 3, 2, 4))
    """

    _rank = 3

    def _transposed(self, x, kernel, shape, padding):
        return _nn.conv3d_transpose(
            x, kernel, shape, self.strides, padding, data_format=self.data_format, dilations=self.dilations
        )


def _index_value(value) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(value)
    return operator.index(value)


def _transpose_padding(padding, layer: str, rank: int = 2):
    """``"SAME"``, ``"VALID"`` (any case) or one ``(before, after)`` pair of ints >= 0 per spatial axis
    (``((top, bottom), (left, right))``; ``(left, right)`` alone for one axis)."""
    if isinstance(padding, str) and padding.upper() in ("SAME", "VALID"):
        return padding.upper()
    try:
        if rank == 1 and len(padding) == 2 and all(isinstance(v, (int, np.integer)) for v in padding):
            padding = (padding,)
        pairs = tuple(tuple(_index_value(v) for v in pair) for pair in padding)
    except (TypeError, ValueError):
        pairs = ()
    if len(pairs) != rank or any(len(p) != 2 or min(p) < 0 for p in pairs):
        form = "(left, right)" if rank == 1 else "((top, bottom), (left, right))"
        raise ValueError(f"{layer}: padding must be 'SAME', 'VALID' or {form}, got {padding!r}")
    return pairs


class _Pool(Module):
    """Pooling layers: ``_function`` over ``ksize`` windows (``strides`` defaults to ``ksize``) of inputs with
    ``_rank`` spatial dimensions; ``data_format=None`` is channels-last.  PyTorch's options (``ceil_mode``,
    ``count_include_pad``, ``divisor_override`` for the averages, ``dilations``, ``ceil_mode``, ``return_indices``
    for the maxima, an int ``padding``) are passed on to the function, as ``nn.MaxPool2d(3, 2, 1, ceil_mode=True)``:

    >>> import tensorlib as tl
    >>> tl.nn.MaxPool2D(3, 2, 1, data_format="NCHW", ceil_mode=True)(tl.ones((1, 1, 6, 6))).shape
    (1, 1, 4, 4)
    """

    _function = None
    _rank = 2

    def __init__(self, ksize=2, strides=None, padding="VALID", data_format: str | None = None, **torch_options):
        super().__init__()
        self.ksize = ksize
        self.strides = ksize if strides is None else strides
        self.padding = padding
        self.data_format = _layer_format(self, data_format)
        self.torch_options = dict(torch_options)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        function = type(self)._function
        return function(x, self.ksize, self.strides, self.padding, data_format=self.data_format, **self.torch_options)

    def extra_repr(self) -> str:
        text = f"ksize={self.ksize}, strides={self.strides}, padding={self.padding!r}"
        text += "".join(f", {k}={v!r}" for k, v in self.torch_options.items())
        return _with_format(self, text)


class MaxPool1D(_Pool):
    """Max over ``ksize`` windows of ``(batch, width, channels)`` inputs (``strides`` defaults to ``ksize``):
    :func:`tl.nn.max_pool1d`, Keras' ``MaxPooling1D``; ``data_format="NCW"``: PyTorch's ``nn.MaxPool1d``.

    >>> import tensorlib as tl
    >>> tl.nn.MaxPool1D(2)(tl.tensor([[[1.0], [3.0], [2.0], [0.0]]])).numpy().ravel().tolist()
    [3.0, 2.0]
    """

    _function = staticmethod(_nn.max_pool1d)
    _rank = 1


class AvgPool1D(_Pool):
    """Mean over ``ksize`` windows of ``(batch, width, channels)`` inputs (``strides`` defaults to ``ksize``):
    :func:`tl.nn.avg_pool1d`, Keras' ``AveragePooling1D`` (``"SAME"`` averages only the cells inside the input).

    >>> import tensorlib as tl
    >>> tl.nn.AvgPool1D(2)(tl.tensor([[[1.0], [3.0], [2.0], [0.0]]])).numpy().ravel().tolist()
    [2.0, 1.0]
    """

    _function = staticmethod(_nn.avg_pool1d)
    _rank = 1


class MaxPool2D(_Pool):
    """Max over ``ksize`` windows of NHWC images (``strides`` defaults to ``ksize``).

    >>> import tensorlib as tl
    >>> tl.nn.MaxPool2D(2)(tl.ones((1, 4, 6, 3))).shape
    (1, 2, 3, 3)
    """

    _function = staticmethod(_nn.max_pool)


class AvgPool2D(_Pool):
    """Mean over ``ksize`` windows of NHWC images (``strides`` defaults to ``ksize``).

    >>> import tensorlib as tl
    >>> tl.nn.AvgPool2D(2)(tl.ones((1, 4, 4, 1))).numpy().ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """

    _function = staticmethod(_nn.avg_pool)


class MaxPool3D(_Pool):
    """Max over ``ksize`` windows of ``(batch, depth, height, width, channels)`` volumes (``strides`` defaults to
    ``ksize``): :func:`tl.nn.max_pool3d`, Keras' ``MaxPooling3D``; ``data_format="NCDHW"``: ``nn.MaxPool3d``.

    >>> import tensorlib as tl
    >>> tl.nn.MaxPool3D(2)(tl.ones((1, 4, 4, 6, 3))).shape
    (1, 2, 2, 3, 3)
    """

    _function = staticmethod(_nn.max_pool3d)
    _rank = 3


class AvgPool3D(_Pool):
    """Mean over ``ksize`` windows of ``(batch, depth, height, width, channels)`` volumes (``strides`` defaults
    to ``ksize``): :func:`tl.nn.avg_pool3d`, Keras' ``AveragePooling3D``.

    >>> import tensorlib as tl
    >>> tl.nn.AvgPool3D(2)(tl.ones((1, 2, 4, 4, 1))).numpy().ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """

    _function = staticmethod(_nn.avg_pool3d)
    _rank = 3


class _LPPool(Module):
    """PyTorch's power-average pooling layers (``nn.LPPool1d/2d/3d(norm_type, kernel_size, stride, ceil_mode)``):
    :func:`tl.nn.lp_pool` over ``ksize`` windows (``strides`` defaults to ``ksize``) of inputs with ``_rank``
    spatial dimensions; ``data_format=None`` is channels-last."""

    _rank = 2

    def __init__(self, norm_type: float, ksize, strides=None, ceil_mode: bool = False, data_format: str | None = None):
        super().__init__()
        if not _number_in(norm_type, -math.inf, math.inf) or norm_type == 0:
            raise ValueError(f"{type(self).__name__}: norm_type must be a finite nonzero number, got {norm_type!r}")
        self.norm_type, self.ksize, self.strides, self.ceil_mode = float(norm_type), ksize, strides, bool(ceil_mode)
        self.data_format = _layer_format(self, data_format)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        return _nn.lp_pool(x, self.norm_type, self.ksize, self.strides, self.ceil_mode, self.data_format)

    def extra_repr(self) -> str:
        text = f"norm_type={self.norm_type}, ksize={self.ksize}, strides={self.strides}"
        return _with_format(self, text + (", ceil_mode=True" if self.ceil_mode else ""))


class LPPool1D(_LPPool):
    """``(sum of x ** p over each window) ** (1 / p)`` of ``(batch, width, channels)`` inputs: :func:`tl.nn.lp_pool`;
    ``data_format="NCW"``: PyTorch's ``nn.LPPool1d``.

    >>> import tensorlib as tl
    >>> tl.nn.LPPool1D(2, 2)(tl.tensor([[[3.0], [4.0], [1.0], [0.0]]])).numpy().ravel().tolist()
    [5.0, 1.0]
    """

    _rank = 1


class LPPool2D(_LPPool):
    """``(sum of x ** p over each window) ** (1 / p)`` of NHWC images: :func:`tl.nn.lp_pool`;
    ``data_format="NCHW"``: PyTorch's ``nn.LPPool2d``.

    >>> import tensorlib as tl
    >>> tl.nn.LPPool2D(1, 2)(tl.ones((1, 4, 6, 3))).shape
    (1, 2, 3, 3)
    """


class LPPool3D(_LPPool):
    """``(sum of x ** p over each window) ** (1 / p)`` of ``(batch, depth, height, width, channels)`` volumes:
    :func:`tl.nn.lp_pool`; ``data_format="NCDHW"``: PyTorch's ``nn.LPPool3d``.

    >>> import tensorlib as tl
    >>> tl.nn.LPPool3D(2, 2)(tl.ones((1, 2, 2, 2, 1)) * 0.5).numpy().ravel().tolist()
    [1.4142135381698608]
    """

    _rank = 3


class _MaxUnpool(Module):
    """PyTorch's ``nn.MaxUnpool1d/2d/3d(kernel_size, stride, padding)``: :func:`tl.nn.max_unpool` of a max pool's
    values and ``indices`` (``return_indices=True``), called as ``layer(values, indices, output_size=None)``;
    ``data_format=None`` is channels-last."""

    _rank = 2

    def __init__(self, ksize, strides=None, padding=0, data_format: str | None = None):
        super().__init__()
        self.ksize, self.strides, self.padding = ksize, strides, padding
        self.data_format = _layer_format(self, data_format)

    def forward(self, x, indices, output_size=None):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        indices = _as_tensor(indices, self)
        return _nn.max_unpool(x, indices, self.ksize, self.strides, self.padding, self.data_format, output_size)

    def extra_repr(self) -> str:
        return _with_format(self, f"ksize={self.ksize}, strides={self.strides}, padding={self.padding!r}")


class MaxUnpool1D(_MaxUnpool):
    """Each value of a :class:`MaxPool1D` with ``return_indices=True`` put back at its index, zeros elsewhere:
    :func:`tl.nn.max_unpool`; ``data_format="NCW"``: PyTorch's ``nn.MaxUnpool1d``.

    >>> import tensorlib as tl
    >>> x = tl.tensor([[[1.0, 5.0, 2.0, 0.0]]])
    >>> values, indices = tl.nn.MaxPool1D(2, data_format="NCW", return_indices=True)(x)
    >>> tl.nn.MaxUnpool1D(2, data_format="NCW")(values, indices).numpy().tolist()
    [[[0.0, 5.0, 2.0, 0.0]]]
    """

    _rank = 1


class MaxUnpool2D(_MaxUnpool):
    """Each value of a :class:`MaxPool2D` with ``return_indices=True`` put back at its index, zeros elsewhere:
    :func:`tl.nn.max_unpool`; ``data_format="NCHW"``: PyTorch's ``nn.MaxUnpool2d``.

    >>> import tensorlib as tl
    >>> values, indices = tl.nn.MaxPool2D(2, return_indices=True)(tl.ones((1, 4, 4, 3)))
    >>> tl.nn.MaxUnpool2D(2)(values, indices, output_size=(5, 5)).shape
    (1, 5, 5, 3)
    """


class MaxUnpool3D(_MaxUnpool):
    """Each value of a :class:`MaxPool3D` with ``return_indices=True`` put back at its index, zeros elsewhere:
    :func:`tl.nn.max_unpool`; ``data_format="NCDHW"``: PyTorch's ``nn.MaxUnpool3d``.

    >>> import tensorlib as tl
    >>> values, indices = tl.nn.MaxPool3D(2, return_indices=True)(tl.ones((1, 2, 2, 2, 1)))
    >>> tl.nn.MaxUnpool3D(2)(values, indices).numpy().sum()
    np.float32(1.0)
    """

    _rank = 3


class FractionalMaxPool2D(Module):
    """PyTorch's ``nn.FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None, return_indices=False)``:
    :func:`tl.nn.fractional_max_pool2d` of NHWC images (``data_format="NCHW"``: PyTorch's layout), its window
    starts drawn at each call from the stream ``tl.random.seed`` resets, or read from ``random_samples``
    ``(N, C, 2)`` given to the call, as PyTorch's ``_random_samples``.

    >>> import tensorlib as tl
    >>> tl.nn.FractionalMaxPool2D(2, output_ratio=0.5)(tl.ones((1, 6, 6, 3))).shape
    (1, 3, 3, 3)
    """

    _rank = 2

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        data_format: str | None = None,
    ):
        super().__init__()
        if (output_size is None) == (output_ratio is None):
            raise ValueError(
                f"FractionalMaxPool2D: give exactly one of output_size and output_ratio, got {output_size!r} and {output_ratio!r}"
            )
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices = bool(return_indices)
        self.data_format = _layer_format(self, data_format)

    def forward(self, x, random_samples=None):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        options = {"return_indices": self.return_indices, "random_samples": random_samples}
        size, ratio = self.output_size, self.output_ratio
        return _nn.fractional_max_pool2d(x, self.kernel_size, size, ratio, data_format=self.data_format, **options)

    def extra_repr(self) -> str:
        text = f"kernel_size={self.kernel_size}, " + (
            f"output_size={self.output_size}" if self.output_ratio is None else f"output_ratio={self.output_ratio}"
        )
        return _with_format(self, text + (", return_indices=True" if self.return_indices else ""))


class _AdaptivePool(Module):
    """PyTorch's adaptive pooling layers: ``_function`` to ``output_size`` (an int, or one per spatial axis with
    ``None`` keeping an axis) over inputs with ``_rank`` spatial dimensions; ``data_format=None`` is channels-last."""

    _function = None
    _rank = 2

    def __init__(self, output_size, data_format: str | None = None):
        super().__init__()
        self.output_size = output_size
        self.data_format = _layer_format(self, data_format)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        return type(self)._function(x, self.output_size, data_format=self.data_format, **self._options())

    def _options(self) -> dict:
        return {}

    def extra_repr(self) -> str:
        text = f"output_size={self.output_size!r}"
        return _with_format(self, text)


class AdaptiveAvgPool1D(_AdaptivePool):
    """The mean over PyTorch's adaptive bins of ``(batch, width, channels)`` inputs, to ``output_size`` cells:
    :func:`tl.nn.adaptive_avg_pool`; ``data_format="NCW"``: PyTorch's ``nn.AdaptiveAvgPool1d``.

    >>> import tensorlib as tl
    >>> tl.nn.AdaptiveAvgPool1D(2)(tl.tensor([[[1.0], [3.0], [2.0]]])).numpy().ravel().tolist()
    [2.0, 2.5]
    """

    _function = staticmethod(_nn.adaptive_avg_pool)
    _rank = 1


class AdaptiveAvgPool2D(_AdaptivePool):
    """The mean over PyTorch's adaptive bins of NHWC images, to ``output_size`` (``(rows, cols)`` or an int):
    :func:`tl.nn.adaptive_avg_pool`; ``data_format="NCHW"``: PyTorch's ``nn.AdaptiveAvgPool2d``.

    >>> import tensorlib as tl
    >>> tl.nn.AdaptiveAvgPool2D((2, 3))(tl.ones((1, 7, 5, 4))).shape
    (1, 2, 3, 4)
    """

    _function = staticmethod(_nn.adaptive_avg_pool)


class AdaptiveAvgPool3D(_AdaptivePool):
    """The mean over PyTorch's adaptive bins of ``(batch, depth, height, width, channels)`` volumes:
    :func:`tl.nn.adaptive_avg_pool`; ``data_format="NCDHW"``: PyTorch's ``nn.AdaptiveAvgPool3d``.

    >>> import tensorlib as tl
    >>> tl.nn.AdaptiveAvgPool3D(1)(tl.ones((2, 3, 4, 5, 6))).shape
    (2, 1, 1, 1, 6)
    """

    _function = staticmethod(_nn.adaptive_avg_pool)
    _rank = 3


class _AdaptiveMaxPool(_AdaptivePool):
    """The adaptive max pools: with ``return_indices=True`` the layer returns ``(values, indices)``, PyTorch's
    ``nn.AdaptiveMaxPool*d(output_size, return_indices=True)`` (see :func:`tl.nn.adaptive_max_pool`)."""

    _function = staticmethod(_nn.adaptive_max_pool)

    def __init__(self, output_size, data_format: str | None = None, return_indices: bool = False):
        super().__init__(output_size, data_format)
        self.return_indices = bool(return_indices)

    def _options(self) -> dict:
        return {"return_indices": self.return_indices}

    def extra_repr(self) -> str:
        return super().extra_repr() + (", return_indices=True" if self.return_indices else "")


class AdaptiveMaxPool1D(_AdaptiveMaxPool):
    """The max over PyTorch's adaptive bins of ``(batch, width, channels)`` inputs (see :class:`AdaptiveAvgPool1D`):
    :func:`tl.nn.adaptive_max_pool`; ``data_format="NCW"``: PyTorch's ``nn.AdaptiveMaxPool1d``.

    >>> import tensorlib as tl
    >>> tl.nn.AdaptiveMaxPool1D(2)(tl.tensor([[[1.0], [3.0], [2.0]]])).numpy().ravel().tolist()
    [3.0, 3.0]
    """

    _rank = 1


class AdaptiveMaxPool2D(_AdaptiveMaxPool):
    """The max over PyTorch's adaptive bins of NHWC images: :func:`tl.nn.adaptive_max_pool`;
    ``data_format="NCHW"``: PyTorch's ``nn.AdaptiveMaxPool2d``.

    >>> import tensorlib as tl
    >>> tl.nn.AdaptiveMaxPool2D((3, None))(tl.ones((1, 7, 5, 4))).shape
    (1, 3, 5, 4)
    """


class AdaptiveMaxPool3D(_AdaptiveMaxPool):
    """The max over PyTorch's adaptive bins of ``(batch, depth, height, width, channels)`` volumes:
    :func:`tl.nn.adaptive_max_pool`; ``data_format="NCDHW"``: PyTorch's ``nn.AdaptiveMaxPool3d``.

    >>> import tensorlib as tl
    >>> tl.nn.AdaptiveMaxPool3D(2)(tl.ones((1, 4, 4, 5, 3))).shape
    (1, 2, 2, 2, 3)
    """

    _rank = 3


class _GlobalPool(Module):
    """Keras' global pooling: ``_function`` (a reduction) over every spatial axis; ``keepdims`` keeps them as 1s."""

    _function = None
    _rank = 2

    def __init__(self, data_format: str | None = None, keepdims: bool = False):
        super().__init__()
        self.data_format = _layer_format(self, data_format)
        self.keepdims = bool(keepdims)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        first = 2 if self.data_format[1] == "C" else 1
        return type(self)._function(x, axis=tuple(range(first, first + self._rank)), keepdims=self.keepdims)

    def extra_repr(self) -> str:
        return f"data_format={self.data_format!r}" + (", keepdims=True" if self.keepdims else "")


class GlobalAveragePooling1D(_GlobalPool):
    """The mean over the width of ``(batch, width, channels)`` inputs: ``(batch, channels)`` (Keras' layer;
    ``data_format="NCW"``: channels-first inputs, ``keepdims=True``: ``(batch, 1, channels)``).

    >>> import tensorlib as tl
    >>> tl.nn.GlobalAveragePooling1D()(tl.tensor([[[1.0, 2.0], [3.0, 6.0]]])).numpy().tolist()
    [[2.0, 4.0]]
    """

    _function = staticmethod(_reduce.mean)
    _rank = 1


class GlobalMaxPooling1D(_GlobalPool):
    """The max over the width of ``(batch, width, channels)`` inputs: ``(batch, channels)`` (Keras' layer).

    >>> import tensorlib as tl
    >>> tl.nn.GlobalMaxPooling1D()(tl.tensor([[[1.0, 2.0], [3.0, 6.0]]])).numpy().tolist()
    [[3.0, 6.0]]
    """

    _function = staticmethod(_reduce.max)
    _rank = 1


class GlobalAveragePooling2D(_GlobalPool):
    """The mean over height and width of NHWC images: ``(batch, channels)`` (Keras' layer; PyTorch's
    ``nn.AdaptiveAvgPool2d(1)`` flattened; ``data_format="NCHW"``: channels-first images, ``keepdims=True``:
    ``(batch, 1, 1, channels)``).

    >>> import tensorlib as tl
    >>> tl.nn.GlobalAveragePooling2D()(tl.ones((2, 4, 4, 3))).shape
    (2, 3)
    """

    _function = staticmethod(_reduce.mean)


class GlobalMaxPooling2D(_GlobalPool):
    """The max over height and width of NHWC images: ``(batch, channels)`` (Keras' layer; PyTorch's
    ``nn.AdaptiveMaxPool2d(1)`` flattened).  Tied maxima share the gradient equally.

    >>> import tensorlib as tl
    >>> tl.nn.GlobalMaxPooling2D(keepdims=True)(tl.ones((2, 4, 4, 3))).shape
    (2, 1, 1, 3)
    """

    _function = staticmethod(_reduce.max)


class GlobalAveragePooling3D(_GlobalPool):
    """The mean over depth, height and width of ``(batch, depth, height, width, channels)`` volumes:
    ``(batch, channels)`` (Keras' layer).

    >>> import tensorlib as tl
    >>> tl.nn.GlobalAveragePooling3D()(tl.ones((2, 3, 4, 4, 5))).shape
    (2, 5)
    """

    _function = staticmethod(_reduce.mean)
    _rank = 3


class GlobalMaxPooling3D(_GlobalPool):
    """The max over depth, height and width of ``(batch, depth, height, width, channels)`` volumes:
    ``(batch, channels)`` (Keras' layer).

    >>> import tensorlib as tl
    >>> tl.nn.GlobalMaxPooling3D(data_format="NCDHW")(tl.ones((2, 5, 3, 4, 4))).shape
    (2, 5)
    """

    _function = staticmethod(_reduce.max)
    _rank = 3


class _Edges(Module):
    """Keras' zero padding and cropping of the spatial axes: the amount (``_what``) an int (every side), one int
    per spatial axis (both sides) or one ``(before, after)`` pair per axis (for 1-D, ``(left, right)``)."""

    _rank = 2
    _what = "padding"

    def __init__(self, amount, data_format: str | None = None):
        super().__init__()
        name = type(self).__name__
        self.data_format = _layer_format(self, data_format)
        setattr(self, self._what, _padding_pairs(amount, self._rank, name, self._what))

    def _first_spatial_axis(self) -> int:
        return 1 if self.data_format[-1] == "C" else 2

    def extra_repr(self) -> str:
        text = f"{self._what}={getattr(self, self._what)}"
        return _with_format(self, text)


class _ZeroPadding(_Edges):
    def __init__(self, padding=1, data_format: str | None = None):
        super().__init__(padding, data_format)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        before = ((0, 0),) * self._first_spatial_axis()
        return _shape.pad(x, before + self.padding + ((0, 0),) * (len(x.shape) - len(before) - self._rank))


class _Cropping(_Edges):
    _what = "cropping"

    def __init__(self, cropping, data_format: str | None = None):
        super().__init__(cropping, data_format)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        first = self._first_spatial_axis()
        index = [slice(None)] * len(x.shape)
        for axis, (front, back) in enumerate(self.cropping, first):
            if x.shape[axis] is not None and front + back >= x.shape[axis]:
                raise ValueError(
                    f"{type(self).__name__}: cropping {self.cropping} leaves nothing of input shape {tuple(x.shape)} "
                    f"({x.dtype})"
                )
            index[axis] = slice(front, -back if back else None)
        return x[tuple(index)]


class Cropping1D(_Cropping):
    """``cropping = (left, right)`` cells (or an int for both) cut from the width of ``(batch, width, channels)``
    inputs (Keras' ``Cropping1D``).

    >>> import tensorlib as tl
    >>> tl.nn.Cropping1D((1, 2))(tl.reshape(tl.arange(5.0), (1, 5, 1))).numpy().ravel().tolist()
    [1.0, 2.0]
    """

    _rank = 1


class Cropping2D(_Cropping):
    """Rows and columns cut from the edges of NHWC images: ``cropping`` an int, ``(rows, cols)`` (both sides) or
    ``((top, bottom), (left, right))`` (Keras' ``Cropping2D``, the skip connections of a U-Net).

    >>> import tensorlib as tl
    >>> tl.nn.Cropping2D(((1, 0), (2, 1)))(tl.ones((1, 5, 6, 3))).shape
    (1, 4, 3, 3)
    """


class Cropping3D(_Cropping):
    """Cells cut from the edges of ``(batch, depth, height, width, channels)`` volumes (Keras' ``Cropping3D``).

    >>> import tensorlib as tl
    >>> tl.nn.Cropping3D(1)(tl.ones((1, 4, 4, 4, 2))).shape
    (1, 2, 2, 2, 2)
    """

    _rank = 3


def _padding_pairs(padding, rank: int, layer: str, what: str = "padding") -> tuple:
    """Keras' padding (or cropping) forms -> one ``(before, after)`` pair of ints >= 0 per spatial axis."""
    try:
        if isinstance(padding, (int, np.integer)):
            pairs = ((_index_value(padding),) * 2,) * rank
        elif rank == 1 and len(padding) == 2 and all(isinstance(p, (int, np.integer)) for p in padding):
            pairs = (tuple(_index_value(p) for p in padding),)
        elif len(padding) == rank and all(isinstance(p, (int, np.integer)) for p in padding):
            pairs = tuple((_index_value(p),) * 2 for p in padding)
        else:
            pairs = tuple(tuple(_index_value(v) for v in pair) for pair in padding)
    except (TypeError, ValueError):
        pairs = ()
    if len(pairs) != rank or any(len(p) != 2 or min(p) < 0 for p in pairs):
        forms = {1: "(left, right)", 2: "(rows, cols) or ((top, bottom), (left, right))"}.get(
            rank, "(depth, rows, cols) or ((front, back), (top, bottom), (left, right))"
        )
        raise ValueError(f"{layer}: {what} must be an int >= 0 or {forms}, got {padding!r}")
    return pairs


class ZeroPadding1D(_ZeroPadding):
    """Zeros added before and after the width of ``(batch, width, channels)`` inputs (Keras' ``ZeroPadding1D``;
    PyTorch's ``nn.ZeroPad1d((left, right))`` with ``data_format="NCW"``).

    >>> import tensorlib as tl
    >>> tl.nn.ZeroPadding1D((1, 2))(tl.ones((1, 2, 1))).numpy().ravel().tolist()
    [0.0, 1.0, 1.0, 0.0, 0.0]
    """

    _rank = 1


class ZeroPadding2D(_ZeroPadding):
    """Zeros around NHWC images (Keras' ``ZeroPadding2D``; PyTorch's ``nn.ZeroPad2d((left, right, top, bottom))``
    is ``padding=((top, bottom), (left, right)), data_format="NCHW"``).

    >>> import tensorlib as tl
    >>> tl.nn.ZeroPadding2D(((1, 0), (2, 1)))(tl.ones((1, 2, 2, 3))).shape
    (1, 3, 5, 3)
    """


class ZeroPadding3D(_ZeroPadding):
    """Zeros around ``(batch, depth, height, width, channels)`` volumes (Keras' ``ZeroPadding3D``).

    >>> import tensorlib as tl
    >>> tl.nn.ZeroPadding3D(1)(tl.ones((1, 2, 2, 2, 3))).shape
    (1, 4, 4, 4, 3)
    """

    _rank = 3


class UpSampling2D(Module):
    """Images enlarged ``size`` times (an int or ``(rows, cols)``): Keras' ``UpSampling2D``,
    :func:`tl.nn.resize` with ``interpolation="nearest"`` (each pixel repeated) or ``"bilinear"`` (half-pixel
    centers); PyTorch's ``nn.Upsample(scale_factor=size, mode=..., align_corners=False)`` with
    ``data_format="NCHW"``.

    >>> import tensorlib as tl
    >>> tl.nn.UpSampling2D(2)(tl.tensor([[[[1.0], [2.0]]]])).numpy()[0, :, :, 0].tolist()
    [[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]
    """

    def __init__(self, size=2, interpolation: str = "nearest", data_format: str = "NHWC"):
        super().__init__()
        self.data_format = _data_format(data_format, "UpSampling2D")
        self.size = _sizes(size, 2, "size", "UpSampling2D")
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError(f"UpSampling2D: interpolation must be 'nearest' or 'bilinear', got {interpolation!r}")
        self.interpolation = interpolation

    def forward(self, x):
        x = _image(x, "UpSampling2D", 2, self.data_format)
        height, width = x.shape[2:4] if self.data_format == "NCHW" else x.shape[1:3]
        if None in (height, width):
            raise ValueError(f"UpSampling2D: the height and width must be known, got input shape {tuple(x.shape)}")
        size = (height * self.size[0], width * self.size[1])
        y = _nn.resize(_channels_to_last(x, self.data_format), size, method=self.interpolation)
        return _channels_to_first(y, self.data_format)

    def extra_repr(self) -> str:
        text = f"size={self.size}, interpolation={self.interpolation!r}"
        return text if self.data_format == "NHWC" else f"{text}, data_format={self.data_format!r}"


class _NearestUpSampling(Module):
    """Keras' nearest-neighbour upsampling: each cell repeated ``size`` times along each spatial axis."""

    _rank = 1

    def __init__(self, size=2, data_format: str | None = None):
        super().__init__()
        name = type(self).__name__
        self.data_format = _layer_format(self, data_format)
        self.size = _sizes(size, self._rank, "size", name)

    def forward(self, x):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        first = 1 if self.data_format[-1] == "C" else 2
        for axis, times in enumerate(self.size, first):
            if times > 1:
                x = _array.repeat(x, times, axis=axis)
        return _as_result(x, self)

    def extra_repr(self) -> str:
        text = f"size={self.size}"
        return _with_format(self, text)


class UpSampling1D(_NearestUpSampling):
    """Each step of ``(batch, width, channels)`` inputs repeated ``size`` times (Keras' ``UpSampling1D``; PyTorch's
    ``nn.Upsample(scale_factor=size)`` with ``data_format="NCW"``).

    >>> import tensorlib as tl
    >>> tl.nn.UpSampling1D(2)(tl.tensor([[[1.0], [2.0]]])).numpy().ravel().tolist()
    [1.0, 1.0, 2.0, 2.0]
    """


class UpSampling3D(_NearestUpSampling):
    """Each cell of ``(batch, depth, height, width, channels)`` volumes repeated ``size`` times per axis (Keras'
    ``UpSampling3D``; PyTorch's ``nn.Upsample(scale_factor=size)`` with ``data_format="NCDHW"``).

    >>> import tensorlib as tl
    >>> tl.nn.UpSampling3D((1, 2, 2))(tl.ones((1, 2, 3, 3, 4))).shape
    (1, 2, 6, 6, 4)
    """

    _rank = 3


class PReLU(Module):
    """Parametric ReLU with a trainable slope ``alpha`` for negative inputs: one shared (``num_parameters=1``) or
    one per channel (the last axis; the second with ``data_format="NCHW"``), starting at ``init``.  PyTorch's
    ``nn.PReLU(num_parameters, init)``; Keras' ``PReLU(shared_axes=spatial axes)`` with ``alpha`` starting at 0.

    >>> import tensorlib as tl
    >>> tl.nn.PReLU()(tl.tensor([-2.0, 3.0])).numpy().tolist()
    [-0.5, 3.0]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, dtype=_dt.float32, data_format: str = "NHWC"):
        super().__init__()
        self.num_parameters = _positive("num_parameters", num_parameters, "PReLU")
        self.data_format = _data_format(data_format, "PReLU")
        if not _number_in(init, -math.inf, math.inf):
            raise ValueError(f"PReLU: init must be a finite number, got {init!r}")
        dtype = _float_dtype(dtype, "PReLU")
        self.alpha = Variable(_init.ones((self.num_parameters,), dtype=dtype) * float(init), name="alpha")

    def forward(self, x):
        x = _as_tensor(x, self)
        alpha = self.alpha
        if self.num_parameters > 1:
            first = self.data_format == "NCHW"
            if len(x.shape) < (2 if first else 1) or x.shape[1 if first else -1] not in (None, self.num_parameters):
                where = "second (NCHW)" if first else "last"
                raise ValueError(
                    f"PReLU: input's {where} (channel) dimension must be num_parameters={self.num_parameters}, got "
                    f"input shape {tuple(x.shape)} ({x.dtype})"
                )
            if first:
                alpha = _shape.reshape(alpha, (-1,) + (1,) * (len(x.shape) - 2))
        return _nn.prelu(x, alpha)

    def extra_repr(self) -> str:
        text = f"num_parameters={self.num_parameters}"
        return text if self.data_format == "NHWC" else f"{text}, data_format={self.data_format!r}"


class BatchNorm(Module):
    """Batch normalization over every axis but the channels (the last; axis 1 with ``data_format="NCHW"``).

    Training normalises with the batch mean and (biased) variance and updates
    ``running_mean``/``running_var`` as PyTorch does:
    ``running = (1 - momentum) * running + momentum * batch``, the variance
    Bessel-corrected.  (Keras' ``momentum`` weighs the old value instead: its
    ``momentum=0.99`` is ``momentum=0.01`` here, and Keras keeps the biased variance.)  ``momentum=None`` keeps
    the cumulative averages of every batch's statistics, counting the batches in ``num_batches_tracked`` (PyTorch's
    ``momentum=None``).  ``eval()`` mode normalises with the running statistics; with
    ``track_running_stats=False`` there are none (``running_mean`` and ``running_var`` are None) and both modes
    normalise with the batch's, as PyTorch's.
    ``scale`` and ``offset`` (gamma and beta) are trainable, each dropped with ``scale=False`` / ``center=False``
    (Keras' arguments; PyTorch's ``affine=False`` drops both); the running statistics are not trainable.  Training on one value per channel (a batch of one dense
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
        center: bool = True,
        scale: bool = True,
        track_running_stats: bool = True,
    ):
        super().__init__()
        self.data_format = _data_format(data_format, "BatchNorm")
        self.num_features = _positive("num_features", num_features, "BatchNorm")
        if momentum is not None and not _number_in(momentum, 0.0, 1.0):
            raise ValueError(f"BatchNorm: momentum must be in [0, 1] or None, got {momentum!r}")
        self.momentum = None if momentum is None else float(momentum)
        self.epsilon = _epsilon(epsilon, "BatchNorm")
        self._dtype = dtype = _float_dtype(dtype, "BatchNorm")
        self.scale = Variable(_init.ones((self.num_features,), dtype=dtype), name="scale") if scale else None
        self.offset = Variable(_init.zeros((self.num_features,), dtype=dtype), name="offset") if center else None
        self.running_mean = self.running_var = None
        if track_running_stats:
            self.running_mean = Variable(
                _init.zeros((self.num_features,), dtype=dtype), name="running_mean", trainable=False
            )
            self.running_var = Variable(
                _init.ones((self.num_features,), dtype=dtype), name="running_var", trainable=False
            )
            if momentum is None:
                self.num_batches_tracked = Variable(np.zeros((), np.int64), name="num_batches_tracked", trainable=False)

    def forward(self, x, training: bool | None = None):
        """``training`` (Keras' call argument): batch statistics (moving the running ones) or the running ones for
        this call; None follows ``train()``/``eval()``.  A frozen layer (``trainable = False``, itself or a Module
        above it) runs in inference mode whatever ``training`` says, as Keras' ``BatchNormalization``: fine-tuning
        a model with frozen normalization layers had kept moving their running statistics."""
        x = _float_or_float64(_as_tensor(x, self), "BatchNorm", "input")  # integers and bools: float64 (DESIGN §6)
        training = _in_training(self, training) and self.trainable
        channel = -1 if self.data_format == "NHWC" else 1
        if len(x.shape) < 2 or x.shape[channel] != self.num_features:
            where = "last" if channel == -1 else "second (NCHW)"
            raise ValueError(
                f"BatchNorm: input's {where} (channel) dimension must be num_features="
                f"{self.num_features}, got input shape {tuple(x.shape)}"
            )
        # Per-channel vectors broadcast along the channel axis: (C,) for NHWC, (C, 1, ..., 1) for NCHW.
        along = (  # None (no scale or offset) stays None
            (lambda v: v)
            if channel == -1
            else (lambda v: v if v is None else _shape.reshape(v, (-1,) + (1,) * (len(x.shape) - 2)))
        )
        # A float16 x is normalized in float32 with float32 statistics, as PyTorch does: moments() rounds them
        # to float16 (TensorFlow's rule), and the mean of x ~ 100 +- 0.3 rounded shifted y by up to 0.3.
        dtype = _dt.promote_types(x.dtype, self._dtype)
        wide = _math.cast(x, _dt.float32) if x.dtype == _dt.float16 else x
        if not training and self.running_mean is not None:
            # float16 running statistics in float32 too: in float16, x * inv + (offset - mean * inv) cancelled, 226
            # float16 ulps (0.043) off for x ~ 10 +- 1 (PyTorch: 0.5).
            mean, variance = (
                _math.cast(v, _dt.float32) if v.dtype == _dt.float16 else v
                for v in (self.running_mean, self.running_var)
            )
        else:
            mean, variance = self._batch_statistics(x, wide, channel, training)
        y = _nn.batch_normalization(
            wide, along(mean), along(variance), along(self.offset), along(self.scale), self.epsilon
        )
        return y if y.dtype == dtype else _math.cast(y, dtype)

    def _batch_statistics(self, x, wide, channel: int, training: bool) -> tuple:
        """The batch's mean and (biased) variance over every axis but ``channel``, from ``wide`` (x in at least
        float32); in training mode with running statistics, those are moved towards them."""
        axes = tuple(a for a in range(len(x.shape)) if a != channel % len(x.shape))
        sizes = [x.shape[a] for a in axes]
        one = None
        if None in sizes:  # traced with a size known only at run time
            # float64 counts the values exactly (float32 from 2**24 on), and the factor is rounded once, to the
            # statistics' dtype: computed in float32 and rounded to x's, it put a float64 running variance 3.4e-8
            # and a float16 model's 2.8e-4 away from the eager one's.
            count = _math.cast(_shape.shape_size(x, axes), _dt.float64)
            bessel = _math.cast(count / _math.maximum(count - 1.0, 1.0), wide.dtype)
            # One value per channel shows only at run time: a factor of 1 that is Inf then and is checked, so the
            # graph raises before either running statistic is assigned (it gave zeros and pulled running_var to 0).
            one = check_numerics(_nn_where(count == 1.0, np.inf, 1.0, _dt.float32), _single_value_message(x))
            empty = count == 0.0  # a bool tensor: known when the graph runs
        else:
            count = math.prod(sizes)
            if count == 1:
                # Each value would be its own mean: the output all zeros, the running variance 0.
                raise ValueError(_single_value_message(x))
            bessel = count / max(count - 1, 1)
            empty = count == 0
        mean, variance = _nn.moments(wide, axes)
        if empty is not False:
            # No examples, no statistics: the NaN mean of an empty batch had become the running averages for good
            # and made the scale's gradient NaN (PyTorch: unchanged, and 0).  The (empty) output is normalized by
            # 0 and 1 instead, and the running averages are kept.
            mean, variance = _elementwise.where(empty, 0.0, mean), _elementwise.where(empty, 1.0, variance)
        if one is not None:  # in the graph even without running statistics to update
            mean, variance = mean * one, variance * one
        if training and self.running_mean is not None:
            # The running averages must not be differentiated through, nor make a recording tape keep them.
            self._update_running(_math.stop_gradient(mean), _math.stop_gradient(variance) * bessel, empty)
        return mean, variance

    def _update_running(self, batch_mean, batch_var, empty):
        """Move the running statistics towards the batch's (not for an empty batch: ``empty`` True, or a bool
        tensor when traced); ``momentum=None`` weighs the batch by 1 / the batches counted so far."""
        m = self.momentum
        if m is None:  # counted as PyTorch does, an empty batch too
            tracked = self.num_batches_tracked + 1
            self.num_batches_tracked.assign(tracked)
            m = 1.0 / _math.cast(tracked, batch_mean.dtype)
        for running, batch in ((self.running_mean, batch_mean), (self.running_var, batch_var)):
            if empty is True:
                break
            update = running * (1.0 - m) + batch * m
            if empty is not False:
                update = _elementwise.where(empty, running, update)
            running.assign(update if update.dtype == running.dtype else _math.cast(update, running.dtype))

    def extra_repr(self) -> str:
        text = f"{self.num_features}, momentum={self.momentum}, epsilon={self.epsilon}"
        return text if self.running_mean is not None else f"{text}, track_running_stats=False"


def _single_value_message(x) -> str:
    return (
        "BatchNorm: expected more than 1 value per channel when training, got input shape "
        f"{tuple(x.shape)}; use eval() mode for single examples"
    )


class _SeedStream:
    """A noise layer's draws (Keras 3's ``SeedGenerator``).  Without a seed, the global stream that
    ``tl.random.seed`` resets.  With one, the layer's own stream: the draws of its n-th call are a function of the
    seed and n alone (a non-trainable int64 Variable counts the calls, read and advanced at each call, by each run of
    a ``tl.function`` too), so two layers of one seed draw alike and every call draws anew, where a fixed seed
    would repeat one mask at every training step; a gradient's replay draws the same.  The layer holds the counter
    as its ``seed_state`` (:func:`_noise_stream`), so checkpoints keep the stream's position.  In a ``tl.scan``
    body the counter advances per step (a traced loop carries it)."""

    __slots__ = ("calls", "seed")

    def __init__(self, seed, layer: str):
        self.seed = _seed(seed, layer)
        self.calls = None if self.seed is None else Variable(np.int64(0), name="seed_state", trainable=False)

    def _key(self) -> Tensor:
        key = _math.identity(self.calls)
        self.calls.assign(key + 1)
        return key

    def dropout(self, x, rate: float, noise_shape=None) -> Tensor:
        if self.seed is None:
            return _nn.dropout(x, rate, noise_shape=noise_shape)
        return _keyed_dropout(x, rate, self._key(), self.seed, noise_shape)

    def normal(self, x, mean: float, stddev: float) -> Tensor:
        """Normal draws of ``x``'s shape and dtype; of a shape known only when a graph runs, per-mean draws of the
        same numbers (up to rounding)."""
        key = None if self.seed is None else self._key()
        if None in x.shape:
            return _random.normal_like(x, mean, stddev, key, self.seed)
        if key is None:
            return _random.normal(x.shape, mean, stddev, dtype=x.dtype)
        return _random.keyed_normal(x.shape, key, self.seed, mean, stddev, x.dtype)


def _noise_stream(module: Module, seed, name: str, draws: bool = True) -> _SeedStream:
    """``module``'s noise stream.  Seeded, and where the layer draws noise (``draws``), its call counter is the
    layer's ``seed_state``: a non-trainable int64 Variable in ``variables``, ``state_dict`` and checkpoints (Keras'
    ``SeedGenerator`` state, PyTorch's RNG state saved beside the model), so a run resumed from a checkpoint draws
    the masks the uninterrupted run draws, where it restarted them from the first call's."""
    stream = _SeedStream(seed, name)
    if stream.calls is not None and draws:
        module.seed_state = stream.calls
    return stream


class Dropout(Module):
    """Zero elements with probability ``rate`` while training (scaling the rest); identity in ``eval()`` mode.
    ``noise_shape`` (broadcastable to the input's shape, None entries meaning its sizes) shares one draw along its
    size-1 axes, as Keras'.

    Masks come from the global stream that ``tl.random.seed`` resets (a new mask per call), or with ``seed`` from
    the layer's own stream: a new mask per call (per run of a ``tl.function`` too), the same sequence of masks for
    every layer of that seed (Keras 3's ``seed``).  The stream's position, ``seed_state`` (the calls so far), is
    one of the layer's ``variables``, so a checkpoint resumes it.

    >>> import tensorlib as tl
    >>> drop = tl.nn.Dropout(0.5)
    >>> drop.eval()(tl.ones((2,))).numpy().tolist()
    [1.0, 1.0]
    >>> a, b = tl.nn.Dropout(0.5, seed=7), tl.nn.Dropout(0.5, seed=7)
    >>> [bool((a(tl.ones((8,))) == b(tl.ones((8,)))).numpy().all()) for _ in range(2)]
    [True, True]
    """

    def __init__(self, rate: float, noise_shape=None, seed: int | None = None):
        super().__init__()
        if not _number_in(rate, 0.0, 1.0) or rate == 1.0:
            raise ValueError(f"{type(self).__name__}: rate must be in [0, 1), got {rate!r}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else _noise_shape(noise_shape, type(self).__name__)
        self._draws = _noise_stream(self, seed, type(self).__name__)

    def forward(self, x, training: bool | None = None):
        """``training`` (Keras' call argument) drops or not for this call; None follows ``train()``/``eval()``."""
        x = _as_tensor(x, self)
        if not _in_training(self, training) or self.rate == 0:
            return _as_result(x, self)
        try:
            return self._draws.dropout(x, self.rate, self.noise_shape)
        except ValueError as e:
            raise ValueError(f"{type(self).__name__}: {e} (input shape {_shown(_as_tensor(x, self))})") from None

    def extra_repr(self) -> str:
        return f"rate={self.rate}"


def _noise_shape(value, layer: str) -> tuple:
    """A noise shape: a tuple of sizes >= 0 or None."""
    try:
        ok = all(d is None or isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in value)
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{layer}: noise_shape must be a tuple of sizes >= 0 or None, got {value!r}")
    return tuple(None if d is None else int(d) for d in value)


class _SpatialDropout(Dropout):
    """Dropout of whole channels: one draw per example and channel, shared over the ``_rank`` spatial axes."""

    _rank = 2

    def __init__(self, rate: float, data_format: str | None = None, seed: int | None = None):
        super().__init__(rate, seed=seed)
        self.data_format = _layer_format(self, data_format)

    def forward(self, x, training: bool | None = None):
        x = _image(x, type(self).__name__, self._rank, self.data_format)
        if not _in_training(self, training) or self.rate == 0:
            return _as_result(x, self)
        ones = (1,) * self._rank
        noise = (None, *ones, None) if self.data_format[-1] == "C" else (None, None, *ones)
        return self._draws.dropout(x, self.rate, noise)


class SpatialDropout1D(_SpatialDropout):
    """Zero whole channels of ``(batch, width, channels)`` inputs with probability ``rate`` while training (scaling
    the rest): Keras' ``SpatialDropout1D``, PyTorch's ``nn.Dropout1d`` with ``data_format="NCW"``.

    >>> import tensorlib as tl
    >>> tl.nn.SpatialDropout1D(0.5).eval()(tl.ones((1, 3, 2))).shape
    (1, 3, 2)
    """

    _rank = 1


class SpatialDropout2D(_SpatialDropout):
    """Zero whole channels (feature maps) of NHWC images with probability ``rate`` while training (scaling the
    rest): Keras' ``SpatialDropout2D``, PyTorch's ``nn.Dropout2d`` with ``data_format="NCHW"``.

    >>> import tensorlib as tl
    >>> y = tl.nn.SpatialDropout2D(0.5)(tl.ones((4, 3, 3, 8))).numpy()
    >>> bool((y.min(axis=(1, 2)) == y.max(axis=(1, 2))).all())  # each channel kept or dropped whole
    True
    """


class SpatialDropout3D(_SpatialDropout):
    """Zero whole channels of ``(batch, depth, height, width, channels)`` volumes with probability ``rate`` while
    training: Keras' ``SpatialDropout3D``, PyTorch's ``nn.Dropout3d`` with ``data_format="NCDHW"``.

    >>> import tensorlib as tl
    >>> tl.nn.SpatialDropout3D(0.5).eval()(tl.ones((1, 2, 2, 2, 3))).shape
    (1, 2, 2, 2, 3)
    """

    _rank = 3


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
        x = _as_tensor(x, self)
        k = len(self.normalized_shape)
        if tuple(x.shape[len(x.shape) - k :]) != self.normalized_shape or len(x.shape) < k:
            raise ValueError(
                f"LayerNorm: input's trailing dimensions must be normalized_shape={self.normalized_shape}, "
                f"got input shape {tuple(x.shape)}"
            )
        return _nn.layer_norm(x, self.scale, self.offset, axis=tuple(range(-k, 0)), epsilon=self.epsilon)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, epsilon={self.epsilon}"


class RMSNorm(Module):
    """RMS normalization over the trailing dimensions ``normalized_shape`` (an int or a tuple), as PyTorch's
    ``nn.RMSNorm`` and Keras' ``RMSNormalization``: :func:`tl.nn.rms_norm` with a trainable ``scale`` (ones)
    of that shape, dropped with ``scale=False``.

    >>> import numpy as np, tensorlib as tl
    >>> norm = tl.nn.RMSNorm(2, epsilon=0.0)
    >>> norm(np.array([[3.0, 4.0]], np.float32)).numpy().round(4).tolist(), norm.scale.shape
    ([[0.8485, 1.1314]], (2,))
    """

    def __init__(self, normalized_shape, epsilon: float = 1e-6, scale: bool = True, dtype=_dt.float32):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape = tuple(_positive("normalized_shape", d, "RMSNorm") for d in shape)
        if not self.normalized_shape:
            raise ValueError("RMSNorm: normalized_shape must name at least one dimension, got ()")
        self.epsilon = _epsilon(epsilon, "RMSNorm")
        dtype = _float_dtype(dtype, "RMSNorm")
        self.scale = Variable(_init.ones(self.normalized_shape, dtype=dtype), name="scale") if scale else None

    def forward(self, x):
        x = _as_tensor(x, self)
        k = len(self.normalized_shape)
        if len(x.shape) < k or tuple(x.shape[len(x.shape) - k :]) != self.normalized_shape:
            raise ValueError(
                f"RMSNorm: input's trailing dimensions must be normalized_shape={self.normalized_shape}, "
                f"got input shape {tuple(x.shape)} ({x.dtype})"
            )
        return _nn.rms_norm(x, self.scale, axis=tuple(range(-k, 0)), epsilon=self.epsilon)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, epsilon={self.epsilon}"


class _ChannelNorm(Module):
    """Normalization of groups of channels per example (:func:`tl.nn.group_norm`, :func:`tl.nn.instance_norm`) with
    a trainable per-channel ``scale`` (ones) and ``offset`` (zeros), each dropped with ``scale=False`` /
    ``center=False``; the channels last (``"NHWC"``, any rank) or second (``"NCHW"``)."""

    _min_rank = 2

    def _build(self, channels, epsilon, center, scale, dtype, data_format):
        name = type(self).__name__
        self.data_format = _data_format(data_format, name)
        self.epsilon = _epsilon(epsilon, name)
        dtype = _float_dtype(dtype, name)
        self.scale = Variable(_init.ones((channels,), dtype=dtype), name="scale") if scale else None
        self.offset = Variable(_init.zeros((channels,), dtype=dtype), name="offset") if center else None

    def _normalize(self, x, channels: int, function):
        x = _as_tensor(x, self)
        first = self.data_format == "NCHW"
        if len(x.shape) < self._min_rank or x.shape[1 if first else -1] not in (None, channels):
            where = "second (NCHW)" if first else "last"
            raise ValueError(
                f"{type(self).__name__}: input must have at least {self._min_rank} dimensions and {channels} channels "
                f"on its {where} axis, got shape {tuple(x.shape)} ({x.dtype})"
            )
        y = function(_channels_to_last(x, self.data_format), scale=self.scale, offset=self.offset, epsilon=self.epsilon)
        return _channels_to_first(y, self.data_format)


class GroupNorm(_ChannelNorm):
    """Group normalization: the ``channels`` split into ``groups`` groups, each normalized per example over its
    channels and every spatial axis to zero mean and unit (biased) variance, then ``* scale + offset`` per channel.
    PyTorch's ``nn.GroupNorm(groups, channels, eps)`` (with ``data_format="NCHW"``), Keras'
    ``GroupNormalization(groups)`` (whose ``epsilon`` default is 1e-3).

    >>> import numpy as np, tensorlib as tl
    >>> y = tl.nn.GroupNorm(2, 4, epsilon=0.0)(np.arange(8.0, dtype=np.float32).reshape(1, 2, 4)).numpy()
    >>> y.shape, float(y[0, :, :2].mean().round(5)), float(y[0, :, :2].std().round(5))
    ((1, 2, 4), 0.0, 1.0)
    """

    def __init__(
        self,
        groups: int,
        channels: int,
        epsilon: float = 1e-5,
        center: bool = True,
        scale: bool = True,
        dtype=_dt.float32,
        data_format: str = "NHWC",
    ):
        super().__init__()
        self.groups = _positive("groups", groups, "GroupNorm")
        self.channels = _positive("channels", channels, "GroupNorm")
        if self.channels % self.groups:
            raise ValueError(f"GroupNorm: channels={self.channels} must be a multiple of groups={self.groups}")
        self._build(self.channels, epsilon, center, scale, dtype, data_format)

    def forward(self, x):
        def function(x, **kwargs):
            return _nn.group_norm(x, self.groups, **kwargs)

        return self._normalize(x, self.channels, function)

    def extra_repr(self) -> str:
        return f"{self.groups}, {self.channels}, epsilon={self.epsilon}"


class InstanceNorm(_ChannelNorm):
    """Instance normalization: each example's channels normalized over the spatial axes to zero mean and unit
    (biased) variance, then ``* scale + offset`` per channel: :func:`tl.nn.instance_norm`, PyTorch's
    ``nn.InstanceNorm1d/2d/3d(num_features, eps, affine=True)`` with ``data_format="NCHW"`` (``center=False,
    scale=False`` is its default ``affine=False``).  No running statistics are kept: training and ``eval()`` mode
    agree, as PyTorch's default ``track_running_stats=False``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.InstanceNorm(2, epsilon=0.0)(np.array([[[1.0, 5.0], [3.0, 7.0]]], np.float32)).numpy().tolist()
    [[[-1.0, -1.0], [1.0, 1.0]]]
    """

    _min_rank = 3

    def __init__(
        self,
        num_features: int,
        epsilon: float = 1e-5,
        center: bool = True,
        scale: bool = True,
        dtype=_dt.float32,
        data_format: str = "NHWC",
    ):
        super().__init__()
        self.num_features = _positive("num_features", num_features, "InstanceNorm")
        self._build(self.num_features, epsilon, center, scale, dtype, data_format)

    def forward(self, x):
        return self._normalize(x, self.num_features, _nn.instance_norm)

    def extra_repr(self) -> str:
        return f"{self.num_features}, epsilon={self.epsilon}"


def _padding_index(padding_idx, rows: int, layer: str) -> int | None:
    """PyTorch's ``padding_idx``: None or an int in ``[-rows, rows)``, negative counting from the end."""
    if padding_idx is not None and (
        isinstance(padding_idx, bool)
        or not isinstance(padding_idx, (int, np.integer))
        or not -rows <= padding_idx < rows
    ):
        raise ValueError(f"{layer}: padding_idx must be None or an int in [{-rows}, {rows}), got {padding_idx!r}")
    return None if padding_idx is None else int(padding_idx) % rows


def _without_row(table, row: int | None):
    """``table`` with row ``row`` zeroed (the padding row starts at zero, as PyTorch's)."""
    if row is None:
        return table
    return table * _tensor((np.arange(table.shape[0])[:, None] != row).astype(table.dtype))


def _int_argument(value, what: str, layer: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{layer}: {what} must be an int, got {value!r}")
    return int(value)


class Embedding(Module):
    """A trainable table of ``input_dim`` vectors of size ``output_dim``; calling it with integer ids looks
    them up (:func:`tl.nn.embedding_lookup`: ids outside ``[0, input_dim)`` are an IndexError, repeated ids
    add up their gradients).  The table starts from ``embeddings_initializer`` (Glorot uniform).

    ``padding_idx`` (PyTorch's ``nn.Embedding(padding_idx=)``; negative counts from the end) names a row that
    starts at zero and gets no gradient: the id of padding in a batch of sequences.

    >>> import numpy as np, tensorlib as tl
    >>> emb = tl.nn.Embedding(10, 3, seed=0)
    >>> emb(np.array([[1, 2, 1]])).shape, emb.embeddings.shape
    ((1, 3, 3), (10, 3))
    >>> tl.nn.Embedding(10, 3, padding_idx=0, seed=0)(np.array([0])).numpy().tolist()
    [[0.0, 0.0, 0.0]]
    """

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        embeddings_initializer="glorot_uniform",
        seed=None,
        dtype=_dt.float32,
        padding_idx: int | None = None,
    ):
        super().__init__()
        self.input_dim = _positive("input_dim", input_dim, "Embedding")
        self.output_dim = _positive("output_dim", output_dim, "Embedding")
        seed = _seed(seed, "Embedding")
        self.padding_idx = _padding_index(padding_idx, self.input_dim, "Embedding")
        table = _init.get(embeddings_initializer)((self.input_dim, self.output_dim), seed=seed, dtype=dtype)
        self.embeddings = Variable(_without_row(table, self.padding_idx), name="embeddings")

    def forward(self, ids):
        y = _nn.embedding_lookup(self.embeddings, ids)
        if self.padding_idx is None:
            return y
        # The padding row is looked up as it is, but its gradient is 0 (PyTorch's padding_idx).
        padding = _shape.expand_dims(_as_tensor(ids, self) == self.padding_idx, -1)
        return _elementwise.where(padding, _math.stop_gradient(y), y)

    def extra_repr(self) -> str:
        return f"{self.input_dim}, {self.output_dim}" + (
            "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        )


class Flatten(Module):
    """Reshape ``(N, ...)`` to ``(N, prod(...))``.

    >>> import tensorlib as tl
    >>> tl.nn.Flatten()(tl.ones((2, 3, 4))).shape
    (2, 12)
    """

    def forward(self, x):
        x = _as_tensor(x, self)
        if len(x.shape) < 1:
            raise ValueError(f"Flatten: input needs a batch dimension, got shape {tuple(x.shape)}")
        if None in x.shape[1:]:  # traced with a feature size known only at run time (it raised a raw TypeError)
            if x.shape[0] is None:
                raise ValueError(
                    "Flatten: traced with both the batch size and the other dimensions unknown, got input shape "
                    f"{tuple(x.shape)} ({x.dtype}): give the TensorSpec the batch size or the other sizes"
                )
            return _shape.reshape(x, (x.shape[0], -1))
        rest = math.prod(x.shape[1:])
        # -1 keeps a traced batch dimension of unknown size; with zero-size features it would be
        # ambiguous, and the batch size is given instead.
        return _shape.reshape(x, (-1, rest) if rest else (x.shape[0], 0))


class Activation(Module):
    """An activation as a layer (Keras' ``Activation``): a ``tl.nn`` function's name (``"relu"``, ``"linear"``) or
    a callable, applied elementwise; the subclasses below are PyTorch's ``nn.ReLU()``, ``nn.Softmax(dim)``, ...

    >>> import tensorlib as tl
    >>> tl.nn.Sequential(tl.nn.Dense(2, 3, seed=0), tl.nn.Activation("relu"))(tl.ones((1, 2))).shape
    (1, 3)
    """

    def __init__(self, activation):
        super().__init__()
        self.activation = _activation(activation, type(self).__name__, none=False)

    def forward(self, x):
        x = _as_tensor(x, self)
        y = self.activation(x)
        return _as_result(y) if y is x else y  # "linear": the identity

    def extra_repr(self) -> str:
        return getattr(self.activation, "__name__", repr(self.activation)).lstrip("_")


class _FixedActivation(Activation):
    """An activation layer without arguments: ``_function``."""

    _function = None

    def __init__(self):
        super().__init__(type(self)._function)

    def extra_repr(self) -> str:
        return ""


class ReLU(Activation):
    """``max(x, 0)`` (PyTorch's ``nn.ReLU``), or Keras' ``ReLU(max_value, negative_slope, threshold)``:
    ``x`` for ``threshold <= x``, capped at ``max_value``, and ``negative_slope * (x - threshold)`` below
    ``threshold`` (``ReLU(6.0)`` is PyTorch's ``nn.ReLU6``).

    >>> import tensorlib as tl
    >>> tl.nn.ReLU()(tl.tensor([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    >>> tl.nn.ReLU(max_value=1.5, negative_slope=0.5, threshold=1.0)(tl.tensor([-1.0, 1.25, 2.0])).numpy().tolist()
    [-1.0, 1.25, 1.5]
    """

    def __init__(self, max_value: float | None = None, negative_slope: float = 0.0, threshold: float = 0.0):
        for name, value in (("max_value", max_value), ("negative_slope", negative_slope), ("threshold", threshold)):
            if not (value is None and name == "max_value") and not _number_in(value, 0.0, math.inf):
                raise ValueError(f"ReLU: {name} must be a finite number >= 0, got {value!r}")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope, self.threshold = float(negative_slope), float(threshold)
        plain = self.max_value is None and self.negative_slope == 0.0 and self.threshold == 0.0
        super().__init__(_nn.relu if plain else self._keras_relu)

    def _keras_relu(self, x):
        x = _as_tensor(x, self)
        below = x - self.threshold if self.threshold else x
        y = _math.where(
            x > self.threshold, x, below * self.negative_slope if self.negative_slope else _math.zeros_like(x)
        )
        return y if self.max_value is None else _math.minimum(y, self.max_value)

    def extra_repr(self) -> str:
        named = {"max_value": self.max_value, "negative_slope": self.negative_slope, "threshold": self.threshold}
        return ", ".join(f"{k}={v}" for k, v in named.items() if v not in (None, 0.0))


class LeakyReLU(Activation):
    """``x`` where positive, else ``negative_slope * x``: PyTorch's ``nn.LeakyReLU(negative_slope=0.01)`` (Keras'
    default slope is 0.3, ``tl.nn.leaky_relu``'s TensorFlow's 0.2).

    >>> import tensorlib as tl
    >>> tl.nn.LeakyReLU(0.5)(tl.tensor([-2.0, 2.0])).numpy().tolist()
    [-1.0, 2.0]
    """

    def __init__(self, negative_slope: float = 0.01):
        if not _number_in(negative_slope, -math.inf, math.inf):
            raise ValueError(f"LeakyReLU: negative_slope must be a finite number, got {negative_slope!r}")
        self.negative_slope = float(negative_slope)
        super().__init__(functools.partial(_nn.leaky_relu, alpha=self.negative_slope))

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class GELU(Activation):
    """``x * Phi(x)`` (PyTorch's ``nn.GELU``); ``approximate=True`` (or ``"tanh"``) is the tanh form.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.GELU()(tl.tensor([1.0]))[0]), 4)
    0.8413
    """

    def __init__(self, approximate=False):
        if approximate not in (False, True, "none", "tanh"):
            raise ValueError(f"GELU: approximate must be False, True, 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate in (True, "tanh")
        super().__init__(functools.partial(_nn.gelu, approximate=self.approximate))

    def extra_repr(self) -> str:
        return "approximate='tanh'" if self.approximate else ""


class Sigmoid(_FixedActivation):
    """``1 / (1 + exp(-x))`` (PyTorch's ``nn.Sigmoid``).

    >>> import tensorlib as tl
    >>> tl.nn.Sigmoid()(tl.tensor([0.0])).numpy().tolist()
    [0.5]
    """

    _function = staticmethod(_math.sigmoid)


class Tanh(_FixedActivation):
    """``tanh(x)`` (PyTorch's ``nn.Tanh``).

    >>> import tensorlib as tl
    >>> tl.nn.Tanh()(tl.tensor([0.0])).numpy().tolist()
    [0.0]
    """

    _function = staticmethod(_math.tanh)


class Softmax(Activation):
    """``exp(x)`` normalized to sum to one along ``axis`` (Keras' ``Softmax(axis=-1)``, PyTorch's
    ``nn.Softmax(dim)``).

    >>> import tensorlib as tl
    >>> tl.nn.Softmax()(tl.tensor([[0.0, 0.0]])).numpy().tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, axis: int = -1):
        self.axis = _int_argument(axis, "axis", "Softmax")
        super().__init__(functools.partial(_nn.softmax, axis=self.axis))

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class Softmin(Activation):
    """``softmax(-x)`` along ``axis`` (PyTorch's ``nn.Softmin(dim)``; :func:`tl.nn.softmin`).

    >>> import tensorlib as tl
    >>> tl.nn.Softmin()(tl.tensor([[0.0, 1000.0]])).numpy().tolist()
    [[1.0, 0.0]]
    """

    def __init__(self, axis: int = -1):
        self.axis = _int_argument(axis, "axis", "Softmin")
        super().__init__(functools.partial(_nn.softmin, axis=self.axis))

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class _ShrinkActivation(Activation):
    """PyTorch's ``nn.Hardshrink(lambd)`` and ``nn.Softshrink(lambd)``: ``_function`` with ``lambd``."""

    _function = None

    def __init__(self, lambd: float = 0.5):
        if not _number_in(lambd, 0.0, math.inf) or math.isinf(lambd):
            raise ValueError(f"{type(self).__name__}: lambd must be a finite number >= 0, got {lambd!r}")
        self.lambd = float(lambd)
        super().__init__(functools.partial(type(self)._function, lambd=self.lambd))

    def extra_repr(self) -> str:
        return f"lambd={self.lambd}"


class Hardshrink(_ShrinkActivation):
    """``x`` where ``|x| > lambd``, else 0 (PyTorch's ``nn.Hardshrink``; :func:`tl.nn.hardshrink`).

    >>> import tensorlib as tl
    >>> tl.nn.Hardshrink(1.0)(tl.tensor([-2.0, 0.5])).numpy().tolist()
    [-2.0, 0.0]
    """

    _function = staticmethod(_nn.hardshrink)


class Softshrink(_ShrinkActivation):
    """``x`` moved ``lambd`` towards 0, and 0 within ``lambd`` of it (PyTorch's ``nn.Softshrink``;
    :func:`tl.nn.softshrink`).

    >>> import tensorlib as tl
    >>> tl.nn.Softshrink(1.0)(tl.tensor([-2.0, 0.5])).numpy().tolist()
    [-1.0, 0.0]
    """

    _function = staticmethod(_nn.softshrink)


class Tanhshrink(_FixedActivation):
    """``x - tanh(x)`` (PyTorch's ``nn.Tanhshrink``).

    >>> import tensorlib as tl
    >>> tl.nn.Tanhshrink()(tl.tensor([0.0])).numpy().tolist()
    [0.0]
    """

    _function = staticmethod(_nn.tanhshrink)


class Threshold(Activation):
    """``x`` where ``x > threshold``, else ``value`` (PyTorch's ``nn.Threshold(threshold, value)``).

    >>> import tensorlib as tl
    >>> tl.nn.Threshold(0.5, -1.0)(tl.tensor([0.0, 2.0])).numpy().tolist()
    [-1.0, 2.0]
    """

    def __init__(self, threshold: float, value: float):
        for name, number in (("threshold", threshold), ("value", value)):
            if not _number_in(number, -math.inf, math.inf):
                raise ValueError(f"Threshold: {name} must be a number, got {number!r}")
        self.threshold, self.value = float(threshold), float(value)
        super().__init__(functools.partial(_nn.threshold, threshold=self.threshold, value=self.value))

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"


class Softplus(Activation):
    """``log(1 + exp(beta x)) / beta``, and ``x`` where ``beta x > threshold`` (PyTorch's ``nn.Softplus(beta=1.0,
    threshold=20.0)``, its defaults; :func:`tl.nn.softplus`).

    >>> import tensorlib as tl
    >>> tl.nn.Softplus()(tl.tensor([0.0, 30.0])).numpy().round(4).tolist()
    [0.6931, 30.0]
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        for name, number in (("beta", beta), ("threshold", threshold)):
            if not _number_in(number, -math.inf, math.inf) or math.isinf(number) or (name == "beta" and number == 0):
                raise ValueError(f"Softplus: {name} must be a finite number (beta not 0), got {number!r}")
        self.beta, self.threshold = float(beta), float(threshold)
        super().__init__(functools.partial(_nn.softplus, beta=self.beta, threshold=self.threshold))

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class RReLU(Module):
    """Randomized leaky ReLU (PyTorch's ``nn.RReLU(lower=1/8, upper=1/3)``): while training, each negative element
    is scaled by its own slope drawn from ``U(lower, upper)`` (the stream ``tl.random.seed`` resets, new draws at
    every call); in ``eval()`` mode by the mean slope (:func:`tl.nn.rrelu`).

    >>> import tensorlib as tl
    >>> tl.nn.RReLU(0.25, 0.75).eval()(tl.tensor([-2.0, 3.0])).numpy().tolist()
    [-1.0, 3.0]
    """

    def __init__(self, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0):
        super().__init__()
        if not (_number_in(lower, 0.0, math.inf) and _number_in(upper, 0.0, math.inf) and lower <= upper):
            raise ValueError(f"RReLU: need 0 <= lower <= upper, finite, got lower={lower!r}, upper={upper!r}")
        self.lower, self.upper = float(lower), float(upper)

    def forward(self, x, training: bool | None = None):
        """``training`` (Keras' call argument) draws slopes or not for this call; None follows ``train()``/``eval()``."""
        return _nn.rrelu(_as_tensor(x, self), self.lower, self.upper, training=_in_training(self, training))

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"


class LocalResponseNorm(Module):
    """PyTorch's ``nn.LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0)`` over the channel ``axis`` (PyTorch's
    1 by default; -1 for channels last): :func:`tl.nn.local_response_norm`.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.LocalResponseNorm(2, alpha=1.0, beta=1.0)(np.array([[2.0, 0.0]])).numpy().tolist()
    [[0.6666666666666666, 0.0]]
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0, axis: int = 1):
        super().__init__()
        self.size = _int_argument(size, "size", "LocalResponseNorm")
        for name, value in (("alpha", alpha), ("beta", beta), ("k", k)):
            if not _number_in(value, -math.inf, math.inf) or math.isinf(value):
                raise ValueError(f"LocalResponseNorm: {name} must be a finite number, got {value!r}")
        self.alpha, self.beta, self.k = float(alpha), float(beta), float(k)
        self.axis = _int_argument(axis, "axis", "LocalResponseNorm")

    def forward(self, x):
        x = _as_tensor(x, self)
        return _nn.local_response_norm(x, self.size, self.alpha, self.beta, self.k, self.axis)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}, axis={self.axis}"


class Unfold(Module):
    """PyTorch's ``nn.Unfold(kernel_size, dilation=1, padding=0, stride=1)``: :func:`tl.nn.unfold` of NCHW inputs.

    >>> import tensorlib as tl
    >>> tl.nn.Unfold(2)(tl.ones((1, 3, 4, 4))).shape
    (1, 12, 9)
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, x):
        return _nn.unfold(_as_tensor(x, self), self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


class Fold(Unfold):
    """PyTorch's ``nn.Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)``: :func:`tl.nn.fold`.

    >>> import tensorlib as tl
    >>> tl.nn.Fold((4, 4), 2)(tl.ones((1, 12, 9))).shape
    (1, 3, 4, 4)
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, x):
        x = _as_tensor(x, self)
        return _nn.fold(x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()


# ------------------------------------------------------------------ recurrent layers (on tl.scan)
class _Recurrent(Module):
    """Keras' recurrent layers over ``(batch, time, features)`` inputs: one ``tl.scan`` over time (a ``Scan`` node
    when traced, differentiable by a reverse scan), the input's product with ``kernel`` computed for every step
    at once before it.  The steps run in the dtype the input, the weights and the initial states promote to;
    ``activation=None`` is the identity (Keras' ``"linear"``); 0 time steps give the initial state and an
    empty sequence.

    ``dropout`` and ``recurrent_dropout`` act in training mode (``train()``, a Module's default; ``eval()`` turns
    them off), as Keras 3's: one mask per sequence for the input and one for the recurrent state ``h``, drawn
    at every call (of a ``tl.function`` too) from the stream ``tl.random.seed`` resets or, with ``seed``, from
    the layer's own (as ``Dropout``'s: the same masks for two layers of one seed), kept for all the steps and
    scaled by ``1 / (1 - rate)``.  With ``recurrent_dropout`` each gate has masks of its
    own, for the input and for ``h`` (Keras 3's ``implementation=1``); with ``dropout`` alone the gates share
    the input's.

    ``stateful=True`` (Keras'): a call's final states are the next call's initial states (unless it is given
    ``initial_state``), for a batch of the same size (known: a ``TensorSpec`` batch of None is an error), also in
    a ``tl.function``; :meth:`reset_states` sets them to zeros.  They are :attr:`states`, non-trainable Variables
    made at the first call and, as in Keras, no part of the layer's ``variables`` or checkpoints.

    ``unroll=True`` (Keras'): the steps run as ops of their own instead of one ``tl.scan`` (a traced graph
    without a ``Scan`` node, one copy of the step per time step: for short sequences)."""

    gates = 1
    name = "Recurrent"

    def __init__(self, input_size, units, activation, recurrent_activation, use_bias, return_sequences, return_state,
                 kernel_initializer, recurrent_initializer, seed, dtype, go_backwards, dropout, recurrent_dropout, stateful, unroll):  # fmt: skip
        super().__init__()
        name = self.name
        self.go_backwards, self.stateful, self.unroll = bool(go_backwards), bool(stateful), bool(unroll)
        self._carried = _CarriedStates()
        for what, rate in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if not _number_in(rate, 0.0, 1.0) or float(rate) >= 1.0:
                raise ValueError(f"{name}: {what} must be in [0, 1), got {rate!r}")
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self.input_size = _positive("input_size", input_size, name)
        self.units = _positive("units", units, name)
        seed = _seed(seed, name)
        # The dropout masks' (the layer's seed drew only its weights).
        self._draws = _noise_stream(self, seed, name, draws=self.dropout > 0 or self.recurrent_dropout > 0)
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

    def forward(self, x, initial_state=None, mask=None, training: bool | None = None):
        """The layer over ``x`` ``(batch, time, input_size)`` from ``initial_state`` (zeros by default); ``mask``
        ``(batch, time)`` (bools, or numbers where nonzero is True), as Keras': a False step leaves the states as
        they were and outputs the last unmasked step's output (zeros before the first), so with right padding
        the final states are each sequence's last real step's (PyTorch's packed sequences' ``h_n``).  ``training``
        (Keras' call argument) turns dropout on or off for this call; None follows ``train()``/``eval()``."""
        return self._forward(x, initial_state, mask, False, training)

    def _inputs(self, x, initial_state, states: int, mask=None):
        """The input, the initial states and the mask (None, or ``(batch, time)`` bools), checked; the states
        (zeros by default) in the dtype of the steps' arithmetic: the input's projection promoted with the given
        states (a float64 layer fed float32 had float32 zero states that its float64 steps could not carry)."""
        x = _as_tensor(x, self)
        if len(x.shape) != 3 or x.shape[2] != self.input_size:
            raise ValueError(
                f"{self.name}: input must be (batch, time, input_size={self.input_size}), got shape "
                f"{tuple(x.shape)} ({x.dtype})"
            )
        if x.shape[1] is None and self.unroll:
            raise ValueError(
                f"{self.name}: unroll=True needs the number of time steps (one copy of the step each), got input "
                f"shape {tuple(x.shape)}: give the TensorSpec that size, or unroll=False"
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
        if self.stateful:
            self._check_carried_batch(batch, x, states, dtype)
        if not given and self.stateful:  # read into values: the final states are assigned at the call's end
            initial_state = [_as_result(v) for v in self._carried.states]
        elif not given:
            if batch is not None:
                zeros = _zeros((batch, self.units), dtype=dtype, backend=x.backend.name)
            else:  # zeros (batch, units) for a batch of unknown size (also of 0 steps)
                first = _math.zeros_like(_reduce.sum(x[:, :, :1], axis=1), dtype=dtype)
                zeros = first + _zeros((1, self.units), dtype=dtype, backend=x.backend.name)
            initial_state = [zeros] * states
        return x, [s if s.dtype == dtype else _math.cast(s, dtype) for s in initial_state], self._mask(mask, x)

    def _dropout_masks(self, x, h, training=None) -> tuple:
        """The input's and ``h``'s dropout masks for one call (each a list, one per gate or one for all of them,
        or None): ``(batch, features)`` draws kept for all the steps, scaled by ``1 / (1 - rate)``."""
        if not (self.dropout or self.recurrent_dropout):  # rates first: no training key in a tl.function
            return None, None
        if not _in_training(self, training):
            return None, None
        per_gate = self.recurrent_dropout > 0  # Keras 3 then computes the gates one by one, each its own masks
        inputs = recurrent = None
        if self.dropout > 0:
            ones = _math.ones_like(_reduce.sum(x[:, :1], axis=1))  # (batch, input_size), also for 0 steps
            inputs = [self._draws.dropout(ones, self.dropout) for _ in range(self.gates if per_gate else 1)]
        if per_gate:
            recurrent = [self._draws.dropout(_math.ones_like(h), self.recurrent_dropout) for _ in range(self.gates)]
        return inputs, recurrent

    def _mask(self, mask, x):
        if mask is None:
            return None
        mask = _as_tensor(mask)
        if len(mask.shape) != 2 or any(a is not None and b is not None and a != b for a, b in zip(mask.shape, x.shape)):
            raise ValueError(
                f"{self.name}: mask must be (batch, time) as the input, got mask shape {tuple(mask.shape)} "
                f"({mask.dtype}) for input shape {tuple(x.shape)}"
            )
        if mask.dtype.kind not in "biuf":
            raise TypeError(f"{self.name}: mask must be bools or real numbers, got {mask.dtype} (shape {mask.shape})")
        return mask if mask.dtype == _dt.bool_ else _math.not_equal(mask, 0)

    def _run(self, x, state, step, mask=None, zero_output: bool = False, input_masks=None):
        """Scan ``step(state, projected x_t) -> (state, h_t)`` over time (from the last step to the first with
        ``go_backwards``, whose sequence of outputs is then in that order, as Keras'); the layer's outputs.  A
        sequence of 0 steps gives the initial state and an empty sequence ``(batch, 0, units)``, as ``tl.scan`` does.
        Where ``mask`` is False the states stay and the output is the previous one (zeros with ``zero_output``,
        Keras' ``zero_output_for_mask``).  ``input_masks`` (see :meth:`_dropout_masks`) multiply ``x``."""
        if self.go_backwards:
            x = _array.flip(x, 1)
            mask = None if mask is None else _array.flip(mask, 1)
        if input_masks is not None:
            input_masks = [_shape.expand_dims(m, 1) for m in input_masks]  # the same mask at every step
        # (batch, time, gates * units): all steps in one product (one per gate with per-gate masks)
        projected = _gate_products(x, self.kernel, input_masks, self.units)
        if self.use_bias:
            projected = projected + self._input_bias()
        projected = _shape.transpose(projected, (1, 0, 2))
        if mask is None:
            state, hs = self._loop(step, tuple(state), projected)
        else:
            keep = _shape.expand_dims(_shape.transpose(mask, (1, 0)), -1)  # (time, batch, 1)
            (state, _), hs = self._loop(
                _masked(step, zero_output), (tuple(state), _math.zeros_like(state[0])), (projected, keep)
            )
        output = _shape.transpose(hs, (1, 0, 2)) if self.return_sequences else state[0]
        if self.stateful:
            self._carry(state)
        return (output, *state) if self.return_state else output

    def _loop(self, step, init, xs) -> tuple:
        """``tl.scan(step, init, xs)`` over time, or with ``unroll`` its steps one by one (0 steps: the scan)."""
        steps = _tree.leaves(xs)[0].shape[0]
        if not self.unroll or not steps:
            return _control_flow.scan(step, init, xs)
        carry, ys = init, []
        for t in range(steps):
            carry, y = step(carry, _tree.map(operator.itemgetter(t), xs))
            ys.append(y)
        return carry, _shape.stack(ys)

    @property
    def states(self):
        """A stateful layer's carried states (Variables ``(batch, units)``), None before its first call or when not
        stateful (Keras' ``layer.states``)."""
        return self._carried.states

    def reset_states(self) -> None:
        """Set a stateful layer's carried states to zeros (Keras' ``reset_states``; ``reset_state`` is the same).

        >>> import tensorlib as tl
        >>> rnn = tl.nn.SimpleRNN(2, 3, stateful=True, seed=0)
        >>> _ = rnn(tl.ones((4, 5, 2)))
        >>> rnn.reset_states()
        >>> float(tl.sum(tl.abs(rnn.states[0])))
        0.0
        """
        for v in self._carried.states or ():
            v.assign(_math.zeros_like(v))

    reset_state = reset_states

    def _check_carried_batch(self, batch, x, states: int, dtype) -> None:
        """A stateful layer's input batch: known, and the size of the carried states (zeros, made at the first
        call, before any use: a traced first call reads them too, where zeros had become part of its graph)."""
        carried = self._carried.states
        if batch is None:
            raise ValueError(
                f"{self.name}: a stateful layer needs a known batch size, got input shape {tuple(x.shape)}: give the "
                "TensorSpec that size"
            )
        if carried is not None and carried[0].shape[0] != batch:
            raise ValueError(
                f"{self.name}: a stateful layer's batch size is fixed: its states are {tuple(carried[0].shape)}, got "
                f"input shape {tuple(x.shape)} ({x.dtype}); reset_states() keeps that size: make a new layer for another"
            )
        if carried is None:
            self._carried.states = tuple(
                Variable(
                    np.zeros((batch, self.units), dtype), name=f"state_{i}", trainable=False, backend=x.backend.name
                )
                for i in range(states)
            )

    def _carry(self, state) -> None:
        """Keep a stateful layer's final states for its next call."""
        for v, s in zip(self._carried.states, state):
            v.assign(s if s.dtype == v.dtype else _math.cast(s, v.dtype))

    def extra_repr(self) -> str:
        """The sizes, then every constructor argument given other than its default (``LSTM(3, 4)`` hid
        ``return_state=True`` and ``activation='relu'``); the seed and the initializers' draws are left out."""
        return ", ".join([f"{self.input_size}, {self.units}", *_given_arguments(self, ("input_size", "units", "seed"))])

    def _mirrored(self):
        """A new layer like this one (fresh weights) running the other way: Bidirectional's backward half.  A seeded
        layer's gets a seed of its own made from it (with none, two Bidirectional(LSTM(..., seed=1)) had different
        backward weights and masks: the seed did not make the model reproducible)."""
        seed = None if self._draws.seed is None else _seed_for(self._draws.seed, 20)
        config = dict(self._arguments(), go_backwards=not self.go_backwards, seed=seed)
        return type(self)(**config)


class _CarriedStates:
    """A stateful recurrent layer's states: Variables held outside the layer's variable tree (not a list or dict),
    as Keras keeps them out of its weights, so checkpoints and optimizers do not change after the first call."""

    __slots__ = ("states",)

    def __init__(self):
        self.states = None


def _given_arguments(module, left_out: tuple) -> list:
    """``name=value`` for each constructor argument of ``module`` given other than its default (functions by name),
    but those ``left_out``: what a recurrent layer's repr shows after its sizes."""
    defaults = inspect.signature(type(module).__init__).parameters
    return [
        f"{name}={getattr(value, '__name__', value)!r}" if callable(value) else f"{name}={value!r}"
        for name, value in module._arguments().items()
        if name not in left_out and not _same_argument(value, defaults[name].default)
    ]


def _same_argument(value, default) -> bool:
    """Whether a constructor argument is its default (dtypes by name: "float32" is tl.float32)."""
    if value is default:
        return True
    try:
        if isinstance(value, (str, np.dtype)) and isinstance(default, np.dtype):
            return np.dtype(value) == default
        return bool(value == default)
    except (TypeError, ValueError):
        return False


def _gate_products(h, kernel, masks, units: int):
    """``h @ kernel``, or with dropout ``masks`` each gate's ``units`` columns of it from ``h`` times that gate's mask
    (one mask: one product)."""
    if masks is None:
        return _linalg.matmul(h, kernel)
    if len(masks) == 1:
        return _linalg.matmul(h * masks[0], kernel)
    return _shape.concat(
        [_linalg.matmul(h * m, kernel[:, k * units : (k + 1) * units]) for k, m in enumerate(masks)], axis=-1
    )


def _masked(step, zero_output: bool):
    """``step`` over ``(states, previous output)`` and ``(projected x_t, keep_t)``: where ``keep_t`` is False
    the states stay and the output is the previous one, or zeros (Keras' masked steps)."""

    def masked_step(carry, inputs):
        (state, previous), (z_x, keep) = carry, inputs
        new_state, h = step(state, z_x)
        state = tuple(_math.where(keep, new, old) for new, old in zip(new_state, state))
        h = _math.where(keep, h, _math.zeros_like(h) if zero_output else previous)
        return (state, h), h

    return masked_step


class SimpleRNN(_Recurrent):
    """The fully connected recurrent layer over ``(batch, time, input_size)`` inputs, Keras' ``SimpleRNN``:
    ``h_t = activation(x_t kernel + h_{t-1} recurrent_kernel + bias)`` (PyTorch's ``nn.RNN``, whose
    ``weight_ih`` is ``kernel.T`` and whose two biases add up to ``bias``).  Outputs and dropout as :class:`LSTM`'s,
    the state being ``h`` alone.

    >>> import tensorlib as tl
    >>> rnn = tl.nn.SimpleRNN(3, 4, return_sequences=True, seed=0)
    >>> rnn(tl.ones((2, 5, 3))).shape
    (2, 5, 4)
    """

    gates = 1
    name = "SimpleRNN"

    def __init__(
        self,
        input_size: int,
        units: int,
        activation="tanh",
        use_bias: bool = True,
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        seed: int | None = None,
        dtype=_dt.float32,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        stateful: bool = False,
        unroll: bool = False,
    ):
        super().__init__(input_size, units, activation, None, use_bias, return_sequences, return_state,
                         kernel_initializer, recurrent_initializer, seed, dtype, go_backwards, dropout,
                         recurrent_dropout, stateful, unroll)  # fmt: skip
        self.bias = (
            Variable(
                _init.get(bias_initializer)((self.units,), seed=_seed_for(seed, 1), dtype=self.kernel.dtype),
                name="bias",
            )
            if use_bias
            else None
        )

    def _input_bias(self):
        return self.bias

    def _forward(self, x, initial_state, mask, zero_output, training=None):
        x, state, mask = self._inputs(x, initial_state, 1, mask)
        input_masks, recurrent_masks = self._dropout_masks(x, state[0], training)
        act, recurrent, u = self.activation, self.recurrent_kernel, self.units

        def step(carry, z_x):
            (h,) = carry
            h = act(z_x + _gate_products(h, recurrent, recurrent_masks, u))
            return (h,), h

        return self._run(x, state, step, mask, zero_output, input_masks)


class LSTM(_Recurrent):
    """Long short-term memory over ``(batch, time, input_size)`` inputs, Keras' ``LSTM``: ``kernel`` ``(input_size,
    4 units)``, ``recurrent_kernel`` ``(units, 4 units)`` and ``bias`` ``(4 units,)`` in the gate order input,
    forget, cell, output (PyTorch's ``nn.LSTM`` order: its ``weight_ih`` is ``kernel.T``); ``unit_forget_bias``
    starts the forget gate's bias at 1.  ``h`` ``(batch, units)`` at the last step, the sequence of ``h``
    ``(batch, time, units)`` with ``return_sequences``, and ``(output, h, c)`` with ``return_state``;
    ``initial_state`` is ``(h, c)`` (zeros by default).  ``dropout`` and ``recurrent_dropout`` drop, in training
    mode, the input and ``h`` with one mask per sequence (one per gate with ``recurrent_dropout``), as Keras 3.

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
        go_backwards: bool = False,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        stateful: bool = False,
        unroll: bool = False,
    ):
        super().__init__(input_size, units, activation, recurrent_activation, use_bias, return_sequences,
                         return_state, kernel_initializer, recurrent_initializer, seed, dtype, go_backwards, dropout,
                         recurrent_dropout, stateful, unroll)  # fmt: skip
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

    def _forward(self, x, initial_state, mask, zero_output, training=None):
        x, state, mask = self._inputs(x, initial_state, 2, mask)
        input_masks, recurrent_masks = self._dropout_masks(x, state[0], training)
        u, act, gate = self.units, self.activation, self.recurrent_activation
        recurrent = self.recurrent_kernel

        def step(carry, z_x):
            h, c = carry
            z = z_x + _gate_products(h, recurrent, recurrent_masks, u)
            i, f, g, o = gate(z[:, :u]), gate(z[:, u : 2 * u]), act(z[:, 2 * u : 3 * u]), gate(z[:, 3 * u :])
            c = f * c + i * g
            h = o * act(c)
            return (h, c), h

        return self._run(x, state, step, mask, zero_output, input_masks)


class GRU(_Recurrent):
    """Gated recurrent unit over ``(batch, time, input_size)`` inputs, Keras' ``GRU``: ``kernel`` ``(input_size,
    3 units)`` and ``recurrent_kernel`` ``(units, 3 units)`` in the gate order update, reset, candidate.  With
    ``reset_after=True`` (Keras' default, PyTorch's ``nn.GRU`` formula) the reset gate multiplies the recurrent
    product, and ``bias`` is ``(2, 3 units)``: the input's and the recurrent product's; with ``False`` it
    multiplies ``h`` before its product, and ``bias`` is ``(3 units,)``.  Outputs and dropout as :class:`LSTM`'s,
    the state being ``h`` alone.

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
        go_backwards: bool = False,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        stateful: bool = False,
        unroll: bool = False,
    ):
        super().__init__(input_size, units, activation, recurrent_activation, use_bias, return_sequences,
                         return_state, kernel_initializer, recurrent_initializer, seed, dtype, go_backwards, dropout,
                         recurrent_dropout, stateful, unroll)  # fmt: skip
        self.reset_after = bool(reset_after)
        shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
        self.bias = (
            Variable(_init.get(bias_initializer)(shape, seed=_seed_for(seed, 1), dtype=self.kernel.dtype), name="bias")
            if use_bias
            else None
        )

    def _input_bias(self):
        return self.bias[0] if self.reset_after else self.bias

    def _forward(self, x, initial_state, mask, zero_output, training=None):
        x, state, mask = self._inputs(x, initial_state, 1, mask)
        input_masks, recurrent_masks = self._dropout_masks(x, state[0], training)
        u, act, gate = self.units, self.activation, self.recurrent_activation
        recurrent, reset_after = self.recurrent_kernel, self.reset_after
        recurrent_bias = self.bias[1] if self.use_bias and reset_after else None

        def step(carry, z_x):
            (h,) = carry
            if reset_after:
                z_h = _gate_products(h, recurrent, recurrent_masks, u)
                if recurrent_bias is not None:
                    z_h = z_h + recurrent_bias
                update = gate(z_x[:, :u] + z_h[:, :u])
                reset = gate(z_x[:, u : 2 * u] + z_h[:, u : 2 * u])
                candidate = act(z_x[:, 2 * u :] + reset * z_h[:, 2 * u :])
            else:
                z_h = _gate_products(h, recurrent[:, : 2 * u], recurrent_masks and recurrent_masks[:2], u)
                update = gate(z_x[:, :u] + z_h[:, :u])
                reset = gate(z_x[:, u : 2 * u] + z_h[:, u:])
                h_candidate = h if recurrent_masks is None else h * recurrent_masks[2]
                candidate = act(z_x[:, 2 * u :] + _linalg.matmul(reset * h_candidate, recurrent[:, 2 * u :]))
            h = update * h + (1.0 - update) * candidate
            return (h,), h

        return self._run(x, state, step, mask, zero_output, input_masks)


_MERGES = {
    "concat": lambda a, b: _shape.concat([a, b], axis=-1),
    "sum": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "ave": lambda a, b: (a + b) * 0.5,
}


class Bidirectional(Module):
    """Keras' ``Bidirectional``: a recurrent layer (:class:`SimpleRNN`, :class:`LSTM`, :class:`GRU`) run forward and
    a second one backward over the same sequence, their outputs merged by ``merge_mode`` (``"concat"`` along the
    features, ``"sum"``, ``"mul"``, ``"ave"``, or None for the pair).  The backward layer is ``backward_layer``,
    or one like ``layer`` with fresh weights; its sequence of outputs is put back in time order, so with
    ``return_sequences`` step ``t`` of both halves saw the input up to and from ``t`` (PyTorch's
    ``bidirectional=True`` output).  With ``return_state``: ``(merged, *forward states, *backward states)``, and
    with merge_mode None ``(forward output, backward output, *forward states, *backward states)`` as in Keras;
    ``initial_state`` is the forward states followed by the backward ones; ``mask`` ``(batch, time)`` goes to
    both layers (see :meth:`LSTM.forward`), the masked steps of a merged sequence being zeros, as in Keras.

    >>> import tensorlib as tl
    >>> bi = tl.nn.Bidirectional(tl.nn.GRU(3, 4, return_sequences=True, seed=0))
    >>> bi(tl.ones((2, 5, 3))).shape
    (2, 5, 8)
    """

    def __init__(self, layer, merge_mode: str | None = "concat", backward_layer=None):
        super().__init__()
        if not isinstance(layer, _Recurrent):
            raise TypeError(f"Bidirectional: layer must be a SimpleRNN, LSTM or GRU, got {type(layer).__name__}")
        if merge_mode is not None and merge_mode not in _MERGES:
            raise ValueError(f"Bidirectional: merge_mode must be one of {sorted(_MERGES)} or None, got {merge_mode!r}")
        backward = layer._mirrored() if backward_layer is None else backward_layer
        if not isinstance(backward, _Recurrent) or backward.go_backwards == layer.go_backwards:
            raise ValueError(
                "Bidirectional: backward_layer must be a recurrent layer with go_backwards opposite to layer's "
                f"({layer.go_backwards}), got {type(backward).__name__}"
            )
        if (backward.return_sequences, backward.return_state) != (layer.return_sequences, layer.return_state):
            raise ValueError(
                "Bidirectional: layer and backward_layer must agree on return_sequences and return_state, got "
                f"{(layer.return_sequences, layer.return_state)} and {(backward.return_sequences, backward.return_state)}"
            )
        # Different units failed in the merge's Add, naming neither layer (concat and None take them).
        need = "input_size" if merge_mode in (None, "concat") else "input_size and units"
        if backward.input_size != layer.input_size or need != "input_size" and backward.units != layer.units:
            raise ValueError(
                f"Bidirectional: layer and backward_layer must have the same {need} for merge_mode={merge_mode!r}, "
                f"got {type(layer).__name__}({layer.input_size}, {layer.units}) and "
                f"{type(backward).__name__}({backward.input_size}, {backward.units})"
            )
        self.forward_layer, self.backward_layer, self.merge_mode = layer, backward, merge_mode

    def forward(self, x, initial_state=None, mask=None, training: bool | None = None):
        fwd, bwd = self.forward_layer, self.backward_layer
        first = second = None
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            if len(states) % 2:
                raise ValueError(
                    f"Bidirectional: initial_state must hold the forward layer's states and then the backward one's, "
                    f"an even number, got {len(states)}"
                )
            first, second = states[: len(states) // 2], states[len(states) // 2 :]
        # Masked steps output zeros in a merged sequence (Keras forces zero_output_for_mask there).
        y = fwd._forward(x, first, mask, fwd.return_sequences, training)
        z = bwd._forward(x, second, mask, fwd.return_sequences, training)
        if fwd.return_state:
            (y, *y_states), (z, *z_states) = y, z
        if fwd.return_sequences:
            z = _array.flip(z, 1)  # back in time order
        merged = (y, z) if self.merge_mode is None else (_MERGES[self.merge_mode](y, z),)
        if not fwd.return_state:
            return merged[0] if self.merge_mode is not None else merged
        return (*merged, *y_states, *z_states)  # Keras' flat nesting, also for merge_mode=None

    @property
    def states(self):
        """Stateful halves' carried states: the forward layer's then the backward one's (Keras' ``states``), None
        before the first call or when not stateful."""
        fwd, bwd = self.forward_layer.states, self.backward_layer.states
        return None if fwd is None and bwd is None else (*(fwd or ()), *(bwd or ()))

    def reset_states(self) -> None:
        """Set both halves' carried states to zeros (Keras' ``reset_states``; ``reset_state`` is the same).

        >>> import tensorlib as tl
        >>> bi = tl.nn.Bidirectional(tl.nn.LSTM(2, 3, stateful=True, seed=0))
        >>> _ = bi(tl.ones((4, 5, 2)))
        >>> bi.reset_states()
        >>> [float(tl.sum(tl.abs(s))) for s in bi.states]
        [0.0, 0.0, 0.0, 0.0]
        """
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    reset_state = reset_states

    def extra_repr(self) -> str:
        return f"merge_mode={self.merge_mode!r}"


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
        x = _as_tensor(x, self)
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
            q, k, v, mask, self.dropout if _in_training(self) else 0.0, 1.0 / math.sqrt(self.embed_dim // self.num_heads),
            None, "MultiHeadAttention: attn_mask", causal=is_causal,  # dropout: new draws on every call
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
        if is_causal and attn_mask is not None:
            raise ValueError("MultiHeadAttention: give attn_mask or is_causal, not both")
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
        x, d = _as_tensor(x, self), self.self_attn.embed_dim
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


# ------------------------------------------------------------------ reshaping, merging and preprocessing layers
def _shown(x) -> str:
    return f"{tuple(x.shape)} ({x.dtype})"


def _batched(x, layer: str, rank: int | None = None) -> Tensor:
    """``x`` with a batch dimension (and ``rank`` dimensions in all, where given); the error names the layer."""
    x = _as_tensor(x, layer)
    if len(x.shape) < 1 or rank is not None and len(x.shape) != rank:
        want = f"{rank}-D" if rank is not None else "at least 1-D (a batch dimension)"
        raise ValueError(f"{layer}: input must be {want}, got shape {_shown(x)}")
    return x


def _reshape_target(x, target: tuple, layer: str) -> tuple:
    """``(batch, *target)`` for a reshape of ``x``, one -1 in ``target`` worked out where the sizes are known, the
    batch -1 where unknown (traced), as Flatten's; sizes known only at run time are checked by the reshape then.
    Sizes that cannot match raise naming the layer, the input's shape and dtype and the target."""
    batch, rest = x.shape[0], x.shape[1:]
    want = f"{(batch, *target)}".replace("None", "batch")
    if None not in rest:
        size, product = math.prod(rest), math.prod(d for d in target if d != -1)
        if -1 in target and not product:
            raise ValueError(f"{layer}: -1 in {want} is ambiguous beside a 0, input shape {_shown(x)}")
        if size % product if -1 in target else size != product:
            raise ValueError(f"{layer}: cannot reshape input of shape {_shown(x)} to {want}")
        target = tuple(size // product if d == -1 else d for d in target)
    elif batch is None and -1 in target:
        raise ValueError(
            f"{layer}: traced with the batch size and other sizes unknown, cannot work out -1 in {want} for input "
            f"shape {_shown(x)}; give the TensorSpec the batch size or the other sizes"
        )
    return (-1 if batch is None else batch, *target)


def _target_shape(value, layer: str, what: str = "target_shape") -> tuple:
    """Positive ints with at most one -1 (the size worked out), as Keras' ``Reshape`` and ``nn.Unflatten`` take."""
    try:
        dims = tuple(operator.index(d) for d in (value if np.iterable(value) else [value]))
    except TypeError:
        dims = None
    if isinstance(value, (str, bytes)) or dims is None or any(d < -1 for d in dims) or dims.count(-1) > 1:
        raise ValueError(f"{layer}: {what} must be a tuple of non-negative ints with at most one -1, got {value!r}")
    return dims


class Reshape(Module):
    """Reshape each example to ``target_shape`` (the batch dimension kept; one entry may be -1, worked out), Keras'
    ``Reshape``.

    >>> import tensorlib as tl
    >>> tl.nn.Reshape((3, -1))(tl.ones((2, 12))).shape
    (2, 3, 4)
    """

    def __init__(self, target_shape):
        super().__init__()
        self.target_shape = _target_shape(target_shape, "Reshape")

    def forward(self, x):
        x = _batched(x, "Reshape")
        return _shape.reshape(x, _reshape_target(x, self.target_shape, "Reshape"))

    def extra_repr(self) -> str:
        return f"target_shape={self.target_shape}"


class Unflatten(Module):
    """PyTorch's ``nn.Unflatten(dim, unflattened_size)``: axis ``dim`` reshaped to ``unflattened_size`` (one entry
    may be -1).

    >>> import tensorlib as tl
    >>> tl.nn.Unflatten(1, (2, 5))(tl.ones((3, 10, 4))).shape
    (3, 2, 5, 4)
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim = _int_argument(dim, "dim", "Unflatten")
        self.unflattened_size = _target_shape(unflattened_size, "Unflatten", "unflattened_size")

    def forward(self, x):
        x = _as_tensor(x, self)
        if not -len(x.shape) <= self.dim < len(x.shape):
            raise ValueError(f"Unflatten: dim {self.dim} is out of range for input of shape {_shown(x)}")
        dim = self.dim % len(x.shape)
        size, target = x.shape[dim], self.unflattened_size
        known = math.prod(d for d in target if d != -1)
        if size is not None:
            if -1 in target and not known or (size % known if -1 in target else size != known):
                raise ValueError(
                    f"Unflatten: dimension {dim} of size {size} cannot be unflattened to {target}, input shape "
                    f"{_shown(x)}"
                )
            target = tuple(size // known if d == -1 else d for d in target)
        outer = [-1 if d is None else d for d in (*x.shape[:dim], *target, *x.shape[dim + 1 :])]
        if outer.count(-1) > 1:
            raise ValueError(f"Unflatten: traced with unknown sizes, got input shape {_shown(x)}")
        return _shape.reshape(x, tuple(outer))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Permute(Module):
    """Permute the axes of each example: ``dims`` is a permutation of ``1 .. rank - 1`` (the batch axis 0 stays),
    Keras' ``Permute``.

    >>> import tensorlib as tl
    >>> tl.nn.Permute((2, 1))(tl.ones((4, 3, 5))).shape
    (4, 5, 3)
    """

    def __init__(self, dims):
        super().__init__()
        try:
            self.dims = tuple(operator.index(d) for d in dims)
        except TypeError:
            self.dims = None
        if self.dims is None or sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Permute: dims must be a permutation of 1, 2, ..., n (axis 0 is the batch), got {dims!r}")

    def forward(self, x):
        x = _batched(x, "Permute", len(self.dims) + 1)
        return _shape.transpose(x, (0, *self.dims))

    def extra_repr(self) -> str:
        return f"dims={self.dims}"


class RepeatVector(Module):
    """``(batch, features)`` to ``(batch, n, features)``: each vector repeated ``n`` times (Keras' ``RepeatVector``).

    >>> import tensorlib as tl
    >>> tl.nn.RepeatVector(3)(tl.tensor([[1.0, 2.0]])).numpy().tolist()
    [[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]]
    """

    def __init__(self, n: int):
        super().__init__()
        self.n = _positive("n", n, "RepeatVector")

    def forward(self, x):
        x = _batched(x, "RepeatVector", 2)
        return _array.repeat(_shape.expand_dims(x, 1), self.n, axis=1)

    def extra_repr(self) -> str:
        return f"n={self.n}"


class Identity(Module):
    """Its input, unchanged (Keras' ``Identity``, PyTorch's ``nn.Identity``; a placeholder in a Sequential).

    >>> import tensorlib as tl
    >>> tl.nn.Identity()(tl.tensor([1.0, 2.0])).numpy().tolist()
    [1.0, 2.0]
    """

    def forward(self, x):
        return _as_result(x, self)


class Lambda(Module):
    """A function of Tensors as a layer (Keras' ``Lambda``): ``function(x, **arguments)``; ``function`` may be the
    name of a ``tl.nn`` function.  Variables the function closes over are not the layer's: make a Module for those.

    >>> import tensorlib as tl
    >>> tl.nn.Lambda(lambda x, k: x * k, arguments={"k": 3.0})(tl.tensor([1.0, 2.0])).numpy().tolist()
    [3.0, 6.0]
    """

    def __init__(self, function, arguments: dict | None = None):
        super().__init__()
        if isinstance(function, str):  # a tl.nn function by name, as a config names it
            function = _activation(function, "Lambda", none=False)
        if not callable(function) or isinstance(function, type) and issubclass(function, Module):
            raise TypeError(f"Lambda: function must be a function of Tensors, got {function!r}")
        if arguments is not None and not isinstance(arguments, dict):
            raise TypeError(f"Lambda: arguments must be a dict of keyword arguments, got {arguments!r}")
        self.function = function
        self.arguments = dict(arguments or {})

    def forward(self, *inputs):
        inputs = [_tensor(x) if isinstance(x, np.ndarray) else x for x in inputs]
        y = self.function(*inputs, **self.arguments)
        return _as_result(y) if isinstance(y, Variable) else y  # a Variable's value, which no assign changes

    def extra_repr(self) -> str:
        return getattr(self.function, "__name__", repr(self.function))


class _Merge(Module):
    """Keras' merge layers: called with a list of tensors (``_COUNT`` of them where fixed, else at least two) whose
    shapes broadcast together; ``_merge(tensors)`` combines them."""

    _COUNT = None

    def _inputs(self, inputs) -> list:
        name = type(self).__name__
        if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)):
            raise TypeError(f"{name}: call it with a list of tensors, got a {type(inputs).__name__}")
        tensors = [_as_tensor(x, self) for x in inputs]
        count = self._COUNT
        if (len(tensors) != count) if count else len(tensors) < 2:
            want = f"exactly {count}" if count else "at least 2"
            raise ValueError(f"{name}: needs {want} inputs, got {len(tensors)}")
        try:
            _shape.broadcast_shapes(*[t.shape for t in tensors])
        except ValueError:
            raise ValueError(
                f"{name}: the inputs' shapes do not broadcast together, got {', '.join(_shown(t) for t in tensors)}"
            ) from None
        return tensors

    def forward(self, inputs):
        return self._merge(self._inputs(inputs))


class Add(_Merge):
    """The sum of a list of tensors (Keras' ``Add``).

    >>> import tensorlib as tl
    >>> tl.nn.Add()([tl.tensor([1.0, 2.0]), tl.tensor([10.0, 20.0]), tl.tensor(100.0)]).numpy().tolist()
    [111.0, 122.0]
    """

    def _merge(self, tensors):
        return functools.reduce(_math.add, tensors)


class Subtract(_Merge):
    """The first of two tensors minus the second (Keras' ``Subtract``).

    >>> import tensorlib as tl
    >>> tl.nn.Subtract()([tl.tensor([5.0]), tl.tensor([2.0])]).numpy().tolist()
    [3.0]
    """

    _COUNT = 2

    def _merge(self, tensors):
        return _math.subtract(*tensors)


class Multiply(_Merge):
    """The elementwise product of a list of tensors (Keras' ``Multiply``).

    >>> import tensorlib as tl
    >>> tl.nn.Multiply()([tl.tensor([2.0, 3.0]), tl.tensor([4.0, 5.0])]).numpy().tolist()
    [8.0, 15.0]
    """

    def _merge(self, tensors):
        return functools.reduce(_math.multiply, tensors)


class Average(_Merge):
    """The elementwise mean of a list of tensors (Keras' ``Average``).

    >>> import tensorlib as tl
    >>> tl.nn.Average()([tl.tensor([1.0, 2.0]), tl.tensor([3.0, 6.0])]).numpy().tolist()
    [2.0, 4.0]
    """

    def _merge(self, tensors):
        return _math.divide(functools.reduce(_math.add, tensors), len(tensors))


class _Extreme(_Merge):
    """The elementwise max (``_reduce = _reduce.max``) or min of a list: the inputs broadcast and stacked, then one
    reduction, so tied inputs share the gradient equally (a chain of pairwise maxima gave 1/2, 1/4, 1/4)."""

    def _merge(self, tensors):
        shape = _shape.broadcast_shapes(*[t.shape for t in tensors])
        if None in shape:  # traced with unknown sizes: broadcast against each other instead
            combined = functools.reduce(_math.add, [_math.zeros_like(t) for t in tensors])
            tensors = [_math.add(t, combined) for t in tensors]
        else:
            tensors = [_shape.broadcast_to(t, shape) for t in tensors]
        return type(self)._reduce(_shape.stack(tensors, axis=0), axis=0)


class Maximum(_Extreme):
    """The elementwise maximum of a list of tensors (Keras' ``Maximum``); tied inputs share the gradient.

    >>> import tensorlib as tl
    >>> tl.nn.Maximum()([tl.tensor([1.0, 5.0]), tl.tensor([3.0, 2.0])]).numpy().tolist()
    [3.0, 5.0]
    """

    _reduce = staticmethod(_reduce.max)


class Minimum(_Extreme):
    """The elementwise minimum of a list of tensors (Keras' ``Minimum``); tied inputs share the gradient.

    >>> import tensorlib as tl
    >>> tl.nn.Minimum()([tl.tensor([1.0, 5.0]), tl.tensor([3.0, 2.0])]).numpy().tolist()
    [1.0, 2.0]
    """

    _reduce = staticmethod(_reduce.min)


class Concatenate(Module):
    """A list of tensors joined along ``axis`` (Keras' ``Concatenate(axis=-1)``); the other sizes must agree.

    >>> import tensorlib as tl
    >>> tl.nn.Concatenate()([tl.ones((2, 3)), tl.zeros((2, 1))]).shape
    (2, 4)
    """

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = _int_argument(axis, "axis", "Concatenate")

    def forward(self, inputs):
        if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise TypeError(f"Concatenate: call it with a non-empty list of tensors, got {inputs!r:.80}")
        tensors = [_as_tensor(x, self) for x in inputs]
        rank = len(tensors[0].shape)
        shown = ", ".join(_shown(t) for t in tensors)
        if not -rank <= self.axis < rank or any(len(t.shape) != rank for t in tensors):
            raise ValueError(f"Concatenate: inputs must have one rank with axis {self.axis} in it, got {shown}")
        axis = self.axis % rank
        for i in range(rank):
            if i != axis and not _same(*(t.shape[i] for t in tensors)):
                raise ValueError(f"Concatenate: the inputs' sizes must agree but on axis {self.axis}, got {shown}")
        return _shape.concat(tensors, axis=axis)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class Dot(Module):
    """Keras' ``Dot(axes, normalize=False)``: the dot products of two batches of tensors along ``axes`` (an int for
    both or a pair; axis 0 is the batch), each example with its own; ``normalize=True`` divides both by their L2
    norms along those axes first (cosine similarity).  ``(batch, n)`` inputs give ``(batch, 1)``; ``(batch, n, d)``
    and ``(batch, m, d)`` with ``axes=2`` give ``(batch, n, m)``.

    >>> import tensorlib as tl
    >>> tl.nn.Dot(axes=1)([tl.tensor([[1.0, 2.0]]), tl.tensor([[3.0, 4.0]])]).numpy().tolist()
    [[11.0]]
    """

    def __init__(self, axes, normalize: bool = False):
        super().__init__()
        pair = (axes, axes) if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool) else axes
        try:
            ok = len(pair) == 2 and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in pair)
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(f"Dot: axes must be an int or a pair of ints, got {axes!r}")
        self.axes = tuple(int(a) for a in pair)
        if not isinstance(normalize, (bool, np.bool_)):
            raise ValueError(f"Dot: normalize must be a bool, got {normalize!r}")
        self.normalize = bool(normalize)

    def forward(self, inputs):
        if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise TypeError(f"Dot: call it with a list of two tensors, got {inputs!r:.80}")
        x, y = (_as_tensor(t, self) for t in inputs)
        shown = f"{_shown(x)} and {_shown(y)}"
        axes = []
        for t, a in zip((x, y), self.axes):
            rank = len(t.shape)
            if rank < 2 or not -rank <= a < rank or a % rank == 0:
                raise ValueError(f"Dot: axes {self.axes} must name a non-batch axis of each input, got {shown}")
            axes.append(a % rank)
        if not _same(x.shape[0], y.shape[0]) or not _same(x.shape[axes[0]], y.shape[axes[1]]):
            raise ValueError(f"Dot: the batch sizes and the sizes along axes {self.axes} must agree, got {shown}")
        if self.normalize:
            x, y = _nn.l2_normalize(x, axis=axes[0]), _nn.l2_normalize(y, axis=axes[1])
        letters = "abcdefghijklmnopqrstuvwxyz"
        x_sub = "B" + letters[: len(x.shape) - 1]
        y_sub = "B" + letters[len(x.shape) - 1 : len(x.shape) + len(y.shape) - 2]
        y_sub = y_sub[: axes[1]] + x_sub[axes[0]] + y_sub[axes[1] + 1 :]
        out = "".join(c for c in x_sub if c != x_sub[axes[0]]) + "".join(c for c in y_sub[1:] if c != x_sub[axes[0]])
        z = _linalg.einsum(f"{x_sub},{y_sub}->{out}", x, y)
        return _shape.expand_dims(z, 1) if len(z.shape) == 1 else z

    def extra_repr(self) -> str:
        return f"axes={self.axes}" + (", normalize=True" if self.normalize else "")


class TimeDistributed(Module):
    """``layer`` applied to every step of ``(batch, time, ...)`` inputs (Keras' ``TimeDistributed``): one call on
    the ``(batch * time, ...)`` reshape, so the layer's Variables are shared by the steps.  A layer with several
    outputs (a tuple, list or dict: ``LSTM(return_state=True)``) gives each of them as ``(batch, time, ...)``.

    >>> import tensorlib as tl
    >>> tl.nn.TimeDistributed(tl.nn.Dense(4, 2, seed=0))(tl.ones((3, 5, 4))).shape
    (3, 5, 2)
    """

    def __init__(self, layer):
        super().__init__()
        if not callable(layer) or isinstance(layer, type):
            raise TypeError(f"TimeDistributed: layer must be a layer (a Module or callable), got {layer!r}")
        self.layer = layer

    def forward(self, x):
        x = _as_tensor(x, self)
        if len(x.shape) < 3:
            raise ValueError(f"TimeDistributed: input must be at least 3-D (batch, time, ...), got shape {_shown(x)}")
        batch, steps = x.shape[:2]
        if None in x.shape[2:]:
            raise ValueError(
                f"TimeDistributed: traced with unknown sizes other than the batch and time, got input shape {_shown(x)}"
            )
        # every output (a layer may return several: LSTM(return_state=True)) gets its (batch, time) back
        return _tree.map(lambda y: self._unfolded(x, y), self.layer(_shape.reshape(x, (-1, *x.shape[2:]))))

    def _unfolded(self, x, y) -> Tensor:
        """An output ``y`` ``(batch * time, ...)`` of the layer as ``(batch, time, ...)``."""
        y = _as_tensor(y, self)
        batch, steps = x.shape[:2]
        if (
            len(y.shape) < 1
            or None in y.shape[1:]
            or None not in (batch, steps, y.shape[0])
            and y.shape[0] != batch * steps
        ):
            raise ValueError(
                f"TimeDistributed: the layer's outputs must keep the batch axis (batch * time) and have known sizes "
                f"after it, got shape {_shown(y)} for input shape {_shown(x)}"
            )
        if batch is not None or steps is not None:
            return _shape.reshape(y, (-1 if batch is None else batch, -1 if steps is None else steps, *y.shape[1:]))
        # batch and time both unknown (traced): the shape (batch, time, *step) from a broadcast of zeros
        zeros = _math.zeros_like(x[(slice(None), slice(None), *[0] * (len(x.shape) - 2))], dtype=y.dtype)
        step = _zeros((1, 1, *y.shape[1:]), dtype=y.dtype, backend=y.backend.name)
        return _shape.reshape_like(y, zeros[(..., *[None] * (len(y.shape) - 1))] + step)


class Rescaling(Module):
    """``x * scale + offset`` (Keras' ``Rescaling``, ``Rescaling(1 / 255)`` for images); integer inputs give float32
    (the layer's ``dtype``), float inputs keep their dtype.  ``scale`` and ``offset`` may be per-channel arrays.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.Rescaling(1 / 127.5, offset=-1.0)(np.array([0, 255], np.uint8)).numpy().tolist()
    [-1.0, 1.0]
    """

    def __init__(self, scale, offset=0.0, dtype=_dt.float32):
        super().__init__()
        self.dtype = _float_dtype(dtype, "Rescaling")
        self.scale, self.offset = (self._constant(v, what) for v, what in ((scale, "scale"), (offset, "offset")))
        self._record_arrays(scale=self.scale, offset=self.offset)

    @staticmethod
    def _constant(value, what: str) -> np.ndarray:
        host = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        if host.dtype.kind not in "biuf":
            raise ValueError(f"Rescaling: {what} must be a number or an array of numbers, got {value!r}")
        return host.astype(np.float64)

    def forward(self, x):
        x = _as_tensor(x, self)
        if x.dtype.kind not in "f":
            if x.dtype.kind not in "biu":
                raise TypeError(f"Rescaling: input must be real numbers, got shape {_shown(x)}")
            x = _math.cast(x, self.dtype)
        try:
            _shape.broadcast_shapes(x.shape, self.scale.shape, self.offset.shape)
        except ValueError:
            raise ValueError(
                f"Rescaling: scale {self.scale.shape} and offset {self.offset.shape} do not broadcast to the input, "
                f"got shape {_shown(x)}"
            ) from None
        as_x = np.dtype(x.dtype.name)
        return x * _tensor(self.scale.astype(as_x)) + _tensor(self.offset.astype(as_x))

    def extra_repr(self) -> str:
        return f"scale={self.scale.tolist()}, offset={self.offset.tolist()}"


class CenterCrop(Module):
    """The central ``height x width`` window of each image (Keras' ``CenterCrop``; batched ``(batch, h, w, c)`` or
    one ``(h, w, c)`` image, channels first with ``data_format="NCHW"``).  An odd margin leaves its extra row or
    column at the end, as Keras does.  An image smaller than the window in either dimension is resized to it as
    Keras' ``smart_resize`` does: the largest central crop of the window's aspect ratio, then bilinear resizing.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.CenterCrop(1, 2)(np.arange(9.0).reshape(1, 3, 3, 1)).numpy()[0, :, :, 0].tolist()
    [[3.0, 4.0]]
    """

    def __init__(self, height: int, width: int, data_format: str = "NHWC"):
        super().__init__()
        self.height = _positive("height", height, "CenterCrop")
        self.width = _positive("width", width, "CenterCrop")
        self.data_format = _data_format(data_format, "CenterCrop")

    def forward(self, x):
        x = _as_tensor(x, self)
        if len(x.shape) not in (3, 4):
            raise ValueError(f"CenterCrop: input must be 4-D {self.data_format} or one 3-D image, got {_shown(x)}")
        first = len(x.shape) - (2 if self.data_format == "NCHW" else 3)
        height, width = x.shape[first : first + 2]
        if None in (height, width) or 0 in (height, width):
            raise ValueError(f"CenterCrop: the image's height and width must be known and positive, got {_shown(x)}")
        if height >= self.height and width >= self.width:
            return _as_result(self._crop(x, first, self.height, self.width))
        # Keras' smart_resize: the central crop of the target's aspect ratio, resized
        crop_h = max(min(height, int(width * self.height / self.width)), 1)
        crop_w = max(min(width, int(height * self.width / self.height)), 1)
        x = self._crop(x, first, crop_h, crop_w)
        if self.data_format == "NCHW":
            x = _shape.transpose(x, (*range(first - 1), first, first + 1, first - 1))
        y = _nn.resize(x, (self.height, self.width), method="bilinear")
        if self.data_format == "NCHW":
            y = _shape.transpose(y, (*range(first - 1), first + 1, first - 1, first))
        return y

    @staticmethod
    def _crop(x, first: int, height: int, width: int):
        index = [slice(None)] * len(x.shape)
        for axis, size in zip((first, first + 1), (height, width)):
            start = (x.shape[axis] - size) // 2
            index[axis] = slice(start, start + size)
        return x[tuple(index)]

    def extra_repr(self) -> str:
        text = f"{self.height}, {self.width}"
        return text if self.data_format == "NHWC" else f"{text}, data_format={self.data_format!r}"


class UnitNormalization(Module):
    """Each vector along ``axis`` (an int or a tuple) divided by its L2 norm, ``x / sqrt(max(sum(x**2), 1e-12))``
    (Keras' ``UnitNormalization``; :func:`tl.nn.l2_normalize`).

    >>> import tensorlib as tl
    >>> tl.nn.UnitNormalization()(tl.tensor([[3.0, 4.0]])).numpy().tolist()
    [[0.6, 0.8]]
    """

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = _axes(axis, "UnitNormalization")

    def forward(self, x):
        x = _as_tensor(x, self)
        if any(not -len(x.shape) <= a < len(x.shape) for a in self.axis):
            raise ValueError(f"UnitNormalization: axis {self.axis} is out of range for input of shape {_shown(x)}")
        return _nn.l2_normalize(x, axis=self.axis if len(self.axis) > 1 else self.axis[0], epsilon=1e-12)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


def _axes(value, layer: str, none: bool = False) -> tuple | None:
    """An int or a tuple of distinct ints (None where ``none``) as a tuple."""
    if value is None and none:
        return None
    axes = (value,) if isinstance(value, (int, np.integer)) else value
    try:
        ok = all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axes) and len(axes) > 0
    except TypeError:
        ok = False
    if not ok or isinstance(value, bool) or len(set(axes)) != len(axes):
        raise ValueError(f"{layer}: axis must be an int or a tuple of distinct ints{' or None' * none}, got {value!r}")
    return tuple(int(a) for a in axes)


class Normalization(Module):
    """Keras' ``Normalization``: ``(x - mean) / max(sqrt(variance), 1e-7)`` with one mean and variance per index of
    the ``axis`` dimensions (an int or a tuple; None: one for all), learnt by :meth:`adapt` from data (over all
    the other axes, the variance biased) or given.  ``invert=True`` maps back: ``mean + x * sqrt(variance)``.
    The statistics are non-trainable Variables ``mean`` and ``variance`` (saved in checkpoints), made by the first
    :meth:`adapt` or from the given ``mean`` and ``variance``: to load a checkpoint into a new layer, give it
    statistics of the saved shape first (``Normalization(mean=[0.0] * c, variance=[1.0] * c)``, which its config
    can hold).

    >>> import numpy as np, tensorlib as tl
    >>> norm = tl.nn.Normalization()
    >>> norm.adapt(np.array([[0.0, 10.0], [2.0, 30.0]]))
    >>> norm(np.array([[1.0, 20.0]], np.float32)).numpy().tolist()
    [[0.0, 0.0]]
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert: bool = False, dtype=_dt.float32):
        super().__init__()
        self.axis = _axes(axis, "Normalization", none=True)
        self.invert = bool(invert)
        self.dtype = _float_dtype(dtype, "Normalization")
        if (mean is None) != (variance is None):
            raise ValueError("Normalization: give both mean and variance, or neither (and call adapt)")
        self.mean = self.variance = None
        self._rank = None
        if mean is not None:
            stats = [np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=np.float64) for v in (mean, variance)]
            if (stats[1] < 0).any() or not all(np.isfinite(s).all() for s in stats):
                raise ValueError("Normalization: mean must be finite and variance finite and >= 0")
            self._record_arrays(mean=stats[0], variance=stats[1])
            self._store(*np.broadcast_arrays(*stats))

    def _store(self, mean: np.ndarray, variance: np.ndarray) -> None:
        """New Variables the first time; then assigned, so a traced function that captured them sees the new values
        (statistics of another shape are an error, as Keras' adapt of a built layer)."""
        if self.mean is None:
            self.mean = Variable(mean.astype(self.dtype.name), name="mean", trainable=False)
            self.variance = Variable(variance.astype(self.dtype.name), name="variance", trainable=False)
        elif self.mean.shape != mean.shape:
            raise ValueError(
                f"Normalization.adapt: the statistics have shape {self.mean.shape}, the new data gives {mean.shape}; "
                "make a new layer for data of other sizes"
            )
        else:
            self.mean.assign(mean.astype(self.dtype.name))
            self.variance.assign(variance.astype(self.dtype.name))

    def _kept(self, rank: int, shape, who: str) -> tuple:
        if self.axis is None:
            return ()
        if any(not -rank <= a < rank for a in self.axis):
            raise ValueError(f"Normalization: axis {self.axis} is out of range for {who} of shape {shape}")
        return tuple(sorted(a % rank for a in self.axis))

    def adapt(self, data) -> None:
        """Learn the mean and the (biased) variance of ``data`` over every axis but ``axis``, in float64."""
        host = np.asarray(data.numpy() if isinstance(data, Tensor) else data)
        if host.dtype.kind not in "biuf":
            raise TypeError(f"Normalization.adapt: data must be real numbers, got {host.dtype}")
        kept = self._kept(host.ndim, host.shape, "data")
        others = tuple(i for i in range(host.ndim) if i not in kept)
        if host.size == 0 or not others and self.axis is not None:
            raise ValueError(f"Normalization.adapt: data needs examples to average over, got shape {host.shape}")
        host = host.astype(np.float64)
        self._store(host.mean(axis=others), host.var(axis=others))
        self._rank = host.ndim

    def forward(self, x):
        x = _as_tensor(x, self)
        if self.mean is None:
            raise ValueError("Normalization: call adapt(data) first, or give mean and variance")
        # Integers and bools as float64 (DESIGN §6; Keras casts them to the layer's float32, rounding past 2**24).
        x = _float_or_float64(x, "Normalization", "input")
        kept = self._kept(len(x.shape), _shown(x), "input")
        if self.axis is not None and self._rank is not None and len(x.shape) != self._rank:
            raise ValueError(
                f"Normalization: adapted to {self._rank}-D data with axis {self.axis}, got input shape {_shown(x)}"
            )
        sizes = tuple(x.shape[a] for a in kept)
        try:
            want = np.broadcast_shapes(self.mean.shape, tuple(1 if s is None else s for s in sizes))
        except ValueError:
            want = None
        if want is None or any(s is not None and s != w for s, w in zip(sizes, want)):
            raise ValueError(
                f"Normalization: statistics of shape {self.mean.shape} do not fit the sizes {sizes} of axis "
                f"{self.axis}, got input shape {_shown(x)}"
            )
        shape = [1] * len(x.shape)
        for a, w in zip(kept, want):
            shape[a] = w
        mean, variance = (
            _shape.reshape(_shape.broadcast_to(_math.cast(v, x.dtype), want), shape) for v in (self.mean, self.variance)
        )
        std = _math.maximum(_math.sqrt(variance), 1e-7)
        return mean + x * std if self.invert else (x - mean) / std

    def extra_repr(self) -> str:
        return f"axis={self.axis}" + (", invert=True" if self.invert else "")


class ELU(Activation):
    """``x`` where positive, else ``alpha * (exp(x) - 1)`` (Keras' ``ELU``, PyTorch's ``nn.ELU(alpha=1.0)``).

    >>> import tensorlib as tl
    >>> [round(v, 4) for v in tl.nn.ELU(2.0)(tl.tensor([-1.0, 3.0])).numpy().tolist()]
    [-1.2642, 3.0]
    """

    def __init__(self, alpha: float = 1.0):
        if not _number_in(alpha, -math.inf, math.inf):
            raise ValueError(f"ELU: alpha must be a finite number, got {alpha!r}")
        self.alpha = float(alpha)
        super().__init__(_nn.elu if self.alpha == 1.0 else functools.partial(_scaled_elu, alpha=self.alpha))

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


def _scaled_elu(x, alpha: float):
    y = _nn.elu(x)
    return _math.where(x > 0, y, y * alpha)


class _Noise(Module):
    """A layer that adds or multiplies noise while training (identity in ``eval()`` mode); the noise comes from the
    global stream that ``tl.random.seed`` resets, or with ``seed`` from the layer's own, a new draw per call, as
    ``Dropout``'s masks."""

    def __init__(self, rate: float, seed: int | None = None):
        super().__init__()
        if not _number_in(rate, 0.0, 1.0) or rate == 1.0:
            raise ValueError(f"{type(self).__name__}: rate must be in [0, 1), got {rate!r}")
        self.rate = float(rate)
        self._draws = _noise_stream(self, seed, type(self).__name__)

    def _float_input(self, x) -> Tensor:
        x = _as_tensor(x, self)
        if x.dtype.kind != "f":
            raise TypeError(f"{type(self).__name__}: input must be floating, got shape {_shown(x)}")
        return x

    def extra_repr(self) -> str:
        return f"rate={self.rate}"


class GaussianNoise(_Noise):
    """``x`` plus zero-mean normal noise of deviation ``stddev`` while training (Keras' ``GaussianNoise``); the
    identity in ``eval()`` mode.

    >>> import tensorlib as tl
    >>> tl.nn.GaussianNoise(0.1).eval()(tl.ones((2,))).numpy().tolist()
    [1.0, 1.0]
    """

    def __init__(self, stddev: float, seed: int | None = None):
        Module.__init__(self)
        if not _number_in(stddev, 0.0, math.inf):
            raise ValueError(f"GaussianNoise: stddev must be a finite number >= 0, got {stddev!r}")
        self.stddev = float(stddev)
        self._draws = _noise_stream(self, seed, "GaussianNoise")

    def forward(self, x, training: bool | None = None):
        x = self._float_input(x)
        if not _in_training(self, training) or self.stddev == 0:
            return _as_result(x, self)
        return x + self._draws.normal(x, 0.0, self.stddev)

    def extra_repr(self) -> str:
        return f"stddev={self.stddev}"


class GaussianDropout(_Noise):
    """``x`` times normal noise of mean 1 and deviation ``sqrt(rate / (1 - rate))`` while training (Keras'
    ``GaussianDropout``: the variance of ``Dropout(rate)``'s scaled mask); the identity in ``eval()`` mode.

    >>> import tensorlib as tl
    >>> tl.nn.GaussianDropout(0.5).eval()(tl.ones((2,))).numpy().tolist()
    [1.0, 1.0]
    """

    def forward(self, x, training: bool | None = None):
        x = self._float_input(x)
        if not _in_training(self, training) or self.rate == 0:
            return _as_result(x, self)
        return x * self._draws.normal(x, 1.0, math.sqrt(self.rate / (1.0 - self.rate)))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class AlphaDropout(_Noise):
    """Dropout that keeps SELU's self-normalization (Keras' ``AlphaDropout``, PyTorch's ``nn.AlphaDropout``): while
    training, each element is set with probability ``rate`` to SELU's negative limit ``-alpha * scale`` and the
    result transformed by ``a * x + b`` so its mean and variance stay those of ``x`` for a zero-mean unit-variance
    ``x``; the identity in ``eval()`` mode.  ``noise_shape`` as :func:`tl.nn.dropout`'s.

    >>> import tensorlib as tl
    >>> tl.nn.AlphaDropout(0.2).eval()(tl.ones((2,))).numpy().tolist()
    [1.0, 1.0]
    """

    def __init__(self, rate: float, noise_shape=None, seed: int | None = None):
        super().__init__(rate, seed)
        self.noise_shape = None if noise_shape is None else _noise_shape(noise_shape, "AlphaDropout")

    def forward(self, x, training: bool | None = None):
        x = self._float_input(x)
        if not _in_training(self, training) or self.rate == 0:
            return _as_result(x, self)
        try:
            kept = self._draws.dropout(_math.ones_like(x), self.rate, self.noise_shape) > 0
        except ValueError as e:
            raise ValueError(f"AlphaDropout: {e}") from None
        limit = -_SELU_ALPHA * _SELU_SCALE
        a = ((1.0 - self.rate) * (1.0 + self.rate * limit**2)) ** -0.5
        b = -a * limit * self.rate
        return _math.where(kept, x, _tensor(np.asarray(limit, x.dtype.name))) * a + b


class _PixelShuffle(Module):
    """What PixelShuffle and PixelUnshuffle share: the factor and the layout."""

    def __init__(self, factor: int, data_format: str = "NHWC"):
        super().__init__()
        self.factor = _positive(self._FACTOR, factor, type(self).__name__)
        self.data_format = _data_format(data_format, type(self).__name__)

    def extra_repr(self) -> str:
        text = f"{self._FACTOR}={self.factor}"
        return text if self.data_format == "NHWC" else f"{text}, data_format={self.data_format!r}"


def _batch_size(n):
    return -1 if n is None else n


class PixelShuffle(_PixelShuffle):
    """PyTorch's ``nn.PixelShuffle(upscale_factor)``: ``(N, H, W, C * r * r)`` to ``(N, H * r, W * r, C)`` (NCHW with
    ``data_format="NCHW"``), channel ``c * r * r + i * r + j`` becoming the pixel ``(i, j)`` of the block of channel
    ``c`` -- PyTorch's order in either layout (TensorFlow's ``depth_to_space`` takes the channels in another).  As
    :func:`tl.nn.pixel_shuffle` and PyTorch's, an unbatched 3-D input or several leading (batch) axes are taken too.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.PixelShuffle(2, data_format="NCHW")(np.arange(4.0).reshape(1, 4, 1, 1)).numpy()[0, 0].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """

    _FACTOR = "upscale_factor"

    def forward(self, x):
        x = _as_tensor(x, type(self).__name__)
        return _nn.composed.shuffled(x, self.factor, self.data_format, "PixelShuffle")


class PixelUnshuffle(_PixelShuffle):
    """PyTorch's ``nn.PixelUnshuffle(downscale_factor)``, the inverse of :class:`PixelShuffle`: ``(N, H * r, W * r,
    C)`` to ``(N, H, W, C * r * r)`` (NCHW with ``data_format="NCHW"``); an unbatched 3-D input or several leading
    axes too.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.PixelUnshuffle(2, data_format="NCHW")(np.arange(4.0).reshape(1, 1, 2, 2)).numpy().ravel().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """

    _FACTOR = "downscale_factor"

    def forward(self, x):
        x = _as_tensor(x, type(self).__name__)
        return _nn.composed.unshuffled(x, self.factor, self.data_format, "PixelUnshuffle")


class Bilinear(Module):
    """PyTorch's ``nn.Bilinear(in1_features, in2_features, out_features)``: ``y_k = x1 @ weight[k] @ x2 + bias[k]``
    with ``weight`` of PyTorch's shape ``(out, in1, in2)``, both drawn uniform in ``+-1 / sqrt(in1_features)`` as
    PyTorch's (or from the initializers given).

    >>> import tensorlib as tl
    >>> tl.nn.Bilinear(3, 4, 2, seed=0)(tl.ones((5, 3)), tl.ones((5, 4))).shape
    (5, 2)
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        use_bias: bool = True,
        kernel_initializer=None,
        bias_initializer=None,
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__()
        self.in1_features = _positive("in1_features", in1_features, "Bilinear")
        self.in2_features = _positive("in2_features", in2_features, "Bilinear")
        self.out_features = _positive("out_features", out_features, "Bilinear")
        seed = _seed(seed, "Bilinear")
        bound = 1.0 / math.sqrt(self.in1_features)
        default = functools.partial(_init.random_uniform, minval=-bound, maxval=bound)
        shape = (self.out_features, self.in1_features, self.in2_features)
        self.weight = Variable(_init.get(kernel_initializer or default)(shape, seed=seed, dtype=dtype), name="weight")
        self.bias = (
            Variable(
                _init.get(bias_initializer or default)((self.out_features,), seed=_seed_for(seed, 1), dtype=dtype),
                name="bias",
            )
            if use_bias
            else None
        )

    def forward(self, x1, x2):
        x1, x2 = _as_tensor(x1, self), _as_tensor(x2, self)
        fits = (
            len(x1.shape) >= 1
            and x1.shape[-1] in (None, self.in1_features)
            and len(x2.shape) >= 1
            and x2.shape[-1] in (None, self.in2_features)
        )
        try:
            _shape.broadcast_shapes(x1.shape[:-1], x2.shape[:-1])
        except (ValueError, IndexError):
            fits = False
        if not fits:
            raise ValueError(
                f"Bilinear: inputs must end in in1_features={self.in1_features} and in2_features="
                f"{self.in2_features} with batch shapes that broadcast, got {_shown(x1)} and {_shown(x2)}"
            )
        y = _linalg.einsum("...i,kij,...j->...k", x1, self.weight, x2)
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return f"{self.in1_features}, {self.in2_features}, {self.out_features}" + (
            "" if self.bias is not None else ", use_bias=False"
        )


class Masking(Module):
    """Keras' ``Masking(mask_value=0.0)``: the time steps of ``(batch, time, features)`` inputs whose features all
    equal ``mask_value`` are zeroed, and :meth:`compute_mask` gives the ``(batch, time)`` mask that the recurrent
    layers take (``LSTM(...)(x, mask=masking.compute_mask(x))``: tl.nn has no implicit mask propagation).

    >>> import numpy as np, tensorlib as tl
    >>> x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
    >>> tl.nn.Masking().compute_mask(x).numpy().tolist()
    [[True, False, True]]
    """

    def __init__(self, mask_value: float = 0.0):
        super().__init__()
        if not _number_in(mask_value, -math.inf, math.inf):
            raise ValueError(f"Masking: mask_value must be a number, got {mask_value!r}")
        self.mask_value = float(mask_value)

    def compute_mask(self, x) -> Tensor:
        """True for the steps to keep: those with a feature other than ``mask_value`` (Keras' ``compute_mask``)."""
        x = _as_tensor(x, self)
        if len(x.shape) < 2:
            raise ValueError(f"Masking: input must have at least 2 dimensions (batch, ..., features), got {_shown(x)}")
        return _reduce.any(_math.not_equal(x, self.mask_value), axis=-1)

    def forward(self, x):
        x = _as_tensor(x, self)
        keep = _shape.expand_dims(self.compute_mask(x), -1)
        return x * _math.cast(keep, x.dtype)

    def extra_repr(self) -> str:
        return f"mask_value={self.mask_value}"


class EmbeddingBag(Module):
    """PyTorch's ``nn.EmbeddingBag``: the sum, mean or max (``mode``) of the embeddings of each bag of ids, without
    the ``(bags, ids, dim)`` intermediate of ``Embedding`` then a reduction.  Bags are the rows of a 2-D ``input``,
    or for a 1-D ``input`` the runs that ``offsets`` (each bag's start, from 0; one more entry, the end, with
    ``include_last_offset=True``) mark.  ``per_sample_weights`` (with ``mode="sum"``) weigh each id; an id equal to
    ``padding_idx`` is left out of its bag (and of a mean's count); an empty bag gives zeros.  The table
    ``weight`` starts ``N(0, 1)`` as PyTorch's (or from ``embeddings_initializer``).

    >>> import numpy as np, tensorlib as tl
    >>> bag = tl.nn.EmbeddingBag(10, 3, mode="sum", seed=0)
    >>> bag(np.array([1, 2, 4, 5, 4]), offsets=np.array([0, 2])).shape
    (2, 3)
    """

    _MODES = ("sum", "mean", "max")

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        mode: str = "mean",
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        embeddings_initializer=None,
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__()
        self.num_embeddings = _positive("num_embeddings", num_embeddings, "EmbeddingBag")
        self.embedding_dim = _positive("embedding_dim", embedding_dim, "EmbeddingBag")
        if mode not in self._MODES:
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.mode, self.include_last_offset = mode, bool(include_last_offset)
        self.padding_idx = _padding_index(padding_idx, self.num_embeddings, "EmbeddingBag")
        initializer = embeddings_initializer or functools.partial(_init.random_normal, stddev=1.0)
        shape = (self.num_embeddings, self.embedding_dim)
        table = _init.get(initializer)(shape, seed=_seed(seed, "EmbeddingBag"), dtype=dtype)
        self.weight = Variable(_without_row(table, self.padding_idx), name="weight")

    def _reductions(self, ids, offsets) -> tuple:
        """The bags' sum and max of per-id values (shape ``ids.shape + (dim,)``): along the rows of a 2-D input (any
        batch size, also traced), by segments of a 1-D input that ``offsets`` split (checked where known)."""
        if len(ids.shape) == 2:
            if offsets is not None:
                raise ValueError(f"EmbeddingBag: offsets must be None for a 2-D input, got input shape {_shown(ids)}")
            if ids.shape[1] == 0:  # bags of no ids: zeros, as PyTorch's (a max over no ids has no identity)
                return (lambda v: _reduce.sum(v, axis=1)), (lambda v: _reduce.sum(v, axis=1) - np.inf)
            return (lambda v: _reduce.sum(v, axis=1)), (lambda v: _reduce.max(v, axis=1))
        if len(ids.shape) != 1 or offsets is None:
            raise ValueError(
                f"EmbeddingBag: input must be 2-D (one bag per row), or 1-D with offsets, got shape {_shown(ids)}"
                + ("" if len(ids.shape) != 1 else " and no offsets")
            )
        offsets = _as_tensor(offsets)
        if len(offsets.shape) != 1 or offsets.dtype.kind not in "iu" or offsets.shape[0] is None:
            raise ValueError(f"EmbeddingBag: offsets must be a 1-D tensor of integers, got {_shown(offsets)}")
        if offsets._value is not None and ids.shape[0] is not None:
            starts = np.asarray(offsets.numpy())
            if (
                starts.size
                and (starts[0] != 0 or (np.diff(starts) < 0).any() or starts[-1] > ids.shape[0])
                or self.include_last_offset
                and (not starts.size or starts[-1] != ids.shape[0])
            ):
                end = " ending at the input's length" if self.include_last_offset else ""
                raise ValueError(
                    f"EmbeddingBag: offsets must start at 0 and not decrease past the input's length {ids.shape[0]}"
                    f"{end}, got {starts.tolist()}"
                )
        bags = offsets.shape[0] - (1 if self.include_last_offset else 0)
        if bags < 0:
            raise ValueError("EmbeddingBag: include_last_offset=True needs at least one offset")
        positions = _array.cumsum(_math.ones_like(ids), axis=0) - 1
        which = _search.searchsorted(offsets, positions, side="right") - 1
        return (lambda v: _segment.segment_sum(v, which, bags)), (lambda v: _segment.segment_max(v, which, bags))

    def forward(self, input, offsets=None, per_sample_weights=None):
        ids = _as_tensor(input, self)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"EmbeddingBag: input must be integer ids, got {_shown(ids)}")
        bag_sum, bag_max = self._reductions(ids, offsets)
        rows = _nn.embedding_lookup(self.weight, ids)
        keep = None if self.padding_idx is None else _math.cast(ids != self.padding_idx, rows.dtype)
        if per_sample_weights is not None:
            if self.mode != "sum":
                raise ValueError(f"EmbeddingBag: per_sample_weights needs mode='sum', got mode={self.mode!r}")
            weights = _as_tensor(per_sample_weights)
            if weights.shape != ids.shape or weights.dtype.kind != "f":
                raise ValueError(
                    f"EmbeddingBag: per_sample_weights must be floats of the input's shape {_shown(ids)}, got "
                    f"{_shown(weights)}"
                )
            keep = weights if keep is None else keep * weights
        if self.mode == "max":
            low = _tensor(np.asarray(-np.inf, rows.dtype.name))
            best = bag_max(rows if keep is None else _math.where(_shape.expand_dims(keep > 0, -1), rows, low))
            return _math.where(best > low, best, _math.zeros_like(best))  # an empty bag: zeros, as PyTorch's
        total = bag_sum(rows if keep is None else rows * _shape.expand_dims(keep, -1))
        if self.mode == "sum":
            return total
        counts = bag_sum(_math.ones_like(ids, dtype=rows.dtype) if keep is None else keep)
        return total / _shape.expand_dims(_math.maximum(counts, 1.0), -1)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}" + (
            "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        )
