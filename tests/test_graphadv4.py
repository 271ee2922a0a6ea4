"""Graph mode (tl.function) and control flow as an adversary, fourth round.

What it attacks, and against which references:
- a loop carry or a branch result of one leaf inside a dict or tuple that changes dtype or shape: the error names
  the leaf's path, eagerly and traced, as it does where there are two leaves or more (the error's text is the
  reference: the path the caller wrote);
- saving a graph whose branch or loop body holds what a file cannot (a custom gradient's Python function): the error
  names the node holding the subgraph, and nothing is written;
- ``tl.fori_loop`` with tensor bounds (a ``While``): its index is weakly typed as with Python bounds, so ``c + i``
  keeps an int32, float16 or float32 carry's dtype (a NumPy loop in the carry's dtype, the same call with Python
  bounds, and JAX's fori_loop with traced bounds are the references);
- a traced ``tl.scan`` of zero steps over xs of unknown sizes: no step of the body runs (eagerly none does), so a
  body that checks its numbers (log of the zeros a step was run on) or fails on them (a singular matrix) gives the
  empty result eager gives, of the same shapes;
- the cache: a graph traced where new tensors are made on one backend is not run inside a ``with tl.backend(...)``
  block of another (eager, which makes them on the block's backend, is the reference; tf.function's cache key holds
  the device scope);
"""

import numpy as np
import pytest

import tensorlib as tl


def _eager(f, *args):
    return f(*[tl.tensor(a) for a in args])


def _traced(f, *args):
    return tl.function(f)(*args)


@pytest.mark.parametrize("run", [_eager, _traced], ids=["eager", "traced"])
@pytest.mark.parametrize(
    "f, args, path",
    [
        (
            lambda: tl.while_loop(lambda c: c["k"] < 10, lambda c: {"k": c["k"] * 1.5}, {"k": tl.tensor(1)}),
            (),
            r"\['k'\]: int64\[\] vs float64\[\]",
        ),
        (
            lambda xs: tl.scan(lambda c, x: ({"acc": c["acc"] * 1.5}, x), {"acc": tl.tensor(1)}, xs),
            (np.ones(3),),
            r"\['acc'\]: int64\[\] vs float64\[\]",
        ),
        (
            lambda x: tl.while_loop(lambda c: tl.sum(c[0]) < 9.0, lambda c: (tl.concatenate([c[0], c[0]]),), (x,)),
            (np.ones(1),),
            r"\[0\]: float64\[1\] vs float64\[2\]",
        ),
    ],
    ids=["while-dict", "scan-dict", "while-tuple"],
)
def test_a_lone_carry_leaf_that_changes_is_named_by_its_path(run, f, args, path):
    # Before: "loop_vars are [int64[]], body_fn returns [float64[]]", naming no leaf where there was one.
    with pytest.raises(TypeError, match="first difference at " + path):
        run(f, *args)


def test_a_lone_branch_leaf_of_another_dtype_is_named_by_its_path():
    f = tl.function(lambda p: tl.cond(p, lambda: {"out": tl.tensor(1)}, lambda: {"out": tl.tensor(1.0)}))
    with pytest.raises(TypeError, match=r"first difference at \['out'\]: int64\[\] vs float32\[\]"):
        f(np.array(True))


def test_a_bare_leaf_keeps_the_short_message():
    with pytest.raises(TypeError, match=r"loop_vars are \[int64\[\]\], body_fn returns \[float64\[\]\]$"):
        tl.while_loop(lambda c: c < 10, lambda c: c * 1.5, tl.tensor(1))


@tl.custom_gradient
def _custom_double(x):
    return x * 2.0, lambda g: g * 10.0


def test_an_unsavable_node_inside_a_body_is_named_with_the_node_holding_it(tmp_path):
    # Before: "node 1 (CustomGradient) attribute 'grad_fn' is a Python callable", numbered in a body the message
    # did not name (node 1 of the graph itself is another node).
    body = lambda u: tl.scan(lambda c, q: (_custom_double(c) + q, c), tl.tensor(0.0, dtype="float64"), u)[0]  # noqa: E731
    f = tl.function(lambda x, p: tl.cond(p, body, lambda u: tl.sum(u), x))
    with pytest.raises(
        ValueError,
        match=r"node 1 \(CustomGradient\) attribute 'grad_fn' \(in the body of node 0, in the "
        r"true_graph of node 0\) is a Python callable",
    ):
        f.save(tmp_path / "g.json", np.ones(3), np.array(True))
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_graph_is_keyed_by_the_backend_new_tensors_are_made_on():
    # Before: a tl.function traced outside `with tl.backend(...)` ran its NumPy graph inside the block (and the
    # other way round), returning NumPy tensors where eager makes the block's (tf.function keys on the device scope).
    pytest.importorskip("array_api_strict")
    made = tl.function(lambda: tl.ones(3) * 2.0)
    assert made().backend.name == "numpy"
    with tl.backend("array_api_strict"):
        eager = tl.ones(3) * 2.0
        traced = made()
        again = made()
    assert eager.backend.name == traced.backend.name == again.backend.name == "array_api_strict"
    np.testing.assert_array_equal(np.asarray(traced.numpy()), [2.0, 2.0, 2.0])
    assert made().backend.name == "numpy"
    assert made.trace_count == 2  # one graph per backend, each reused
    assert made.retrace_reasons[1] == "tl.backend: 'numpy' -> 'array_api_strict'"


