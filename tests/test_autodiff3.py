"""Third adversarial pass over the autodiff core: transforms, tapes and custom gradients.

References are independent: closed-form derivatives, float64 central differences, and JAX / PyTorch
where installed (``pytest.importorskip``).
"""

import numpy as np
import pytest

import tensorlib as tl


def _values(tree):
    return tl.tree.map(lambda t: np.asarray(t).tolist(), tree)


# ------------------------------------------------ dicts given for a structure are matched by key


def test_output_gradients_dict_is_matched_by_key_not_insertion_order():
    x = tl.tensor(np.array([1.0, 2.0]))
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = {"a": x * 2.0, "b": x * 3.0}
    weights = {"b": np.array([1.0, 0.0]), "a": np.array([0.0, 1.0])}
    # d/dx (2x . [0, 1] + 3x . [1, 0]) = [3, 2]; zipped in insertion order it was [2, 3].
    assert tape.gradient(y, x, output_gradients=weights).numpy().tolist() == [3.0, 2.0]
    with pytest.raises(ValueError, match=r"GradientTape.gradient: .*output_gradients \{'a': \*, 'c': \*\}"):
        tape.gradient(y, x, output_gradients={"a": 1.0, "c": 1.0})


def test_custom_gradient_dict_gradient_is_matched_by_key():
    @tl.custom_gradient
    def f(p):
        return p["a"] * 2.0 + p["b"] * 3.0, lambda dy: {"b": dy * 3.0, "a": dy * 2.0}

    g = tl.grad(lambda p: tl.sum(f(p)))({"a": tl.tensor([1.0, 5.0]), "b": tl.tensor([1.0, 2.0])})
    assert _values(g) == {"a": [2.0, 2.0], "b": [3.0, 3.0]}  # was a: [3, 3], b: [2, 2]

    @tl.custom_gradient
    def h(p):
        return p["a"] * 2.0, lambda dy: {"a": dy, "c": dy}

    with pytest.raises(ValueError, match=r"grad_fn returned a gradient with 2 leaves .* \(\{'a': \*, 'c': \*\} for"):
        tl.grad(lambda p: tl.sum(h(p)))({"a": tl.tensor([1.0]), "b": tl.tensor([1.0])})


def test_jvp_tangent_dicts_are_matched_by_key():
    primal = {"a": tl.tensor([3.0]), "b": tl.tensor([2.0])}
    _, t = tl.jvp(lambda p: p["a"] * p["b"], (primal,), ({"b": tl.tensor([1.0]), "a": tl.tensor([0.0])},))
    assert t.numpy().tolist() == [3.0]
    with pytest.raises(ValueError, match="tl.jvp: tangents and primals: structures differ"):
        tl.jvp(lambda p: p["a"], (primal,), ({"a": tl.tensor([1.0]), "c": tl.tensor([0.0])},))


# ------------------------------------------------ errors name the grad_fn and the inputs


def test_custom_gradient_count_errors_name_grad_fn_and_input_shapes():
    @tl.custom_gradient
    def scaled(a, b):
        return a * b, lambda dy: dy

    x = tl.tensor(np.ones(2))
    with pytest.raises(
        ValueError,
        match=r"^custom_gradient: grad_fn returned 1 gradients for 2 tensor inputs \(shape \(2,\) float64, shape "
        r"\(2,\) float64\); grad_fn defined at .*test_autodiff3.py:\d+$",
    ):
        tl.grad(lambda a: tl.sum(scaled(a, x)))(x)


def test_custom_gradient_variable_gradients_are_a_list_not_a_split_tensor():
    v, w = tl.Variable(np.ones(2)), tl.Variable(2 * np.ones(2))

    @tl.custom_gradient
    def f(a):
        def grad_fn(dy, variables=None):
            return dy * v * w, tl.stack([dy * a * w, dy * a * v])  # one tensor, not [gv, gw]

        return a * v * w, grad_fn

    x = tl.tensor(np.ones(2))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.sum(f(x))
    # list() of a (2, 2) tensor split it into the two rows and took them as the two variables' gradients.
    with pytest.raises(ValueError, match=r"grad_fn returned 1 variable gradients for 2 variables \(shape"):
        tape.gradient(y, [x, v, w])


