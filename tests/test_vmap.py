"""tl.vmap: every op of the catalogue batched against a Python loop over the elements, values and gradients
(grad of vmap, vmap of grad); nesting, tracing, tapes, custom gradients, control flow, axes and errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.ops.registry import _ops
from tensorlib.testing.op_db import all_opinfos


def _stateless(info) -> bool:
    return not any(_ops[t].stateful for t in info.op_types if t in _ops)


INFOS = [info for info in all_opinfos() if _stateless(info)]
MAPPABLE = INFOS
DIFFERENTIABLE = [
    info for info in MAPPABLE if info.differentiable and np.dtype("float64") in [np.dtype(d) for d in info.dtypes]
]
_SETTINGS = settings(max_examples=2, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _values(out) -> list:
    return [np.asarray(leaf.numpy() if isinstance(leaf, tl.Tensor) else leaf) for leaf in tl.tree.leaves(out)]


def _second_element(info, args, positions, seed, call):
    """A second batch element: the arrays at ``positions`` with their values shuffled (so each stays in its
    op's domain), or the first element again where the op refuses the shuffled one."""
    rng = np.random.default_rng(seed)
    second = list(args)
    for i in positions:
        a = args[i]
        second[i] = rng.permutation(a.ravel()).reshape(a.shape) if a.size else a
    try:
        return second, _values(call(*second))
    except Exception:
        return list(args), None


@pytest.mark.parametrize("info", MAPPABLE, ids=[info.name for info in MAPPABLE])
@_SETTINGS
@given(data=st.data())
def test_vmap_of_every_op_matches_a_loop(info, data):
    dtype = info.dtypes[-1]
    sample = data.draw(info.samples(dtype), label="sample")
    args = list(sample.args)
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    if not arrays:
        return
    # Either every array is mapped over axis 0, or only the first one, over its last axis.
    every = data.draw(st.booleans(), label="map every array")
    mapped = arrays if every else arrays[:1]
    axis = 0 if every else -1

    def call(*a):
        return info.op(*a, **sample.kwargs)

    with np.errstate(all="ignore"):
        try:
            first = _values(call(*args))
        except Exception:
            return  # a sample the op refuses eagerly says nothing about vmap
        second, second_values = _second_element(info, args, mapped, data.draw(st.integers(0, 99)), call)
        second_values = first if second_values is None else second_values
        stacked = [np.stack([a, b], axis=axis) if i in mapped else a for i, (a, b) in enumerate(zip(args, second))]
        in_axes = tuple(axis if i in mapped else None for i in range(len(args)))
        got = _values(tl.vmap(call, in_axes=in_axes, randomness="different")(*stacked))
    assert len(got) == len(first)
    atol, rtol = info.tolerances(args[mapped[0]].dtype)
    for g, a, b in zip(got, first, second_values):
        assert g.shape == (2, *a.shape) and g.dtype == a.dtype, (g.shape, g.dtype, a.shape, a.dtype)
        np.testing.assert_allclose(g[0], a, atol=atol, rtol=rtol, equal_nan=True)
        np.testing.assert_allclose(g[1], b, atol=atol, rtol=rtol, equal_nan=True)


def _scalar(out):
    total = 0.0
    for leaf in tl.tree.leaves(out):
        if isinstance(leaf, tl.Tensor) and leaf.dtype.kind == "f":
            total = total + tl.sum(tl.sin(leaf))
    return total


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=[info.name for info in DIFFERENTIABLE])
@settings(max_examples=1, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_gradients_through_vmap_match_a_loop(info, data):
    sample = data.draw(info.samples(np.dtype("float64")), label="sample")
    args = list(sample.args)
    if not sample.grad_argnums:
        return
    k = sample.grad_argnums[0]
    if not isinstance(args[k], np.ndarray) or args[k].dtype.kind != "f":
        return
    rest = args[:k] + args[k + 1 :]

    def f(x, *others):
        full = list(others)
        full.insert(k, x)
        return _scalar(info.op(*full, **sample.kwargs))

    in_axes = (0,) + (None,) * len(rest)
    with np.errstate(all="ignore"):
        try:
            g1 = tl.grad(f)(args[k], *rest).numpy()
        except Exception:
            return
        (second,), g2 = _second_element(info, [args[k]], [0], data.draw(st.integers(0, 99)), lambda x: f(x, *rest))
        g2 = g1 if g2 is None else tl.grad(f)(second, *rest).numpy()
        xs = np.stack([args[k], second])
        per_example = tl.vmap(tl.grad(f), in_axes=in_axes, randomness="different")(xs, *rest).numpy()
        through = tl.grad(lambda xs: tl.sum(tl.vmap(f, in_axes=in_axes, randomness="different")(xs, *rest)))(xs).numpy()
    expected = np.stack([g1, g2])
    atol, rtol = info.grad_atol * 10, info.grad_rtol * 10
    np.testing.assert_allclose(per_example, expected, atol=atol, rtol=rtol, equal_nan=True, err_msg="vmap(grad)")
    np.testing.assert_allclose(through, expected, atol=atol, rtol=rtol, equal_nan=True, err_msg="grad(vmap)")


# ---------------------------------------------------------------- the transform itself


RNG = np.random.default_rng(7)


def _mlp_loss(params, x, y):
    h = tl.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"]
    return tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)


def _mlp():
    params = {
        "w1": tl.tensor(RNG.normal(size=(4, 5))),
        "b1": tl.tensor(RNG.normal(size=(5,))),
        "w2": tl.tensor(RNG.normal(size=(5, 3))),
    }
    return params, RNG.normal(size=(6, 4)), RNG.integers(0, 3, size=6)


