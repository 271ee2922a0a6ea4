"""The op catalogue: one OpInfo per public function of the math, reduce, shape and linalg families.

Each entry names the function, a NumPy reference, hypothesis sample inputs
per dtype (broadcasting shapes for binaries, positive inputs for log/sqrt,
divisors away from zero), the op types it exercises and error inputs with
the message they must give.  ``all_opinfos()`` adds the catalogue of every
family module ``op_db_<family>.py`` beside this one (``op_db_nn.py``, ...).  The registry-driven
tests (``tests/test_ops_*.py``, ``tests/test_modes_agree.py``) walk this list.

>>> from tensorlib.testing.op_db import all_opinfos
>>> "matmul" in {info.name for info in all_opinfos()}
True
"""

from __future__ import annotations

import importlib
import os

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from ..grad.custom import custom_gradient
from ..ops import shape as _shape_ops
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import mutually_broadcastable_shapes, scalars, tensors, valid_axes

FLOATS = (_dt.float32, _dt.float64)
ELEMENTWISE = (_dt.float16, _dt.float32, _dt.float64)
NUMERIC = FLOATS + (_dt.int64,)


# ---------------------------------------------------------------- sample helpers


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    """Like ``strategies.shapes``, but hypothesis's first (simplest) draws are rank 2 with sides of 2:
    a catalogue test runs few examples, and all-ones shapes hide transposed or unbroadcast gradients."""
    ranks = [r for r in (2, 1, 3, 0, 4) if min_dims <= r <= max_dims]
    sides = [d for d in (2, 3, 1, 4) if min_side <= d <= max_side]
    return st.sampled_from(ranks).flatmap(lambda rank: st.tuples(*[st.sampled_from(sides)] * rank))


def _elements(dtype, lo=-3.0, hi=3.0, away_from_zero=None):
    """Scalars of ``dtype`` in [lo, hi]; with ``away_from_zero=a`` only values with |v| >= a."""
    dtype = np.dtype(dtype)
    if away_from_zero is None:
        return scalars(dtype, lo, hi)
    return scalars(dtype, -hi, -away_from_zero) | scalars(dtype, away_from_zero, hi)


def _python_scalar(dtype, lo=-3.0, hi=3.0, away_from_zero=None):
    """A weak Python scalar: an int for integer dtypes, a float otherwise."""
    if np.dtype(dtype).kind in "iu":
        return _elements(dtype, lo, hi, away_from_zero)
    return _elements(np.float64, lo, hi, away_from_zero)


def _unary(lo=-3.0, hi=3.0, max_dims=3, min_side=1):
    def samples(dtype):
        return tensors(dtype, shapes(0, max_dims, min_side), _elements(dtype, lo, hi)).map(lambda x: SampleInput((x,)))

    return samples


def _binary(x_range=(-3.0, 3.0), y_range=(-3.0, 3.0), y_away_from_zero=None, weak_scalars=True):
    """Two broadcastable arrays, or an array and a weak Python scalar on either side."""

    @st.composite
    def draw_sample(draw, dtype):
        if weak_scalars and draw(st.integers(0, 3)) == 0:
            if draw(st.booleans()):
                x = draw(tensors(dtype, shapes(), _elements(dtype, *x_range)))
                y = draw(_python_scalar(dtype, *y_range, away_from_zero=y_away_from_zero))
                return SampleInput((x, y), grad_argnums=(0,))
            x = draw(_python_scalar(dtype, *x_range))
            y = draw(tensors(dtype, shapes(), _elements(dtype, *y_range, away_from_zero=y_away_from_zero)))
            return SampleInput((x, y), grad_argnums=(1,))
        shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
        x = draw(tensors(dtype, shape_x, _elements(dtype, *x_range)))
        y = draw(tensors(dtype, shape_y, _elements(dtype, *y_range, away_from_zero=y_away_from_zero)))
        return SampleInput((x, y), grad_argnums=(0, 1))

    return draw_sample


def _integer_valued(dtype):
    """Small integer values, so that comparisons meet equal elements."""
    if np.dtype(dtype).kind == "b":
        return st.booleans()
    return st.integers(-2, 2).map(np.dtype(dtype).type)


def _compare_samples(dtype):
    @st.composite
    def draw_sample(draw):
        shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
        return SampleInput(
            (
                draw(tensors(dtype, shape_x, _integer_valued(dtype))),
                draw(tensors(dtype, shape_y, _integer_valued(dtype))),
            ),
            grad_argnums=(),
        )

    return draw_sample()


def _shape_mismatch(op_name):
    return ErrorInput(
        (np.ones((2, 3)), np.ones((4,))),
        exc=ValueError,
        match=rf"{op_name}: shapes \(2, 3\) and \(4,\) are not broadcastable \(inputs x: shape "
        r"\(2, 3\) float64, y: shape \(4,\) float64\)",
    )


def _not_numeric(op_name):
    return ErrorInput((np.ones(2), ["a", "b"]), exc=TypeError, match=rf"{op_name}: input 'y' is not numeric")


# ---------------------------------------------------------------- math


