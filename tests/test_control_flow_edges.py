"""tl.cond, tl.while_loop, tl.scan at their edges: random draws in bodies, loop counts, carries that change."""

import numpy as np
import pytest

import tensorlib as tl


@pytest.mark.parametrize(
    "draws",
    [
        lambda: tl.scan(lambda c, _: (c, tl.random.normal((2,))), tl.tensor(0.0), None, length=3)[1],
        lambda: tl.cond(True, lambda: tl.random.uniform((2,)), lambda: tl.zeros((2,))),
        lambda: tl.while_loop(
            lambda s: s[0] < 2, lambda s: (s[0] + 1, s[1] + tl.random.uniform((2,))), (tl.tensor(0), tl.zeros((2,)))
        )[1],
        lambda: tl.while_loop(
            lambda s: s[0] < 2,
            lambda s: (s[0] + 1, s[1] + tl.random.uniform((2,))),
            (tl.tensor(0), tl.zeros((2,))),
            maximum_iterations=3,
        )[1],
        lambda: tl.scan(lambda c, _: (c, tl.nn.dropout(tl.ones((8,)), 0.5)), tl.tensor(0.0), None, length=2)[1],
    ],
    ids=["scan", "cond", "while", "bounded_while", "dropout_in_scan"],
)
def test_a_body_that_draws_is_never_folded_into_a_constant(draws):
    # The node's inputs are all constants, but its subgraph draws: each run must draw again.
    f = tl.function(draws)
    first, second = f().numpy(), f().numpy()
    assert not np.array_equal(first, second)
    assert {"Scan", "Cond", "While"} & {n.op_type for n in f.get_graph().optimize().nodes}


def test_scan_draws_fresh_numbers_per_step_and_a_seed_repeats_them():
    # Traced, a body's draws come from a key per step (drawn from the global generator), so that a gradient
    # replaying the body draws the same numbers: they are not the eager stream's, but tl.random.seed repeats them.
    draws = lambda: tl.scan(lambda c, _: (c, tl.random.normal((2,))), tl.tensor(0.0), None, length=3)[1]  # noqa: E731
    traced = tl.function(draws)
    for f in (draws, traced):
        tl.random.seed(7)
        first = f().numpy()
        tl.random.seed(7)
        np.testing.assert_array_equal(f().numpy(), first)
        assert not np.array_equal(first[0], first[1])
        assert not np.array_equal(f().numpy(), first)


@pytest.mark.parametrize(
    "length, error, shown",
    [
        (-1, ValueError, "-1"),
        (2.0, TypeError, "2.0"),
        (True, TypeError, "True"),
        (tl.tensor(2), TypeError, "tl.Tensor"),
    ],
)
@pytest.mark.parametrize("traced", [False, True])
def test_scan_length_must_be_a_non_negative_int(length, error, shown, traced):
    run = lambda: tl.scan(lambda c, x: (c + 1.0, c), tl.tensor(0.0), None, length=length)  # noqa: E731
    with pytest.raises(error, match=rf"^tl.scan: length must be a non-negative int, got {shown}"):
        tl.function(run)() if traced else run()


def test_scan_length_takes_numpy_integers():
    carry, ys = tl.scan(lambda c, x: (c + 1.0, c), tl.tensor(0.0), None, length=np.int64(3))
    assert float(carry) == 3.0 and ys.numpy().tolist() == [0.0, 1.0, 2.0]


def test_while_loop_maximum_iterations_takes_numpy_integers_and_rejects_bools():
    loop = lambda v, m: tl.while_loop(lambda s: tl.sum(s) < 10.0, lambda s: s * 2.0, v, maximum_iterations=m)  # noqa
    x = tl.tensor([1.0, 2.0])
    assert loop(x, np.int32(1)).numpy().tolist() == [2.0, 4.0]
    assert tl.function(lambda v: loop(v, np.int64(1)))(x).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match=r"^tl.while_loop: maximum_iterations must be a non-negative int, got True"):
        loop(x, True)
    with pytest.raises(TypeError, match=r"maximum_iterations must be a non-negative int, got 1.0"):
        loop(x, 1.0)