def test_per_example_gradients_of_an_mlp_match_a_loop_and_finite_differences():
    params, xs, ys = _mlp()
    got = tl.vmap(tl.grad(_mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
    for i in range(len(xs)):
        one = tl.grad(_mlp_loss)(params, xs[i], ys[i])
        for name in params:
            np.testing.assert_allclose(got[name].numpy()[i], one[name].numpy(), rtol=1e-12, atol=1e-12)
    # and against float64 central differences, independently of the tape
    eps, i = 1e-6, 2
    w = params["w2"].numpy()
    fd = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        plus, minus = w.copy(), w.copy()
        plus[idx] += eps
        minus[idx] -= eps
        f = [float(_mlp_loss({**params, "w2": tl.tensor(v)}, xs[i], ys[i])) for v in (plus, minus)]
        fd[idx] = (f[0] - f[1]) / (2 * eps)
    np.testing.assert_allclose(got["w2"].numpy()[i], fd, rtol=1e-6, atol=1e-8)


def test_per_example_gradients_match_torch_func():
    torch = pytest.importorskip("torch")
    func = pytest.importorskip("torch.func")
    params, xs, ys = _mlp()

    def torch_loss(p, x, y):
        logits = torch.relu(x @ p["w1"] + p["b1"]) @ p["w2"]
        return torch.nn.functional.cross_entropy(logits[None], y[None])

    tp = {k: torch.tensor(v.numpy()) for k, v in params.items()}
    expected = func.vmap(func.grad(torch_loss), in_dims=(None, 0, 0))(tp, torch.tensor(xs), torch.tensor(ys))
    got = tl.vmap(tl.grad(_mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
    for name in params:
        np.testing.assert_allclose(got[name].numpy(), expected[name].numpy(), rtol=1e-10, atol=1e-12)


def test_grad_of_vmap_reaches_unmapped_arguments_summed_over_the_batch():
    params, xs, ys = _mlp()
    total = tl.grad(lambda p: tl.sum(tl.vmap(_mlp_loss, in_axes=(None, 0, 0))(p, xs, ys)))(params)
    loop = tl.grad(lambda p: sum(_mlp_loss(p, xs[i], ys[i]) for i in range(len(xs))))(params)
    for name in params:
        np.testing.assert_allclose(total[name].numpy(), loop[name].numpy(), rtol=1e-12, atol=1e-12)


def test_a_tape_outside_records_the_batched_ops():
    xs = tl.tensor(RNG.normal(size=(3, 4)))
    with tl.GradientTape() as tape:
        tape.watch(xs)
        y = tl.sum(tl.vmap(lambda x: tl.exp(x) * tl.sum(x))(xs))
    x = xs.numpy()
    expected = np.exp(x) * x.sum(1, keepdims=True) + np.exp(x).sum(1, keepdims=True)
    np.testing.assert_allclose(tape.gradient(y, xs).numpy(), expected, rtol=1e-12)


def test_second_order_through_vmap():
    xs = RNG.normal(size=(3, 2))
    # d2/dx2 of sum(sin(x) * x) per element: 2 cos(x) - x sin(x)
    hess_diag = tl.vmap(tl.grad(lambda x: tl.sum(tl.grad(lambda v: tl.sum(tl.sin(v) * v))(x))))(xs)
    np.testing.assert_allclose(hess_diag.numpy(), 2 * np.cos(xs) - xs * np.sin(xs), rtol=1e-12)
    outer = tl.grad(lambda xs: tl.sum(tl.vmap(tl.grad(lambda v: tl.sum(v**3)))(xs)))(xs)
    np.testing.assert_allclose(outer.numpy(), 6 * xs, rtol=1e-12)


def test_jacobian_rows_by_vmap_of_vjp():
    x = tl.tensor(RNG.normal(size=(3,)))
    w = RNG.normal(size=(4, 3))

    def f(v):
        return tl.tanh(tl.tensor(w) @ v)

    _, vjp_fn = tl.vjp(f, x)
    rows = tl.vmap(lambda e: vjp_fn(e)[0])(np.eye(4))
    np.testing.assert_allclose(rows.numpy(), tl.jacobian(f)(x).numpy(), rtol=1e-12)


def test_nested_vmap_is_a_double_loop():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4))
    pairwise = tl.vmap(tl.vmap(lambda x, y: tl.sum((x - y) ** 2), in_axes=(None, 0)), in_axes=(0, None))(a, b)
    expected = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(pairwise.numpy(), expected, rtol=1e-12)
    inner_last = tl.vmap(tl.vmap(lambda x: x * 2.0, in_axes=1, out_axes=1), in_axes=0)(RNG.normal(size=(2, 3, 4)))
    assert inner_last.shape == (2, 3, 4)


def test_traced_vmap_equals_eager_and_vmap_of_a_traced_function_inlines_it():
    xs = RNG.normal(size=(4, 3))
    w = tl.tensor(RNG.normal(size=(3, 2)))

    def f(x):
        return tl.nn.softmax(x @ w) * tl.max(x)

    eager = tl.vmap(f)(xs).numpy()
    traced = tl.function(tl.vmap(f))
    np.testing.assert_allclose(traced(xs).numpy(), eager, rtol=1e-12)
    assert "Softmax" in str(traced.get_graph(xs))
    np.testing.assert_allclose(tl.vmap(tl.function(f))(xs).numpy(), eager, rtol=1e-12)


def test_broadcasting_between_mapped_and_unmapped_operands_is_per_element():
    xs = RNG.normal(size=(2, 3))  # elements of shape (3,)
    y = RNG.normal(size=(4, 1))  # unmapped, broadcasts against each element to (4, 3)
    got = tl.vmap(lambda x: x * y + tl.sum(x))(xs)
    expected = np.stack([x * y + x.sum() for x in xs])
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    scalars = RNG.normal(size=(2,))  # elements of shape (), against a matrix
    got = tl.vmap(lambda s, m: s * m, in_axes=(0, None))(scalars, y)
    np.testing.assert_allclose(got.numpy(), scalars[:, None, None] * y[None], rtol=1e-12)


@pytest.mark.parametrize(
    "a_shape, b_shape, mapped",
    [((3,), (3,), (0, 0)), ((3,), (3, 2), (0, None)), ((2, 3), (3,), (None, 0)), ((2, 3), (3, 4), (0, 0))]
    + [((5, 2, 3), (3, 4), (0, None)), ((3,), (5, 3, 2), (None, 0)), ((2, 3), (5, 3, 4), (0, 0))],
)
def test_matmul_of_vectors_matrices_and_stacks(a_shape, b_shape, mapped):
    a = RNG.normal(size=((3,) + a_shape) if mapped[0] is not None else a_shape)
    b = RNG.normal(size=((3,) + b_shape) if mapped[1] is not None else b_shape)
    got = tl.vmap(tl.matmul, in_axes=mapped)(a, b).numpy()
    expected = np.stack(
        [np.matmul(a[i] if mapped[0] is not None else a, b[i] if mapped[1] is not None else b) for i in range(3)]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_in_axes_structures_out_axes_and_keyword_arguments():
    xs = {"a": RNG.normal(size=(3, 2)), "b": RNG.normal(size=(2, 3))}
    out = tl.vmap(
        lambda d, c: {"s": d["a"] + d["b"] * c, "c": c}, in_axes=({"a": 0, "b": 1}, None), out_axes={"s": 1, "c": 0}
    )(xs, 2.0)
    np.testing.assert_allclose(out["s"].numpy(), (xs["a"] + xs["b"].T * 2.0).T, rtol=1e-12)
    # an output that depends on no mapped input is repeated along the batch
    np.testing.assert_array_equal(out["c"].numpy(), np.full(3, 2.0))
    kw = tl.vmap(lambda x, *, scale: x * scale)(xs["a"], scale=np.arange(3.0))
    np.testing.assert_allclose(kw.numpy(), xs["a"] * np.arange(3.0)[:, None], rtol=1e-12)
    assert tl.vmap(lambda: tl.ones(2), axis_size=4)().shape == (4, 2)


def test_empty_batch_keeps_the_element_shapes():
    out = tl.vmap(lambda x: tl.sum(x * 2.0, axis=0))(np.zeros((0, 3, 2)))
    assert out.shape == (0, 2) and out.dtype == tl.float64
    out = tl.vmap(lambda x: tl.sort(x))(np.zeros((0, 3)))  # the loop's shape comes from the shape rule
    assert out.shape == (0, 3)


def test_cond_with_a_per_element_predicate_selects_and_scan_loops_per_element():
    xs = np.array([-2.0, 3.0, -0.5])
    got = tl.vmap(lambda x: tl.cond(x > 0, lambda v: v * 10.0, lambda v: -v, x))(xs)
    np.testing.assert_allclose(got.numpy(), np.where(xs > 0, xs * 10.0, -xs))
    grads = tl.vmap(tl.grad(lambda x: tl.cond(x > 0, lambda v: v * v, lambda v: tl.sin(v), x)))(xs)
    np.testing.assert_allclose(grads.numpy(), np.where(xs > 0, 2 * xs, np.cos(xs)), rtol=1e-12)
    seqs = RNG.normal(size=(2, 5))
    carries, ys = tl.vmap(lambda s: tl.scan(lambda c, v: (c + v, c * v), 0.0, s))(seqs)
    np.testing.assert_allclose(carries.numpy(), seqs.sum(1), rtol=1e-12)
    np.testing.assert_allclose(ys.numpy()[:, 2], seqs[:, :2].sum(1) * seqs[:, 2], rtol=1e-12)


def test_while_loop_with_a_predicate_per_element_runs_until_every_element_stops():
    def collatz_steps(n):
        def step(s):
            return tl.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1), s[1] + 1

        return tl.while_loop(lambda s: s[0] != 1, step, (n, 0))[1]

    ns = np.array([1, 2, 3, 6, 7, 27])
    assert tl.vmap(collatz_steps)(ns).numpy().tolist() == [int(collatz_steps(tl.tensor(int(n)))) for n in ns]

    def doubled_past_ten(x):
        return tl.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x, maximum_iterations=10)

    xs = np.array([0.5, 3.0, 11.0])
    np.testing.assert_array_equal(tl.vmap(doubled_past_ten)(xs).numpy(), [16.0, 12.0, 11.0])
    np.testing.assert_array_equal(tl.vmap(tl.grad(doubled_past_ten))(xs).numpy(), [32.0, 4.0, 1.0])
    # Traced, the values are unknown: the bounded loop runs to its bound, keeping each element where it stopped.
    np.testing.assert_array_equal(tl.function(tl.vmap(doubled_past_ten))(xs).numpy(), [16.0, 12.0, 11.0])
    # Unbounded and traced: one While over the batch, running while any element goes on.
    unbounded = tl.function(tl.vmap(lambda x: tl.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x)))
    np.testing.assert_array_equal(unbounded(xs).numpy(), [16.0, 12.0, 11.0])
    assert tl.function(tl.vmap(collatz_steps))(ns).numpy().tolist() == tl.vmap(collatz_steps)(ns).numpy().tolist()