def _math_opinfos():
    infos = []
    for name, fn, ref, op_type in [
        ("add", tl.add, np.add, "Add"),
        ("subtract", tl.subtract, np.subtract, "Sub"),
        ("multiply", tl.multiply, np.multiply, "Mul"),
        ("maximum", tl.maximum, np.maximum, "Maximum"),
        ("minimum", tl.minimum, np.minimum, "Minimum"),
    ]:
        infos.append(
            OpInfo(
                name,
                fn,
                ref,
                _binary(),
                op_types=(op_type,),
                dtypes=ELEMENTWISE + (_dt.int64,),
                kinks=op_type in ("Maximum", "Minimum"),
                error_inputs=(_shape_mismatch(op_type), _not_numeric(op_type)),
            )
        )
    infos += [
        OpInfo(
            "divide",
            tl.divide,
            np.divide,
            _binary(y_away_from_zero=0.5),
            op_types=("Div",),
            dtypes=ELEMENTWISE + (_dt.int64,),
            error_inputs=(_shape_mismatch("Div"),),
        ),
        OpInfo("power", tl.power, np.power, _power_samples, op_types=("Pow",), dtypes=FLOATS),
        OpInfo("negative", tl.negative, np.negative, _unary(), op_types=("Neg",), dtypes=ELEMENTWISE + (_dt.int64,)),
        OpInfo("identity", tl.identity, np.copy, _unary(), op_types=("Identity",), dtypes=ELEMENTWISE + (_dt.int64,)),
        OpInfo(
            "checkpoint_name",
            lambda x: tl.checkpoint_name(x, "h"),
            np.copy,
            _unary(),
            op_types=("CheckpointName",),
            dtypes=ELEMENTWISE + (_dt.int64,),
        ),
        OpInfo(
            "optimization_barrier",
            _optimization_barrier,
            np.copy,
            _unary(),
            op_types=("OptimizationBarrier",),
            dtypes=ELEMENTWISE + (_dt.int64,),
        ),
        OpInfo("exp", tl.exp, np.exp, _unary(), op_types=("Exp",), dtypes=ELEMENTWISE),
        OpInfo("log", tl.log, np.log, _unary(0.2, 3.0), op_types=("Log",), dtypes=ELEMENTWISE),
        OpInfo("log1p", tl.log1p, np.log1p, _unary(-0.5, 3.0), op_types=("Log1p",), dtypes=ELEMENTWISE),
        OpInfo("expm1", tl.expm1, np.expm1, _unary(), op_types=("Expm1",), dtypes=ELEMENTWISE),
        OpInfo("sqrt", tl.sqrt, np.sqrt, _unary(0.2, 3.0), op_types=("Sqrt",), dtypes=ELEMENTWISE),
        OpInfo("square", tl.square, np.square, _unary(), op_types=("Square",), dtypes=ELEMENTWISE + (_dt.int64,)),
        OpInfo("abs", tl.abs, np.abs, _unary(), op_types=("Abs",), dtypes=ELEMENTWISE + (_dt.int64,), kinks=True),
        OpInfo("sign", tl.sign, np.sign, _unary(), op_types=("Sign",), dtypes=ELEMENTWISE + (_dt.int64,), kinks=True),
        OpInfo("sin", tl.sin, np.sin, _unary(), op_types=("Sin",), dtypes=ELEMENTWISE),
        OpInfo("cos", tl.cos, np.cos, _unary(), op_types=("Cos",), dtypes=ELEMENTWISE),
        OpInfo("tanh", tl.tanh, np.tanh, _unary(), op_types=("Tanh",), dtypes=ELEMENTWISE),
        OpInfo("sigmoid", tl.sigmoid, _sigmoid_ref, _unary(-8.0, 8.0), op_types=("Sigmoid",), dtypes=ELEMENTWISE),
        OpInfo(
            "sigmoid_saturated",
            tl.sigmoid,
            _sigmoid_ref,
            _unary(-700.0, 700.0),
            op_types=("Sigmoid",),
            dtypes=FLOATS,
            differentiable=False,
        ),
        OpInfo("round", tl.round, np.round, _unary(), op_types=("Round",), dtypes=ELEMENTWISE, differentiable=False),
        OpInfo("floor", tl.floor, np.floor, _unary(), op_types=("Floor",), dtypes=ELEMENTWISE, differentiable=False),
        OpInfo(
            "cast",
            _cast,
            _cast_ref,
            _cast_samples,
            op_types=("Cast",),
            dtypes=FLOATS + (_dt.int64, _dt.bool_),
            grad_atol=1e-3,
            grad_rtol=2e-3,  # casts to float32 differentiate in float32
            error_inputs=(
                ErrorInput((np.ones(2),), {"dtype": "uint64"}, TypeError, r"tensorlib: dtype uint64 is not supported"),
            ),
        ),
        OpInfo(
            "where",
            tl.where,
            np.where,
            _where_samples,
            op_types=("Select",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones(2, bool), np.ones(3), np.zeros(2)),
                    exc=ValueError,
                    match=r"Select: shapes \(2,\) and \(3,\) and \(2,\) are not broadcastable",
                ),
            ),
        ),
        OpInfo(
            "clip",
            tl.clip,
            lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
            _clip_samples,
            op_types=("ClipByValue",),
            dtypes=NUMERIC,
            kinks=True,
        ),
    ]
    comparisons = [
        ("equal", "Equal"),
        ("not_equal", "NotEqual"),
        ("less", "Less"),
        ("less_equal", "LessEqual"),
        ("greater", "Greater"),
        ("greater_equal", "GreaterEqual"),
    ]
    for name, op_type in comparisons:
        infos.append(
            OpInfo(
                name,
                getattr(tl, name),
                getattr(np, name),
                _compare_samples,
                op_types=(op_type,),
                dtypes=NUMERIC + (_dt.bool_,),
                differentiable=False,
                error_inputs=(_shape_mismatch(op_type),),
            )
        )
    for name, op_type in [("logical_and", "LogicalAnd"), ("logical_or", "LogicalOr"), ("logical_xor", "LogicalXor")]:
        infos.append(
            OpInfo(
                name,
                getattr(tl, name),
                getattr(np, name),
                _compare_samples,
                op_types=(op_type,),
                dtypes=(_dt.bool_,),
                differentiable=False,
            )
        )
    infos += [
        OpInfo(
            "logical_not",
            tl.logical_not,
            np.logical_not,
            _unary(),
            op_types=("LogicalNot",),
            dtypes=(_dt.bool_,),
            differentiable=False,
        ),
        OpInfo(
            "full_like",
            tl.full_like,
            np.full_like,
            _full_like_samples,
            op_types=("FullLike",),
            dtypes=NUMERIC + (_dt.bool_,),
            differentiable=False,
        ),
        OpInfo(
            "zeros_like",
            tl.zeros_like,
            np.zeros_like,
            _unary(),
            op_types=("FullLike",),
            dtypes=NUMERIC + (_dt.bool_,),
            differentiable=False,
        ),
        OpInfo(
            "ones_like",
            tl.ones_like,
            np.ones_like,
            _unary(),
            op_types=("FullLike",),
            dtypes=NUMERIC + (_dt.bool_,),
            differentiable=False,
        ),
        OpInfo(
            "stop_gradient",
            tl.stop_gradient,
            np.copy,
            _unary(),
            op_types=("StopGradient",),
            dtypes=FLOATS,
            differentiable=False,
        ),
        OpInfo("custom_gradient", _custom_square, np.square, _unary(), op_types=("CustomGradient",), dtypes=FLOATS),
        OpInfo(
            "check_numerics",
            tl.debugging.check_numerics,
            lambda x, message: x.copy(),
            lambda dtype: _unary()(dtype).map(lambda s: SampleInput(s.args + ("checked",))),
            op_types=("CheckNumerics",),
            dtypes=ELEMENTWISE,
            error_inputs=(
                ErrorInput(
                    (np.array([1.0, np.nan]), "loss"),
                    exc=tl.debugging.NumericsError,
                    match=r"CheckNumerics: loss: tensor had NaN values \(shape \(2,\), float64\)",
                ),
                ErrorInput(
                    (np.array([np.inf]), "logits"),
                    exc=tl.debugging.NumericsError,
                    match=r"CheckNumerics: logits: tensor had Inf values",
                ),
            ),
        ),
        OpInfo(
            "ensure_shape",
            tl.ensure_shape,
            lambda x, shape: x.copy(),
            lambda dtype: _unary()(dtype).map(lambda s: SampleInput(s.args + (_some_sizes_unknown(s.args[0]),))),
            op_types=("EnsureShapes",),
            dtypes=ELEMENTWISE,
            error_inputs=(
                ErrorInput(
                    (np.zeros((2, 3)), (None, 4)),
                    exc=ValueError,
                    match=r"EnsureShapes: dimension 1 of input 0 \(shape \(2, 3\), float64\) is 3, expected 4",
                ),
                ErrorInput((np.zeros((2, 3)), (2,)), exc=ValueError, match=r"has rank 2, expected 1 dimensions"),
            ),
        ),
        OpInfo(
            "check_parameter",
            _checked_scale,
            lambda x: x.copy(),
            _unary(lo=0.5, hi=3.0),  # inside the rule, also where a gradient check steps
            op_types=("CheckParameter",),
            dtypes=FLOATS,
            error_inputs=(
                ErrorInput(
                    (np.array([1.0, -2.0]),), exc=ValueError, match=r"scale must be non-negative finite numbers"
                ),
                ErrorInput((np.array([np.inf]),), exc=ValueError, match=r"scale must be non-negative finite numbers"),
            ),
        ),
        OpInfo(
            "assert_shapes",
            _assert_named_shapes,
            lambda x, y: (x.copy(), y.copy()),
            lambda dtype: _unary()(dtype).map(lambda s: SampleInput((s.args[0], 2 * s.args[0]))),
            op_types=("EnsureShapes",),
            dtypes=ELEMENTWISE,
            error_inputs=(
                ErrorInput(
                    (np.zeros((4, 7)), np.zeros((1, 7))),
                    exc=ValueError,
                    match=r"dimension 0 \('d0'\) of input 1 \(shape \(1, 7\), float64\) is 1, but 'd0' is 4 in input 0",
                ),
            ),
        ),
    ]
    return infos


