"""The catalogue entries of the phase-order ops (:mod:`tensorlib.ops.nn.phases`): a first conv layer and its max
pool with ``h`` kept as ``(P, N, OH / PH, OW / PW, C)``, whose ``[a * PW + b, n, p, q]`` is
``h[n, a + PH * p, b + PW * q]``.

The references are the NHWC formulas in float64 NumPy (:mod:`.references`), reordered.  The pool gradient's
inputs are drawn from a few integers so that windows hold ties (the gradient goes to the first maximum in
row-major order) and its gradient holds an inf now and then (the other cells of that window stay 0).  The
ops are not differentiable (they appear only in optimized graphs).

>>> from tensorlib.testing.op_db_phases import OPINFOS
>>> [info.op_types for info in OPINFOS]
[('Conv2DAddActivationPhasePool',), ('MaxPoolPhasesGrad',), ('Conv2DBackpropFilterWithBiasPhases',)]
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ..ops.registry import get
from . import references
from .op_db_fused import _REFERENCES
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import tensors


def _to_phases(h, pool):
    n, height, width, c = h.shape
    ph, pw = pool
    grid = h.reshape(n, height // ph, ph, width // pw, pw, c)
    return grid.transpose(2, 4, 0, 1, 3, 5).reshape(ph * pw, n, height // ph, width // pw, c)


def _to_nhwc(h, pool):
    _, n, rows, cols, c = h.shape
    ph, pw = pool
    return h.reshape(ph, pw, n, rows, cols, c).transpose(2, 3, 0, 4, 1, 5).reshape(n, rows * ph, cols * pw, c)


@st.composite
def _layer(draw):
    """``(x shape, filter shape, padding, pool)`` of a stride-1 conv whose result the pool tiles."""
    pool = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    cells = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    out_hw = (cells[0] * pool[0], cells[1] * pool[1])
    in_hw = out_hw if padding == "SAME" else (out_hw[0] + kernel[0] - 1, out_hw[1] + kernel[1] - 1)
    in_c, out_c = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    return (draw(st.integers(1, 3)), *in_hw, in_c), (*kernel, in_c, out_c), padding, pool


def _phase_pool(x, w, b, padding, activation, pool):
    return get("Conv2DAddActivationPhasePool")(x, w, b, padding=padding, activation=activation, pool=pool)


def _phase_pool_ref(x, w, b, padding, activation, pool):
    h = _REFERENCES[activation](references.conv2d(x, w, 1, padding) + np.asarray(b, np.float64))
    dtype = np.result_type(x, w, b)
    return _to_phases(h, pool).astype(dtype), references.max_pool(h, pool, pool, "VALID").astype(dtype)


@st.composite
def _phase_pool_draw(draw, dtype):
    x_shape, w_shape, padding, pool = draw(_layer())
    x, w, b = draw(tensors(dtype, x_shape)), draw(tensors(dtype, w_shape)), draw(tensors(dtype, w_shape[3:]))
    activation = draw(st.sampled_from(sorted(_REFERENCES)))
    return SampleInput((x, w, b, padding, activation, pool), grad_argnums=())


def _phases_grad(h, pooled, grad, pool):
    return get("MaxPoolPhasesGrad")(h, pooled, grad, pool=pool)


def _phases_grad_ref(h, pooled, grad, pool):
    nhwc = _to_nhwc(np.asarray(h, np.float64), pool)
    return _to_phases(references.max_pool_grad(nhwc, grad, pool, pool, "VALID"), pool).astype(grad.dtype)


@st.composite
def _phases_grad_draw(draw, dtype):
    x_shape, w_shape, _, pool = draw(_layer())
    n, c = x_shape[0], w_shape[3]
    cells = (x_shape[1] // pool[0] if x_shape[1] % pool[0] == 0 else 1, 1)
    shape = (n, cells[0] * pool[0], cells[1] * pool[1], c)
    nhwc = draw(tensors(dtype, shape, st.integers(-2, 2).map(float)))  # ties in most windows
    pooled = references.max_pool(nhwc.astype(np.float64), pool, pool, "VALID").astype(dtype)
    grad = draw(tensors(dtype, pooled.shape))
    if draw(st.booleans()):
        grad.flat[draw(st.integers(0, grad.size - 1))] = np.inf
    return SampleInput((_to_phases(nhwc, pool), pooled, grad, pool), grad_argnums=())


def _filter_phases(x, out_backprop, filter_shape, padding, pool):
    op = get("Conv2DBackpropFilterWithBiasPhases")
    return op(x, out_backprop, filter_shape=filter_shape, padding=padding, pool=pool)


def _filter_phases_ref(x, out_backprop, filter_shape, padding, pool):
    dy = _to_nhwc(np.asarray(out_backprop, np.float64), pool)
    dtype = np.result_type(x, out_backprop)
    dw = references.conv2d_backprop_filter(x, filter_shape, dy, 1, padding)
    return dw.astype(dtype), dy.sum(axis=(0, 1, 2)).astype(out_backprop.dtype)


@st.composite
def _filter_phases_draw(draw, dtype):
    x_shape, w_shape, padding, pool = draw(_layer())
    out_hw = x_shape[1:3] if padding == "SAME" else (x_shape[1] - w_shape[0] + 1, x_shape[2] - w_shape[1] + 1)
    phases_shape = (pool[0] * pool[1], x_shape[0], out_hw[0] // pool[0], out_hw[1] // pool[1], w_shape[3])
    x, dy = draw(tensors(dtype, x_shape)), draw(tensors(dtype, phases_shape))
    return SampleInput((x, dy, w_shape, padding, pool), grad_argnums=())


OPINFOS = [
    OpInfo(
        "conv2d_add_activation_phase_pool",
        _phase_pool,
        _phase_pool_ref,
        _phase_pool_draw,
        op_types=("Conv2DAddActivationPhasePool",),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.ones((1, 5, 5, 1)), np.ones((1, 1, 1, 2)), np.ones(2), "VALID", "relu", (2, 2)),
                {},
                ValueError,
                r"Conv2DAddActivationPhasePool: the phase order needs a stride-1 conv of at most 4 input channels "
                r"whose 5x5 result the pool \(2, 2\) tiles",
            ),
        ),
    ),
    OpInfo(
        "max_pool_phases_grad",
        _phases_grad,
        _phases_grad_ref,
        _phases_grad_draw,
        op_types=("MaxPoolPhasesGrad",),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.ones((4, 1, 2, 2, 1)), np.ones((1, 2, 3, 1)), np.ones((1, 2, 3, 1)), (2, 2)),
                {},
                ValueError,
                r"MaxPoolPhasesGrad: h \(4, 1, 2, 2, 1\) must be \(P, N, OH, OW, C\), with pooled \(1, 2, 3, 1\)",
            ),
        ),
    ),
    OpInfo(
        "conv2d_backprop_filter_with_bias_phases",
        _filter_phases,
        _filter_phases_ref,
        _filter_phases_draw,
        op_types=("Conv2DBackpropFilterWithBiasPhases",),
        differentiable=False,
        atol=1e-5,
    ),
]
