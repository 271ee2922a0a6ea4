"""Neural-network ops, one family per module: :mod:`.conv` (conv2d and its two gradient ops),
:mod:`.conv_composed` (conv1d, conv1d_transpose, depthwise_conv2d), :mod:`.volume` (conv3d, conv3d_transpose, 3-D pools), :mod:`.composed` (space_to_depth, losses, prelu,
instance_norm, in_top_k, 1-D pools, attention), :mod:`.pool`, :mod:`.activations` and
:mod:`.extra_activations`, :mod:`.torch_activations` (PyTorch's shrinks, softmin, threshold, rrelu), :mod:`.losses`, :mod:`.loss_functions` (PyTorch's), :mod:`.margin_losses` (PyTorch's margin and embedding losses), :mod:`.normalization`, :mod:`.embedding`, :mod:`.batch_norm`
and :mod:`.dropout`.

Every op is an OpDef with TensorFlow's op type name, its gradient rules right
below it and its public function next to it, all written with tensorlib ops, so second-order gradients and
traced backward passes come free.  Convolution, pooling and fused batch norm
run the NumPy kernels of :mod:`tensorlib.backends.numpy_nn` (NHWC images, HWIO
filters); the elementwise ops are generic kernels that run on any backend.

Gradient ops that need the shape of a tensor the gradient does not keep
(``Conv2DBackpropInput``'s ``input_shape``, ``AvgPoolGrad``'s) take it as an
attribute whose batch size may be ``None``: the kernel reads the batch from the
incoming gradient, so a function traced with ``TensorSpec((None, 28, 28, 1))``
differentiates for every batch size.  Height, width and channels must be known.
"""

from .adaptive import adaptive_avg_pool, adaptive_max_pool
from .activations import elu, erf, gelu, leaky_relu, log_softmax, relu, softmax, softplus
from .batch_norm import batch_normalization, fused_batch_norm, moments, weighted_moments
from .composed import (
    avg_pool1d,
    depth_to_space,
    in_top_k,
    instance_norm,
    l2_loss,
    local_response_norm,
    log_poisson_loss,
    max_pool1d,
    normalize_moments,
    pixel_shuffle,
    pixel_unshuffle,
    prelu,
    resize,
    scaled_dot_product_attention,
    space_to_depth,
    weighted_cross_entropy_with_logits,
)
from .conv import conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose
from .conv_composed import conv1d, conv1d_transpose, depthwise_conv2d
from .dropout import dropout
from .embedding import embedding_lookup
from .extra_activations import (
    celu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    log1mexp,
    log_sigmoid,
    logmeanexp,
    logsumexp,
    mish,
    one_hot,
    relu6,
    selu,
    silu,
    soft_sign,
    softsign,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    standardize,
    swish,
)
from .loss_functions import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_similarity,
    cross_entropy,
    ctc_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
)
from .losses import (
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from .margin_losses import (
    cosine_embedding_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    pairwise_distance,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .normalization import group_norm, l2_normalize, layer_norm, normalize, rms_norm
from .pool import avg_pool, lp_pool, max_pool, max_unpool
from .torch_activations import hardshrink, rrelu, softmin, softshrink, tanhshrink, threshold
from .volume import avg_pool3d, conv3d, conv3d_transpose, max_pool3d
from .window_pool import fold, fractional_max_pool2d, unfold

__all__ = [
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "avg_pool",
    "avg_pool1d",
    "avg_pool3d",
    "batch_normalization",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "conv1d",
    "conv1d_transpose",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "cosine_similarity",
    "cross_entropy",
    "ctc_loss",
    "depth_to_space",
    "depthwise_conv2d",
    "dropout",
    "elu",
    "embedding_lookup",
    "erf",
    "fused_batch_norm",
    "gelu",
    "glu",
    "group_norm",
    "hard_sigmoid",
    "hard_swish",
    "hard_tanh",
    "huber_loss",
    "in_top_k",
    "instance_norm",
    "kl_div",
    "l1_loss",
    "l2_loss",
    "l2_normalize",
    "layer_norm",
    "rms_norm",
    "leaky_relu",
    "log_poisson_loss",
    "log_sigmoid",
    "log_softmax",
    "max_pool",
    "max_pool1d",
    "max_pool3d",
    "mish",
    "moments",
    "mse_loss",
    "nll_loss",
    "normalize",
    "normalize_moments",
    "prelu",
    "relu",
    "relu6",
    "resize",
    "scaled_dot_product_attention",
    "selu",
    "sigmoid_cross_entropy_with_logits",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softplus",
    "softsign",
    "space_to_depth",
    "sparse_softmax_cross_entropy_with_logits",
    "swish",
    "weighted_cross_entropy_with_logits",
    "weighted_moments",
    # PyTorch's further pools, reshapes and normalizations
    "fold",
    "fractional_max_pool2d",
    "local_response_norm",
    "unfold",
    "pixel_shuffle",
    "pixel_unshuffle",
    "lp_pool",
    "max_unpool",
    # PyTorch's further activations
    "hardshrink",
    "rrelu",
    "softmin",
    "softshrink",
    "tanhshrink",
    "threshold",
    # PyTorch's further losses
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "poisson_nll_loss",
    "soft_margin_loss",
    "cosine_embedding_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "pairwise_distance",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    # jax.nn's names
    "hard_silu",
    "identity",
    "log1mexp",
    "logmeanexp",
    "logsumexp",
    "one_hot",
    "soft_sign",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
]

# AddActivation, the op the graph optimizer fuses a bias add and an activation into.
# Conv2DBackpropFilterWithBias and Conv2DBackprop, the ops the graph optimizer fuses a conv layer's gradients into.
# The ops the graph optimizer runs a first conv layer and its max pool in phase order with.
# The CuPy kernels of these ops register here; CuPy itself is imported on their first call.
from . import (
    _cupy,  # noqa: F401
    fused,  # noqa: F401
    fused_grad,  # noqa: F401
    phases,  # noqa: F401
)
