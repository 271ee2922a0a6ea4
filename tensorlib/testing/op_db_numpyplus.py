"""The catalogue of the NumPy functions of ``tensorlib/ops/polynomial.py`` and ``tensorlib/ops/numpy_more.py``:
each against its NumPy namesake, with NumPy's arguments.

Where a result's length depends on exact cancellations (a remainder's leading zeros, repeated roots), the
coefficients come from a NumPy generator seeded by hypothesis: continuous values, so that no sample cancels
exactly and eager (NumPy's lengths) and traced (the shapes' lengths) calls agree.  float32 results are
compared with NumPy's computed in float64 and rounded, where NumPy widens float32 to float64.

>>> from tensorlib.testing.op_db_numpyplus import OPINFOS
>>> "polyfit" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .op_db import FLOATS, NUMERIC
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import tensors


def _keep_float(dtype):
    """A reference's result cast back to ``dtype`` where that is a float (NumPy widens float32 to float64)."""
    return lambda out: out.astype(dtype) if np.dtype(dtype).kind == "f" else out


def _random(draw, dtype, shape, low=-2.0, high=2.0):
    """Continuous values of ``dtype`` from a generator seeded by hypothesis (no exact cancellations)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.uniform(low, high, shape)
    return values.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(values * 2).astype(dtype)


def _leading(draw, dtype, n):
    """``n`` coefficients whose first one is at least 0.5 in magnitude."""
    p = _random(draw, dtype, (n,))
    if n:
        p[0] = np.dtype(dtype).type(draw(st.sampled_from([-1.5, -0.75, 0.5, 1.25, 2.0])))
    return p


@st.composite
def _two_polys_draw(draw, dtype):
    a = draw(tensors(dtype, (draw(st.integers(1, 5)),)))
    b = draw(tensors(dtype, draw(st.sampled_from([(), (1,), (2,), (4,), (6,)]))))
    return SampleInput((a, b), grad_argnums=(0, 1)) if draw(st.booleans()) else SampleInput((b, a), grad_argnums=(0, 1))


def _ref_in(dtype_of, f):
    def ref(*args, **kwargs):
        out = f(*args, **kwargs)
        dtype = dtype_of(*args)
        return tuple(np.asarray(o).astype(dtype) for o in out) if isinstance(out, tuple) else out.astype(dtype)

    return ref


def _float_of(*arrays):
    """The float dtype tensorlib keeps: float32 stays float32, integers become float64."""
    dtype = np.result_type(*arrays)
    return np.float64 if dtype.kind in "biu" else dtype


@st.composite
def _polymul_draw(draw, dtype):
    """Continuous values: a leading zero, stripped in eager mode (NumPy's), stays in a traced call."""
    a = _random(draw, dtype, draw(st.sampled_from([(), (1,), (3,)])))
    b = _random(draw, dtype, (draw(st.integers(1, 4)),))
    return SampleInput((a, b), grad_argnums=(0, 1)) if draw(st.booleans()) else SampleInput((b, a), grad_argnums=(0, 1))


@st.composite
def _polyder_draw(draw, dtype):
    p = draw(tensors(dtype, draw(st.sampled_from([(), (1,), (2,), (3,), (5,)]))))
    return SampleInput((p,), {"m": draw(st.integers(0, 4))})


@st.composite
def _polyint_draw(draw, dtype):
    p = draw(tensors(dtype, draw(st.sampled_from([(), (1,), (2,), (4,)]))))
    m = draw(st.integers(0, 3))
    kind = draw(st.sampled_from(["none", "scalar", "vector"]))
    if kind == "none":
        return SampleInput((p, m))
    k = draw(tensors(dtype, () if kind == "scalar" else (m + draw(st.integers(0, 1)),)))
    return SampleInput((p, m, k), grad_argnums=(0, 2))


@st.composite
def _polydiv_draw(draw, dtype):
    u = _random(draw, dtype, (draw(st.integers(1, 6)),))
    v = _leading(draw, dtype, draw(st.integers(1, 4)))
    return SampleInput((u, v), grad_argnums=(0, 1))


@st.composite
def _roots_draw(draw, dtype):
    """Coefficients of a polynomial with well separated roots (complex pairs too): simple roots keep the
    gradient finite."""
    count = draw(st.integers(1, 4))
    spots = draw(st.permutations(np.linspace(-2.0, 2.0, 9).tolist()))[:count]
    found = []
    for spot in spots:
        if draw(st.booleans()) and len(found) + 2 <= count:
            found += [complex(spot, 0.75), complex(spot, -0.75)]
        elif len(found) < count:
            found.append(complex(spot))
    p = np.real(np.poly(np.array(found))) * draw(st.sampled_from([0.5, 1.0, -2.0]))
    return SampleInput((np.atleast_1d(p).astype(dtype),))


def _sorted_roots(p):
    return tl.sort_complex(tl.roots(p))


def _sorted_roots_ref(p):
    dtype = np.complex64 if p.dtype == np.float32 else np.complex128
    return np.sort_complex(np.roots(p).astype(dtype))


@st.composite
def _poly_draw(draw, dtype):
    return SampleInput((_random(draw, dtype, (draw(st.integers(0, 4)),)),))


@st.composite
def _poly_matrix_draw(draw, dtype):
    """A matrix with distinct real eigenvalues, ``Q diag Q^-1``."""
    n = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q = rng.standard_normal((n, n)) + 3 * np.eye(n)
    z = (q @ np.diag(np.arange(n) - 1.0) @ np.linalg.inv(q)).astype(dtype)
    return SampleInput((z,))


def _poly_ref(z):
    out = np.poly(z)
    return np.asarray(out).astype(_float_of(z))


@st.composite
def _polyfit_draw(draw, dtype):
    deg = draw(st.integers(0, 3))
    n = deg + 1 + draw(st.integers(0, 4))
    x = np.sort(_random(draw, dtype, (n,)))
    x = x + (np.arange(n) * 0.3).astype(dtype)  # distinct points: full rank
    y = _random(draw, dtype, (n,) if draw(st.booleans()) else (n, 2))
    kwargs = {}
    if draw(st.booleans()):
        kwargs["w"] = _random(draw, dtype, (n,), 0.5, 2.0)
    choice = draw(st.sampled_from(["plain", "full", "cov", "unscaled"]))
    if choice == "full":
        kwargs["full"] = True
    elif choice == "cov" and n > deg + 1:
        kwargs["cov"] = True
    elif choice == "unscaled":
        kwargs["cov"] = "unscaled"
    return SampleInput((x, y, deg), kwargs, grad_argnums=(0, 1))


def _polyfit_ref(x, y, deg, **kwargs):
    out = np.polyfit(
        x.astype(np.float64),
        y.astype(np.float64),
        deg,
        **{k: (v.astype(np.float64) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()},
        rcond=len(x) * np.finfo(x.dtype).eps,
    )
    if kwargs.get("full"):
        c, residuals, rank, s, rcond = out
        return c.astype(x.dtype), residuals.astype(x.dtype), np.int32(rank), s.astype(x.dtype), np.array(rcond, x.dtype)
    if isinstance(out, tuple):
        return tuple(o.astype(x.dtype) for o in out)
    return out.astype(x.dtype)


_P_SHAPE_ERROR = r"a 1-d coefficient vector, got {} shape \(2, 2\) \(float64\)"

OPINFOS = [
    OpInfo(
        "polyadd",
        tl.polyadd,
        np.polyadd,
        _two_polys_draw,
        op_types=("PadV2", "Add"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones((2, 2)), np.ones(2)), match="^polyadd: a1 must be " + _P_SHAPE_ERROR.format("a1")),
        ),
    ),
    OpInfo(
        "polysub",
        tl.polysub,
        np.polysub,
        _two_polys_draw,
        op_types=("PadV2", "Sub"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(2), np.ones((2, 2))), match="^polysub: a2 must be " + _P_SHAPE_ERROR.format("a2")),
            ErrorInput((np.ones(2, bool), np.ones(2, bool)), exc=TypeError, match=r"^polysub: bool coefficients"),
        ),
    ),
    OpInfo(
        "polymul",
        tl.polymul,
        np.polymul,
        _polymul_draw,
        op_types=(),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(0), np.ones(2)), match=r"^polymul: a1 has no coefficients \(a1 shape \(0,\)"),
        ),
    ),
    OpInfo(
        "polyder",
        tl.polyder,
        lambda p, m: np.polyder(np.atleast_1d(p), m).astype(p.dtype if p.dtype.kind == "f" else np.int64),
        _polyder_draw,
        op_types=("Mul", "StridedSlice"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(3), -1), match=r"^polyder: the order of the derivative m must be >= 0, got -1"),
            ErrorInput((np.ones((2, 2)),), match="^polyder: p must be " + _P_SHAPE_ERROR.format("p")),
        ),
    ),
    OpInfo(
        "polyint",
        tl.polyint,
        _ref_in(_float_of, lambda p, *a, **k: np.polyint(np.atleast_1d(p), *a, **k)),
        _polyint_draw,
        op_types=("Div", "ConcatV2"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(3), -2), match=r"^polyint: the order of the antiderivative m must be >= 0, got -2"),
            ErrorInput(
                (np.ones(3), 3, np.ones(2)), match=r"^polyint: k must be a scalar or a 1-d array of at least m = 3"
            ),
        ),
    ),
    OpInfo(
        "polydiv",
        tl.polydiv,
        _ref_in(_float_of, lambda u, v: np.polydiv(u.astype(np.float64), v.astype(np.float64))),
        _polydiv_draw,
        op_types=("Div", "Mul"),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(ErrorInput((np.ones(2), np.ones(0)), match=r"^polydiv: v has no coefficients \(v shape \(0,\)"),),
    ),
    *[
        OpInfo(
            name,
            tl.poly,
            _poly_ref,
            draw,
            op_types=op_types,
            dtypes=dtypes,
            atol=1e-5,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)),),
                    match=r"^poly: input must be 1-d or a non-empty square 2-d array, got input shape \(2, 3\)",
                ),
            ),
        )
        for name, draw, op_types, dtypes in (
            ("poly", _poly_draw, ("PadV2", "Mul"), NUMERIC),
            ("poly_matrix", _poly_matrix_draw, ("Eig", "Real"), FLOATS),
        )
    ],
    OpInfo(
        "roots",
        _sorted_roots,
        _sorted_roots_ref,
        _roots_draw,
        op_types=("Eig", "Div"),
        dtypes=FLOATS,
        atol=1e-5,
        grad_atol=1e-4,
        error_inputs=(ErrorInput((np.ones((2, 2)),), match="^roots: p must be " + _P_SHAPE_ERROR.format("p")),),
    ),
    OpInfo(
        "polyfit",
        tl.polyfit,
        _polyfit_ref,
        _polyfit_draw,
        op_types=("BatchMatMulV2", "Svd"),
        dtypes=FLOATS,
        atol=1e-5,
        grad_atol=1e-4,
        error_inputs=(
            ErrorInput((np.ones(3), np.ones(3), -1), match=r"^polyfit: expected deg >= 0, got -1"),
            ErrorInput(
                (np.ones(3), np.ones(4), 1),
                exc=TypeError,
                match=r"^polyfit: expected x and y to have the same length, got x shape \(3,\) \(float64\), y shape \(4,\)",
            ),
            ErrorInput(
                (np.ones(0), np.ones(0), 1), exc=TypeError, match=r"^polyfit: expected a non-empty vector for x"
            ),
            ErrorInput(
                (np.arange(3.0), np.ones(3), 2),
                {"cov": True},
                match=r"^polyfit: the number of data points \(3\) must exceed order \(3\)",
            ),
        ),
    ),
]


