"""Function transforms, what was left: ``tl.remat``'s policies (``tl.checkpoint_policies``, ``tl.checkpoint_name``),
custom_jvp's ``symbolic_zeros``, the vmap collectives, and transforms attacked as an adversary.

References: the function without ``tl.remat`` (gradients bit for bit), float64 central differences on a NumPy
formula, counts of kernel runs (a user op whose kernel counts its calls), and JAX (``jax.checkpoint`` with the
same policy, ``jax.custom_jvp(symbolic_zeros=True)``) where installed.
"""

import numpy as np
import pytest

import tensorlib as tl

from _helpers import central_differences

P = tl.checkpoint_policies
_RUNS = {"n": 0}

_COUNTED = {}  # the op below, defined for this module only


@pytest.fixture(autouse=True, scope="module")
def _counted_tanh():
    # Registered for this module only (a NumPy-only op would otherwise show in every later registry listing).
    with tl.testing.isolated_registries():
        op = tl.ops.defop(
            "TransformsleftCountedTanh",
            inputs=("x",),
            infer=lambda x: tl.TensorSpec(x.shape, x.dtype),
            doc="tanh whose kernel counts its runs (tests/test_transformsleft.py).",
        )

        @op.kernel("numpy")
        def _counted_kernel(x):
            _RUNS["n"] += 1
            return np.tanh(x)

        tl.grad.register_gradient(
            "TransformsleftCountedTanh", lambda node, g: g * (1.0 - node.outputs[0] * node.outputs[0])
        )
        _COUNTED["op"] = op
        yield
        _COUNTED.clear()


def _counted(x):
    return _COUNTED["op"](x)


def _block(x, w):
    h = tl.checkpoint_name(_counted(x @ w), "hidden")
    u = tl.einsum("bi,ij->bj", tl.sin(h), w)
    return tl.sum(tl.exp(u) * tl.cos(h))


def _block_np(x, w):
    h = np.tanh(x @ w)
    return np.sum(np.exp(np.sin(h) @ w) * np.cos(h))


_RNG = np.random.default_rng(0)
_X, _W = _RNG.normal(size=(4, 3)) * 0.5, _RNG.normal(size=(3, 3)) * 0.5

_POLICIES = {
    "None": None,
    "nothing_saveable": P.nothing_saveable,
    "everything_saveable": P.everything_saveable,
    "dots_saveable": P.dots_saveable,
    "checkpoint_dots": P.checkpoint_dots,
    "dots_with_no_batch_dims_saveable": P.dots_with_no_batch_dims_saveable,
    "save_only_these_names": P.save_only_these_names("hidden"),
    "save_any_names_but_these": P.save_any_names_but_these("other"),
    "save_anything_except_these_names": P.save_anything_except_these_names("hidden"),
    "save_from_both_policies": P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("hidden")),
    "user callable": lambda op_type, inputs, attrs: op_type == "TransformsleftCountedTanh",
}

# How often the counted tanh's kernel runs for one gradient: once in the forward pass, and once more in the
# backward pass's run of the block unless the policy keeps it (or keeps the value named from it).
_TANH_RUNS = {
    "None": 2,
    "nothing_saveable": 2,
    "everything_saveable": 1,
    "dots_saveable": 2,
    "checkpoint_dots": 2,
    "dots_with_no_batch_dims_saveable": 2,
    "save_only_these_names": 1,
    "save_any_names_but_these": 1,
    "save_anything_except_these_names": 1,
    "save_from_both_policies": 1,
    "user callable": 1,
}