_BODY = r"^tl.while_loop: body_fn must return the structure, shapes and dtypes of loop_vars: "


def test_eager_while_loop_checks_its_body_as_the_traced_one_does():
    x = tl.tensor(np.array([1.0, 2.0]))
    double = lambda s: tl.sum(s) < 10.0  # noqa: E731
    with pytest.raises(TypeError, match=_BODY + r"loop_vars are \[float64\[2\]\], body_fn returns \[float32\[2\]\]$"):
        tl.while_loop(double, lambda s: tl.cast(s * 2.0, "float32"), x)
    with pytest.raises(
        TypeError, match=_BODY + r".*\(the nesting differs: loop_vars are \*, body_fn returns \(\*,\)\)"
    ):
        tl.while_loop(double, lambda s: (s * 2.0,), x)
    with pytest.raises(TypeError, match=_BODY + r"loop_vars are \[float64\[2\]\], body_fn returns \[float64\[3\]\]$"):
        tl.while_loop(double, lambda s: tl.concat([s, s[:1]], 0), x)


@pytest.mark.parametrize("traced", [False, True])
def test_a_bounded_while_loop_names_itself_when_its_body_changes_the_dtype(traced):
    # Traced, the bounded loop is a scan of conds: the error must still be the loop's, not tl.cond's.
    loop = lambda v: tl.while_loop(  # noqa: E731
        lambda s: tl.sum(s) < 10.0, lambda s: tl.cast(s * 2.0, "float32"), v, maximum_iterations=3
    )
    with pytest.raises(TypeError, match=_BODY + r"loop_vars are \[float64\[2\]\], body_fn returns \[float32\[2\]\]$"):
        (tl.function(loop) if traced else loop)(tl.tensor(np.array([1.0, 2.0])))


# ---------------------------------------------------------------- custom gradients inside bodies
@tl.custom_gradient
def _exp_with_closure(u):
    y = tl.exp(u)
    return y, lambda dy: dy * y  # closes over y: symbolic while a branch or body traces


_W = tl.Variable(np.array(2.0), name="w")


@tl.custom_gradient
def _times_w(u):
    return u * _W, lambda dy, variables=None: ((dy * _W * 3.0,), [tl.sum(dy * u) * 5.0])


def test_a_traced_custom_gradient_that_reads_a_variable_keeps_its_value():
    # The optimizer drops the CustomGradient node: its outputs come after its inputs AND the variables it read.
    x = np.array([0.5, -1.5])
    np.testing.assert_array_equal(tl.function(_times_w)(x).numpy(), x * 2.0)
    f = tl.function(lambda v, p: tl.cond(p, _times_w, lambda a: a, v))
    np.testing.assert_array_equal(f(x, np.array(True)).numpy(), x * 2.0)


_CLOSURES = {
    "plain": lambda v: tl.sum(_exp_with_closure(v)),
    "cond": lambda v: tl.sum(tl.cond(tl.sum(v) < 0, _exp_with_closure, lambda a: a * a, v)),
    "scan": lambda v: tl.scan(lambda c, e: (c + _exp_with_closure(e), c), tl.tensor(0.0, "float64"), v)[0],
    "nested": lambda v: tl.scan(
        lambda c, e: (c + tl.cond(e < 0, _exp_with_closure, tl.sin, e), c), tl.tensor(0.0, "float64"), v
    )[0],
}


