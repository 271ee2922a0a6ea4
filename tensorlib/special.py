"""``tl.special``: SciPy's special functions with gradients of every order (needs the ``special`` extra).

>>> import tensorlib as tl
>>> round(float(tl.grad(tl.special.gammaln)(tl.tensor(1.0))), 6)   # digamma(1)
-0.577216
"""

from .ops.special import (
    beta,
    betainc,
    betaincc,
    betaln,
    digamma,
    erf,
    erfc,
    erfcinv,
    erfcx,
    erfinv,
    expit,
    gamma,
    gammainc,
    gammaincc,
    gammaln,
    i0,
    i0e,
    i1,
    i1e,
    log_ndtr,
    logit,
    ndtr,
    ndtri,
    polygamma,
    xlog1py,
    xlogy,
)

__all__ = [
    "beta",
    "betainc",
    "betaincc",
    "betaln",
    "digamma",
    "erf",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfinv",
    "expit",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log_ndtr",
    "logit",
    "ndtr",
    "ndtri",
    "polygamma",
    "xlog1py",
    "xlogy",
]