def _sigmoid_ref(x):
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype)


@st.composite
def _power_draw(draw, dtype):
    # Positive bases with any exponent (weak scalar bases too), or any base with a small whole exponent.
    kind = draw(st.sampled_from(["arrays", "whole exponent", "scalar base"]))
    if kind == "arrays":
        return draw(_binary((0.5, 2.5), (-2.0, 2.0), weak_scalars=False)(dtype))
    x = draw(tensors(dtype, shapes(), _elements(dtype)))
    if kind == "whole exponent":
        return SampleInput((x, draw(st.sampled_from([1, 2, 3]))), grad_argnums=(0,))
    return SampleInput((draw(st.sampled_from([0.5, 2.0, 3.0])), x), grad_argnums=(1,))


def _power_samples(dtype):
    return _power_draw(dtype)


def _cast(x, dtype):
    return tl.cast(x, dtype)


def _cast_ref(x, dtype):
    return x.astype(dtype)


def _cast_samples(dtype):
    targets = st.sampled_from(FLOATS + (_dt.int64, _dt.bool_))
    elements = _integer_valued(dtype) if np.dtype(dtype).kind in "biu" else _elements(dtype)

    def sample(x, target):
        differentiable = x.dtype.kind == "f" and target.kind == "f"
        return SampleInput((x,), {"dtype": target}, grad_argnums=(0,) if differentiable else ())

    return st.builds(sample, tensors(dtype, shapes(), elements), targets)


@st.composite
def _where_draw(draw, dtype):
    shape_c, shape_x, shape_y = draw(mutually_broadcastable_shapes(3))
    condition = draw(tensors(_dt.bool_, shape_c))
    x = draw(tensors(dtype, shape_x, _elements(dtype)))
    y = draw(tensors(dtype, shape_y, _elements(dtype)))
    return SampleInput((condition, x, y), grad_argnums=(1, 2) if np.dtype(dtype).kind == "f" else ())


def _where_samples(dtype):
    return _where_draw(dtype)


@st.composite
def _clip_draw(draw, dtype):
    shape_x, shape_lo, shape_hi = draw(mutually_broadcastable_shapes(3))
    x = draw(tensors(dtype, shape_x, _elements(dtype)))
    lo = draw(tensors(dtype, shape_lo, _elements(dtype, -3.0, -0.5)))
    hi = draw(tensors(dtype, shape_hi, _elements(dtype, 0.5, 3.0)))
    return SampleInput((x, lo, hi), grad_argnums=(0, 1, 2))


def _clip_samples(dtype):
    return _clip_draw(dtype)


def _full_like_samples(dtype):
    values = st.sampled_from([0, 1, -2, True]) if np.dtype(dtype).kind in "biu" else st.sampled_from([0.5, -2.0, 3])
    return st.builds(lambda x, v: SampleInput((x, v), grad_argnums=()), tensors(dtype, shapes()), values)


def _checked_scale(x):
    """A distribution's scale checked when it runs (how a traced draw checks a tensor parameter)."""
    return tl.ops.get("CheckParameter")(x, rule=">=", message="scale")


def _some_sizes_unknown(x) -> tuple:
    """``x``'s shape with every other size left open (``None``), for ``ensure_shape``."""
    return tuple(None if i % 2 else d for i, d in enumerate(x.shape))


def _assert_named_shapes(x, y):
    """``x`` and ``y`` checked to share every (named) size."""
    names = tuple(f"d{i}" for i in range(np.ndim(x)))
    return tuple(
        tl.debugging.assert_shapes([(x, names), (y, names[: np.ndim(y)] + (None,) * (np.ndim(y) - np.ndim(x)))])
    )


def _optimization_barrier(x):
    """tl.remat's barrier under tl.function (an identity that graph passes do not see through)."""
    from ..grad.checkpoint_policies import _optimization_barrier as barrier

    return barrier(x)


@custom_gradient
def _custom_square(x):
    """x * x with a hand-written, differentiable gradient (checks CustomGradient to second order)."""
    return x * x, lambda dy: dy * 2.0 * x


# ---------------------------------------------------------------- reductions


@st.composite
def _reduction_draw(
    draw,
    dtype,
    lo=-3.0,
    hi=3.0,
    min_dims=0,
    max_dims=3,
    min_side=1,
    max_side=4,
    unique=False,
    ddof=False,
    elements=None,
    min_axes=0,
):
    values = elements(dtype) if elements is not None else _elements(dtype, lo, hi)
    x = draw(tensors(dtype, shapes(min_dims, max_dims, min_side, max_side), values, unique=unique))
    axis = draw(valid_axes(x.ndim, min_size=min_axes))
    kwargs = {"axis": axis, "keepdims": draw(st.booleans())}
    if ddof:
        count = int(np.prod([x.shape[a] for a in (range(x.ndim) if axis is None else np.atleast_1d(axis))]))
        kwargs["ddof"] = draw(st.sampled_from([0, 1] if count > 1 else [0]))
    return SampleInput((x,), kwargs)


def _reduction(**options):
    return lambda dtype: _reduction_draw(dtype, **options)


@st.composite
def _masked_reduction_draw(draw, dtype, ddof=False):
    """Distinct values and a ``where=`` mask (of x's shape, or broadcasting to it) leaving at least two
    elements in each slice that has two (so var's ddof=1 and std's kink at 0 are avoided)."""
    sample = draw(
        _reduction_draw(
            dtype, min_dims=1, max_dims=3, min_side=2, max_side=3, unique=True, ddof=ddof, elements=_half_steps
        )
    )
    x, axis = sample.args[0], sample.kwargs["axis"]
    shape = tuple(d if draw(st.booleans()) else 1 for d in x.shape) if draw(st.booleans()) else x.shape
    where = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))), bool)
    where = where.reshape(shape)
    if (np.sum(np.broadcast_to(where, x.shape), axis=axis) < 2).any():
        where = np.ones(shape, bool)
    return SampleInput(sample.args, {**sample.kwargs, "where": where})


def _half_steps(dtype, lo=None, hi=None):
    """Distinct multiples of 0.5: unique draws stay at least 0.5 apart (no ties, no near-zero spread)."""
    return st.integers(-6, 6).map(lambda k: np.dtype(dtype).type(k / 2))


def _with_zeros(dtype):
    """Mostly zeros: products with one, two or more zero factors."""
    return st.sampled_from([0.0, 0.0, -1.5, 2.0, 0.5]).map(np.dtype(dtype).type)


