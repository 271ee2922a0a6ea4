"""The newer ops under tl.function with unknown (None) sizes: eager's values and dtypes, or one clear error.

References are NumPy's own functions; the traced side is a graph built from TensorSpecs whose every
size is None, run on concrete inputs.
"""

import os
import pathlib
import re
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing.op_db import all_opinfos

INFOS = all_opinfos()
# A refusal to trace with unknown sizes must say that a size has to be known (never a raw TypeError).
_NEEDS_SIZES = re.compile(r"unknown|known|TensorSpec")
# Squeeze(axis=None): which unknown sizes are 1 decides the rank, so the graph assumes none is and a run
# where one is 1 fails with a KernelResultError naming Squeeze (a traced squeeze needs its axis).
_RUN_MAY_REFUSE = {"squeeze"}
# Saving fsyncs two files, milliseconds each on a disk: the catalogue's 400 saves go to memory where it can.
_RAM_FOLDER = tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)


def _unknown(x, dtype=None):
    x = np.asarray(x)
    return tl.TensorSpec((None,) * x.ndim, dtype or x.dtype)


def _traced(f, *xs):
    return tl.function(f).get_graph(*(_unknown(x) for x in xs))(*xs)


@pytest.mark.parametrize("method", ["linear", "midpoint", "nearest", "inverted_cdf", "hazen", "weibull"])
def test_quantile_with_an_unknown_slice_length_matches_numpy(method):
    # Before: ValueError "quantile: the length of the reduced axes must be known under tl.function".
    x = np.random.default_rng(0).standard_normal((3, 5))
    x[1, 2] = np.nan
    for q in (0.5, [0.0, 0.3, 1.0]):
        for axis in (1, 0, None):
            got = _traced(lambda a, q=q, axis=axis: tl.quantile(a, q, axis=axis, method=method), x)
            np.testing.assert_allclose(got.numpy(), np.quantile(x, q, axis=axis, method=method), equal_nan=True)
    g = tl.function(tl.grad(lambda a: tl.sum(tl.quantile(a, [0.25, 0.8], axis=1, method=method))))
    x = np.random.default_rng(1).standard_normal((3, 5))
    eager = tl.grad(lambda a: tl.sum(tl.quantile(a, [0.25, 0.8], axis=1, method=method)))(x)
    np.testing.assert_allclose(g.get_graph(_unknown(x))(x).numpy(), eager.numpy())


def test_median_and_percentile_trace_with_unknown_sizes_and_their_errors_name_them():
    x = np.arange(12.0)[::-1].reshape(3, 4) ** 2
    np.testing.assert_array_equal(_traced(lambda a: tl.median(a, axis=0), x).numpy(), np.median(x, axis=0))
    xi = (x % 7).astype(np.int64)
    got = _traced(lambda a: tl.median(a, axis=(0, 1), keepdims=True), xi)
    assert got.dtype == np.float64 and got.shape == (1, 1)
    np.testing.assert_array_equal(got.numpy(), np.median(xi, axis=(0, 1), keepdims=True))
    np.testing.assert_array_equal(_traced(lambda a: tl.percentile(a, [10, 90]), x).numpy(), np.percentile(x, [10, 90]))
    # Before: median's and percentile's errors said "quantile".
    with pytest.raises(TypeError, match=r"percentile: a must be real, got complex128"):
        tl.percentile(np.array([1j, 2.0]), 50)
    with pytest.raises(ValueError, match=r"percentile: q must be in \[0, 1\] \(percentiles in \[0, 100\]\), got 150"):
        tl.percentile(x, 150)
    with pytest.raises(ValueError, match=r"median: reducing several axes needs all but one size known"):
        tl.function(lambda a: tl.median(a, axis=(0, 2))).get_graph(tl.TensorSpec((None, None, None)))


