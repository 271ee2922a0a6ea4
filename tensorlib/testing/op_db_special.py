"""The special-function and stats catalogue: ``tl.special`` against ``scipy.special``, ``tl.stats``
against ``scipy.stats`` (both imported inside the references only, so listing the catalogue needs no SciPy).

Samples stay inside each function's domain and away from its poles; the
log-densities are drawn inside their support, with every continuous argument
differentiated.

>>> from tensorlib.testing.op_db_special import OPINFOS
>>> "special.gammaln" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from ..ops.special_more import bivariate_normal_cdf
from .op_db_control_flow import traced_node
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import scalars, tensors

FLOATS = (_dt.float32, _dt.float64)
SHAPES = st.sampled_from([(2, 3), (3,), (), (2, 1, 2)])


def _scipy(name):
    """``scipy.special.<name>`` as a reference that keeps float32 inputs in float32 (SciPy's loops may not)."""

    def ref(*args, **kwargs):
        import scipy.special

        arrays = [a for a in args if isinstance(a, np.ndarray)]
        dtype = np.result_type(*arrays) if arrays else np.float64
        dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
        return np.asarray(getattr(scipy.special, name)(*args, **kwargs)).astype(dtype)

    return ref


def _scipy_pair(name):
    """``scipy.special.<name>`` of two outputs (fresnel, sici, shichi), each in the input's float dtype."""

    def ref(x):
        import scipy.special

        return tuple(np.asarray(out).astype(x.dtype) for out in getattr(scipy.special, name)(x))

    return ref


def _ellipj_ref(u, m):
    """SciPy's ellipj (sn, cn, dn, ph), each in the inputs' float dtype."""
    import scipy.special

    return tuple(np.asarray(out).astype(np.result_type(u, m)) for out in scipy.special.ellipj(u, m))


def _lambertw_ref(x, k=0):
    """SciPy's complex lambertw, its real part where that is real (NaN elsewhere), in x's dtype."""
    import scipy.special

    w = scipy.special.lambertw(x, k)
    return np.where(w.imag == 0, w.real, np.nan).astype(x.dtype)


def _bernoulli_ref(n):
    import scipy.special

    return np.asarray(scipy.special.bernoulli(n), np.float64)


def _bivariate_normal_ref(h, k, rho):
    """P(X <= h, Y <= k) as SciPy's quadrature of ``phi(t) Phi((k - rho t) / sqrt(1 - rho**2))`` over t <= h."""
    import scipy.integrate
    import scipy.special

    def one(h, k, rho):
        s = np.sqrt(1.0 - rho * rho)
        density = lambda t: np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi) * scipy.special.ndtr((k - rho * t) / s)
        return scipy.integrate.quad(density, -np.inf, h, epsabs=1e-15, epsrel=1e-13)[0]

    dtype = np.result_type(h, k, rho)
    return np.vectorize(one, otypes=[np.float64])(h, k, rho).astype(dtype)


def _stats(dist, method):
    def ref(*args):
        import scipy.stats

        arrays = [a for a in args if isinstance(a, np.ndarray)]
        dtype = np.result_type(*[a.dtype if a.dtype.kind == "f" else np.float64 for a in arrays])
        return np.asarray(getattr(getattr(scipy.stats, dist), method)(*args)).astype(dtype)

    return ref


def _uniform(*ranges, shapes=SHAPES, grads=None):
    """Arrays of one broadcastable shape, one value range per argument."""

    def samples(dtype):
        @st.composite
        def draw(draw):
            shape = draw(shapes)
            args = tuple(draw(tensors(dtype, shape, scalars(dtype, lo, hi))) for lo, hi in ranges)
            return SampleInput(args, grad_argnums=tuple(range(len(ranges))) if grads is None else grads)

        return draw()

    return samples


def _special(name, ranges, op_types, samples_grads=None, **kwargs):
    return OpInfo(
        f"special.{name}",
        getattr(tl.special, name),
        _scipy(name),
        _uniform(*ranges, grads=samples_grads),
        op_types=op_types,
        dtypes=kwargs.pop("dtypes", FLOATS),
        **kwargs,
    )


def _log_tail_factor(op_type, **attrs):
    """The op ``op_type`` (the log of the series or continued fraction of an incomplete gamma or beta function's
    tail, ``tl.stats``' log tails)."""
    return lambda *args: tl.ops.get(op_type)(*args, **attrs)


