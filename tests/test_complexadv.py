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
