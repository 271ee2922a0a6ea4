"""The complex catalogue: the ops NumPy defines on complex numbers, in complex64 and complex128.

Forward values against NumPy; gradients (complex128, second order, both
modes) follow JAX's convention and are checked by perturbing real and
imaginary parts (``tl.testing.check_grads``).  Weak Python complex scalars
(``x * 2j``) take the tensor's precision, as in NumPy 2 and JAX.

>>> from tensorlib.testing.op_db_complex import OPINFOS
>>> "complex.multiply" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from .op_db_linalg import _cholesky_solve_ref, _each_matrix, _eig_gauge_free, _eig_gauge_free_ref, _expm_ref
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import mutually_broadcastable_shapes

COMPLEX = (_dt.complex64, _dt.complex128)
SHAPES = st.sampled_from([(2, 3), (3,), (), (2, 1, 3)])


def _values(rng, shape, dtype, away_from_zero=0.0):
    z = rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)
    if away_from_zero:
        z = z + away_from_zero * z / np.maximum(np.abs(z), 1e-12)
    return np.asarray(z).astype(dtype)


def _unary(away_from_zero=0.0):
    def samples(dtype):
        return st.builds(
            lambda seed, shape: SampleInput((_values(np.random.default_rng(seed), shape, dtype, away_from_zero),)),
            st.integers(0, 2**16),
            SHAPES,
        )

    return samples


def _binary(away_from_zero=0.0, scalars=True):
    """Two broadcastable complex arrays, a complex array with a real one, or a weak Python scalar."""

    def samples(dtype):
        @st.composite
        def draw(draw):
            rng = np.random.default_rng(draw(st.integers(0, 2**16)))
            kind = draw(st.sampled_from(["arrays", "real y", "scalar"] if scalars else ["arrays", "real y"]))
            if kind == "scalar":
                x = _values(rng, draw(SHAPES), dtype)
                return SampleInput((x, draw(st.sampled_from([2j, 1.5 - 0.5j, 3.0]))), grad_argnums=(0,))
            shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
            y = _values(rng, shape_y, dtype, away_from_zero)
            if kind == "real y":
                y = (np.abs(y) + away_from_zero).astype(_dt.real_dtype(dtype))
            return SampleInput((_values(rng, shape_x, dtype), y), grad_argnums=(0, 1))

        return draw()

    return samples


def _entry(name, fn, ref, samples, op_types, **kwargs):
    return OpInfo(f"complex.{name}", fn, ref, samples, op_types=op_types, dtypes=COMPLEX, atol=1e-5, **kwargs)


def _matrices(dtype, seed, shape):
    rng = np.random.default_rng(seed)
    return (_values(rng, shape, np.complex128) + shape[-1] * 1.5 * np.eye(shape[-1])).astype(dtype)


@st.composite
def _solve_draw(draw, dtype):
    seed, n = draw(st.integers(0, 2**16)), draw(st.sampled_from([1, 2, 3]))
    batch = draw(st.sampled_from([(), (2,)]))
    b = _values(np.random.default_rng(seed + 1), batch + (n, 2), dtype)
    return SampleInput((_matrices(dtype, seed, batch + (n, n)), b), grad_argnums=(0, 1))


@st.composite
def _cholesky_solve_draw(draw, dtype):
    """b and the Cholesky factor (lower, or upper: its conjugate transpose) of a Hermitian positive-definite matrix."""
    seed, n = draw(st.integers(0, 2**16)), draw(st.sampled_from([1, 2, 3]))
    batch, upper = draw(st.sampled_from([(), (2,)])), draw(st.booleans())
    rng = np.random.default_rng(seed)
    c = _values(rng, batch + (n, n), np.complex128)
    factor = np.linalg.cholesky(c @ np.conj(np.swapaxes(c, -1, -2)) + n * np.eye(n))
    factor = np.conj(np.swapaxes(factor, -1, -2)) if upper else factor
    b = _values(rng, batch + (n, 2), dtype)
    return SampleInput((b, factor.astype(dtype)), {"upper": upper}, grad_argnums=(0, 1))


def _square(dtype):
    return st.builds(
        lambda seed, batch, n: SampleInput((_matrices(dtype, seed, batch + (n, n)),)),
        st.integers(0, 2**16),
        st.sampled_from([(), (2,)]),
        st.sampled_from([1, 2, 3]),
    )


def _separated_eigenvalues(dtype):
    """s diag(w) s^-1 with complex eigenvalues w at least 1 apart (eig's gradient divides by their gaps)."""

    def build(seed, batch, n):
        rng = np.random.default_rng(seed)
        w = np.arange(n) * (1.2 + 0.6j) + _values(rng, batch + (n,), np.complex128) * 0.1
        s = _values(rng, batch + (n, n), np.complex128) * 0.25 + np.eye(n)
        return SampleInput(((s * w[..., None, :] @ np.linalg.inv(s)).astype(dtype),))

    return st.builds(build, st.integers(0, 2**16), st.sampled_from([(), (2,)]), st.sampled_from([1, 2, 3]))


def _hermitian(positive=False):
    """Samples u diag(w) u^H with eigenvalues 1.2 apart (eigh's gradient divides by their gaps), positive if asked."""

    def samples(dtype):
        def build(seed, batch, n):
            rng = np.random.default_rng(seed)
            u = np.linalg.qr(_values(rng, batch + (n, n), np.complex128))[0]
            w = np.arange(n) * 1.2 + (1.0 if positive else -n / 2) + rng.uniform(0, 0.3, batch + (n,))
            return SampleInput(((u * w[..., None, :] @ np.conj(np.swapaxes(u, -1, -2))).astype(dtype),))

        return st.builds(build, st.integers(0, 2**16), st.sampled_from([(), (2,)]), st.sampled_from([1, 2, 3]))

    return samples


def _eigh_gauge_free(a):
    """eigh's values and |v|: a test loss must not depend on each eigenvector's arbitrary phase."""
    w, v = tl.linalg.eigh(a)
    return w, tl.abs(v)


def _eigh_gauge_free_ref(a):
    w, v = np.linalg.eigh(a)
    return w, np.abs(v)


def _rectangular(dtype):
    return st.builds(
        lambda seed, batch, m, n: SampleInput((_values(np.random.default_rng(seed), batch + (m, n), dtype),)),
        st.integers(0, 2**16),
        st.sampled_from([(), (2,)]),
        st.sampled_from([1, 2, 3]),
        st.sampled_from([1, 2, 3]),
    )


def _svd_gauge_free(a):
    """svd's values and |u|, |vh| (reduced): a test loss must not depend on the singular vectors' phases."""
    u, s, vh = tl.linalg.svd(a, full_matrices=False)
    return tl.abs(u), s, tl.abs(vh)


def _svd_gauge_free_ref(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.abs(u), s, np.abs(vh)


def _scipy_lu(a):
    from scipy.linalg import lu

    p, l, u = lu(a)
    return p.real.astype(a.real.dtype), l, u  # SciPy's p is real, but complex for a 1 x 1 matrix


def _matmul_draw(dtype):
    return st.builds(
        lambda seed, k: SampleInput(
            (
                _values(np.random.default_rng(seed), (2, k), dtype),
                _values(np.random.default_rng(seed + 1), (k, 3), dtype),
            ),
            grad_argnums=(0, 1),
        ),
        st.integers(0, 2**16),
        st.sampled_from([1, 2, 4]),
    )


def _reduce(fn):
    def samples(dtype):
        return st.builds(
            lambda seed, shape, keepdims: SampleInput(
                (_values(np.random.default_rng(seed), shape, dtype),),
                {"axis": -1 if shape else None, "keepdims": keepdims},
            ),
            st.integers(0, 2**16),
            SHAPES,
            st.booleans(),
        )

    return samples


def _from_parts(dtype):
    """Real and imaginary parts (broadcastable, real ``dtype``) for ``tl.complex``."""

    @st.composite
    def draw(draw):
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        shape_x, shape_y = draw(mutually_broadcastable_shapes(2))
        return SampleInput(tuple(rng.uniform(-2, 2, s).astype(dtype) for s in (shape_x, shape_y)), grad_argnums=(0, 1))

    return draw()


def _from_parts_ref(x, y):
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), np.complex64 if x.dtype == np.float32 else complex)
    out.real, out.imag = x, y
    return out