# ---------------------------------------------------------------- tensorlib/ops/numpy_more.py, the NumPy windows
@st.composite
def _unwrap_draw(draw, dtype):
    shape = draw(st.sampled_from([(1,), (5,), (3, 4), (2, 0), (2, 3, 2)]))
    if np.dtype(dtype).kind == "f":
        # steps away from +-discont: the corrections are constant there (the kinks are where a step equals it)
        steps = _random(draw, dtype, shape, 0.2, 2.8) * _random(draw, np.int64, shape, 0.3, 1.0).clip(-1, 1)
        steps = np.where(steps == 0, 1.1, steps) * draw(st.sampled_from([1.0, 2.5]))
        p = np.cumsum(steps, axis=-1).astype(dtype)
    else:
        p = draw(tensors(dtype, shape, st.integers(-20, 20)))
    kwargs = {"axis": draw(st.integers(-len(shape), len(shape) - 1))}
    if draw(st.booleans()):
        kwargs["period"] = draw(st.sampled_from([4, 6, 2.5])) if np.dtype(dtype).kind != "f" else 2.5
    if draw(st.booleans()):
        kwargs["discont"] = 4.0
    return SampleInput((p,), kwargs)


def _unwrap_ref(p, **kwargs):
    return np.unwrap(p, **kwargs)