# ------------------------------------------------------------------ tl.remat(policy=...): checkpoint policies
@pytest.mark.parametrize("name", list(_POLICIES))
def test_remat_policies_give_the_same_gradients_and_change_what_runs_again(name):
    # policy= was accepted and ignored: every op ran again whatever it said (nothing_saveable always).
    x, w = tl.tensor(_X), tl.tensor(_W)
    plain = tl.grad(_block, argnums=(0, 1))(x, w)
    _RUNS["n"] = 0
    got = tl.grad(tl.remat(_block, policy=_POLICIES[name]), argnums=(0, 1))(x, w)
    assert _RUNS["n"] == _TANH_RUNS[name]
    for g, p in zip(got, plain):
        np.testing.assert_array_equal(g.numpy(), p.numpy())
    np.testing.assert_allclose(got[1].numpy(), central_differences(lambda w: _block_np(_X, w), _W), rtol=1e-6)
    np.testing.assert_allclose(got[0].numpy(), central_differences(lambda x: _block_np(x, _W), _X), rtol=1e-6)


def test_dots_saveable_keeps_the_products_and_recomputes_the_rest():
    # Counted by the profiler: the forward ops that run again in the backward pass, per policy.
    x, w = tl.tensor(_X), tl.tensor(_W)

    def f(x, w):
        return tl.sum(tl.sin(tl.einsum("bij,jk->bik", tl.tanh(x @ w)[None], w)))

    def again(policy):
        with tl.profile() as prof:
            tl.grad(tl.remat(f, policy=policy), argnums=1)(x, w)
        forward = [e.op_type for e in prof.events if e.phase == "forward"]
        gradient = [e.op_type for e in prof.events if e.phase == "gradient"]
        return forward, gradient

    forward, nothing = again(None)
    _, dots = again(P.dots_saveable)
    _, no_batch = again(P.dots_with_no_batch_dims_saveable)
    assert nothing.count("Tanh") == dots.count("Tanh") == 1 and nothing.count("Sin") == dots.count("Sin") == 1
    # The backward's own products (the gradient rules') run in every case: one fewer of each kept product.
    assert dots.count("BatchMatMulV2") == nothing.count("BatchMatMulV2") - 1
    assert dots.count("Einsum") == nothing.count("Einsum") - 1
    # "bij,jk->bik" has no axis that both operands and the result share: no batch dimension, kept too.
    assert no_batch.count("Einsum") == dots.count("Einsum") and no_batch.count("BatchMatMulV2") == dots.count(
        "BatchMatMulV2"
    )


def test_dots_with_no_batch_dims_tells_batched_products():
    a2, a3 = tl.ones((2, 3)), tl.ones((4, 2, 3))
    policy = P.dots_with_no_batch_dims_saveable
    assert policy("BatchMatMulV2", (a2, a2), {})
    assert not policy("BatchMatMulV2", (a3, a2), {})
    assert policy("Einsum", (a2, a2), {"equation": "bi,ij->bj"})
    assert not policy("Einsum", (a3, a3), {"equation": "bij,bjk->bik"})
    assert not policy("Einsum", (a2,), {"equation": "ij->ji"})
    assert not policy("Tanh", (a2,), {})
    assert P.dots_saveable("Conv2D", (a2, a2), {}) and not P.dots_saveable("Add", (a2, a2), {})


@pytest.mark.parametrize("name", ["None", "dots_saveable", "save_only_these_names", "user callable"])
def test_remat_policies_second_order_and_persistent_tapes(name):
    x, w = tl.tensor(_X), tl.tensor(_W)
    block = tl.remat(_block, policy=_POLICIES[name])
    h = tl.hessian(block, argnums=1)(x, w).numpy()
    np.testing.assert_array_equal(h, tl.hessian(_block, argnums=1)(x, w).numpy())
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(w)
        y = block(x, w)
    first, second = tape.gradient(y, w), tape.gradient(y, w)  # grad_fn runs twice: the kept results serve again
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    np.testing.assert_array_equal(first.numpy(), tl.grad(_block, argnums=1)(x, w).numpy())


@pytest.mark.parametrize("policy", [P.dots_saveable, lambda op_type, inputs, attrs: True])
def test_remat_policies_repeat_the_random_draws(policy):
    # Random ops are never kept, so the recomputation's draws repeat the forward pass's in their order.
    x, w = tl.tensor(_X), tl.tensor(_W)
    block = tl.remat(lambda x, w: tl.nn.dropout(tl.tanh(x @ w), rate=0.5) * 3.0, policy=policy)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = block(x, w)
    g = tape.gradient(y, x, output_gradients=tl.ones_like(y))
    mask = (y.numpy() != 0).astype(np.float64)
    expected = (mask * 3.0 / (1.0 - 0.5) * (1.0 - np.tanh(_X @ _W) ** 2)) @ _W.T  # dropout scales by 1 / (1 - rate)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)


