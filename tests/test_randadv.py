"""Adversarial checks of ``tl.random``: each test failed before its fix.

References: the gradients' closed forms (a gamma draw's change in its rate), NumPy's generator for the
numbers, the documented support of each draw, SciPy's distributions for the laws.
"""

import numpy as np
import pytest

import tensorlib as tl


def test_second_order_gradients_of_gamma_draws_in_alpha_raise():
    # d2 x / d alpha2 read 0 (RandomGammaGrad was declared not differentiable): a silent wrong second
    # derivative, and the beta draws', built on two gamma draws, lost its terms (-0.502 at a=2, b=2).
    def f(a):
        return tl.random.gamma((5,), a, dtype="float64", seed=0).sum()

    a = tl.tensor(np.float64(2.0))
    with pytest.raises(LookupError, match="RandomGammaGrad: second-order gradients of gamma draws in alpha"):
        tl.grad(tl.grad(f))(a)
    with pytest.raises(LookupError, match="second-order"):
        tl.function(tl.grad(tl.grad(f)))(a)
    with pytest.raises(LookupError, match="second-order"):
        tl.hessian(lambda a: tl.random.beta((5,), a, 2.0, dtype="float64", seed=0).sum())(a)
    # What stays defined: first order, forward mode, and the rate's mixed derivative -(dg/da) / b**2.
    b = tl.tensor(np.float64(3.0))
    first = tl.grad(f)(a)
    assert float(tl.jvp(f, (a,), (tl.tensor(np.float64(1.0)),))[1]) == pytest.approx(float(first))
    mixed = tl.grad(lambda a: tl.grad(lambda b: tl.random.gamma((5,), a, b, dtype="float64", seed=0).sum())(b))(a)
    assert float(mixed) == pytest.approx(-float(first) / 9.0, rel=1e-12)