@pytest.mark.parametrize("f", [tl.var, tl.std])
def test_complex_variance_traced_with_unknown_sizes_is_real(f):
    # Before: traced with an unknown size, var/std of complex64 came out complex64 (eager: float32).
    x = (np.arange(6.0) + 1j * np.arange(6.0) ** 2).reshape(2, 3).astype(np.complex64)
    got = _traced(lambda a: f(a, axis=-1, ddof=1), x)
    expected = getattr(np, f.__name__)(x, axis=-1, ddof=1)
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_matrix_rank_traced_with_unknown_sizes():
    # Before: a vector of unknown length had rank 0 whatever its values (its size read as empty), and a
    # matrix of unknown size failed in Svd's shape rule with a raw TypeError ('<' between None and None).
    for x in (np.array([0.0, 2.0]), np.zeros(3), np.zeros(0), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])):
        got = _traced(tl.linalg.matrix_rank, x)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.numpy(), np.linalg.matrix_rank(x))
    x = np.random.default_rng(2).standard_normal((2, 4, 3))
    np.testing.assert_allclose(_traced(tl.linalg.svdvals, x).numpy(), np.linalg.svd(x, compute_uv=False))
    np.testing.assert_allclose(np.abs(_traced(lambda a: tl.linalg.qr(a)[1], x).numpy()), np.abs(np.linalg.qr(x)[1]))
    np.testing.assert_array_equal(_traced(tl.linalg.matrix_rank, np.zeros((3, 0))).numpy(), 0)


@pytest.mark.parametrize("name", ["irfft", "hfft", "irfftn"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_inverse_real_ffts_default_size_traced_with_unknown_sizes(name, norm):
    # Before: ValueError "irfft: axis 0 has an unknown size, so give the output's size".
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    f = getattr(tl.fft, name)
    expected = getattr(np.fft, name)(x, norm=norm)
    got = _traced(lambda a: f(a, norm=norm), x)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    w = rng.standard_normal(expected.shape)

    def loss(a):
        return tl.sum(f(a, norm=norm) * w)

    traced = tl.function(tl.grad(loss)).get_graph(_unknown(x))(x).numpy()
    np.testing.assert_allclose(traced, tl.grad(loss)(x).numpy(), atol=1e-12)
    if norm is not None:
        return
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    # JAX's convention for complex inputs is tensorlib's (docs/complex.md).
    peer = jax.grad(lambda a: (getattr(jax.numpy.fft, name)(a, norm=norm) * w).sum())(x)
    np.testing.assert_allclose(traced, np.asarray(peer), atol=1e-10)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_ffts_cut_or_pad_an_axis_of_unknown_size_to_n(name):
    # Before: ValueError "fft: axis 0 has an unknown size, so it cannot be cut or padded to 4".
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5)) + (0 if name == "rfft" else 1j * rng.standard_normal((3, 5)))
    f = getattr(tl.fft, name)
    for n in (2, 5, 8):
        expected = getattr(np.fft, name)(x, n=n, axis=0)
        got = _traced(lambda a, n=n: f(a, n=n, axis=0), x)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
        w = rng.standard_normal(expected.shape)

        def loss(a, n=n, w=w):
            return tl.sum(tl.real(f(a, n=n, axis=0)) * w)

        traced = tl.function(tl.grad(loss)).get_graph(_unknown(x))(x).numpy()
        np.testing.assert_allclose(traced, tl.grad(loss)(x).numpy(), atol=1e-12)


def test_numpy_scalars_are_graph_constants_so_a_saved_graph_runs_without_captures(tmp_path):
    # Before: np.float32(2.0) (and np.finfo(...).eps inside tl.linalg.matrix_rank) became a capture read by
    # reference, so a graph saved without captures failed: "missing captures ['capture']".
    x = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    for f in (lambda a: a * np.float32(2.0) + np.int32(1), tl.linalg.matrix_rank):
        fn = tl.function(f)
        assert fn.get_graph(_unknown(x)).captures == []
        fn.save(tmp_path / "g.json", _unknown(x))
        loaded = tl.graph.load(tmp_path / "g.json")
        np.testing.assert_array_equal(loaded(x).numpy(), f(tl.tensor(x)).numpy())
        assert loaded(x).dtype == f(tl.tensor(x)).dtype


