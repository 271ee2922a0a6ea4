"""Pure-NumPy kernels for 2-D convolution, pooling and fused batch norm.

Raw NumPy arrays in, raw arrays out; nothing here knows about Tensors, so the
module needs only NumPy. Layouts follow TensorFlow: images are NHWC
``(N, H, W, C)``, filters HWIO ``(KH, KW, Cin, Cout)``, ``strides`` and
``dilations`` are ``(rows, cols)`` pairs and ``pads`` is the explicit
``((top, bottom), (left, right))`` that :func:`resolve_conv_padding` returns.

Every kernel keeps its input's dtype. float16 work is done in float32 (BLAS
has no half-precision GEMM, and half-precision sums lose digits) and the
result is cast back; float32 and float64 are never widened.

Speed (DESIGN §4): the work is split into blocks of images (or of output rows
of one image) small enough to stay in cache, and every block buffer comes
from a per-thread workspace that outlives the call (:func:`_scratch`); fresh
memory costs a page fault per 4 KiB on first touch, which on the machines we
measured could cost as much as the arithmetic. Outputs are always fresh
arrays: callers keep them. Big convolutions, poolings and activations share
their blocks out between threads, each block to whichever thread is free
first (:func:`_share_blocks`); their thin GEMMs and small transforms are cut
into pieces small enough that OpenBLAS runs each on the calling thread
(:func:`_single_thread_gemm`, :func:`_add_thin_gemm`,
:func:`_single_thread_matmul`), since OpenBLAS's own threads stall whenever
another process holds a core, and keep a core busy-waiting for about 0.1 s
after each call they run: :mod:`.blas` runs the bigger products (``matmul``)
with OpenBLAS on one thread per piece and shares the pieces out, and
:func:`.sums.column_sums` sums over (N, H, W) without BLAS. Convolutions either copy each filter tap's
strided view of the input into a patch block and run one BLAS GEMM per block, or, for large
filters on small images, multiply discrete Fourier spectra (see
:func:`conv2d_strategy`). Pooling reduces along rows first, where the runs
are long and contiguous, and only then along columns.
"""

from .activations import relu, relu_grad
from .batch_norm import fused_batch_norm_backward, fused_batch_norm_forward
from .blocks import Pads, Pair, conv_output_size_and_padding, resolve_conv_padding
from .conv import (
    FOURIER_GEMM,
    IM2COL_GEMM,
    SHIFTED_GEMM,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_strategy,
)
from .pool import avg_pool, avg_pool_grad, max_pool, max_pool_grad, max_pool_grad_grad

__all__ = [
    "FOURIER_GEMM",
    "IM2COL_GEMM",
    "SHIFTED_GEMM",
    "Pads",
    "Pair",
    "avg_pool",
    "avg_pool_grad",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_strategy",
    "conv_output_size_and_padding",
    "fused_batch_norm_backward",
    "fused_batch_norm_forward",
    "max_pool",
    "max_pool_grad",
    "max_pool_grad_grad",
    "relu",
    "relu_grad",
    "resolve_conv_padding",
]
