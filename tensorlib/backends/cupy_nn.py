"""CuPy kernels for the nn ops: cuDNN convolutions, pooling RawKernels, batch norm, erf/gelu.

Registered on the existing OpDefs as their ``"cupy"`` kernels when tensorlib
is imported; CuPy, the cuDNN frontend and the CUDA sources are loaded on the
first call, so none of them is needed to import tensorlib.

Convolutions (``Conv2D``, ``Conv2DBackpropInput``, ``Conv2DBackpropFilter``)
are the cuDNN frontend's ``conv_fprop``, ``conv_dgrad`` and ``conv_wgrad``
graphs on NHWC tensors, built once per (op, shapes, dtype, strides, pads,
dilations) and cached.  Where the frontend is not installed, or cuDNN has no
engine for a configuration (float64 on some versions, asymmetric SAME
padding on others), the same op runs as a sum of shifted GEMMs through
cuBLAS (:func:`gemm_conv2d` and its two transposes, the Array API kernels of
``tensorlib.backends.generic_nn``), and :func:`conv_engine` says which path
an op takes and why.

The GEMM path is written against ``xp`` and runs on NumPy too, which is how
it is tested on machines without a GPU:

    >>> import numpy as np
    >>> x = np.arange(16.0).reshape(1, 4, 4, 1); w = np.ones((2, 2, 1, 1))
    >>> gemm_conv2d(np, x, w, (1, 1), (1, 1), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[10., 14., 18.],
           [26., 30., 34.],
           [42., 46., 50.]])
"""

from __future__ import annotations

import functools
import importlib
import math

import numpy as np

from . import generic_nn
from .generic_nn import batch_norm_backward
from .generic_nn import conv2d as gemm_conv2d
from .generic_nn import conv2d_backprop_filter as gemm_conv2d_backprop_filter
from .generic_nn import conv2d_backprop_input as gemm_conv2d_backprop_input
from .numpy_nn import resolve_conv_padding


def _geometry(in_hw, window_hw, strides, dilations, padding):
    """((out_h, out_w), pads) as the ops' shape rules compute them (explicit padding as pairs)."""
    if not isinstance(padding, str):
        padding = tuple(tuple(int(v) for v in p) for p in padding)
    return resolve_conv_padding(tuple(in_hw), tuple(window_hw), tuple(strides), tuple(dilations), padding)


def _batch(shape_attr, like) -> tuple:
    """``shape_attr`` with an unknown batch size taken from ``like``'s first dimension."""
    return tuple(shape_attr) if shape_attr[0] is not None else (like[0], *shape_attr[1:])


__all__ = ["conv_engine", "gemm_conv2d", "gemm_conv2d_backprop_input", "gemm_conv2d_backprop_filter"]


def _cp():
    from . import cupy_backend

    return cupy_backend.cupy.cupy


# ---------------------------------------------------------------- the cuDNN path


class _NoEngine(Exception):
    """cuDNN (or its frontend) cannot run this configuration: the GEMM path takes it."""


@functools.lru_cache(maxsize=1)
def _cudnn():
    """The cuDNN frontend module and one handle, or the reason there is none."""
    try:
        cudnn = importlib.import_module("cudnn")
    except Exception as e:  # noqa: BLE001 - missing package or library: the GEMM path is used
        return None, f"nvidia-cudnn-frontend is not importable ({type(e).__name__}: {e})"
    try:
        handle = cudnn.create_handle()
    except Exception as e:  # noqa: BLE001
        return None, f"cuDNN could not create a handle ({type(e).__name__}: {e})"
    return (cudnn, handle), None


_CUDNN_TYPES = {np.dtype(np.float16): "HALF", np.dtype(np.float32): "FLOAT", np.dtype(np.float64): "DOUBLE"}


def _nhwc(n, h, w, c):
    """cuDNN's logical NCHW dims with the strides of a contiguous NHWC array."""
    return [n, c, h, w], [h * w * c, 1, w * c, c]