@pytest.mark.parametrize("where", ["grad_inside", "tape_outside"])
@pytest.mark.parametrize("body", list(_CLOSURES))
def test_custom_gradient_closures_work_in_traced_branches_and_bodies(body, where):
    # The branch or body is replayed to differentiate it: grad_fn must read the replay's y, not the trace's.
    fn, x = _CLOSURES[body], np.array([0.5, -1.5])
    expected = tl.grad(fn)(tl.tensor(x)).numpy()  # eager: Python control flow, no replay
    if where == "grad_inside":
        got = tl.function(tl.grad(fn))(x).numpy()
    else:
        traced, v = tl.function(fn), tl.tensor(x)
        with tl.GradientTape() as tape:
            tape.watch(v)
            y = traced(v)
        got = tape.gradient(y, v).numpy()
    reference = {"plain": np.exp(x), "cond": np.exp(x), "scan": np.exp(x), "nested": [np.cos(0.5), np.exp(-1.5)]}
    np.testing.assert_allclose(expected, reference[body], rtol=1e-12)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_custom_gradient_with_variables_in_a_traced_cond_matches_eager():
    def grads(v):
        with tl.GradientTape() as tape:
            tape.watch(v)
            y = tl.sum(tl.cond(tl.sum(v) < 0, _times_w, lambda u: u, v))
        return tape.gradient(y, [v, _W])

    x = np.array([0.5, -1.5])
    dv, dw = tl.function(grads)(x)
    np.testing.assert_allclose(dv.numpy(), [6.0, 6.0])  # dy * w * 3
    assert float(dw) == -5.0  # sum(dy * u) * 5
    eager = grads(tl.tensor(x))
    np.testing.assert_allclose(eager[0].numpy(), dv.numpy())
    assert float(eager[1]) == float(dw)


def test_custom_gradient_closure_differentiates_twice_through_a_traced_cond():
    @tl.custom_gradient
    def cube(u):
        y = u * u * u
        return y, lambda dy: dy * 3.0 * (y / u)  # y / u = u**2, through the closure

    f = lambda v: tl.sum(tl.cond(tl.sum(v) > 0, cube, tl.sin, v))  # noqa: E731
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(tl.function(tl.hessian(f))(x).numpy(), np.diag(6 * x), rtol=1e-12)


# ---------------------------------------------------------------- complex values through the nodes
def _complex_scan(v):
    rotate = tl.tensor(np.complex128(1j))
    c, ys = tl.scan(lambda c, e: (c * tl.exp(e * rotate) + e, tl.real(c) * e), tl.tensor(np.complex128(1.0)), v)
    return tl.real(c) + tl.imag(c) * 2.0 + tl.sum(ys)


def _complex_cond(v):
    z = v * tl.tensor(np.complex128(1.0 + 2.0j))
    return tl.real(tl.sum(tl.cond(tl.sum(v) > 0, lambda u: u * u, lambda u: tl.conj(u) * 3.0, z)))


