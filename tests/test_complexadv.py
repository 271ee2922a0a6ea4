"""Complex numbers attacked as an adversary: gradients of real losses of complex ops, mixed real/complex
inputs, creation ops with complex bounds, and the errors complex data must give.

References: the gradient convention of docs/complex.md (JAX's: dL/dx - i dL/dy for a real loss L of
z = x + iy) computed by float64 central differences on the real and imaginary parts separately; NumPy's
complex128 values; PyTorch's complex gradients (conjugated) and JAX's where they are installed.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(20261202)


def _complex(shape, scale=1.5):
    return RNG.uniform(-scale, scale, shape) + 1j * RNG.uniform(-scale, scale, shape)


def _numeric_grad(loss, args, argnum, eps=1e-6):
    """dL/dx - i dL/dy of a real-valued NumPy ``loss`` at complex ``args[argnum]`` (dL/dx alone for a real one)."""
    args = [np.array(a) for a in args]
    x = args[argnum]
    grad = np.zeros(x.shape, dtype=x.dtype)
    for index in np.ndindex(x.shape):
        for step, weight in [(1.0, 1.0)] + ([(1j, -1j)] if x.dtype.kind == "c" else []):
            plus, minus = x.copy(), x.copy()
            plus[index] += eps * step
            minus[index] -= eps * step
            lo = loss(*args[:argnum], minus, *args[argnum + 1 :])
            hi = loss(*args[:argnum], plus, *args[argnum + 1 :])
            grad[index] += weight * (hi - lo) / (2 * eps)
    return grad


def _real_loss(weights, xp):
    """A real loss of a complex result that sees its modulus, real and imaginary parts."""

    def loss(out):
        real = xp.real(out) if xp is np else tl.real(out)
        imag = xp.imag(out) if xp is np else tl.imag(out)
        return xp.sum(xp.abs(out) ** 2 * weights[0]) + xp.sum(real * weights[1]) + xp.sum(imag * weights[2])

    return loss


def _assert_gradients_match_differences(f_tl, f_np, args, argnums, rtol=1e-6, atol=1e-7):
    """tl.grad of a real loss of f equals central differences of the same loss of f's NumPy reference."""
    out_shape = np.shape(f_np(*args))
    weights = [RNG.uniform(0.5, 1.5, out_shape), RNG.uniform(-1, 1, out_shape), RNG.uniform(-1, 1, out_shape)]
    loss_np, loss_tl = _real_loss(weights, np), _real_loss(weights, tl)
    for i in argnums:
        got = tl.grad(lambda *a: loss_tl(f_tl(*a)), argnums=i)(*[tl.tensor(a) for a in args])
        expected = _numeric_grad(lambda *a: float(loss_np(f_np(*a))), args, i)
        assert got.dtype == args[i].dtype
        np.testing.assert_allclose(got.numpy(), expected, rtol=rtol, atol=atol, err_msg=f"argument {i}")


# ---------------------------------------------------------------- power: the gradient for the exponent
@pytest.mark.parametrize("base", ["complex", "negative real", "complex with zeros"])
def test_power_gradient_for_the_exponent_uses_the_complex_log_of_the_base(base):
    # Before: the rule took log(x) only where x > 0, comparing complex numbers lexicographically, so every
    # complex base with a negative real part (and a real negative base promoted by a complex exponent) got
    # a zero gradient: d Re((-2) ** z) / dz at z = 0.5 + 0.1j was 0, not -3.287 + 0.490j.
    y = _complex((2, 3))
    x = {"complex": _complex((3,)), "negative real": -RNG.uniform(0.5, 2, (3,))}.get(base)
    if x is None:
        x = np.array([0j, 1.5 - 0.5j, -1 + 0j])
        y = y + 2  # Re(y) > 1: x ** y is differentiable at x = 0
    _assert_gradients_match_differences(tl.power, np.power, (x, y), argnums=(1,) if base != "complex" else (0, 1))
    if base == "complex with zeros":
        return
    check_grads(lambda y: tl.power(x, y), [y[0]], order=2)


