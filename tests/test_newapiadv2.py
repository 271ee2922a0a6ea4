"""Last session's new APIs attacked again, as an adversary and as a SciPy / Keras / JAX user would use them:
``tl.stats.multivariate_normal.cdf`` at infinite bounds and with a degenerate (zero-variance) component,
``Module.__call__``'s ``training`` given by position, ``tl.random.normal_like``'s parameters, dtypes and keys,
``np.vectorize``'s ``otypes`` on tensors and atomic file writes to a path that names a folder.

References: ``scipy.stats`` values and float64 central differences of them, NumPy formulas written out by hand
(dropout's identity at inference, a normal sample's mean and deviation), ``tl.random.normal``'s own checks of its
parameters, ``numpy.vectorize`` and ``open()``; tf.keras' call context where TensorFlow is installed is described in
the comments only (Keras 3 refuses a positional ``training``).
"""

import numpy as np
import pytest
from _helpers import central_differences

import tensorlib as tl

MVN = tl.stats.multivariate_normal


# ---------------------------------------------------------------- multivariate_normal.cdf
@pytest.mark.parametrize(
    "x, cov",
    [
        ([np.inf, 0.3], [[2.0, 0.5], [0.5, 1.0]]),
        ([-np.inf, 0.3], [[2.0, 0.5], [0.5, 1.0]]),
        ([0.4, np.inf], [[1.5, -0.7], [-0.7, 1.0]]),
        ([np.inf, 0.3], [2.0, 1.0]),
        ([np.inf], [[2.0]]),
        (np.inf, 2.0),
    ],
)
def test_mvn_cdf_gradient_at_an_infinite_bound_is_that_of_the_finite_components(x, cov):
    # With one bound infinite the cdf is that of the other components (or 0): its derivative in the infinite
    # component's mean and variance is 0, and in the others that of the marginal.  The standardized bound inf / s
    # has derivative -inf / s**2 in s, times the density 0 there: NaN (jax.scipy and torch.distributions give NaN
    # too).  Reference: float64 central differences of scipy.stats.multivariate_normal.cdf.
    ss = pytest.importorskip("scipy.stats")
    x, cov = np.array(x, float), np.array(cov, float)
    mean = np.full(x.shape, 0.1)

    def scipy_cdf(m, c):
        full = c if c.ndim == 2 else np.diag(c) if c.ndim == 1 else c
        return ss.multivariate_normal.cdf(x, m, full, abseps=1e-13, releps=1e-13)

    g_mean, g_cov = tl.grad(lambda m, c: MVN.cdf(tl.tensor(x), m, c), argnums=(0, 1))(tl.tensor(mean), tl.tensor(cov))
    np.testing.assert_allclose(g_mean.numpy(), central_differences(lambda m: scipy_cdf(m, cov), mean), atol=1e-7)
    np.testing.assert_allclose(g_cov.numpy(), central_differences(lambda c: scipy_cdf(mean, c), cov), atol=1e-7)
    np.testing.assert_allclose(MVN.cdf(tl.tensor(x), tl.tensor(mean), tl.tensor(cov)).numpy(), scipy_cdf(mean, cov))


@pytest.mark.parametrize("x2, want_marginal", [(0.5, True), (-0.5, False)])
def test_mvn_cdf_of_a_full_cov_with_a_zero_variance_is_a_step_in_that_component(x2, want_marginal):
    # cov [[1, 0], [0, 0]]: the second component is the constant mean, so P(X <= x) = P(X1 <= x1) for x2 above it
    # and 0 below, as scipy.stats.multivariate_normal.cdf(..., allow_singular=True) and tensorlib's own diagonal
    # cov [1, 0] give.  The full cov read rho = 0 / (1 * 0): NaN.
    ss = pytest.importorskip("scipy.special")
    x = tl.tensor(np.array([0.3, x2]))
    want = ss.ndtr(0.3) if want_marginal else 0.0
    got = MVN.cdf(x, tl.zeros(2, "float64"), tl.tensor(np.array([[1.0, 0.0], [0.0, 0.0]])))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(
        MVN.cdf(x, tl.zeros(2, "float64"), tl.tensor(np.array([1.0, 0.0]))).numpy(), want, rtol=1e-14
    )