@functools.lru_cache(maxsize=512)
def _graph(kind, x_shape, w_shape, y_shape, dtype, strides, dilations, pads):
    """A built cuDNN graph for one conv configuration: (graph, X, W, Y, workspace bytes).  Cached."""
    found, why = _cudnn()
    if found is None:
        raise _NoEngine(why)
    cudnn, handle = found
    (top, bottom), (left, right) = pads
    if dtype not in _CUDNN_TYPES:
        raise _NoEngine(f"cuDNN has no {dtype} convolution")
    io = getattr(cudnn.data_type, _CUDNN_TYPES[dtype])
    compute = cudnn.data_type.DOUBLE if dtype == np.float64 else cudnn.data_type.FLOAT
    try:
        graph = cudnn.pygraph(io_data_type=io, intermediate_data_type=compute, compute_data_type=compute, handle=handle)

        def tensor(name, shape):
            dims, strides_ = _nhwc(*shape)
            return graph.tensor(name=name, dim=dims, stride=strides_, data_type=io)

        geometry = dict(stride=list(strides), dilation=list(dilations))
        if (top, left) == (bottom, right):
            geometry["padding"] = [top, left]
        else:
            geometry.update(pre_padding=[top, left], post_padding=[bottom, right])
        if kind == "fprop":
            inputs = (tensor("X", x_shape), tensor("W", w_shape))
            out = graph.conv_fprop(image=inputs[0], weight=inputs[1], **geometry)
        elif kind == "dgrad":
            inputs = (tensor("W", w_shape), tensor("DY", y_shape))
            out = graph.conv_dgrad(filter=inputs[0], loss=inputs[1], **geometry)
        else:
            inputs = (tensor("X", x_shape), tensor("DY", y_shape))
            out = graph.conv_wgrad(image=inputs[0], loss=inputs[1], **geometry)
        target = {"fprop": y_shape, "dgrad": x_shape, "wgrad": w_shape}[kind]
        out.set_output(True).set_data_type(io).set_dim(_nhwc(*target)[0]).set_stride(_nhwc(*target)[1])
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        graph.check_support()
        graph.build_plans()
        return graph, inputs, out, graph.get_workspace_size()
    except Exception as e:  # noqa: BLE001 - cuDNN says why it has no engine; the GEMM path runs instead
        raise _NoEngine(
            f"cuDNN has no engine for {kind} {dtype} x{x_shape} w{w_shape} ({type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else ''})"
        ) from None


_workspace = {}


def _run_graph(kind, arrays, x_shape, w_shape, y_shape, dtype, strides, dilations, pads):
    cp = _cp()
    graph, inputs, out, workspace_bytes = _graph(kind, x_shape, w_shape, y_shape, dtype, strides, dilations, pads)
    cudnn, handle = _cudnn()[0]
    target = {"fprop": y_shape, "dgrad": x_shape, "wgrad": w_shape}[kind]
    result = cp.empty(target, dtype=dtype)
    space = _workspace.get("buffer")
    if space is None or space.size < workspace_bytes:
        space = _workspace["buffer"] = cp.empty(max(workspace_bytes, 1), dtype=cp.uint8)
    cudnn.set_stream(handle=handle, stream=cp.cuda.get_current_stream().ptr)
    pack = {t: cp.ascontiguousarray(a) for t, a in zip(inputs, arrays)}
    pack[out] = result
    graph.execute(pack, space, handle=handle)
    return result


def _krsc(w):
    """An HWIO filter as cuDNN's channels-last KRSC (out, h, w, in) array."""
    return _cp().ascontiguousarray(w.transpose(3, 0, 1, 2))


def conv_engine(kind: str, x_shape, w_shape, y_shape, dtype, strides, dilations, pads) -> str:
    """Which engine a conv takes on CuPy, and why: ``"cudnn"`` or ``"gemm: <reason>"``.

    ``kind`` is ``"fprop"``, ``"dgrad"`` or ``"wgrad"``; shapes are NHWC and HWIO.
    """
    try:
        _graph(
            kind,
            tuple(x_shape),
            _krsc_shape(w_shape),
            tuple(y_shape),
            np.dtype(dtype),
            tuple(strides),
            tuple(dilations),
            tuple(map(tuple, pads)),
        )
        return "cudnn"
    except _NoEngine as e:
        return f"gemm: {e}"


def _krsc_shape(w_shape):
    kh, kw, cin, cout = w_shape
    return (cout, kh, kw, cin)