def test_power_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x, y = np.array([-2.0 + 0j, 1 - 1j, -0.5 + 2j]), np.array([0.5 + 0.1j, 2 - 1j, -1.5 + 0.5j])

    def loss(xp, power, real):
        return lambda x, y: xp.sum(real(power(x, y) * (1 + 2j)))

    ours = tl.grad(loss(tl, tl.power, tl.real), argnums=(0, 1))(tl.tensor(x), tl.tensor(y))
    theirs = jax.grad(loss(jax.numpy, jax.numpy.power, jax.numpy.real), argnums=(0, 1))(x, y)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-12)


# ---------------------------------------------------------------- sign(z) = z / |z|
def test_sign_of_complex_numbers_has_a_gradient():
    # Before: 0 (the real rule), while z / |z| moves with z: central differences of Re(w sign(z)) are not 0.
    z = _complex((2, 3))
    _assert_gradients_match_differences(tl.sign, np.sign, (z,), argnums=(0,))
    check_grads(tl.sign, [z], order=2)
    _, tangent = tl.jvp(tl.sign, (tl.tensor(z),), (tl.tensor(np.ones_like(z)),))
    eps = 1e-6
    np.testing.assert_allclose(tangent.numpy(), (np.sign(z + eps) - np.sign(z - eps)) / (2 * eps), atol=1e-8)
    # At 0 the gradient is 0 (PyTorch's sgn), as for abs; real inputs keep a zero gradient.
    assert complex(tl.grad(lambda z: tl.real(tl.sign(z) * (1 + 1j)))(tl.tensor(np.array(0j)))) == 0
    assert tl.grad(lambda x: tl.sum(tl.sign(x)))(tl.tensor(np.array([-1.0, 2.0]))).numpy().tolist() == [0.0, 0.0]
    assert tl.grad(lambda z: tl.abs(tl.sum(tl.sign(z))))(tl.tensor(z.astype(np.complex64))).dtype == np.complex64


def test_sign_gradient_matches_pytorch_conjugated():
    torch = pytest.importorskip("torch")
    z = _complex((4,))
    w = _complex((4,))
    t = torch.tensor(z, requires_grad=True)
    torch.sum(torch.real(torch.sgn(t) * torch.tensor(w))).backward()
    ours = tl.grad(lambda z: tl.sum(tl.real(tl.sign(z) * w)))(tl.tensor(z))
    np.testing.assert_allclose(ours.numpy(), np.conj(t.grad.numpy()), rtol=1e-12)


# ---------------------------------------------------------------- arcsinh
def test_arcsinh_of_complex_numbers_differentiates():
    # Before: TypeError from the real rule's hypot(z, 1) ("ufunc 'hypot' not supported").
    z = _complex((2, 3), scale=2.5)
    _assert_gradients_match_differences(tl.arcsinh, np.arcsinh, (z,), argnums=(0,))
    check_grads(tl.arcsinh, [z], order=2)
    # Right of the cut on the imaginary axis: the one-sided derivative 1 / sqrt(1 + z**2) = -i / sqrt(3).
    g = tl.grad(lambda z: tl.real(tl.arcsinh(z)))(tl.tensor(np.array(2j)))
    assert complex(g) == pytest.approx(-1j / np.sqrt(3.0))
    big = tl.grad(lambda z: tl.real(tl.arcsinh(z)))(tl.tensor(np.array(1e200 + 1e200j)))
    assert complex(big) == pytest.approx(1 / (1e200 + 1e200j), rel=1e-12)  # no overflow of z * z


