"""tl.stats, the statsfix round: what the statsplus note left open (the log-tail ops batched under vmap, the lower
gamma log tail for a huge shape, vonmises' distribution function, multinomial with probabilities that do not sum to
1) and an attack on the ten newest families (truncnorm, gumbel_r, gumbel_l, lognorm, weibull_min, halfnorm, rayleigh,
invgamma, f, loggamma) and every family's log tails.

References: scipy.stats in float64 where SciPy is accurate; closed forms, SciPy's special functions and mpmath
(importorskip) where SciPy underflows or loses digits; float64 central differences for gradients; a Python loop for
vmap.
"""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import tensorlib as tl
from tests._helpers import central_differences


# ------------------------------------------------------------------ the log-tail ops under vmap
def _calls(f, *args):
    """``{op type: kernel calls}`` while ``f(*args)`` runs."""
    with tl.profile() as prof:
        f(*args)
    counts = {}
    for event in prof.events:
        counts[event.op_type] = counts.get(event.op_type, 0) + 1
    return counts


@pytest.mark.parametrize(
    ("op_type", "f", "x"),
    [
        ("LogIgammaFactor", lambda x: tl.stats.gamma.logsf(x, 2.5), [800.0, 900.0, 1500.0, 2.0, 3000.0]),
        ("LogIgammaFactor", lambda x: tl.stats.poisson.logcdf(x, 900.0), [1.0, 5.0, 20.0, 899.0, 40.0]),
        ("LogBetaincFraction", lambda x: tl.stats.beta.logcdf(x, 3.0, 2.0), [1e-200, 1e-150, 1e-300, 0.3, 1e-250]),
    ],
)
def test_log_tail_ops_run_once_under_vmap_and_agree_with_a_loop(op_type, f, x):
    x = tl.tensor(np.array(x))
    batched = tl.vmap(f)(x).numpy()
    loop = np.array([float(f(x[i])) for i in range(x.shape[0])])
    np.testing.assert_allclose(batched, loop, rtol=1e-14)
    assert _calls(tl.vmap(f), x)[op_type] == 1
    grads = tl.vmap(tl.grad(f))(x).numpy()
    np.testing.assert_allclose(grads, [float(tl.grad(f)(x[i])) for i in range(x.shape[0])], rtol=1e-12)


def test_log_betainc_fraction_gradient_op_runs_once_under_vmap():
    f = tl.grad(lambda a: tl.stats.beta.logcdf(1e-200, a, 2.0))
    a = tl.tensor(np.array([3.0, 4.0, 5.5]))
    batched = tl.vmap(f)(a).numpy()
    np.testing.assert_allclose(batched, [float(f(a[i])) for i in range(3)], rtol=1e-13)
    assert _calls(tl.vmap(f), a)["LogBetaincFractionGrad"] == 1
