"""The op catalogue on every other backend present: forward vs the NumPy reference, gradients to
second order, traced vs eager, with the same checks as the NumPy catalogue tests.

``array_api_strict`` runs in CI (it is in the test extra): a generic kernel that
uses anything outside the Array API standard fails here, so what passes runs on
CuPy too.  CuPy runs where a GPU is present and is skipped cleanly elsewhere.
An entry is skipped on a backend only for a dtype the backend lacks.  An op
with no kernel on a backend raises a clear error naming the op and the
backend instead of copying through the host: the forward test asserts that
error, and the ops that have no kernel on ``array_api_strict`` are exactly the
short list below.
"""

import contextlib

import numpy as np
import pytest
from hypothesis import Phase, given, reject, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import KinkError, check_forward, check_sample_grads
from tensorlib.testing.backends import available, lacks_kernel, ops_without_kernel, skip_reason
from tensorlib.testing.op_db import all_opinfos

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
BACKENDS = available(extra=True)
INFOS = all_opinfos()
F64 = np.dtype(np.float64)
FORWARD = [(info, np.dtype(d), b) for b in BACKENDS for info in INFOS for d in info.dtypes]
GRADIENTS = [(info, b) for b in BACKENDS for info in INFOS if info.differentiable and F64 in info.dtypes]
TRACED = [(info, b) for b in BACKENDS for info in INFOS]


# Entries whose forward values legitimately differ on a backend: the solver fixes eigenvector and
# singular vector signs differently (cuSOLVER vs LAPACK); CuPy sorts ties stably, NumPy's default
# quicksort does not; CuPy's generator draws other dropout masks than NumPy's for one seed.
# Gradients and traced-vs-eager still run for them.
CONVENTIONS = {("cupy", "linalg.eigh"), ("cupy", "linalg.svd"), ("cupy", "argsort"), ("cupy", "nn.dropout")}


# The ops with no kernel on array_api_strict, each for its reason (tl.ops.explain says it too).  A new op
# joins this list only when its kernel genuinely cannot be written against the Array API standard.
NUMPY_ONLY = {  # SciPy's special functions: the standard has none
    "BesselI0",
    "BesselI0e",
    "BesselI1",
    "BesselI1e",
    "Beta",
    "Betaln",
    "Digamma",
    "Erfc",
    "Erfcinv",
    "Erfcx",
    "Erfinv",
    "Gamma",
    "Igamma",
    "IgammaGradA",
    "Igammac",
    "Lgamma",
    "LogNdtr",
    "Ndtr",
    "Polygamma",
    "Betainc",
    "Betaincc",
    "BetaincGrad",
    "Zeta",
    "RiemannZeta",
    "Binom",
    "Poch",
    "Gammasgn",
    "Expi",
    "Exp1",
    "Expn",
    "Dawsn",
    "Spence",
    "OwensT",
    "Igammainv",
    "Igammacinv",
    "Betaincinv",
    "Betainccinv",
    "BesselK0",
    "BesselK0e",
    "BesselK1",
    "BesselK1e",
    "BesselJ0",
    "BesselJ1",
    "BesselY0",
    "BesselY1",
    "Fresnel",
    "Sici",
    "Shichi",
    "EllipticK",
    "EllipticE",
    "LambertW",
    "Hyp1f1",
    "BesselJv",
    "BesselYv",
    "BesselIv",
    "BesselKv",
    "BesselIve",
    "BesselKve",
    "Lpmv",
    "EllipticF",
    "EllipticEInc",
    "EllipticIncGradM",
    "EllipticJ",
    "ExpnOfOrders",
    "PolygammaOfOrders",
    "BivariateNormalCdf",
    "Eig",  # the standard has no eigensolver for general (non-symmetric) matrices
    "MatrixSquareRoot",  # nor a Schur decomposition (SciPy's sqrtm and logm)
    "MatrixLogarithm",
    "Schur",
    "Hessenberg",
    "LDL",  # nor an LDL^T (Bunch-Kaufman) factorization
}
LOG_TAILS = {
    "LogIgammaFactor",
    "LogBetaincFraction",
    "LogBetaincFractionGrad",
    "Hyp1f1Grad",
    "BetabinomTail",
    "BetabinomCount",
}  # a NumPy series, continued fractions, a sum over the counts
NUMPY_ONLY |= LOG_TAILS


def _lacking(info, backend):
    """The entry's op types that have no kernel on ``backend``."""
    return [op_type for op_type in info.op_types if lacks_kernel(op_type, backend)]


