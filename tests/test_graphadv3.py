"""Graph mode (tl.function) as an adversary, third round.

What it attacks, and against which references:
- the passes: an op declared ``side_effect`` (run for more than its result, as TensorFlow's stateful
  ``tf.print``) runs at every call of the traced function, as often as eagerly: it is never folded into a
  constant on constant inputs, nor merged with an identical call (the eager call count is the reference);
- debugging inside a trace: ``with tl.debugging.enable_check_numerics():`` in a traced function's body checks
  the ops under it at every run, branches included, and nothing outside it (the eager calls are the reference);
- tracing and the cache: a tl.function method runs each instance's Variables, also where instances compare by
  value, and takes an input_signature for the arguments after the instance (tf.function's per-instance
  methods; the eager method call is the reference);
- modes agree: the gradient of histogram's default edges (the data's min and max) in the data, eager against
  traced, float64 central differences and NumPy's edges (values exact);
- unknown sizes: reductions traced with every size None, run on slices that are empty or of length 1
  (max/min with initial, logsumexp and the softmaxes built on it, median, nanmedian, nanquantile): NumPy's
  and SciPy's values, eager's dtypes and shapes, and their gradients against eager; the Frechet derivative of
  expm (and expm's gradient, which is one) of matrices of unknown size, against scipy.linalg.expm_frechet;
"""

import gc
import inspect
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import tensorlib as tl


def _counting_op(name):
    """A side-effect op recording the sum of each input it sees, and the record."""
    seen = []
    op = tl.ops.defop(name, inputs=("x",), infer=lambda x: x, side_effect=True)

    @op.kernel("numpy")
    def _record(x):
        seen.append(float(np.sum(x)))
        return x

    tl.grad.not_differentiable(name)
    return op, seen


def test_a_side_effect_op_runs_at_every_call_as_often_as_eagerly():
    # Before: the call on a constant ran once, when the graph was optimized, and the two calls on x were
    # merged into one: 4 runs in three calls instead of 9.
    log, seen = _counting_op("TestGraphadv3Log")

    def f(x):
        log(tl.tensor(2.0))
        log(x)
        log(x)
        return x * 2.0

    traced = tl.function(f)
    for value in (1.0, 3.0, 5.0):
        f(tl.tensor(value))
    eager = list(seen)
    seen.clear()
    for value in (1.0, 3.0, 5.0):
        assert float(traced(tl.tensor(value))) == 2.0 * value
    assert eager == [2.0, 1.0, 1.0, 2.0, 3.0, 3.0, 2.0, 5.0, 5.0]
    assert seen == eager


# ---------------------------------------------------------------- reductions over slices of unknown length
_SHAPES = [(0, 3), (3, 0), (0, 0), (1, 1), (2, 3)]
_AXES = [None, 0, 1, (0, 1)]


def _unknown_graph(f, x):
    """``f`` traced with every size of ``x`` unknown, run on ``x``."""
    return tl.function(f).get_graph(tl.TensorSpec((None,) * x.ndim, x.dtype))(x)


def _filled(shape, dtype, seed):
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    return x.astype(dtype)


@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_with_initial_of_slices_of_unknown_length_match_numpy(shape, dtype, name):
    # Before: an empty slice raised "zero-size array to reduction operation maximum which has no identity"
    # when the graph ran; eagerly (and in NumPy) the result is initial.
    x = _filled(shape, dtype, 0)
    initial = True if dtype is np.bool_ else 0.5
    for axis in _AXES:
        for keepdims in (False, True):
            expected = getattr(np, name)(x, axis=axis, keepdims=keepdims, initial=initial)
            got = _unknown_graph(lambda a: getattr(tl, name)(a, axis=axis, keepdims=keepdims, initial=initial), x)
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape), (axis, keepdims)
            np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("shape", _SHAPES)