def _traced_and_gradient(f, x, expected):
    """f traced over unknown sizes gives NumPy's ``expected``, and its traced gradient eager's."""
    got = _traced(f, x)
    assert got.shape == np.shape(expected) and got.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got.numpy(), expected)
    w = np.random.default_rng(7).standard_normal(np.shape(expected))

    def loss(a):
        return tl.sum(f(a) * w)

    traced = tl.function(tl.grad(loss)).get_graph(_unknown(x))(x)
    np.testing.assert_allclose(traced.numpy(), tl.grad(loss)(x).numpy())


@pytest.mark.parametrize(
    "name, f, reference",
    [
        # Before, each raised a raw TypeError under unknown sizes (or, for split at points, '<' not supported
        # between NoneType and int; tile's gradient 'reshape: shape must be integers, got (2, None, 1, None)').
        ("split", lambda a: tl.split(a, [1, 3])[1], lambda a: np.split(a, [1, 3])[1]),
        ("split_negative", lambda a: tl.split(a, [-1], axis=-1)[0], lambda a: np.split(a, [-1], axis=-1)[0]),
        ("tile", lambda a: tl.tile(a, (2, 1, 3)), lambda a: np.tile(a, (2, 1, 3))),
        ("repeat", lambda a: tl.repeat(a, 2), lambda a: np.repeat(a, 2)),
        (
            "diff",
            lambda a: tl.diff(a, axis=0, prepend=1.5, append=-2.0),
            lambda a: np.diff(a, axis=0, prepend=1.5, append=-2.0),
        ),
        ("kron", lambda a: tl.kron(a, np.array([1.0, -2.0])), lambda a: np.kron(a, np.array([1.0, -2.0]))),
        ("concat", lambda a: tl.concat([a, 2 * a, a[:1]], axis=0), lambda a: np.concatenate([a, 2 * a, a[:1]], 0)),
    ],
)
def test_shape_functions_trace_with_unknown_sizes(name, f, reference):
    x = np.arange(12.0).reshape(4, 3) ** 1.5
    if name == "kron":
        x = x[0]
    _traced_and_gradient(f, x, reference(x))


@pytest.mark.parametrize("k", [0, 1, -2])
def test_vector_to_matrix_functions_trace_with_an_unknown_length(k):
    # Before: tril/triu of a vector: 'broadcast_to: shape must be integers, got (None, None)'; diag: 'unsupported
    # operand type(s) for +: NoneType and int'.
    x = np.array([1.0, -2.0, 3.0])
    for f, reference in ((tl.tril, np.tril), (tl.triu, np.triu), (tl.diag, np.diag)):
        _traced_and_gradient(lambda a, f=f: f(a, k), x, reference(x, k))
    np.testing.assert_array_equal(_traced(lambda a: tl.tril(a, k), x > 0).numpy(), np.tril(x > 0, k))


def test_concat_gradient_with_unknown_sizes_on_both_sides():
    # Before: the gradient of every input of a concat along an axis of unknown size was a raw TypeError.
    a, b, c = np.arange(3.0), np.arange(2.0) + 10, np.arange(4.0) + 20
    w = np.arange(9.0) ** 2
    grads = tl.function(tl.grad(lambda *xs: tl.sum(tl.concat(xs, 0) * w), argnums=(0, 1, 2)))
    got = grads.get_graph(_unknown(a), _unknown(b), _unknown(c))(a, b, c)
    for g, expected in zip(got, np.split(w, [3, 5])):
        np.testing.assert_array_equal(g.numpy(), expected)


def test_functions_that_need_known_sizes_say_so():
    spec = tl.TensorSpec((None, None))
    for f, message in (
        (lambda a: tl.array_split(a, 3), r"array_split: the sizes of 3 sections depend on the size of axis 0"),
        (lambda a: tl.kron(a, a), r"kron: more than one axis of the product has an unknown size"),
        (lambda a: tl.repeat(a, 2, axis=1), r"repeat: axis 1 and another axis have unknown sizes"),
        (lambda a: tl.linalg.tensorinv(a, 1), r"tensorinv: the sizes of a must be known under tl.function"),
    ):
        with pytest.raises(ValueError, match=message):
            tl.function(f).get_graph(spec)