def _conv_fprop(x, w, strides, dilations, pads, out_hw):
    cp = _cp()
    y_shape = (x.shape[0], *out_hw, w.shape[3])
    try:
        return _run_graph(
            "fprop", (x, _krsc(w)), tuple(x.shape), _krsc_shape(w.shape), y_shape, x.dtype, strides, dilations, pads
        )
    except _NoEngine:
        return gemm_conv2d(cp, x, w, strides, dilations, pads)


def _conv_dgrad(input_shape, w, dy, strides, dilations, pads):
    cp = _cp()
    try:
        return _run_graph(
            "dgrad",
            (_krsc(w), dy),
            tuple(input_shape),
            _krsc_shape(w.shape),
            tuple(dy.shape),
            dy.dtype,
            strides,
            dilations,
            pads,
        )
    except _NoEngine:
        return gemm_conv2d_backprop_input(cp, input_shape, w, dy, strides, dilations, pads)


def _conv_wgrad(x, filter_shape, dy, strides, dilations, pads):
    cp = _cp()
    try:
        krsc = _run_graph(
            "wgrad",
            (x, dy),
            tuple(x.shape),
            _krsc_shape(filter_shape),
            tuple(dy.shape),
            dy.dtype,
            strides,
            dilations,
            pads,
        )
        return cp.ascontiguousarray(krsc.transpose(1, 2, 3, 0))
    except _NoEngine:
        return gemm_conv2d_backprop_filter(cp, x, filter_shape, dy, strides, dilations, pads)


def _pads_tuple(pads):
    return tuple(tuple(int(v) for v in p) for p in pads)


def conv2d(input, filters, *, strides, padding, dilations):
    out_hw, pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)
    return _conv_fprop(input, filters, tuple(strides), tuple(dilations), _pads_tuple(pads), tuple(out_hw))


def conv2d_backprop_input(filters, out_backprop, *, input_shape, strides, padding, dilations):
    input_shape = _batch(input_shape, out_backprop.shape)
    pads = _geometry(tuple(input_shape[1:3]), filters.shape[:2], strides, dilations, padding)[1]
    return _conv_dgrad(tuple(input_shape), filters, out_backprop, tuple(strides), tuple(dilations), _pads_tuple(pads))


def conv2d_backprop_filter(input, out_backprop, *, filter_shape, strides, padding, dilations):
    pads = _geometry(input.shape[1:3], tuple(filter_shape[:2]), strides, dilations, padding)[1]
    return _conv_wgrad(input, tuple(filter_shape), out_backprop, tuple(strides), tuple(dilations), _pads_tuple(pads))


# ---------------------------------------------------------------- pooling: one CUDA thread per output (or input)