def test_tape_jacobian_checks_unconnected_gradients():
    x = tl.tensor(np.ones(2))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match=r"^GradientTape.jacobian: unconnected_gradients must be 'none' or 'zero'"):
        tape.jacobian(y, x, unconnected_gradients="zeros")


# ------------------------------------------------ a rule shared by several inputs runs once per pass, not once ever


@tl.custom_gradient
def _cube(a):
    return a**3, lambda dy: dy * 3.0 * a**2


@pytest.mark.parametrize("earlier_pass", [False, True])
def test_second_order_through_custom_gradient_after_an_earlier_pass_with_the_same_output_gradients(earlier_pass):
    x, weight = tl.tensor(2.0), tl.tensor(1.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = _cube(x)
    if earlier_pass:
        assert float(tape.gradient(y, x, output_gradients=weight)) == 12.0
    with tl.GradientTape() as outer:
        outer.watch(x)
        g = tape.gradient(y, x, output_gradients=weight)
    # d/dx 3x^2 = 6x = 12; the grad_fn's result of the earlier, unrecorded pass was reused: None.
    assert float(g) == 12.0 and float(outer.gradient(g, x)) == 12.0


# ------------------------------------------------ tl.remat: recomputation gives the same gradients


def _block(x, w):
    return tl.tanh(w @ x) * tl.sin(x)


def test_remat_gives_the_gradients_of_the_function_to_second_order():
    rng = np.random.default_rng(0)
    x, w = tl.tensor(rng.standard_normal(4)), tl.tensor(rng.standard_normal((4, 4)))

    def loss(block):
        return lambda x, w: tl.sum(block(x, w) ** 2)

    plain, again = tl.grad(loss(_block), (0, 1))(x, w), tl.grad(loss(tl.remat(_block)), (0, 1))(x, w)
    for a, b in zip(plain, again):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-13, atol=1e-15)
    h_plain = tl.hessian(lambda x: loss(_block)(x, w))(x)
    np.testing.assert_allclose(tl.hessian(lambda x: loss(tl.remat(_block))(x, w))(x).numpy(), h_plain.numpy(), 1e-12)
    tl.testing.check_grads(lambda x: loss(tl.remat(_block))(x, w), (x.numpy(),), order=2)


def test_remat_arguments_given_twice_nested_by_keyword_and_variables():
    x = tl.tensor(np.array([1.0, 2.0]))
    g = tl.grad(lambda x: tl.sum(tl.remat(lambda a, b: a * b)(x, x)))(x)
    assert g.numpy().tolist() == [2.0, 4.0]
    p = {"a": tl.tensor(2.0), "b": tl.tensor(3.0)}
    g = tl.grad(lambda p: tl.remat(lambda d, scale: d["a"] * d["b"] * scale)(p, scale=p["a"]))(p)
    assert (float(g["a"]), float(g["b"])) == (12.0, 4.0)  # d/da a^2 b, d/db a^2 b
    v = tl.Variable(np.array([1.0, 2.0]))
    with tl.GradientTape() as tape:
        y = tl.sum(tl.remat(lambda a: a * v * v)(x))
    assert tape.gradient(y, v).numpy().tolist() == [2.0, 8.0]