def _skip_unless_runs(info, dtype, backend):
    reason = skip_reason(info, dtype, backend)
    if reason is not None:
        pytest.skip(reason)
    lacking = _lacking(info, backend)
    if lacking:
        pytest.skip(f"{', '.join(lacking)}: no kernel for backend {backend!r} (the forward test asserts the error)")


@contextlib.contextmanager
def _on_backend(backend):
    with tl.backend(backend), np.errstate(all="ignore"):
        yield


def _on(backend, sample):
    """The sample's arrays as tensors on ``backend`` (other arguments unchanged)."""
    return [tl.tensor(a, backend=backend) if isinstance(a, np.ndarray) else a for a in sample.args]


@pytest.mark.skipif(not BACKENDS, reason="no backend besides NumPy is installed here")
@pytest.mark.parametrize("info, dtype, backend", FORWARD, ids=[f"{b}-{i.name}-{d}" for i, d, b in FORWARD])
@settings(max_examples=2, phases=[Phase.explicit, Phase.generate])  # no shrinking: cheap
@given(data=st.data())
def test_forward_matches_numpy_reference_on_backend(info, dtype, backend, data):
    reason = skip_reason(info, dtype, backend)
    if reason is not None:
        pytest.skip(reason)
    if (backend, info.name) in CONVENTIONS:
        pytest.skip(f"{info.name}: vector signs / tie order follow the backend's solver")
    sample = data.draw(info.samples(dtype), label="sample")
    lacking = _lacking(info, backend)
    if lacking:
        # No silent host round trip: one LookupError naming an op the entry lists and the backend.
        with pytest.raises(LookupError, match=rf"^({'|'.join(lacking)}): no kernel for backend '{backend}'"):
            with _on_backend(backend):
                info.op(*_on(backend, sample), **sample.kwargs)
        return
    with _on_backend(backend):
        check_forward(info.op, sample, info.ref, *info.tolerances(dtype), name=f"{info.name} on {backend}")
        for out in tl.tree.leaves(info.op(*_on(backend, sample), **sample.kwargs)):
            assert out.backend.name == backend, f"{info.name}: an output landed on {out.backend.name}"


@pytest.mark.skipif(not BACKENDS, reason="no backend besides NumPy is installed here")
@pytest.mark.parametrize("info, backend", GRADIENTS, ids=[f"{b}-{i.name}" for i, b in GRADIENTS])
@settings(max_examples=1, phases=[Phase.explicit, Phase.generate])  # no shrinking: cheap
@given(data=st.data())
def test_gradients_float64_order_2_on_backend(info, backend, data):
    _skip_unless_runs(info, F64, backend)
    sample = data.draw(info.samples(F64), label="sample")
    sample.args = tuple(_on(backend, sample))  # check_grads differentiates on the tensors' backend
    try:
        with _on_backend(backend):
            check_sample_grads(
                info.op,
                sample,
                order=2 if info.second_order else 1,
                modes=("rev", "fwd"),
                atol=info.grad_atol,
                rtol=info.grad_rtol,
                name=f"{info.name} on {backend}",
            )
    except KinkError:
        if not info.kinks:
            raise
        reject()


@pytest.mark.skipif(not BACKENDS, reason="no backend besides NumPy is installed here")
@pytest.mark.parametrize("info, backend", TRACED, ids=[f"{b}-{i.name}" for i, b in TRACED])
@settings(max_examples=1, phases=[Phase.explicit, Phase.generate])  # no shrinking: cheap
@given(data=st.data())
def test_traced_matches_eager_on_backend(info, backend, data):
    dtype = F64 if F64 in info.dtypes else np.dtype(info.dtypes[0])
    _skip_unless_runs(info, dtype, backend)
    sample = data.draw(info.samples(dtype), label="sample")
    positions, call = sample.split(info.op)

    tensors = [tl.tensor(sample.args[k], backend=backend) for k in positions]
    with _on_backend(backend):  # ops without tensor inputs (random draws) land there too
        eager = tl.tree.leaves(call(*tensors))
        traced = tl.tree.leaves(tl.function(call)(*tensors))
    atol, rtol = info.tolerances(dtype)
    for k, (e, t) in enumerate(zip(eager, traced)):
        assert t.backend.name == backend and (e.dtype, tuple(e.shape)) == (t.dtype, tuple(t.shape)), info.name
        np.testing.assert_allclose(
            t.numpy(), e.numpy(), atol=atol, rtol=rtol, equal_nan=True, err_msg=f"{info.name} on {backend} output {k}"
        )


# ---------------------------------------------------------------- array_api_strict: the backend itself