_POOL_SOURCE = r"""
// NHWC pooling; "first maximum" = the first window position in row-major order equal to the pooled value.
// T (float or double) is defined before this source; float16 runs in float.
#define GEOMETRY int N, int H, int W, int C, int OH, int OW, int KH, int KW, int SH, int SW, int PT, int PL
#define DECODE_OUT(o) int c = o % C; int ow = (o / C) % OW; int oh = (o / (C * OW)) % OH; int n = o / (C * OW * OH);

__device__ long long first_max(const T* x, const T* y, long long o, GEOMETRY) {
    DECODE_OUT(o)
    T target = y[o];
    for (int i = 0; i < KH; ++i) { int h = oh * SH - PT + i; if (h < 0 || h >= H) continue;
        for (int j = 0; j < KW; ++j) { int w = ow * SW - PL + j; if (w < 0 || w >= W) continue;
            long long at = (((long long)n * H + h) * W + w) * C + c;
            if (x[at] == target || (target != target && x[at] != x[at])) return at; } }  // a NaN max: the first NaN
    return -1;
}

extern "C" {

__global__ void max_pool(const T* x, T* y, GEOMETRY) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (long long)N * OH * OW * C) return;
    DECODE_OUT(o)
    T best = -(T)__int_as_float(0x7f800000);
    for (int i = 0; i < KH; ++i) { int h = oh * SH - PT + i; if (h < 0 || h >= H) continue;
        for (int j = 0; j < KW; ++j) { int w = ow * SW - PL + j; if (w < 0 || w >= W) continue;
            T v = x[(((long long)n * H + h) * W + w) * C + c];
            if (v > best || v != v) best = v; } }
    y[o] = (T)best;
}

__global__ void max_pool_grad(const T* x, const T* y, const T* dy, T* dx, GEOMETRY) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (long long)N * OH * OW * C) return;
    long long at = first_max(x, y, o, N, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL);
    if (at >= 0) atomicAdd(&dx[at], (T)dy[o]);
}

__global__ void max_pool_grad_grad(const T* x, const T* y, const T* ddx, T* ddy, GEOMETRY) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (long long)N * OH * OW * C) return;
    long long at = first_max(x, y, o, N, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL);
    ddy[o] = at >= 0 ? ddx[at] : (T)0.0;
}

__global__ void avg_pool(const T* x, T* y, GEOMETRY) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (long long)N * OH * OW * C) return;
    DECODE_OUT(o)
    T total = 0; int count = 0;
    for (int i = 0; i < KH; ++i) { int h = oh * SH - PT + i; if (h < 0 || h >= H) continue;
        for (int j = 0; j < KW; ++j) { int w = ow * SW - PL + j; if (w < 0 || w >= W) continue;
            total += (T)x[(((long long)n * H + h) * W + w) * C + c]; ++count; } }
    y[o] = (T)(count ? total / count : (T)0);
}

// The gradient of avg_pool as a gather: each input cell sums dy / count over the windows holding it.
__global__ void avg_pool_grad(const T* dy, T* dx, GEOMETRY) {
    long long a = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= (long long)N * H * W * C) return;
    int c = a % C; int w = (a / C) % W; int h = (a / (C * W)) % H; int n = a / (C * W * H);
    T total = 0;
    int oh_lo = max(0, (h + PT - KH + SH) / SH), oh_hi = min(OH - 1, (h + PT) / SH);
    int ow_lo = max(0, (w + PL - KW + SW) / SW), ow_hi = min(OW - 1, (w + PL) / SW);
    for (int oh = oh_lo; oh <= oh_hi; ++oh) {
        int h0 = max(oh * SH - PT, 0), h1 = min(oh * SH - PT + KH, H);
        if (h < oh * SH - PT || h >= oh * SH - PT + KH) continue;
        for (int ow = ow_lo; ow <= ow_hi; ++ow) {
            if (w < ow * SW - PL || w >= ow * SW - PL + KW) continue;
            int w0 = max(ow * SW - PL, 0), w1 = min(ow * SW - PL + KW, W);
            total += (T)dy[(((long long)n * OH + oh) * OW + ow) * C + c] / (T)((h1 - h0) * (w1 - w0)); } }
    dx[a] = (T)total;
}
}
"""

# float16 pools run through the float32 kernels (cast in and out): no half arithmetic in the sources.
_C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


@functools.lru_cache(maxsize=None)
def _pool_module(dtype):
    return _cp().RawModule(code=f"typedef {_C_TYPES[np.dtype(dtype)]} T;\n" + _POOL_SOURCE)


def _wide(a):
    """float16 pools run in float32."""
    return a.astype(np.float32) if a.dtype == np.float16 else _cp().ascontiguousarray(a)