def test_logsumexp_and_softmax_of_slices_of_unknown_length_match_scipy(shape):
    # Before: an empty slice raised (the max that shifts the exponentials has no identity); SciPy's
    # logsumexp of no terms is -inf, and eager tensorlib gives it.
    x = _filled(shape, np.float64, 1)
    weights = np.abs(_filled(shape, np.float64, 2)) + 0.5
    for axis in (None, 0, 1):
        expected = scipy.special.logsumexp(x, axis=axis) if x.size else np.full(np.sum(x, axis=axis).shape, -np.inf)
        got = _unknown_graph(lambda a: tl.logsumexp(a, axis=axis), x)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
        weighted = _unknown_graph(lambda a: tl.logsumexp(a, axis=axis, b=weights), x)
        np.testing.assert_allclose(weighted.numpy(), tl.logsumexp(x, axis=axis, b=weights).numpy(), rtol=1e-12)
        for f in (tl.special.softmax, tl.special.log_softmax):
            got = _unknown_graph(lambda a, f=f: f(a, axis=axis), x)
            assert got.shape == x.shape
            np.testing.assert_allclose(got.numpy(), f(x, axis=axis).numpy(), rtol=1e-12)
        if x.size:
            expected = scipy.special.softmax(x, axis=axis)
            np.testing.assert_allclose(_unknown_graph(lambda a: tl.special.softmax(a, axis=axis), x).numpy(), expected)


@pytest.mark.parametrize("shape", [(1, 1), (2, 3)])
def test_gradients_through_max_with_initial_and_logsumexp_of_unknown_length_match_eager(shape):
    x = _filled(shape, np.float64, 3)
    x.flat[-1] = 0.25  # below initial: no gradient
    for axis in _AXES:
        for f in (lambda a: tl.sum(tl.max(a, axis=axis, initial=0.5)), lambda a: tl.sum(tl.logsumexp(a, axis=axis))):
            eager = tl.grad(f)(x).numpy()
            np.testing.assert_allclose(_unknown_graph(tl.grad(f), x).numpy(), eager, rtol=1e-12)


