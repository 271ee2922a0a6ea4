"""The catalogue of ``tensorlib/ops/floating.py`` (and fmod, gcd, lcm, positive): NumPy's floating-point
predicates and routines, each against NumPy.

Predicates draw NaNs, infinities and signed zeros; gradients are checked away from each function's
kinks (cbrt at 0, copysign's sign changes, the remainders' jumps).

>>> from tensorlib.testing.op_db_floating import OPINFOS
>>> "isnan" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from .op_db import ELEMENTWISE, FLOATS, _binary, _elements, _unary, shapes
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import mutually_broadcastable_shapes, tensors

INT = (_dt.int32, _dt.int64)
EVERY = ELEMENTWISE + INT + (_dt.bool_,)
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 1e-30]


def _special_values(dtype):
    if np.dtype(dtype).kind == "b":
        return st.booleans()
    if np.dtype(dtype).kind in "iu":
        return st.integers(-3, 3).map(np.dtype(dtype).type)
    return st.sampled_from(SPECIAL).map(np.dtype(dtype).type)


def _predicate_samples(dtype):
    return tensors(dtype, shapes(0, 3), _special_values(dtype)).map(lambda x: SampleInput((x,), grad_argnums=()))


def _complex_refused(op_type):
    return ErrorInput(
        (np.ones(2, np.complex128),),
        exc=TypeError,
        match=rf"{op_type}: {op_type} is not defined for complex numbers .* got complex128 \(inputs x: shape \(2,\) complex128\)",
    )


def _predicate_info(name, op_type, complex_ok=True):
    return OpInfo(
        name,
        getattr(tl, name),
        getattr(np, name),
        _predicate_samples,
        op_types=(op_type,),
        dtypes=EVERY,
        differentiable=False,
        error_inputs=() if complex_ok else (_complex_refused(op_type),),
    )


@st.composite
def _pairs_of_special(draw, dtype):
    shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
    return SampleInput(
        (draw(tensors(dtype, shape_x, _special_values(dtype))), draw(tensors(dtype, shape_y, _special_values(dtype)))),
        grad_argnums=(),
    )


@st.composite
def _isclose_draw(draw, dtype):
    shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
    y = draw(tensors(dtype, shape_y, _special_values(dtype)))
    x = draw(tensors(dtype, shape_x, _special_values(dtype)))
    kwargs = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "rtol": st.sampled_from([0.0, 0.5]),
                "atol": st.sampled_from([0.0, 1.0]),
                "equal_nan": st.booleans(),
            },
        )
    )
    return SampleInput((x, y), kwargs, grad_argnums=())


def _away(lo, hi, away):
    def samples(dtype):
        return tensors(dtype, shapes(0, 3), _elements(dtype, lo, hi, away)).map(lambda x: SampleInput((x,)))

    return samples


@st.composite
def _heaviside_draw(draw, dtype):
    # x at the step (0) or away from it; only y, the value taken at 0, has a gradient.
    shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
    x = draw(tensors(dtype, shape_x, st.sampled_from([-1.5, 0.0, 2.0]).map(np.dtype(dtype).type)))
    y = draw(tensors(dtype, shape_y, _elements(dtype)))
    return SampleInput((x, y), grad_argnums=(1,) if np.dtype(dtype).kind == "f" else ())


@st.composite
def _ldexp_draw(draw, dtype):
    shape_x, shape_n = draw(mutually_broadcastable_shapes(2))
    x = draw(tensors(dtype, shape_x, _elements(dtype)))
    n = draw(tensors(np.int64, shape_n, st.integers(-6, 6).map(np.int64)))
    return SampleInput((x, n), grad_argnums=(0,))


@st.composite
def _integer_pairs(draw, dtype):
    shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
    values = st.integers(-40, 40).map(np.dtype(dtype).type)
    return SampleInput((draw(tensors(dtype, shape_x, values)), draw(tensors(dtype, shape_y, values))), grad_argnums=())


def _integer_info(name, op_type):
    refused = ErrorInput(
        (np.ones(2), np.ones(2)),
        exc=TypeError,
        match=rf"{op_type}: needs integer inputs \(NumPy's gcd and lcm refuse floats and bools\), got float64",
    )
    return OpInfo(
        name,
        getattr(tl, name),
        getattr(np, name),
        _integer_pairs,
        op_types=(op_type,),
        dtypes=INT,
        differentiable=False,
        error_inputs=(refused,),
    )


def _float_power_ref(x, y):
    return np.float_power(x, y)


OPINFOS: list = [
    _predicate_info("isnan", "IsNan"),
    _predicate_info("isinf", "IsInf"),
    _predicate_info("isfinite", "IsFinite"),
    _predicate_info("isposinf", "IsPosInf", complex_ok=False),
    _predicate_info("isneginf", "IsNegInf", complex_ok=False),
    _predicate_info("signbit", "SignBit", complex_ok=False),
    OpInfo(
        "isclose",
        tl.isclose,
        np.isclose,
        _isclose_draw,
        op_types=("IsClose",),
        dtypes=ELEMENTWISE + INT,
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.ones(2, bool), np.ones(2, bool)),
                exc=TypeError,
                match=r"IsClose: needs numbers, got bool",
            ),
        ),
    ),
    OpInfo("trunc", tl.trunc, np.trunc, _predicate_samples, op_types=("Trunc",), dtypes=EVERY, differentiable=False),
    OpInfo("fix", tl.fix, np.fix, _predicate_samples, op_types=("Trunc",), dtypes=EVERY, differentiable=False),
    OpInfo(
        "rint",
        tl.rint,
        lambda x: np.rint(x.astype(np.float64) if x.dtype.kind not in "fc" else x),  # NumPy: bools in float16
        _predicate_samples,
        op_types=("Round",),
        dtypes=ELEMENTWISE + INT,
        differentiable=False,
    ),
    OpInfo(
        "cbrt",
        tl.cbrt,
        np.cbrt,
        _away(-3.0, 3.0, 0.3),
        op_types=("Cbrt",),
        dtypes=ELEMENTWISE + INT,
        error_inputs=(_complex_refused("Cbrt"),),
    ),
    OpInfo(
        "cbrt_special", tl.cbrt, np.cbrt, _predicate_samples, op_types=("Cbrt",), dtypes=FLOATS, differentiable=False
    ),
    OpInfo(
        "copysign",
        tl.copysign,
        np.copysign,
        _binary(y_away_from_zero=0.3),
        op_types=("CopySign",),
        dtypes=ELEMENTWISE + INT,
        kinks=True,
    ),
    OpInfo(
        "copysign_special",
        tl.copysign,
        np.copysign,
        _pairs_of_special,
        op_types=("CopySign",),
        dtypes=FLOATS,
        differentiable=False,
    ),
    OpInfo("heaviside", tl.heaviside, np.heaviside, _heaviside_draw, op_types=("Heaviside",), dtypes=ELEMENTWISE + INT),
    OpInfo(
        "nextafter",
        tl.nextafter,
        np.nextafter,
        _pairs_of_special,
        op_types=("NextAfter",),
        dtypes=ELEMENTWISE + INT,
        differentiable=False,
    ),
    OpInfo(
        "spacing",
        tl.spacing,
        np.spacing,
        _predicate_samples,
        op_types=("Spacing",),
        dtypes=ELEMENTWISE + INT,
        differentiable=False,
    ),
    OpInfo(
        "ldexp",
        tl.ldexp,
        np.ldexp,
        _ldexp_draw,
        op_types=("Ldexp",),
        dtypes=ELEMENTWISE + INT,
        error_inputs=(
            ErrorInput(
                (np.ones(2), np.ones(2)),
                exc=TypeError,
                match=r"Ldexp: the exponent must be an integer tensor \(NumPy refuses floats too\), got float64",
            ),
        ),
    ),
    OpInfo(
        "float_power",
        tl.float_power,
        _float_power_ref,
        _binary((0.3, 3.0)),
        op_types=("FloatPower",),
        dtypes=ELEMENTWISE + INT,
    ),
    OpInfo(
        "fmod",
        tl.fmod,
        np.fmod,
        _binary(y_away_from_zero=0.5),
        op_types=("Fmod",),
        dtypes=FLOATS + INT,
        kinks=True,
    ),
    OpInfo(
        "frexp",
        tl.frexp,
        np.frexp,
        _away(-3.0, 3.0, 0.3),
        op_types=("Frexp",),
        dtypes=ELEMENTWISE + INT,
        kinks=True,
        error_inputs=(_complex_refused("Frexp"),),
    ),
    OpInfo(
        "frexp_special",
        tl.frexp,
        np.frexp,
        _predicate_samples,
        op_types=("Frexp",),
        dtypes=FLOATS,
        differentiable=False,
    ),
    _integer_info("gcd", "Gcd"),
    _integer_info("lcm", "Lcm"),
    OpInfo("positive", tl.positive, np.positive, _unary(), op_types=("Identity",), dtypes=ELEMENTWISE + INT),
    OpInfo("true_divide", tl.true_divide, np.true_divide, _binary(y_away_from_zero=0.3), op_types=("Div",)),
]