def test_custom_gradient_inside_vmap_and_grad_outside():
    @tl.custom_gradient
    def clipped_identity(x, w):
        def grad_fn(dy):
            return tl.clip(dy, -1.0, 1.0) * w, dy * 0.5

        return x * 1.0, grad_fn

    xs, w = RNG.normal(size=(3, 2)) * 4, tl.tensor(np.array([2.0, 3.0]))
    gx, gw = tl.grad(lambda xs, w: tl.sum(tl.vmap(clipped_identity, in_axes=(0, None))(xs, w) * xs), argnums=(0, 1))(
        xs, w
    )
    # d/dxs: the user's rule for the first factor plus the plain product rule for the second
    np.testing.assert_allclose(gx.numpy(), np.clip(xs, -1, 1) * [2.0, 3.0] + xs, rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), (xs * 0.5).sum(0), rtol=1e-12)  # summed over the batch
    per_example = tl.vmap(tl.grad(lambda x: tl.sum(clipped_identity(x, w))))(xs)
    np.testing.assert_allclose(per_example.numpy(), np.ones_like(xs) * [2.0, 3.0], rtol=1e-12)


def test_integer_elements_weak_scalars_and_indexing_with_mapped_indices():
    ints = np.arange(6).reshape(3, 2)
    out = tl.vmap(lambda x: x * 2)(ints)
    assert out.dtype == tl.int64 and out.numpy().tolist() == (ints * 2).tolist()
    table, idx = RNG.normal(size=(3, 5)), np.array([4, 0, 2])
    np.testing.assert_array_equal(tl.vmap(lambda t, i: t[i])(table, idx).numpy(), table[np.arange(3), idx])
    np.testing.assert_array_equal(tl.vmap(lambda t: t[1:3].T)(table).numpy(), table[:, 1:3])


def _noise(x):
    return x + tl.random.normal((2,), dtype="float64")


def _dropped(x):
    return tl.nn.dropout(x, 0.5)


@pytest.mark.parametrize("fn", [_noise, _dropped], ids=["draw", "dropout"])
def test_random_ops_need_a_randomness_choice(fn):
    with pytest.raises(tl.grad.vmap.RandomnessError, match=r"randomness='different' \(each its own numbers\)"):
        tl.vmap(fn)(np.ones((3, 2)))
    with pytest.raises(ValueError, match="randomness must be 'error', 'different' or 'same', got 'shared'"):
        tl.vmap(fn, randomness="shared")


@pytest.mark.parametrize("fn", [_noise, _dropped], ids=["draw", "dropout"])
def test_randomness_different_draws_as_a_python_loop_does(fn):
    xs = np.ones((4, 2))
    tl.random.seed(5)
    looped = np.stack([fn(tl.tensor(x)).numpy() for x in xs])
    after_loop = tl.random.normal((3,)).numpy()
    tl.random.seed(5)
    mapped = tl.vmap(fn, randomness="different")(xs).numpy()
    np.testing.assert_array_equal(mapped, looped)
    np.testing.assert_array_equal(tl.random.normal((3,)).numpy(), after_loop)
    assert len({row.tobytes() for row in mapped}) > 1


@pytest.mark.parametrize("noise_shape", [None, (1, 3), (2, 1)])
def test_dropout_with_different_randomness_is_one_draw_with_a_loop_s_numbers(no_loop, noise_shape):
    xs = np.ones((5, 2, 3))
    tl.random.seed(9)
    looped = np.stack([tl.nn.dropout(tl.tensor(x), 0.5, noise_shape=noise_shape).numpy() for x in xs])
    tl.random.seed(9)
    mapped = tl.vmap(lambda x: tl.nn.dropout(x, 0.5, noise_shape=noise_shape), randomness="different")(xs)
    np.testing.assert_array_equal(mapped.numpy(), looped)


@pytest.mark.parametrize("fn", [_noise, _dropped], ids=["draw", "dropout"])
def test_randomness_same_gives_every_element_one_call_s_numbers(fn):
    xs = np.ones((4, 2))
    tl.random.seed(6)
    once = fn(tl.tensor(xs[0])).numpy()
    after_one = tl.random.normal((3,)).numpy()
    tl.random.seed(6)
    mapped = tl.vmap(fn, randomness="same")(xs).numpy()
    np.testing.assert_array_equal(mapped, np.broadcast_to(once, mapped.shape))
    np.testing.assert_array_equal(tl.random.normal((3,)).numpy(), after_one)


def test_traced_randomness():
    xs = np.ones((4, 2))
    different = tl.function(tl.vmap(_dropped, randomness="different"))(xs).numpy()
    assert set(np.unique(different)) <= {0.0, 2.0} and len({row.tobytes() for row in different}) > 1
    shared = tl.function(tl.vmap(_noise, randomness="same"))(xs).numpy()
    np.testing.assert_array_equal(shared, np.broadcast_to(shared[0], shared.shape))
    with pytest.raises(tl.grad.vmap.RandomnessError, match="randomness='same' for Dropout on a mapped input"):
        tl.function(tl.vmap(_dropped, randomness="same"))(xs)


def test_jacobians_of_functions_that_draw_random_numbers():
    x = tl.tensor(np.array([1.0, 2.0, 3.0]))
    jac = tl.jacfwd(lambda v: v * tl.random.normal((3,), dtype="float64"))(x).numpy()
    np.testing.assert_array_equal(jac, np.diag(np.diag(jac)))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = _dropped(x * x)
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), np.diag(2 * x.numpy() * (y.numpy() != 0) * 2))


def test_results_do_not_alias_the_callers_array():
    xs = np.ones((2, 3))
    out = tl.vmap(lambda x: x)(xs)
    xs[:] = 5.0
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 3)))