OPINFOS = [
    OpInfo(
        "complex.from_parts",
        tl.complex,
        _from_parts_ref,
        _from_parts,
        op_types=("Complex",),
        atol=1e-6,
        error_inputs=(
            ErrorInput(
                (np.ones(2, np.complex64), np.ones(2, np.float32)), exc=TypeError, match="^Complex: .*must be real"
            ),
        ),
    ),
    _entry("add", tl.add, np.add, _binary(), ("Add",)),
    _entry("subtract", tl.subtract, np.subtract, _binary(), ("Sub",)),
    _entry("multiply", tl.multiply, np.multiply, _binary(), ("Mul",)),
    _entry("divide", tl.divide, np.divide, _binary(away_from_zero=0.5), ("Div",)),
    _entry("negative", tl.negative, np.negative, _unary(), ("Neg",)),
    _entry("exp", tl.exp, np.exp, _unary(), ("Exp",)),
    _entry("log", tl.log, np.log, _unary(0.3), ("Log",)),  # the branch cut on the negative axis is a kink
    _entry("sqrt", tl.sqrt, np.sqrt, _unary(0.3), ("Sqrt",)),
    _entry("square", tl.square, np.square, _unary(), ("Square",)),
    _entry("abs", tl.abs, np.abs, _unary(0.2), ("Abs",)),
    _entry("sin", tl.sin, np.sin, _unary(), ("Sin",)),
    # The exponent's gradient takes the base's complex log: bases with a negative real part gave 0.
    _entry("power", tl.power, np.power, _binary(away_from_zero=0.5), ("Pow",), kinks=True),
    _entry("sign", tl.sign, np.sign, _unary(0.3), ("Sign",)),  # z / |z|: its gradient is not 0
    # The inverse functions' cuts (on the real or imaginary axis, past +-1 or +-i) are kinks.
    _entry("arcsinh", tl.arcsinh, np.arcsinh, _unary(), ("Asinh",), kinks=True),
    _entry("arcsin", tl.arcsin, np.arcsin, _unary(), ("Asin",), kinks=True),
    _entry("arccos", tl.arccos, np.arccos, _unary(), ("Acos",), kinks=True),
    _entry("arctan", tl.arctan, np.arctan, _unary(0.3), ("Atan",), kinks=True),
    _entry("arccosh", tl.arccosh, np.arccosh, _unary(), ("Acosh",), kinks=True),
    _entry("arctanh", tl.arctanh, np.arctanh, _unary(0.3), ("Atanh",), kinks=True),
    _entry("cosh", tl.cosh, np.cosh, _unary(), ("Cosh",)),
    _entry("log2", tl.log2, np.log2, _unary(0.3), ("Log2",), kinks=True),
    _entry("log10", tl.log10, np.log10, _unary(0.3), ("Log10",), kinks=True),
    _entry("log1p", tl.log1p, np.log1p, _unary(), ("Log1p",), kinks=True),
    _entry("expm1", tl.expm1, np.expm1, _unary(), ("Expm1",)),
    _entry("exp2", tl.exp2, np.exp2, _unary(), ("Exp2",)),
    _entry("sinc", tl.sinc, np.sinc, _unary(), ("Sinc",)),
    # Its poles are at i * pi * (2k + 1), outside the samples' |imag| <= 2.
    _entry("sigmoid", tl.sigmoid, lambda z: 1 / (1 + np.exp(-z)), _unary(), ("Sigmoid",)),
    _entry("cos", tl.cos, np.cos, _unary(), ("Cos",)),
    _entry("tanh", tl.tanh, np.tanh, _unary(), ("Tanh",)),
    _entry("sum", tl.sum, np.sum, _reduce(np.sum), ("Sum",)),
    _entry("prod", tl.prod, np.prod, _reduce(np.prod), ("Prod",)),
    _entry("mean", tl.mean, np.mean, _reduce(np.mean), ()),
    _entry("var", tl.var, np.var, _reduce(np.var), ()),  # real: the mean squared modulus
    _entry("tan", tl.tan, np.tan, _unary(), ("Tan",)),
    _entry("sinh", tl.sinh, np.sinh, _unary(), ("Sinh",)),
    _entry("reciprocal", tl.reciprocal, np.reciprocal, _unary(0.5), ("Reciprocal",)),
    _entry(
        "cumsum",
        lambda z: tl.cumsum(z, axis=-1),
        lambda z: np.cumsum(z, axis=-1),
        lambda dtype: _unary()(dtype).filter(lambda s: s.args[0].ndim > 0),
        ("Cumsum",),
    ),
    _entry(
        "vdot",
        tl.vdot,
        np.vdot,
        lambda dtype: _matmul_draw(dtype).map(
            lambda s: SampleInput((s.args[0], s.args[0][::-1].copy()), grad_argnums=(0, 1))
        ),
        ("Conj",),
    ),
    _entry("matmul", tl.matmul, np.matmul, _matmul_draw, ("BatchMatMulV2",)),
    _entry(
        "einsum",
        lambda a, b: tl.einsum("ij,jk->ik", a, b),
        lambda a, b: np.einsum("ij,jk->ik", a, b),
        _matmul_draw,
        ("Einsum",),
    ),
    _entry("transpose", tl.transpose, np.transpose, _unary(), ("Transpose",)),
    _entry("real", tl.real, np.real, _unary(), ("Real",)),
    _entry("imag", tl.imag, lambda z: np.imag(z).copy(), _unary(), ("Imag",)),
    _entry("conj", tl.conj, np.conj, _unary(), ("Conj",)),
    _entry("angle", tl.angle, np.angle, _unary(0.3), ("Angle",)),  # the cut on the negative axis is a kink
    _entry("to_real", lambda z: tl.cast(z, _dt.real_dtype(z.dtype)), lambda z: z.real.copy(), _unary(), ("Cast",)),
    _entry("linalg.inv", tl.linalg.inv, np.linalg.inv, _square, ("MatrixInverse",)),
    _entry("linalg.solve", tl.linalg.solve, np.linalg.solve, _solve_draw, ("MatrixSolve",)),
    _entry("linalg.det", tl.linalg.det, np.linalg.det, _square, ("MatrixDeterminant",)),
    _entry(
        "linalg.slogdet", tl.linalg.slogdet, lambda a: tuple(np.linalg.slogdet(a)), _square, ("LogMatrixDeterminant",)
    ),
    _entry(
        "linalg.matrix_power",
        lambda a: tl.linalg.matrix_power(a, -2),
        lambda a: np.linalg.matrix_power(a, -2),
        _square,
        (),
    ),
    _entry("linalg.norm", lambda a: tl.linalg.norm(a, axis=-1), lambda a: np.linalg.norm(a, axis=-1), _square, ()),
    _entry(
        "linalg.matrix_exp",
        tl.linalg.matrix_exp,
        _expm_ref,
        _square,
        ("MatrixExponential",),
    ),
    _entry(
        "linalg.eig",
        _eig_gauge_free,
        _eig_gauge_free_ref,
        _separated_eigenvalues,
        ("Eig",),
    ),
    _entry("linalg.eigvals", tl.linalg.eigvals, np.linalg.eigvals, _separated_eigenvalues, ("Eig",)),
    _entry("linalg.cholesky", tl.linalg.cholesky, np.linalg.cholesky, _hermitian(positive=True), ("Cholesky",)),
    _entry(
        "linalg.eigh",
        _eigh_gauge_free,
        _eigh_gauge_free_ref,
        _hermitian(),
        ("SelfAdjointEigV2",),
    ),
    _entry("linalg.svd", _svd_gauge_free, _svd_gauge_free_ref, _rectangular, ("Svd",)),
    _entry("linalg.pinv", tl.linalg.pinv, np.linalg.pinv, _rectangular, ("MatrixPseudoInverse",)),
    _entry("linalg.qr", tl.linalg.qr, lambda a: tuple(np.linalg.qr(a)), _rectangular, ("Qr",)),
    _entry(
        "linalg.lu_solve (trans=2)",
        lambda a, b: tl.linalg.lu_solve(tl.linalg.lu_factor(a), b, trans=2),
        lambda a, b: np.linalg.solve(np.conj(np.swapaxes(a, -1, -2)), b),
        _solve_draw,
        ("Lu", "LuPivotsToPermutation"),
    ),
    _entry(
        "linalg.solve_triangular (trans='C')",
        lambda a, b: tl.linalg.solve_triangular(a, b, trans="C", lower=True),
        lambda a, b: np.linalg.solve(np.conj(np.swapaxes(np.tril(a), -1, -2)), b),
        _solve_draw,
        ("MatrixTriangularSolve", "Conj"),
    ),
    _entry(
        "linalg.cholesky_solve",
        tl.linalg.cholesky_solve,
        _cholesky_solve_ref,
        _cholesky_solve_draw,
        ("MatrixTriangularSolve", "Conj"),
    ),
    _entry("linalg.lu", tl.linalg.lu, lambda a: _each_matrix(_scipy_lu, a), _square, ("Lu",)),
]
