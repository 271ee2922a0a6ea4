"""The catalogue of ``tl.random``'s draws with one parameter per sample (tensor parameters), and of the
implicit reparameterization gradient of gamma draws against SciPy's inverse incomplete gamma function
(imported inside the reference only).

The draws take NumPy's generator's numbers for a seed, as the scalar draws in ``op_db`` do.  Their
gradients are not checked here by differences: a seeded gamma draw is not the inverse CDF of its
uniform, so its change with ``alpha`` at a fixed seed is not the reparameterization gradient
(``tests/test_random_parameters.py`` checks that gradient against SciPy, JAX and the distributions' means).

>>> from tensorlib.testing.op_db_random import OPINFOS
>>> "random.gamma_grad" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from ..dispatch import apply
from ..ops.registry import get
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import tensors

SHAPES = st.sampled_from([(3,), (2, 3), (), (0, 2)])


def _parameters(low, high, dtype=np.float64):
    @st.composite
    def draw(draw, out_dtype):
        params = draw(tensors(dtype, draw(SHAPES), min_value=low, max_value=high))
        seed = draw(st.integers(0, 2**31 - 1))
        return SampleInput((params,), {"seed": seed, "dtype": out_dtype}, grad_argnums=())

    return draw


def _gamma_grad_samples(dtype):
    @st.composite
    def draw(draw):
        shape = draw(SHAPES)
        alpha = draw(tensors(dtype, shape, min_value=0.3, max_value=6.0))
        sample = draw(tensors(dtype, shape, min_value=0.05, max_value=10.0))
        return SampleInput((alpha, sample), grad_argnums=())

    return draw()


def _gamma_grad_reference(alpha, sample):
    """``d sample / d alpha`` at the sample's CDF ``u``: central differences of SciPy's ``gammaincinv(., u)``."""
    import scipy.special

    a, x = np.asarray(alpha, np.float64), np.asarray(sample, np.float64)
    u = scipy.special.gammainc(a, x)
    h = 1e-5 * a
    grad = (scipy.special.gammaincinv(a + h, u) - scipy.special.gammaincinv(a - h, u)) / (2 * h)
    return grad.astype(np.result_type(alpha, sample))


OPINFOS = [
    OpInfo(
        "random.gamma_per_sample",
        lambda alpha, seed, dtype: tl.random.gamma(alpha.shape, alpha, 2.0, dtype=dtype, seed=seed),
        lambda alpha, seed, dtype: np.asarray(np.random.default_rng(seed).gamma(alpha, 0.5)).astype(dtype),
        _parameters(0.2, 5.0),
        op_types=("RandomStandardGammaV2",),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.array([1.0, 0.0]),),
                {"seed": 0, "dtype": _dt.float32},
                exc=ValueError,
                match=r"tl.random.gamma: alpha must be positive finite numbers",
            ),
        ),
    ),
    OpInfo(
        "random.poisson_per_sample",
        lambda lam, seed, dtype: tl.random.poisson(lam.shape, lam, dtype=dtype, seed=seed),
        lambda lam, seed, dtype: np.asarray(np.random.default_rng(seed).poisson(lam)).astype(dtype),
        _parameters(0.0, 20.0),
        op_types=("RandomPoissonV2",),
        dtypes=(_dt.int64, _dt.float32),
        differentiable=False,
    ),
    OpInfo(
        "random.bernoulli_per_sample",
        lambda p, seed, dtype: tl.random.bernoulli(p.shape, p, dtype=dtype, seed=seed),
        lambda p, seed, dtype: np.asarray(np.random.default_rng(seed).random(p.shape) < p).astype(dtype),
        _parameters(0.0, 1.0),
        op_types=("RandomBernoulliV2",),
        dtypes=(_dt.bool_, _dt.float32),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.array([0.5, 1.5]),),
                {"seed": 0, "dtype": _dt.bool_},
                exc=ValueError,
                match=r"tl.random.bernoulli: p must be probabilities in \[0, 1\]",
            ),
        ),
    ),
    OpInfo(
        "random.normal_per_mean",
        lambda mean, seed, dtype: apply(get("RandomNormalV2"), (mean,), {"seed": seed, "dtype": dtype}),
        lambda mean, seed, dtype: np.asarray(np.random.default_rng(seed).normal(mean, 1.0)).astype(dtype),
        _parameters(-3.0, 3.0),
        op_types=("RandomNormalV2",),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.array([0.0, np.nan]),),
                {"seed": 0, "dtype": _dt.float64},
                exc=ValueError,
                match=r"RandomNormalV2: the parameters must be finite numbers",
            ),
        ),
    ),
    OpInfo(
        "random.uniform_like",
        lambda x, seed, dtype, **bounds: apply(
            get("RandomUniformLike"), (x,), {"seed": seed, "dtype": dtype, **bounds}
        ),
        lambda x, seed, dtype, **bounds: np.minimum(
            np.asarray(np.random.default_rng(seed).uniform(0.0, 1.0, np.shape(x))).astype(dtype),
            np.nextafter(dtype.type(1), dtype.type(0)),  # a draw rounded up to 1: the largest number below it
        ),
        _parameters(-3.0, 3.0),
        op_types=("RandomUniformLike",),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.zeros(2),),
                {"seed": 0, "dtype": _dt.float32, "a": 2.0, "b": 1.0},
                exc=ValueError,
                match=r"RandomUniformLike: minval and maxval must be finite numbers, minval <= maxval, got 2.0 and 1.0",
            ),
        ),
    ),
    OpInfo(
        "random.gamma_grad",
        lambda alpha, sample: apply(get("RandomGammaGrad"), (alpha, sample)),
        _gamma_grad_reference,
        _gamma_grad_samples,
        op_types=("RandomGammaGrad",),
        differentiable=False,
        atol=1e-6,
        rtol=1e-5,
    ),
]