# ---------------------------------------------------------------- linspace and logspace with complex bounds
def test_linspace_and_logspace_of_complex_bounds_are_complex_as_numpy():
    # Before: tl.linspace(1 + 2j, 1 - 1j, 3) gave float32 [1, 1, 1] (a ComplexWarning dropped the imaginary
    # parts); NumPy gives [1+2j, 1+0.5j, 1-1j].  logspace(0, 1j, 3) gave [1, 1, 1].
    cases = [
        (tl.linspace, np.linspace, (1 + 2j, 1 - 1j, 3), {}),
        (tl.linspace, np.linspace, (0, 2j, 5), {}),
        (tl.logspace, np.logspace, (0, 1j, 3), {}),
        (tl.logspace, np.logspace, (0, 2, 3), {"base": 1j}),
        (tl.logspace, np.logspace, (1j, 2, 4), {"endpoint": False}),
    ]
    for ours, theirs, args, kwargs in cases:
        got = ours(*args, **kwargs)
        assert got.dtype == np.complex64  # a Python complex is weak: complex64, as a list of complex numbers
        np.testing.assert_allclose(got.numpy(), theirs(*args, **kwargs), rtol=1e-6)
        wide = ours(*args, dtype="complex128", **kwargs)
        np.testing.assert_allclose(wide.numpy(), theirs(*args, **kwargs), rtol=1e-14)
    bound = tl.tensor(np.array(1j))
    assert tl.linspace(bound, 2, 3).dtype == np.complex128  # a complex tensor bound gives its dtype
    assert tl.linspace(0, 1, 3).dtype == np.float32 and tl.logspace(0, 1, 3).dtype == np.float32


def test_complex_linspace_bounds_are_inputs_and_a_real_dtype_refuses_them():
    def values(a):
        return tl.linspace(a, 2 + 1j, 4)

    a = np.array(1j)
    expected = _numeric_grad(lambda a: float(np.sum(np.abs(np.linspace(a, 2 + 1j, 4)) ** 2)), (a,), 0)
    for run in (tl.grad, lambda f: tl.function(tl.grad(f))):
        got = run(lambda a: tl.sum(tl.abs(values(a)) ** 2))(tl.tensor(a))
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-7)
    np.testing.assert_allclose(tl.function(values)(tl.tensor(a)).numpy(), np.linspace(1j, 2 + 1j, 4))
    with pytest.raises(TypeError, match=r"linspace: start and stop: complex128 data cannot become float32"):
        tl.linspace(0, 1j, 3, dtype="float32")
    with pytest.raises(TypeError, match=r"logspace: complex128 data cannot become float64"):
        tl.logspace(0, 1j, 3, dtype="float64")


# ---------------------------------------------------------------- set operations on complex numbers
def test_isin_and_the_set_functions_of_complex_numbers_are_numpys():
    # Before: tl.isin of complex tensors raised "searchsorted: complex numbers have no order" (NumPy answers:
    # membership needs equality only), and so did in1d, intersect1d and setdiff1d.
    a = np.array([[1 + 2j, 1 - 1j], [complex(np.nan, 1), 2j], [3, -0.0j]])
    t = np.array([2j, 1 - 1j, complex(np.nan, 1), 3.0, 0j])
    for invert in (False, True):
        expected = np.isin(a, t, invert=invert)
        np.testing.assert_array_equal(tl.isin(a, t, invert=invert).numpy(), expected)
        traced = tl.function(lambda a, t: tl.isin(a, t, invert=invert))(tl.tensor(a), tl.tensor(t))
        np.testing.assert_array_equal(traced.numpy(), expected)
    np.testing.assert_array_equal(tl.isin(np.array([1.0, 2.0]), np.array([1 + 0j])).numpy(), [True, False])
    np.testing.assert_array_equal(tl.in1d(a, t).numpy(), np.isin(a.ravel(), t))
    np.testing.assert_array_equal(tl.intersect1d(a, t).numpy(), np.intersect1d(a, t))
    np.testing.assert_array_equal(tl.setdiff1d(t, a).numpy(), np.setdiff1d(t, a))