def test_remat_policy_with_variables_nested_remat_vmap_and_function_inside():
    x = tl.tensor(_X)
    v = tl.Variable(_W)
    inner = tl.remat(lambda a: tl.sin(a @ v), policy=P.dots_saveable)

    def body(a):
        return tl.sum(tl.vmap(lambda r: tl.tanh(r @ v))(inner(a)) * tl.function(tl.cos)(a))

    def plain(a):
        return tl.sum(tl.vmap(lambda r: tl.tanh(r @ v))(tl.sin(a @ v)) * tl.cos(a))

    grads = []
    for f in (tl.remat(body, policy=P.save_anything_except_these_names()), plain):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        grads.append([g.numpy() for g in tape.gradient(y, [x, v])])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_remat_policy_whose_function_runs_other_ops_the_second_time_says_so():
    calls = []

    def moody(x):
        calls.append(1)
        return tl.sum(tl.exp(x) if len(calls) == 1 else tl.sin(x) + 0.0 * tl.exp(x))

    with pytest.raises(RuntimeError, match=r"tl.remat: running .*moody again for its gradient ran another op"):
        tl.grad(tl.remat(moody, policy=lambda op_type, inputs, attrs: op_type == "Exp"))(tl.tensor([1.0, 2.0]))


def test_remat_policy_under_function_gives_the_eager_gradients():
    # Traced, the graph keeps what its memory plan keeps whatever the policy (documented): the same gradients.
    x, w = tl.tensor(_X), tl.tensor(_W)
    for policy in (None, P.dots_saveable, P.save_only_these_names("hidden")):
        got = tl.function(tl.grad(tl.remat(_block, policy=policy), argnums=(0, 1)))(x, w)
        for g, p in zip(got, tl.grad(_block, argnums=(0, 1))(x, w)):
            np.testing.assert_allclose(g.numpy(), p.numpy(), rtol=1e-12)


def test_checkpoint_name_is_an_identity_with_a_gradient_and_checks_its_name():
    tree = {"a": tl.tensor([1.0, -2.0]), "b": [tl.tensor(3.0)]}
    named = tl.checkpoint_name(tree, "n")
    assert named["a"].numpy().tolist() == [1.0, -2.0] and float(named["b"][0]) == 3.0
    g = tl.grad(lambda x: tl.sum(tl.checkpoint_name(x * x, "sq")))(tl.tensor([1.0, 2.0]))
    assert g.numpy().tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="tl.checkpoint_name: name must be a str, got int 3"):
        tl.checkpoint_name(tl.tensor(1.0), 3)
    with pytest.raises(TypeError, match="save_only_these_names: names must be str"):
        P.save_only_these_names(1)


@pytest.mark.parametrize("name", ["dots_saveable", "save_only_these_names", "dots_with_no_batch_dims_saveable"])
def test_remat_policies_match_jax_checkpoint(name):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    from jax.ad_checkpoint import checkpoint_name

    def block(x, w):
        h = checkpoint_name(jnp.tanh(x @ w), "hidden")
        return jnp.sum(jnp.exp(jnp.einsum("bi,ij->bj", jnp.sin(h), w)) * jnp.cos(h))

    jax_policy = getattr(jax.checkpoint_policies, name)
    jax_policy = jax_policy("hidden") if name == "save_only_these_names" else jax_policy
    expected = jax.grad(jax.checkpoint(block, policy=jax_policy), argnums=(0, 1))(_X, _W)
    got = tl.grad(tl.remat(_block, policy=_POLICIES[name]), argnums=(0, 1))(tl.tensor(_X), tl.tensor(_W))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=1e-12)