def _logsumexp_ref(x, axis=None, keepdims=False):
    x64 = x.astype(np.float64)
    shift = np.max(x64, axis=axis, keepdims=True) if x.size else 0.0
    out = np.log(np.sum(np.exp(x64 - shift), axis=axis, keepdims=True)) + shift
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return np.asarray(out, dtype=x.dtype)


def _axis_error(name):
    return ErrorInput(
        (np.ones((2, 3)),),
        {"axis": 2},
        ValueError,
        rf"{name}: axis 2 is out of range for a tensor of rank 2 \(input.*shape \(2, 3\)",
    )


def _reduce_opinfos():
    return [
        OpInfo(
            "sum",
            tl.sum,
            np.sum,
            _reduction(),
            op_types=("Sum",),
            dtypes=NUMERIC + (_dt.bool_,),
            error_inputs=(_axis_error("Sum"),),
        ),
        # Tiny nonzero factors make the second derivative (P / x_j differentiated) cancel catastrophically.
        OpInfo(
            "prod",
            tl.prod,
            np.prod,
            _reduction(elements=lambda dtype: _elements(dtype, -2.0, 2.0, 0.25)),
            op_types=("Prod",),
            dtypes=NUMERIC + (_dt.bool_,),
        ),
        OpInfo(
            "prod_with_zeros", tl.prod, np.prod, _reduction(elements=_with_zeros), op_types=("Prod",), dtypes=FLOATS
        ),
        OpInfo(
            "max",
            tl.max,
            np.max,
            _reduction(),
            op_types=("Max",),
            dtypes=NUMERIC + (_dt.bool_,),
            kinks=True,
            error_inputs=(_axis_error("Max"),),
        ),
        OpInfo("min", tl.min, np.min, _reduction(), op_types=("Min",), dtypes=NUMERIC, kinks=True),
        OpInfo(
            "mean",
            tl.mean,
            _mean_ref,
            _reduction(),
            op_types=("Sum", "Div"),
            dtypes=NUMERIC + (_dt.bool_,),
            error_inputs=(_axis_error("Mean"),),
        ),
        OpInfo(
            "var",
            tl.var,
            _var_ref,
            _reduction(ddof=True),
            op_types=("Sum", "Sub", "Mul", "Div"),
            dtypes=FLOATS,
            error_inputs=(_axis_error("Var"),),
        ),
        # Distinct values at least 0.5 apart on every reduced axis: std stays away from its kink at 0.
        OpInfo(
            "std",
            tl.std,
            _std_ref,
            _reduction(
                min_dims=1, max_dims=2, min_side=2, max_side=3, min_axes=1, unique=True, ddof=True, elements=_half_steps
            ),
            op_types=("Sqrt",),
            dtypes=FLOATS,
        ),
        OpInfo(
            "mean_where", tl.mean, _mean_ref, _masked_reduction_draw, op_types=("Select", "LogicalAnd"), dtypes=NUMERIC
        ),
        OpInfo("var_where", tl.var, _var_ref, lambda dtype: _masked_reduction_draw(dtype, ddof=True), dtypes=FLOATS),
        OpInfo("std_where", tl.std, _std_ref, lambda dtype: _masked_reduction_draw(dtype, ddof=True), dtypes=FLOATS),
        OpInfo(
            "logsumexp",
            tl.logsumexp,
            _logsumexp_ref,
            _reduction(lo=-10.0, hi=10.0),
            op_types=("Max", "StopGradient", "Exp", "Log"),
            dtypes=FLOATS,
            error_inputs=(_axis_error("LogSumExp"),),
        ),
        OpInfo(
            "logsumexp_large",
            tl.logsumexp,
            _logsumexp_ref,
            _reduction(lo=500.0, hi=1000.0),
            op_types=("Max",),
            dtypes=FLOATS,
            differentiable=False,
        ),
        OpInfo(
            "argmax", tl.argmax, np.argmax, _arg_samples, op_types=("ArgMax",), dtypes=NUMERIC, differentiable=False
        ),
        OpInfo(
            "argmin", tl.argmin, np.argmin, _arg_samples, op_types=("ArgMin",), dtypes=NUMERIC, differentiable=False
        ),
    ]


def _mean_ref(x, axis=None, keepdims=False, where=True):
    out = np.mean(x, axis=axis, keepdims=keepdims, where=where)
    return np.asarray(out, dtype=x.dtype if x.dtype.kind == "f" else np.float64)


def _var_ref(x, axis=None, keepdims=False, ddof=0, where=True):
    return np.asarray(np.var(x, axis=axis, keepdims=keepdims, ddof=ddof, where=where), dtype=x.dtype)


def _std_ref(x, axis=None, keepdims=False, ddof=0, where=True):
    return np.asarray(np.std(x, axis=axis, keepdims=keepdims, ddof=ddof, where=where), dtype=x.dtype)


def _arg_samples(dtype):
    @st.composite
    def draw_sample(draw):
        x = draw(tensors(dtype, shapes(0, 3), _integer_valued(dtype)))
        axis = draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
        return SampleInput((x,), {"axis": axis}, grad_argnums=())

    return draw_sample()


# ---------------------------------------------------------------- shape ops


@st.composite
def _reshape_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    size = x.size
    candidates = [(size,), (-1,), tuple(reversed(x.shape)), x.shape + (1,), (1,) + x.shape]
    if x.ndim:
        k = draw(st.integers(0, x.ndim - 1))
        candidates.append(x.shape[:k] + (-1,) + x.shape[k + 1 :])
    return SampleInput((x, draw(st.sampled_from(candidates))))


@st.composite
def _reshape_like_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    like = np.zeros(tuple(reversed(x.shape)) + (1,), dtype)
    return SampleInput((x, like))


@st.composite
def _transpose_draw(draw, dtype):
    # Hypothesis tries the first options first: lead with a rank-3 rotation, not its own inverse.
    ndim = draw(st.sampled_from([3, 2, 4, 1, 0]))
    x = draw(tensors(dtype, shapes(ndim, ndim)))
    rotated = tuple(range(1, ndim)) + (0,) if ndim else ()
    perm = draw(st.sampled_from([rotated, None]) | st.permutations(range(ndim)).map(tuple))
    return SampleInput((x, perm))


@st.composite
def _expand_dims_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    axis = draw(st.integers(-(x.ndim + 1), x.ndim) | st.just((0, -1)))
    return SampleInput((x, axis))


@st.composite
def _squeeze_draw(draw, dtype):
    shape = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=0, max_size=4).map(tuple))
    x = draw(tensors(dtype, shape))
    ones = [i for i, d in enumerate(shape) if d == 1]
    axis = draw(st.none() | st.lists(st.sampled_from(ones), unique=True).map(tuple) if ones else st.none())
    return SampleInput((x, axis))


@st.composite
def _broadcast_to_draw(draw, dtype):
    target = draw(shapes(0, 4))
    keep = draw(st.integers(0, len(target)))
    shape = tuple(d if draw(st.booleans()) else 1 for d in target[len(target) - keep :])
    return SampleInput((draw(tensors(dtype, shape)), target))


@st.composite
def _broadcast_like_draw(draw, dtype):
    shape_x, shape_like = draw(mutually_broadcastable_shapes(2))
    return SampleInput((draw(tensors(dtype, shape_x)), np.zeros(shape_like, dtype)))


@st.composite
def _sum_to_like_draw(draw, dtype):
    like = draw(shapes(0, 3, max_side=3))
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    grown = tuple(draw(st.integers(1, 3)) if d == 1 else d for d in like)
    return SampleInput((draw(tensors(dtype, lead + grown)), np.zeros(like, dtype)))


