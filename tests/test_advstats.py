"""Adversarial checks of the stats, optimizer and transforms APIs: tl.stats.multivariate_normal's cdf at its
edges, tl.optimizers' parameter-group checks, tl.linear_transpose of non-linear functions, tl.all_gather's options.
References: SciPy, closed forms, float64 central differences; torch and JAX where installed (skipped if absent)."""

import numpy as np
import pytest
from scipy import stats

import tensorlib as tl

mvn = tl.stats.multivariate_normal


# ------------------------------------------------------------------ multivariate_normal.cdf / logcdf / logpdf
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # sqrt of the negative variances, before the factor
@pytest.mark.parametrize("method", ["cdf", "logcdf", "logpdf"])
def test_mvn_cov_not_positive_definite_names_the_method_shapes_and_dtype(method):
    cov = -np.eye(3, dtype=np.float32)
    with pytest.raises(np.linalg.LinAlgError, match=f"multivariate_normal.{method}: cov is not positive definite") as e:
        getattr(mvn, method)(np.zeros((2, 3), np.float32), 0.0, cov)
    message = str(e.value)
    assert "x shape (2, 3) float32" in message and "cov shape (3, 3) float32" in message, message
    with pytest.raises(np.linalg.LinAlgError, match="cov is not positive definite.*lower_limit shape"):
        mvn.cdf(np.zeros(3), 0.0, np.ones((3, 3)), lower_limit=np.full(3, -1.0))
    # SciPy refuses it too
    with pytest.raises(ValueError):
        stats.multivariate_normal.cdf(np.zeros(3), np.zeros(3), -np.eye(3))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_mvn_cdf_of_a_nan_is_nan(k):
    cov = 0.5 * np.eye(k) + 0.5
    for i in range(k):
        x = np.zeros(k)
        x[i] = np.nan
        assert np.isnan(mvn.cdf(x, 0.0, cov).numpy()) and np.isnan(mvn.logcdf(x, 0.0, cov).numpy())
        if k != 2:  # SciPy 1.17's bivariate branch returns 0 for a NaN; elsewhere it gives NaN as here
            assert np.isnan(stats.multivariate_normal.cdf(x, np.zeros(k), cov))
    assert np.isnan(mvn.cdf(np.zeros(k), np.full(k, np.nan), cov).numpy())
    # the finite rows of a batch keep their values
    x = np.zeros((2, k))
    x[0, 0] = np.nan
    got = mvn.cdf(x, 0.0, cov).numpy()
    assert np.isnan(got[0]) and abs(got[1] - 1.0 / (k + 1)) < 1e-5  # the equicorrelated orthant: 1 / (k + 1)


# ------------------------------------------------------------------ optimizers: settings that conflict
def _sgd_step(opt, *variables):
    opt.apply([tl.tensor(np.ones(v.shape)) for v in variables], list(variables))


def test_sgd_nesterov_without_momentum_is_refused_in_a_group_added_later():
    a, b = tl.Variable([1.0]), tl.Variable([1.0])
    opt = tl.optimizers.SGD([a], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=r"SGD.add_param_group: parameter group 1: nesterov=True needs a positive"):
        opt.add_param_group({"params": [b], "nesterov": True, "momentum": 0.0})
    assert len(opt.param_groups) == 1  # nothing added: b can join a valid group
    opt.add_param_group({"params": [b], "nesterov": True})  # the constructor's momentum 0.9
    # inherited dampening too: the constructor's 0.3 with a group's nesterov
    opt = tl.optimizers.SGD([a], lr=0.1, momentum=0.9, dampening=0.3)
    with pytest.raises(ValueError, match="parameter group 1: nesterov=True needs .* zero dampening"):
        opt.add_param_group({"params": [b], "nesterov": True})
    # a group of the constructor's list, and its group 0 overriding the defaults
    with pytest.raises(ValueError, match="SGD: parameter group 1: nesterov"):
        tl.optimizers.SGD([{"params": [a]}, {"params": [b], "nesterov": True}], lr=0.1)
    with pytest.raises(ValueError, match="SGD: parameter group 0: nesterov"):
        tl.optimizers.SGD([{"params": [a], "momentum": 0.0}], lr=0.1, momentum=0.9, nesterov=True)


