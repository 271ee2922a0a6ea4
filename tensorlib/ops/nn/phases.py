"""The optimizer's fusion of a first conv layer and its max pool in *phase order*, as ops of their own.

For ``h = Conv2DAddActivation(x, w, b)`` (stride 1, at most 4 input channels: a network's first layer),
``p = MaxPool(h)`` with windows that tile ``h``, the pool's gradient ``MaxPoolGrad(h, p, g)`` and the layer's
``Conv2DBackpropFilterWithBias(x, MaxPoolGrad(...))``, where nothing else reads ``h`` nor the pool's gradient,
the graph optimizer (:func:`tensorlib.graph.passes.fuse_phase_pool`) runs three ops that keep ``h`` and its
gradient as ``(P, N, OH / PH, OW / PW, C)`` for a ``PH x PW`` pool (``P = PH * PW``), whose ``[a * PW + b,
n, p, q]`` is ``h[n, a + PH * p, b + PW * q]``:

``Conv2DAddActivationPhasePool(input, filters, bias)`` -> ``(h in phase order, MaxPool(h))``;
``MaxPoolPhasesGrad(h in phase order, pooled, grad)`` -> MaxPoolGrad's result in phase order;
``Conv2DBackpropFilterWithBiasPhases(input, out_backprop in phase order)`` -> the filter and bias gradients.

Each cell of the pooling windows is then one contiguous plane, so the pool and its gradient run on long
runs instead of runs of ``C`` values (see :mod:`tensorlib.backends.numpy_nn.phases`, whose kernels these
are on NumPy; elsewhere the kernels are the NHWC ops' in a row, reordered).  The ops appear only in optimized
graphs that are not replayed under a tape, and are not differentiable: differentiate the unfused ops.
"""

from __future__ import annotations

from ...backends.numpy_nn import phases as _kernels
from ..registry import defop, get, spec
from ._common import _check_float, _geometry

_PHASE_ATTRS = {"padding": "VALID", "activation": "relu", "pool": (2, 2)}