def _sum_to_like_reference(x, like):
    lead = x.ndim - like.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(like.shape) if d == 1)
    return np.sum(x, axis=axes).reshape(like.shape)


@st.composite
def _shape_size_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    axis = draw(st.lists(st.integers(0, x.ndim - 1), unique=True).map(tuple) if x.ndim else st.just(()))
    return SampleInput((x, axis), grad_argnums=())


@st.composite
def _concat_draw(draw, dtype, new_axis=False):
    base = draw(shapes(0 if new_axis else 1, 3))
    n = draw(st.integers(1, 3))
    if new_axis:
        axis = draw(st.integers(-(len(base) + 1), len(base)))
        arrays = [draw(tensors(dtype, base)) for _ in range(n)]
    else:
        axis = draw(st.integers(-len(base), len(base) - 1))
        arrays = []
        for _ in range(n):
            shape = list(base)
            shape[axis] = draw(st.integers(0, 3))
            arrays.append(draw(tensors(dtype, tuple(shape))))
    return SampleInput(tuple(arrays), {"axis": axis}, grad_argnums=tuple(range(n)))


def _concat(*xs, axis):
    return tl.concat(xs, axis=axis)


def _concat_ref(*xs, axis):
    return np.concatenate(xs, axis=axis)


def _stack(*xs, axis):
    return tl.stack(xs, axis=axis)


def _stack_ref(*xs, axis):
    return np.stack(xs, axis=axis)


@st.composite
def _split_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    size = x.shape[axis]
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    sections = draw(
        st.sampled_from(divisors)
        | st.lists(st.integers(-size, size + 1), max_size=3).map(
            lambda points: sorted(points, key=lambda p: min(max(p + size if p < 0 else p, 0), size))
        )
    )
    return SampleInput((x, sections), {"axis": axis})


@st.composite
def _tile_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    return SampleInput((x, tuple(draw(st.integers(1, 3)) for _ in range(x.ndim))))


@st.composite
def _pad_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    paddings = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(x.ndim))
    value = draw(st.sampled_from([0, 1, -2]) if np.dtype(dtype).kind in "iu" else st.sampled_from([0.0, 1.5]))
    return SampleInput((x, paddings), {"constant_values": value})


def _pad_ref(x, paddings, constant_values=0):
    if x.ndim == 0:  # NumPy's pad rejects the empty pad_width of a 0-d array
        return x.copy()
    return np.pad(x, paddings, constant_values=constant_values)


@st.composite
def _getitem_draw(draw, dtype):
    from hypothesis.extra import numpy as hnp

    x = draw(tensors(dtype, shapes(0, 3, 1, 4)))
    index = draw(hnp.basic_indices(x.shape, allow_newaxis=True, allow_ellipsis=True))
    return SampleInput((x, index))


def _getitem(x, index):
    return x[index]


def _getitem_ref(x, index):
    return np.asarray(x[index])


@st.composite
def _getitem_array_draw(draw, dtype):
    """One integer array among ints, slices, None and Ellipsis: NumPy's placement rules for the gathered axes."""
    x = draw(tensors(dtype, shapes(1, 3)))
    k = draw(st.integers(0, x.ndim - 1))
    indices = draw(tensors(_dt.int64, shapes(0, 2), st.integers(-x.shape[k], x.shape[k] - 1)))
    index = []
    for axis, size in enumerate(x.shape):
        if axis == k:
            index.append(indices)
        else:
            index.append(draw(st.sampled_from([slice(None), 0, slice(1, None), slice(None, None, -1), size - 1])))
    if draw(st.booleans()):
        index.insert(draw(st.integers(0, len(index))), None)
    if draw(st.booleans()) and isinstance(index[-1], slice) and index[-1] == slice(None):
        index[-1] = Ellipsis
    position = next(j for j, i in enumerate(index) if isinstance(i, np.ndarray))
    return SampleInput((x, indices), {"before": tuple(index[:position]), "after": tuple(index[position + 1 :])})


def _getitem_array(x, indices, *, before, after):
    return x[before + (indices,) + after]


@st.composite
def _getitem_arrays_draw(draw, dtype):
    """Two or three integer arrays among ints, slices and None: NumPy's broadcasting of the arrays and its
    placement of their axes (in place when they are adjacent, first when apart)."""
    x = draw(tensors(dtype, shapes(2, 3)))
    count = draw(st.integers(2, x.ndim))
    chosen = sorted(draw(st.permutations(range(x.ndim)))[:count])
    common = draw(shapes(0, 2, 1, 3))
    arrays, index = [], []
    for axis, size in enumerate(x.shape):
        if axis not in chosen:
            index.append(draw(st.sampled_from([slice(None), 0, slice(None, None, -1), size - 1])))
            continue
        shape = common[draw(st.integers(0, len(common))) :]  # broadcasts to common
        positions = draw(tensors(_dt.int64, shape, st.integers(-size, size - 1)))
        arrays.append(positions)
        index.append(positions)
    if draw(st.booleans()):
        index.insert(draw(st.integers(0, len(index))), None)
    slots = [j for j, i in enumerate(index) if isinstance(i, np.ndarray)]
    template = tuple("array" if isinstance(i, np.ndarray) else i for i in index)
    assert len(slots) == len(arrays)
    return SampleInput((x, *arrays), {"template": template})


def _getitem_arrays(x, *arrays, template):
    supplied = iter(arrays)
    return x[tuple(next(supplied) if isinstance(i, str) else i for i in template)]


@st.composite
def _gather_nd_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    depth = draw(st.integers(1, x.ndim))
    lookups = draw(shapes(0, 2, 1, 3))
    columns = [draw(tensors(_dt.int64, lookups + (1,), st.integers(-size, size - 1))) for size in x.shape[:depth]]
    return SampleInput((x, np.concatenate(columns, axis=-1)))


def _gather_nd_ref(x, indices):
    return np.asarray(x[tuple(np.moveaxis(indices, -1, 0))])


@st.composite
def _scatter_update_draw(draw, dtype):
    """Indices from a small range, so positions repeat (the last update wins)."""
    x = draw(tensors(dtype, shapes(1, 3)))
    depth = draw(st.integers(1, x.ndim))
    lookups = draw(shapes(0, 2, 1, 4))
    columns = [draw(tensors(_dt.int64, lookups + (1,), st.integers(-size, size - 1))) for size in x.shape[:depth]]
    updates = draw(tensors(dtype, lookups + x.shape[depth:]))
    return SampleInput((x, np.concatenate(columns, axis=-1), updates), grad_argnums=(0, 2))


def _scatter_update_ref(x, indices, updates):
    out = np.array(x, copy=True)
    flat_indices = indices.reshape(-1, indices.shape[-1])
    flat_updates = updates.reshape((len(flat_indices),) + x.shape[indices.shape[-1] :])
    for position, update in zip(flat_indices, flat_updates):  # in order: the last write stays
        out[tuple(position)] = update
    return out