@pytest.mark.parametrize("traced", [False, True])
def test_sgd_nesterov_made_invalid_through_param_groups_is_refused_at_the_step(traced):
    a, b = tl.Variable([1.0]), tl.Variable([2.0])
    opt = tl.optimizers.SGD([{"params": [a]}, {"params": [b], "momentum": 0.5}], lr=0.1, momentum=0.9, nesterov=True)
    step = tl.function(lambda: _sgd_step(opt, a, b)) if traced else (lambda: _sgd_step(opt, a, b))
    step()
    before = (a.numpy().copy(), b.numpy().copy())
    opt.param_groups[1]["momentum"] = 0.0
    with pytest.raises(ValueError, match="SGD.apply: parameter group 1: nesterov=True needs a positive momentum"):
        step()
    np.testing.assert_array_equal(a.numpy(), before[0])  # no variable changed
    np.testing.assert_array_equal(b.numpy(), before[1])
    opt.param_groups[1]["momentum"] = 0.5
    opt.param_groups[0]["dampening"] = 0.1
    with pytest.raises(ValueError, match="parameter group 0: nesterov=True needs .* zero dampening"):
        step()
    opt.param_groups[0]["nesterov"] = False
    step()  # valid again
    assert not np.array_equal(a.numpy(), before[0])


# ------------------------------------------------------------------ linear_transpose of non-linear functions
_SPEC = tl.TensorSpec((3,), "float64")


@pytest.mark.parametrize(
    "f",
    [tl.sin, lambda x: x * x, tl.nn.relu, tl.abs, lambda x: tl.exp(x) - 1.0, tl.stop_gradient],
    ids=["sin", "square", "relu", "abs", "expm1", "stop_gradient"],
)
def test_linear_transpose_of_a_non_linear_function_raises(f):
    # at zeros their vjps were the identity (sin, expm1) or 0: a silent wrong transpose; JAX raises for each
    with pytest.raises(ValueError, match="tl.linear_transpose: .* is not linear"):
        tl.linear_transpose(f, _SPEC)
    with pytest.raises(ValueError, match="is not linear"):
        tl.linear_transpose(lambda x, y: x * y, _SPEC, _SPEC)


def test_linear_transpose_of_linear_and_affine_functions_against_their_matrices():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    c = rng.standard_normal(300).astype(np.float32)
    f_t = tl.linear_transpose(lambda x: tl.tensor(a) @ x + 1e6, tl.TensorSpec((200,), "float32"))  # large constant
    np.testing.assert_allclose(f_t(tl.tensor(c))[0].numpy(), a.T @ c, rtol=1e-4, atol=1e-3)
    f_t = tl.linear_transpose(lambda x: tl.cumsum(3.0 * x - 100.0), tl.TensorSpec((50,), "float16"))
    np.testing.assert_allclose(f_t(tl.ones(50, dtype="float16"))[0].numpy(), 3.0 * np.arange(50, 0, -1), rtol=1e-2)
    # nested arguments and outputs, an integer output and a constant one
    f = lambda d: ({"s": d["x"] * 2.0 + d["y"], "t": tl.sum(d["y"])}, tl.argmax(d["x"]), tl.ones(2, dtype="float64"))
    f_t = tl.linear_transpose(f, {"x": _SPEC, "y": _SPEC})
    (got,) = f_t(
        ({"s": tl.tensor([1.0, 2.0, 3.0], "float64"), "t": tl.tensor(10.0, "float64")}, 0, tl.zeros(2, dtype="float64"))
    )
    np.testing.assert_allclose(got["x"].numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(got["y"].numpy(), [11.0, 12.0, 13.0])


@pytest.mark.parametrize("name", ["conj", "real", "imag", "scale"])
def test_linear_transpose_of_real_linear_complex_functions(name):
    # conj, real and imag are linear over the reals: JAX transposes them (ct -> conj(ct), ct + 0j, -1j * ct)
    f, expected = {
        "conj": (tl.conj, np.conj),
        "real": (tl.real, lambda c: c + 0j),
        "imag": (tl.imag, lambda c: -1j * c),
        "scale": (lambda x: x * (1 + 2j), lambda c: c * (1 + 2j)),
    }[name]
    c = np.array([1 + 2j, 3 - 1j, 0.5j]) if name in ("conj", "scale") else np.array([1.0, 3.0, -2.0])
    got = tl.linear_transpose(f, tl.TensorSpec((3,), "complex128"))(tl.tensor(c))[0].numpy()
    np.testing.assert_allclose(got, expected(c))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jf = {"conj": jax.numpy.conj, "real": jax.numpy.real, "imag": jax.numpy.imag, "scale": lambda x: x * (1 + 2j)}
    np.testing.assert_allclose(got, np.asarray(jax.linear_transpose(jf[name], np.zeros(3, complex))(c)[0]))