@st.composite
def _modf_draw(draw, dtype):
    shape = draw(st.sampled_from([(), (3,), (2, 3)]))
    if np.dtype(dtype).kind != "f" or draw(st.booleans()):  # NumPy's special values: signed zeros, inf, nan
        values = st.sampled_from([-3.0, -0.0, 0.0, 2.0, np.inf, -np.inf, np.nan]) | st.floats(-4, 4)
        return SampleInput(
            (draw(tensors(dtype, shape, values if np.dtype(dtype).kind == "f" else None)),), grad_argnums=()
        )
    whole = _random(draw, np.int64, shape, -2.0, 2.0)
    return SampleInput(((whole + _random(draw, np.float64, shape, 0.1, 0.9) * np.sign(whole + 0.5)).astype(dtype),))


def _modf_ref(x):
    fraction, whole = np.modf(x)
    return fraction, whole


@st.composite
def _divmod_draw(draw, dtype):
    if np.dtype(dtype).kind == "f":
        x1 = _random(draw, dtype, draw(st.sampled_from([(), (3,), (2, 3)])), -6.0, 6.0)
        x2 = _random(draw, dtype, draw(st.sampled_from([(), (3,)])), 0.5, 2.0) * draw(st.sampled_from([1, -1]))
        x2 = x2.astype(dtype)
        # away from the quotient's jumps, where the remainder has its kinks
        q = x1.astype(np.float64) / x2
        x1 = np.where(np.abs(q - np.round(q)) < 0.05, x1 + 0.25 * x2, x1).astype(dtype)
        return SampleInput((x1, x2), grad_argnums=(0, 1))
    x1 = draw(tensors(dtype, (4,), st.integers(-9, 9)))
    x2 = draw(tensors(dtype, (4,), st.sampled_from([-3, -2, -1, 1, 2, 3])))
    return SampleInput((x1, x2), grad_argnums=())