def test_layer_norm_and_densities_trace_with_unknown_sizes():
    # Before: raw TypeErrors: layer_norm over a leading axis ('reshape: shape must be integers, got (None, 1)'),
    # dirichlet.logpdf ('float / NoneType'), multivariate_normal.logpdf ('reshape ... (-1, None)').
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(8)
    x, scale = rng.standard_normal((3, 4)), np.array([1.0, 2.0, 0.5])
    f = tl.function(lambda a, s: tl.nn.layer_norm(a, s, axis=0))
    got = f.get_graph(_unknown(x), _unknown(scale))(x, scale).numpy()
    expected = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5) * scale[:, None]
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    p, alpha = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]]), np.array([1.5, 2.0, 3.0])
    got = _traced(tl.stats.dirichlet.logpdf, p, alpha).numpy()
    np.testing.assert_allclose(got, [scipy_stats.dirichlet.logpdf(p[:, i], alpha) for i in range(2)], rtol=1e-12)
    points, mean, cov = rng.standard_normal((5, 2)), np.array([0.5, -1.0]), np.array([[2.0, 0.3], [0.3, 1.0]])
    logpdf = tl.stats.multivariate_normal.logpdf
    np.testing.assert_allclose(
        _traced(logpdf, points, mean, cov).numpy(),
        scipy_stats.multivariate_normal.logpdf(points, mean, cov),
        rtol=1e-12,
    )
    specs = (_unknown(points), _unknown(mean), _unknown(cov))
    grads = tl.function(tl.grad(lambda *a: tl.sum(logpdf(*a)), argnums=(0, 1, 2))).get_graph(*specs)(points, mean, cov)
    for traced, eager in zip(grads, tl.grad(lambda *a: tl.sum(logpdf(*a)), argnums=(0, 1, 2))(points, mean, cov)):
        np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-10)


def _catalogue_groups(size=40):
    """The catalogue in groups of ``size`` entries: one hypothesis run per group (its start-up per entry
    cost more than the checks)."""
    return [INFOS[k : k + size] for k in range(0, len(INFOS), size)]


@pytest.mark.parametrize("infos", _catalogue_groups(), ids=lambda infos: f"{infos[0].name}..{infos[-1].name}")
@settings(max_examples=1)
@given(data=st.data())
def test_catalogue_traces_with_unknown_sizes_saves_loads_and_prints(infos, data):
    """Every catalogue entry, traced with every size None: eager's values, dtypes and shapes (or a clear
    refusal); the graph prints readably and survives save/load (captures included) with the same results."""
    for info in infos:
        dtype = next((d for d in info.dtypes if np.dtype(d) == np.float64), info.dtypes[0])
        _check_unknown_sizes(info, data.draw(info.samples(dtype), label=info.name))


def _check_unknown_sizes(info, sample):
    positions, call = sample.split(info.op)
    tensors = [tl.tensor(sample.args[k]) for k in positions]
    try:
        eager = tl.tree.leaves(call(*tensors))
    except Exception:  # noqa: BLE001 - an eager refusal is the other catalogue tests' business
        return
    specs = [_unknown(t.numpy()) for t in tensors]
    fn = tl.function(call)
    try:
        graph = fn.get_graph(*specs)
    except (ValueError, NotImplementedError) as e:
        assert _NEEDS_SIZES.search(str(e)), f"{info.name}: unclear refusal to trace with unknown sizes: {e}"
        return
    text = str(graph)
    assert "object at 0x" not in text and text.count("\n") >= len(graph.nodes), text
    path = pathlib.Path(_RAM_FOLDER.name) / "graph.json"
    try:
        fn.save(path, *specs, include_captures=True)
    except ValueError as e:  # tl.custom_gradient's grad_fn is a Python function (documented)
        assert "Python callable" in str(e), e
        loaded = None
    else:
        loaded = tl.graph.load(path)
    for g in (graph, loaded):
        if g is None:
            continue
        try:
            traced = tl.tree.leaves(g(*tensors))
        except tl.dispatch.KernelResultError:
            assert info.name in _RUN_MAY_REFUSE, info.name
            return
        assert len(traced) == len(eager), info.name
        for e, t in zip(eager, traced):
            assert (e.dtype, e.shape) == (t.dtype, t.shape), (
                f"{info.name}: eager {e.dtype}{e.shape}, traced {t.dtype}{t.shape}"
            )
            np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=info.name)


