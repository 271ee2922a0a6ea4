"""Contracts (DESIGN §6) over the functions added in the last sessions, and NumPy leftovers.

References are NumPy / SciPy (and closed forms); nothing expected here came from tensorlib itself.
"""

import numpy as np
import pytest

import tensorlib as tl

# ---------------------------------------------------------------- NumPy leftovers


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_argsort_of_a_0d_tensor_is_numpys(axis):
    ref = np.argsort(np.array(3.0), axis=axis)  # array([0]): NumPy sorts a 0-d input as its flattened one
    out = tl.argsort(tl.tensor(3.0), axis=axis)
    assert out.dtype == ref.dtype and out.numpy().tolist() == ref.tolist() and out.shape == ref.shape
    traced = tl.function(lambda x: tl.argsort(x, axis=axis))(np.array(2.0))
    assert traced.numpy().tolist() == ref.tolist()


@pytest.mark.parametrize("axis", [1, -2])
def test_argsort_of_a_0d_tensor_refuses_other_axes(axis):
    with pytest.raises(np.exceptions.AxisError):
        np.argsort(np.array(3.0), axis=axis)
    with pytest.raises(np.exceptions.AxisError, match="argsort"):
        tl.argsort(tl.tensor(3.0), axis=axis)


@pytest.mark.parametrize(
    "arr,mask,values,axis",
    [
        (np.arange(5.0), [True, False, True, False, True], [7.0, 8.0, 9.0], None),
        (np.arange(5.0), [True, False], 9.0, None),  # NumPy does not check the mask's length
        (np.arange(5.0), [False, True, False, False, False], [1.0, 2.0], None),
        (np.arange(6.0).reshape(2, 3), [True, False], 9.0, 0),
        (np.arange(6.0).reshape(2, 3), [False, False], 9.0, 0),
        (np.arange(6.0).reshape(2, 3), [False, True, True], [1.0, 2.0], 1),
    ],
)
def test_insert_with_a_boolean_mask_is_numpy_2s(arr, mask, values, axis):
    mask = np.array(mask)
    ref = np.insert(arr, mask, values, axis=axis)
    for obj in (mask, tl.tensor(mask)):
        out = tl.insert(tl.tensor(arr), obj, values, axis=axis)
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.parametrize("obj", [np.array(True), np.ones((1, 2), bool)])
def test_insert_with_a_boolean_mask_not_1d_is_a_value_error_as_numpys(obj):
    with pytest.raises(ValueError, match="one dimensional"):
        np.insert(np.arange(5.0), obj, 1.0)
    with pytest.raises(ValueError, match=r"insert: boolean array argument obj must be one dimensional"):
        tl.insert(tl.tensor(np.arange(5.0)), obj, 1.0)


def _polynomials():
    rng = np.random.default_rng(1)
    out = [[1.0, -3.0, 2.0, 0.0, 0.0], [0.0, 1.0, -6.0, 11.0, -6.0, 0.0], [1.0, 5.0, 0.0, 3.0, 0.0, 0.0, 0.0]]
    for _ in range(40):
        p = rng.standard_normal(rng.integers(2, 8))
        out.append(np.concatenate([p, np.zeros(rng.integers(0, 3))]))
    return out


def test_roots_come_in_numpys_order():
    for p in _polynomials():
        for dtype, tol in ((np.float64, 1e-9), (np.float32, 1e-4)):
            q = np.asarray(p, dtype)
            ref = np.roots(q)
            out = tl.roots(tl.tensor(q)).numpy()
            assert out.shape == ref.shape, p
            np.testing.assert_allclose(out, ref, atol=tol, rtol=tol, err_msg=str(p))