@st.composite
def _resize_draw(draw, dtype):
    a = draw(tensors(dtype, draw(st.sampled_from([(), (1,), (3,), (2, 2), (0,)]))))
    shape = draw(st.sampled_from([5, (2, 3), (4,), (), (0,), (3, 0), (2, 2, 2)]))
    return SampleInput((a, shape))


@st.composite
def _diagflat_draw(draw, dtype):
    v = draw(tensors(dtype, draw(st.sampled_from([(), (1,), (3,), (2, 2)]))))
    return SampleInput((v,), {"k": draw(st.integers(-2, 2))})


@st.composite
def _extract_draw(draw, dtype):
    arr = draw(tensors(dtype, draw(st.sampled_from([(4,), (2, 3)]))))
    condition = draw(st.one_of(tensors(np.bool_, arr.shape), tensors(np.int64, arr.shape, st.integers(0, 2))))
    return SampleInput((condition, arr), grad_argnums=(1,))


@st.composite
def _indices_from_draw(draw, dtype, square=False):
    n = draw(st.integers(0, 4))
    shape = (n,) * draw(st.integers(2, 3)) if square else (n, draw(st.integers(0, 4)))
    kwargs = {} if square else {"k": draw(st.integers(-2, 2))}
    return SampleInput((np.zeros(shape, dtype),), kwargs, grad_argnums=())


@st.composite
def _window_draw(draw, dtype, with_beta=False):
    M = draw(st.integers(2 if with_beta else -1, 7))  # (kaiser: where i0 runs)
    if with_beta:
        return SampleInput((M, np.array(draw(st.floats(0.0, 8.0)), dtype)), grad_argnums=(1,))
    return SampleInput((M,), grad_argnums=())


def _window_entry(name):
    return OpInfo(
        name,
        getattr(tl, name),
        getattr(np, name),
        _window_draw,
        op_types=(),
        dtypes=(np.dtype(np.float64),),
        differentiable=False,
        error_inputs=(ErrorInput((2.5,), exc=TypeError, match=rf"^{name}: M must be an int, got 2.5"),),
    )