def test_gradients_trace_with_unknown_sizes():
    # Before, each traced gradient raised a raw TypeError with unknown sizes: pinv ('NoneType' object cannot be
    # interpreted as an integer), sparse softmax cross-entropy ('one_hot: depth must be an integer, got None'),
    # integer-array indexing ('broadcast_to: shape must be integers'), lu_solve ('reshape ... (1, 1, None,
    # None)'); broadcast_to from unknown sizes was refused ('cannot broadcast shape (None, None) to (2, 3)').
    rng = np.random.default_rng(9)
    a, rows, cols = rng.standard_normal((3, 2)), np.array([[0, 2], [1, 1]]), np.array([[1, 0], [0, 1]])
    logits, labels = rng.standard_normal((4, 3)), np.array([2, 0, 1, 1])
    lu_a, lu_b = rng.standard_normal((2, 1, 2, 2)) + 3 * np.eye(2), rng.standard_normal((2, 2))
    for f, args in (
        (tl.linalg.pinv, (a,)),
        (lambda x, y: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x), (logits, labels)),
        (lambda x, i, j: x[i, j], (a, rows, cols)),
        (lambda x: tl.broadcast_to(x[:1], (2, 2)), (a,)),
        (lambda x, y: tl.linalg.lu_solve(tl.linalg.lu_factor(x), y), (lu_a, lu_b)),
    ):
        specs = [_unknown(x) for x in args]
        eager = f(*[tl.tensor(x) for x in args])
        np.testing.assert_allclose(tl.function(f).get_graph(*specs)(*args).numpy(), eager.numpy(), rtol=1e-12)
        grad = tl.grad(lambda *xs, f=f: tl.sum(f(*xs) ** 2))
        np.testing.assert_allclose(tl.function(grad).get_graph(*specs)(*args).numpy(), grad(*args).numpy(), rtol=1e-10)
    for f, name in ((lambda x: tl.linalg.svd(x)[0], "Svd"), (lambda x: tl.linalg.qr(x)[0], "Qr")):
        with pytest.raises(ValueError, match=name + r": the gradient needs the matrix sizes \(tall or wide\) known"):
            tl.function(tl.grad(lambda x, f=f: tl.sum(f(x)))).get_graph(_unknown(a))


def test_a_count_per_element_and_a_shape_of_unknown_sizes_say_the_size_must_be_known():
    # Before: 'repeat: repeats must be non-negative integers, one or one per element (None) ... got [0, 0]'
    # and 'zeros: shape must be integers, got (None, 3)', which named no unknown size.
    spec = [tl.TensorSpec((None, 3), "float32")]
    x = tl.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"repeat: 2 counts, one per element, need the length of axis 0 to be known"):
        tl.function(lambda x: tl.repeat(x, [1, 2], axis=0), input_signature=spec)(x)
    with pytest.raises(TypeError, match=r"shape must be known integers, got \(None, 3\) \(None: an unknown size\)"):
        tl.function(lambda x: tl.zeros(x.shape), input_signature=spec)(x)
    np.testing.assert_array_equal(
        tl.function(lambda x: tl.repeat(x, 2, axis=0), input_signature=spec)(x).numpy(), np.repeat(x.numpy(), 2, 0)
    )


def test_einsum_sizes_that_disagree_only_when_run_name_the_op_and_the_shapes():
    f = tl.function(
        lambda a, b: tl.einsum("ij,jk->ik", a, b), input_signature=[tl.TensorSpec((None, None), "float32")] * 2
    )
    np.testing.assert_allclose(f(tl.ones((2, 3)), tl.ones((3, 5))).numpy(), np.full((2, 5), 3.0))
    with pytest.raises(
        ValueError, match=r"Einsum: .*'j'.* in 'ij,jk->ik' \(operands: \(2, 3\) float32, \(4, 5\) float32\)"
    ):
        f(tl.ones((2, 3)), tl.ones((4, 5)))