def test_an_input_signature_graph_is_keyed_by_the_backend_too():
    pytest.importorskip("array_api_strict")
    double = tl.function(lambda x: x * 2.0, input_signature=[tl.TensorSpec((None,), "float64")])
    assert double(np.ones(2)).backend.name == "numpy"
    with tl.backend("array_api_strict"):
        assert double(np.ones(2)).backend.name == (tl.tensor(np.ones(2)) * 2.0).backend.name == "array_api_strict"
    assert double(np.ones(3)).backend.name == "numpy"


@pytest.mark.parametrize("run", [_eager, _traced], ids=["eager", "traced"])
@pytest.mark.parametrize("dtype", ["int32", "float16", "float32", "float64"])
def test_fori_loop_with_tensor_bounds_keeps_the_carry_dtype(run, dtype):
    # Before: with tensor bounds the index was a strong int64, `c + i` made an int32/float32 carry int64/float64,
    # and the loop raised that the carry changed dtype (with Python bounds it kept it, and so does JAX).
    init = np.array([1, 2], dtype=dtype)
    got = run(lambda n, c: tl.fori_loop(1, n, lambda i, c: c * 2 + i, c), np.array(5), init)
    want = init.copy()
    for i in range(1, 5):
        want = (want * 2 + np.array(i, dtype)).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), want)
    python_bounds = run(lambda c: tl.fori_loop(1, 5, lambda i, c: c * 2 + i, c), init)
    assert python_bounds.dtype == got.dtype
    np.testing.assert_array_equal(python_bounds.numpy(), got.numpy())


def test_fori_loop_with_tensor_bounds_matches_jax():
    jax = pytest.importorskip("jax")
    init = np.array([1.5, -2.0], np.float32)
    got = tl.function(lambda n, c: tl.fori_loop(0, n, lambda i, c: c * 0.5 + i, c))(np.array(4), init)
    want = jax.jit(lambda n, c: jax.lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, c))(4, init)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-6)


_UNKNOWN_ROWS = [tl.TensorSpec((None, None), "float64")]


@pytest.mark.parametrize(
    "body, rows",
    [
        (lambda c, x: (c, tl.debugging.check_numerics(tl.log(x), "log")), np.array([[2.0, 1.0, 1.0, 3.0]])),
        (lambda c, x: (c + tl.sum(tl.linalg.inv(x)), tl.linalg.inv(x)), np.array([[[2.0, 1.0], [1.0, 3.0]]])),
    ],
    ids=["check-numerics", "singular"],
)
def test_a_scan_of_zero_steps_over_unknown_sizes_runs_no_step(body, rows):
    # Before: the kernel ran one step on zeros to learn the empty stacks' sizes: log(0) raised NumericsError, the
    # inverse of the zero matrix LinAlgError, where eager (which runs no step) returns empty stacks.
    init = tl.tensor(0.0, dtype="float64")
    spec = [tl.TensorSpec((None,) * rows.ndim, "float64")]
    traced = tl.function(lambda xs: tl.scan(body, init, xs), input_signature=spec)
    empty = np.ones((0,) + rows.shape[1:])
    with np.errstate(divide="ignore"):
        eager = tl.scan(body, init, tl.tensor(empty))
        got = traced(empty)
        full = traced(rows)  # a step still runs when there is one
    for e, g in zip(eager, got):
        assert (g.shape, g.dtype) == (e.shape, e.dtype)
        np.testing.assert_array_equal(g.numpy(), e.numpy())
    assert full[1].shape[0] == 1 and np.all(np.isfinite(full[1].numpy()))


def test_a_scan_of_zero_steps_over_unknown_sizes_has_the_gradient_eager_has():
    def loss(xs):
        carry, ys = tl.scan(lambda c, x: (c + tl.sum(tl.sqrt(x)), tl.sqrt(x) * c), tl.tensor(0.0, dtype="float64"), xs)
        return carry + tl.sum(ys)

    traced = tl.function(tl.grad(loss), input_signature=_UNKNOWN_ROWS)
    empty = np.ones((0, 3))
    assert traced(empty).shape == tl.grad(loss)(tl.tensor(empty)).shape == (0, 3)
