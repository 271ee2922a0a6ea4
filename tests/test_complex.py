"""complex64/complex128 end to end: promotion, JAX's gradient convention, check_grads on complex inputs.

The catalogue entries (``tensorlib/testing/op_db_complex.py``, ``op_db_fft.py``)
check every complex op's forward value, gradients and eager == traced.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
RNG = np.random.default_rng(11)
Z = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))


@pytest.mark.parametrize(
    "a, b",
    [
        (np.complex64, np.float64),
        (np.complex64, np.float32),
        (np.complex128, np.float32),
        (np.complex64, np.int64),
        (np.complex64, np.complex128),
        (np.float64, np.complex64),
    ],
)
def test_promotion_between_typed_values_is_numpys(a, b):
    x, y = np.ones(2, a), np.ones(2, b)
    assert (tl.tensor(x) + tl.tensor(y)).dtype == (x + y).dtype


def test_python_complex_scalars_are_weak_and_lists_of_complex_are_complex64():
    assert (tl.tensor(np.ones(2, np.float32)) * 2j).dtype == C64
    assert (tl.tensor(np.ones(2, np.complex128)) * 2j).dtype == C128
    assert (tl.tensor(np.ones(2)) + 1j).dtype == C128
    assert tl.tensor([1 + 2j]).dtype == C64 and tl.tensor(1j).dtype == C64
    assert complex(tl.tensor(np.array(1 + 2j))) == 1 + 2j


def test_abs_of_complex_is_real_with_the_parts_precision():
    assert tl.abs(np.ones(2, np.complex64)).dtype == np.float32
    np.testing.assert_allclose(tl.abs(Z).numpy(), np.abs(Z))


def test_gradient_convention_is_jaxs_conjugate_of_steepest_ascent():
    z = tl.tensor(np.array(3 + 4j))
    assert complex(tl.grad(lambda z: tl.abs(z) ** 2)(z)) == 6 - 8j  # JAX's documented example
    # Re(z**2) = x**2 - y**2: dL/dx - i dL/dy = 2x + 2iy = 2z.
    g = tl.grad(lambda z: tl.cast(z * z, "float64"))(z)
    assert complex(g) == pytest.approx(6 + 8j)
    # A holomorphic rule has no conjugate: d Re(c z) = c.
    assert complex(tl.grad(lambda z: tl.cast(z * (2 - 1j), "float64"))(z)) == pytest.approx(2 - 1j)


def test_gradient_matches_jax_when_jax_is_installed():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def ours(z):
        return tl.sum(tl.abs(tl.exp(z) * tl.linalg.inv(z)) ** 2) + tl.cast(tl.sum(tl.fft.fft(z)), "float64")

    def theirs(z):
        return jnp.sum(jnp.abs(jnp.exp(z) * jnp.linalg.inv(z)) ** 2) + jnp.real(jnp.sum(jnp.fft.fft(z)))

    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(tl.grad(ours)(tl.tensor(a)).numpy(), np.asarray(jax.grad(theirs)(a)), rtol=1e-10)


def test_real_input_through_a_complex_computation_gets_a_real_gradient_of_its_dtype():
    x = tl.tensor(np.linspace(0.0, 1.0, 4, dtype=np.float32))
    g = tl.grad(lambda x: tl.abs(tl.sum(tl.cast(x, "complex64") * (1 + 2j))))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), np.full(4, np.sqrt(5.0)), rtol=1e-6)


def test_tapes_watch_complex_sources_and_integers_still_raise():
    z = tl.tensor(Z)
    with tl.GradientTape() as tape:
        tape.watch(z)
        loss = tl.sum(tl.abs(z * z))
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), 2 * np.conj(Z), rtol=1e-12)  # |z*z| = |z|**2
    with pytest.raises(TypeError, match="cannot differentiate with respect to"):
        tl.grad(lambda n: tl.sum(n * 1.0))(tl.tensor(np.arange(3)))


def test_check_grads_perturbs_real_and_imaginary_parts_and_catches_a_conjugated_rule():
    c = 1.5 - 0.5j
    for name, rule in (
        ("TestComplexRight", lambda node, g: g * c),
        ("TestComplexConjugated", lambda node, g: g * c.conjugate()),
    ):
        op = tl.ops.defop(name, inputs=("z",), infer=lambda z: z)
        op.generic(lambda xp, z: z * c)
        tl.grad.register_gradient(name, rule)
    check_grads(tl.ops.get("TestComplexRight"), [Z], order=2)
    with pytest.raises(AssertionError, match=r"reverse-mode \(vjp\) derivative of .* complex128"):
        check_grads(tl.ops.get("TestComplexConjugated"), [Z], modes=("rev",))


@pytest.mark.parametrize("hermitian", [True, False])
def test_decomposition_gradients_of_complex_matrices_are_jaxs(hermitian):
    # cholesky, eigh, svd, pinv and qr raised TypeError (gradients for complex inputs are not supported).  cholesky
    # and eigh read the Hermitian
    # part, as JAX's (symmetrize_input=True); the eigen- and singular-vector gauges are JAX's, so even a
    # phase-dependent loss agrees.
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    a = a @ np.conj(np.swapaxes(a, -1, -2)) + 3 * np.eye(3)
    if not hermitian:
        a = a + 0.5 * (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape))
    w = rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)

    def loss(m, lib):
        chol = lib.linalg.cholesky(m) if lib is tl else jnp.linalg.cholesky(m, symmetrize_input=True)
        values, vectors = lib.linalg.eigh(m) if lib is tl else jnp.linalg.eigh(m, symmetrize_input=True)
        u, s, vh = lib.linalg.svd(m[..., :2], full_matrices=False)
        svd_part = lib.sum(lib.real(u * w[..., :2])) + lib.sum(lib.imag(vh * w[..., :2, :2])) + lib.sum(s**3)
        pinv_part = lib.sum(lib.abs(lib.linalg.pinv(m[..., :2]) * w[..., :2, :]) ** 2)
        q, r = lib.linalg.qr(m[..., :2])
        qr_part = lib.sum(lib.real(q * w[..., :2])) + lib.sum(lib.imag(r * w[..., :2, :2]))
        chol_part = lib.sum(lib.real(chol * w))
        return chol_part + lib.sum(values**2) + lib.sum(lib.real(vectors * w)) + svd_part + pinv_part + qr_part

    got = tl.grad(lambda m: loss(m, tl))(tl.tensor(a))
    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(lambda m: loss(m, jnp))(a))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    check_grads(lambda m: tl.linalg.cholesky(m) + tl.abs(tl.linalg.eigh(m)[1]), [tl.tensor(a[0])], order=2)
    check_grads(lambda m: tl.abs(tl.linalg.svd(m[:, :2], full_matrices=False)[0]), [tl.tensor(a[0])], order=2)
    check_grads(lambda m: tl.linalg.qr(m[:2]), [tl.tensor(a[0])], order=2)  # wide


def test_traced_complex_function_and_its_gradient_match_eager():
    def loss(z):
        return tl.sum(tl.abs(tl.fft.ifft(z * 2j) + tl.linalg.det(z)))

    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    z = tl.tensor(a)
    np.testing.assert_allclose(tl.function(loss)(z).numpy(), loss(z).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(z).numpy(), tl.grad(loss)(z).numpy(), rtol=1e-10)


def test_sigmoid_of_complex_numbers_and_relu_refuses_them():
    # Before: tl.sigmoid(0.5j) gave 0.6225 (sigmoid(|z|), real) for NumPy's 0.5 + 0.1277j: the overflow-free
    # split took abs(z); and relu(-1 + 2j) gave 0 by NumPy's lexicographic complex maximum.
    z = np.array([0.5j, 1 + 2j, -3 + 0.1j, 800 + 1j, -800 + 1j])
    expected = np.array([0.5 + 0.127670960j, 1.021415361 + 0.403438712j, 0.047221489 + 0.004512182j, 1.0, 0.0])
    for dtype in (C64, C128):
        got = tl.sigmoid(z.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(tl.function(tl.sigmoid)(z.astype(dtype)).numpy(), got.numpy())
    check_grads(tl.sigmoid, (z[:3],), order=2)
    with pytest.raises(TypeError, match=r"Relu: features must be real, got complex128"):
        tl.nn.relu(z)