@st.composite
def _at_draw(draw, dtype):
    """An index of ``_getitem_arrays_draw``'s kinds or a basic one, and values that broadcast to what it reads."""
    from hypothesis.extra import numpy as hnp

    x = draw(tensors(dtype, shapes(1, 3)))
    if draw(st.booleans()):
        index = draw(hnp.basic_indices(x.shape, allow_newaxis=False, allow_ellipsis=True))
    else:
        axis = draw(st.integers(0, x.ndim - 1))
        positions = draw(tensors(_dt.int64, shapes(1, 2, 1, 4), st.integers(-x.shape[axis], x.shape[axis] - 1)))
        index = (slice(None),) * axis + (positions,)
    read = np.empty(x.shape)[index].shape
    values = draw(tensors(dtype, read[draw(st.integers(0, len(read))) :]))  # broadcasts to what is read
    return SampleInput((x, values), {"index": index, "how": draw(st.sampled_from(["set", "add"]))}, grad_argnums=(0, 1))


def _at(x, values, *, index, how):
    return getattr(x.at[index], how)(values)


def _at_ref(x, values, *, index, how):
    out = np.array(x, copy=True)
    if how == "add":
        # Values broadcast by hand: NumPy 2.4's ufunc.at adds wrong sums where it broadcasts them itself
        # (np.add.at(zeros(2), [[0, 0], [0, 0]], [0., 65.]) gives 65, not 130).
        np.add.at(out, index, np.broadcast_to(values, out[index].shape))
        return out
    positions = np.arange(out.size).reshape(out.shape)[index]
    for position, value in zip(positions.ravel(), np.broadcast_to(values, positions.shape).ravel()):
        out.reshape(-1)[position] = value  # in order: the last write stays
    return out


@st.composite
def _take_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    size = x.shape[axis]
    indices = draw(tensors(_dt.int64, shapes(0, 2), st.integers(-size, size - 1)))
    return SampleInput((x, indices), {"axis": axis})


@st.composite
def _one_hot_draw(draw, dtype):
    depth = draw(st.integers(1, 4))
    indices = draw(tensors(_dt.int64, shapes(0, 2), st.integers(-1, depth)))
    axis = draw(st.integers(-(indices.ndim + 1), indices.ndim))
    return SampleInput(
        (indices, depth), {"axis": axis, "dtype": dtype, "on_value": 2.0, "off_value": -1.0}, grad_argnums=()
    )


def _one_hot_ref(indices, depth, axis=-1, dtype=np.float32, on_value=1.0, off_value=0.0):
    hot = indices[..., None] == np.arange(depth)
    return np.moveaxis(np.where(hot, on_value, off_value).astype(dtype), -1, axis)


def _shape_opinfos():
    return [
        OpInfo(
            "reshape",
            tl.reshape,
            np.reshape,
            _reshape_draw,
            op_types=("Reshape",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), (4, 2)),
                    exc=ValueError,
                    match=r"Reshape: cannot reshape a tensor of shape \(2, 3\) \(6 elements\) "
                    r"into \(4, 2\) \(inputs x: shape \(2, 3\) float64\)",
                ),
                ErrorInput(
                    (np.ones((2, 3)), (-1, -1)),
                    exc=ValueError,
                    match=r"Reshape: can only specify one unknown dimension",
                ),
            ),
        ),
        OpInfo(
            "reshape_like",
            _shape_ops.reshape_like,
            lambda x, like: x.reshape(like.shape),
            _reshape_like_draw,
            op_types=("ReshapeLike",),
            dtypes=FLOATS,
        ),
        OpInfo(
            "transpose",
            tl.transpose,
            np.transpose,
            _transpose_draw,
            op_types=("Transpose",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), (0, 0)),
                    exc=ValueError,
                    match=r"Transpose: perm \(0, 0\) is not a permutation of the axes of a "
                    r"rank-2 tensor",
                ),
            ),
        ),
        OpInfo(
            "expand_dims",
            tl.expand_dims,
            np.expand_dims,
            _expand_dims_draw,
            op_types=("ExpandDims",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), 4),
                    exc=ValueError,
                    match=r"ExpandDims: axis 4 is out of range for a tensor of rank 3",
                ),
            ),
        ),
        OpInfo(
            "squeeze",
            tl.squeeze,
            np.squeeze,
            _squeeze_draw,
            op_types=("Squeeze",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput((np.ones((2, 1)), 0), exc=ValueError, match=r"Squeeze: cannot squeeze axis 0 of size 2"),
            ),
        ),
        OpInfo(
            "broadcast_to",
            tl.broadcast_to,
            np.broadcast_to,
            _broadcast_to_draw,
            op_types=("BroadcastTo",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), (3, 3)),
                    exc=ValueError,
                    match=r"BroadcastTo: (cannot broadcast shape \(2, 3\) to \(3, 3\)|shapes "
                    r"\(2, 3\) and \(3, 3\) are not broadcastable)",
                ),
            ),
        ),
        OpInfo(
            "broadcast_like",
            _shape_ops.broadcast_like,
            lambda x, like: np.broadcast_to(x, np.broadcast_shapes(x.shape, like.shape)),
            _broadcast_like_draw,
            op_types=("BroadcastLike",),
            dtypes=FLOATS,
        ),
        OpInfo(
            "sum_to_like",
            _shape_ops.sum_to_like,
            _sum_to_like_reference,
            _sum_to_like_draw,
            op_types=("SumToLike",),
            dtypes=FLOATS,
        ),
        OpInfo(
            "shape_size",
            _shape_ops.shape_size,
            lambda x, axis: np.asarray(int(np.prod([x.shape[a] for a in axis])), np.int64),
            _shape_size_draw,
            op_types=("Size",),
            dtypes=FLOATS,
            differentiable=False,
        ),
        OpInfo(
            "concat",
            _concat,
            _concat_ref,
            _concat_draw,
            op_types=("ConcatV2",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones((3, 2))),
                    {"axis": 0},
                    ValueError,
                    r"ConcatV2: shapes \[\(2, 3\), \(3, 2\)\] differ outside axis 0",
                ),
            ),
        ),
        OpInfo(
            "stack",
            _stack,
            _stack_ref,
            lambda dtype: _concat_draw(dtype, new_axis=True),
            op_types=("Pack",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones((3, 2))),
                    {"axis": 0},
                    ValueError,
                    r"Pack: all shapes must be equal, got \[\(2, 3\), \(3, 2\)\]",
                ),
            ),
        ),
        OpInfo(
            "split",
            tl.split,
            np.split,
            _split_draw,
            op_types=("SplitV",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((5, 2)), 2),
                    exc=ValueError,
                    match=r"SplitV: axis 0 of size 5 \(shape \(5, 2\)\) cannot be split into 2 "
                    r"equal sections",
                ),
                ErrorInput(
                    (np.ones(5), [3, 1]), exc=ValueError, match=r"SplitV: split points \[3, 1\] must be increasing"
                ),
            ),
        ),
        OpInfo(
            "tile",
            tl.tile,
            np.tile,
            _tile_draw,
            op_types=("Tile",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), (2, -1)),
                    exc=ValueError,
                    match=r"Tile: reps \(2, -1\) must not be negative \(inputs x: shape \(2, 3\) "
                    r"float64\)",
                ),
            ),
        ),
        OpInfo(
            "pad",
            tl.pad,
            _pad_ref,
            _pad_draw,
            op_types=("PadV2",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    # ((1, 1),) is NumPy's pad_width for every axis; a negative width is the error.
                    (np.ones((2, 3)), ((1, -1), (0, 0))),
                    exc=ValueError,
                    match=r"PadV2: paddings \(\(1, -1\), \(0, 0\)\) must be one non-negative \(before, "
                    r"after\) pair per axis of \(2, 3\)",
                ),
            ),
        ),
        OpInfo(
            "getitem",
            _getitem,
            _getitem_ref,
            _getitem_draw,
            op_types=("StridedSlice", "StridedSliceGrad"),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), (0, 0, 0)),
                    exc=IndexError,
                    match=r"StridedSlice: too many indices \(3\) for a tensor of shape \(2, 3\)",
                ),
                ErrorInput(
                    (np.ones((2, 3)), (5,)),
                    exc=IndexError,
                    match=r"StridedSlice: index 5 is out of bounds for axis 0 with size 2",
                ),
            ),
        ),
        OpInfo(
            "getitem_int_array",
            _getitem_array,
            _getitem_array,
            _getitem_array_draw,
            op_types=("StridedSlice", "GatherV2", "GatherV2Grad"),
            dtypes=NUMERIC,
        ),
        OpInfo(
            "getitem_arrays",
            _getitem_arrays,
            _getitem_arrays,
            _getitem_arrays_draw,
            op_types=("StridedSlice", "GatherNd", "GatherNdGrad"),
            dtypes=NUMERIC,
        ),
        OpInfo(
            "gather_nd",
            tl.gather_nd,
            _gather_nd_ref,
            _gather_nd_draw,
            op_types=("GatherNd", "GatherNdGrad"),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.array([[1, 3]])),
                    exc=IndexError,
                    match=r"GatherNd: index 3 is out of bounds for axis 1 with size 3",
                ),
                ErrorInput(
                    (np.ones((2, 3)), np.array([[0, 0, 0]])),
                    exc=ValueError,
                    match=r"GatherNd: indices \(shape \(1, 3\)\) name 3 axes, but params \(shape \(2, 3\)\) has 2",
                ),
                ErrorInput(
                    (np.ones(3), np.array([[0.5]])),
                    exc=TypeError,
                    match=r"GatherNd: indices must be integers, got float64",
                ),
            ),
        ),
        OpInfo(
            "tensor_scatter_nd_update",
            tl.tensor_scatter_nd_update,
            _scatter_update_ref,
            _scatter_update_draw,
            op_types=("ScatterNdUpdate", "ScatterNdKept", "GatherNd", "GatherNdGrad"),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.array([[2, 0]]), np.ones(1)),
                    exc=IndexError,
                    match=r"tensor_scatter_nd_update: index 2 is out of bounds for axis 0 with size 2",
                ),
                ErrorInput(
                    (np.ones((2, 3)), np.array([[1]]), np.ones((1, 2))),
                    exc=ValueError,
                    match=r"ScatterNdUpdate: updates \(shape \(1, 2\)\) must have shape indices.shape\[:-1\] \+ "
                    r"tensor.shape\[indices.shape\[-1\]:\] = \(1, 3\)",
                ),
            ),
        ),
        OpInfo(
            "at_set_add",
            _at,
            _at_ref,
            _at_draw,
            op_types=("PositionsLike", "ScatterNdUpdate", "GatherNdGrad"),
            dtypes=NUMERIC,
        ),
        OpInfo(
            "take",
            tl.take,
            np.take,
            _take_draw,
            op_types=("GatherV2", "GatherV2Grad"),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones(3), np.array([0, 5])),
                    exc=IndexError,
                    match=r"GatherV2: index 5 is out of bounds for axis 0 with size 3",
                ),
                ErrorInput(
                    (np.ones(3), np.array([0.5])),
                    exc=TypeError,
                    match=r"GatherV2: indices must be integers, got float64",
                ),
            ),
        ),
        OpInfo(
            "one_hot",
            tl.one_hot,
            _one_hot_ref,
            _one_hot_draw,
            op_types=("OneHot",),
            dtypes=FLOATS,
            differentiable=False,
            error_inputs=(
                ErrorInput((np.array([0.5]), 3), exc=TypeError, match=r"OneHot: indices must be integers, got float64"),
            ),
        ),
    ]