def test_roots_with_a_trailing_zero_keep_their_gradient_in_numpys_order():
    # p = x^3 - 3x^2 + 2x (+ 0): roots 2, 1, 0 (np.roots' order); d r / d p_j = -r^(3-j) / p'(r).
    p = np.array([1.0, -3.0, 2.0, 0.0])
    r = np.roots(p).real
    dp = np.polyval(np.polyder(p), r)
    ref = -(r[:, None] ** np.arange(3, -1, -1)[None, :]) / dp[:, None]
    jac = tl.jacobian(lambda q: tl.real(tl.roots(q)))(tl.tensor(p)).numpy()
    np.testing.assert_allclose(jac, ref, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- int/bool inputs of float-valued functions

_BIG = 2**24 + 1  # not a float32: a float32 intermediate rounds it to 2**24

INT_TO_FLOAT64 = [
    ("log1mexp", tl.nn.log1mexp, lambda a: np.log(-np.expm1(-a)), [1, 2, 3, _BIG]),
    (
        "sparse_plus",
        tl.nn.sparse_plus,
        lambda a: np.where(a <= -1, 0.0, np.where(a >= 1, a, (a + 1) ** 2 / 4)),
        [-2, 0, 1, _BIG],
    ),
    ("sparse_sigmoid", tl.nn.sparse_sigmoid, lambda a: 0.5 * np.clip(a + 1, 0, 2), [-2, 0, 1, _BIG]),
    ("squareplus", lambda x: tl.nn.squareplus(x, 0.0), lambda a: (a + np.sqrt(a * a)) / 2, [0, 1, 3, _BIG]),
    ("logmeanexp", tl.nn.logmeanexp, lambda a: a.max() + np.log(np.mean(np.exp(a - a.max()))), [1, 2, 3, _BIG]),
    ("standardize", tl.nn.standardize, lambda a: (a - a.mean()) / np.sqrt(a.var() + 1e-5), [1, 2, 3, _BIG]),
]


@pytest.mark.parametrize("name,fn,ref,values", INT_TO_FLOAT64, ids=[c[0] for c in INT_TO_FLOAT64])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_nn_functions_of_integers_and_bools_are_float64_and_not_rounded(name, fn, ref, values, dtype):
    data = np.array(values, np.int64).astype(dtype)
    if dtype is np.bool_ and name == "log1mexp":
        data = np.array([True, True])
    expected = ref(data.astype(np.float64))
    for out in (fn(data), tl.function(fn)(data)):
        assert out.dtype == np.float64, (name, dtype, out.dtype)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-13, atol=1e-13)


# ---------------------------------------------------------------- eager vs traced: linear_transpose


def test_linear_transpose_applied_to_a_traced_cotangent_is_eagers():
    # Its shape/dtype check read the cotangent's value (np.asarray, a getattr default evaluated first), which a
    # traced tensor does not have: a TypeError under tl.function.
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = np.array([1.0, -2.0, 0.5])
    f_t = tl.linear_transpose(lambda x: a @ x, tl.TensorSpec((2,), "float64"))
    np.testing.assert_allclose(f_t(c)[0].numpy(), a.T @ c, rtol=1e-15)
    np.testing.assert_allclose(tl.function(lambda v: f_t(v)[0])(c).numpy(), a.T @ c, rtol=1e-15)
    traced_inside = tl.function(lambda x, v: tl.linear_transpose(lambda u: a @ u, x)(v)[0])
    np.testing.assert_allclose(traced_inside(np.zeros(2), c).numpy(), a.T @ c, rtol=1e-15)
    with pytest.raises(TypeError, match=r"expected \(float64\[3\]\), got \(float64\[2\]\)"):
        f_t(np.zeros(2))


# ---------------------------------------------------------------- Python ints outside the dtype name the argument


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: tl.full_like(np.arange(4, dtype=np.int32), 2**40), r"full_like .*value 1099511627776 does not fit"),
        (lambda: tl.full_like(np.arange(3), 2**64), r"full_like .*value 18446744073709551616 does not fit in int64"),
        (lambda: tl.full_like(np.arange(3), -(2**63) - 1), r"full_like .*value -9223372036854775809 does not fit"),
        (
            lambda: tl.function(lambda a: tl.full_like(a, 2**64))(np.arange(3)),
            r"full_like .*value 18446744073709551616 does not fit in int64",
        ),
        (
            lambda: tl.unique(np.arange(4, dtype=np.int32), size=6, fill_value=2**40),
            r"unique .*fill_value 1099511627776 does not fit in int32",
        ),
        (
            lambda: tl.unique(np.arange(6).reshape(2, 3), size=3, fill_value=2**64, axis=0),
            r"unique .*fill_value 18446744073709551616 does not fit in int64",
        ),
    ],
)
def test_a_python_int_fill_outside_the_dtype_is_an_overflow_error_naming_it(make, match):
    with pytest.raises(OverflowError, match=match):
        make()