# ---------------------------------------------------------------- training= given by position
class _Block(tl.Module):
    """A user's layer whose forward takes ``training`` by position, and does not pass it on (Keras' idiom)."""

    def __init__(self):
        super().__init__()
        self.dropout = tl.nn.Dropout(0.5)

    def forward(self, x, training=None, scale=1.0):
        return self.dropout(x) * scale


@pytest.mark.parametrize("traced", [False, True])
def test_a_training_flag_given_by_position_reaches_the_layers_inside(traced):
    # block(x, False) set no call context: the Dropout inside followed its own train() mode and dropped, where
    # block(x, training=False) gives the identity.  tf.keras (2.x) reads training bound by position as by keyword
    # (Keras 3 refuses a positional training); a silent dropout at inference is neither.  Reference: dropout at
    # inference is the identity, in training it zeroes elements and scales the rest by 1 / (1 - rate).
    block = _Block()
    x = np.ones((64, 8))
    call = tl.function(lambda x, mode: block(x, mode, 3.0)) if traced else (lambda x, mode: block(x, mode, 3.0))
    np.testing.assert_array_equal(call(x, False).numpy(), 3.0 * x)
    block.eval()
    dropped = call(x, True).numpy()
    assert set(np.unique(dropped)) == {0.0, 6.0}
    np.testing.assert_array_equal(call(x, None).numpy(), 3.0 * x)  # None: the module's own eval() mode


def test_a_positional_training_that_is_no_flag_is_refused_naming_the_module():
    with pytest.raises(TypeError, match=r"_Block: training must be True, False or None, got 'yes'"):
        _Block()(np.ones(3), "yes")


# ---------------------------------------------------------------- tl.random.normal_like
@pytest.mark.parametrize(
    "mean, stddev, match",
    [(0.0, -1.0, "stddev must be non-negative"), (0.0, np.nan, "stddev must be"), (np.inf, 1.0, "mean must be")],
)
def test_normal_like_checks_its_parameters_as_normal_does(mean, stddev, match):
    # normal_like(x, 0, -1) drew (flipped samples) and a NaN stddev gave NaN samples, where tl.random.normal and
    # NumPy's normal refuse a negative or non-finite scale.
    with pytest.raises(ValueError, match=r"tl.random.normal_like: " + match):
        tl.random.normal_like(tl.zeros((3,)), mean, stddev)
    with pytest.raises(ValueError, match=match.split(" must")[0] + " must be"):
        tl.random.normal((3,), mean, stddev)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_normal_like_keeps_the_dtype_of_x_and_draws_mean_and_stddev(dtype):
    # A NumPy float64 mean made float64 samples of a float32 x (x * float64 promotes); the samples take x's dtype.
    x = tl.zeros((20000,), dtype=dtype)
    tl.random.seed(5)
    samples = tl.random.normal_like(x, np.float64(2.0), np.float64(3.0))
    assert samples.dtype == dtype
    values = samples.numpy().astype(np.float64)
    # the sample mean and deviation of 20000 normal draws: within 5 standard errors
    assert abs(values.mean() - 2.0) < 5 * 3.0 / np.sqrt(values.size)
    assert abs(values.std() - 3.0) < 5 * 3.0 / np.sqrt(2 * values.size) + (0.01 if dtype == "float16" else 0)


def test_normal_like_refuses_a_non_float_x_naming_itself():
    with pytest.raises(TypeError, match=r"tl.random.normal_like: x must be a float tensor .* \(4,\) int32"):
        tl.random.normal_like(tl.zeros((4,), dtype="int32"), 0.0, 1.0)


def test_normal_like_with_a_key_and_no_salt_is_a_function_of_the_key():
    # key= without salt= raised "int() argument must be ... not 'NoneType'" from inside the kernel.
    x, key = tl.zeros((5,), dtype="float64"), tl.tensor(7, dtype="int64")
    first = tl.random.normal_like(x, 0.0, 1.0, key=key).numpy()
    np.testing.assert_array_equal(tl.random.normal_like(x, 0.0, 1.0, key=key).numpy(), first)
    np.testing.assert_array_equal(tl.random.normal_like(x, 0.0, 1.0, key=key, salt=0).numpy(), first)
    assert not np.array_equal(tl.random.normal_like(x, 0.0, 1.0, key=tl.tensor(8, dtype="int64")).numpy(), first)
    traced = tl.function(lambda x, k: tl.random.normal_like(x, 0.0, 1.0, key=k))
    np.testing.assert_array_equal(traced(np.zeros(5), np.int64(7)).numpy(), first)