def _log_tail_factor_reference(kind):
    """SciPy's tail divided by its prefactor, in logs, where neither underflows: ``log S`` (``kind`` "lower"),
    ``log H`` ("upper") of P(a, x) = x**a e**-x / Gamma(a + 1) S and Q(a, x) = x**a e**-x / Gamma(a) H, ``log K``
    ("beta") of I_x(a, b) = x**a (1 - x)**b / (a B(a, b)) K."""

    def ref(*args):
        import scipy.special as sp

        dtype = np.result_type(*args)
        a, *rest = (np.asarray(v, np.float64) for v in args)
        if kind == "beta":
            b, x = rest
            out = np.log(sp.betainc(a, b, x)) - (sp.xlogy(a, x) + sp.xlog1py(b, -x) - np.log(a) - sp.betaln(a, b))
        else:
            (x,) = rest
            lead = sp.xlogy(a, x) - x - sp.gammaln(a)
            out = np.log(sp.gammaincc(a, x)) - lead if kind == "upper" else np.log(sp.gammainc(a, x)) - lead + np.log(a)
        return out.astype(dtype)

    return ref


# ---------------------------------------------------------------- special functions
@st.composite
def _polygamma_draw(draw, dtype):
    x = draw(tensors(dtype, draw(SHAPES), scalars(dtype, 0.4, 4.0)))
    return SampleInput((draw(st.sampled_from([0, 1, 2, 3])), x), grad_argnums=(1,))


def _scipy_of_orders(name):
    """``scipy.special.<name>(n, x)`` in x's dtype (an int64 array of orders made SciPy's result float64)."""

    def ref(n, x):
        import scipy.special

        return np.asarray(getattr(scipy.special, name)(n, x)).astype(x.dtype)

    return ref


@st.composite
def _orders_array_draw(draw, dtype, low=0.4, high=4.0):
    """An integer array of orders (traced, an input of the ``*OfOrders`` op) and x of its shape."""
    shape = draw(SHAPES)
    x = draw(tensors(dtype, shape, scalars(dtype, low, high)))
    n = np.array(draw(st.lists(st.integers(0, 3), min_size=x.size, max_size=x.size)), np.int64).reshape(shape)
    return SampleInput((n, x), grad_argnums=(1,))


def _poles_and_zeros(dtype):
    """xlogy samples with exact zeros in x (the defined 0 * log(0) case and its zero gradient for y)."""

    @st.composite
    def draw(draw):
        shape = draw(SHAPES)
        x = draw(tensors(dtype, shape, scalars(dtype, -2.0, 2.0) | st.just(0.0)))
        y = draw(tensors(dtype, shape, scalars(dtype, 0.3, 3.0)))
        return SampleInput((x, y), grad_argnums=(0, 1))

    return draw()


def _xlog1py_samples(dtype):
    return _poles_and_zeros(dtype).map(
        lambda s: SampleInput((s.args[0], s.args[1] - np.asarray(1.2, dtype)), grad_argnums=(0, 1))
    )


@st.composite
def _order_and_x(draw, dtype, orders, x_range):
    """An integer order (the first argument, not differentiated) and x."""
    x = draw(tensors(dtype, draw(SHAPES), scalars(dtype, *x_range)))
    return SampleInput((draw(st.sampled_from(orders)), x), grad_argnums=(1,))


@st.composite
def _lpmv_draw(draw, dtype):
    """lpmv's integer order m (SciPy's is NaN for another), a real degree v and x inside (-1, 1); gradients in x."""
    shape = draw(SHAPES)
    m = draw(st.sampled_from([-2, -1, 0, 1, 2, 3]))
    v = draw(tensors(dtype, shape, scalars(dtype, 2.2, 4.8)))
    x = draw(tensors(dtype, shape, scalars(dtype, -0.9, 0.9)))
    return SampleInput((m, v, x), grad_argnums=(2,))


@st.composite
def _multigammaln_draw(draw, dtype):
    d = draw(st.sampled_from([1, 2, 3]))
    return SampleInput((draw(tensors(dtype, draw(SHAPES), scalars(dtype, 1.2, 5.0))), d), grad_argnums=(0,))