def test_errors_name_what_is_wrong():
    xs = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"differ in size: args\[0\] has 3 .*args\[1\] has 4"):
        tl.vmap(lambda a, b: a + b)(xs, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="in_axes has 1 entries but .* 2 positional"):
        tl.vmap(lambda a, b: a, in_axes=(0,))(xs, xs)
    with pytest.raises(ValueError, match=r"in_axes 2 is out of range for args\[0\]"):
        tl.vmap(lambda a: a, in_axes=2)(xs)
    with pytest.raises(TypeError, match="in_axes entries must be ints"):
        tl.vmap(lambda a: a, in_axes="0")
    with pytest.raises(ValueError, match="no axis 0 to map over"):
        tl.vmap(lambda a, s: a * s)(xs, 2.0)
    with pytest.raises(ValueError, match="give axis_size"):
        tl.vmap(lambda a: a, in_axes=None)(xs)
    with pytest.raises(TypeError, match="tl.vmap: a batched tensor .* tl.where"):
        tl.vmap(lambda a: a if tl.sum(a) > 0 else -a)(xs)
    with pytest.raises(ValueError, match="out_axes is None"):
        tl.vmap(lambda a: a, out_axes=None)(xs)
    v = tl.Variable([0.0, 0.0])
    with pytest.raises(ValueError, match="assigned inside a function mapped by tl.vmap"):
        tl.vmap(lambda a: v.assign(a))(xs)
    with pytest.raises(ValueError, match="different shapes for different batch elements"):
        tl.vmap(lambda a: tl.nonzero(a)[0])(np.array([[1.0, 0.0], [1.0, 1.0]]))
    assert v.numpy().tolist() == [0.0, 0.0]


def test_layers_and_the_other_transforms_inside_vmap():
    layer = tl.nn.Dense(5, 3, seed=0)
    xs = RNG.normal(size=(4, 5)).astype(np.float32)
    np.testing.assert_allclose(
        tl.vmap(lambda x: layer(x[None])[0])(xs).numpy(), layer(tl.tensor(xs)).numpy(), rtol=1e-5, atol=1e-6
    )
    vs = RNG.normal(size=(3, 2))
    hessians = tl.vmap(tl.hessian(lambda v: tl.sum(v**3) + v[0] * v[1]))(vs).numpy()
    for h, v in zip(hessians, vs):
        np.testing.assert_allclose(h, np.diag(6 * v) + [[0, 1], [1, 0]], rtol=1e-12)
    ts = RNG.normal(size=(3, 2))
    _, tangents = tl.vmap(lambda x, t: tl.jvp(lambda v: tl.sin(v) * v, (x,), (t,)))(vs, ts)
    np.testing.assert_allclose(tangents.numpy(), (np.cos(vs) * vs + np.sin(vs)) * ts, rtol=1e-12)
    w = tl.Variable(np.array([1.0, 2.0]))

    def tape_inside(x):
        with tl.GradientTape() as tape:
            y = tl.sum(w * x * w)
        return tape.gradient(y, w)

    np.testing.assert_allclose(tl.vmap(tape_inside)(vs).numpy(), 2 * vs * [1.0, 2.0], rtol=1e-12)


def test_a_mask_from_a_mapped_tensor_cannot_index_it():
    with pytest.raises(TypeError, match="tl.vmap: a batched tensor .* bool"):
        tl.vmap(lambda x: x[x > 0])(np.ones((2, 3)))


def _first_float_output(out):
    for leaf in tl.tree.leaves(out):
        if isinstance(leaf, tl.Tensor) and leaf.dtype.kind == "f":
            return leaf
    return None


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=[info.name for info in DIFFERENTIABLE])
@settings(max_examples=1, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_jacobians_computed_mapped_match_one_vjp_per_row(info, data):
    """GradientTape.jacobian (and so tl.jacobian and tl.hessian) maps the backward pass over the rows;
    tl.jacfwd maps a jvp over the columns."""
    sample = data.draw(info.samples(np.dtype("float64")), label="sample")
    args = list(sample.args)
    if not sample.grad_argnums or not isinstance(args[sample.grad_argnums[0]], np.ndarray):
        return
    k = sample.grad_argnums[0]

    def f(x):
        full = list(args)
        full[k] = x
        return _first_float_output(info.op(*full, **sample.kwargs))

    with np.errstate(all="ignore"):
        try:
            out, vjp_fn = tl.vjp(f, args[k])
        except Exception:
            return
        if out is None or out.size > 64:
            return
        eye = np.eye(out.size).reshape(out.size, *out.shape)
        rows = np.stack([vjp_fn(tl.tensor(e))[0].numpy() for e in eye]) if out.size else None
        jac = tl.jacobian(f)(args[k]).numpy()
        forward = tl.jacfwd(f)(args[k]).numpy() if args[k].size <= 64 else None
    assert jac.shape == out.shape + args[k].shape
    if rows is not None:
        np.testing.assert_allclose(jac.reshape(rows.shape), rows, rtol=1e-10, atol=1e-12, equal_nan=True)
    if forward is not None:
        assert forward.shape == jac.shape
        np.testing.assert_allclose(forward, jac, rtol=1e-9, atol=1e-11, equal_nan=True)


def test_a_jacobian_through_a_grad_fn_that_reads_its_cotangent_is_computed_row_by_row():
    @tl.custom_gradient
    def gate(x):
        def grad_fn(dy):
            return dy * 2.0 if float(tl.sum(dy)) > 0 else dy * 0.0

        return x * 1.0, grad_fn

    jac = tl.jacobian(gate)(tl.tensor(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_array_equal(jac.numpy(), 2.0 * np.eye(3))


# Every axis of the same size as the batch: a rule that reduces or moves the wrong axis gives the right shape.
_X3 = np.random.default_rng(3).normal(size=(3, 3, 3, 3))
_AXIS_CASES = {
    "softmax": lambda x, a: tl.nn.softmax(x, axis=a),
    "log_softmax": lambda x, a: tl.nn.log_softmax(x, axis=a),
    "cumsum": lambda x, a: tl.cumsum(x, axis=a),
    "cumprod": lambda x, a: tl.cumprod(x, axis=a),
    "logcumsumexp": lambda x, a: tl.logcumsumexp(x, axis=a),
    "cummax": lambda x, a: tl.cummax(x, axis=a),
    "cummin": lambda x, a: tl.cummin(x, axis=a),
    "sort": lambda x, a: tl.sort(x, axis=a),
    "argsort": lambda x, a: tl.argsort(x, axis=a),
    "argmax": lambda x, a: tl.argmax(x, axis=a),
    "argmin": lambda x, a: tl.argmin(x, axis=a),
    "sum": lambda x, a: tl.sum(x, axis=a),
    "sum keepdims": lambda x, a: tl.sum(x, axis=(a, (a + 1) % 3), keepdims=True),
    "prod": lambda x, a: tl.prod(x, axis=a),
    "max": lambda x, a: tl.max(x, axis=a),
    "min keepdims": lambda x, a: tl.min(x, axis=a, keepdims=True),
    "any": lambda x, a: tl.any(x > 0, axis=a),
    "all": lambda x, a: tl.all(x > -1, axis=a),
    "expand_dims": lambda x, a: tl.expand_dims(x, a),
    "squeeze": lambda x, a: tl.squeeze(tl.expand_dims(x, a), a),
    "stack": lambda x, a: tl.stack([x, x * 2.0], axis=a),
    "stack with unmapped": lambda x, a: tl.stack([x, tl.ones((3, 3, 3))], axis=a),
    "concat": lambda x, a: tl.concat([x, tl.zeros((3, 3, 3))], axis=a),
    "one_hot": lambda x, a: tl.one_hot(tl.cast(tl.abs(x) * 2, "int64") % 3, 3, axis=a),
    "softmax_cross_entropy": lambda x, a: tl.nn.softmax_cross_entropy_with_logits(tl.nn.softmax(-x, axis=a), x, axis=a),
    "transpose": lambda x, a: tl.transpose(x, [(a + 1) % 3, a % 3, (a + 2) % 3]),
    "moveaxis": lambda x, a: tl.moveaxis(x, a, 0),
    "reshape": lambda x, a: tl.reshape(tl.moveaxis(x, a, 0), (-1, 9)),
    "broadcast unmapped": lambda x, a: x * tl.reshape(tl.arange(3.0) + 1.0, [(3, 1, 1), (1, 3, 1), (1, 1, 3)][a % 3]),
    "matmul unmapped": lambda x, a: x @ tl.reshape(tl.arange(9.0), (3, 3)) if a % 2 else tl.arange(3.0) @ x,
}


@pytest.mark.parametrize("op", [tl.multiply, tl.matmul, tl.subtract])
def test_mapped_operands_of_different_ranks_line_up_from_the_right(op):
    vs = np.random.default_rng(5).normal(size=(3, 3))  # elements of shape (3,), against elements (3, 3, 3)
    got = tl.vmap(op)(_X3, vs).numpy()
    np.testing.assert_allclose(got, np.stack([op(x, v).numpy() for x, v in zip(_X3, vs)]), rtol=1e-12)
    got = tl.vmap(op)(vs, _X3).numpy()
    np.testing.assert_allclose(got, np.stack([op(v, x).numpy() for x, v in zip(_X3, vs)]), rtol=1e-12)


@pytest.mark.parametrize("name", list(_AXIS_CASES))
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_ops_along_an_axis_see_the_axes_of_one_element(name, axis):
    fn = _AXIS_CASES[name]
    expected = [np.asarray(fn(tl.tensor(x), axis).numpy()) for x in _X3]
    got = tl.vmap(lambda x: fn(x, axis))(_X3).numpy()
    np.testing.assert_allclose(got, np.stack(expected), rtol=1e-12, atol=1e-12)


def test_elementwise_rules_cover_ops_without_axis_attributes():
    """A batching rule that passes attributes through must not meet an attribute naming axes or shapes: an
    op that gains one needs a rule that moves it past the batch axis."""
    from tensorlib.grad import vmap as vmap_module

    for name in vmap_module._ELEMENTWISE + [name for name, op in _ops.items() if op.elementwise]:
        for attr in _ops[name].defaults:
            assert not any(word in attr for word in ("axis", "axes", "shape", "perm", "index", "dim")), (name, attr)


def test_per_example_gradients_of_a_small_cnn_match_a_loop():
    rng = np.random.default_rng(11)
    xs, ys = rng.normal(size=(5, 10, 10, 1)), rng.integers(0, 6, 5)
    params = {"w1": tl.tensor(rng.normal(size=(3, 3, 1, 4))), "w2": tl.tensor(rng.normal(size=(3, 3, 4, 6)))}

    def loss(p, x, y):
        h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x[None], p["w1"], 1, "SAME")), 2, 2, "VALID")
        h = tl.nn.avg_pool(tl.nn.conv2d(h, p["w2"], 1, "VALID"), 2, 2, "SAME")
        return tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y[None], logits=tl.mean(h, axis=(1, 2)))[0]

    got = tl.vmap(tl.grad(loss, argnums=(0, 1)), in_axes=(None, 0, 0))(params, xs, ys)
    for i in range(len(xs)):
        g_params, g_x = tl.grad(loss, argnums=(0, 1))(params, xs[i], ys[i])
        np.testing.assert_allclose(got[1].numpy()[i], g_x.numpy(), rtol=1e-10, atol=1e-12)
        for name in params:
            np.testing.assert_allclose(got[0][name].numpy()[i], g_params[name].numpy(), rtol=1e-10, atol=1e-12)