def _central_differences(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (float(f(tl.tensor(up))) - float(f(tl.tensor(down)))) / (2 * eps)
    return grad


@pytest.mark.parametrize("fn", [_complex_scan, _complex_cond], ids=["scan", "cond"])
@pytest.mark.parametrize("x", [np.array([0.3, -0.8, 1.1]), np.array([-0.3, -0.8, 0.2])])
def test_gradients_flow_through_complex_carries_and_operands(fn, x):
    # Complex values inside the node got zero gradients when traced (only float ones were differentiated).
    reference = _central_differences(fn, x)
    np.testing.assert_allclose(tl.grad(fn)(tl.tensor(x)).numpy(), reference, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tl.function(tl.grad(fn))(x).numpy(), reference, rtol=1e-6, atol=1e-8)
    tl.testing.check_grads(tl.function(fn), (x,), order=2)


# ---------------------------------------------------------------- weakly typed initial values, length 0
@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_python_number_init_takes_the_carry_dtype_as_in_jax(dtype, traced):
    # tl.scan(f, 0.0, xs): the init is weakly typed, so the carry has xs's type, eagerly and traced.
    xs = np.array([1.0, 2.0, 3.5], dtype)
    run = lambda v: tl.scan(lambda c, x: (c + x, c * 2.0), 0.0, v)  # noqa: E731
    carry, ys = tl.function(run)(xs) if traced else run(tl.tensor(xs))
    assert carry.dtype == ys.dtype == np.dtype(dtype)
    assert float(carry) == 6.5 and ys.numpy().tolist() == [0.0, 2.0, 6.0]
    two = tl.tensor(np.array(2.0, dtype))
    for bound in (None, 5):
        loop = lambda: tl.while_loop(lambda s: s < 10.0, lambda s: s * two, 1.0, maximum_iterations=bound)  # noqa
        looped = tl.function(loop)() if traced else loop()
        assert looped.dtype == np.dtype(dtype) and float(looped) == 16.0


def test_a_python_float_argument_as_init_is_weak_in_the_traced_scan_too():
    # The argument is fed as a weak float64 scalar: eager and traced must both carry float32 here.
    f = lambda xs, s: tl.scan(lambda c, x: (c + x, c), s, xs)  # noqa: E731
    xs = np.array([1.0, 2.0], "float32")
    eager = f(tl.tensor(xs), 0.5)
    traced = tl.function(f)(xs, 0.5)
    for e, t in zip(eager, traced):
        assert e.dtype == t.dtype == np.float32
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    loop = tl.function(lambda a, v: tl.while_loop(lambda s: s < 10.0, lambda s: s * v, a))
    assert loop(1.0, np.float32(2.0)).dtype == np.float32


@pytest.mark.parametrize("traced", [False, True])
def test_weak_inits_still_reject_a_narrower_kind_and_numpy_scalars_are_strong(traced):
    call = (lambda f: tl.function(f)()) if traced else (lambda f: f())  # noqa: E731
    with pytest.raises(TypeError, match=r"init is \[float32\[\]\], f returns \[int32\[\]\]$"):
        call(lambda: tl.scan(lambda c, _: (tl.cast(c + 1, "int32"), c), 0.5, None, length=2))
    with pytest.raises(TypeError, match=_BODY + r"loop_vars are \[float32\[\]\], body_fn returns \[int32\[\]\]$"):
        call(lambda: tl.while_loop(lambda s: s < 3, lambda s: tl.cast(s + 1, "int32"), 0.5))
    with pytest.raises(TypeError, match=r"init is \[float64\[\]\], f returns \[float32\[\]\]$"):
        call(lambda: tl.scan(lambda c, _: (tl.cast(c, "float32"), c), np.float64(0.5), None, length=2))


@pytest.mark.parametrize("traced", [False, True])
def test_only_the_first_step_sees_a_weak_init(traced):
    # Step 1 makes a strong float64 from 0.0 + int32 (NumPy 2's rule for a Python float next to integers);
    # step 2 adds int32 to that float64, float64 again: the carry keeps its dtype, eagerly and traced alike (the
    # trace saw a weak carry every step).  With float32 at step 1, step 2 changed it to float64 and raised.
    xs = np.array([1, 2, 3], np.int32)
    runs = {
        6.0: lambda v: tl.scan(lambda c, x: (c + x, c), 0.0, v)[0],
        10.0: lambda v: tl.while_loop(lambda s: s < 10, lambda s: s + v[0], 0.0),
    }
    for expected, run in runs.items():
        out = tl.function(run)(xs) if traced else run(tl.tensor(xs))
        assert out.dtype == np.float64 and float(out) == expected
    # A body that hands a weak value back keeps it weak: with float16 xs, c[0] + x stays float16 at every step.
    run = lambda v: tl.scan(lambda c, x: ((c[0], c[1] + x), c[0] + x), (0.5, 0.0), v)  # noqa: E731
    (kept, total), ys = tl.function(run)(xs.astype(np.float16)) if traced else run(tl.tensor(xs.astype(np.float16)))
    assert float(kept) == 0.5 and float(total) == 6.0 and ys.dtype == total.dtype == np.float16


@pytest.mark.parametrize("traced", [False, True])
def test_arrays_given_to_control_flow_are_tensorlib_values(traced):
    # Eagerly the functions got the caller's NumPy arrays: int8 arithmetic wrapped around (100 * 2 == -56) where
    # the traced forms compute in int32, and a function returning its operand returned the caller's array (or
    # Variable) itself, which the caller's next write (or assign) changed.
    small = np.array([100], np.int8)
    runs = [
        lambda: tl.cond(True, lambda a: a * 2, lambda a: a, small),
        lambda: tl.while_loop(lambda s: s[0] < 150, lambda s: s * 2, small),
        lambda: tl.scan(lambda c, _: (c * 2, c), small, None, length=1)[0],
    ]
    for run in runs:
        out = tl.function(run)() if traced else run()
        assert isinstance(out, tl.Tensor) and out.dtype == np.int32 and out.numpy().tolist() == [200]
    writes = {np.array: lambda a: a.__setitem__(0, 99.0), tl.Variable: lambda a: a.assign([99.0, 2.0])}
    for run in [
        lambda a: tl.cond(True, lambda v: v, lambda v: v, a),
        lambda a: tl.while_loop(lambda s: False, lambda s: s, a),
        lambda a: tl.scan(lambda c, _: (c, None), a, None, length=2)[0],
    ]:
        for kind, write in writes.items():
            caller = kind(np.array([1.0, 2.0]))
            out = tl.function(run)(caller) if traced else run(caller)
            write(caller)
            assert type(out) is tl.Tensor and out.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("traced", [False, True])
def test_a_cond_of_python_numbers_is_weakly_typed(traced):
    # Eagerly the taken branch's Python number promotes weakly; traced, the Cond node's result was a strong
    # float32 (int64), so float16 * it became float32 (float64).  int32 * 0.5 is float64, as in NumPy 2.
    scale = lambda v, a, b: v * tl.cond(tl.sum(v) > 0, lambda: a, lambda: b)  # noqa: E731
    for x, a, b, dtype in [
        (np.float16, 0.5, 2.0, "float16"),
        (np.float16, 3, 2, "float16"),
        (np.int32, 0.5, 2.0, "float64"),
    ]:
        x = np.array([1, 2], x)
        out = tl.function(scale, static_argnums=(1, 2))(x, a, b) if traced else scale(tl.tensor(x), a, b)
        assert out.dtype == np.dtype(dtype) and out.numpy().tolist() == [a, 2 * a]


def test_a_carry_whose_unknown_size_changes_is_refused_as_eagerly():
    # Traced with None sizes, the body's result fits its spec whatever its size: the loop went on with a carry
    # that grew (a while_loop of 3 values returned 24) where the eager loop raises.
    grow = lambda s: tl.concat([s, s], 0)  # noqa: E731
    loops = [
        ("init is", lambda a: tl.scan(lambda c, _: (grow(c), tl.sum(c)), a, None, length=2)[0]),
        ("loop_vars are", lambda a: tl.while_loop(lambda s: tl.sum(s) < 10.0, grow, a)),
        ("loop_vars are", lambda a: tl.while_loop(lambda s: tl.sum(s) < 10.0, grow, a, maximum_iterations=5)),
    ]
    for was, loop in loops:
        message = rf"{was} \[float64\[3\]\], \w+ returns \[float64\[6\]\]"
        with pytest.raises(TypeError, match=message):
            loop(tl.tensor(np.ones(3)))
        with pytest.raises(TypeError, match=message):
            tl.function(loop, input_signature=[tl.TensorSpec((None,), "float64")])(np.ones(3))


def test_an_eager_scan_of_length_zero_gives_what_the_traced_one_gives():
    def f(c, xs):
        return tl.scan(lambda c, x: (c * x[0], {"y": c[:1] * 2.0, "n": tl.cast(x, "int32")}), c, xs)

    init, xs = np.array([1.5, -2.0]), np.ones((0, 3))
    (c, ys), (tc, tys) = f(tl.tensor(init), tl.tensor(xs)), tl.function(f)(init, xs)
    np.testing.assert_array_equal(c.numpy(), init)
    np.testing.assert_array_equal(tc.numpy(), init)
    for got in (ys, tys):
        assert (got["y"].shape, got["y"].dtype, got["n"].shape, got["n"].dtype) == (
            (0, 1),
            np.float64,
            (0, 3),
            np.int32,
        )
    grad = tl.grad(lambda v: tl.sum(f(v, tl.tensor(xs))[0]))(tl.tensor(init))
    np.testing.assert_array_equal(grad.numpy(), [1.0, 1.0])
    none = tl.scan(lambda c, x: (c + 1.0, None), tl.tensor(2.0), None, length=0)
    assert float(none[0]) == 2.0 and none[1] is None


# ---------------------------------------------------------------- clear errors
_YS = r"^tl.scan: f must return ys of the same structure, shapes and dtypes at every step: "


@pytest.mark.parametrize(
    "step, message",
    [
        (
            lambda x: tl.ones((int(x.numpy()),)),
            r"the first step returns \[float32\[1\]\], step 1 returns \[float32\[2\]\]$",
        ),
        (
            lambda x: x if float(x) < 2 else tl.cast(x, "int32"),
            r"the first step returns \[float64\[\]\], step 1 returns \[int32\[\]\]$",
        ),
        (
            lambda x: (x, x) if float(x) < 2 else [x, x],
            r".*\(the nesting differs: the first step returns \(\*, \*\), step 1 returns \[\*, \*\]\)$",
        ),
        (lambda x: None if float(x) < 2 else x, r"the first step returns \[\], step 1 returns \[float64\[\]\]"),
        (lambda x: x if float(x) < 2 else None, r"the first step returns \[float64\[\]\], step 1 returns \[\]"),
    ],
    ids=["shape", "dtype", "nesting", "none_then_tensor", "tensor_then_none"],
)
def test_an_eager_scan_rejects_ys_that_change_between_steps(step, message):
    # They were stacked anyway (promoted dtypes, a list read as a tuple), dropped (None first) or crashed.
    with pytest.raises(TypeError, match=_YS + message):
        tl.scan(lambda c, x: (c, step(x)), tl.tensor(0.0), tl.tensor(np.array([1.0, 2.0, 3.0])))


@pytest.mark.parametrize("traced", [False, True])
def test_non_callables_and_non_numeric_predicates_are_named(traced):
    run = (lambda f: tl.function(f)()) if traced else (lambda f: f())  # noqa: E731
    xs = tl.tensor([1.0, 2.0])
    cases = [
        (lambda: tl.cond(True, 1.0, lambda: 2.0), r"^tl.cond: true_fn must be callable, got float 1.0$"),
        (lambda: tl.scan(None, tl.tensor(0.0), xs), r"^tl.scan: f must be callable, got NoneType None$"),
        (
            lambda: tl.while_loop(lambda s: True, "body", xs),
            r"^tl.while_loop: body_fn must be callable, got str 'body'$",
        ),
        (
            lambda: tl.cond("yes", lambda: 1.0, lambda: 2.0),
            r"^tl.cond: the predicate must be a scalar bool or number, got str 'yes'$",
        ),
        (
            lambda: tl.while_loop(lambda s: None, lambda s: s, xs),
            r"^tl.while_loop cond_fn: the predicate must be a scalar bool or number, got NoneType None$",
        ),
    ]
    for call, message in cases:
        with pytest.raises(TypeError, match=message):
            run(call)


@pytest.mark.parametrize("reverse", [False, True])
def test_eager_ys_made_from_a_weak_init_stack_like_the_traced_ones(reverse):
    # The first step sees the Python number itself: its y is a Python float, cast to the later steps' dtype.
    run = lambda v: tl.scan(lambda c, x: (c + x, (c * 2.0, c - x)), 0.0, v, reverse=reverse)  # noqa: E731
    xs = np.array([1.0, 2.0, 3.5])
    eager, traced = run(tl.tensor(xs)), tl.function(run)(xs)
    for e, t in zip(tl.tree.leaves(eager), tl.tree.leaves(traced)):
        assert e.dtype == t.dtype == np.float64
        np.testing.assert_array_equal(e.numpy(), t.numpy())


# ---------------------------------------------------------------- a bounded while_loop: a bound, not a trip count
def _growth(v):
    return tl.while_loop(
        lambda s: tl.sum(s[1]) < 6.0, lambda s: (s[0] + 1, s[1] * s[1] + 0.5), (0, v), maximum_iterations=4
    )[1]


def _growth_loss(v):
    return tl.sum(_growth(v) ** 2)


def test_a_large_bound_on_a_short_traced_loop_costs_only_the_steps_taken():
    # As a scan of 2000 conds it ran 2000 steps and kept 2000 carries (160 MB here) for a loop of 3 steps.
    f = tl.function(
        lambda v: tl.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0), (0, v), maximum_iterations=2000)
    )
    x = np.ones(10_000)
    f(x)
    (count, y), peak = _call_and_peak_bytes(f, x)
    assert int(count) == 3 and y.numpy()[0] == 8.0
    assert peak < 2_000_000
    node = [n for n in f.get_graph(np.ones(10_000)).nodes if n.op_type == "While"][0]
    assert node.attrs["maximum_iterations"] == 2000