def test_fills_that_fit_are_kept_exactly():
    np.testing.assert_array_equal(
        tl.full_like(np.arange(2, dtype=np.int32), 2**40, dtype="int64").numpy(), np.full(2, 2**40)
    )
    np.testing.assert_array_equal(tl.unique(np.arange(4), size=6, fill_value=2**62).numpy(), [0, 1, 2, 3, 2**62, 2**62])


# ---------------------------------------------------------------- the sweep: functions added in the last sessions
#
# Each case: (id, function of tensors, float64 NumPy inputs, whether integer inputs are read as float64).  The
# checks are the DESIGN §6 contracts; values themselves are checked against SciPy/NumPy in each area's tests.

_rng = np.random.default_rng(7)


def _r(*shape):
    return _rng.standard_normal(shape)


def _p(*shape):
    return _rng.uniform(0.5, 3.0, shape)


_B, _A = np.array([1.0, 0.5]), np.array([1.0, -0.3, 0.1])
_SOS = np.array([[1.0, 0.5, 0.2, 1.0, -0.3, 0.1]])
_nn, _sig, _sp, _st = tl.nn, tl.signal, tl.special, tl.stats

SWEEP = [
    ("avg_pool_ceil", lambda x: _nn.avg_pool(x, 3, 2, "VALID", ceil_mode=True), [_r(2, 5, 5, 2)], False),
    ("avg_pool_divisor", lambda x: _nn.avg_pool(x, 2, 2, "VALID", divisor_override=3), [_r(1, 4, 4, 2)], False),
    ("max_pool_dilated", lambda x: _nn.max_pool(x, 2, 1, "VALID", dilations=2), [_r(1, 5, 5, 2)], False),
    ("lp_pool", lambda x: _nn.lp_pool(x, 3.0, 2, 2), [_p(1, 4, 4, 2)], False),
    ("unfold", lambda x: _nn.unfold(x, 2), [_r(2, 3, 4, 4)], False),
    ("fold", lambda x: _nn.fold(x, (3, 3), 2), [_r(2, 8, 4)], False),
    ("pixel_shuffle", lambda x: _nn.pixel_shuffle(x, 2), [_r(1, 2, 2, 8)], False),
    ("local_response_norm", lambda x: _nn.local_response_norm(x, 3), [_r(2, 5, 3, 3)], False),
    ("adaptive_avg_pool", lambda x: _nn.adaptive_avg_pool(x, (2, 3)), [_r(1, 5, 5, 2)], False),
    (
        "fractional_max_pool2d",
        lambda x: _nn.fractional_max_pool2d(x, 2, output_size=(3, 3), random_samples=np.full((1, 2, 2), 0.5)),
        [_r(1, 6, 6, 2)],
        False,
    ),
    ("gaussian_nll_loss", lambda x, t, v: _nn.gaussian_nll_loss(x, t, v), [_r(4, 3), _r(4, 3), _p(4, 3)], True),
    ("poisson_nll_loss", lambda x, t: _nn.poisson_nll_loss(x, t), [_r(4, 3), _p(4, 3)], True),
    ("triplet_margin_loss", lambda a, p, n: _nn.triplet_margin_loss(a, p, n), [_r(4, 3), _r(4, 3), _r(4, 3)], True),
    (
        "cosine_embedding_loss",
        lambda a, b: _nn.cosine_embedding_loss(a, b, np.array([1, -1, 1])),
        [_r(3, 4), _r(3, 4)],
        True,
    ),
    ("huber_loss", lambda a, t: _nn.huber_loss(a, t), [_r(4, 3), _r(4, 3)], True),
    ("kl_div", lambda a, t: _nn.kl_div(a, t), [_r(4, 3), _p(4, 3)], True),
    ("softmin", _nn.softmin, [_r(3, 4)], True),
    ("softshrink", _nn.softshrink, [_r(3, 4)], True),
    ("tanhshrink", _nn.tanhshrink, [_r(3, 4)], True),
    ("pairwise_distance", _nn.pairwise_distance, [_r(3, 4), _r(3, 4)], True),
    ("logmeanexp", lambda x: _nn.logmeanexp(x, axis=-1), [_r(3, 4)], True),
    ("squareplus", _nn.squareplus, [_r(3, 4)], True),
    ("lfilter", lambda x: _sig.lfilter(_B, _A, x), [_r(2, 8)], True),
    ("lfilter_coefficients", lambda b, a: _sig.lfilter(b, a, np.arange(6.0)), [_B, _A], True),
    ("lfilter_zi", lambda b, a: _sig.lfilter_zi(b, a), [_B, _A], True),
    ("filtfilt", lambda x: _sig.filtfilt(_B, _A, x), [_r(2, 16)], True),
    ("sosfilt", lambda x: _sig.sosfilt(_SOS, x), [_r(2, 8)], True),
    ("sosfiltfilt", lambda x: _sig.sosfiltfilt(_SOS, x, padlen=3), [_r(2, 16)], True),
    ("resample", lambda x: _sig.resample(x, 12, axis=-1), [_r(2, 8)], True),
    ("spectrogram", lambda x: _sig.spectrogram(x, nperseg=8)[2], [_r(2, 32)], True),
    ("torch_stft", lambda x: tl.abs(_sig.torch_stft(x, 8, return_complex=True)), [_r(2, 32)], False),
    ("ive", lambda x: _sp.ive(1.5, x), [_p(3)], True),
    ("kve", lambda x: _sp.kve(0.5, x), [_p(3)], True),
    ("polygamma_float_order", lambda x: _sp.polygamma(2.0, x), [_p(3)], True),
    ("lpmv", lambda x: _sp.lpmv(1, 2.5, x), [_rng.uniform(-0.9, 0.9, 3)], True),
    ("binom_ppf", lambda q: _st.binom.ppf(q, 10, 0.3), [_rng.uniform(0.05, 0.95, 3)], False),
    ("nbinom_var", lambda p: _st.nbinom.var(5, p), [_rng.uniform(0.1, 0.9, 3)], False),
    (
        "multivariate_normal_cdf",
        lambda x: _st.multivariate_normal.cdf(x, np.zeros(2), np.array([[1.0, 0.3], [0.3, 1.0]])),
        [_r(3, 2)],
        True,
    ),
    ("segment_max", lambda x: tl.segment_max(x, np.array([0, 1, 0, 2]), 3), [_r(4, 2)], False),
    ("at_add", lambda x, v: tl.tensor(x).at[np.array([1, 1])].add(v), [_r(5), _r(2)], False),
    ("at_max_clip", lambda x, v: tl.tensor(x).at[np.array([0, 9])].max(v, mode="clip"), [_r(5), _r(2)], False),
    ("insert", lambda x: tl.insert(x, np.array([True, False, True]), 5.0), [_r(3)], False),
    ("roots", lambda p: tl.abs(tl.roots(p)), [np.array([1.0, -3.0, 2.0])], False),
    ("complex", lambda a, b: tl.abs(tl.complex(a, b)), [_r(3), _r(3)], True),
    ("sqrtm", lambda x: tl.linalg.sqrtm(x @ tl.matrix_transpose(x) + 3 * np.eye(3)), [_r(3, 3)], True),
]
_IDS = [c[0] for c in SWEEP]


