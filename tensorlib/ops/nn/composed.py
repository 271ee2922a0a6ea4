"""TensorFlow's ``tl.nn`` helpers built from other ops: ``space_to_depth`` and ``depth_to_space`` (a reshape,
a transpose and a reshape), the losses ``l2_loss``, ``log_poisson_loss`` and
``weighted_cross_entropy_with_logits``, ``prelu``, ``instance_norm``, ``in_top_k``, ``max_pool1d`` and
``avg_pool1d`` (the 2-D pools on a height-1 image), ``normalize_moments``, ``resize`` (TensorFlow 2's
half-pixel bilinear and nearest) and PyTorch's ``scaled_dot_product_attention``.

Each is an exact composition, so gradients (to any order), tracing and every backend come from the ops used."""

from __future__ import annotations

import math as _math

import numpy as np

from ... import dtypes as _dt
from ...dispatch import as_tensor, as_tensors
from ...tensor import Tensor
from .. import array as array_ops
from .. import elementwise as elementwise_ops
from .. import floating as floating_ops
from .. import linalg as linalg_ops
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from .._shapes import normalize_axis
from ._common import _float_or_float64, _index, _op_type
from .activations import softmax, softplus
from .conv_composed import _check_width, _one, _padding_1d
from .dropout import dropout
from .normalization import _affine, _epsilon, _standardized, _widened
from .pool import avg_pool, max_pool, torch_pool
from .window_pool import tf_padding


def _where(x) -> str:
    return f"(x shape {tuple(x.shape)}, {x.dtype})"


# ------------------------------------------------------------------ space_to_depth and depth_to_space
def _int_at_least(value, least: int, message: str) -> int:
    """``value`` as an int if it is one (``operator.index``) and at least ``least``; else ValueError(``message``)."""
    try:
        n = _index(value)
    except TypeError:
        n = least - 1
    if n < least:
        raise ValueError(message)
    return n


def _block(block_size, x, name: str) -> int:
    return _int_at_least(block_size, 2, f"{name}: block_size must be an int >= 2, got {block_size!r} {_where(x)}")


def _nhwc(x, data_format, name: str):
    x = as_tensor(x)
    if data_format != "NHWC":
        raise ValueError(f"{name}: data_format must be 'NHWC', got {data_format!r} {_where(x)}")
    if x.ndim != 4:
        raise ValueError(f"{name}: input must be 4-D NHWC {_where(x)}")
    if None in x.shape[1:]:
        raise ValueError(f"{name}: height, width and depth must be known {_where(x)}")
    return x


