"""Attacks on this session's new APIs: complex Variables in the optimizers (gradient clipping),
``tl.functional_call`` with state a call in training mode updates.  References: the same model written
on real (real, imaginary) pairs, which the optimizers' complex steps are defined as (PyTorch's
``view_as_real``), NumPy formulas, and PyTorch where installed."""

import numpy as np
import pytest

import tensorlib as tl


# ---------------------------------------------------------------- complex Variables in the optimizers
def test_clipvalue_clips_real_and_imaginary_parts_of_a_complex_gradient():
    # Clipped as one complex number (NumPy's clip compares by real part), -0.2-0.9j and 0.1+2j passed
    # unclipped, and 0.5+0.1j lost its imaginary part: clipvalue bounded nothing.  The step runs on the
    # (real, imaginary) pairs, so each part is clipped, as for the same model on real pairs.
    g = np.array([0.5 + 0.1j, -0.2 - 0.9j, 0.1 + 2.0j, -0.4 + 0.0j])
    z0 = np.array([1.0 + 1.0j, -1.0 + 2.0j, 0.5 - 0.5j, 0.0 + 0.0j])
    w = tl.Variable(z0.copy())
    tl.optimizers.SGD(0.5, clipvalue=0.3).apply([tl.tensor(g)], [w])
    # JAX-convention gradient: descent on the pairs is z - lr * conj(g), parts clipped one by one.
    step = np.clip(g.real, -0.3, 0.3) - 1j * np.clip(g.imag, -0.3, 0.3)
    np.testing.assert_allclose(w.numpy(), z0 - 0.5 * step, rtol=0, atol=1e-15)

    # The same model on real pairs, with a real loss, takes the same steps.
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    start = 3 * (rng.normal(size=3) + 1j * rng.normal(size=3))

    def loss(z):
        r = tl.matmul(tl.tensor(a), z)
        return tl.sum(tl.real(r * tl.conj(r)))

    zc = tl.Variable(start.copy())
    zr = tl.Variable(np.stack([start.real, start.imag], -1))
    opt_c, opt_r = tl.optimizers.Adam(0.1, clipvalue=0.5), tl.optimizers.Adam(0.1, clipvalue=0.5)
    for _ in range(4):
        opt_c.apply([tl.grad(loss)(tl.tensor(zc))], [zc])
        opt_r.apply([tl.grad(lambda p: loss(tl.complex(p[..., 0], p[..., 1])))(tl.tensor(zr))], [zr])
    np.testing.assert_allclose(zc.numpy(), zr.numpy()[..., 0] + 1j * zr.numpy()[..., 1], rtol=1e-12, atol=1e-12)
