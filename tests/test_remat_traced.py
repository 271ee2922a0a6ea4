"""``tl.remat`` under ``tl.function``: the backward pass recomputes what the policy does not keep.

The recomputation reads its inputs through OptimizationBarrier nodes, so simplify's CSE cannot merge it back into
the forward pass's nodes (which the memory plan would then keep alive for the gradient); the policy's kept values
come from the forward pass.  References: the graph's structure (the recomputed nodes after the barriers), the
memory plan's peak of live bytes (counted here from its steps and frees), the function without ``tl.remat``
(eager and traced), float64 central differences on NumPy formulas, and JAX's ``jax.checkpoint`` where installed.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph.ir import _nbytes

from _helpers import central_differences

P = tl.checkpoint_policies
_RNG = np.random.default_rng(7)
_X, _W = _RNG.normal(size=(4, 3)) * 0.5, _RNG.normal(size=(3, 3)) * 0.5


def _block(x, w):
    h = tl.checkpoint_name(tl.tanh(x @ w), "hidden")
    return tl.sum(tl.exp(tl.sin(h) @ w) * tl.cos(h))


def _block_np(x, w):
    h = np.tanh(x @ w)
    return np.sum(np.exp(np.sin(h) @ w) * np.cos(h))


_POLICIES = {
    "None": None,
    "nothing_saveable": P.nothing_saveable,
    "everything_saveable": P.everything_saveable,
    "dots_saveable": P.dots_saveable,
    "save_only_these_names": P.save_only_these_names("hidden"),
    "save_anything_except_these_names": P.save_anything_except_these_names("hidden"),
}


def _ops(graph) -> list:
    return [n.op_type for n in graph.optimize().nodes]


def _plan_peak(graph) -> int:
    """The most bytes the memory plan holds at once: each step's results (a barrier's or an Identity's is its
    input, no new bytes) live until the step that frees them; the graph's inputs are the caller's."""
    exe = graph.optimize().executable()
    views = ("OptimizationBarrier", "Identity")
    live, peak = {}, 0
    for step in exe.steps:
        for o in step.node.outputs:
            live[o._id] = 0 if step.node.op_type in views else _nbytes(o.shape, o.dtype)
        peak = max(peak, sum(live.values()))
        for v in step.frees:
            live.pop(v, None)
    return peak


# ------------------------------------------------------------------ the graph recomputes, on the backward side
def test_traced_remat_recomputes_after_the_forward_pass():
    # The policy was ignored under tl.function: the graph was the graph without remat (no Tanh computed twice).
    # (value_and_grad: with grad alone the forward pass's value is dead, and only the recomputation is left.)
    x, w = tl.tensor(_X), tl.tensor(_W)
    plain = _ops(tl.function(tl.value_and_grad(_block, argnums=1)).get_graph(x, w))
    ops = _ops(tl.function(tl.value_and_grad(tl.remat(_block), argnums=1)).get_graph(x, w))
    assert "OptimizationBarrier" not in plain and plain.count("Tanh") == 1
    assert ops.count("Tanh") == 2 and ops.count("Sin") == 2
    first_barrier = ops.index("OptimizationBarrier")
    # The forward pass runs first; the recomputed tanh comes after the barriers, among the gradient's nodes.
    assert ops.index("Tanh") < first_barrier < len(ops) - ops[::-1].index("Tanh") - 1
    # A kept value is not recomputed: save_only_these_names keeps the named tanh (and its product).
    kept = _ops(
        tl.function(tl.value_and_grad(tl.remat(_block, policy=P.save_only_these_names("hidden")), argnums=1)).get_graph(
            x, w
        )
    )
    assert kept.count("Tanh") == 1 and kept.count("Sin") == 2
    # prevent_cse=False: CSE may merge the recomputation back into the forward pass (as XLA may in JAX).
    merged = _ops(tl.function(tl.value_and_grad(tl.remat(_block, prevent_cse=False), argnums=1)).get_graph(x, w))
    assert merged.count("Tanh") == 1 and "OptimizationBarrier" not in merged
    text = str(tl.function(tl.value_and_grad(tl.remat(_block), argnums=1)).get_graph(x, w).optimize())
    assert "OptimizationBarrier" in text


def _layer(h, w):
    return tl.tanh(tl.tanh(h @ w))


def _chain(layer):
    def f(x, w):
        h = x
        for _ in range(10):
            h = layer(h, w)
        return tl.sum(h)

    return f


def test_traced_remat_lowers_the_memory_plans_peak():
    # Ten layers of tanh(tanh(h @ w)): without remat the plan holds both tanh results of every layer until the
    # backward pass reaches it; with each layer rematerialized, only each layer's input, and one layer's
    # recomputation at a time.
    x, w = np.ones((32, 32)), np.eye(32) * 0.5
    one = _nbytes((32, 32), np.float64)
    plain = _plan_peak(tl.function(tl.grad(_chain(_layer), argnums=1)).get_graph(x, w))
    remat = _plan_peak(
        tl.function(tl.grad(_chain(tl.remat(_layer, policy=P.nothing_saveable)), argnums=1)).get_graph(x, w)
    )
    assert plain >= 20 * one
    assert remat <= 14 * one
    # The same gradient (bit for bit: the same ops on the same values).
    g_plain = tl.function(tl.grad(_chain(_layer), argnums=1))(x, w)
    g_remat = tl.function(tl.grad(_chain(tl.remat(_layer)), argnums=1))(x, w)
    np.testing.assert_array_equal(g_remat.numpy(), g_plain.numpy())


# ------------------------------------------------------------------ values and gradients
@pytest.mark.parametrize("prevent_cse", [True, False])
@pytest.mark.parametrize("name", list(_POLICIES))
def test_traced_remat_gives_the_gradients_of_the_function(name, prevent_cse):
    x, w = tl.tensor(_X), tl.tensor(_W)
    block = tl.remat(_block, policy=_POLICIES[name], prevent_cse=prevent_cse)
    value, grads = tl.function(tl.value_and_grad(block, argnums=(0, 1)))(x, w)
    ev, eg = tl.value_and_grad(_block, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(value.numpy(), ev.numpy(), rtol=1e-13)
    for g, e in zip(grads, eg):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grads[0].numpy(), central_differences(lambda a: _block_np(a, _W), _X), rtol=1e-6)
    np.testing.assert_allclose(grads[1].numpy(), central_differences(lambda a: _block_np(_X, a), _W), rtol=1e-6)


def _close(got, want):
    for g, e in zip(tl.tree.leaves(got), tl.tree.leaves(want)):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("policy", [None, P.dots_saveable, P.save_only_these_names("hidden")])
def test_traced_remat_nested_vmap_control_flow_and_second_order(policy):
    x, w = tl.tensor(_X), tl.tensor(_W)
    r = tl.remat(lambda x, w: tl.sin(tl.checkpoint_name(tl.tanh(x @ w), "hidden")) @ w, policy=policy)
    plain = lambda x, w: tl.sin(tl.tanh(x @ w)) @ w  # noqa: E731

    def nested(inner):
        outer = tl.remat(lambda x, w: inner(inner(x, w), w), policy=policy)
        return lambda x, w: tl.sum(outer(x, w) ** 2)

    def vmapped(inner):
        return lambda x, w: tl.sum(tl.vmap(lambda row: inner(row[None], w))(x) ** 2)

    def in_cond(inner):
        return lambda x, w: tl.sum(tl.cond(tl.sum(x) > 0, lambda a: inner(a, w), lambda a: inner(a, w) * 2.0, x))

    def in_scan(inner):
        def f(x, w):
            carry, ys = tl.scan(lambda c, _: (inner(c, w), tl.sum(c)), x, None, length=3)
            return tl.sum(carry) + tl.sum(ys)

        return f

    for make in (nested, vmapped, in_cond, in_scan):
        got = tl.function(tl.grad(make(r), argnums=(0, 1)))(x, w)
        _close(got, tl.grad(make(plain), argnums=(0, 1))(x, w))
    # Second order: the gradient of the traced gradient.
    hess = tl.function(lambda x: tl.grad(lambda a: tl.sum(tl.grad(lambda b: tl.sum(r(b, w) ** 2))(a) ** 2))(x))
    _close(hess(x), tl.grad(lambda a: tl.sum(tl.grad(lambda b: tl.sum(plain(b, w) ** 2))(a) ** 2))(x))


def test_traced_remat_of_a_function_that_assigns_changes_the_state_once():
    x, w = tl.tensor(_X), tl.tensor(_W)
    v = tl.Variable(np.zeros((4, 3)))

    def block(x, w):
        v.assign_add(tl.tanh(x @ w))
        return tl.sin(v * 1.0) @ w

    def step(f):
        return lambda x, w: tl.grad(lambda x, w: tl.sum(f(x, w) * tl.cos(x @ w)), argnums=(0, 1))(x, w)

    got = tl.function(step(tl.remat(block)))(x, w)
    after = v.numpy().copy()
    v.assign(np.zeros((4, 3)))
    want = step(block)(x, w)
    np.testing.assert_allclose(after, np.tanh(_X @ _W), rtol=1e-13)  # assigned once, not once more per recompute
    np.testing.assert_array_equal(v.numpy(), after)
    _close(got, want)


def test_traced_remat_keeps_unseeded_random_draws():
    # A traced draw cannot be repeated: the recomputation takes the forward pass's mask, and the gradient is that of
    # the output returned (its zeros are the dropped elements).
    x, w = tl.tensor(_X), tl.tensor(_W)
    block = tl.remat(lambda x, w: tl.nn.dropout(tl.tanh(x @ w), rate=0.5) * 3.0)
    single = tl.function(tl.grad(lambda a: (lambda y: (tl.sum(y), y))(block(a, w)), has_aux=True))
    for _ in range(3):
        g, y = single(x)
        mask = (y.numpy() != 0).astype(np.float64)
        expected = (mask * 3.0 / 0.5 * (1.0 - np.tanh(_X @ _W) ** 2)) @ _W.T
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["None", "dots_saveable", "save_only_these_names"])
def test_traced_remat_matches_jax_checkpoint(name):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    from jax.ad_checkpoint import checkpoint_name

    def block(x, w):
        h = checkpoint_name(jnp.tanh(x @ w), "hidden")
        return jnp.sum(jnp.exp(jnp.sin(h) @ w) * jnp.cos(h))

    jax_policy = {"None": None, "dots_saveable": jax.checkpoint_policies.dots_saveable}.get(name)
    if name == "save_only_these_names":
        jax_policy = jax.checkpoint_policies.save_only_these_names("hidden")
    expected = jax.jit(jax.grad(jax.checkpoint(block, policy=jax_policy), argnums=(0, 1)))(_X, _W)
    got = tl.function(tl.grad(tl.remat(_block, policy=_POLICIES[name]), argnums=(0, 1)))(tl.tensor(_X), tl.tensor(_W))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=1e-12)


# ------------------------------------------------------------------ eager: the kernels no one needs do not run again
_RUNS = {"MatMul": 0, "Tanh": 0}
_COUNTED = {}


@pytest.fixture(scope="module")
def counted():
    # Registered for this module only: a NumPy-only op would show in later registry listings.
    with tl.testing.isolated_registries():
        mm = tl.ops.defop(
            "RematCountedMatMul",
            inputs=("a", "b"),
            infer=lambda a, b: tl.TensorSpec((a.shape[0], b.shape[1]), a.dtype),
            doc="a @ b, counting its kernel's runs (tests/test_remat_traced.py).",
        )
        th = tl.ops.defop(
            "RematCountedTanh",
            inputs=("x",),
            infer=lambda x: tl.TensorSpec(x.shape, x.dtype),
            doc="tanh, counting its kernel's runs (tests/test_remat_traced.py).",
        )

        @mm.kernel("numpy")
        def _mm(a, b):
            _RUNS["MatMul"] += 1
            return a @ b

        @th.kernel("numpy")
        def _tanh(x):
            _RUNS["Tanh"] += 1
            return np.tanh(x)

        tl.grad.register_gradient(
            "RematCountedMatMul",
            lambda node, g: g @ tl.transpose(node.inputs[1]),
            lambda node, g: tl.transpose(node.inputs[0]) @ g,
        )
        tl.grad.register_gradient("RematCountedTanh", lambda node, g: g * (1.0 - node.outputs[0] * node.outputs[0]))
        yield mm, th


def _runs(f, *args):
    _RUNS.update(MatMul=0, Tanh=0)
    out = f(*args)
    return out, dict(_RUNS)


def test_eager_remat_skips_the_kernels_whose_results_only_kept_ops_read(counted):
    # save_only_these_names("h") on checkpoint_name(tanh(x @ w), "h") kept the tanh, but the backward pass's run
    # still ran the product before it, whose result nothing needed (tanh's rule reads its output).
    mm, th = counted
    x, w = tl.tensor(_X), tl.tensor(_W)

    def block(x, w):
        h = tl.checkpoint_name(th(mm(x, w)), "h")
        dead = mm(h, w) * 2.0  # read by nothing: JAX's DCE drops it
        del dead
        return tl.sum(tl.exp(tl.sin(h) @ w) * tl.cos(h))

    plain, runs = _runs(tl.grad(block, argnums=(0, 1)), x, w)
    assert runs == {"MatMul": 2, "Tanh": 1}
    got, runs = _runs(tl.grad(tl.remat(block, policy=P.save_only_these_names("h")), argnums=(0, 1)), x, w)
    assert runs == {"MatMul": 2, "Tanh": 1}  # the forward pass's; none again
    for g, p in zip(got, plain):
        np.testing.assert_array_equal(g.numpy(), p.numpy())
    np.testing.assert_allclose(got[1].numpy(), central_differences(lambda a: _block_np(_X, a), _W), rtol=1e-6)


def test_eager_remat_runs_a_skipped_kernel_when_a_gradient_rule_reads_its_result(counted):
    # The policy keeps h @ w; its rule for w reads h, so tanh (read only by the kept product) runs when read.
    mm, th = counted
    keep_products = lambda op_type, inputs, attrs: op_type == "RematCountedMatMul"  # noqa: E731
    x, w = tl.tensor(_X), tl.tensor(_W)

    def block(x, w):
        return tl.sum(tl.sin(mm(th(x), w)))

    plain = tl.grad(block, argnums=(0, 1))(x, w)
    got, runs = _runs(tl.grad(tl.remat(block, policy=keep_products), argnums=(0, 1)), x, w)
    assert runs == {"MatMul": 1, "Tanh": 2}
    for g, p in zip(got, plain):
        np.testing.assert_array_equal(g.numpy(), p.numpy())
    want_w = central_differences(lambda a: np.sum(np.sin(np.tanh(_X) @ a)), _W)
    np.testing.assert_allclose(got[1].numpy(), want_w, rtol=1e-6)
    # The gradient for x alone: tanh's rule reads tanh's output, which runs then.
    got, runs = _runs(tl.grad(tl.remat(block, policy=keep_products)), x, w)
    np.testing.assert_array_equal(got.numpy(), plain[0].numpy())
    # Second order through a deferred result.
    h = tl.hessian(tl.remat(block, policy=keep_products), argnums=1)(x, w).numpy()
    np.testing.assert_allclose(h, tl.hessian(block, argnums=1)(x, w).numpy(), rtol=1e-12, atol=1e-14)


def test_eager_remat_gradients_of_one_persistent_tape_in_threads():
    # The kept results' replay counted the ops on one counter shared by every run of grad_fn: two threads asking
    # a persistent tape for the gradient took each other's steps (a RuntimeError, or another tanh's value: a silent
    # wrong gradient).  Each run counts on its own now.
    import sys
    import threading

    x = tl.tensor(np.linspace(-1.0, 1.0, 6))

    def block(x):
        for _ in range(6):
            x = tl.tanh(x * 1.1)
        return tl.sum(x)

    want = central_differences(lambda v: np.sum(_tanh_chain(v)), np.linspace(-1.0, 1.0, 6))
    bad = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            with tl.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = tl.remat(block, policy=lambda op_type, inputs, attrs: op_type == "Tanh")(x)

            def work():
                for _ in range(5):
                    try:
                        g = tape.gradient(y, x).numpy()
                        if not np.allclose(g, want, rtol=1e-6):
                            bad.append(g)
                    except RuntimeError as e:
                        bad.append(e)

            threads = [threading.Thread(target=work) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(interval)
    assert bad == []


def _tanh_chain(v):
    for _ in range(6):
        v = np.tanh(v * 1.1)
    return v