def test_jacfwd_and_jacrev_keep_the_structures_of_jacobian():
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(2, 3)), rng.normal(size=(4, 2))

    def f(a, b):
        return {"y": tl.tanh(tl.tensor(w) @ a) * b["scale"], "s": tl.sum(a**2)}, "aux"

    b = {"scale": np.array(2.0)}
    for argnums in (0, (0, 1)):
        reverse, aux = tl.jacrev(f, argnums=argnums, has_aux=True)(x, b)
        forward, aux2 = tl.jacfwd(f, argnums=argnums, has_aux=True)(x, b)
        assert aux == aux2 == "aux"
        assert tl.tree.flatten(forward)[1] == tl.tree.flatten(reverse)[1]
        for r, fw in zip(tl.tree.leaves(reverse), tl.tree.leaves(forward)):
            assert r.shape == fw.shape
            np.testing.assert_allclose(fw.numpy(), r.numpy(), rtol=1e-12, atol=1e-14)
    assert tl.jacrev is tl.jacobian
    with pytest.raises(TypeError, match="tl.jacfwd: f returned a constant"):
        tl.jacfwd(lambda a: 1.0)(x)


@pytest.fixture
def no_loop(monkeypatch):
    """Fail if an op falls back to running once per element: the batching rule under test must run."""

    def loop(self, op, *args, **kwargs):
        raise AssertionError(f"{op.name} ran once per element")

    monkeypatch.setattr(tl.grad.vmap._Vmap, "loop", loop)


@pytest.mark.parametrize("strides, dilations", [(1, 1), (2, 1), (1, 2), ((2, 1), (1, 3))])
@pytest.mark.parametrize("padding", ["SAME", "VALID", [[0, 0], [1, 2], [0, 1], [0, 0]]])
@pytest.mark.parametrize("mapped", [(0, 0), (0, None), (None, 0)])
def test_batched_filter_gradients_match_one_per_element(no_loop, strides, dilations, padding, mapped):
    rng = np.random.default_rng(3)
    x, shape = rng.normal(size=(4, 2, 9, 8, 3)), (3, 2, 3, 5)

    def filter_grad(x, dy):
        return tl.nn.conv2d_backprop_filter(x, shape, dy, strides, padding, dilations)

    out_shape = tl.nn.conv2d(x[0], np.zeros(shape), strides, padding, dilations).shape
    dy = rng.normal(size=(4, *out_shape))
    args = [x if mapped[0] == 0 else x[0], dy if mapped[1] == 0 else dy[0]]
    got = tl.vmap(filter_grad, in_axes=mapped)(*args)
    for i in range(4):
        want = filter_grad(*(a[i] if m == 0 else a for a, m in zip(args, mapped)))
        np.testing.assert_allclose(got.numpy()[i], want.numpy(), rtol=1e-12, atol=1e-12)


def test_a_filter_gradient_too_big_to_batch_runs_per_element(monkeypatch):
    monkeypatch.setattr(tl.grad.vmap, "_PATCHES_BYTES", 1000)  # the patches below take 4 * 9 * 2 * 16 * 3 * 8 bytes
    x, dy = np.ones((4, 2, 4, 4, 3)), np.ones((4, 2, 4, 4, 5))
    got = tl.vmap(lambda x, dy: tl.nn.conv2d_backprop_filter(x, (3, 3, 3, 5), dy, 1, "SAME"))(x, dy)
    want = tl.nn.conv2d_backprop_filter(x[0], (3, 3, 3, 5), dy[0], 1, "SAME").numpy()
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(want, (4, *want.shape)))