def _outs(result):
    return [o for o in tl.tree.leaves(result)]


def _loss(fn):
    def loss(*xs):
        return sum(tl.sum(tl.real(o)) for o in _outs(fn(*xs)) if o.dtype.kind in "fc")

    return loss


def _views(a):
    yield "c", a
    yield "negative strides", np.flip(np.flip(a).copy())
    yield "fortran", np.asfortranarray(a)


@pytest.mark.parametrize("name,fn,args,ints", SWEEP, ids=_IDS)
def test_sweep_inputs_are_never_written_and_results_are_read_only(name, fn, args, ints):
    expected = [o.numpy().copy() for o in _outs(fn(*args))]
    for kind in ("negative strides", "fortran"):
        given = [dict(_views(a))[kind] for a in args]
        before = [g.copy() for g in given]
        out = _outs(fn(*given))
        tl.grad(_loss(fn), argnums=tuple(range(len(given))))(*given)
        for g, b in zip(given, before):
            np.testing.assert_array_equal(g, b, err_msg=f"{name}: a {kind} input was written")
        for o, e in zip(out, expected):
            np.testing.assert_allclose(o.numpy(), e, rtol=1e-12, atol=1e-12, err_msg=f"{name} {kind}")
            with pytest.raises(ValueError, match="read-only"):
                o.numpy()[...] = 0
    for g, b in zip(given, before):  # writing to the caller's arrays afterwards does not reach the results
        g[...] = 7
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o.numpy(), e, rtol=1e-12, atol=1e-12, err_msg=f"{name}: aliased an input")