# ------------------------------------------------------------------ custom_jvp(symbolic_zeros=True)
def _sin_times(symbolic_where, seen):
    @tl.custom_jvp
    def f(x, y):
        return tl.sin(x) * y

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((isinstance(tx, tl.SymbolicZero), isinstance(ty, tl.SymbolicZero)))
        parts = []
        if not isinstance(tx, tl.SymbolicZero):
            parts.append(tl.cos(x) * y * tx)
        if not isinstance(ty, tl.SymbolicZero):
            parts.append(tl.sin(x) * ty)
        out = f(x, y)
        if not parts:
            return out, tl.SymbolicZero.from_primal_value(out)
        return out, parts[0] if len(parts) == 1 else parts[0] + parts[1]

    if symbolic_where == "constructor":
        f = tl.custom_jvp(f.fun, symbolic_zeros=True)
        f.defjvp(rule)
    else:
        f.defjvp(rule, symbolic_zeros=True)
    return f


@pytest.mark.parametrize("where", ["constructor", "defjvp"])
def test_custom_jvp_symbolic_zeros_marks_the_inputs_held_fixed(where):
    # custom_jvp had no symbolic_zeros: a rule could not tell an input held fixed from one with a zero tangent.
    seen = []
    f = _sin_times(where, seen)
    x, y = tl.tensor(1.0, dtype="float64"), tl.tensor(2.0, dtype="float64")
    np.testing.assert_allclose(float(tl.grad(f)(x, y)), np.cos(1.0) * 2.0, rtol=1e-14)
    assert seen[-1] == (False, True)
    np.testing.assert_allclose(float(tl.grad(f, argnums=1)(x, y)), np.sin(1.0), rtol=1e-14)
    assert seen[-1] == (True, False)
    gx, gy = tl.grad(f, argnums=(0, 1))(x, y)
    assert seen[-1] == (False, False) and np.allclose([float(gx), float(gy)], [np.cos(1.0) * 2.0, np.sin(1.0)])
    _, t = tl.jvp(lambda a: f(a, y), (x,), (tl.tensor(1.0, dtype="float64"),))
    assert seen[-1] == (False, True) and np.isclose(float(t), np.cos(1.0) * 2.0)
    # The same tensor in both places: both perturbed.
    np.testing.assert_allclose(float(tl.grad(lambda a: f(a, a))(x)), np.cos(1.0) + np.sin(1.0), rtol=1e-14)
    assert seen[-1] == (False, False)
    # Second order, float64 central differences of the NumPy formula as the reference.
    np.testing.assert_allclose(float(tl.hessian(f)(x, y)), -np.sin(1.0) * 2.0, rtol=1e-14)
    # A trainable Variable is watched when the op reads it: never a symbolic zero under a tape.
    v = tl.Variable(2.0, dtype="float64")
    with tl.GradientTape() as tape:
        z = f(x, v)
    np.testing.assert_allclose(float(tape.gradient(z, v)), np.sin(1.0), rtol=1e-14)
    # Traced or mapped every float tensor gets a tangent (which ones are differentiated is not known there).
    np.testing.assert_allclose(float(tl.function(tl.grad(f))(x, y)), np.cos(1.0) * 2.0, rtol=1e-14)
    xs, ys = np.array([1.0, 2.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(tl.vmap(tl.grad(f))(tl.tensor(xs), tl.tensor(ys)).numpy(), np.cos(xs) * ys, 1e-14)


def test_custom_jvp_rule_may_return_a_symbolic_zero_output_tangent():
    @tl.custom_jvp
    def pair(x, y):
        return tl.exp(x), y * 2.0

    @pair.defjvp
    def pair_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = pair(x, y)
        return out, (
            tl.exp(x) * tx,
            tl.SymbolicZero.from_primal_value(out[1]) if isinstance(ty, tl.SymbolicZero) else ty * 2.0,
        )

    pair.symbolic_zeros = True
    x, y = tl.tensor([0.5, 1.0], dtype="float64"), tl.tensor([3.0], dtype="float64")
    g = tl.grad(lambda x: tl.sum(pair(x, y)[0]) + tl.sum(pair(x, y)[1]))(x)
    np.testing.assert_allclose(g.numpy(), np.exp([0.5, 1.0]), rtol=1e-14)
    assert repr(tl.SymbolicZero.from_primal_value(y)) == "SymbolicZero(shape=(1,), dtype=float64)"
    with pytest.raises(TypeError, match="custom_jvp: symbolic_zeros must be a bool, got 'yes'"):
        tl.custom_jvp(lambda x: x, symbolic_zeros="yes")


def test_custom_jvp_symbolic_zeros_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from jax.custom_derivatives import SymbolicZero

    seen = []

    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero)))
        tx = jnp.zeros_like(x) if isinstance(tx, SymbolicZero) else tx
        ty = jnp.zeros_like(y) if isinstance(ty, SymbolicZero) else ty
        return f(x, y), jnp.cos(x) * y * tx + jnp.sin(x) * ty

    f.defjvp(rule, symbolic_zeros=True)
    ours = []
    g = _sin_times("defjvp", ours)
    for argnums in (0, 1):
        expected = jax.grad(f, argnums=argnums)(1.0, 2.0)
        got = tl.grad(g, argnums=argnums)(tl.tensor(1.0, dtype="float64"), tl.tensor(2.0, dtype="float64"))
        assert ours[-1] == seen[-1]
        np.testing.assert_allclose(float(got), float(expected), rtol=1e-6)