def test_per_example_conv_gradients_by_the_batched_rule_match_finite_differences(no_loop):
    rng = np.random.default_rng(4)
    xs, w = rng.normal(size=(3, 6, 6, 2)), rng.normal(size=(3, 3, 2, 2))

    def loss(w, x):
        return tl.sum(tl.tanh(tl.nn.conv2d(x[None], w, 2, "SAME")) ** 2)

    got = tl.vmap(tl.grad(loss), in_axes=(None, 0))(w, xs).numpy()
    eps = 1e-6
    for i in range(3):
        numeric = np.zeros_like(w)
        for idx in np.ndindex(w.shape):
            step = np.zeros_like(w)
            step[idx] = eps
            numeric[idx] = (loss(w + step, xs[i]).numpy() - loss(w - step, xs[i]).numpy()) / (2 * eps)
        np.testing.assert_allclose(got[i], numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("mapped", [(0, None), (None, 0), (0, 0)])
def test_batched_gathers_and_their_gradients_match_one_per_element(no_loop, axis, mapped):
    rng = np.random.default_rng(5)
    params, indices = rng.normal(size=(3, 4, 5, 6)), rng.integers(-4, 4, size=(3, 2, 5))

    def f(p, i):
        return tl.take(p, i, axis=axis)

    def loss(p, i):
        return tl.sum(tl.sin(f(p, i)) ** 2)

    args = [params if mapped[0] == 0 else params[0], indices if mapped[1] == 0 else indices[0]]
    got, grads = tl.vmap(f, in_axes=mapped)(*args), tl.vmap(tl.grad(loss), in_axes=mapped)(*args)
    for i in range(3):
        p, idx = (a[i] if m == 0 else a for a, m in zip(args, mapped))
        np.testing.assert_array_equal(got.numpy()[i], np.take(p, idx, axis=axis))
        # d/dp sum(sin(p[idx])^2) = sum over repeats of sin(2 p): np.add.at scatters the repeats
        want = np.zeros_like(p)
        moved = np.moveaxis(want, axis, 0)
        np.add.at(
            moved,
            idx % p.shape[axis],
            np.moveaxis(
                np.sin(2 * np.take(p, idx, axis=axis)), range(axis % p.ndim, axis % p.ndim + idx.ndim), range(idx.ndim)
            ),
        )
        np.testing.assert_allclose(grads.numpy()[i], want, rtol=1e-12, atol=1e-12)


def test_a_gather_with_an_index_out_of_bounds_in_one_element_raises():
    with pytest.raises(IndexError, match="GatherV2: index 4 is out of bounds"):
        tl.vmap(lambda i: tl.take(np.arange(4.0), i), in_axes=0)(np.array([[0, 1], [2, 4]]))
    with pytest.raises(
        IndexError, match=r"GatherV2: index -5 is out of bounds for axis 0 with size 4 \(params shape \(4,\)"
    ):
        tl.vmap(lambda a, i: tl.take(a, i))(np.ones((2, 4)), np.array([[0, 1], [2, -5]]))


def test_broadcasting_a_shared_tensor_like_a_mapped_one(no_loop):
    like = np.zeros((3, 2, 4))
    got = tl.vmap(lambda t: tl.dispatch.apply(_ops["BroadcastLike"], (np.arange(4.0), t)))(like)
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(np.arange(4.0), (3, 2, 4)))