def _differentiated_outside(f, x):
    v = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(v)
        y = f(v)
    return tape.gradient(y, v).numpy()


@pytest.mark.parametrize(
    "how",
    ["tape_outside", "grad_inside", "cond_grad_inside", "cond_tape_outside", "scan_grad_inside", "loaded"],
)
def test_a_bounded_while_node_differentiates_like_the_eager_loop(how, tmp_path):
    x = np.array([1.1, 0.7])
    in_cond = lambda v: tl.cond(tl.sum(v) > 0, _growth_loss, tl.sum, v)  # noqa: E731
    in_scan = lambda v: tl.scan(  # noqa: E731
        lambda c, e: (c + _growth_loss(v * e), c), tl.tensor(0.0, "float64"), tl.tensor([1.0, 0.9], "float64")
    )[0]
    eager = {"cond": in_cond, "scan": in_scan}.get(how.split("_")[0], _growth_loss)
    expected = tl.grad(eager)(tl.tensor(x)).numpy()
    if how == "tape_outside":
        got = _differentiated_outside(tl.function(_growth_loss), x)
    elif how == "cond_tape_outside":
        got = _differentiated_outside(tl.function(in_cond), x)
    elif how == "loaded":
        tl.function(_growth_loss).get_graph(x).save(tmp_path / "g.json")
        got = _differentiated_outside(tl.graph.load(tmp_path / "g.json"), x)
    else:
        got = tl.function(tl.grad(eager))(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    if not how.startswith("scan"):  # the eager gradient itself, against the loop written in NumPy
        np.testing.assert_allclose(expected, _growth_loss_grad(x), rtol=1e-12)


def _growth_loss_grad(x):
    """NumPy: the loop's steps with the chain rule alongside (at most 4, while the sum is below 6)."""
    y, dy = x.copy(), np.ones_like(x)
    for _ in range(4):
        if y.sum() >= 6.0:
            break
        y, dy = y * y + 0.5, 2 * y * dy
    return 2 * y * dy


def test_a_bounded_while_node_differentiates_twice():
    tl.testing.check_grads(tl.function(_growth_loss), (np.array([1.1, 0.7]),), order=2)
    assert "While" in [n.op_type for n in tl.function(_growth_loss).get_graph(np.ones(2)).nodes]
    assert "While" not in [n.op_type for n in tl.function(tl.grad(_growth_loss)).get_graph(np.ones(2)).nodes]


# ---------------------------------------------------------------- a forward-only scan keeps no per-step carries
def _rnn_loss(xs):
    return tl.sum(tl.scan(lambda c, e: (tl.tanh(c * e + 0.1), c * e), tl.zeros((3,), "float64") + 0.5, xs)[1])


def test_a_traced_scan_nobody_differentiates_keeps_no_carry_history():
    # It stacked the carry before every step (length x the carry) for a gradient no one could ask for.
    f = tl.function(lambda xs: tl.scan(lambda c, e: (tl.tanh(c + e), tl.sum(c)), tl.zeros((1000,), "float64"), xs))
    x = np.random.default_rng(0).normal(size=(200, 1000))
    f(x)
    (carry, ys), peak = _call_and_peak_bytes(f, x)
    assert peak < 400_000  # the history alone is 1.6 MB
    assert [n.attrs["history"] for n in f.get_graph(x).nodes if n.op_type == "Scan"] == [False]
    c = np.zeros(1000)
    for row in x:
        c = np.tanh(c + row)
    np.testing.assert_allclose(carry.numpy(), c, rtol=1e-12)
    # traced where a tape records, the forward scan keeps them for the reverse one
    scans = [n for n in tl.function(tl.grad(_rnn_loss)).get_graph(np.ones((4, 3))).nodes if n.op_type == "Scan"]
    assert [n.attrs["history"] for n in scans][0] is True


@pytest.mark.parametrize("how", ["tape_outside", "cond_tape_outside", "cond_grad_inside", "loaded"])
def test_a_scan_without_history_differentiates_by_running_again(how, tmp_path):
    xs = np.random.default_rng(1).normal(size=(4, 3))
    in_cond = lambda v: tl.cond(tl.sum(v) > -100.0, _rnn_loss, tl.sum, v)  # noqa: E731
    fn = in_cond if how.startswith("cond") else _rnn_loss
    expected = tl.grad(_rnn_loss)(tl.tensor(xs)).numpy()
    if how == "cond_grad_inside":
        got = tl.function(tl.grad(fn))(xs).numpy()
    elif how == "loaded":
        tl.function(fn).get_graph(xs).save(tmp_path / "g.json")
        got = _differentiated_outside(tl.graph.load(tmp_path / "g.json"), xs)
    else:
        got = _differentiated_outside(tl.function(fn), xs)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    tl.testing.check_grads(tl.function(_rnn_loss), (xs,), order=2)


def test_rebinding_follows_a_replay_of_a_replay():
    # A custom gradient replayed twice: the trace's tensor stands for the first replay's, that one for the second's.
    from tensorlib import dispatch

    graph = tl.function(lambda x: x * 2.0).get_graph(tl.TensorSpec((2,), "float64"))
    traced, replayed = graph.inputs[0], graph.outputs[0]
    with dispatch.rebinding({replayed._id: tl.tensor([1.0, 2.0], "float64")}):
        with dispatch.rebinding({traced._id: replayed}):
            assert (traced * 3.0).numpy().tolist() == [3.0, 6.0]
            assert tl.function(lambda: traced + 1.0)().numpy().tolist() == [2.0, 3.0]
    with pytest.raises(ValueError, match=r"from a tl.function trace was used outside of it"):
        traced * 3.0


@pytest.mark.parametrize(
    "op, attr, value, message",
    [
        ("While", "maximum_iterations", "4", r"maximum_iterations '4' is not a non-negative int"),
        ("While", "maximum_iterations", -1, r"maximum_iterations -1 is not a non-negative int"),
        ("While", "maximum_iterations", True, r"maximum_iterations True is not a non-negative int"),
        ("Scan", "history", 1, r"history 1 is not a bool"),
    ],
)
def test_a_file_with_a_bad_loop_attribute_is_a_format_error(tmp_path, op, attr, value, message):
    import json

    def fn(x):
        c, ys = tl.scan(lambda c, e: (c + e, c * e), tl.zeros((), "float64"), x)
        return tl.while_loop(lambda s: s < 10.0, lambda s: s * 2.0, c, maximum_iterations=4) + tl.sum(ys)

    path = tmp_path / "loops.json"
    tl.function(fn).save(path, np.ones(3))
    assert float(tl.graph.load(path)(np.ones(3))) == 12.0 + 3.0
    doc = json.loads(path.read_text())
    next(n for n in doc["nodes"] if n["op"] == op)["attrs"][attr] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(tl.graph.GraphFormatError, match=rf"\({op}\) does not fit its inputs: {message}"):
        tl.graph.load(path)


def _call_and_peak_bytes(f, *args):
    """``f(*args)`` and the peak of the memory Python allocated during the call (tracemalloc)."""
    import tracemalloc

    tracemalloc.start()
    try:
        result = f(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