# ---------------------------------------------------------------- linalg


@st.composite
def _matmul_draw(draw, dtype):
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    batch_x, batch_y = draw(mutually_broadcastable_shapes(2, max_dims=2, max_side=3))
    shape_x = (k,) if draw(st.integers(0, 4)) == 0 else batch_x + (n, k)
    shape_y = (k,) if draw(st.integers(0, 4)) == 0 else batch_y + (k, m)
    return SampleInput(
        (draw(tensors(dtype, shape_x, _elements(dtype))), draw(tensors(dtype, shape_y, _elements(dtype)))),
        grad_argnums=(0, 1),
    )


EINSUM_EQUATIONS = (
    "ij,jk->ik",
    "bij,bjk->bik",
    "i,i->",
    "ij->ji",
    "ij->",
    "ij",
    "ij,jk",
    "ij,k->ijk",
    "ijk,ik->j",
    "ij,jk->i",
    "...ij,...jk->...ik",
    "...i,...i->...",
    "i...->...",
    "ij,ij->ij",
    "ij,ij->",
    "i,j->ij",
    "ij,jk,kb->ib",
    "bij,jk->bik",
    "ij,kj->ki",
)


@st.composite
def _einsum_draw(draw, dtype):
    equation = draw(st.sampled_from(EINSUM_EQUATIONS))
    sizes = {c: draw(st.integers(1, 3)) for c in "ijkb"}
    lhs = equation.split("->")[0].split(",")
    ellipsis = draw(shapes(0, 2, 1, 3))
    arrays = []
    for sub in lhs:
        before, _, after = sub.partition("...")
        batch = ellipsis[draw(st.integers(0, len(ellipsis))) :] if "..." in sub else ()
        batch = tuple(1 if draw(st.integers(0, 3)) == 0 else d for d in batch)
        shape = tuple(sizes[c] for c in before) + batch + tuple(sizes[c] for c in after)
        arrays.append(draw(tensors(dtype, shape, _elements(dtype))))
    return SampleInput((equation, *arrays), grad_argnums=tuple(range(1, len(arrays) + 1)))


@st.composite
def _tensordot_draw(draw, dtype):
    a = draw(tensors(dtype, shapes(0, 3, 1, 3), _elements(dtype)))
    if draw(st.booleans()):
        axes = draw(st.integers(0, a.ndim))
        b_shape = a.shape[a.ndim - axes :] + draw(shapes(0, 2, 1, 3))
    else:
        count = draw(st.integers(0, a.ndim))
        axes_a = draw(st.permutations(range(a.ndim)))[:count]
        extra = draw(shapes(0, 2, 1, 3))
        axes_b = draw(st.permutations(range(count + len(extra))))[:count]
        b_shape = [None] * (count + len(extra))
        for i, j in zip(axes_a, axes_b):
            b_shape[j] = a.shape[i]
        rest = iter(extra)
        b_shape = tuple(d if d is not None else next(rest) for d in b_shape)
        axes = (list(axes_a), list(axes_b))
    b = draw(tensors(dtype, b_shape, _elements(dtype)))
    return SampleInput((a, b), {"axes": axes}, grad_argnums=(0, 1))


