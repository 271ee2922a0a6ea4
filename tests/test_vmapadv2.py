"""Transformations tried as an adversary (third pass): ops that still ran once per element under ``tl.vmap``
(segment max/min with ids per element, bincount, unique), ``tl.jvp`` with integer primals, and forward mode
through a traced ``tl.while_loop`` without a bound.

References: the Python loop over the batch (what ``vmap`` must equal), NumPy's ``bincount``/``unique``,
float64 central finite differences (what ``jvp`` must equal), and JAX where installed (importorskip).
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.grad.vmap import RaggedResultError


def _count(prof, op_type):
    return [e.op_type for e in prof.events].count(op_type)


def _loop(f, *columns):
    return np.stack([np.asarray(f(*(tl.tensor(c) for c in row)).numpy()) for row in zip(*columns)])


# ------------------------------------------------------------------ segment max/min with ids per element
@pytest.mark.parametrize("name", ["segment_max", "segment_min"])
@pytest.mark.parametrize("batch", [0, 1, 4])
def test_segment_extreme_with_ids_per_element_runs_once_and_equals_the_loop(name, batch):
    rng = np.random.default_rng(batch)
    data, ids = rng.normal(size=(batch, 5, 2)), rng.integers(-1, 3, size=(batch, 5))
    data[:, 1] = data[:, 0]  # ties share the gradient

    def f(d, i):
        return getattr(tl, name)(d, i, num_segments=3)

    def grad_f(d, i):
        def loss(d):
            y = f(d, i)
            return tl.sum(tl.where(tl.isfinite(y), y, 0.0) ** 2)

        return tl.grad(loss)(d)

    for g in (f, grad_f):
        expected = _loop(g, data, ids) if batch else np.zeros((0, 3, 2) if g is f else (0, 5, 2))
        with tl.profile() as prof:
            got = tl.vmap(g)(data, ids).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-13)
        assert _count(prof, "SegmentExtreme") == 1  # before: one per element
        np.testing.assert_allclose(tl.function(tl.vmap(g))(data, ids).numpy(), expected, rtol=1e-13)


def test_segment_max_nested_vmap_and_moved_axes_equal_the_loop():
    rng = np.random.default_rng(1)
    data, ids = rng.normal(size=(2, 3, 4)), rng.integers(-1, 4, size=(4, 2, 3))  # ids mapped on axis 1, then 1

    def f(d, i):
        return tl.segment_max(d, i, num_segments=4)

    inner = tl.vmap(f, in_axes=(0, 1), out_axes=1)  # over data's axis 1 (after the outer), ids' axis 1
    got = tl.vmap(inner, in_axes=(0, 1), out_axes=-1)(data, ids).numpy()  # (4 segments, 3, 2)
    expected = np.empty((4, 3, 2))
    for a in range(2):
        for b in range(3):
            expected[:, b, a] = f(tl.tensor(data[a, b]), tl.tensor(ids[:, a, b])).numpy()
    np.testing.assert_array_equal(got, expected)


def test_segment_max_ids_out_of_range_in_one_element_raise_rather_than_spill_into_the_next():
    # Element 0's id 3 (num_segments=3), offset by its batch position, is element 1's segment 0.
    data, ids = np.ones((2, 2)), np.array([[0, 3], [1, 1]])
    with pytest.raises(IndexError, match="segment_max: .*3.* out of range"):
        tl.vmap(lambda d, i: tl.segment_max(d, i, num_segments=3))(data, ids)


# ------------------------------------------------------------------ jvp with integer primals
def _central(f, x, t, eps=1e-6):
    return (f(x + eps * t) - f(x - eps * t)) / (2 * eps)


@pytest.mark.parametrize("int_tangent", [None, "zeros"])
@pytest.mark.parametrize("traced", [False, True])
def test_jvp_with_an_integer_primal_carries_no_tangent_for_it(int_tangent, traced):
    # Before: TypeError "cannot differentiate with respect to primal 1 of dtype int64" (JAX gives float0
    # tangents, PyTorch's forward AD no tangent for integer inputs).
    x, t, n = np.array([0.5, 1.5, 2.0]), np.array([1.0, -2.0, 0.5]), np.array([2, 0, 1])

    def f(a, idx):
        return {"y": tl.sin(a) ** 2 * tl.take(a, idx), "k": idx * 2}

    def run(x, n, t):
        tn = None if int_tangent is None else tl.zeros_like(n)
        return tl.jvp(f, (x, n), (t, tn))

    out, tangent = (tl.function(run) if traced else run)(tl.tensor(x), tl.tensor(n), tl.tensor(t))
    expected = _central(lambda a: np.sin(a) ** 2 * a[n], x, t)
    np.testing.assert_allclose(tangent["y"].numpy(), expected, rtol=1e-8)
    np.testing.assert_array_equal(out["k"].numpy(), n * 2)
    assert tangent["k"].dtype.kind == "f" and not tangent["k"].numpy().any()


def test_jvp_integer_primal_tangent_errors_and_nested_none():
    f = lambda d: d["a"] ** d["n"]  # noqa: E731
    _, t = tl.jvp(f, ({"a": tl.tensor(2.0), "n": tl.tensor(3)},), ({"a": 1.0, "n": None},))
    assert float(t) == 12.0  # 3 * 2**2
    with pytest.raises(
        TypeError,
        match=r"tl.jvp: cannot differentiate with respect to primal 1 of dtype int64 \(shape \(2,\)\).*nonzero",
    ):
        tl.jvp(lambda a, n: a * n, (tl.tensor([1.0, 2.0]), tl.tensor([3, 4])), (tl.tensor([1.0, 1.0]), np.ones(2)))
    with pytest.raises(TypeError, match=r"tl.jvp: the tangent of primal 0 \(float32, shape \(2,\)\) is None"):
        tl.jvp(lambda a, n: a * n, (tl.tensor([1.0, 2.0]), tl.tensor([3, 4])), (None, None))


def test_jvp_integer_primal_agrees_with_jax_float0():
    jax = pytest.importorskip("jax")
    x, n = np.array([0.3, 1.2]), np.array([3, 1])
    f_tl = lambda a, k: tl.exp(a) * k  # noqa: E731
    f_jax = lambda a, k: jax.numpy.exp(a) * k  # noqa: E731
    float0 = np.zeros(2, jax.dtypes.float0)
    _, expected = jax.jvp(f_jax, (x, n), (np.ones(2), float0))
    _, got = tl.jvp(f_tl, (tl.tensor(x), tl.tensor(n)), (np.ones(2), float0))
    np.testing.assert_allclose(got.numpy(), np.asarray(expected), rtol=1e-6)


# ------------------------------------------------------------------ forward mode through a traced while_loop
_W = np.array([0.3, -0.2])


def _loop_tl(x, s):
    """A loop with no bound: a float carry, an int counter and an accumulator, reading s (an input) and a capture."""

    def body(c):
        v, k, acc = c
        return v * s + tl.sin(v) * tl.tensor(_W), k + 1, acc + tl.sum(v**2)

    start = (x, tl.tensor(0), tl.tensor(0.0, dtype="float64"))
    v, k, acc = tl.while_loop(lambda c: tl.sum(tl.abs(c[0])) < 20.0, body, start)
    return v * acc


def _loop_np(x, s):
    v, acc = x.copy(), 0.0
    while np.abs(v).sum() < 20.0:
        v, acc = v * s + np.sin(v) * _W, acc + (v**2).sum()
    return v * acc


def test_jvp_through_a_traced_unbounded_while_loop_equals_finite_differences():
    # Before: ValueError "reverse-mode differentiation of a while loop needs maximum_iterations=N" (forward
    # mode was reverse mode transposed).  JAX carries the tangent along the loop.
    x, s, tx, ts = np.array([0.5, 0.7]), np.array(1.3), np.array([0.3, -1.0]), np.array(0.2)
    expected = (_loop_np(x + 1e-6 * tx, s + 1e-6 * ts) - _loop_np(x - 1e-6 * tx, s - 1e-6 * ts)) / 2e-6
    run = tl.function(lambda x, s, tx, ts: tl.jvp(_loop_tl, (x, s), (tx, ts)))
    out, tangent = run(x, s, tx, ts)
    np.testing.assert_allclose(out.numpy(), _loop_np(x, s), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-6)
    assert "While" in {n.op_type for n in run.get_graph(x, s, tx, ts).nodes}


def test_jacfwd_and_jacrev_of_a_traced_unbounded_while_loop_agree_with_finite_differences():
    x, s = np.array([0.5, 0.7]), 1.3
    expected = np.stack([(_loop_np(x + 1e-6 * e, s) - _loop_np(x - 1e-6 * e, s)) / 2e-6 for e in np.eye(2)], axis=1)
    f = lambda x: _loop_tl(x, tl.tensor(s, dtype="float64"))  # noqa: E731
    for jac in (tl.jacfwd, tl.jacrev):  # jacfwd maps jvp with tl.vmap; before: zeros (the loop unseen by its tape)
        np.testing.assert_allclose(tl.function(jac(f))(x).numpy(), expected, rtol=1e-6)
    with pytest.raises(
        ValueError, match="second derivative of a while loop through its inputs needs maximum_iterations"
    ):
        tl.function(tl.hessian(lambda x: tl.sum(f(x))))(x)


def test_per_example_gradients_through_a_traced_unbounded_while_loop_equal_the_loop():
    # Before: zeros, silently: under a traced tl.vmap the loop ran as one physical While that the tape inside
    # the mapped function never saw.
    def loss(x):
        return tl.sum(tl.while_loop(lambda v: tl.sum(v) < 10.0, lambda v: v * 2.0 + tl.sin(v), x) ** 2)

    xs = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, 0.25]])  # 1, 1 and 3 steps
    expected = _loop(tl.grad(loss), xs)
    assert np.abs(expected).min() > 1.0
    np.testing.assert_allclose(tl.vmap(tl.grad(loss))(xs).numpy(), expected, rtol=1e-12)
    with tl.profile() as prof:
        np.testing.assert_allclose(tl.function(tl.vmap(tl.grad(loss)))(xs).numpy(), expected, rtol=1e-12)
    assert _count(prof, "WhileVjp") == 1  # the batch's loop differentiated once, not once per element
    unknown = tl.function(tl.vmap(tl.grad(loss)), input_signature=[tl.TensorSpec((None, 2), "float64")])
    np.testing.assert_allclose(unknown(xs[:2]).numpy(), expected[:2], rtol=1e-12)  # before: needs the size
    tangents = np.ones_like(xs)
    jvps = tl.function(tl.vmap(lambda x, t: tl.jvp(loss, (x,), (t,))[1]))(xs, tangents).numpy()
    np.testing.assert_allclose(jvps, (expected * tangents).sum(axis=1), rtol=1e-10)


def test_jvp_of_traced_fori_loop_scan_and_cond_equal_finite_differences():
    def f(x, n):
        y = tl.fori_loop(0, n, lambda i, v: v * tl.cos(v) + 0.1 * tl.cast(i, v.dtype), x)  # n traced: a While
        y, ys = tl.scan(lambda c, a: (c * a, c + a), y, x)
        return tl.cond(tl.sum(y) > 0, lambda v: v**2, lambda v: -tl.exp(v), y) + tl.sum(ys)

    def f_np(x, n):
        y = x.copy()
        for i in range(n):
            y = y * np.cos(y) + 0.1 * i
        ys = []
        for a in x:
            y, out = y * a, y + a
            ys.append(out)
        return (y**2 if y.sum() > 0 else -np.exp(y)) + np.sum(ys)

    x, t = np.array([0.4, 0.9, -0.3]), np.array([1.0, 0.5, -2.0])
    for n in (0, 3):
        expected = (f_np(x + 1e-6 * t, n) - f_np(x - 1e-6 * t, n)) / 2e-6
        got = tl.function(lambda x, n, t: tl.jvp(lambda x: f(x, n), (x,), (t,))[1])(x, np.array(n), t)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------ bincount under vmap, and its length
def _bincount_np(x, weights=None, minlength=0, length=None):
    if length is None:
        return np.bincount(x, weights, minlength)
    keep = x < length
    return np.bincount(x[keep], None if weights is None else weights[keep], length)[:length]


@pytest.mark.parametrize("batch", [0, 1, 4])
def test_bincount_with_length_under_vmap_runs_once_and_equals_the_loop(batch):
    rng = np.random.default_rng(batch)
    x, w = rng.integers(0, 7, size=(batch, 6)), rng.normal(size=(batch, 6))

    def f(x, w):
        return tl.bincount(x, w, length=5) * 2.0 + tl.cast(tl.bincount(x, length=5), "float64")

    expected = np.array([_bincount_np(a, b, length=5) * 2.0 + _bincount_np(a, length=5) for a, b in zip(x, w)])
    expected = expected.reshape(batch, 5)
    for mapped in (tl.vmap(f), tl.function(tl.vmap(f))):
        with tl.profile() as prof:
            got = mapped(x, w)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-13)
        assert _count(prof, "Bincount") == 2  # before: 2 per element
    got = tl.vmap(f, in_axes=(1, 1), out_axes=1)(x.T, w.T).numpy()
    np.testing.assert_allclose(got, expected.T, rtol=1e-13)
    # The gradient of the weights, per element: g[x] where x < length, else 0.
    grads = tl.vmap(tl.grad(lambda w, x: tl.sum(tl.bincount(x, w, length=5) * tl.arange(5.0))))(w, x).numpy()
    np.testing.assert_array_equal(grads, np.where(x < 5, x, 0).astype(float))


def test_bincount_without_length_under_vmap_batches_equal_lengths_and_keeps_the_loops_errors():
    x = np.array([[0, 3, 3], [1, 2, 3]])  # both give 4 bins
    with tl.profile() as prof:
        got = tl.vmap(lambda v: tl.bincount(v, minlength=2))(x).numpy()
    np.testing.assert_array_equal(got, np.stack([np.bincount(v, minlength=2) for v in x]))
    assert _count(prof, "Bincount") == 1
    with pytest.raises(RaggedResultError, match="Bincount gives results of different shapes"):
        tl.vmap(tl.bincount)(np.array([[0, 1], [0, 5]]))
    with pytest.raises(ValueError, match="Bincount: x must be non-negative, got -1"):
        tl.vmap(lambda v: tl.bincount(v, length=3))(np.array([[0, 1], [-1, 2]]))  # not element 0's last bin
    with pytest.raises(ValueError, match="bincount: length must be non-negative, got -2"):
        tl.bincount(np.array([1]), length=-2)


def test_bincount_length_agrees_with_jax():
    jnp = pytest.importorskip("jax.numpy")
    x, w = np.array([0, 1, 5, 2, 2]), np.array([0.5, 1.0, 2.0, 3.0, 4.0])
    for kwargs in ({"length": 3}, {"length": 3, "minlength": 7}, {"length": 0}):
        np.testing.assert_allclose(
            tl.bincount(x, w, **kwargs).numpy(), np.asarray(jnp.bincount(x, w, **kwargs)), rtol=1e-6
        )
        np.testing.assert_array_equal(tl.bincount(x, **kwargs).numpy(), np.asarray(jnp.bincount(x, **kwargs)))


# ------------------------------------------------------------------ unique with size= under vmap
def _unique_padded(x, size, fill_value=None):
    """jnp.unique's size=/fill_value= from numpy.unique: values, first indices, inverse, counts."""
    values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    k = min(size, values.size)
    pad = values[0] if fill_value is None else fill_value
    return (
        np.concatenate([values[:k], np.full(size - k, pad, x.dtype)]),
        np.concatenate([index[:k], np.full(size - k, index[0])]),
        inverse.reshape(x.shape),
        np.concatenate([counts[:k], np.zeros(size - k, np.int64)]),
    )