# ------------------------------------------------------------------ the vmap collectives (not op types: dedicated tests)
# psum/pmean/pmax/pmin/all_gather/axis_index are functions of a named tl.vmap axis, built from Sum/Mean/Max/Min and
# moveaxis ops, so the op catalogue (one OpInfo per op type, run unmapped) cannot hold them; these tests are theirs.
_REDUCE = {
    "psum": lambda p: p.sum(0),
    "pmean": lambda p: p.mean(0),
    "pmax": lambda p: p.max(0),
    "pmin": lambda p: p.min(0),
    "all_gather": lambda p: p,
}
_BATCH = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [0.5, 0.0, 2.0], [-1.0, 7.0, 1.5]])


@pytest.mark.parametrize("name", sorted(_REDUCE))
def test_collectives_take_nested_structures(name):
    # jax.lax's collectives take pytrees; tl.psum({"a": x}, "i") was "tensor: expected a tensor, array or number,
    # got dict" (DESIGN §6: nested structures are accepted wherever arguments are).
    coll = getattr(tl, name)
    x = tl.tensor(_BATCH)
    got = tl.vmap(lambda r: coll({"a": r, "b": [r * 2.0, (r,)]}, "i"), axis_name="i")(x)
    for leaf, scale in ((got["a"], 1.0), (got["b"][0], 2.0), (got["b"][1][0], 1.0)):
        np.testing.assert_allclose(leaf.numpy(), np.stack([_REDUCE[name](_BATCH * scale)] * 4), rtol=1e-12)
    g = tl.grad(lambda x: tl.sum(tl.vmap(lambda r: coll({"u": r * r}, "i")["u"], axis_name="i")(x)))(x)
    fd = central_differences(lambda b: np.sum(np.stack([_REDUCE[name](b * b)] * 4)), _BATCH)
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6, atol=1e-8)
    with pytest.raises(NameError, match=f"tl.{name}: unbound axis name 'k'"):
        tl.vmap(lambda r: coll({"a": r}, "k"), axis_name="i")(x)


@pytest.mark.parametrize("name", sorted(_REDUCE))
@pytest.mark.parametrize("dtype", ["int64", "bool", "float16", "float32"])
def test_collectives_dtypes_match_numpy(name, dtype):
    batch = (_BATCH > 0) if dtype == "bool" else _BATCH.astype(dtype) if dtype != "int64" else _BATCH.astype(np.int64)
    got = tl.vmap(lambda r: getattr(tl, name)(r, "i"), axis_name="i")(tl.tensor(batch))
    want = np.stack([_REDUCE[name](batch)] * 4)
    if name == "pmean" and dtype in ("int64", "bool"):
        assert got.dtype == np.float64  # DESIGN §6: a float-valued function of integers is float64
    elif name == "psum" and dtype == "bool":
        assert got.dtype == np.int64  # NumPy's sum of bools
    else:
        assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64), rtol=1e-3)