def _launch(name, dtype, count, *args):
    kernel = _pool_module(dtype).get_function(name)
    threads = 256
    kernel(((count + threads - 1) // threads,), (threads,), args)


def _pool_geometry(x_shape, y_shape, ksize, strides, pads):
    n, h, w, c = x_shape
    return tuple(
        np.int32(v)
        for v in (
            n,
            h,
            w,
            c,
            y_shape[1],
            y_shape[2],
            ksize[0],
            ksize[1],
            strides[0],
            strides[1],
            pads[0][0],
            pads[1][0],
        )
    )


def _pool_out(x_shape, ksize, strides, padding):
    out_hw, pads = _geometry(tuple(x_shape[1:3]), tuple(ksize), tuple(strides), (1, 1), padding)
    return (x_shape[0], *out_hw, x_shape[3]), pads


def max_pool(input, *, ksize, strides, padding):
    cp = _cp()
    x = _wide(input)
    y_shape, pads = _pool_out(x.shape, ksize, strides, padding)
    y = cp.empty(y_shape, dtype=x.dtype)
    _launch("max_pool", x.dtype, y.size, x, y, *_pool_geometry(x.shape, y_shape, ksize, strides, pads))
    return y.astype(input.dtype, copy=False)


def max_pool_grad(orig_input, orig_output, grad, *, ksize, strides, padding):
    cp = _cp()
    x, y, dy = (_wide(a) for a in (orig_input, orig_output, grad))
    pads = _pool_out(x.shape, ksize, strides, padding)[1]
    dx = cp.zeros(x.shape, dtype=x.dtype)  # windows overlap: atomicAdd into zeros
    _launch("max_pool_grad", x.dtype, y.size, x, y, dy, dx, *_pool_geometry(x.shape, y.shape, ksize, strides, pads))
    return dx.astype(grad.dtype, copy=False)


def max_pool_grad_grad(orig_input, orig_output, grad, *, ksize, strides, padding):
    cp = _cp()
    x, y, ddx = (_wide(a) for a in (orig_input, orig_output, grad))
    pads = _pool_out(x.shape, ksize, strides, padding)[1]
    ddy = cp.empty(y.shape, dtype=x.dtype)
    _launch(
        "max_pool_grad_grad", x.dtype, y.size, x, y, ddx, ddy, *_pool_geometry(x.shape, y.shape, ksize, strides, pads)
    )
    return ddy.astype(grad.dtype, copy=False)


def avg_pool(input, *, ksize, strides, padding):
    cp = _cp()
    x = _wide(input)
    y_shape, pads = _pool_out(x.shape, ksize, strides, padding)
    y = cp.empty(y_shape, dtype=x.dtype)
    _launch("avg_pool", x.dtype, y.size, x, y, *_pool_geometry(x.shape, y_shape, ksize, strides, pads))
    return y.astype(input.dtype, copy=False)


def avg_pool_grad(grad, *, input_shape, ksize, strides, padding):
    cp = _cp()
    dy = _wide(grad)
    x_shape = tuple(_batch(input_shape, dy.shape))
    pads = _pool_out(x_shape, ksize, strides, padding)[1]
    dx = cp.empty(x_shape, dtype=dy.dtype)
    _launch("avg_pool_grad", dy.dtype, dx.size, dy, dx, *_pool_geometry(x_shape, dy.shape, ksize, strides, pads))
    return dx.astype(grad.dtype, copy=False)


# ---------------------------------------------------------------- batch norm (reductions in float32 or wider)


def fused_batch_norm(x, scale, offset, mean, variance, *, epsilon, is_training):
    return generic_nn.fused_batch_norm(_cp(), x, scale, offset, mean, variance, epsilon, is_training)


def fused_batch_norm_grad(y_backprop, x, scale, batch_mean, inv_std, *, epsilon):
    return batch_norm_backward(_cp(), y_backprop, x, scale, batch_mean, inv_std)


# ---------------------------------------------------------------- erf, gelu, gather-grad


def erf(x):
    from cupyx.scipy import special

    return special.erf(x).astype(x.dtype, copy=False)


def gelu(x, *, approximate):
    cp = _cp()
    if approximate:
        return 0.5 * x * (1.0 + cp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


def take_grad(dy, indices, like, *, axis):
    cp = _cp()
    import cupyx

    axis %= like.ndim
    out = cp.zeros(like.shape, dtype=dy.dtype)
    moved = cp.moveaxis(out, axis, 0)
    size = like.shape[axis]
    flat = (indices.reshape(-1) % size) if size else indices.reshape(-1)
    src = cp.moveaxis(dy, tuple(range(axis, axis + indices.ndim)), tuple(range(indices.ndim)))
    cupyx.scatter_add(moved, flat, src.reshape((flat.size,) + moved.shape[1:]))
    return out


def take_along_axis_grad(dy, indices, like, *, axis):
    """TakeAlongAxisGrad as NumPy's kernel does it (``np.add.at``), with ``cupyx.scatter_add``: the
    generic kernel's comparison against every position along the axis is quadratic."""
    cp = _cp()
    import cupyx

    out = cp.zeros(like.shape, dtype=dy.dtype)
    axis %= like.ndim
    grid = list(cp.ogrid[tuple(slice(0, n) for n in indices.shape)]) if indices.ndim else []
    grid[axis] = indices % like.shape[axis] if like.shape[axis] else indices
    cupyx.scatter_add(out, tuple(grid), dy)
    return out


# Labels and gather indices are not range-checked on the GPU: reading them back would stop the
# stream at every step (out-of-range values are clipped, as JAX does on accelerators).
def sparse_softmax_cross_entropy(logits, labels):
    cp = _cp()
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - cp.log(cp.exp(shifted).sum(axis=-1, keepdims=True))
    picked = cp.clip(labels, 0, logits.shape[-1] - 1).astype(cp.int64)[..., None]
    return -cp.take_along_axis(log_probs, picked, axis=-1)[..., 0]


def take(x, indices, *, axis):
    return _cp().take(x, indices, axis=axis)


# ---------------------------------------------------------------- fused elementwise and GEMV reductions
# Measured on an H200 (CNN step, batch 128): the generic kernels spent ~0.5 ms per bias-gradient Sum
# over (N, H, W) and three kernels per ReluGrad; one fused kernel and one cuBLAS GEMV replace them.


@functools.lru_cache(maxsize=None)
def _elementwise(name):
    cp = _cp()
    if name == "relu":
        return cp.ElementwiseKernel("T x", "T y", "y = x > (T)0 ? x : (T)0", "tensorlib_relu")
    return cp.ElementwiseKernel("T g, T f", "T y", "y = f > (T)0 ? g : (T)0", "tensorlib_relu_grad")


def relu(features):
    return _elementwise("relu")(features)


def relu_grad(gradients, features):
    return _elementwise("relu_grad")(gradients, features.astype(gradients.dtype, copy=False))


def reduce_sum(x, *, axis, keepdims):
    """Sums over leading or trailing axes of float32/float64 arrays as one GEMV with a ones vector."""
    cp = _cp()
    axes = (
        tuple(range(x.ndim))
        if axis is None
        else tuple(sorted(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)))
    )
    k = len(axes)
    gemv = x.dtype in (np.float32, np.float64) and 0 < k < x.ndim and x.size and x.flags.c_contiguous
    if gemv and axes == tuple(range(k)):
        m = math.prod(x.shape[:k])
        out = cp.ones((1, m), dtype=x.dtype) @ x.reshape(m, -1)
        kept = x.shape[k:]
    elif gemv and axes == tuple(range(x.ndim - k, x.ndim)):
        m = math.prod(x.shape[x.ndim - k :])
        out = x.reshape(-1, m) @ cp.ones((m, 1), dtype=x.dtype)
        kept = x.shape[: x.ndim - k]
    else:  # bools and int32 count in int64, float16 accumulates in float32 (as the generic Sum)
        wide = {np.dtype(bool): np.int64, np.dtype(np.int32): np.int64, np.dtype(np.float16): np.float32}.get(
            x.dtype, x.dtype
        )
        return cp.sum(x, axis=axis, keepdims=keepdims, dtype=wide)
    if keepdims:
        return out.reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out.reshape(kept)


# What tensorlib.ops.nn registers as each op type's "cupy" kernel (Dropout: see tensorlib.ops.nn._cupy).
KERNELS = {
    "Conv2D": conv2d,
    "Conv2DBackpropInput": conv2d_backprop_input,
    "Conv2DBackpropFilter": conv2d_backprop_filter,
    "MaxPool": max_pool,
    "MaxPoolGrad": max_pool_grad,
    "MaxPoolGradGrad": max_pool_grad_grad,
    "AvgPool": avg_pool,
    "AvgPoolGrad": avg_pool_grad,
    "FusedBatchNormV3": fused_batch_norm,
    "FusedBatchNormGradV3": fused_batch_norm_grad,
    "Erf": erf,
    "Gelu": gelu,
    "GatherV2Grad": take_grad,
    "TakeAlongAxisGrad": take_along_axis_grad,
    "SparseSoftmaxCrossEntropyWithLogits": sparse_softmax_cross_entropy,
    "GatherV2": take,
    "Relu": relu,
    "ReluGrad": relu_grad,
    "Sum": reduce_sum,
}