@st.composite
def _softmax_draw(draw, dtype):
    axis = draw(st.sampled_from([None, 0, -1, (0, 1), (1, 2)]))
    shape = draw(st.sampled_from([(2, 3, 2), (3, 2, 1)] if isinstance(axis, tuple) else [(2, 3), (4,), (2, 1, 2)]))
    return SampleInput((draw(tensors(dtype, shape, scalars(dtype, -4.0, 4.0))),), {"axis": axis})


def _boxcox_samples(shift):
    """x (shifted: boxcox1p takes x - 1) and a lambda that is often 0 or near it, where the series takes over."""

    def samples(dtype):
        @st.composite
        def draw(draw):
            shape = draw(SHAPES)
            x = draw(tensors(dtype, shape, scalars(dtype, 0.2, 3.0)))
            small = st.sampled_from([0.0, 1e-3, -0.02, 0.04])
            lmbda = draw(tensors(dtype, shape, scalars(dtype, -1.5, 1.5) | small))
            return SampleInput(((x - np.asarray(shift, dtype)).astype(dtype), lmbda), grad_argnums=(0, 1))

        return draw()

    return samples


_SPECIAL = [
    _special(
        "gammaln",
        [(0.2, 5.0)],
        ("Lgamma",),
        error_inputs=(ErrorInput((["a"],), exc=TypeError, match=r"Lgamma: input 'x' is not numeric"),),
    ),
    _special("digamma", [(0.3, 5.0)], ("Digamma",)),
    OpInfo(
        "special.polygamma",
        tl.special.polygamma,
        _scipy("polygamma"),
        _polygamma_draw,
        op_types=("Polygamma",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (-1, np.ones(2)),
                exc=ValueError,
                match=r"Polygamma: the order n must be a non-negative integer \(or integer array\), got -1",
            ),
            ErrorInput(
                (1.5, np.ones(2)), exc=ValueError, match=r"Polygamma: the order n must be a non-negative integer"
            ),
        ),
    ),
    OpInfo(
        "special.polygamma_orders_array",
        traced_node(tl.special.polygamma),
        _scipy_of_orders("polygamma"),
        _orders_array_draw,
        op_types=("Polygamma", "PolygammaOfOrders"),  # traced, the orders are an input
        dtypes=FLOATS,
    ),
    _special("gamma", [(0.3, 4.0)], ("Gamma",)),
    _special(
        "betaln",
        [(0.3, 4.0), (0.3, 4.0)],
        ("Betaln",),
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), np.ones(4)),
                exc=ValueError,
                match=r"Betaln: shapes \(2, 3\) and \(4,\) are not broadcastable \(inputs a: "
                r"shape \(2, 3\) float64, b: shape \(4,\) float64\)",
            ),
        ),
    ),
    _special("beta", [(0.3, 4.0), (0.3, 4.0)], ("Beta",)),
    _special("erf", [(-3.0, 3.0)], ("Erf",)),
    _special("erfc", [(-3.0, 3.0)], ("Erfc",)),
    _special("erfinv", [(-0.9, 0.9)], ("Erfinv",)),
    _special("erfcinv", [(0.1, 1.9)], ("Erfcinv",)),
    _special("erfcx", [(-3.0, 30.0)], ("Erfcx",)),  # past 20 its gradient is the asymptotic series
    _special("ndtr", [(-5.0, 5.0)], ("Ndtr",)),
    _special("log_ndtr", [(-30.0, 5.0)], ("LogNdtr",)),
    _special("ndtri", [(0.02, 0.98)], ("Erfcinv",)),
    # first order in a and x (the second in a is not implemented, as in TensorFlow), every order in x
    _special("gammainc", [(0.5, 4.0), (0.1, 6.0)], ("Igamma", "IgammaGradA"), second_order=False),
    # the inverses: first order in the parameters, every order in q
    _special("gammaincinv", [(0.5, 4.0), (0.05, 0.95)], ("Igammainv", "IgammaGradA"), second_order=False),
    _special("gammainccinv", [(0.5, 4.0), (0.05, 0.95)], ("Igammacinv", "IgammaGradA"), second_order=False),
    _special("betaincinv", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)], ("Betaincinv", "BetaincGrad"), second_order=False),
    _special("betainccinv", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)], ("Betainccinv", "BetaincGrad"), second_order=False),
    *(
        OpInfo(
            f"special.{name}_in_q",
            getattr(tl.special, name),
            _scipy(name),
            _uniform(*ranges, grads=(len(ranges) - 1,)),
            op_types=(op_type,),
            dtypes=FLOATS,
        )
        for name, op_type, ranges in (
            ("gammaincinv", "Igammainv", [(0.5, 4.0), (0.05, 0.95)]),
            ("gammainccinv", "Igammacinv", [(0.5, 4.0), (0.05, 0.95)]),
            ("betaincinv", "Betaincinv", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)]),
            ("betainccinv", "Betainccinv", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)]),
        )
    ),
    _special("gammaincc", [(0.5, 4.0), (0.1, 6.0)], ("Igammac", "IgammaGradA"), second_order=False),
    OpInfo(
        "special.gammainc_in_x",
        tl.special.gammainc,
        _scipy("gammainc"),
        _uniform((0.5, 4.0), (0.1, 6.0), grads=(1,)),
        op_types=("Igamma",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "special.gammaincc_in_x",
        tl.special.gammaincc,
        _scipy("gammaincc"),
        _uniform((0.5, 4.0), (0.1, 6.0), grads=(1,)),
        op_types=("Igammac",),
        dtypes=FLOATS,
    ),
    # first order in a, b and x (the second in a and b is not implemented), every order in x
    _special("betainc", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)], ("Betainc", "BetaincGrad"), second_order=False),
    _special("betaincc", [(0.5, 4.0), (0.5, 4.0), (0.05, 0.95)], ("Betaincc", "BetaincGrad"), second_order=False),
    # the logs of the far tails' series and continued fractions (first order in a and b, every order in x)
    *(
        OpInfo(
            f"special.log_tail_{kind}",
            _log_tail_factor(op_type, **attrs),
            _log_tail_factor_reference(kind),
            _uniform(*ranges),
            op_types=op_types,
            dtypes=FLOATS,
            second_order=False,
        )
        for kind, op_type, attrs, op_types, ranges in (
            ("upper", "LogIgammaFactor", {"upper": True}, ("LogIgammaFactor",), [(0.5, 4.0), (6.0, 20.0)]),
            ("lower", "LogIgammaFactor", {"upper": False}, ("LogIgammaFactor",), [(3.0, 8.0), (0.1, 3.5)]),
            (
                "beta",
                "LogBetaincFraction",
                {},
                ("LogBetaincFraction", "LogBetaincFractionGrad"),
                [(2.0, 5.0), (2.0, 5.0), (0.02, 0.24)],
            ),
        )
    ),
    OpInfo(
        "special.betainc_in_x",
        tl.special.betainc,
        _scipy("betainc"),
        _uniform((0.5, 4.0), (0.5, 4.0), (0.05, 0.95), grads=(2,)),
        op_types=("Betainc",),
        dtypes=FLOATS,
    ),
    _special("zeta", [(1.5, 5.0), (0.5, 3.0)], ("Zeta", "ZetaDerivative")),
    OpInfo(
        "special.zeta_riemann",
        tl.special.zeta,
        _scipy("zeta"),
        lambda dtype: tensors(dtype, SHAPES, scalars(dtype, -4.0, 0.7) | scalars(dtype, 1.3, 5.0)).map(
            lambda x: SampleInput((x,))
        ),
        op_types=("RiemannZeta", "ZetaDerivative"),
        dtypes=FLOATS,
    ),
    OpInfo(
        "special.multigammaln",
        tl.special.multigammaln,
        _scipy("multigammaln"),
        _multigammaln_draw,
        op_types=("Lgamma",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput((np.ones(2), 0), match=r"multigammaln: the dimension d must be a positive integer, got 0"),
        ),
    ),
    _special("loggamma", [(0.3, 5.0)], ("Lgamma",)),
    _special("factorial", [(0.2, 5.0)], ("Gamma",)),
    _special("binom", [(4.0, 8.0), (0.5, 3.5)], ("Binom",)),
    _special("comb", [(4.0, 8.0), (0.5, 3.5)], ("Binom",)),
    _special("poch", [(0.5, 3.0), (-0.4, 2.0)], ("Poch",)),
    _special("gammasgn", [(-3.9, 4.0)], ("Gammasgn",), differentiable=False),
    _special("entr", [(0.1, 3.0)], ("Entr",)),
    _special("rel_entr", [(0.1, 3.0), (0.1, 3.0)], ("RelEntr",)),
    _special("kl_div", [(0.1, 3.0), (0.1, 3.0)], ("KlDiv",)),
    OpInfo("special.softmax", tl.special.softmax, _scipy("softmax"), _softmax_draw, dtypes=FLOATS),
    OpInfo(
        "special.log_softmax",
        tl.special.log_softmax,
        _scipy("log_softmax"),
        _softmax_draw,
        dtypes=FLOATS,
    ),
    _special("expi", [(0.2, 3.0)], ("Expi",)),
    _special("exp1", [(0.2, 3.0)], ("Exp1",)),
    OpInfo(
        "special.expn",
        tl.special.expn,
        _scipy("expn"),
        lambda dtype: _order_and_x(dtype, [0, 1, 2, 3], (0.3, 3.0)),
        op_types=("Expn",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (-1, np.ones(2)), match=r"Expn: the order n must be a non-negative integer \(or integer array\), got -1"
            ),
        ),
    ),
    OpInfo(
        "special.expn_orders_array",
        traced_node(tl.special.expn),
        _scipy_of_orders("expn"),
        lambda dtype: _orders_array_draw(dtype, 0.3, 3.0),
        op_types=("Expn", "ExpnOfOrders"),
        dtypes=FLOATS,
    ),
    _special("dawsn", [(-40.0, 40.0)], ("Dawsn",)),  # past |x| = 20 its gradient is the asymptotic series
    _special("spence", [(0.1, 3.0)], ("Spence",)),
    _special("owens_t", [(-2.0, 2.0), (-2.0, 2.0)], ("OwensT",)),
    OpInfo(
        "special.boxcox", tl.special.boxcox, _scipy("boxcox"), _boxcox_samples(0.0), op_types=("Expm1",), dtypes=FLOATS
    ),
    OpInfo(
        "special.boxcox1p",
        tl.special.boxcox1p,
        _scipy("boxcox1p"),
        _boxcox_samples(1.0),
        op_types=("Log1p",),
        dtypes=FLOATS,
    ),
    _special("expit", [(-6.0, 6.0)], ("Sigmoid",)),
    _special("logit", [(0.05, 0.95)], ("Logit",)),
    _special("log_expit", [(-40.0, 40.0)], ("LogSigmoid",)),
    OpInfo("special.xlogy", tl.special.xlogy, _scipy("xlogy"), _poles_and_zeros, op_types=("Xlogy",), dtypes=FLOATS),
    OpInfo(
        "special.xlog1py", tl.special.xlog1py, _scipy("xlog1py"), _xlog1py_samples, op_types=("Xlog1py",), dtypes=FLOATS
    ),
    _special("i0", [(-3.0, 3.0)], ("BesselI0",)),
    _special("i1", [(-3.0, 3.0)], ("BesselI1",)),
    _special("i0e", [(-3.0, 3.0)], ("BesselI0e",), kinks=True),  # exp(-|x|): a kink at 0
    _special("i1e", [(-3.0, 3.0)], ("BesselI1e",), kinks=True),
    # Past |x| = 30 the scaled Bessel gradients are Hankel's expansion: checked to second order there too.
    *(
        OpInfo(
            f"special.{name}_large",
            getattr(tl.special, name),
            _scipy(name),
            _uniform((-60.0, 60.0)),
            op_types=(op_type,),
            dtypes=FLOATS,
            kinks=True,
        )
        for name, op_type in (("i0e", "BesselI0e"), ("i1e", "BesselI1e"))
    ),
    # real order v (no gradient in v, as torch and JAX), every order in x; x > 0 (NaN below for non-integer v)
    *(
        _special(name, [(-2.5, 3.0), x_range], (op_type,), samples_grads=(1,))
        for name, op_type, x_range in (
            ("jv", "BesselJv", (0.2, 12.0)),
            ("yv", "BesselYv", (0.3, 12.0)),
            ("iv", "BesselIv", (0.2, 5.0)),
            ("kv", "BesselKv", (0.2, 5.0)),
            ("ive", "BesselIve", (0.2, 40.0)),
            ("kve", "BesselKve", (0.2, 40.0)),
        )
    ),
    OpInfo("special.lpmv", tl.special.lpmv, _scipy("lpmv"), _lpmv_draw, op_types=("Lpmv",), dtypes=FLOATS),
    _special("k0", [(0.2, 5.0)], ("BesselK0",)),
    _special("k1", [(0.2, 5.0)], ("BesselK1",)),
    # past x = 30 the scaled K gradients are Hankel's expansion: checked to second order there too
    _special("k0e", [(0.2, 60.0)], ("BesselK0e",)),
    _special("k1e", [(0.2, 60.0)], ("BesselK1e",)),
    _special("j0", [(-20.0, 20.0)], ("BesselJ0",)),
    _special("j1", [(-20.0, 20.0)], ("BesselJ1",)),
    _special("y0", [(0.3, 20.0)], ("BesselY0",)),
    _special("y1", [(0.3, 20.0)], ("BesselY1",)),
    # two outputs: (S, C), (Si, Ci), (Shi, Chi)
    *(
        OpInfo(
            f"special.{name}", getattr(tl.special, name), _scipy_pair(name), _uniform(r), op_types=(t,), dtypes=FLOATS
        )
        for name, t, r in (
            ("fresnel", "Fresnel", (-3.0, 3.0)),
            ("sici", "Sici", (0.2, 6.0)),
            ("shichi", "Shichi", (0.2, 4.0)),
        )
    ),
    _special("ellipk", [(-2.0, 0.9)], ("EllipticK",)),
    _special("ellipe", [(-2.0, 0.9)], ("EllipticE",)),
    # four outputs; to the second order in m (through EllipticIncGradM), every order in u
    OpInfo(
        "special.ellipj",
        tl.special.ellipj,
        _ellipj_ref,
        _uniform((-4.0, 4.0), (0.05, 0.9)),
        op_types=("EllipticJ", "EllipticIncGradM"),
        dtypes=FLOATS,
    ),
    OpInfo(
        "special.ellipj_in_u",
        tl.special.ellipj,
        _ellipj_ref,
        _uniform((-4.0, 4.0), (0.05, 0.9), grads=(0,)),
        op_types=("EllipticJ",),
        dtypes=FLOATS,
    ),
    # to the second order in m (the third is not implemented), every order in phi
    _special("ellipkinc", [(-4.0, 4.0), (-2.0, 0.9)], ("EllipticF", "EllipticIncGradM")),
    _special("ellipeinc", [(-4.0, 4.0), (-2.0, 0.9)], ("EllipticEInc", "EllipticIncGradM")),
    *(
        OpInfo(
            f"special.{name}_in_phi",
            getattr(tl.special, name),
            _scipy(name),
            _uniform((-4.0, 4.0), (-2.0, 0.9), grads=(0,)),
            op_types=(op_type,),
            dtypes=FLOATS,
        )
        for name, op_type in (("ellipkinc", "EllipticF"), ("ellipeinc", "EllipticEInc"))
    ),
    OpInfo(
        "special.lambertw",
        tl.special.lambertw,
        _lambertw_ref,
        _uniform((-0.3, 5.0)),
        op_types=("LambertW",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (np.ones(2),), {"k": 1}, match=r"lambertw: the branch k must be 0 or -1 \(the real branches\), got 1"
            ),
        ),
    ),
    OpInfo(
        "special.lambertw_k_minus_1",
        tl.special.lambertw,
        _lambertw_ref,
        lambda dtype: _uniform((-0.3, -0.05))(dtype).map(lambda s: SampleInput(s.args, {"k": -1}, s.grad_argnums)),
        op_types=("LambertW",),
        dtypes=FLOATS,
    ),
    # to the second order in a, b and x (the series of the derivatives; the third in a and b is not implemented),
    # every order in x
    _special("hyp1f1", [(0.2, 3.0), (0.5, 3.0), (-2.0, 2.0)], ("Hyp1f1", "Hyp1f1Grad")),
    OpInfo(
        "special.hyp1f1_in_x",
        tl.special.hyp1f1,
        _scipy("hyp1f1"),
        _uniform((-3.0, 3.0), (0.5, 3.0), (-6.0, 6.0), grads=(2,)),
        op_types=("Hyp1f1",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "special.bernoulli",
        tl.special.bernoulli,
        _bernoulli_ref,
        lambda dtype: st.integers(0, 30).map(lambda n: SampleInput((n,), grad_argnums=())),
        dtypes=(_dt.float64,),
        differentiable=False,
        error_inputs=(ErrorInput((-1,), match=r"bernoulli: n must be a non-negative integer, got -1"),),
    ),
    OpInfo(
        "special.gammaln_int",
        tl.special.gammaln,
        _scipy("gammaln"),
        lambda dtype: tensors(dtype, SHAPES, st.integers(1, 6)).map(lambda x: SampleInput((x,), grad_argnums=())),
        op_types=("Lgamma",),
        dtypes=(_dt.int64,),
        differentiable=False,
    ),
]