@_op_type(None, tensors=("input",))
def space_to_depth(input, block_size: int, data_format: str = "NHWC") -> Tensor:
    """Move each ``block_size`` x ``block_size`` block of an NHWC image into the depth:
    ``(batch, h, w, c) -> (batch, h / b, w / b, b * b * c)`` with ``out[n, i, j, (di * b + dj) * c + k] =
    input[n, i * b + di, j * b + dj, k]`` (TensorFlow's ``tf.nn.space_to_depth``; height and width must be
    multiples of ``block_size``).  PyTorch's ``F.pixel_unshuffle`` is the NCHW form with another channel order.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.space_to_depth(np.arange(4.0).reshape(1, 2, 2, 1), 2).numpy().tolist()
    [[[[0.0, 1.0, 2.0, 3.0]]]]
    """
    x = _nhwc(input, data_format, "space_to_depth")
    b = _block(block_size, x, "space_to_depth")
    _, h, w, c = x.shape
    if h % b or w % b:
        raise ValueError(f"space_to_depth: height {h} and width {w} must be multiples of block_size {b} {_where(x)}")
    batch = -1 if x.shape[0] is None else x.shape[0]
    y = shape_ops.reshape(x, (batch, h // b, b, w // b, b, c))
    y = shape_ops.transpose(y, (0, 1, 3, 2, 4, 5))
    return shape_ops.reshape(y, (batch, h // b, w // b, b * b * c))


@_op_type(None, tensors=("input",))
def depth_to_space(input, block_size: int, data_format: str = "NHWC") -> Tensor:
    """The inverse of :func:`space_to_depth`: ``(batch, h, w, b * b * c) -> (batch, h * b, w * b, c)``
    (TensorFlow's ``tf.nn.depth_to_space``; the depth must be a multiple of ``block_size ** 2``).

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.depth_to_space(np.arange(4.0).reshape(1, 1, 1, 4), 2).numpy()[0, :, :, 0].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    x = _nhwc(input, data_format, "depth_to_space")
    b = _block(block_size, x, "depth_to_space")
    _, h, w, c = x.shape
    if c % (b * b):
        raise ValueError(f"depth_to_space: depth {c} must be a multiple of block_size**2 = {b * b} {_where(x)}")
    batch = -1 if x.shape[0] is None else x.shape[0]
    y = shape_ops.reshape(x, (batch, h, w, b, b, c // (b * b)))
    y = shape_ops.transpose(y, (0, 1, 3, 2, 4, 5))
    return shape_ops.reshape(y, (batch, h * b, w * b, c // (b * b)))


# ------------------------------------------------------------------ PyTorch's pixel_shuffle and pixel_unshuffle
def _factor(value, what: str, name: str) -> int:
    return _int_at_least(value, 1, f"{name}: {what} must be a positive integer, got {value!r}")


def _pixel_input(input, factor, data_format: str, name: str, what: str) -> tuple:
    """``(x, r, batch, channels, height, width)`` of a pixel (un)shuffle's 4-D input laid out as ``data_format``."""
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{name}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    x = as_tensor(input)
    r = _factor(factor, what, name)
    if x.ndim != 4:  # 3-D and more with known leading sizes come here as 4-D (see _leading_axes)
        raise ValueError(
            f"{name}: input must be {data_format}, with no or more leading (batch) axes of known sizes {_where(x)}"
        )
    n, c, h, w = (x.shape[0], *x.shape[1:]) if data_format == "NCHW" else (x.shape[0], x.shape[3], *x.shape[1:3])
    return x, r, -1 if n is None else n, c, h, w


def _leading_axes(shuffle):
    """``shuffle`` of a 4-D input also taking PyTorch's ``(*, C, H, W)``: an unbatched 3-D input, or several leading
    axes of known sizes, flattened into one batch axis and restored around the result."""

    def run(input, factor, data_format: str, name: str, *what) -> Tensor:
        x = as_tensor(input)
        if x.ndim == 4 or x.ndim < 3 or None in x.shape[:-3]:
            return shuffle(x, factor, data_format, name, *what)
        y = shuffle(shape_ops.reshape(x, (-1, *x.shape[-3:])), factor, data_format, name, *what)
        return shape_ops.reshape(y, (*x.shape[:-3], *y.shape[1:]))

    return run


@_leading_axes
def shuffled(input, factor, data_format: str, name: str, what: str = "upscale_factor") -> Tensor:
    """:func:`pixel_shuffle`, its errors naming ``name`` (the function, or the layer)."""
    x, r, batch, c, h, w = _pixel_input(input, factor, data_format, name, what)
    if c is None or c % (r * r) or None in (h, w):
        raise ValueError(
            f"{name}: the channels must be known and a multiple of {what}**2 = {r * r}, and the height and width "
            f"known, got input shape {tuple(x.shape)} ({data_format})"
        )
    c //= r * r
    if data_format == "NCHW":
        y = shape_ops.transpose(shape_ops.reshape(x, (-1, c, r, r, h, w)), (0, 1, 4, 2, 5, 3))
        return shape_ops.reshape(y, (batch, c, h * r, w * r))
    y = shape_ops.transpose(shape_ops.reshape(x, (-1, h, w, c, r, r)), (0, 1, 4, 2, 5, 3))
    return shape_ops.reshape(y, (batch, h * r, w * r, c))


@_leading_axes
def unshuffled(input, factor, data_format: str, name: str, what: str = "downscale_factor") -> Tensor:
    """:func:`pixel_unshuffle`, its errors naming ``name`` (the function, or the layer)."""
    x, r, batch, c, h, w = _pixel_input(input, factor, data_format, name, what)
    if None in (c, h, w) or h % r or w % r:
        raise ValueError(
            f"{name}: the height and width must be known multiples of {what}={r}, got input shape "
            f"{tuple(x.shape)} ({data_format})"
        )
    h, w = h // r, w // r
    if data_format == "NCHW":
        y = shape_ops.transpose(shape_ops.reshape(x, (-1, c, h, r, w, r)), (0, 1, 3, 5, 2, 4))
        return shape_ops.reshape(y, (batch, c * r * r, h, w))
    y = shape_ops.transpose(shape_ops.reshape(x, (-1, h, r, w, r, c)), (0, 1, 3, 5, 2, 4))
    return shape_ops.reshape(y, (batch, h, w, c * r * r))


@_op_type(None, tensors=("input",))
def pixel_shuffle(input, upscale_factor: int, data_format: str = "NHWC") -> Tensor:
    """PyTorch's ``F.pixel_shuffle``: ``(N, H, W, C * r * r)`` to ``(N, H * r, W * r, C)`` (``"NCHW"``: PyTorch's
    layout), channel ``c * r * r + i * r + j`` becoming pixel ``(i, j)`` of channel ``c``'s block in either layout
    (:func:`depth_to_space` takes the channels in TensorFlow's order).  A reshape, a transpose and a reshape.  As
    PyTorch's, an unbatched 3-D input or several leading (batch) axes are taken too.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.pixel_shuffle(np.arange(4.0).reshape(1, 4, 1, 1), 2, "NCHW").numpy()[0, 0].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    return shuffled(input, upscale_factor, data_format, "pixel_shuffle")


@_op_type(None, tensors=("input",))
def pixel_unshuffle(input, downscale_factor: int, data_format: str = "NHWC") -> Tensor:
    """PyTorch's ``F.pixel_unshuffle``, the inverse of :func:`pixel_shuffle`: ``(N, H * r, W * r, C)`` to
    ``(N, H, W, C * r * r)`` (``"NCHW"``: PyTorch's layout); an unbatched 3-D input or several leading axes too.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.pixel_unshuffle(np.arange(4.0).reshape(1, 1, 2, 2), 2, "NCHW").numpy().ravel().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    return unshuffled(input, downscale_factor, data_format, "pixel_unshuffle")


# ------------------------------------------------------------------ PyTorch's local_response_norm
@_op_type(None, tensors=("input",))
def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0, axis: int = 1):
    """PyTorch's ``F.local_response_norm``: ``x / (k + alpha * mean(x**2 over size channels)) ** beta``, the mean
    over the ``size`` channels around each one along ``axis`` (``size // 2`` before, ``(size - 1) // 2`` after,
    zeros beyond the ends counted: always divided by ``size``).  ``axis`` is the channel axis (PyTorch's 1; -1 for
    channels last).  TensorFlow's ``local_response_normalization`` sums instead: its ``alpha`` is this
    ``alpha / size``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.local_response_norm(np.array([[2.0, 0.0]]), 2, alpha=1.0, beta=1.0).numpy().tolist()
    [[0.6666666666666666, 0.0]]
    """
    name = "local_response_norm"
    x = _float_or_float64(input, name, "input")
    if x.ndim < 2:
        raise ValueError(f"{name}: input needs a batch and a channel axis {_where(x)}")
    try:
        ax = normalize_axis(axis, x.ndim)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}: {e} {_where(x)}") from None
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"{name}: size must be a positive int, got {size!r} {_where(x)}")
    channels = x.shape[ax]
    if channels is None:
        raise ValueError(f"{name}: the channel axis {axis} must have a known size {_where(x)}")
    size = int(size)
    squares = _widened(x) * _widened(x)
    padded = shape_ops.pad(squares, [(size // 2, (size - 1) // 2) if a == ax else (0, 0) for a in range(x.ndim)])
    table = np.arange(channels)[:, None] + np.arange(size)[None, :]
    shape = tuple(-1 if d is None else d for d in padded.shape)
    windows = shape_ops.reshape(
        shape_ops.take(padded, table.ravel(), axis=ax), shape[:ax] + (channels, size) + shape[ax + 1 :]
    )
    scale = (float(k) + (float(alpha) / size) * reduce_ops.sum(windows, axis=ax + 1)) ** float(beta)
    y = _widened(x) / scale
    return y if y.dtype == x.dtype else math_ops.cast(y, x.dtype)


# ------------------------------------------------------------------ losses
def _same_shape(a, b, a_name: str, b_name: str, name: str) -> None:
    if len(a.shape) != len(b.shape) or any(
        d is not None and e is not None and d != e for d, e in zip(a.shape, b.shape)
    ):
        raise ValueError(
            f"{name}: {a_name} shape {tuple(a.shape)} ({a.dtype}) does not match {b_name} shape "
            f"{tuple(b.shape)} ({b.dtype})"
        )


@_op_type(None, tensors=("t",))
def l2_loss(t) -> Tensor:
    """``sum(t ** 2) / 2``, a scalar (TensorFlow's ``tf.nn.l2_loss``; integer inputs give float64, float16 sums
    in float32).

    >>> import tensorlib as tl
    >>> float(tl.nn.l2_loss(tl.tensor([1.0, 2.0, 3.0])))
    7.0
    """
    x = _float_or_float64(t, "l2_loss", "t")
    wide = _widened(x)
    total = reduce_ops.sum(math_ops.square(wide)) * 0.5
    return math_ops.cast(total, x.dtype) if total.dtype != x.dtype else total


@_op_type(None, tensors=("targets", "log_input"))
def log_poisson_loss(targets, log_input, compute_full_loss: bool = False) -> Tensor:
    """Elementwise negative log-likelihood of ``targets`` under a Poisson of rate ``exp(log_input)``, up to a
    constant: ``exp(log_input) - log_input * targets`` (TensorFlow's ``tf.nn.log_poisson_loss``, same shapes).

    With ``compute_full_loss`` the Stirling term ``targets * log(targets) - targets + log(2 pi targets) / 2`` is
    added where ``targets > 1`` (TensorFlow's rule: 0 for targets in [0, 1]; its gradient there is 0 too).

    >>> import tensorlib as tl
    >>> tl.nn.log_poisson_loss(tl.tensor([0.0, 2.0]), tl.tensor([0.0, 1.0])).numpy().round(4).tolist()
    [1.0, 0.7183]
    """
    targets, log_input = as_tensors(targets, log_input)
    log_input = _float_or_float64(log_input, "log_poisson_loss", "log_input")
    _same_shape(targets, log_input, "targets", "log_input", "log_poisson_loss")
    loss = math_ops.exp(log_input) - log_input * targets
    if compute_full_loss:
        t = _float_or_float64(targets, "log_poisson_loss", "targets")
        small = math_ops.logical_and(t >= 0, t <= 1)
        safe = elementwise_ops.where(small, 1.0, t)  # no log(0): its infinite derivative would give 0 * inf = NaN
        stirling = safe * math_ops.log(safe) - safe + 0.5 * math_ops.log((2.0 * _math.pi) * safe)
        loss = loss + elementwise_ops.where(small, 0.0, stirling)
    return loss


@_op_type(None, tensors=("labels", "logits", "pos_weight"))
def weighted_cross_entropy_with_logits(labels, logits, pos_weight) -> Tensor:
    """:func:`sigmoid_cross_entropy_with_logits` with the positive term weighted by ``pos_weight``:
    ``-pos_weight * z * log(sigmoid(x)) - (1 - z) * log(1 - sigmoid(x))``, computed as
    ``(1 - z) * x + (1 + (pos_weight - 1) * z) * softplus(-x)``: finite for logits of any size (TensorFlow's
    ``tf.nn.weighted_cross_entropy_with_logits``; ``labels`` shaped as ``logits``, ``pos_weight`` broadcasts).

    >>> import tensorlib as tl
    >>> loss = tl.nn.weighted_cross_entropy_with_logits([1.0, 0.0], [0.0, -100.0], pos_weight=2.0)
    >>> loss.numpy().round(4).tolist()
    [1.3863, 0.0]
    """
    name = "weighted_cross_entropy_with_logits"
    labels, logits = as_tensors(labels, logits)
    logits = _float_or_float64(logits, name, "logits")  # integers and bools give float64 (DESIGN §6)
    _same_shape(labels, logits, "labels", "logits", name)
    if not isinstance(pos_weight, (int, float)) or isinstance(pos_weight, bool):
        pos_weight = as_tensors(logits, pos_weight)[1]  # a Python number stays weak: float16 logits give float16
    log_weight = 1.0 + (pos_weight - 1.0) * labels
    return (1.0 - labels) * logits + log_weight * softplus(-logits)


# ------------------------------------------------------------------ prelu and instance_norm
@_op_type(None, tensors=("x", "alpha"))
def prelu(x, alpha) -> Tensor:
    """Parametric ReLU: ``x`` where ``x > 0``, else ``alpha * x``; ``alpha`` broadcasts against ``x`` (shape
    ``(channels,)`` for one slope per channel of channels-last ``x``, as Keras' ``PReLU``).  At ``x == 0`` the
    derivative is ``alpha`` (PyTorch's ``F.prelu``, which takes the channels at axis 1).

    >>> import tensorlib as tl
    >>> tl.nn.prelu(tl.tensor([[-2.0, 3.0], [-1.0, -1.0]]), tl.tensor([0.5, 0.1])).numpy().tolist()
    [[-1.0, 3.0], [-0.5, -0.10000000149011612]]
    """
    x, alpha = as_tensors(x, alpha)
    x = _float_or_float64(x, "prelu")
    if alpha.ndim > x.ndim or any(
        a is not None and d is not None and a not in (1, d) for a, d in zip(alpha.shape[::-1], x.shape[::-1])
    ):
        raise ValueError(f"prelu: alpha shape {tuple(alpha.shape)} does not broadcast to x shape {tuple(x.shape)}")
    return elementwise_ops.where(x > 0, x, alpha * x)


@_op_type(None, tensors=("x", "scale", "offset"))
def instance_norm(x, scale=None, offset=None, epsilon: float = 1e-5) -> Tensor:
    """Instance normalization of channels-last ``x`` (``(batch, ..., channels)``, at least 3-D): each sample's
    channel is normalized over the spatial axes to zero mean and unit (biased) variance, then
    ``* scale + offset`` per channel (each may be None).  PyTorch's ``F.instance_norm`` on the NCHW transpose,
    :func:`group_norm` with one group per channel.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.instance_norm(np.array([[[1.0, 5.0], [3.0, 7.0]]]), epsilon=0.0).numpy().tolist()
    [[[-1.0, -1.0], [1.0, 1.0]]]
    """
    x = _float_or_float64(x, "instance_norm")
    if x.ndim < 3:
        raise ValueError(f"instance_norm: x must be (batch, spatial..., channels), at least 3-D {_where(x)}")
    axes = tuple(range(1, x.ndim - 1))
    y = _standardized(x, axes, _epsilon(epsilon, "instance_norm", x))
    return _affine(y, x, scale, offset, (x.ndim - 1,), "instance_norm")


# ------------------------------------------------------------------ in_top_k
@_op_type(None, tensors=("targets", "predictions"))
def in_top_k(targets, predictions, k: int) -> Tensor:
    """Whether each ``targets[i]`` is among the ``k`` largest of ``predictions[i]`` (``(batch, classes)``):
    a bool ``(batch,)``.  TensorFlow's ``tf.math.in_top_k``: ties count as in (fewer than ``k`` finite
    predictions are strictly larger), and a target out of range, or a row with a non-finite prediction, is False.
    Not differentiable.

    >>> import tensorlib as tl
    >>> tl.nn.in_top_k([0, 1, 2], [[0.1, 0.9, 0.5], [0.5, 0.5, 0.1], [0.3, 0.2, 0.1]], k=1).numpy().tolist()
    [False, True, False]
    """
    predictions, targets = as_tensor(predictions), as_tensor(targets)
    where = (
        f"(targets shape {tuple(targets.shape)} {targets.dtype}, predictions shape {tuple(predictions.shape)} "
        f"{predictions.dtype})"
    )
    if predictions.dtype.kind not in "fiu" or predictions.ndim != 2:
        raise ValueError(f"in_top_k: predictions must be a 2-D real (batch, classes) tensor {where}")
    if targets.dtype.kind not in "iu" or targets.ndim != 1:
        raise ValueError(f"in_top_k: targets must be a 1-D integer tensor {where}")
    if None not in (targets.shape[0], predictions.shape[0]) and targets.shape[0] != predictions.shape[0]:
        raise ValueError(f"in_top_k: targets and predictions must have the same batch size {where}")
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"in_top_k: k must be an int, got {k!r} {where}")
    classes = predictions.shape[1]
    targets = math_ops.cast(targets, _dt.int64)
    if classes is None:
        raise ValueError(f"in_top_k: the number of classes must be known {where}")
    valid = math_ops.logical_and(targets >= 0, targets < classes)
    if classes == 0:
        return valid  # every target is out of range
    safe = shape_ops.expand_dims(elementwise_ops.where(valid, targets, 0), 1)
    picked = array_ops.take_along_axis(predictions, safe, axis=1)
    count = reduce_ops.sum(math_ops.cast(predictions > picked, _dt.int64), 1)
    ok = math_ops.logical_and(valid, reduce_ops.all(floating_ops.isfinite(predictions), axis=1))
    return math_ops.logical_and(ok, count < k)


# ------------------------------------------------------------------ 1-D pools
def _pool1d(kind, input, ksize, strides, padding, data_format):
    name = f"{kind.__name__}1d"
    x = as_tensor(input)
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"{name}: data_format must be 'NWC' or 'NCW', got {data_format!r} {_where(x)}")
    if x.ndim != 3:
        raise ValueError(f"{name}: input must be 3-D ({data_format}) {_where(x)}")
    k, s = _one(ksize, "ksize", name), _one(strides, "strides", name)
    if kind is max_pool:  # explicit (left, right) too, as max_pool's
        padding = _padding_1d(padding, name)
    if isinstance(padding, str) and padding.upper() in ("VALID", "SAME"):
        _check_width(x.shape[1 if data_format == "NWC" else 2], k, s, 1, padding.upper(), name, _where(x))
    image = shape_ops.expand_dims(x, 1 if data_format == "NWC" else 2)  # (batch, 1, width, channels) / NC1W
    fmt = "NHWC" if data_format == "NWC" else "NCHW"
    out = kind(image, (1, k), (1, s), padding, data_format=fmt)
    return shape_ops.squeeze(out, 1 if data_format == "NWC" else 2)


@_op_type(None, tensors=("input",))
def max_pool1d(input, ksize, strides, padding, data_format: str = "NWC", **torch_options) -> Tensor:
    """1-D max pooling of ``(batch, width, channels)`` (``data_format="NCW"``: channels first): TensorFlow's
    ``tf.nn.max_pool1d``, :func:`max_pool` on a height-1 image.  ``ksize`` and ``strides`` as an int, ``[k]``
    or ``[1, k, 1]``; ``padding`` ``"VALID"``, ``"SAME"`` or explicit ``(left, right)``, each smaller than
    ``ksize`` (PyTorch's ``max_pool1d(x, k, s, padding=p)`` is ``(p, p)``, or ``p``).  PyTorch's ``dilations``,
    ``ceil_mode`` and ``return_indices`` as :func:`max_pool`'s.

    >>> import tensorlib as tl
    >>> tl.nn.max_pool1d(tl.tensor([[[1.0], [3.0], [2.0], [0.0]]]), 2, 2, "VALID").numpy().ravel().tolist()
    [3.0, 2.0]
    """
    if torch_options or not tf_padding(padding):
        return torch_pool("max", "max_pool1d", input, ksize, strides, padding, data_format, **torch_options)
    return _pool1d(max_pool, input, ksize, strides, padding, data_format)


@_op_type(None, tensors=("input",))
def avg_pool1d(input, ksize, strides, padding, data_format: str = "NWC", **torch_options) -> Tensor:
    """1-D average pooling of ``(batch, width, channels)`` (``data_format="NCW"``: channels first):
    TensorFlow's ``tf.nn.avg_pool1d``, :func:`avg_pool` on a height-1 image (``"SAME"`` averages only the
    cells inside the input, as TensorFlow does).  PyTorch's explicit ``padding`` with ``count_include_pad``,
    ``ceil_mode`` and ``divisor_override`` as :func:`avg_pool`'s.

    >>> import tensorlib as tl
    >>> tl.nn.avg_pool1d(tl.tensor([[[1.0], [3.0], [2.0]]]), 2, 2, "SAME").numpy().ravel().tolist()
    [2.0, 2.0]
    """
    if torch_options or not tf_padding(padding):
        return torch_pool("avg", "avg_pool1d", input, ksize, strides, padding, data_format, **torch_options)
    return _pool1d(avg_pool, input, ksize, strides, padding, data_format)


# ------------------------------------------------------------------ scaled_dot_product_attention
@_op_type(None, tensors=("query", "key", "value", "attn_mask"))
def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale=None,
    seed=None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` (PyTorch's ``F.scaled_dot_product_attention``):
    ``query`` ``(..., L, E)``, ``key`` ``(..., S, E)``, ``value`` ``(..., S, Ev)`` -> ``(..., L, Ev)``, the
    leading dimensions broadcast.  ``scale`` defaults to ``1 / sqrt(E)``.  ``attn_mask`` broadcasts to
    ``(..., L, S)``: a bool mask keeps the True positions, a float mask is added to the scores (in their dtype:
    a float64 mask leaves float32 attention float32).  ``is_causal``
    keeps position ``j <= i`` (the top-left aligned lower triangle; not together with ``attn_mask``).  A query
    row with every position masked (every score ``-inf``) gets weights 0, as in PyTorch.  ``dropout_p > 0`` applies
    :func:`dropout` (``seed``) to the attention weights.  ``enable_gqa=True`` (grouped-query attention, PyTorch's
    argument) takes ``key`` and ``value`` with fewer heads (axis -3) than ``query``, a divisor of them: query head
    ``h`` attends with key head ``h // (query heads / key heads)``.

    >>> import numpy as np, tensorlib as tl
    >>> q = k = np.eye(2)[None]
    >>> v = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> tl.nn.scaled_dot_product_attention(q, k, v, is_causal=True).numpy().round(4).tolist()
    [[[1.0, 0.0], [0.3302, 0.6698]]]
    """
    name = "scaled_dot_product_attention"
    q, k, v = as_tensors(query, key, value)
    where = (
        f"(query shape {tuple(q.shape)} {q.dtype}, key shape {tuple(k.shape)} {k.dtype}, value shape "
        f"{tuple(v.shape)} {v.dtype})"
    )
    if any(t.dtype.kind != "f" for t in (q, k, v)):
        raise TypeError(f"{name}: query, key and value must be floating-point tensors {where}")
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise ValueError(f"{name}: query, key and value must be at least 2-D {where}")
    e, s = q.shape[-1], k.shape[-2]
    if (None not in (e, k.shape[-1]) and e != k.shape[-1]) or (None not in (s, v.shape[-2]) and s != v.shape[-2]):
        raise ValueError(f"{name}: query and key must share the last dimension, key and value the rows {where}")
    if enable_gqa:
        k, v = _grouped_heads(q, k, v, name, where)
    # Unchecked, a batch or mask mismatch failed in BatchMatMulV2, Select or Add, naming neither this function
    # nor its arguments, and a bad dropout_p was reported by Dropout.
    if not _broadcastable(q.shape[:-2], k.shape[:-2], v.shape[:-2]):
        raise ValueError(f"{name}: the leading (batch) dimensions of query, key and value must broadcast {where}")
    if is_causal and attn_mask is not None:
        raise ValueError(f"{name}: give attn_mask or is_causal, not both {where}")
    if attn_mask is not None:
        mask = as_tensors(q, attn_mask)[1]  # an additive list mask next to float64 queries is float64
        if not _broadcastable(mask.shape, q.shape[:-1] + (s,)):
            raise ValueError(
                f"{name}: attn_mask of shape {tuple(mask.shape)} ({mask.dtype}) does not broadcast to the scores "
                f"(..., L, S) = {q.shape[:-1] + (s,)} {where}"
            )
        attn_mask = mask
    if not _number(dropout_p) or not 0.0 <= float(dropout_p) < 1.0:
        raise ValueError(f"{name}: dropout_p must be a number in [0, 1), got {dropout_p!r} {where}")
    if scale is not None and not _number(scale):
        raise TypeError(f"{name}: scale must be None or a number, got {scale!r} {where}")
    if scale is None:
        if e is None:
            raise ValueError(f"{name}: the embedding size must be known to take the default scale {where}")
        scale = 1.0 / _math.sqrt(e)
    # float16 computes in float32 and rounds once, as PyTorch's kernels: the float16 products and weights were
    # 77 float16 ulps off for (2, 4, 8) queries and 2500 for (2, 16, 64) (PyTorch: 0.5 and 1).
    wide = [_widened(t) for t in (q, k, v)]
    out = attend(*wide, attn_mask, dropout_p, scale, seed, f"{name}: attn_mask", where, causal=is_causal)[0]
    return math_ops.cast(out, _dt.float16) if q.dtype == k.dtype == v.dtype == _dt.float16 else out


def _grouped_heads(q, k, v, name: str, where: str) -> tuple:
    """``key`` and ``value`` with each head repeated for its group of query heads (PyTorch's repeat_interleave)."""
    heads = [t.shape[-3] if t.ndim >= 3 else None for t in (q, k, v)]
    if None in heads or heads[1] != heads[2] or not heads[1] or heads[0] % heads[1]:
        raise ValueError(
            f"{name}: enable_gqa needs known head counts (axis -3), {heads[0]} query heads a multiple of the "
            f"{heads[1]} key and {heads[2]} value heads {where}"
        )
    group = heads[0] // heads[1]
    return (k, v) if group == 1 else (array_ops.repeat(k, group, axis=-3), array_ops.repeat(v, group, axis=-3))


def _broadcastable(*shapes) -> bool:
    """Whether ``shapes`` broadcast together, an unknown (None) size fitting any."""
    n = max(len(shape) for shape in shapes)
    for sizes in zip(*[(1,) * (n - len(shape)) + tuple(shape) for shape in shapes]):
        if len({d for d in sizes if d is not None and d != 1}) > 1:
            return False
    return True


def _number(value) -> bool:
    """A real Python or NumPy number, not a bool or a string."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def attend(q, k, v, attn_mask, dropout_p, scale, seed, what: str, where: str = "", causal: bool = False) -> tuple:
    """``(softmax(q @ k^T * scale + mask) @ v, the weights)``: a bool ``attn_mask`` keeps its True positions, a
    float one is added to the scores; ``causal`` keeps key ``j <= i`` of query ``i`` only (the top-left aligned
    lower triangle, built with ops when a length is known only at run time); a row with every score ``-inf``
    gets weights 0 (and gradient 0), PyTorch's safe softmax; with ``dropout_p`` the weights returned are the
    dropped ones, which multiply ``v`` (as PyTorch's ``nn.MultiheadAttention`` returns them)."""
    # sqrt(|scale|) on each side before the product, as PyTorch's math kernel does: scaling the product after it
    # overflowed float16 (a 64-wide head of values ~100: inf scores, NaN outputs where PyTorch's are finite).
    root = _math.sqrt(abs(float(scale)))
    if float(scale) != 1.0:
        q, k = q * (root if scale >= 0 else -root), k * root
    scores = linalg_ops.matmul(q, array_ops.swapaxes(k, -1, -2))
    if attn_mask is not None:
        mask = as_tensor(attn_mask)
        if mask.dtype.kind == "b":
            scores = elementwise_ops.where(mask, scores, -_math.inf)
        elif mask.dtype.kind == "f":
            # In the scores' dtype (JAX, Keras; PyTorch rejects others): a float64 np.where(keep, 0, -inf) made a
            # float32 attention's output and backward float64.
            scores = scores + (mask if mask.dtype == scores.dtype else math_ops.cast(mask, scores.dtype))
        else:
            raise TypeError(f"{what} must be bool or floating, got {mask.dtype} {where}".rstrip())
    if causal:
        rows, cols = q.shape[-2], k.shape[-2]
        # A NumPy constant when the lengths are known; traced with one unknown, the scores' shape gives it.
        keep = (
            np.tril(np.ones((rows, cols), dtype=bool))
            if None not in (rows, cols)
            else array_ops.tril(math_ops.ones_like(scores, _dt.bool_))
        )
        scores = elementwise_ops.where(keep, scores, -_math.inf)
    if attn_mask is not None or causal:
        dead = reduce_ops.all(scores == -_math.inf, axis=-1, keepdims=True)
        weights = elementwise_ops.where(dead, 0.0, softmax(elementwise_ops.where(dead, 0.0, scores), axis=-1))
    else:
        weights = softmax(scores, axis=-1)
    if dropout_p:
        weights = dropout(weights, float(dropout_p), seed=seed)
    return linalg_ops.matmul(weights, v), weights


# ------------------------------------------------------------------ normalize_moments
@_op_type(None, tensors=("counts", "mean_ss", "variance_ss", "shift"))
def normalize_moments(counts, mean_ss, variance_ss, shift=None) -> tuple:
    """Mean and (biased) variance from sufficient statistics: ``counts`` values whose (shifted) sum is
    ``mean_ss`` and sum of squares ``variance_ss`` (TensorFlow's ``tf.nn.normalize_moments``):
    ``mean = mean_ss / counts + shift``, ``variance = variance_ss / counts - (mean_ss / counts) ** 2``.

    >>> import tensorlib as tl
    >>> mean, variance = tl.nn.normalize_moments(4.0, tl.tensor([16.0]), tl.tensor([84.0]))
    >>> mean.numpy().tolist(), variance.numpy().tolist()
    ([4.0], [5.0])
    """
    mean_ss = _float_or_float64(mean_ss, "normalize_moments", "mean_ss")
    variance_ss = _float_or_float64(variance_ss, "normalize_moments", "variance_ss")
    if isinstance(counts, (int, float)) and not isinstance(counts, bool):
        divisor = 1.0 / float(counts)  # a Python number stays weak: float32 statistics stay float32
    else:
        divisor = 1.0 / _float_or_float64(counts, "normalize_moments", "counts")
    shifted_mean = mean_ss * divisor
    mean = shifted_mean if shift is None else shifted_mean + shift
    return mean, variance_ss * divisor - math_ops.square(shifted_mean)


# ------------------------------------------------------------------ resize
def _resize_taps(in_size: int, out_size: int, method: str):
    """TensorFlow 2's half-pixel source positions: (lower, upper, weight of upper) per output index."""
    scale = in_size / out_size
    centers = (np.arange(out_size) + 0.5) * scale
    if method == "nearest":
        return np.minimum(np.floor(centers), in_size - 1).astype(np.int64), None, None
    src = centers - 0.5
    floor = np.floor(src)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(src), in_size - 1).astype(np.int64)
    return lower, upper, src - floor


@_op_type(None, tensors=("images",))
def resize(images, size, method: str = "bilinear") -> Tensor:
    """Resize ``(height, width, channels)`` or ``(batch, height, width, channels)`` images to
    ``size = (new_height, new_width)`` with TensorFlow 2's ``tf.image.resize`` (half-pixel centers, no
    antialiasing): ``method`` ``"bilinear"`` (differentiable in the image) or ``"nearest"``.  Float images keep
    their dtype (TensorFlow returns float32 from bilinear), integer ones give float64 from bilinear.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.resize(np.array([[[0.0], [4.0]]]), (1, 4)).numpy().ravel().tolist()
    [0.0, 1.0, 3.0, 4.0]
    """
    x = as_tensor(images)
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"resize: method must be 'bilinear' or 'nearest', got {method!r} {_where(x)}")
    if x.ndim not in (3, 4):
        raise ValueError(f"resize: images must be 3-D (h, w, c) or 4-D (batch, h, w, c) {_where(x)}")
    try:
        new_h, new_w = (_index(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"resize: size must be (new_height, new_width), got {size!r} {_where(x)}") from None
    if min(new_h, new_w) < 1:
        raise ValueError(f"resize: size must be positive, got {size!r} {_where(x)}")
    axis = x.ndim - 3
    h, w = x.shape[axis], x.shape[axis + 1]
    if None in (h, w):
        raise ValueError(f"resize: the height and width must be known {_where(x)}")
    if h == 0 or w == 0:
        raise ValueError(f"resize: cannot resize an empty image {_where(x)}")
    if method == "bilinear" and x.dtype.kind != "f":
        x = _float_or_float64(x, "resize", "images")
    for ax, (n_in, n_out) in ((axis, (h, new_h)), (axis + 1, (w, new_w))):
        lower, upper, weight = _resize_taps(n_in, n_out, method)
        if method == "nearest":
            x = shape_ops.take(x, lower, axis=ax)
            continue
        shape = [1] * x.ndim
        shape[ax] = n_out
        weight = as_tensor(weight.reshape(shape).astype(x.dtype.name if x.dtype != _dt.float16 else "float32"))
        low, high = shape_ops.take(x, lower, axis=ax), shape_ops.take(x, upper, axis=ax)
        y = _widened(low) + (_widened(high) - _widened(low)) * weight
        x = math_ops.cast(y, low.dtype) if y.dtype != low.dtype else y
    return x