def _strict():
    pytest.importorskip("array_api_strict")
    return tl.backends.get("array_api_strict")


def test_strict_tensors_keep_numpy_dtypes_and_come_back_to_the_host():
    strict = _strict()
    x = tl.tensor(np.array([[1.0, -2.0]], np.float32), backend="array_api_strict")
    y = tl.sum(tl.abs(x) * 2.0, axis=1)
    assert x.backend is strict and y.backend is strict and y.dtype == np.float32
    assert type(y._value).__module__.startswith("array_api_strict")
    np.testing.assert_array_equal(y.numpy(), [6.0])
    assert tl.tensor(y, backend="numpy").backend is tl.backends.numpy


def test_strict_backend_rejects_float16_naming_it():
    _strict()
    with pytest.raises(TypeError, match="backend 'array_api_strict' has no float16"):
        tl.tensor(np.ones(2, np.float16), backend="array_api_strict")


def test_numpy_only_op_raises_naming_op_and_backend_and_explain_says_so():
    _strict()
    x = tl.tensor(np.array([0.5, 2.0]), backend="array_api_strict")
    with pytest.raises(
        LookupError,
        match=r"^Lgamma: no kernel for backend 'array_api_strict' \(kernels: numpy; it runs on NumPy only "
        r"\(needs scipy.special.gammaln; the Array API standard has no special functions\) and never copies "
        r"through the host\)",
    ):
        tl.special.gammaln(x)
    text = tl.ops.explain("MaxPool")  # the nn kernels have Array API versions (backends/generic_nn)
    assert "array_api_strict: tensorlib.ops.nn.pool._max_pool_generic at " in text and "no kernel" not in text


def test_generic_kernels_are_checked_against_the_standard():
    _strict()
    op = tl.ops.defop("TestStrictNonStandard", inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: xp.cumprod(x))  # NumPy has cumprod; the standard does not
    assert op(tl.tensor([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]
    with pytest.raises(AttributeError, match="cumprod"):
        op(tl.tensor([1.0, 2.0], backend="array_api_strict"))


def test_strict_gradients_and_graphs_stay_on_the_backend():
    _strict()
    x = tl.tensor(np.array([0.3, -1.2]), backend="array_api_strict")
    g = tl.function(tl.grad(lambda x: tl.sum(tl.tanh(x) * x)))(x)
    assert g.backend.name == "array_api_strict"
    t = np.tanh([0.3, -1.2])
    np.testing.assert_allclose(g.numpy(), t + (1 - t * t) * [0.3, -1.2])


def test_ops_without_a_strict_kernel_are_exactly_the_listed_ones_and_explain_says_why():
    _strict()
    assert set(ops_without_kernel("array_api_strict")) == NUMPY_ONLY
    for op_type in sorted(NUMPY_ONLY):
        text = tl.ops.explain(op_type)
        scipy_linalg = ("MatrixSquareRoot", "MatrixLogarithm", "Schur", "Hessenberg", "LDL")
        needs = (
            "LAPACK's geev"
            if op_type == "Eig"
            else "scipy.linalg."
            if op_type in scipy_linalg
            else "a NumPy"
            if op_type in LOG_TAILS
            else "scipy.special."
        )
        assert f"array_api_strict: no kernel (kernels: numpy; it runs on NumPy only (needs {needs}" in text


@pytest.mark.parametrize("op_type", sorted(NUMPY_ONLY))
def test_each_listed_op_raises_naming_op_and_backend_on_strict(op_type):
    _strict()
    op = tl.ops.get(op_type)
    square = op_type in ("Eig", "MatrixSquareRoot", "MatrixLogarithm", "Schur", "Hessenberg", "LDL")
    x = tl.tensor(np.array([[0.25, 0.5], [1.0, 2.0]] if square else [0.25, 0.5]), backend="array_api_strict")
    attrs = {"n": 1} if op_type == "Polygamma" else {}
    args = [x] * len(op.input_names)
    if op_type.endswith("OfOrders"):  # the order n is an integer input
        args[0] = tl.tensor(np.array([1, 2]), backend="array_api_strict")
    with pytest.raises(LookupError, match=rf"^{op_type}: no kernel for backend 'array_api_strict' \(kernels: "):
        op(*args, **attrs)


def test_the_architecture_docs_list_exactly_the_ops_without_a_strict_kernel():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    section = text.split("## Backends: NumPy, array_api_strict, CuPy", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in row.split("|")[1].replace("`", "").replace(" ", "").split(",")}
    assert listed == NUMPY_ONLY