# ---------------------------------------------------------------- stats
@st.composite
def _poisson_draw(draw, dtype):
    shape = draw(SHAPES)
    k = draw(tensors(_dt.int64, shape, st.integers(0, 6)))
    return SampleInput((k, draw(tensors(dtype, shape, scalars(dtype, 0.3, 5.0)))), grad_argnums=(1,))


@st.composite
def _betabinom_draw(draw, dtype):
    shape = draw(SHAPES)
    k = draw(tensors(_dt.int64, shape, st.integers(-1, 10)))
    a, b = (draw(tensors(dtype, shape, scalars(dtype, 0.5, 4.0))) for _ in range(2))
    return SampleInput((k, np.full(shape, 9, np.int64), a, b), grad_argnums=(2, 3))


@st.composite
def _betabinom_quantile_draw(draw, dtype):
    shape = draw(SHAPES)
    # a != b, neither a whole number: SciPy's sf is 1 - cdf, an ulp off where a rational cdf meets a round q
    # (isf(0.5, 9, 1, 1) is 5 there for 4: sf(4) = 0.5000000000000001)
    q, a, b = (
        draw(tensors(dtype, shape, scalars(dtype, lo, hi))) for lo, hi in ((0.05, 0.95), (0.6, 0.95), (1.2, 3.5))
    )
    return SampleInput((q, np.full(shape, 9, np.int64), a, b), grad_argnums=())