# ---------------------------------------------------------------- complex values written into real tensors
def test_insert_and_pad_refuse_complex_values_for_a_real_tensor_without_a_warning(recwarn):
    # Before: tl.insert([1.0, 2.0, 3.0], 1, 5j) inserted 0.0 silently (NumPy: 0.0 with a ComplexWarning;
    # docs/complex.md: making real data of complex data is a TypeError), and pad's refusal of 1j first
    # warned ComplexWarning, as did padding a real tensor with 1 + 0j.
    x = tl.tensor(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match=r"insert: values for arr of shape \(3,\): complex128 data cannot become"):
        tl.insert(x, 1, 5j)
    with pytest.raises(TypeError, match=r"insert: .*complex128 data cannot become float64"):
        tl.insert(x, [0, 2], np.array([1j, 2.0]))
    with pytest.raises(TypeError, match=r"pad: constant_values 1j cannot be held exactly by x's dtype float64"):
        tl.pad(x, 1, constant_values=1j)
    np.testing.assert_array_equal(
        tl.pad(x, 1, constant_values=2 + 0j).numpy(), np.pad([1.0, 2.0, 3.0], 1, constant_values=2)
    )
    z = x.astype("complex128")
    np.testing.assert_array_equal(tl.insert(z, 1, 5j).numpy(), np.insert(z.numpy(), 1, 5j))
    np.testing.assert_array_equal(tl.pad(z, 1, constant_values=1j).numpy(), np.pad(z.numpy(), 1, constant_values=1j))
    assert not [w for w in recwarn if issubclass(w.category, np.exceptions.ComplexWarning)]


# ---------------------------------------------------------------- casts of complex numbers
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_to_bool_is_nonzero_as_numpy_not_the_real_parts_truth(dtype):
    # Before: tl.cast(1j, "bool") was False (the real part, 0, cast); NumPy, JAX and PyTorch give True,
    # as Python's bool(1j) does.
    z = np.array([1j, 0j, 1 + 0j, complex(0, -0.0), complex(np.nan, 0), complex(0, np.nan), -2.5j], dtype=dtype)
    expected = z.astype(bool)
    np.testing.assert_array_equal(tl.cast(z, "bool").numpy(), expected)
    np.testing.assert_array_equal(tl.tensor(z).astype("bool").numpy(), expected)
    np.testing.assert_array_equal(tl.function(lambda z: tl.cast(z, "bool"))(tl.tensor(z)).numpy(), expected)
    # To real and integer dtypes a cast keeps the real part (tf.cast's rule, NumPy's value).
    np.testing.assert_array_equal(tl.cast(z[:4] * 3.7, "int32").numpy(), (z[:4] * 3.7).real.astype(np.int32))


# ---------------------------------------------------------------- tl.nn.moments of complex numbers
def test_moments_variance_of_complex_numbers_is_the_real_mean_squared_modulus():
    # Before: mean(square(x - mean)), complex: [1+1j, 2-1j, 0.5j] gave -0.0556 - 1j; NumPy's var (and
    # PyTorch's, and tl.var) give 1.3889, TensorFlow 1.3889 + 0j.
    x = _complex((3, 4))
    for dtype in (np.complex64, np.complex128):
        mean, variance = tl.nn.moments(x.astype(dtype), axes=[1])
        assert mean.dtype == dtype and variance.dtype == np.dtype(dtype).type(0).real.dtype
        np.testing.assert_allclose(mean.numpy(), np.mean(x, axis=1), rtol=1e-6)
        np.testing.assert_allclose(variance.numpy(), np.var(x, axis=1), rtol=1e-6)
    _assert_gradients_match_differences(
        lambda x: tl.nn.moments(x, axes=[0, 1])[1], lambda x: np.var(x), (x,), argnums=(0,), rtol=1e-6
    )


