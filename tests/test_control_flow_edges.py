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


def test_scan_draws_fresh_numbers_per_step_and_eager_equals_traced_for_a_seed():
    draws = lambda: tl.scan(lambda c, _: (c, tl.random.normal((2,))), tl.tensor(0.0), None, length=3)[1]  # noqa: E731
    tl.random.seed(7)
    eager = draws().numpy()
    tl.random.seed(7)
    traced = tl.function(draws)().numpy()
    np.testing.assert_array_equal(eager, traced)
    assert not np.array_equal(eager[0], eager[1])


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