@st.composite
def _dirichlet_draw(draw, dtype):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    k = draw(st.sampled_from([3, 2, 4]))
    shape = (k,) if draw(st.booleans()) else (k, draw(st.sampled_from([2, 3])))
    x = rng.uniform(0.1, 1.0, shape)
    alpha = rng.uniform(0.5, 3.0, k)
    return SampleInput(((x / x.sum(axis=0)).astype(dtype), alpha.astype(dtype)), grad_argnums=(1,))


def _dirichlet_ref(x, alpha):
    # SciPy refuses points whose sum misses 1 by more than 1e-9, which float32 rounding does (0.99999994):
    # it gets the point in float64, scaled back onto the simplex (a change far below float32's tolerance).
    x64 = x.astype(np.float64)
    return _stats("dirichlet", "logpdf")(x64 / x64.sum(axis=0), alpha.astype(np.float64)).astype(x.dtype)


@st.composite
def _mvn_draw(draw, dtype):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    k = draw(st.sampled_from([2, 3, 1]))
    batch = draw(st.sampled_from([(), (3,), (2, 2)]))
    a = rng.uniform(-1, 1, (k, k))
    cov = a @ a.T + k * np.eye(k)
    return SampleInput(
        (rng.standard_normal(batch + (k,)).astype(dtype), rng.standard_normal(k).astype(dtype), cov.astype(dtype)),
        grad_argnums=(0, 1, 2),
    )