OPINFOS += [
    OpInfo(
        "unwrap",
        tl.unwrap,
        _unwrap_ref,
        _unwrap_draw,
        op_types=("FloorMod", "Cumsum"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(()),), match=r"^unwrap: p must have at least one axis, got p shape \(\) \(float64\)"),
            ErrorInput((np.ones(3, complex),), exc=TypeError, match=r"^unwrap: p must be real numbers"),
            ErrorInput((np.ones((2, 2)),), {"axis": 2}, exc=ValueError, match=r"^unwrap: .*axis 2"),
        ),
    ),
    OpInfo(
        "modf",
        tl.modf,
        _modf_ref,
        _modf_draw,
        op_types=("Trunc", "Select"),
        dtypes=NUMERIC,
        kinks=True,
        error_inputs=(ErrorInput((np.ones(2, complex),), exc=TypeError, match=r"^modf: complex numbers"),),
    ),
    OpInfo(
        "divmod",
        tl.divmod,
        np.divmod,
        _divmod_draw,
        op_types=("FloorDiv", "FloorMod"),
        dtypes=NUMERIC,
        kinks=True,
    ),
    OpInfo(
        "resize",
        tl.resize,
        np.resize,
        _resize_draw,
        op_types=("Tile",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones(2), (2, -1)), match=r"^resize: all elements of new_shape must be non-negative, got \(2, -1\)"
            ),
        ),
    ),
    OpInfo("diagflat", tl.diagflat, np.diagflat, _diagflat_draw, op_types=(), dtypes=NUMERIC),
    OpInfo("extract", tl.extract, np.extract, _extract_draw, op_types=(), dtypes=NUMERIC),
    *[
        OpInfo(
            f"{part}_indices_from",
            getattr(tl, f"{part}_indices_from"),
            lambda a, part=part, **k: tuple(i.astype(np.int64) for i in getattr(np, f"{part}_indices_from")(a, **k)),
            _indices_from_draw,
            dtypes=(np.dtype(np.float64),),
            differentiable=False,
            error_inputs=(
                ErrorInput(
                    (np.ones(3),), match=rf"^{part}_indices_from: input array must be 2-d, got arr shape \(3,\)"
                ),
                ErrorInput((np.ones((1, 2, 2)),), match=rf"^{part}_indices_from: input array must be 2-d"),
            ),
        )
        for part in ("tril", "triu")
    ],
    OpInfo(
        "diag_indices_from",
        tl.diag_indices_from,
        lambda a: tuple(i.astype(np.int64) for i in np.diag_indices_from(a)),
        lambda dtype: _indices_from_draw(dtype, square=True),
        dtypes=(np.dtype(np.float64),),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)),),
                match=r"^diag_indices_from: all dimensions of input must be of equal length, got arr shape \(2, 3\)",
            ),
        ),
    ),
    *[_window_entry(name) for name in ("hamming", "hanning", "blackman", "bartlett")],
    OpInfo(
        "kaiser",
        tl.kaiser,
        np.kaiser,
        lambda dtype: _window_draw(dtype, with_beta=True),
        op_types=("BesselI0",),
        dtypes=(np.dtype(np.float64),),
        error_inputs=(ErrorInput((2.5, 1.0), exc=TypeError, match=r"^kaiser: M must be an int, got 2.5"),),
    ),
]


# ---------------------------------------------------------------- the array API's unique_* (tensorlib/ops/search.py)
@st.composite
def _unique_draw(draw, dtype):
    shape = draw(st.sampled_from([(), (0,), (5,), (2, 3), (3, 1, 2)]))
    kind = np.dtype(dtype).kind
    if kind == "f" and draw(st.booleans()):  # repeats and NaNs; a small move of a repeat changes the shapes
        x = draw(tensors(dtype, shape, st.sampled_from([-1.0, 0.0, 2.0, 2.5, np.nan]).map(np.dtype(dtype).type)))
        return SampleInput((x,), grad_argnums=())
    if kind == "f":  # distinct values, for the gradient checks
        return SampleInput((_random(draw, dtype, shape),))
    x = draw(tensors(dtype, shape, st.sampled_from([-1, 0, 2, 3]).map(np.dtype(dtype).type)))
    return SampleInput((x,), grad_argnums=())


def _unique_entry(name, ref):
    return OpInfo(
        name,
        getattr(tl, name),
        ref,
        _unique_draw,
        op_types=("Unique", "GatherV2"),
        dtypes=NUMERIC + (np.dtype(np.bool_),),
    )


OPINFOS += [
    _unique_entry("unique_all", lambda x: tuple(np.unique_all(x))),
    _unique_entry("unique_counts", lambda x: tuple(np.unique_counts(x))),
    _unique_entry("unique_inverse", lambda x: tuple(np.unique_inverse(x))),
    _unique_entry("unique_values", lambda x: np.sort(np.unique_values(x))),  # NumPy 2.3+: hash order
]


# ---------------------------------------------------------------- histograms (tensorlib/ops/numpy_more.py)
def _points(draw, dtype, shape):
    """Values on a grid of halves (some on the edges, some equal) or continuous ones.  A single point is always on
    the grid: its edges are x +- 0.5, and a continuous x is the middle edge of two bins up to a rounding that differs
    between float32 and float64, so a float32 gradient check's float64 differences put it in the other bin."""
    if draw(st.booleans()) or (len(shape) and shape[0] == 1):
        return draw(tensors(dtype, shape, st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]).map(np.dtype(dtype).type)))
    return _random(draw, dtype, shape)


def _bins_for(draw):
    return draw(st.sampled_from([1, 2, 3, np.array([-1.0, -0.25, 0.5, 2.0])]))


@st.composite
def _histogram_bin_edges_draw(draw, dtype):
    a = _points(draw, dtype, draw(st.sampled_from([(0,), (1,), (6,), (2, 3)])))
    bins = draw(st.sampled_from([1, 4, np.array([-1.0, 0.0, 2.0])]))  # (the estimators: tests/test_numpyplus.py)
    return SampleInput((a, bins, draw(st.none() | st.just((-1.0, 1.5)))), grad_argnums=())