def _linalg_opinfos():
    return [
        OpInfo(
            "matmul",
            tl.matmul,
            np.matmul,
            _matmul_draw,
            op_types=("BatchMatMulV2",),
            dtypes=NUMERIC,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones((4, 5))),
                    exc=ValueError,
                    match=r"BatchMatMulV2: inner dimensions do not match: \(2, 3\) @ \(4, 5\) "
                    r"\(3 != 4\) \(inputs x: shape \(2, 3\) float64, y: shape \(4, 5\) "
                    r"float64\)",
                ),
                ErrorInput(
                    (np.ones((2, 2, 3)), np.ones((3, 3, 2))),
                    exc=ValueError,
                    match=r"BatchMatMulV2: shapes \(2,\) and \(3,\) are not broadcastable",
                ),
                ErrorInput(
                    (np.ones(()), np.ones(3)),
                    exc=ValueError,
                    match=r"BatchMatMulV2: matmul of a scalar \(shapes \(\) and \(3,\)\)",
                ),
            ),
        ),
        OpInfo(
            "einsum",
            tl.einsum,
            np.einsum,
            _einsum_draw,
            op_types=("Einsum",),
            dtypes=FLOATS,
            error_inputs=(
                ErrorInput(
                    ("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5))),
                    exc=ValueError,
                    match=r"Einsum: index 'j' has sizes 3 and 4",
                ),
                ErrorInput(
                    ("ij,jk->ik", np.ones((2, 3))),
                    exc=ValueError,
                    match=r"Einsum: subscripts 'ij,jk->ik' name 2 operands, got 1 \(operands: "
                    r"\(2, 3\) float64\)",
                ),
                ErrorInput(
                    ("ijk->i", np.ones((2, 2))),
                    exc=ValueError,
                    match=r"Einsum: subscript 'ijk' has 3 indices for an operand of shape "
                    r"\(2, 2\)",
                ),
            ),
        ),
        OpInfo(
            "tensordot",
            tl.tensordot,
            np.tensordot,
            _tensordot_draw,
            op_types=("Einsum",),
            dtypes=FLOATS,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones((3, 2))),
                    {"axes": ([1], [0, 1])},
                    ValueError,
                    r"tensordot: axes .* pair 1 with 2 axes \(shapes \(2, 3\) and \(3, 2\)\)",
                ),
            ),
        ),
    ]


# ---------------------------------------------------------------- random (seeded draws vs NumPy's generator)


@st.composite
def _random_draw(draw, dtype):
    shape = draw(st.lists(st.integers(0, 3), max_size=3).map(tuple))
    return SampleInput((shape,), {"seed": draw(st.integers(0, 2**31 - 1)), "dtype": dtype}, grad_argnums=())


def _truncated_ref(shape, seed, dtype):
    rng = np.random.default_rng(seed)
    out = rng.normal(size=shape)
    bad = np.abs(out) > 2
    while bad.any():
        out[bad] = rng.normal(size=int(bad.sum()))
        bad = np.abs(out) > 2
    return out.astype(dtype)


def _random_opinfos():
    def normal_ref(shape, seed, dtype):
        return np.random.default_rng(seed).normal(0.0, 1.0, size=shape).astype(dtype)

    def uniform_ref(shape, seed, dtype):
        return np.random.default_rng(seed).uniform(0.0, 1.0, size=shape).astype(dtype)

    def bernoulli_ref(shape, seed, dtype):
        return (np.random.default_rng(seed).random(size=shape) < 0.5).astype(dtype)

    return [
        OpInfo(
            "random.normal",
            tl.random.normal,
            normal_ref,
            _random_draw,
            op_types=("RandomStandardNormal",),
            differentiable=False,
        ),
        OpInfo(
            "random.uniform",
            tl.random.uniform,
            uniform_ref,
            _random_draw,
            op_types=("RandomUniform",),
            differentiable=False,
            error_inputs=(
                ErrorInput(
                    ((2, -1),), exc=ValueError, match=r"RandomUniform: shape \(2, -1\) has a negative dimension"
                ),
            ),
        ),
        OpInfo(
            "random.truncated_normal",
            tl.random.truncated_normal,
            _truncated_ref,
            _random_draw,
            op_types=("TruncatedNormal",),
            differentiable=False,
        ),
        OpInfo(
            "random.bernoulli",
            tl.random.bernoulli,
            bernoulli_ref,
            _random_draw,
            op_types=("RandomBernoulli",),
            differentiable=False,
        ),
        # The same seed gives NumPy's generator's numbers; each distribution with parameters of its own.
        OpInfo(
            "random.exponential",
            lambda shape, seed, dtype: tl.random.exponential(shape, 2.5, dtype=dtype, seed=seed),
            lambda shape, seed, dtype: np.random.default_rng(seed).exponential(2.5, shape).astype(dtype),
            _random_draw,
            op_types=("RandomExponential",),
            differentiable=False,
        ),
        OpInfo(
            "random.gamma",
            lambda shape, seed, dtype: tl.random.gamma(shape, 0.7, 2.0, dtype=dtype, seed=seed),
            lambda shape, seed, dtype: np.random.default_rng(seed).gamma(0.7, 0.5, shape).astype(dtype),
            _random_draw,
            op_types=("RandomGamma",),
            differentiable=False,
        ),
        OpInfo(
            "random.beta",
            lambda shape, seed, dtype: tl.random.beta(shape, 2.0, 0.5, dtype=dtype, seed=seed),
            lambda shape, seed, dtype: np.random.default_rng(seed).beta(2.0, 0.5, shape).astype(dtype),
            _random_draw,
            op_types=("RandomBeta",),
            differentiable=False,
        ),
        OpInfo(
            "random.poisson",
            lambda shape, seed, dtype: tl.random.poisson(shape, 3.5, dtype=dtype, seed=seed),
            lambda shape, seed, dtype: np.random.default_rng(seed).poisson(3.5, shape).astype(dtype),
            _random_draw,
            op_types=("RandomPoisson",),
            dtypes=(_dt.float32, _dt.int32, _dt.int64),
            differentiable=False,
        ),
        OpInfo(
            "random.laplace",
            lambda shape, seed, dtype: tl.random.laplace(shape, -1.0, 0.5, dtype=dtype, seed=seed),
            lambda shape, seed, dtype: np.random.default_rng(seed).laplace(-1.0, 0.5, shape).astype(dtype),
            _random_draw,
            op_types=("RandomLaplace",),
            differentiable=False,
        ),
        OpInfo(
            "random.gumbel",
            lambda shape, seed, dtype: tl.random.gumbel(shape, 1.0, 2.0, dtype=dtype, seed=seed),
            lambda shape, seed, dtype: np.random.default_rng(seed).gumbel(1.0, 2.0, shape).astype(dtype),
            _random_draw,
            op_types=("RandomGumbel",),
            differentiable=False,
        ),
    ]


OPINFOS: list = _math_opinfos() + _reduce_opinfos() + _shape_opinfos() + _linalg_opinfos() + _random_opinfos()


def all_opinfos() -> list:
    """This catalogue plus ``OPINFOS`` of every family module ``tensorlib/testing/op_db_<family>.py``."""
    infos = list(OPINFOS)
    here = os.path.dirname(__file__)
    for name in sorted(n[:-3] for n in os.listdir(here) if n.startswith("op_db_") and n.endswith(".py")):
        infos += list(importlib.import_module(f"{__package__}.{name}").OPINFOS)
    return infos