def _spd(rng, *shape):
    a = rng.normal(size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


_R = np.random.default_rng(8)
_RULE_CASES = {
    "einsum_contract": (
        lambda a, b: tl.einsum("ij,jk->ik", a, b),
        [_R.normal(size=(4, 2, 3)), _R.normal(size=(4, 3, 5))],
    ),
    "einsum_trace_outer": (
        lambda a, b: tl.einsum("ii,j->ij", a, b),
        [_R.normal(size=(4, 3, 3)), _R.normal(size=(4, 2))],
    ),
    "einsum_ellipsis": (
        lambda a, b: tl.einsum("...j,jk", a, b),
        [_R.normal(size=(4, 2, 6, 3)), _R.normal(size=(4, 3, 2))],
    ),
    "pad": (lambda a: tl.pad(a, [[1, 0], [0, 2]], constant_values=3.0), [_R.normal(size=(4, 2, 3))]),
    "tile_more_reps": (lambda a: tl.tile(a, (2, 1, 3)), [_R.normal(size=(4, 2, 3))]),
    "tile_fewer_reps": (lambda a: tl.tile(a, 2), [_R.normal(size=(4, 2, 3))]),
    "flip": (lambda a: tl.flip(a, axis=-1), [_R.normal(size=(4, 2, 3))]),
    "roll": (lambda a: tl.roll(a, (1, -2), axis=(0, 1)), [_R.normal(size=(4, 2, 3))]),
    "split": (lambda a: tl.split(a, [1, 2], axis=-1), [_R.normal(size=(4, 2, 3))]),
    "nanargmax": (
        lambda a: tl.nanargmax(a, axis=0),
        [np.where(_R.random((4, 3, 2)) < 0.3, np.nan, _R.normal(size=(4, 3, 2)))],
    ),
    "cummax": (lambda a: tl.cummax(a, axis=1), [_R.normal(size=(4, 2, 5))]),
    "top_k": (lambda a: tl.top_k(a, 2), [_R.normal(size=(4, 3, 5))]),
    "frexp": (tl.frexp, [_R.normal(size=(4, 3)) * 100]),
    "take_along_axis": (
        lambda a, i: tl.take_along_axis(a, i, axis=0),
        [_R.normal(size=(4, 3, 2)), _R.integers(0, 3, (4, 5, 2))],
    ),
    "sigmoid_xent": (
        lambda z, y: tl.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
        [_R.normal(size=(4, 3)), _R.random((4, 3))],
    ),
    "cholesky": (tl.linalg.cholesky, [_spd(_R, 4, 3, 3)]),
    "inv": (tl.linalg.inv, [_spd(_R, 4, 2, 3, 3)]),
    "slogdet": (tl.linalg.slogdet, [_R.normal(size=(4, 3, 3))]),
    "det": (tl.linalg.det, [_R.normal(size=(4, 3, 3))]),
    "solve": (tl.linalg.solve, [_spd(_R, 4, 3, 3), _R.normal(size=(4, 3, 2))]),
    "solve_triangular": (
        lambda a, b: tl.linalg.solve_triangular(a, b, lower=True),
        [np.tril(_spd(_R, 4, 3, 3)), _R.normal(size=(4, 3, 2))],
    ),
    "eigh": (tl.linalg.eigh, [_spd(_R, 4, 3, 3)]),
    "svd": (lambda a: tl.linalg.svd(a, full_matrices=False)[1], [_R.normal(size=(4, 3, 2))]),
    "qr": (tl.linalg.qr, [_R.normal(size=(4, 3, 2))]),
    "expm": (tl.linalg.expm, [_R.normal(size=(4, 3, 3)) / 3]),
    "pinv": (tl.linalg.pinv, [_R.normal(size=(4, 2, 3))]),
    "diagonal": (lambda a: tl.linalg.diagonal(a, offset=1), [_R.normal(size=(4, 2, 3, 3))]),
    "tril": (lambda a: tl.tril(a, -1), [_R.normal(size=(4, 3, 3))]),
    "searchsorted": (lambda a, v: tl.searchsorted(a, v), [np.sort(_R.normal(size=(4, 6))), _R.normal(size=(4, 2, 3))]),
    "searchsorted_rows": (
        lambda a, v: tl.searchsorted(a, v, side="right"),
        [np.sort(_R.normal(size=(4, 2, 6)), axis=-1), _R.normal(size=(4, 2, 3))],
    ),
    "digitize": (lambda x: tl.digitize(x, np.array([-1.0, 0.0, 0.5, 2.0])), [_R.normal(size=(4, 3, 2))]),
    "logcumsumexp": (lambda x: tl.logcumsumexp(x, axis=0), [_R.normal(size=(4, 5, 2))]),
    "at_set": (
        lambda x, i, v: tl.add(x, 0.0).at[i].set(v),
        [_R.normal(size=(4, 5, 2)), np.array([[0, 3, 0], [4, 4, 1], [-1, 2, 2], [1, 1, 1]]), _R.normal(size=(4, 3, 2))],
    ),
    "batch_norm_training": (
        lambda x, s: tl.nn.fused_batch_norm(x, s, s * 0.5 - 1.0)[0],
        [_R.normal(size=(4, 2, 3, 3, 5)), _R.random((4, 5)) + 0.5],
    ),
    "batch_norm_inference": (
        lambda x, m: tl.nn.fused_batch_norm(x, m + 1.0, m, m, m * m + 0.5, is_training=False)[0],
        [_R.normal(size=(4, 2, 3, 3, 5)), _R.normal(size=(4, 5))],
    ),
    "batch_norm_stats": (
        lambda x: tl.nn.fused_batch_norm(x, tl.ones(5, dtype="float64"), tl.zeros(5, dtype="float64"))[1:],
        [_R.normal(size=(4, 2, 3, 3, 5))],
    ),
    "gather_nd": (tl.gather_nd, [_R.normal(size=(4, 3, 4, 2)), _R.integers(-3, 3, (4, 5, 2))]),
    "getitem_two_arrays": (lambda a, i: a[i, i + 1], [_R.normal(size=(4, 3, 4, 2)), _R.integers(-3, 2, (4, 5))]),
    "fft": (lambda a: tl.fft.fft(a, axis=0), [_R.normal(size=(4, 6, 3))]),
    "rfftn": (lambda a: tl.fft.rfftn(a, axes=(0, 1)), [_R.normal(size=(4, 6, 3))]),
    "irfft": (lambda a: tl.fft.irfft(a, n=7, axis=0), [_R.normal(size=(4, 4, 3)) + 1j * _R.normal(size=(4, 4, 3))]),
}


@pytest.mark.parametrize("name", list(_RULE_CASES))
@pytest.mark.parametrize("shared", [False, True], ids=["all_mapped", "last_shared"])
def test_batching_rules_of_more_ops_match_one_call_per_element(no_loop, name, shared):
    fn, args = _RULE_CASES[name]
    in_axes = tuple(None if shared and i == len(args) - 1 and len(args) > 1 else 0 for i in range(len(args)))
    args = [a[0] if ax is None else a for a, ax in zip(args, in_axes)]
    got = _values(tl.vmap(fn, in_axes=in_axes)(*args))
    for i in range(4):
        want = _values(fn(*(a if ax is None else a[i] for a, ax in zip(args, in_axes))))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g[i], w, rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize(
    "name",
    ["einsum_contract", "einsum_ellipsis", "pad", "tile_more_reps", "roll", "split", "take_along_axis"]
    + ["cholesky", "inv", "slogdet", "solve", "solve_triangular", "expm", "diagonal", "tril", "sigmoid_xent"]
    + ["gather_nd", "getitem_two_arrays", "fft", "rfftn", "batch_norm_training", "batch_norm_inference", "at_set"]
    + ["logcumsumexp"],
)
def test_per_example_gradients_through_the_rules_match_a_loop_of_grad(no_loop, name):
    fn, args = _RULE_CASES[name]

    def loss(a, *rest):
        leaves = [
            tl.real(leaf) + tl.imag(leaf) if leaf.dtype.kind == "c" else leaf for leaf in tl.tree.leaves(fn(a, *rest))
        ]
        return sum(tl.sum(tl.sin(leaf)) for leaf in leaves if leaf.dtype.kind == "f")

    got = tl.vmap(tl.grad(loss))(*args).numpy()
    for i in range(4):
        want = tl.grad(loss)(*(a[i] for a in args)).numpy()
        np.testing.assert_allclose(got[i], want, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ against jax.vmap (where installed)
def _jax_cases():
    """(name, tensorlib function, JAX function, args, in_axes[, out_axes]): the same program for both."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    rng = np.random.default_rng(1)
    A = rng.normal(size=(3, 4, 5))
    Bm = rng.normal(size=(5, 2))
    v = rng.normal(size=(4,))
    cases = [
        ("matmul axis1", lambda a, b: a @ b, lambda a, b: a @ b, (A, Bm), (1, None)),
        ("matmul axis2 both", lambda a, b: a.T @ b, lambda a, b: a.T @ b, (A, rng.normal(size=(3, 2, 5))), (2, 2)),
        ("sum out -1", lambda a: tl.sum(a, axis=0), lambda a: jnp.sum(a, axis=0), (A,), (0,), -1),
        (
            "dict in_axes",
            lambda d: d["a"] * d["b"],
            lambda d: d["a"] * d["b"],
            ({"a": A, "b": rng.normal(size=(4,))},),
            ({"a": 2, "b": None},),
        ),
        ("tuple out axes", lambda a: (a, tl.sum(a)), lambda a: (a, jnp.sum(a)), (A,), (0,), (1, 0)),
        ("closure", lambda a: v * 2.0, lambda a: v * 2.0, (A,), (0,)),
        ("kw-less scalar out", lambda a: tl.max(a), lambda a: jnp.max(a), (A,), (1,)),
        ("softmax neg axis", lambda a: tl.nn.softmax(a, axis=-1), lambda a: jax.nn.softmax(a, axis=-1), (A,), (1,)),
        ("transpose", lambda a: tl.transpose(a), lambda a: jnp.transpose(a), (A,), (2,)),
        ("reshape", lambda a: tl.reshape(a, (-1,)), lambda a: jnp.reshape(a, (-1,)), (A,), (1,)),
        (
            "concat",
            lambda a, b: tl.concat([a, b], axis=0),
            lambda a, b: jnp.concatenate([a, b], axis=0),
            (A, np.swapaxes(A, 0, 1)),
            (0, 1),
        ),
        (
            "stack",
            lambda a, b: tl.stack([a, b], axis=-1),
            lambda a, b: jnp.stack([a, b], axis=-1),
            (A, A[0]),
            (0, None),
        ),
        ("where", lambda a: tl.where(a > 0, a, 0.0), lambda a: jnp.where(a > 0, a, 0.0), (A,), (2,)),
        ("getitem", lambda a: a[1:, ::2], lambda a: a[1:, ::2], (A,), (0,)),
        ("getitem int", lambda a: a[-1], lambda a: a[-1], (A,), (1,)),
        ("getitem none ellipsis", lambda a: a[None, ..., 0], lambda a: a[None, ..., 0], (A,), (0,)),
        ("cumsum", lambda a: tl.cumsum(a, axis=0), lambda a: jnp.cumsum(a, axis=0), (A,), (1,)),
        ("sort", lambda a: tl.sort(a, axis=0), lambda a: jnp.sort(a, axis=0), (A,), (2,)),
        ("argmax", lambda a: tl.argmax(a, axis=-1), lambda a: jnp.argmax(a, axis=-1), (A,), (0,)),
        (
            "mean keepdims",
            lambda a: tl.mean(a, axis=1, keepdims=True),
            lambda a: jnp.mean(a, axis=1, keepdims=True),
            (A,),
            (0,),
        ),
        ("var", lambda a: tl.var(a, axis=0), lambda a: jnp.var(a, axis=0), (A,), (2,)),
        (
            "outer broadcast",
            lambda a, b: a[:, None] * b[None, :],
            lambda a, b: a[:, None] * b[None, :],
            (rng.normal(size=(3, 4)), rng.normal(size=(4, 3))),
            (0, 1),
        ),
        (
            "expand squeeze",
            lambda a: tl.squeeze(tl.expand_dims(a, 0), 0),
            lambda a: jnp.squeeze(jnp.expand_dims(a, 0), 0),
            (A,),
            (1,),
        ),
        ("grad", tl.grad(lambda a: tl.sum(tl.sin(a) * a)), jax.grad(lambda a: jnp.sum(jnp.sin(a) * a)), (A,), (1,)),
        (
            "hessian-ish",
            tl.grad(lambda a: tl.sum(tl.grad(lambda b: tl.sum(b**3))(a))),
            jax.grad(lambda a: jnp.sum(jax.grad(lambda b: jnp.sum(b**3))(a))),
            (A,),
            (0,),
        ),
        ("norm", lambda a: tl.linalg.norm(a), lambda a: jnp.linalg.norm(a), (A,), (0,)),
        (
            "einsum",
            lambda a, b: tl.einsum("ij,jk->ik", a, b),
            lambda a, b: jnp.einsum("ij,jk->ik", a, b),
            (A, Bm),
            (0, None),
        ),
        (
            "take",
            lambda a, i: tl.take(a, i, axis=0),
            lambda a, i: jnp.take(a, i, axis=0),
            (A, rng.integers(0, 4, (3, 2))),
            (0, 0),
        ),
        ("one_hot", lambda i: tl.one_hot(i, 5), lambda i: jax.nn.one_hot(i, 5), (rng.integers(0, 5, (3, 4)),), (1,)),
        ("clip", lambda a: tl.clip(a, -0.5, 0.5), lambda a: jnp.clip(a, -0.5, 0.5), (A,), (0,)),
        ("pad", lambda a: tl.pad(a, [[1, 1], [0, 2]]), lambda a: jnp.pad(a, [[1, 1], [0, 2]]), (A,), (0,)),
        ("flip", lambda a: tl.flip(a, axis=0), lambda a: jnp.flip(a, axis=0), (A,), (1,)),
        ("tile", lambda a: tl.tile(a, (2, 1)), lambda a: jnp.tile(a, (2, 1)), (A,), (0,)),
        ("logsumexp", lambda a: tl.logsumexp(a, axis=0), lambda a: jax.scipy.special.logsumexp(a, axis=0), (A,), (2,)),
        (
            "cond per elem",
            lambda a: tl.cond(tl.sum(a) > 0, lambda x: x * 2.0, lambda x: -x, a),
            lambda a: jax.lax.cond(jnp.sum(a) > 0, lambda x: x * 2.0, lambda x: -x, a),
            (A,),
            (0,),
        ),
        (
            "scan",
            lambda a: tl.scan(lambda c, x: (c + x, c * x), tl.zeros(5, dtype="float64"), a)[1],
            lambda a: jax.lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(5), a)[1],
            (A,),
            (0,),
        ),
        (
            "while",
            lambda a: tl.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0), (0, a))[1],
            lambda a: jax.lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0), (0, a))[1],
            (A,),
            (0,),
        ),
        (
            "switch",
            lambda i, a: tl.switch(i, [lambda x: x, lambda x: x * 2.0, lambda x: -x], a),
            lambda i, a: jax.lax.switch(i, [lambda x: x, lambda x: x * 2.0, lambda x: -x], a),
            (np.array([0, 5, -1]), A),
            (0, 0),
        ),
        (
            "fori",
            lambda a: tl.fori_loop(0, 3, lambda i, x: x * 1.5, a),
            lambda a: jax.lax.fori_loop(0, 3, lambda i, x: x * 1.5, a),
            (A,),
            (0,),
        ),
        ("int input", lambda i: i * 2 + 1, lambda i: i * 2 + 1, (rng.integers(0, 5, (3, 4)),), (0,)),
        ("bool", lambda a: tl.logical_and(a > 0, a < 1), lambda a: jnp.logical_and(a > 0, a < 1), (A,), (0,)),
        (
            "solve",
            lambda a, b: tl.linalg.solve(a, b),
            lambda a, b: jnp.linalg.solve(a, b),
            (rng.normal(size=(3, 4, 4)) + 4 * np.eye(4), rng.normal(size=(3, 4, 2))),
            (0, 0),
        ),
        (
            "solve vec",
            lambda a, b: tl.linalg.solve(a, b),
            lambda a, b: jnp.linalg.solve(a, b),
            (rng.normal(size=(3, 4, 4)) + 4 * np.eye(4), rng.normal(size=(3, 4))),
            (0, 0),
        ),
        ("det", lambda a: tl.linalg.det(a), lambda a: jnp.linalg.det(a), (rng.normal(size=(3, 4, 4)),), (0,)),
        ("fft", lambda a: tl.fft.fft(a), lambda a: jnp.fft.fft(a), (A,), (1,)),
        (
            "gather_nd-ish",
            lambda a, i: a[i[:, 0], i[:, 1]],
            lambda a, i: a[i[:, 0], i[:, 1]],
            (A, rng.integers(0, 4, (3, 6, 2))),
            (0, 0),
        ),
        (
            "conv",
            lambda x, w: tl.nn.conv2d(x[None], w, 1, "SAME")[0],
            lambda x, w: jax.lax.conv_general_dilated(
                x[None], w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )[0],
            (rng.normal(size=(3, 6, 6, 2)), rng.normal(size=(3, 3, 2, 4))),
            (0, None),
        ),
        (
            "conv w mapped",
            lambda x, w: tl.nn.conv2d(x[None], w, 1, "SAME")[0],
            lambda x, w: jax.lax.conv_general_dilated(
                x[None], w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )[0],
            (rng.normal(size=(6, 6, 2)), rng.normal(size=(3, 3, 3, 2, 4))),
            (None, 0),
        ),
        (
            "maxpool",
            lambda x: tl.nn.max_pool(x[None], 2, 2, "VALID")[0],
            lambda x: jax.lax.reduce_window(x[None], -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")[0],
            (rng.normal(size=(3, 6, 6, 2)),),
            (0,),
        ),
    ]
    return cases


def test_vmap_matches_jax_vmap_on_programs_with_axes_control_flow_and_gradients():
    jax = pytest.importorskip("jax")
    for name, ours, theirs, args, in_axes, *out in _jax_cases():
        out_axes = out[0] if out else 0
        got = tl.tree.leaves(tl.vmap(ours, in_axes=in_axes, out_axes=out_axes)(*args))
        want = jax.tree_util.tree_leaves(jax.vmap(theirs, in_axes=in_axes, out_axes=out_axes)(*args))
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            g = np.asarray(g.numpy() if isinstance(g, tl.Tensor) else g)
            assert g.shape == np.shape(w), (name, g.shape, np.shape(w))
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-9, atol=1e-12, err_msg=name)


def test_a_scan_of_length_0_inside_vmap_gives_empty_ys_of_the_element_shapes():
    # It raised UnmappableLoopError: no step runs, so the ys' shapes come from f's shape rules alone.
    def f(x):
        return tl.scan(lambda c, v: (c + v, {"a": c * v * 2.0, "n": tl.sum(c)}), tl.zeros(3, dtype="float64"), x)

    carry, ys = tl.vmap(f)(np.zeros((4, 0, 3)))
    np.testing.assert_array_equal(carry.numpy(), np.zeros((4, 3)))
    assert ys["a"].shape == (4, 0, 3) and ys["n"].shape == (4, 0) and ys["a"].dtype == np.float64
    one_carry, one_ys = f(np.zeros((0, 3)))  # each element's, as an eager call gives
    assert one_ys["a"].shape == (0, 3) and one_ys["n"].shape == (0,)
    grad = tl.vmap(tl.grad(lambda x: tl.sum(f(x)[0])))(np.ones((2, 0, 3)))
    assert grad.shape == (2, 0, 3)