@st.composite
def _histogram2d_draw(draw, dtype):
    n = draw(st.sampled_from([0, 1, 5, 8]))
    x, y = _points(draw, dtype, (n,)), _points(draw, dtype, (n,))
    bins = draw(st.sampled_from([2, [2, 3], [np.array([-1.0, 0.0, 1.0]), 2], np.array([-1.0, 0.0, 0.5, 2.0])]))
    weights = _random(draw, dtype, (n,), 0.5, 2.0) if draw(st.booleans()) else None
    range_ = draw(st.none() | st.just([(-0.75, 1.0), None]))
    # with a range, every point may fall outside it: a density of 0/0, NaN as NumPy's, has no gradient to check
    density = draw(st.booleans()) and n > 0 and range_ is None
    return SampleInput((x, y, bins, range_, density, weights), grad_argnums=(5,) if weights is not None else ())


@st.composite
def _histogramdd_draw(draw, dtype):
    n, dims = draw(st.sampled_from([0, 1, 6])), draw(st.integers(1, 3))
    sample = _points(draw, dtype, (n, dims))
    bins = draw(st.sampled_from([2, "each"]))
    bins = [_bins_for(draw) for _ in range(dims)] if bins == "each" else bins
    weights = _random(draw, dtype, (n,), 0.5, 2.0) if draw(st.booleans()) else None
    density = draw(st.booleans()) and n > 0
    return SampleInput((sample, bins, None, density, weights), grad_argnums=(4,) if weights is not None else ())


def _quiet(f):
    def ref(*args, **kwargs):
        with np.errstate(invalid="ignore", divide="ignore"):
            return f(*args, **kwargs)

    return ref


OPINFOS += [
    OpInfo(
        "histogram_bin_edges",
        tl.histogram_bin_edges,
        np.histogram_bin_edges,
        _histogram_bin_edges_draw,
        op_types=(),
        dtypes=NUMERIC,
        differentiable=False,
        error_inputs=(
            ErrorInput((np.ones(3), 0), match=r"^histogram_bin_edges: bins must be a positive int"),
            ErrorInput(
                (np.ones(3), "auto", None, np.ones(3)),
                exc=TypeError,
                match=r"^histogram_bin_edges: the 'auto' estimator",
            ),
        ),
    ),
    OpInfo(
        "histogram2d",
        tl.histogram2d,
        _quiet(lambda x, y, bins, r, density, w: np.histogram2d(x, y, bins, r, density, w)),
        _histogram2d_draw,
        op_types=("SearchSorted", "GatherV2Grad"),
        dtypes=FLOATS,
        second_order=False,
        error_inputs=(
            ErrorInput(
                (np.ones(3), np.ones(2)), match=r"^histogram2d: x and y must be 1-d of one length, got x shape \(3,\)"
            ),
        ),
    ),
    OpInfo(
        "histogramdd",
        tl.histogramdd,
        _quiet(lambda s, bins, r, density, w: np.histogramdd(s, bins, r, density, w)),
        _histogramdd_draw,
        op_types=("SearchSorted", "GatherV2Grad"),
        dtypes=NUMERIC,
        second_order=False,
        error_inputs=(
            ErrorInput((np.ones((3, 2)), [2, 2, 2]), match=r"^histogramdd: the dimension of bins \(3\) must equal"),
            ErrorInput(
                (np.ones((3, 2)), 2, [(0, 1)]),
                match=r"^histogramdd: range needs one \(min, max\) or None per dimension",
            ),
            ErrorInput(
                (np.ones((3, 2)), "auto"), exc=TypeError, match=r"^histogramdd: bins of dimension 0 must be a number"
            ),
        ),
    ),
]


# ---------------------------------------------------------------- NumPy's writers, functional (JAX's inplace=False)
def _written(np_writer):
    """NumPy's in-place ``np_writer(a, ...)`` as a function returning the written copy."""

    def ref(a, *args, **kwargs):
        out = a.copy()
        np_writer(out, *args, **kwargs)
        return out

    return ref


@st.composite
def _put_draw(draw, dtype):
    a = draw(tensors(dtype, draw(st.sampled_from([(1,), (4,), (2, 3)]))))
    mode = draw(st.sampled_from(["raise", "wrap", "clip"]))
    low, high = (-a.size, a.size - 1) if mode == "raise" else (-2 * a.size, 2 * a.size)
    ind = np.array(draw(st.lists(st.integers(low, high), min_size=0, max_size=5)), np.int64)
    v = draw(tensors(dtype, draw(st.sampled_from([(), (1,), (2,), (6,)]))))
    return SampleInput((a, ind, v, mode), grad_argnums=(0, 2))