def test_remat_repeats_the_random_draws_of_the_forward_pass_or_says_it_cannot():
    x = tl.ones((64,), dtype="float64")
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tl.remat(lambda a: tl.nn.dropout(a, rate=0.5) * tl.random.normal((64,), dtype="float64"))(x)
    # dy/dx = y / x = y: the recomputation drew the same mask and the same normals.
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), y.numpy())
    generator = tl.random.Generator(0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.remat(lambda a: a * generator.normal((64,), dtype="float64"))(x)
    with pytest.raises(
        RuntimeError, match=r"^tl.remat: running .*<lambda> again for its gradient gave another output 0"
    ):
        tape.gradient(y, x)


def test_jacobian_and_hessian_pass_keyword_arguments_as_grad_does():
    x = tl.tensor(np.array([1.0, 2.0]))
    assert tl.jacobian(lambda x, s=1.0: x * s)(x, s=3.0).numpy().tolist() == [[3.0, 0.0], [0.0, 3.0]]
    assert tl.hessian(lambda x, s=1.0: tl.sum(x**3 * s))(x, s=2.0).numpy().tolist() == [[12.0, 0.0], [0.0, 24.0]]


def test_override_with_one_function_for_an_op_of_several_inputs_is_an_error_not_a_dropped_gradient():
    x, y = tl.tensor(np.array([1.0, 2.0])), tl.tensor(np.array([3.0, 4.0]))
    # It gave y no rule: grad with respect to y was silently [0, 0] (right: x = [1, 2]).
    with pytest.raises(TypeError, match=r"^override\('Mul'\): one function for an op with 2 inputs \(x, y\)"):
        with tl.grad.override({"Mul": lambda node, g: g * node.inputs[1]}):
            pass
    with pytest.raises(TypeError, match=r"^override\('Exp'\): the gradient for input 'x' must be a function"):
        with tl.grad.override({"Exp": 3}):  # was "'int' object is not iterable"
            pass
    with tl.grad.override({"Mul": {"x": lambda node, g: g * 0.0 + 5.0}}):
        gx, gy = tl.grad(lambda x, y: tl.sum(x * y), argnums=(0, 1))(x, y)
    assert gx.numpy().tolist() == [5.0, 5.0] and gy.numpy().tolist() == [1.0, 2.0]


def test_remat_of_integer_arguments_and_non_tensor_outputs():
    x = tl.tensor(np.array([1.0, 2.0, 3.0]))
    indices = tl.tensor(np.array([0, 0, 2]))
    g = tl.grad(lambda a: tl.sum(tl.remat(lambda a, i: a[i] * 2.0)(a, indices)))(x)
    assert g.numpy().tolist() == [4.0, 0.0, 2.0]  # was a TypeError (cannot differentiate ... int64)

    def pair(a):
        return a * 2.0, 3.0

    with pytest.raises(TypeError, match=r"custom_gradient: pair must return tensors, got float"):
        tl.grad(lambda a: tl.sum(tl.remat(pair)(a)[0]))(x)


def test_hessian_of_a_non_scalar_output_is_jaxs_jacfwd_of_jacrev():
    x = np.array([1.0, 2.0, 0.5])
    h = tl.hessian(lambda a: a[0] * a**2)(tl.tensor(x)).numpy()  # was a TypeError: f must return a scalar
    expected = np.zeros((3, 3, 3))  # d2 (a0 a_i^2) / da_j da_k
    for i in range(3):
        expected[i, 0, i] += 2 * x[i]
        expected[i, i, 0] += 2 * x[i]
        expected[i, i, i] += 2 * x[0]
    np.testing.assert_allclose(h, expected, rtol=1e-14)
    with pytest.raises(TypeError, match=r"^tl.hessian: f must return real float tensors, got dtype int64"):
        tl.hessian(lambda a: tl.argmax(a))(tl.tensor(x))


def test_hessian_of_structured_non_scalar_outputs_and_two_arguments():
    x, y = np.array([1.0, 2.0, 0.5]), np.array([0.3, -1.0, 2.0])
    got = tl.hessian(lambda a, b: {"p": a * tl.sin(b), "q": tl.sum(a**2 * b)}, argnums=(0, 1))(
        tl.tensor(x), tl.tensor(y)
    )
    # p_i = a_i sin(b_i): only the mixed and the b-b blocks, on the diagonal i = j = k.
    cube = lambda v: np.einsum("i,ij,ik->ijk", v, np.eye(3), np.eye(3))  # noqa: E731
    want_p = ((np.zeros((3, 3, 3)), cube(np.cos(y))), (cube(np.cos(y)), cube(-x * np.sin(y))))
    want_q = ((np.diag(2 * y), np.diag(2 * x)), (np.diag(2 * x), np.zeros((3, 3))))  # q = sum(a^2 b)
    for key, want in (("p", want_p), ("q", want_q)):
        for i in range(2):
            for j in range(2):
                np.testing.assert_allclose(got[key][i][j].numpy(), want[i][j], atol=1e-15)


def test_vjp_and_jvp_take_has_aux_as_in_jax():
    x = tl.tensor(np.array([1.0, 2.0]))
    out, vjp_fn, aux = tl.vjp(lambda a: (a**2, {"n": a * 0.0 + 7.0}), x, has_aux=True)
    assert vjp_fn(tl.tensor(np.array([1.0, 1.0])))[0].numpy().tolist() == [2.0, 4.0]
    assert out.numpy().tolist() == [1.0, 4.0] and aux["n"].numpy().tolist() == [7.0, 7.0]
    out, tangent, aux = tl.jvp(lambda a: (a**2, "aux"), (x,), (tl.tensor(np.array([1.0, 0.0])),), has_aux=True)
    assert tangent.numpy().tolist() == [2.0, 0.0] and aux == "aux"
    with pytest.raises(TypeError, match=r"^tl.jvp: with has_aux=True, f must return a pair"):
        tl.jvp(lambda a: a, (x,), (x,), has_aux=True)


def test_remat_recomputation_does_not_swap_other_threads_random_draws():
    # Before: the recomputation replaced the process-wide global generator, so a thread drawing meanwhile took the
    # forward pass's numbers from it, and the recomputation drew others: a RuntimeError (another output).
    import threading

    tl.random.seed(0)
    first, second = tl.random.normal((3,), dtype="float64").numpy(), tl.random.normal((3,), dtype="float64").numpy()
    tl.random.seed(0)
    other, runs = {}, []

    def block(x):
        if runs:  # the recomputation: another thread draws from the global generator meanwhile
            thread = threading.Thread(target=lambda: other.setdefault("draw", tl.random.normal((3,), dtype="float64")))
            thread.start()
            thread.join()
        y = x * tl.random.normal((3,), dtype="float64")
        runs.append(y.numpy())
        return y

    x = tl.tensor(np.ones(3))
    g = tl.grad(lambda x: tl.sum(tl.remat(block)(x)))(x)
    np.testing.assert_array_equal(g.numpy(), first)  # the recomputation drew the forward pass's numbers
    np.testing.assert_array_equal(runs[1], runs[0])
    np.testing.assert_array_equal(other["draw"].numpy(), second)  # the other thread: the global stream's next


# ------------------------------------------------------------------ tl.linearize (session 9)
def test_linearize_runs_f_once_and_gives_jvp_s_tangents_for_nested_structures():
    calls = []

    def f(p, x):
        calls.append(1)
        return {"a": tl.sin(p["w"]) * x, "b": tl.sum(x**2) * p["w"][0]}

    rng = np.random.default_rng(4)
    w, x = rng.normal(size=2), rng.normal(size=2)
    out, f_jvp = tl.linearize(f, {"w": tl.tensor(w)}, tl.tensor(x))
    assert len(calls) == 1
    for _ in range(3):
        tw, tx = rng.normal(size=2), rng.normal(size=2)
        got = f_jvp({"w": tl.tensor(tw)}, tl.tensor(tx))
        # d a = cos(w) tw x + sin(w) tx;  d b = 2 x.tx w0 + |x|^2 tw0
        np.testing.assert_allclose(got["a"].numpy(), np.cos(w) * tw * x + np.sin(w) * tx, rtol=1e-12)
        np.testing.assert_allclose(float(got["b"]), 2 * x @ tx * w[0] + x @ x * tw[0], rtol=1e-12)
    assert len(calls) == 1  # f_jvp never runs f again
    np.testing.assert_allclose(out["a"].numpy(), np.sin(w) * x, rtol=1e-12)
    with pytest.raises(ValueError, match=r"tl.linearize: f_jvp takes 2 tangents \(one per primal\), got 1"):
        f_jvp(tl.tensor(x))


def test_linearize_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x, t = np.array([0.3, -1.1, 2.0]), np.array([1.0, 0.5, -2.0])
    _, ours = tl.linearize(lambda v: tl.exp(v) * tl.tanh(v), tl.tensor(x))
    _, theirs = jax.linearize(lambda v: jax.numpy.exp(v) * jax.numpy.tanh(v), x)
    np.testing.assert_allclose(ours(tl.tensor(t)).numpy(), np.asarray(theirs(t)), rtol=1e-12)