@pytest.mark.parametrize("shape", _SHAPES + [(4, 5)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_median_nanmedian_and_nanquantile_of_slices_of_unknown_length_match_numpy(shape, dtype):
    # Before: an empty slice raised IndexError (GatherV2 / TakeAlongAxis: index out of bounds for size 0)
    # when the graph ran; NumPy's median and nanmedian of no elements are NaN, as eager tensorlib's.
    x = _filled(shape, dtype, 4)
    if dtype is not np.int64 and x.size > 3:
        x.flat[2] = np.nan
    for axis in _AXES:
        for keepdims in (False, True):
            with warnings.catch_warnings():  # NumPy warns of the empty slices it gives NaN for
                warnings.simplefilter("ignore", RuntimeWarning)
                references = [np.median(x, axis=axis, keepdims=keepdims)]
                if dtype is not np.int64:
                    references.append(np.nanmedian(x, axis=axis, keepdims=keepdims))
            functions = [tl.median, tl.nanmedian][: len(references)]
            for f, expected in zip(functions, references):
                got = _unknown_graph(lambda a, f=f: f(a, axis=axis, keepdims=keepdims), x)
                assert (got.dtype, got.shape) == (expected.dtype, expected.shape), (f.__name__, axis, keepdims)
                np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, equal_nan=True)
            if dtype is not np.int64:
                eager = tl.nanquantile(x, [0.2, 0.7], axis=axis, keepdims=keepdims)
                got = _unknown_graph(lambda a: tl.nanquantile(a, [0.2, 0.7], axis=axis, keepdims=keepdims), x)
                assert (got.dtype, got.shape) == (eager.dtype, eager.shape)
                np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_expm_frechet_and_the_gradient_of_expm_of_unknown_size_match_scipy(n):
    # Before: at n = 0 both raised "zero-size array to reduction operation maximum" when the graph ran (the
    # scale of E and A is a max); eagerly they are empty, as SciPy's.
    a = np.random.default_rng(n).standard_normal((n, n))
    e = np.random.default_rng(n + 10).standard_normal((n, n))
    spec = tl.TensorSpec((None, None), "float64")
    expm, frechet = tl.function(tl.linalg.expm_frechet).get_graph(spec, spec)(a, e)
    expected = scipy.linalg.expm_frechet(a, e) if n else (np.zeros((0, 0)), np.zeros((0, 0)))
    np.testing.assert_allclose(expm.numpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(frechet.numpy(), expected[1], rtol=1e-10, atol=1e-12)
    # <e, expm(a)>'s gradient is the Frechet derivative at a^T along e
    gradient = tl.function(tl.grad(lambda x: tl.sum(tl.linalg.expm(x) * e))).get_graph(spec)(a)
    expected = scipy.linalg.expm_frechet(a.T, e)[1] if n else np.zeros((0, 0))
    np.testing.assert_allclose(gradient.numpy(), expected, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- methods: graphs per instance
class _Scaled:
    """A layer whose instances compare (and hash) by their size alone, as a config-keyed class may."""

    def __init__(self, size, value):
        self.size = size
        self.w = tl.Variable(np.full(size, value))

    def __eq__(self, other):
        return isinstance(other, _Scaled) and self.size == other.size

    def __hash__(self):
        return hash(self.size)

    def eager(self, x):
        return x * self.w + 1.0

    traced = tl.function(eager)
    served = tl.function(eager, input_signature=[tl.TensorSpec((None,), "float64")])


def test_a_method_runs_its_own_instances_variables_where_instances_compare_equal():
    # Before: the second layer, equal to the first by value, reused the first one's graph and ran the first
    # one's Variable: [2, 2] instead of [6, 6].
    first, second = _Scaled(2, 1.0), _Scaled(2, 5.0)
    x = np.array([1.0, 2.0])
    for layer in (first, second, first, second):
        np.testing.assert_array_equal(layer.traced(x).numpy(), x * layer.w.numpy() + 1.0)
        np.testing.assert_array_equal(layer.traced(x).numpy(), layer.eager(x).numpy())
    assert _Scaled.traced.retrace_reasons[-1] == "self: another _Scaled object (objects are keyed by identity)"
    assert str(inspect.signature(first.traced)) == "(x)"  # a bound method's, as a Python method's


def test_a_method_takes_an_input_signature_for_the_arguments_after_the_instance():
    # Before: every call raised "called with 2 arguments, the input_signature has 1" (the instance counted).
    first, second = _Scaled(3, 2.0), _Scaled(3, -1.0)
    before = _Scaled.served.trace_count
    for layer in (first, second):
        for x in (np.array([1.0, 2.0, 3.0]), np.array([4.0])):  # a size 1 broadcasts against w
            np.testing.assert_array_equal(layer.served(x).numpy(), x * layer.w.numpy() + 1.0)
            np.testing.assert_array_equal(layer.served(x=x).numpy(), layer.eager(x).numpy())
    assert _Scaled.served.trace_count - before == 2  # one graph per instance, for every size
    with pytest.raises(ValueError, match=r"eager: x has shape \(3,\) and dtype float32, .*input_signature\[0\]"):
        first.served(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="called with 2 arguments, the input_signature has 1"):
        first.served(np.ones(3), np.ones(3))
    graphs = _Scaled.served.cache_info()["cached_graphs"]
    del second, layer
    gc.collect()
    assert _Scaled.served.cache_info()["cached_graphs"] == graphs - 1  # the instance's graph left with it


# ---------------------------------------------------------------- histogram edges: eager and traced gradients
def _edges_loss(a, bins, density):
    hist, edges = tl.histogram(a, bins, density=density)
    return tl.sum(hist * np.arange(1.0, bins + 1.0)) + tl.sum(edges * edges)


@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("bins", [1, 3])
def test_the_gradient_of_histogram_edges_in_the_data_is_the_same_eager_and_traced(bins, density):
    # Before: eagerly the default edges were NumPy constants, so their gradient in the data was 0 ([0, 0, 0, 0]
    # for bins=3, density=False); traced, JAX and central differences give [0, 2 * ..., 0, ...] at the min and max.
    x = np.array([[0.1, -0.5], [0.7, 2.0]])
    eager = tl.grad(lambda a: _edges_loss(a, bins, density))(x).numpy()
    traced = tl.function(tl.grad(lambda a: _edges_loss(a, bins, density)))(x).numpy()

    def numeric(a):
        hist, edges = np.histogram(a, bins, density=density)
        return np.sum(hist * np.arange(1.0, bins + 1.0)) + np.sum(edges * edges)

    step = 1e-6
    expected = np.array(
        [(numeric(x + step * e) - numeric(x - step * e)) / (2 * step) for e in np.eye(4).reshape(4, 2, 2)]
    ).reshape(2, 2)
    np.testing.assert_allclose(eager, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(traced, expected, rtol=1e-6, atol=1e-8)
    assert np.abs(eager).sum() > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_histogram_default_edges_stay_numpys_exactly(dtype):
    rng = np.random.default_rng(5)
    for k in range(200):
        a = (rng.standard_normal(int(rng.integers(1, 12))) * 10.0 ** int(rng.integers(-20, 20))).astype(dtype)
        if k % 9 == 0:
            a[:] = a[0]  # equal min and max: widened by 0.5 each way
        bins = int(rng.integers(1, 40))
        try:
            counts, edges = np.histogram(a, bins)
        except ValueError:  # too many bins for the range, in the dtype
            with pytest.raises(ValueError, match="too many bins"):
                tl.histogram(a, bins)
            continue
        got = tl.histogram(a, bins)
        assert got[1].dtype == edges.dtype
        np.testing.assert_array_equal(got[1].numpy(), edges)
        np.testing.assert_array_equal(got[0].numpy(), counts)


# ---------------------------------------------------------------- check_numerics enabled inside a traced body
def _logged(x):
    outside = x / 0.0  # not checked, eagerly or traced: inf and NaN pass
    with tl.debugging.enable_check_numerics():
        y = tl.log(x)
        z = tl.cond(tl.sum(x) > 2.0, lambda: tl.sqrt(x - 5.0), lambda: x * 1.0)
    return y, z, outside


def test_check_numerics_enabled_inside_a_traced_function_checks_its_ops_at_every_run():
    # Before: the traced function returned log(-1) = NaN silently at every call; eagerly it raises naming Log.
    traced = tl.function(_logged)
    for value, bad_op in (([1.0, 0.5], None), ([-1.0, 0.5], "Log"), ([3.0, 0.5], "Sqrt"), ([-1.0, 0.5], "Log")):
        x = tl.tensor(np.array(value))
        if bad_op is None:
            for got, eager in zip(traced(x), _logged(x)):
                np.testing.assert_array_equal(got.numpy(), eager.numpy())
            continue
        with pytest.raises(tl.debugging.NumericsError, match=bad_op):
            _logged(x)
        with pytest.raises(tl.debugging.NumericsError, match=rf"{bad_op} output 0, traced at .*test_graphadv3.py"):
            traced(x)
    assert not tl.dispatch.observers  # the block ended: nothing is left enabled


def test_a_function_traced_while_check_numerics_is_on_outside_is_checked_only_while_it_is_on():
    f = tl.function(lambda x: tl.log(x) * 2.0)
    x = tl.tensor(np.array([-1.0]))
    with tl.debugging.enable_check_numerics():
        graph = f.get_graph(x)
        with pytest.raises(tl.debugging.NumericsError, match="Log"):
            f(x)
    assert [n.op_type for n in graph.nodes] == ["Log", "Mul"]  # the observer checks the runs, not the graph
    assert np.isnan(f(x).numpy()).all()  # off again, as eagerly