@pytest.mark.parametrize("batch", [0, 1, 5])
@pytest.mark.parametrize("fill_value", [None, -3])
def test_unique_with_size_under_vmap_runs_once_and_equals_the_loop(batch, fill_value):
    x = np.random.default_rng(batch).integers(0, 4, size=(batch, 2, 3)).astype(np.float64)

    def f(v):
        return tl.unique(v, True, True, True, size=4, fill_value=fill_value)

    expected = [np.zeros((0,) + s) for s in ((4,), (4,), (2, 3), (4,))]
    if batch:
        expected = [np.stack(parts) for parts in zip(*(_unique_padded(v, 4, fill_value) for v in x))]
    for mapped in (tl.vmap(f), tl.function(tl.vmap(f))):
        with tl.profile() as prof:
            got = mapped(x)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.numpy(), e)
        assert _count(prof, "UniqueSized") == 1  # one op for the batch, never one per element
    moved = tl.vmap(f, in_axes=2, out_axes=-1)(np.moveaxis(x, 0, 2))  # mapped over the last axis, out last
    np.testing.assert_array_equal(moved[0].numpy(), np.moveaxis(expected[0], 0, -1))
    nested = tl.vmap(tl.vmap(lambda r: tl.unique(r, size=2, fill_value=fill_value)))(x)
    rows = [[_unique_padded(r, 2, fill_value)[0] for r in v] for v in x]
    np.testing.assert_array_equal(nested.numpy(), np.array(rows).reshape(batch, 2, 2))