_STATS = [
    OpInfo(
        "stats.norm.logpdf",
        tl.stats.norm.logpdf,
        _stats("norm", "logpdf"),
        _uniform((-3.0, 3.0), (-1.0, 1.0), (0.5, 2.0)),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.norm.logcdf",
        tl.stats.norm.logcdf,
        _stats("norm", "logcdf"),
        _uniform((-8.0, 3.0), (-1.0, 1.0), (0.5, 2.0)),
        op_types=("LogNdtr",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.norm.sf",
        tl.stats.norm.sf,
        _stats("norm", "sf"),
        _uniform((-3.0, 8.0), (-1.0, 1.0), (0.5, 2.0)),
        op_types=("Ndtr",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.norm.logsf",
        tl.stats.norm.logsf,
        _stats("norm", "logsf"),
        _uniform((-3.0, 8.0), (-1.0, 1.0), (0.5, 2.0)),
        op_types=("LogNdtr",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.norm.ppf",
        tl.stats.norm.ppf,
        _stats("norm", "ppf"),
        _uniform((0.02, 0.98), (-1.0, 1.0), (0.5, 2.0)),
        op_types=("Erfcinv",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.norm.isf",
        tl.stats.norm.isf,
        _stats("norm", "isf"),
        _uniform((0.02, 0.98), (-1.0, 1.0), (0.5, 2.0)),
        op_types=("Erfcinv",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.t.logpdf",
        tl.stats.t.logpdf,
        _stats("t", "logpdf"),
        _uniform((-3.0, 3.0), (0.5, 6.0), (-1.0, 1.0), (0.5, 2.0)),
        op_types=("Betaln",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.poisson.logpmf",
        tl.stats.poisson.logpmf,
        _stats("poisson", "logpmf"),
        _poisson_draw,
        op_types=("Xlogy", "Lgamma"),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.poisson.cdf",
        tl.stats.poisson.cdf,
        _stats("poisson", "cdf"),
        _poisson_draw,
        op_types=("Igammac",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.poisson.sf",
        tl.stats.poisson.sf,
        _stats("poisson", "sf"),
        _poisson_draw,
        op_types=("Igamma",),
        dtypes=FLOATS,
    ),
    *(
        OpInfo(
            f"stats.betabinom.{method}",
            getattr(tl.stats.betabinom, method),
            _stats("betabinom", method),
            _betabinom_draw,
            op_types=("BetabinomTail",),
            dtypes=FLOATS,
        )
        for method in ("cdf", "sf")
    ),
    *(
        OpInfo(
            f"stats.betabinom.{method}",
            getattr(tl.stats.betabinom, method),
            _stats("betabinom", method),
            _betabinom_quantile_draw,
            op_types=("BetabinomCount", "BetabinomTail"),
            dtypes=FLOATS,
            differentiable=False,
        )
        for method in ("ppf", "isf")
    ),
    OpInfo(
        "stats.gamma.cdf",
        tl.stats.gamma.cdf,
        _stats("gamma", "cdf"),
        _uniform((0.2, 5.0), (0.5, 4.0), grads=(0,)),
        op_types=("Igamma",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.gamma.sf",
        tl.stats.gamma.sf,
        _stats("gamma", "sf"),
        _uniform((0.2, 5.0), (0.5, 4.0), grads=(0,)),
        op_types=("Igammac",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.beta.logpdf",
        tl.stats.beta.logpdf,
        _stats("beta", "logpdf"),
        _uniform((0.05, 0.95), (0.5, 4.0), (0.5, 4.0)),
        op_types=("Xlogy", "Xlog1py", "Betaln"),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.gamma.logpdf",
        tl.stats.gamma.logpdf,
        _stats("gamma", "logpdf"),
        _uniform((0.2, 5.0), (0.5, 4.0)),
        op_types=("Xlogy", "Lgamma"),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.dirichlet.logpdf",
        tl.stats.dirichlet.logpdf,
        _dirichlet_ref,
        _dirichlet_draw,
        op_types=("Lgamma",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (np.full(2, 0.5), np.ones(3)),
                exc=ValueError,
                match=r"dirichlet.logpdf: x must have the 3 components of alpha on "
                r"its first axis \(x shape \(2,\) float64, alpha shape \(3,\) "
                r"float64\)",
            ),
        ),
    ),
    OpInfo(
        "special.bivariate_normal_cdf",
        bivariate_normal_cdf,
        _bivariate_normal_ref,
        _uniform((-3.0, 3.0), (-3.0, 3.0), (-0.9, 0.9)),
        op_types=("BivariateNormalCdf",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "stats.multivariate_normal.logpdf",
        tl.stats.multivariate_normal.logpdf,
        _stats("multivariate_normal", "logpdf"),
        _mvn_draw,
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.zeros(3), np.zeros(2), np.eye(2)),
                exc=ValueError,
                match=r"multivariate_normal.logpdf: x \(..., k\), mean \(..., k\) and cov \(..., k, k\) "
                r"must agree and their batch shapes broadcast \(x shape \(3,\) float64, mean shape \(2,\) "
                r"float64, cov shape \(2, 2\) float64\)",
            ),
        ),
    ),
]

OPINFOS = _SPECIAL + _STATS
