"""The catalogue of ``tensorlib/ops/elementwise.py``: NumPy's trigonometric, hyperbolic, logarithmic and
binary functions, the complex parts, nan_to_num and ``where`` with one argument, each against NumPy.

Sample ranges keep inputs inside each function's domain (arcsin in (-1, 1), arccosh above 1, logs
of positives) and away from its kinks, except where an entry is marked ``kinks``.

>>> from tensorlib.testing.op_db_elementwise import OPINFOS
>>> "arctan2" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from .op_db import ELEMENTWISE, FLOATS, NUMERIC, _binary, _compare_samples, _elements, _integer_valued, _unary, shapes
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import tensors

INT = (_dt.int64,)


def _away_from_zero(lo, hi, away):
    def samples(dtype):
        return tensors(dtype, shapes(0, 3), _elements(dtype, lo, hi, away)).map(lambda x: SampleInput((x,)))

    return samples


def _unary_info(name, lo=-3.0, hi=3.0, dtypes=ELEMENTWISE, op_type=None, **options):
    return OpInfo(
        name, getattr(tl, name), getattr(np, name), _unary(lo, hi), op_types=(op_type,), dtypes=dtypes, **options
    )


def _with_non_finite(dtype):
    values = st.sampled_from([np.nan, np.inf, -np.inf, 0.5, -2.0]).map(np.dtype(dtype).type)
    kwargs = st.fixed_dictionaries(
        {},
        optional={
            "nan": st.sampled_from([0.0, -1.5]),
            "posinf": st.sampled_from([9.0, 1e3]),
            "neginf": st.sampled_from([-9.0]),
        },
    )
    return st.builds(lambda x, kw: SampleInput((x,), kw, grad_argnums=()), tensors(dtype, shapes(0, 3), values), kwargs)


@st.composite
def _with_nans(draw, dtype):
    shape_x, shape_y = draw(st.sampled_from([((2, 3), (2, 3)), ((3,), (2, 3)), ((), (2,))]))
    values = st.sampled_from([np.nan, 1.0, -2.0, 1.0]).map(np.dtype(dtype).type)
    return SampleInput((draw(tensors(dtype, shape_x, values)), draw(tensors(dtype, shape_y, values))), grad_argnums=())


def _nonzero_samples(dtype):
    values = st.booleans() if np.dtype(dtype).kind == "b" else st.sampled_from([0, 0, 1, -2]).map(np.dtype(dtype).type)
    return tensors(dtype, shapes(1, 3), values).map(lambda x: SampleInput((x,), grad_argnums=()))


def _where_one(condition, *rest):
    return tl.where(condition, *rest)


def _mod_operator(x, y):
    return x % y


def _floordiv_operator(x, y):
    return x // y


def _divmod_operator(x, y):
    return divmod(x, y)


def _bitwise_operators(x, y):
    return x & y, x | y, x ^ y, ~x, y & x, y | x, y ^ x


def _numpy_bitwise_operators(x, y):
    return x & y, x | y, x ^ y, ~x, y & x, y | x, y ^ x


def _integer_samples(dtype):
    return tensors(dtype, shapes(0, 3), _integer_valued(dtype)).map(lambda x: SampleInput((x,), grad_argnums=()))


def _of_bools_int32(ufunc):
    """NumPy's ``ufunc`` giving int32 where it gives int8 (of two bools): tensorlib holds int8 as int32."""

    def reference(*arrays):
        out = np.asarray(ufunc(*arrays))
        return out.astype(_dt.of_array(out.dtype))

    return reference


def _bitwise_info(name, samples, op_type, **options):
    # Floats are an error, as in NumPy (``&`` on floats used to give a logical and).
    inputs = (np.ones(2), np.ones(2))[: 1 if op_type in ("Invert", "BitwiseCount") else 2]
    refused = ErrorInput(inputs, exc=TypeError, match=rf"{op_type}: needs integer or bool inputs .* got float64")
    return OpInfo(
        name,
        getattr(tl, name),
        _of_bools_int32(getattr(np, name)),
        samples,
        op_types=(op_type,),
        dtypes=(_dt.int32, _dt.int64, _dt.bool_),
        differentiable=False,
        error_inputs=(refused,),
        **options,
    )