def test_pmax_and_pmin_split_the_gradient_between_tied_elements():
    # DESIGN §6: ties split, as reduce max/min do (JAX's pmax splits too).
    x = tl.tensor([1.0, 3.0, 3.0, -2.0, -2.0])
    g_max = tl.grad(lambda x: tl.sum(tl.vmap(lambda e: tl.pmax(e, "i"), axis_name="i")(x)))(x)
    g_min = tl.grad(lambda x: tl.sum(tl.vmap(lambda e: tl.pmin(e, "i"), axis_name="i")(x)))(x)
    np.testing.assert_allclose(g_max.numpy(), [0.0, 2.5, 2.5, 0.0, 0.0])
    np.testing.assert_allclose(g_min.numpy(), [0.0, 0.0, 0.0, 2.5, 2.5])


def test_collectives_to_second_order_and_in_forward_mode():
    x = np.array([1.0, 2.0, -0.5])

    def f(x):
        return tl.sum(tl.vmap(lambda e: tl.psum(e * e, "i") * e, axis_name="i")(x))

    # f = (sum x^2)(sum x): grad_k = 2 x_k S1 + S2, hessian_kl = 2 delta_kl S1 + 2 x_k + 2 x_l.
    s1, s2 = x.sum(), (x * x).sum()
    np.testing.assert_allclose(tl.hessian(f)(tl.tensor(x)).numpy(), 2 * np.eye(3) * s1 + 2 * x[:, None] + 2 * x[None])
    _, t = tl.jvp(f, (tl.tensor(x),), (tl.tensor(np.ones(3)),))
    np.testing.assert_allclose(float(t), np.sum(2 * x * s1 + s2), rtol=1e-12)
    jac = tl.jacfwd(lambda x: tl.vmap(lambda e: tl.pmean(e * e, "i"), axis_name="i")(x))(tl.tensor(x))
    np.testing.assert_allclose(jac.numpy(), np.tile(2 * x / 3, (3, 1)), rtol=1e-12)


def test_collectives_with_in_axes_and_out_axes():
    x = tl.tensor(_BATCH)  # mapped over its columns: 3 elements of 4 values
    got = tl.vmap(lambda c: tl.all_gather(c, "i"), in_axes=1, out_axes=2, axis_name="i")(x)
    # Element j gathers every column (a (3, 4) stack); out_axes=2 puts the elements last: got[a, b, j] = X[b, a].
    np.testing.assert_allclose(got.numpy(), np.broadcast_to(_BATCH.T[:, :, None], (3, 4, 3)))
    got = tl.vmap(lambda c, w: tl.psum(c * w, "i"), in_axes=(1, None), out_axes=1, axis_name="i")(x, tl.tensor(2.0))
    np.testing.assert_allclose(got.numpy(), np.tile(2.0 * _BATCH.sum(1, keepdims=True), (1, 3)), rtol=1e-12)


@pytest.mark.parametrize("name", ["pmax", "pmin"])
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_pmax_and_pmin_of_an_empty_batch_are_empty(name, mode):
    # vmap over 0 elements: the result is empty, as jax.vmap gives (shape (0, 2)); it raised "Max: zero-size array
    # to reduction operation maximum which has no identity".
    coll = getattr(tl, name)
    f = tl.vmap(lambda x: coll(x, "i") * x, axis_name="i")
    got = (f if mode == "eager" else tl.function(f))(tl.zeros((0, 2)))
    assert got.shape == (0, 2) and got.dtype == np.float32
    g = tl.grad(lambda x: tl.sum(f(x)))(tl.zeros((0, 3), dtype="float64"))
    assert g.shape == (0, 3)