@st.composite
def _place_draw(draw, dtype):
    arr = draw(tensors(dtype, draw(st.sampled_from([(4,), (2, 3)]))))
    mask = draw(tensors(np.bool_, arr.shape))
    vals = draw(tensors(dtype, (draw(st.integers(1, 4)),)))
    return SampleInput((arr, mask, vals), grad_argnums=(0, 2))


@st.composite
def _put_along_axis_draw(draw, dtype):
    arr = draw(tensors(dtype, (3, 4)))
    axis = draw(st.sampled_from([0, 1, -1, None]))
    if axis is None:
        indices = np.array(draw(st.lists(st.integers(0, 11), min_size=1, max_size=4)), np.int64)
    else:
        ax = axis % 2
        shape = [3, 4]
        shape[ax] = draw(st.integers(1, 3))
        if draw(st.booleans()):
            shape[1 - ax] = 1
        indices = draw(tensors(np.int64, tuple(shape), st.integers(-arr.shape[ax], arr.shape[ax] - 1)))
    values = draw(tensors(dtype, draw(st.sampled_from([(), indices.shape]))))
    return SampleInput((arr, indices, values, axis), grad_argnums=(0, 2))


@st.composite
def _fill_diagonal_draw(draw, dtype):
    a = draw(tensors(dtype, draw(st.sampled_from([(3, 3), (2, 4), (5, 2), (2, 2, 2), (1, 1)]))))
    val = draw(tensors(dtype, draw(st.sampled_from([(), (1,), (2,)]))))
    return SampleInput((a, val, draw(st.booleans())), grad_argnums=(0, 1))


OPINFOS += [
    OpInfo(
        "put",
        tl.put,
        _written(np.put),
        _put_draw,
        op_types=(),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(3), [3], 1.0), exc=IndexError, match=r"^put: index 3 is out of bounds for size 3"),
            ErrorInput((np.ones(3), [0], 1.0), {"inplace": True}, match=r"^put: tensors are immutable"),
            ErrorInput((np.ones(3, np.int64), [0], 2.5), exc=TypeError, match=r"^put: values of dtype float"),
            ErrorInput((np.ones(3), [0], np.ones(0)), match=r"^put: cannot insert from an empty array"),
        ),
    ),
    OpInfo(
        "place",
        tl.place,
        _written(np.place),
        _place_draw,
        op_types=("Cumsum", "Select"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(3), np.ones(2, bool), [1.0]), match=r"^place: mask and arr must be the same size"),
            ErrorInput((np.ones(3), np.ones(3, bool), np.ones(0)), match=r"^place: cannot insert from an empty array"),
        ),
    ),
    OpInfo(
        "put_along_axis",
        tl.put_along_axis,
        _written(np.put_along_axis),
        _put_along_axis_draw,
        op_types=(),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 2)), np.zeros(2, np.int64), 1.0, 1),
                match=r"^put_along_axis: indices and arr must have the same number of dimensions",
            ),
        ),
    ),
    OpInfo(
        "fill_diagonal",
        tl.fill_diagonal,
        _written(np.fill_diagonal),
        _fill_diagonal_draw,
        op_types=(),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(3), 1.0), match=r"^fill_diagonal: array must be at least 2-d, got a shape \(3,\)"),
            ErrorInput(
                (np.ones((2, 2, 3)), 1.0), match=r"^fill_diagonal: all dimensions of input must be of equal length"
            ),
        ),
    ),
]


# ---------------------------------------------------------------- functions applied to parts of a tensor
_SLICE_FUNCTIONS = {  # name: (tensorlib function, NumPy function) of a 1-d slice
    "sum_of_squares": (lambda v: tl.sum(v * v), lambda v: np.sum(v * v)),
    "extremes": (lambda v: tl.stack([tl.max(v), tl.min(v)]), lambda v: np.stack([v.max(), v.min()])),
    "outer": (lambda v: tl.outer(v, v[:2]), lambda v: np.outer(v, v[:2])),
}


@st.composite
def _apply_along_axis_draw(draw, dtype):
    arr = _random(draw, dtype, draw(st.sampled_from([(3,), (2, 3), (2, 3, 2)])))
    return SampleInput(
        (draw(st.sampled_from(sorted(_SLICE_FUNCTIONS))), draw(st.integers(-arr.ndim, arr.ndim - 1)), arr),
        grad_argnums=(2,),
    )


@st.composite
def _apply_over_axes_draw(draw, dtype):
    a = draw(tensors(dtype, draw(st.sampled_from([(2, 3), (2, 3, 2)]))))
    axes = draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=2, unique=True))
    return SampleInput((draw(st.sampled_from(["sum", "cumsum"])), a, axes), grad_argnums=(1,))