# ---------------------------------------------------------------- jacfwd of functions of complex arguments
@pytest.mark.parametrize(
    "f",
    [tl.abs, tl.angle, lambda z: z * tl.conj(z), lambda z: tl.stack([tl.real(z[0] * z[1]), tl.abs(z[1]) * 1j]), tl.exp],
    ids=["abs", "angle", "z*conj(z)", "mixed", "exp (holomorphic)"],
)
def test_jacfwd_of_a_complex_argument_equals_jacrev_and_finite_differences(f):
    # Before: jacfwd took the tangent along each element's real axis only: jacfwd(tl.abs)(z) was d|z|/dx,
    # real, while jacrev(tl.abs)(z) (and tl.grad) gave conj(z) / |z|; the docstring promises jacrev's result.
    z = np.array([1 + 2j, 3 - 1j])
    ours = tl.jacfwd(f)(tl.tensor(z))
    reverse = tl.jacrev(f)(tl.tensor(z))
    assert ours.dtype == reverse.dtype == np.complex128
    np.testing.assert_allclose(ours.numpy(), reverse.numpy(), rtol=1e-12, atol=1e-14)
    # Row i is the gradient of Re(out_i) in docs/complex.md's convention, by central differences.
    out = f(tl.tensor(z)).numpy()
    for i in range(out.size):
        expected = _numeric_grad(lambda z: float(np.real(f(tl.tensor(z)).numpy().ravel()[i])), (z,), 0)
        np.testing.assert_allclose(ours.numpy().reshape(out.size, -1)[i], expected, rtol=1e-7, atol=1e-8)
    traced = tl.function(tl.jacfwd(f))(tl.tensor(z))
    np.testing.assert_allclose(traced.numpy(), ours.numpy(), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- traced complex parts of large tensors
def test_traced_real_imag_angle_of_large_tensors_run_and_every_out_kernel_takes_out():
    # Before: tl.function(lambda z: tl.real(z * 2) * 3) on 20000 elements raised "real() got an unexpected
    # keyword argument 'out'": np.real, np.imag, np.angle (and np.sinc) were registered as kernels writing
    # into the executor's pooled buffers (results of 64 KiB or more), which they cannot.
    import inspect

    from tensorlib.ops.registry import _ops

    z = _complex(20000)
    cases = [(tl.real, np.real), (tl.imag, np.imag), (tl.angle, np.angle), (tl.sinc, np.sinc)]
    for ours, theirs in cases:
        f = tl.function(lambda z: ours(z * 2.0) * 3.0)
        for arg in (z, z.real.copy()):
            for _ in range(2):  # the second run writes into the buffers the first one planned
                np.testing.assert_allclose(f(tl.tensor(arg)).numpy(), theirs(arg * 2.0) * 3.0, rtol=1e-13)
    for name, op in _ops.items():
        for backend, (kernel, _) in op.out_kernels.items():
            if not isinstance(kernel, np.ufunc):
                parameters = inspect.signature(kernel).parameters
                assert "out" in parameters or any(p.kind == p.VAR_KEYWORD for p in parameters.values()), name


def test_complex_dtypes_are_exported_beside_the_real_ones():
    # Before: tl.complex64 was an AttributeError (tl.float32 exists; TF, JAX and PyTorch export both).
    assert tl.complex64 == np.complex64 and tl.complex128 == np.complex128
    assert tl.zeros((2,), dtype=tl.complex128).dtype == np.complex128
    assert tl.cast(tl.tensor([1.0]), tl.complex64).dtype == np.complex64


# ---------------------------------------------------------------- reductions' dtype= of complex inputs
@pytest.mark.parametrize(
    "name", ["sum", "prod", "mean", "var", "std", "cumsum", "cumprod", "nansum", "nanmean", "nanvar", "nanstd"]
)
def test_a_real_dtype_argument_for_complex_input_is_refused_not_the_real_part(name):
    # Before: tl.sum([1+2j, 3-1j, 0.5j], dtype="float64") gave 4.0 (the real parts; NumPy warns
    # ComplexWarning and gives the same); making real data of complex data is a TypeError (docs/complex.md).
    z = np.array([1 + 2j, 3 - 1j, 0.5j])
    with pytest.raises(TypeError, match=r"dtype: complex128 data cannot become float64 without losing its imaginary"):
        getattr(tl, name)(z, dtype="float64")
    # A complex dtype computes in it, as NumPy's dtype= does (var and std stay real).
    got = getattr(tl, name)(z, dtype="complex64")
    expected = getattr(np, name)(z.astype(np.complex64))
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_numpys_complex_predicates_run_on_tensors():
    # Before: np.iscomplexobj(t), np.isrealobj(t), np.iscomplex(t) and np.isreal(t) raised "tensorlib has
    # no implementation of numpy.iscomplexobj" (JAX has all four).
    z = np.array([1 + 0j, 2j, complex(np.nan, np.nan), complex(0, -0.0)])
    for values in (z, z.real.copy(), np.array([1, 2]), np.array([True, False])):
        t = tl.tensor(values)
        for name in ("iscomplex", "isreal"):
            for call in (getattr(np, name), getattr(tl, name), tl.function(getattr(tl, name))):
                got = call(t)
                assert isinstance(got, tl.Tensor) and got.dtype == np.bool_
                np.testing.assert_array_equal(got.numpy(), getattr(np, name)(values))
        for name in ("iscomplexobj", "isrealobj"):
            assert getattr(np, name)(t) is getattr(tl, name)(t) is bool(getattr(np, name)(values))


def test_arange_with_complex_bounds_names_itself():
    # Before: Python's "TypeError: must be real number, not complex", naming no function (NumPy returns an
    # empty array for arange(1j, 3)); a complex dtype of real bounds still works.
    for args in [(1j, 3), (0, 3, 1j), (tl.tensor(np.array(2j)),)]:
        with pytest.raises(TypeError, match=r"arange: start, stop and step must be real numbers, got"):
            tl.arange(*args)
    np.testing.assert_array_equal(tl.arange(3, dtype="complex64").numpy(), np.arange(3, dtype=np.complex64))


def test_nan_to_num_with_a_complex_replacement_names_itself():
    # Before: "float() argument must be a string or a real number, not 'complex'" (NumPy refuses too: the
    # replacements apply to the real and imaginary parts alike).
    z = np.array([complex(np.nan, np.inf), complex(1, np.nan)])
    with pytest.raises(TypeError, match=r"nan_to_num: nan must be a real number, got 1j"):
        tl.nan_to_num(z, nan=1j)
    with pytest.raises(TypeError, match=r"nan_to_num: posinf must be a real number"):
        tl.nan_to_num(z.real.copy(), posinf=2 + 0j)
    np.testing.assert_array_equal(tl.nan_to_num(z, nan=2.0, posinf=5.0).numpy(), np.nan_to_num(z, nan=2.0, posinf=5.0))


def test_a_complex_tangent_for_a_real_primal_is_refused_not_cut_to_its_real_part():
    # Before: tl.jvp(lambda x: x * x, (x,), ([1j, 1],)) at x = [1, 2] gave the tangent [0, 4], dropping the
    # imaginary direction silently (JAX refuses the dtype mismatch); tl.linearize's f_jvp did the same.
    x = tl.tensor(np.array([1.0, 2.0]))
    for tangent in (np.array([1j, 1.0]), tl.tensor(np.array([1j, 1.0]))):
        with pytest.raises(TypeError, match=r"tl.jvp: tangent 0 is complex128 for a real primal \(float64, shape"):
            tl.jvp(lambda x: x * x, (x,), (tangent,))
        with pytest.raises(TypeError, match=r"tl.linearize: tangent 0 is complex128 for a real primal"):
            tl.linearize(lambda x: x * x, x)[1](tangent)
    # A real tangent of a complex primal is a direction along the real axes.
    _, tangent = tl.jvp(lambda z: z * z, (x * 1j,), (np.array([0.5, 1.0]),))
    np.testing.assert_allclose(tangent.numpy(), 2 * (x.numpy() * 1j) * np.array([0.5, 1.0]))


def test_the_tensors_strategy_draws_complex_arrays():
    # Before: tl.testing.strategies.tensors(np.complex64) raised "tensors: dtype complex64 is not supported".
    from hypothesis import given

    from tensorlib.testing.strategies import tensors

    seen = []

    @given(tensors(np.complex64, (3,), min_value=-1.0, max_value=2.0), tensors(np.complex128, (2,)))
    def draw(x, y):
        assert x.dtype == np.complex64 and y.dtype == np.complex128
        for part in (x.real, x.imag):
            assert np.all(part >= -1.0) and np.all(part <= 2.0) and np.all(np.isfinite(part))
        seen.append(np.any(x.imag != 0))

    draw()
    assert any(seen)  # imaginary parts are drawn, not only real numbers