@pytest.mark.parametrize("name,fn,args,ints", [c for c in SWEEP if c[3]], ids=[c[0] for c in SWEEP if c[3]])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_sweep_float_valued_functions_of_integers_are_float64(name, fn, args, ints, dtype):
    as_ints = [np.round(2 * a).astype(dtype) for a in args]
    as_ints = [np.where(i == 0, 1, i) if name in ("ive", "kve", "polygamma_float_order") else i for i in as_ints]
    if name == "lpmv":
        as_ints = [np.array([0, 1, -1], dtype)]
    ref = _outs(fn(*[i.astype(np.float64) for i in as_ints]))
    for out in (_outs(fn(*as_ints)), _outs(tl.function(fn)(*as_ints))):
        for o, r in zip(out, ref):
            assert o.dtype == r.dtype and r.dtype in (np.float64, np.complex128), (name, o.dtype, r.dtype)
            np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-13, atol=1e-13, equal_nan=True)
    with pytest.raises(TypeError, match="cannot differentiate with respect to argument 0 of dtype int"):
        tl.grad(_loss(fn))(*as_ints)
    x = tl.tensor(as_ints[0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = _loss(fn)(x, *as_ints[1:])
    with pytest.raises(TypeError, match="cannot differentiate with respect to source 0 of dtype int"):
        tape.gradient(y, x)


# These hold float64 constants (coefficients, a covariance, an identity), which promote float32 as NumPy does.
_FLOAT64_CONSTANTS = {
    "lfilter",
    "lfilter_coefficients",
    "filtfilt",
    "sosfilt",
    "sosfiltfilt",
    "multivariate_normal_cdf",
}
_FLOAT64_CONSTANTS |= {"sqrtm"}
_SINGLE = [c for c in SWEEP if c[0] not in _FLOAT64_CONSTANTS]


@pytest.mark.parametrize("name,fn,args,ints", _SINGLE, ids=[c[0] for c in _SINGLE])
def test_sweep_float32_stays_float32_in_values_and_gradients(name, fn, args, ints):
    single = [a.astype(np.float32) for a in args]
    for o in _outs(fn(*single)):
        assert o.dtype in (np.float32, np.complex64, np.int64), (name, o.dtype)
    grads = tl.grad(_loss(fn), argnums=tuple(range(len(single))))(*single)
    for k, g in enumerate(grads):
        assert g is None or g.dtype == np.float32, f"{name}: gradient of input {k} is {g.dtype} for float32"


@pytest.mark.parametrize("name,fn,args,ints", SWEEP, ids=_IDS)
def test_sweep_eager_traced_and_vmap_agree(name, fn, args, ints):
    eager = _outs(fn(*args))
    traced = _outs(tl.function(fn)(*args))
    for e, t in zip(eager, traced, strict=True):
        assert (e.dtype, e.shape) == (t.dtype, t.shape), name
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"{name} traced")
    argnums = tuple(range(len(args)))
    g_eager = tl.grad(_loss(fn), argnums=argnums)(*args)
    g_traced = tl.function(tl.grad(_loss(fn), argnums=argnums))(*args)
    for e, t in zip(g_eager, g_traced, strict=True):
        assert (e is None) == (t is None), name
        if e is not None:
            np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-9, atol=1e-11, err_msg=f"{name} traced grad")
    batch = np.stack([args[0], 0.5 * args[0] + 0.25])
    vm = _outs(tl.vmap(lambda a: fn(a, *args[1:]))(batch))
    each = [_outs(fn(b, *args[1:])) for b in batch]
    for k, v in enumerate(vm):
        ref = np.stack([e[k].numpy() for e in each])
        np.testing.assert_allclose(v.numpy(), ref, rtol=1e-10, atol=1e-12, err_msg=f"{name} vmap")