_PIECES = {  # name: (conditions of x, functions) for tensorlib and for NumPy
    "abs_square": (lambda x: [x < 0, x > 0], (lambda v: -v, lambda v: v**2)),
    "otherwise": (lambda x: [x < -0.5], (lambda v: v * 3.0, lambda v: v - 1.0)),
    "constants": (lambda x: [x < 0, x < 1], (1.0, 2.0, lambda v: v)),
}


@st.composite
def _piecewise_draw(draw, dtype):
    x = _random(draw, dtype, draw(st.sampled_from([(), (5,), (2, 3)])))
    return SampleInput((x, draw(st.sampled_from(sorted(_PIECES)))))


def _piecewise(lib):
    def call(x, name):
        conditions, functions = _PIECES[name]
        return lib.piecewise(x, conditions(x), list(functions))

    return call


OPINFOS += [
    OpInfo(
        "apply_along_axis",
        lambda name, axis, arr: tl.apply_along_axis(_SLICE_FUNCTIONS[name][0], axis, arr),
        lambda name, axis, arr: np.apply_along_axis(_SLICE_FUNCTIONS[name][1], axis, arr),
        _apply_along_axis_draw,
        op_types=("Pack",),
        error_inputs=(
            ErrorInput(
                ("outer", 0, np.ones((2, 0))),
                match=r"^apply_along_axis: cannot apply along axis 0 when another dimension is 0",
            ),
        ),
    ),
    OpInfo(
        "apply_over_axes",
        lambda name, a, axes: tl.apply_over_axes(getattr(tl, name), a, axes),
        lambda name, a, axes: np.apply_over_axes(getattr(np, name), a, axes),
        _apply_over_axes_draw,
        op_types=(),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "piecewise",
        _piecewise(tl),
        _piecewise(np),
        _piecewise_draw,
        op_types=(),
        kinks=True,
    ),
]


@st.composite
def _concatenate_draw(draw, dtype):
    """Two or three arrays of any shapes for ``axis=None`` (flattened), or joinable ones along an axis."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = draw(st.integers(1, 3))
    if draw(st.booleans()):
        shapes_ = [draw(st.sampled_from([(), (2,), (2, 3), (0, 2)])) for _ in range(n)]
        axis = None
    else:
        axis = draw(st.sampled_from([0, 1, -1]))
        shapes_ = [(2, 3)[:1] + (draw(st.integers(0, 3)),) if axis else (draw(st.integers(0, 3)), 3) for _ in range(n)]
    arrays = tuple(_random(draw, dtype, shape) for shape in shapes_)
    return SampleInput(arrays, {"axis": axis}, grad_argnums=tuple(range(n)))


OPINFOS += [
    OpInfo(
        "concatenate",
        lambda *arrays, **kwargs: tl.concatenate(arrays, **kwargs),
        lambda *arrays, **kwargs: np.concatenate(arrays, **kwargs),
        _concatenate_draw,
        op_types=("ConcatV2", "Reshape"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones(2), np.ones(2)), {"dtype": "int32"}, TypeError, r"^concatenate: cannot cast"),
        ),
    ),
]


@st.composite
def _grid_draw(draw, dtype):
    """The bounds of two slices: integer steps, or a float step or a complex one (a number of points)."""
    start = draw(st.integers(-3, 2))
    stop, step = start + draw(st.integers(1, 4)), draw(st.sampled_from([1, 2, 0.5, 3j, 1j]))
    if draw(st.booleans()):  # counting down
        start, stop, step = stop, start, -step if isinstance(step, (int, float)) else step
    return SampleInput((start, stop, step), grad_argnums=())


def _grid(grid):
    return lambda start, stop, step: grid[start:stop:step, 0:2]


OPINFOS += [
    OpInfo(
        "copy", tl.copy, np.copy, lambda dtype: st.builds(lambda x: SampleInput((x,)), tensors(dtype)), ("Identity",)
    ),
    OpInfo("mgrid", _grid(tl.mgrid), _grid(np.mgrid), _grid_draw, dtypes=(np.dtype(np.float64),), differentiable=False),
    OpInfo(
        "ogrid",
        lambda *bounds: tl.stack(tl.broadcast_arrays(*_grid(tl.ogrid)(*bounds))),
        lambda *bounds: np.stack(np.broadcast_arrays(*_grid(np.ogrid)(*bounds))),
        _grid_draw,
        dtypes=(np.dtype(np.float64),),
        differentiable=False,
        error_inputs=(ErrorInput(("a", 2, 1), exc=TypeError, match=r"^ogrid: expected slices of numbers"),),
    ),
]