def _phase_shapes(name, input, filters, padding, pool):
    """``(h's phase-ordered shape, the pooled shape)``, checking that the phase order applies."""
    _check_float("input", input)
    if None in tuple(input.shape[1:]) or None in tuple(filters.shape):
        raise ValueError(f"{name} needs known image and filter sizes, got input {input.shape}, filters {filters.shape}")
    (out_h, out_w), pads = _geometry(tuple(input.shape[1:3]), tuple(filters.shape[:2]), (1, 1), (1, 1), padding)
    if not _kernels.phase_pool_applies(
        (1, *input.shape[1:]), filters.shape, (1, 1), (1, 1), pads, tuple(pool), tuple(pool)
    ):
        raise ValueError(
            f"the phase order needs a stride-1 conv of at most {_kernels.MAX_CHANNELS} input channels whose "
            f"{out_h}x{out_w} result the pool {tuple(pool)} tiles; got input {input.shape}, filters {filters.shape}"
        )
    cells = (out_h // pool[0], out_w // pool[1])
    batch, channels = input.shape[0], filters.shape[3]
    return (pool[0] * pool[1], batch, *cells, channels), (batch, *cells, channels)


def _to_phases(xp, h, pool):
    """NHWC ``h`` -> phase order."""
    n, height, width, c = h.shape
    ph, pw = pool
    grid = xp.reshape(h, (n, height // ph, ph, width // pw, pw, c))
    return xp.reshape(xp.permute_dims(grid, (2, 4, 0, 1, 3, 5)), (ph * pw, n, height // ph, width // pw, c))


def _to_nhwc(xp, h, pool):
    """Phase order -> NHWC."""
    _, n, rows, cols, c = h.shape
    ph, pw = pool
    grid = xp.reshape(h, (ph, pw, n, rows, cols, c))
    return xp.reshape(xp.permute_dims(grid, (2, 3, 0, 4, 1, 5)), (n, rows * ph, cols * pw, c))


# ------------------------------------------------------------------ Conv2DAddActivationPhasePool
def _phase_pool_infer(input, filters, bias, *, padding, activation, pool):
    h_shape, pooled_shape = _phase_shapes("Conv2DAddActivationPhasePool", input, filters, padding, pool)
    get("Conv2DAddActivation").infer(
        input, filters, bias, strides=(1, 1), padding=padding, dilations=(1, 1), activation=activation
    )
    return spec(h_shape, input.dtype), spec(pooled_shape, input.dtype)


_phase_pool = defop(
    "Conv2DAddActivationPhasePool",
    inputs=("input", "filters", "bias"),
    attrs=_PHASE_ATTRS,
    infer=_phase_pool_infer,
    promote=(0, 1, 2),
    differentiable=False,
    doc="(h in phase order, max_pool(h)) for h = activation(conv2d(input, filters) + bias), stride 1, and a "
    "max pool whose windows tile h (the optimizer's first conv layer fusion; not differentiable).",
)


@_phase_pool.kernel("numpy")
def _phase_pool_numpy(input, filters, bias, *, padding, activation, pool, out=None):
    pads = _geometry(input.shape[1:3], filters.shape[:2], (1, 1), (1, 1), padding)[1]
    return _kernels.conv2d_add_activation_phase_pool(input, filters, bias, pads, pool, activation=activation, out=out)


_phase_pool.out_kernel("numpy")(_phase_pool_numpy)


@_phase_pool.per_backend
def _phase_pool_generic(backend, input, filters, bias, *, padding, activation, pool):
    h = get("Conv2DAddActivation").resolve_kernel(backend)(
        input, filters, bias, strides=(1, 1), padding=padding, dilations=(1, 1), activation=activation
    )
    pooled = get("MaxPool").resolve_kernel(backend)(h, ksize=tuple(pool), strides=tuple(pool), padding="VALID")
    return _to_phases(backend.xp, h, pool), pooled


# ------------------------------------------------------------------ MaxPoolPhasesGrad
def _phases_grad_infer(h, pooled, grad):
    if len(h.shape) != 5 or tuple(pooled.shape) != tuple(h.shape[1:]) or tuple(grad.shape) != tuple(pooled.shape):
        raise ValueError(
            f"h {h.shape} must be (P, N, OH, OW, C), with pooled {pooled.shape} and grad {grad.shape} (N, OH, OW, C)"
        )
    _check_float("grad", grad)
    return spec(h.shape, grad.dtype)


_phases_grad = defop(
    "MaxPoolPhasesGrad",
    inputs=("h", "pooled", "grad"),
    attrs={"pool": (2, 2)},
    infer=lambda h, pooled, grad, *, pool: _phases_grad_infer(h, pooled, grad),
    differentiable=False,
    doc="MaxPoolGrad for h in phase order: each window's grad to its first maximum in row-major order, as "
    "MaxPoolGrad (the optimizer's first conv layer fusion; not differentiable).",
)


@_phases_grad.kernel("numpy")
def _phases_grad_numpy(h, pooled, grad, *, pool, out=None):
    return _kernels.max_pool_phases_grad(h, pooled, grad, out=out)


_phases_grad.out_kernel("numpy")(_phases_grad_numpy)


@_phases_grad.per_backend
def _phases_grad_generic(backend, h, pooled, grad, *, pool):
    xp, nhwc = backend.xp, _to_nhwc(backend.xp, h, pool)
    dx = get("MaxPoolGrad").resolve_kernel(backend)(
        nhwc, pooled, grad, ksize=tuple(pool), strides=tuple(pool), padding="VALID"
    )
    return _to_phases(xp, dx, pool)


# ------------------------------------------------------------------ Conv2DBackpropFilterWithBiasPhases
def _filter_phases_infer(input, out_backprop, *, filter_shape, padding, pool):
    h_shape, _ = _phase_shapes(
        "Conv2DBackpropFilterWithBiasPhases", input, spec(tuple(filter_shape), input.dtype), padding, pool
    )
    if tuple(out_backprop.shape[:1]) + tuple(out_backprop.shape[2:]) != h_shape[:1] + h_shape[2:]:
        raise ValueError(f"out_backprop {out_backprop.shape} must have the phase-ordered shape {h_shape}")
    _check_float("out_backprop", out_backprop)
    return spec(tuple(filter_shape), input.dtype), spec((filter_shape[3],), out_backprop.dtype)


_filter_phases = defop(
    "Conv2DBackpropFilterWithBiasPhases",
    inputs=("input", "out_backprop"),
    attrs={"filter_shape": (1, 1, 1, 1), "padding": "VALID", "pool": (2, 2)},
    infer=_filter_phases_infer,
    promote=(0, 1),
    differentiable=False,
    doc="Conv2DBackpropFilterWithBias (stride 1) for out_backprop in phase order (the optimizer's first conv "
    "layer fusion; not differentiable).",
)


@_filter_phases.kernel("numpy")
def _filter_phases_numpy(input, out_backprop, *, filter_shape, padding, pool, out=None):
    pads = _geometry(input.shape[1:3], tuple(filter_shape[:2]), (1, 1), (1, 1), padding)[1]
    return _kernels.conv2d_backprop_filter_bias_phases(input, tuple(filter_shape), out_backprop, pads, pool, out=out)


_filter_phases.out_kernel("numpy")(_filter_phases_numpy)


@_filter_phases.per_backend
def _filter_phases_generic(backend, input, out_backprop, *, filter_shape, padding, pool):
    nhwc = _to_nhwc(backend.xp, out_backprop, pool)
    return get("Conv2DBackpropFilterWithBias").resolve_kernel(backend)(
        input, nhwc, filter_shape=tuple(filter_shape), strides=(1, 1), padding=padding, dilations=(1, 1)
    )