def test_unique_with_size_values_carry_the_gradient_to_first_occurrences():
    x = np.array([[2.0, 1.0, 2.0], [5.0, 4.0, 4.0]])
    weights = np.array([1.0, 10.0, 100.0])
    for fill_value, pad_weight in ((0.0, 0.0), (None, 100.0)):  # the default pad is the smallest value, x's too

        def loss(v, fill_value=fill_value):
            return tl.sum(tl.unique(v, size=3, fill_value=fill_value) * tl.tensor(weights))

        # Values [1, 2, pad] and [4, 5, pad]: slot 0's weight to the first 1 (4), slot 1's to the first 2 (5).
        expected = [[10.0, 1.0 + pad_weight, 0.0], [10.0, 1.0 + pad_weight, 0.0]]
        np.testing.assert_array_equal(tl.vmap(tl.grad(loss))(x).numpy(), expected)


def test_unique_with_size_errors():
    with pytest.raises(ValueError, match=r"unique: size=2 of an empty input needs a fill_value"):
        tl.unique(np.ones(0), size=2)
    with pytest.raises(ValueError, match=r"unique: fill_value is for size="):
        tl.unique(np.ones(2), fill_value=1)
    np.testing.assert_array_equal(tl.unique(np.ones(0), size=2, fill_value=7.0).numpy(), [7.0, 7.0])