def test_sweep_threads_tracing_and_taping_at_once_get_their_own_results():
    import threading

    chosen = [c for c in SWEEP if c[0] in ("lfilter", "lp_pool", "ive", "multivariate_normal_cdf", "resample", "fold")]

    def work(fn, args):
        xs = [tl.tensor(a) for a in args]
        with tl.GradientTape() as tape:
            tape.watch(xs)
            y = _loss(fn)(*xs)
        g = tape.gradient(y, xs[0])
        t = tl.function(tl.grad(_loss(fn)))(*args)
        return float(y), g.numpy(), t.numpy()

    serial = {c[0]: work(c[1], c[2]) for c in chosen}
    barrier, results, errors = threading.Barrier(len(chosen)), {}, []

    def run(name, fn, args):
        try:
            barrier.wait()
            for _ in range(2):
                results[name] = work(fn, args)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((name, e))

    threads = [threading.Thread(target=run, args=c[:3]) for c in chosen]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive()
    assert not errors, errors
    for name, (y, g, t) in serial.items():
        y2, g2, t2 = results[name]
        assert y2 == y, name
        np.testing.assert_array_equal(g2, g, err_msg=name)
        np.testing.assert_array_equal(t2, t, err_msg=name)
        np.testing.assert_allclose(t, g, rtol=1e-10, atol=1e-12, err_msg=name)


# ---------------------------------------------------------------- float16 accumulates in float32


def test_logmeanexp_of_float16_is_rounded_once():
    # logsumexp's float16 result minus log(n) in float16 cancelled: 13 ulps off for rows of 200.
    h = np.random.default_rng(1).uniform(0, 1, (50, 200)).astype(np.float16)
    wide = h.astype(np.float64)
    top = wide.max(axis=1)
    ref = top + np.log(np.mean(np.exp(wide - top[:, None]), axis=1))  # float64 reference
    for out in (tl.nn.logmeanexp(h, axis=1), tl.function(lambda a: tl.nn.logmeanexp(a, axis=1))(h)):
        assert out.dtype == np.float16
        ulps = np.abs(out.numpy().astype(np.float64) - ref) / np.spacing(ref.astype(np.float16)).astype(np.float64)
        assert ulps.max() <= 1.0, ulps.max()
    assert tl.grad(lambda a: tl.sum(tl.nn.logmeanexp(a, axis=1)))(tl.tensor(h)).dtype == np.float16


@pytest.mark.parametrize("order", [2**63, 2**64, 1e30, np.uint64(2**63), [1, 2**64]], ids=str)
@pytest.mark.parametrize("name", ["polygamma", "expn"])
def test_special_orders_outside_int64_are_an_overflow_error_naming_the_order(name, order):
    # 1e30 became order -2**63 (astype wraps) and was called 'not a non-negative integer'; 2**63 ran as uint64.
    with pytest.raises(OverflowError, match=r"^(Polygamma|Expn): the order n .* does not fit in int64$"):
        getattr(tl.special, name)(order, tl.tensor([1.5, 2.5]))


def test_special_orders_given_as_integral_floats_and_unsigned_ints_still_work():
    # polygamma(1, x) is the trigamma function: pi^2/6 at 1, pi^2/2 at 1/2, pi^2/2 - 4 at 3/2 (closed forms)
    x = tl.tensor([1.0, 0.5, 1.5], dtype="float64")
    expected = [np.pi**2 / 6, np.pi**2 / 2, np.pi**2 / 2 - 4]
    for order in (1, 1.0, np.uint64(1), np.array([1, 1, 1], np.uint8)):
        np.testing.assert_allclose(tl.special.polygamma(order, x).numpy(), expected, rtol=1e-13)