def _angle_degrees(x):
    return tl.angle(x, deg=True)


OPINFOS: list = [
    _unary_info("tan", -1.2, 1.2, op_type="Tan"),
    _unary_info("sinh", dtypes=ELEMENTWISE + INT, op_type="Sinh"),
    _unary_info("cosh", dtypes=ELEMENTWISE + INT, op_type="Cosh"),
    _unary_info("arcsin", -0.9, 0.9, op_type="Asin"),
    _unary_info("arccos", -0.9, 0.9, op_type="Acos"),
    _unary_info("arctan", dtypes=ELEMENTWISE + INT, op_type="Atan"),
    _unary_info("arcsinh", dtypes=ELEMENTWISE + INT, op_type="Asinh"),
    _unary_info("arccosh", 1.2, 3.0, dtypes=ELEMENTWISE + INT, op_type="Acosh"),
    _unary_info("arctanh", -0.9, 0.9, op_type="Atanh"),
    _unary_info("deg2rad", -200.0, 200.0, dtypes=ELEMENTWISE + INT, op_type="Deg2Rad"),
    _unary_info("rad2deg", dtypes=ELEMENTWISE + INT, op_type="Rad2Deg"),
    _unary_info("log2", 0.2, 3.0, dtypes=ELEMENTWISE + INT, op_type="Log2"),
    _unary_info("log10", 0.2, 3.0, dtypes=ELEMENTWISE + INT, op_type="Log10"),
    _unary_info("exp2", dtypes=ELEMENTWISE + INT, op_type="Exp2"),
    _unary_info("fabs", dtypes=ELEMENTWISE + INT, op_type="Fabs", kinks=True),
    _unary_info("ceil", dtypes=ELEMENTWISE + INT, op_type="Ceil", differentiable=False),
    # Through 0, where the derivative switches to its Taylor series.
    _unary_info("sinc", op_type="Sinc"),
    OpInfo(
        "reciprocal",
        tl.reciprocal,
        np.reciprocal,
        _away_from_zero(-3.0, 3.0, 0.3),
        op_types=("Reciprocal",),
        dtypes=ELEMENTWISE + INT,
    ),
    OpInfo(
        "arctan2",
        tl.arctan2,
        np.arctan2,
        _binary(y_away_from_zero=0.3),
        op_types=("Atan2",),
        dtypes=ELEMENTWISE,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), np.ones(4)),
                exc=ValueError,
                match=r"Atan2: shapes \(2, 3\) and \(4,\) are not broadcastable \(inputs x: "
                r"shape \(2, 3\) float64, y: shape \(4,\) float64\)",
            ),
        ),
    ),
    OpInfo("hypot", tl.hypot, np.hypot, _binary(y_away_from_zero=0.3), op_types=("Hypot",), dtypes=ELEMENTWISE),
    OpInfo(
        "logaddexp", tl.logaddexp, np.logaddexp, _binary((-30.0, 30.0)), op_types=("LogAddExp",), dtypes=ELEMENTWISE
    ),
    OpInfo("logaddexp2", tl.logaddexp2, np.logaddexp2, _binary(), op_types=("LogAddExp2",), dtypes=ELEMENTWISE),
    OpInfo(
        "remainder",
        tl.remainder,
        np.remainder,
        _binary(y_away_from_zero=0.5),
        op_types=("FloorMod",),
        dtypes=FLOATS + INT,
        kinks=True,
    ),
    OpInfo(
        "mod_operator",
        _mod_operator,
        np.remainder,
        _binary(y_away_from_zero=0.5),
        op_types=("FloorMod",),
        dtypes=FLOATS + INT,
        kinks=True,
    ),
    OpInfo(
        "floor_divide",
        tl.floor_divide,
        np.floor_divide,
        _binary(y_away_from_zero=0.5),
        op_types=("FloorDiv",),
        dtypes=FLOATS + INT,
        kinks=True,
    ),
    OpInfo(
        "floordiv_operator",
        _floordiv_operator,
        np.floor_divide,
        _binary(y_away_from_zero=0.5),
        op_types=("FloorDiv",),
        dtypes=FLOATS + INT,
        kinks=True,
    ),
    OpInfo(
        "divmod_operator",
        _divmod_operator,
        np.divmod,
        _binary(y_away_from_zero=0.5),
        op_types=("FloorDiv", "FloorMod"),
        dtypes=FLOATS + INT,
        kinks=True,
    ),
    _bitwise_info("bitwise_and", _compare_samples, "BitwiseAnd"),
    _bitwise_info("bitwise_or", _compare_samples, "BitwiseOr"),
    _bitwise_info("bitwise_xor", _compare_samples, "BitwiseXor"),
    _bitwise_info("invert", _integer_samples, "Invert"),
    _bitwise_info("bitwise_count", _integer_samples, "BitwiseCount"),
    _bitwise_info("left_shift", _compare_samples, "LeftShift"),
    _bitwise_info("right_shift", _compare_samples, "RightShift"),
    OpInfo(
        "shift_operators",
        lambda x, y: (x << y, x >> y, y << x, y >> x),
        lambda x, y: (x << y, x >> y, y << x, y >> x),
        _compare_samples,
        op_types=("LeftShift", "RightShift"),
        dtypes=(_dt.int32, _dt.int64),
        differentiable=False,
    ),
    OpInfo(
        "bitwise_operators",
        _bitwise_operators,
        _numpy_bitwise_operators,
        _compare_samples,
        op_types=("BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert"),
        dtypes=(_dt.int32, _dt.int64, _dt.bool_),
        differentiable=False,
    ),
    OpInfo("fmax", tl.fmax, np.fmax, _binary(), op_types=("Fmax",), dtypes=ELEMENTWISE + INT, kinks=True),
    OpInfo("fmin", tl.fmin, np.fmin, _binary(), op_types=("Fmin",), dtypes=ELEMENTWISE + INT, kinks=True),
    OpInfo("fmax_nan", tl.fmax, np.fmax, _with_nans, op_types=("Fmax",), dtypes=FLOATS, differentiable=False),
    OpInfo("fmin_nan", tl.fmin, np.fmin, _with_nans, op_types=("Fmin",), dtypes=FLOATS, differentiable=False),
    OpInfo("nan_to_num", tl.nan_to_num, np.nan_to_num, _unary(), op_types=("NanToNum",), dtypes=FLOATS + INT),
    OpInfo(
        "nan_to_num_non_finite",
        tl.nan_to_num,
        np.nan_to_num,
        _with_non_finite,
        op_types=("NanToNum",),
        dtypes=ELEMENTWISE,
        differentiable=False,
    ),
    _unary_info("real", dtypes=FLOATS + INT, op_type="Real"),
    _unary_info("imag", dtypes=FLOATS + INT, op_type="Imag"),
    _unary_info("conj", dtypes=FLOATS + INT, op_type="Conj"),
    OpInfo("angle", tl.angle, np.angle, _away_from_zero(-3.0, 3.0, 0.5), op_types=("Angle",), dtypes=FLOATS + INT),
    OpInfo(
        "angle_degrees",
        _angle_degrees,
        lambda x: np.angle(x, deg=True),
        _away_from_zero(-3.0, 3.0, 0.5),
        op_types=("Angle", "Rad2Deg"),
        dtypes=FLOATS,
    ),
    OpInfo(
        "where_one_argument",
        _where_one,
        np.nonzero,
        _nonzero_samples,
        op_types=("Where",),
        dtypes=NUMERIC + (_dt.bool_,),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.ones(()),),
                exc=ValueError,
                match=r"Where: nonzero of a 0-d tensor is not defined .*\(inputs condition: "
                r"shape \(\) float64\)",
            ),
            ErrorInput((np.ones(2), np.ones(2)), exc=TypeError, match=r"where: give both x and y, or neither"),
        ),
    ),
]