def test_unique_with_size_agrees_with_jax():
    jnp = pytest.importorskip("jax.numpy")
    for x in (np.array([3, 1, 3, 2, 7, 8]), np.array([np.nan, 1.0, np.nan, 2.0]), np.array([True, False, True])):
        for size, fill in ((2, None), (6, None), (6, -1)):
            for equal_nan in (True, False):
                got = tl.unique(x, True, True, True, size=size, fill_value=fill, equal_nan=equal_nan)
                want = jnp.unique(x, True, True, True, size=size, fill_value=fill, equal_nan=equal_nan)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(g.numpy(), np.asarray(w))


# ------------------------------------------------------------------ polygamma / expn with an order per element
@pytest.mark.parametrize("name", ["polygamma", "expn"])
def test_polygamma_and_expn_of_mapped_or_traced_orders_equal_scipy(name):
    # Before: TypeError "the order n must be known, got a traced tensor" under tl.vmap over the orders and under
    # tl.function (JAX's polygamma and expn take array orders in both).
    special = pytest.importorskip("scipy.special")
    fn, ref = getattr(tl.special, name), getattr(special, name)
    n, x = np.array([0, 1, 2, 3]), np.array([0.5, 1.2, 2.0, 3.5])
    for got in (tl.vmap(fn)(n, x), tl.function(tl.vmap(fn))(n, x), tl.function(fn)(n, x)):
        np.testing.assert_allclose(got.numpy(), ref(n, x), rtol=1e-13)
    shared_x = tl.vmap(fn, in_axes=(0, None))(n, x[1:3]).numpy()  # a row of x per order
    np.testing.assert_allclose(shared_x, ref(n[:, None], x[1:3]), rtol=1e-13)
    grad = tl.vmap(tl.grad(lambda v, k: fn(k, v)))(x, n).numpy()
    fd = (ref(n, x + 1e-6) - ref(n, x - 1e-6)) / 2e-6
    np.testing.assert_allclose(grad, fd, rtol=1e-6)
    second = tl.function(tl.vmap(tl.grad(tl.grad(lambda v, k: fn(k, v)))))(x, n).numpy()
    fd2 = ref(n + (1 if name == "polygamma" else 0), x + 1e-6) - ref(n + (1 if name == "polygamma" else 0), x - 1e-6)
    expected2 = fd2 / 2e-6 if name == "polygamma" else (ref(n, x + 1e-4) - 2 * ref(n, x) + ref(n, x - 1e-4)) / 1e-8
    np.testing.assert_allclose(second, expected2, rtol=1e-5)
    with pytest.raises(ValueError, match="the order n must be a non-negative integer, got -1"):
        tl.function(fn)(np.array([-1, 2]), x[:2])


def test_linearize_takes_integer_primals_and_gives_integer_outputs_a_zero_tangent():
    # Before: linearize refused an integer primal (tl.jvp takes it) and crashed on an integer output (its
    # zero cotangent was an integer primal of the transposed vjp).  JAX's linearize takes both.
    x, n, t = np.array([0.5, 1.5]), np.array([3, 2]), np.array([1.0, -2.0])
    out, f_jvp = tl.linearize(lambda a, k: (tl.sin(a) * a**k, k * 2), tl.tensor(x), tl.tensor(n))
    expected = (np.sin(x + 1e-6 * t) * (x + 1e-6 * t) ** n - np.sin(x - 1e-6 * t) * (x - 1e-6 * t) ** n) / 2e-6
    for int_tangent in (None, np.zeros(2, np.int64)):
        tangent, tangent_k = f_jvp(tl.tensor(t), int_tangent)
        np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-8)
        assert tangent_k.dtype.kind == "f" and not tangent_k.numpy().any()
    np.testing.assert_array_equal(out[1].numpy(), n * 2)