def test_a_python_float_parameter_beside_a_tensor_one_keeps_float64_precision():
    # tl.random.normal(shape, mean_tensor, 0.3, dtype=float64) scaled by float32(0.3) = 0.30000001192...: a Python
    # number went through a float32 tensor before its cast to the samples' dtype.  Reference: the same seed's
    # standard draws times 0.3 in float64.
    mean = tl.tensor(np.zeros(1000))
    scaled = tl.random.normal((1000,), mean, 0.3, dtype="float64", seed=3).numpy()
    standard = tl.random.normal((1000,), mean, 1.0, dtype="float64", seed=3).numpy()
    np.testing.assert_allclose(scaled, 0.3 * standard, rtol=1e-15)


# ---------------------------------------------------------------- np.vectorize on tensors
@pytest.mark.parametrize("otypes", [[int], "d", [np.float32], [bool]])
def test_vectorize_of_a_tensor_casts_to_otypes_as_numpy(otypes):
    # otypes were ignored on tensors: np.vectorize(f, otypes=[int]) gave 2.6 where NumPy gives 2.
    values = np.array([1.0, -2.0, 0.0, 3.5])
    vectorized = np.vectorize(lambda a: a * 2.6 - 0.3, otypes=otypes)
    want = vectorized(values)
    got = vectorized(tl.tensor(values)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_vectorize_with_otypes_for_two_outputs_and_a_wrong_count():
    vectorized = np.vectorize(lambda a: (a * 1.5, a > 0), otypes=[np.int32, np.float64])
    values = np.array([-1.0, 2.0, 3.0])
    for got, want in zip(vectorized(tl.tensor(values)), vectorized(values)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError, match=r"np.vectorize: otypes .* names 1 outputs, the function returned 2"):
        np.vectorize(lambda a: (a, a), otypes=[np.int64])(tl.tensor(values))


def test_vectorize_traced_with_sizes_known_only_at_run_time():
    # Under tl.function with TensorSpec((None, ...)) np.vectorize(f)(x) raised "'NoneType' object cannot be
    # interpreted as an integer" (the loop's size was multiplied out while tracing).  Reference: NumPy's vectorize.
    x = np.random.default_rng(4).normal(size=(3, 5, 2))
    elementwise = tl.function(lambda t: np.vectorize(lambda a: tl.sin(a) * a)(t))
    graph = elementwise.get_graph(tl.TensorSpec((None, None, 2), "float64"))
    np.testing.assert_allclose(graph(x).numpy(), np.vectorize(lambda a: np.sin(a) * a)(x), rtol=1e-14)
    rows = tl.function(lambda t: np.vectorize(lambda r: tl.sum(r * r), signature="(n)->()")(t))
    graph = rows.get_graph(tl.TensorSpec((None, 5, 2), "float64"))
    np.testing.assert_allclose(graph(x).numpy(), (x * x).sum(-1), rtol=1e-14)
    two = tl.function(lambda s, t: np.vectorize(lambda a, b: a * b)(s, t))
    with pytest.raises(ValueError, match=r"np.vectorize: traced with sizes known only at run time"):
        two.get_graph(tl.TensorSpec((None, 2), "float64"), tl.TensorSpec((None,), "float64"))


# ---------------------------------------------------------------- atomic writes to a path naming a folder
def test_a_save_to_a_path_ending_in_a_separator_is_refused_as_open_refuses_it(tmp_path):
    # save_variables("dir/ck/") wrote a file named "ck" (os.path.realpath drops the separator), where open() raises
    # IsADirectoryError for a path that ends in one; nothing may be written.
    target = str(tmp_path / "ck") + "/"
    with pytest.raises(IsADirectoryError):
        open(target, "w")
    with pytest.raises(IsADirectoryError, match=r"save_variables: .*ck/' ends with a separator"):
        tl.save_variables(target, {"w": tl.Variable(np.ones(2))})
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- ldl of complex matrices
def _complex_differences(f, a, eps=1e-6):
    """d f / d Re a + i d f / d Im a by float64 central differences (f real)."""
    grad = np.zeros(a.shape, complex)
    for index in np.ndindex(a.shape):
        step = np.zeros(a.shape)
        step[index] = eps
        grad[index] = (f(a + step) - f(a - step)) / (2 * eps) + 1j * (f(a + 1j * step) - f(a - 1j * step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("hermitian", [True, False])
@pytest.mark.parametrize("lower", [True, False])
def test_ldl_of_complex_matrices_matches_scipy_with_gradients(hermitian, lower):
    # tl.linalg.ldl refused complex matrices ('a documented limit') where scipy.linalg.ldl factors Hermitian
    # (hermitian=True) and complex symmetric ones.  Reference: scipy.linalg.ldl's factors, and float64 central
    # differences of a real function of them (for the pivots found) in the real and imaginary parts of the
    # triangle read; tensorlib's complex gradient is JAX's, the conjugate of d/dRe + i d/dIm.
    sl = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(7)
    a = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
    a[1, 1], a[2, 2] = 0.01, 0.02 + 0.01j  # small pivots: 2 x 2 blocks
    w, v = rng.normal(size=(2, 4, 4)) + 1j * rng.normal(size=(2, 4, 4))
    lu, d, perm = sl.ldl(a, lower=lower, hermitian=hermitian)
    got = tl.linalg.ldl(tl.tensor(a), lower=lower, hermitian=hermitian)
    np.testing.assert_allclose(got[0].numpy(), lu, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1].numpy(), d, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[2].numpy(), perm)
    assert (np.abs(np.diag(d, -1)) > 0).any()  # a 2 x 2 block is exercised

    def loss(z):
        factor, block, p = sl.ldl(z, lower=lower, hermitian=hermitian)
        assert np.array_equal(p, perm)
        return np.sum(np.real(w * factor)) + np.sum(np.imag(v * block))

    def tl_loss(z):
        factor, block, _ = tl.linalg.ldl(z, lower=lower, hermitian=hermitian)
        return tl.sum(tl.real(tl.tensor(w) * factor)) + tl.sum(tl.imag(tl.tensor(v) * block))

    want = np.conj(_complex_differences(loss, a))
    np.testing.assert_allclose(tl.grad(tl_loss)(tl.tensor(a)).numpy(), want, atol=1e-6)


# ---------------------------------------------------------------- Variable.assign against assign_add
def test_an_assign_from_another_thread_is_not_lost_inside_an_assign_add(monkeypatch):
    # assign_add read, added and wrote under a lock that assign did not take: another thread's assign could land
    # between the read and the write and be overwritten (v ended at 0 + 1 after assign(100)).  TF's assign and
    # assign_add are each atomic on the variable: the result is 100 (assign after) or 101 (before), never 1.
    import threading

    from tensorlib import dispatch

    v, done, others = tl.Variable(np.zeros(2)), threading.Event(), []
    write = dispatch.assign_variable

    def interleaved(var, value, how):
        if how == "assign_add" and not others:  # assign_add has read and added: another thread assigns now
            others.append(threading.Thread(target=lambda: (v.assign(np.full(2, 100.0)), done.set())))
            others[0].start()
            done.wait(0.5)
        return write(var, value, how)

    monkeypatch.setattr(dispatch, "assign_variable", interleaved)
    v.assign_add(np.ones(2))
    others[0].join()
    assert v.numpy().tolist() in ([100.0, 100.0], [101.0, 101.0])


# ---------------------------------------------------------------- tl.pad's reflect_type='odd'
@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("shape, width", [((5,), (2, 3)), ((3,), (7, 9)), ((2,), (5, 4)), ((1,), (2, 2)), ((3, 4), 6)])
def test_pad_with_reflect_type_odd_matches_numpy_with_gradients(mode, shape, width):
    # tl.pad(x, w, mode='reflect', reflect_type='odd') was refused ('not supported on tensorlib Tensors') where
    # numpy.pad (and jax.numpy.pad) reflect about the edge value: 2 * edge - reflected, repeated while the widths
    # exceed the axis.  Reference: numpy.pad, and float64 central differences of it.
    x = np.random.default_rng(8).normal(size=shape)
    want = np.pad(x, width, mode=mode, reflect_type="odd")
    got = tl.pad(tl.tensor(x), width, mode=mode, reflect_type="odd")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13, atol=1e-13)
    w = np.random.default_rng(9).normal(size=want.shape)
    grad = tl.grad(lambda t: tl.sum(tl.pad(t, width, mode=mode, reflect_type="odd") * w))(tl.tensor(x)).numpy()
    differences = central_differences(lambda t: np.sum(np.pad(t, width, mode=mode, reflect_type="odd") * w), x)
    np.testing.assert_allclose(grad, differences, atol=1e-7)


def test_pad_with_reflect_type_odd_keeps_integers_and_refuses_an_empty_axis_as_numpy():
    x = np.array([[1, 5, 2], [7, 3, 9]])
    np.testing.assert_array_equal(
        tl.pad(tl.tensor(x), ((1, 2), (4, 3)), mode="reflect", reflect_type="odd").numpy(),
        np.pad(x, ((1, 2), (4, 3)), mode="reflect", reflect_type="odd"),
    )
    with pytest.raises(ValueError):
        np.pad(np.zeros((0, 2)), 1, mode="reflect", reflect_type="odd")
    with pytest.raises(ValueError):
        tl.pad(tl.zeros((0, 2)), 1, mode="reflect", reflect_type="odd")


@pytest.mark.parametrize(
    "x, lower, cov",
    [
        ([0.4, 1.1], [-0.5, -0.2], [[1.0, 0.6], [0.6, 2.0]]),
        ([0.4, 1.1], [0.9, -0.2], [[1.0, -0.3], [-0.3, 0.5]]),  # lower > x in one component: negative
        ([0.4, 1.1], [-np.inf, 0.2], [[1.0, 0.3], [0.3, 1.0]]),
        ([0.4, 1.1], [-0.5, -0.2], [1.0, 2.0]),
        ([0.7], [-0.4], [[1.5]]),
        (0.7, -0.4, 1.5),
    ],
)
def test_mvn_cdf_with_a_lower_limit_and_logcdf_match_scipy(x, lower, cov):
    # multivariate_normal.cdf had no lower_limit (SciPy's P(lower_limit < X <= x), signed where lower_limit > x in
    # an odd number of components) and no logcdf.  Reference: scipy.stats.multivariate_normal.cdf and logcdf, and
    # float64 central differences of the former.
    ss = pytest.importorskip("scipy.stats")
    x, lower, cov = (np.array(v, float) for v in (x, lower, cov))
    mean = np.full(x.shape, 0.1)

    def scipy_cdf(m, c):
        full = np.diag(c) if c.ndim == 1 else c
        return ss.multivariate_normal.cdf(x, m, full, lower_limit=lower, abseps=1e-13, releps=1e-13)

    want = scipy_cdf(mean, cov)
    got = MVN.cdf(tl.tensor(x), tl.tensor(mean), tl.tensor(cov), lower_limit=tl.tensor(lower))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-15)
    if want > 0:
        np.testing.assert_allclose(
            MVN.logcdf(tl.tensor(x), tl.tensor(mean), tl.tensor(cov), lower_limit=tl.tensor(lower)).numpy(),
            np.log(want),
            rtol=1e-12,
        )
    g_mean, g_cov = tl.grad(lambda m, c: MVN.cdf(tl.tensor(x), m, c, lower_limit=tl.tensor(lower)), argnums=(0, 1))(
        tl.tensor(mean), tl.tensor(cov)
    )
    np.testing.assert_allclose(g_mean.numpy(), central_differences(lambda m: scipy_cdf(m, cov), mean), atol=1e-7)
    want = central_differences(lambda c: scipy_cdf(mean, c), cov)
    want = (want + want.T) / 2 if want.ndim == 2 else want  # SciPy reads one triangle; tensorlib's is symmetric
    np.testing.assert_allclose(g_cov.numpy(), want, atol=1e-7)


def test_mvn_logcdf_without_a_lower_limit_is_scipys():
    ss = pytest.importorskip("scipy.stats")
    x, cov = np.array([[0.3, -1.2], [2.0, 0.5]]), np.array([[2.0, -0.4], [-0.4, 1.0]])
    want = ss.multivariate_normal.logcdf(x, np.zeros(2), cov, abseps=1e-13, releps=1e-13)
    np.testing.assert_allclose(MVN.logcdf(tl.tensor(x), 0.0, tl.tensor(cov)).numpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match=r"multivariate_normal.logcdf: .* lower_limit shape \(3,\) float64"):
        MVN.logcdf(tl.tensor(x), 0.0, tl.tensor(cov), lower_limit=tl.zeros(3, "float64"))
