"""tl.vmap attacked as an adversary: batching rules with the batch axis anywhere, Python numbers inside the
mapped function, errors, and vmap composed with the other transforms.

References: a Python loop over the elements with ``np.stack`` (NumPy's own values for the same call), NumPy
formulas, float64 central finite differences, and ``jax.vmap`` where JAX is installed.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl

RNG = np.random.default_rng(20261202)


def test_python_zeros_of_either_sign_stay_distinct_inside_vmap():
    # vmap made one constant per Python number, keyed by value: -0.0 == 0.0, so the second zero reused the
    # first (x * -0.0 gave +0.0, copysign(x, -0.0) gave +x).  NumPy gives the signs below.
    xs = np.array([[1.0, 2.0], [3.0, 4.0]])

    def f(x):
        return x * 0.0, x * -0.0, tl.copysign(x, 0.0), tl.copysign(x, -0.0), x * complex(0.0, -0.0)

    for mapped in (tl.vmap(f), tl.function(tl.vmap(f))):
        got = [out.numpy() for out in mapped(xs)]
        expected = [xs * 0.0, xs * -0.0, np.copysign(xs, 0.0), np.copysign(xs, -0.0), xs * complex(0.0, -0.0)]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
            np.testing.assert_array_equal(np.signbit(g.real), np.signbit(e.real))
            np.testing.assert_array_equal(np.signbit(np.imag(g)), np.signbit(np.imag(e)))


def _doubling(n, x, bound=None):
    """x doubled n times (n shared by the batch, x per element): a Python loop's values."""
    return tl.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 2.0), (tl.tensor(0), x), bound)[1]


@pytest.mark.parametrize("bound", [None, 5], ids=["unbounded", "bounded"])
def test_traced_vmap_of_a_while_loop_whose_shared_predicate_has_no_value_yet(bound):
    # Under tl.function(tl.vmap(f)) a predicate made only of unmapped arguments is the same for every element
    # but has no value while tracing; the loop asked for it (TypeError: a symbolic tensor has no value).
    xs = RNG.normal(size=(3, 2))
    mapped = tl.function(tl.vmap(lambda n, x: _doubling(n, x, bound), in_axes=(None, 0)))
    for n in (0, 2, 3):
        np.testing.assert_allclose(mapped(np.array(n), xs).numpy(), xs * 2.0**n)
    if bound is not None:  # differentiable in reverse mode: d/dx sum(x * 2**n) = 2**n
        grad = tl.function(tl.grad(lambda x, n: tl.sum(tl.vmap(lambda x: _doubling(n, x, bound))(x))))
        np.testing.assert_allclose(grad(xs, np.array(3)).numpy(), np.full(xs.shape, 8.0))


def test_searchsorted_in_a_mapped_sequence_for_an_empty_batch():
    # The rule flattened each element's values with a reshape to (batch, -1), which an empty batch cannot take.
    seqs, values = np.sort(RNG.normal(size=(0, 5)), axis=-1), RNG.normal(size=(0, 2, 3))
    for side in ("left", "right"):
        got = tl.vmap(lambda s, v: tl.searchsorted(s, v, side=side))(seqs, values)
        assert got.shape == (0, 2, 3) and got.dtype == np.int64
    seqs, values = np.sort(RNG.normal(size=(3, 5)), axis=-1), RNG.normal(size=(3, 2))
    expected = np.stack([np.searchsorted(s, v) for s, v in zip(seqs, values)])
    np.testing.assert_array_equal(tl.vmap(tl.searchsorted)(seqs, values).numpy(), expected)


def _triangular_solve_reference(a, b):
    """Solves of the lower triangles of a stack of matrices, by NumPy (a general solve of the triangle)."""
    return np.linalg.solve(np.tril(a), b)


@pytest.mark.parametrize(
    "solve, reference",
    [
        (tl.linalg.solve, np.linalg.solve),
        (lambda a, b: tl.linalg.solve_triangular(a, b, lower=True), _triangular_solve_reference),
    ],
    ids=["solve", "solve_triangular"],
)
@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None), (2, 1)])
@pytest.mark.parametrize("low_rank", ["b", "a"])
def test_solves_of_operands_of_different_ranks_keep_the_batch_apart(solve, reference, in_axes, low_rank):
    # Element a (2, 3, 3) with element b (3, 2): the batch of b lined up with a's own leading axis of size 2,
    # so for a batch of 2 (where the shapes still fit) each element was solved against the other's matrices.
    batch = 2
    a_shape, b_shape = ((2, 3, 3), (3, 2)) if low_rank == "b" else ((3, 3), (2, 3, 2))
    a_elems = RNG.normal(size=(batch, *a_shape)) + 3.0 * np.eye(3)
    b_elems = RNG.normal(size=(batch, *b_shape))
    if in_axes[0] is None:
        a_elems[:] = a_elems[0]
    if in_axes[1] is None:
        b_elems[:] = b_elems[0]
    expected = np.stack([reference(a, b) for a, b in zip(a_elems, b_elems)])
    args = [
        elems[0] if axis is None else np.moveaxis(elems, 0, axis % elems.ndim)
        for elems, axis in zip((a_elems, b_elems), in_axes)
    ]
    np.testing.assert_allclose(tl.vmap(solve, in_axes=in_axes)(*args).numpy(), expected, rtol=1e-10, atol=1e-10)


def test_errors_name_the_argument_leaf_and_the_sizes_as_jax_does():
    # The inputs were numbered as flattened leaves: for vmap(f)({"w": ..., "b": ...}, y) the third was
    # "input 2" (f has two arguments), and a keyword argument without an axis was told to take in_axes None,
    # which keyword arguments cannot have.
    xs, ys = np.zeros((3, 2)), np.zeros((4, 2))
    with pytest.raises(
        ValueError,
        match=r"differ in size: .*args\[0\]\['b'\] has 3 on axis 0 \(shape \(3, 2\)\), args\[1\] has 4 on axis 0",
    ):
        tl.vmap(lambda p, y: p["w"] + p["b"] + y)({"w": xs, "b": xs}, ys)
    with pytest.raises(ValueError, match=r"args\[1\] has 4 on axis 1 \(shape \(2, 4\)\)"):
        tl.vmap(lambda p, y: p["w"] + y, in_axes=(0, 1))({"w": xs}, ys.T)
    with pytest.raises(ValueError, match=r"kwargs\['y'\] has 4 on axis 0"):
        tl.vmap(lambda x, y: x + y)(xs, y=ys)
    with pytest.raises(ValueError, match=r"kwargs\['scale'\] of <lambda> is float 2.0, .* pass it positionally"):
        tl.vmap(lambda x, scale: x * scale)(xs, scale=2.0)
    with pytest.raises(ValueError, match=r"args\[0\]\[1\] of <lambda> is int 2, which has no axis 0 .* in_axes None"):
        tl.vmap(lambda t: t[0] * t[1])((xs, 2))
    with pytest.raises(ValueError, match=r"in_axes -3 is out of range for args\[0\]\['w'\] of <lambda> \(shape"):
        tl.vmap(lambda p: p["w"], in_axes=-3)({"w": xs})


def test_intermediates_of_the_mapped_function_are_freed_as_it_runs():
    # The mode kept every logical tensor with its physical batch until vmap returned: 40 steps over a
    # (4, 32768) float64 batch (1 MiB) held 80 MiB at the end, where the same function on the batch holds two.
    import tracemalloc

    def f(x):
        for _ in range(40):
            x = tl.sin(x) + 1.0
        return tl.sum(x)

    xs = RNG.normal(size=(4, 32768))
    expected = np.sin(xs)
    for _ in range(39):
        expected = np.sin(expected + 1.0)
    tl.vmap(f)(xs[:, :8])  # warm up (caches, first-call allocations)
    tracemalloc.start()
    try:
        got = tl.vmap(f)(xs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(got.numpy(), (expected + 1.0).sum(axis=1), rtol=1e-12)
    assert peak < 10 * xs.nbytes, f"peak {peak / 2**20:.1f} MiB for a batch of {xs.nbytes / 2**20:.1f} MiB"


@pytest.mark.parametrize("element_shape", [(3, 3), (2, 1, 3, 3)])
def test_per_example_gradients_of_determinants_of_stacks(element_shape):
    # The gradient of det is the adjugate op, whose inputs are the matrices and their determinants (one axis
    # pair fewer); the batch of the determinants was lined up as if they were matrices (KernelResultError).
    xs = RNG.normal(size=(3, *element_shape)) + 2.0 * np.eye(3)
    weights = RNG.normal(size=element_shape[:-2])
    got = tl.vmap(tl.grad(lambda x: tl.sum(tl.linalg.det(x) * weights)))(xs).numpy()
    det = np.linalg.det(xs)
    expected = (weights * det)[..., None, None] * np.swapaxes(np.linalg.inv(xs), -1, -2)  # d det / dx = det inv(x)^T
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


_STRICT_CASES = {
    # name: (function, arguments, in_axes, NumPy reference of one element)
    "take with mapped indices": (
        lambda a, i: tl.take(a, i, axis=-1),
        (RNG.normal(size=(3, 4, 5)), np.array([[0, 4], [1, 1], [3, 2]])),
        (0, 0),
        lambda a, i: np.take(a, i, axis=-1),
    ),
    "gather_nd": (
        tl.gather_nd,
        (RNG.normal(size=(3, 4, 5)), np.array([[[0, 4]], [[1, 1]], [[3, 2]]])),
        (0, 0),
        lambda a, i: a[tuple(np.moveaxis(i, -1, 0))],
    ),
    "ones_like (shapes only)": (
        lambda a: tl.ones_like(a) * 2.0,
        (RNG.normal(size=(3, 4)),),
        (0,),
        lambda a: np.full(4, 2.0),
    ),
    "an empty batch per element": (
        tl.argmax,  # over every axis: once per element
        (np.zeros((0, 4)),),
        (0,),
        None,
    ),
}


@pytest.mark.parametrize("name", list(_STRICT_CASES))
def test_batching_rules_keep_the_backend_of_their_inputs(name):
    # Rules made their helper tensors (batch positions, stand-ins, zeros) on the default backend, so on any
    # other (array_api_strict here, CuPy on a GPU) vmap raised "inputs are on different backends".
    pytest.importorskip("array_api_strict")
    fn, args, in_axes, reference = _STRICT_CASES[name]
    strict = [tl.tensor(a, backend="array_api_strict") for a in args]
    got = tl.vmap(fn, in_axes=in_axes)(*strict)
    assert got.backend.name == "array_api_strict"
    if reference is None:
        assert got.shape[0] == 0
        return
    expected = np.stack([reference(*element) for element in zip(*args)])
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    if got.dtype.kind == "f":  # per-example gradients on the backend too, against the NumPy backend's
        loss = tl.grad(lambda *a: tl.sum(tl.sin(fn(*a))))
        np.testing.assert_allclose(
            tl.vmap(loss, in_axes=in_axes)(*strict).numpy(), tl.vmap(loss, in_axes=in_axes)(*args).numpy(), rtol=1e-12
        )


_AT_CASES = {
    "set at a mapped index": (
        lambda a, i: a.at[i].set(-1.0),
        (RNG.normal(size=(3, 4)), np.array([0, 3, 1])),
        (0, 0),
        lambda a, i: np.where(np.arange(4) == i, -1.0, a),
    ),
    "add to a slice": (
        lambda a: a.at[1:].add(2.0),
        (RNG.normal(size=(3, 4)),),
        (0,),
        lambda a: np.concatenate([a[:1], a[1:] + 2.0]),
    ),
}


@pytest.mark.parametrize("mapped", [False, True], ids=["one element", "vmap"])
@pytest.mark.parametrize("name", list(_AT_CASES))
def test_index_updates_keep_the_tensor_s_backend(name, mapped):
    # Tensor.at[...].set/add made a Python number's values on the default backend (the scatter then raised
    # "inputs are on different backends" on array_api_strict, as it would on CuPy), with or without vmap.
    pytest.importorskip("array_api_strict")
    fn, args, in_axes, reference = _AT_CASES[name]
    if not mapped:
        args = [a[0] for a in args]
    strict = [tl.tensor(a, backend="array_api_strict") for a in args]
    got = (tl.vmap(fn, in_axes=in_axes) if mapped else fn)(*strict)
    assert got.backend.name == "array_api_strict"
    expected = np.stack([reference(*element) for element in zip(*args)]) if mapped else reference(*args)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    grad = tl.grad(lambda *a: tl.sum(tl.sin(fn(*a))))
    grad = tl.vmap(grad, in_axes=in_axes) if mapped else grad
    np.testing.assert_allclose(grad(*strict).numpy(), grad(*args).numpy(), rtol=1e-12)


_UNKNOWN_LENGTH_CASES = {
    # name: (function of one element of shape (2, n), NumPy reference)
    "matmul": (lambda a: a @ tl.transpose(a), lambda a: a @ a.T),
    "vector @ matrix": (lambda a: a[0] @ tl.transpose(a), lambda a: a[0] @ a.T),
    "broadcast against a reduction": (lambda a: a + tl.sum(a, axis=0), lambda a: a + a.sum(axis=0)),
    "solve": (
        lambda a: tl.linalg.solve(tl.eye(2, dtype="float64") * 3.0 + a @ tl.transpose(a), a),
        lambda a: np.linalg.solve(np.eye(2) * 3.0 + a @ a.T, a),
    ),
}


@pytest.mark.parametrize("name", list(_UNKNOWN_LENGTH_CASES))
def test_traced_vmap_over_elements_with_a_size_unknown_until_run_time(name):
    # tl.function(tl.vmap(f)) traced for TensorSpec((3, 2, None)): the rules lined operands up with a reshape
    # naming every size, None among them (TypeError: '<' not supported between 'NoneType' and 'int').
    fn, reference = _UNKNOWN_LENGTH_CASES[name]
    graph = tl.function(tl.vmap(fn)).get_graph(tl.TensorSpec((3, 2, None), tl.float64))
    for n in (3, 5):  # one graph for every length
        xs = RNG.normal(size=(3, 2, n))
        np.testing.assert_allclose(graph(xs).numpy(), np.stack([reference(x) for x in xs]), rtol=1e-10, atol=1e-12)


def test_traced_vmap_with_unknown_sizes_in_unmapped_arguments_and_shape_only_ops():
    # An unmapped argument with a size unknown until run time was repeated along the batch by broadcast_to,
    # which must name every size, and ones_like (in a gradient rule) of a mapped one made zeros of its shape
    # (TypeError: ... must be known integers) for the two cases below.
    def both(a, u):
        return tl.concat([a, u], axis=0), tl.grad(lambda a: tl.sum(tl.nn.softmax(a * u) ** 2))(a)

    def reference(a, u):
        s = np.exp(a * u - (a * u).max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        g = 2 * s * s - 2 * s * (s * s).sum(axis=-1, keepdims=True)  # d sum(softmax^2) / d logits
        return np.concatenate([a, u]), g * u

    graph = tl.function(tl.vmap(both, in_axes=(0, None))).get_graph(
        tl.TensorSpec((3, 2, None), tl.float64), tl.TensorSpec((2, None), tl.float64)
    )
    for n in (3, 5):
        xs, u = RNG.normal(size=(3, 2, n)), RNG.normal(size=(2, n))
        got = graph(xs, u)
        expected = [np.stack(parts) for parts in zip(*(reference(x, u) for x in xs))]
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-10, atol=1e-12)


def test_traced_squeeze_of_unknown_sizes_under_vmap_never_keeps_axes_eager_squeezes():
    # squeeze(x) of an element of shape (None, None, None) traced: where a size turns out to be 1 the traced
    # function without vmap refuses at run time (the shape rule kept the axis, the kernel squeezed it), but
    # under vmap the rule squeezed only the axes known to be 1, silently returning (2, 3, 1, 1) where eager
    # vmap gives (2, 3).
    from tensorlib.dispatch import KernelResultError

    spec = tl.TensorSpec((2, None, None, None), tl.float64)
    mapped = tl.function(tl.vmap(lambda x: tl.squeeze(x) * 2.0)).get_graph(spec)
    with pytest.raises(KernelResultError, match="Squeeze"):
        tl.function(tl.squeeze).get_graph(tl.TensorSpec((None, None, None), tl.float64))(np.ones((3, 1, 1)))
    with pytest.raises(KernelResultError, match="Squeeze"):
        mapped(np.ones((2, 3, 1, 1)))
    xs = RNG.normal(size=(2, 3, 4, 5))  # no size 1: nothing to squeeze, as eagerly
    np.testing.assert_array_equal(mapped(xs).numpy(), xs * 2.0)
    known = tl.function(tl.vmap(tl.squeeze)).get_graph(tl.TensorSpec((2, None, 1, 4), tl.float64))
    np.testing.assert_array_equal(known(xs[:, :, :1, :4]).numpy(), xs[:, :, 0, :4])


# Two-operand ops whose rules line up operands of different ranks: (tensorlib function, NumPy reference, how to
# make the second operand's element shape from the first's (a suffix: it broadcasts), whether the first is a
# stack of square matrices).
_TWO_OPERAND_OPS = {
    "add": (tl.add, np.add, False),
    "where": (lambda a, b: tl.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b), False),
    "matmul": (tl.matmul, np.matmul, True),
    "solve": (tl.linalg.solve, np.linalg.solve, True),
    "einsum": (
        lambda a, b: tl.einsum("...ij,...jk->...ik", a, b),
        lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
        True,
    ),
}


@settings(deadline=None)
@given(data=st.data())
def test_two_operand_rules_with_operands_of_different_ranks_match_a_loop(data):
    name = data.draw(st.sampled_from(sorted(_TWO_OPERAND_OPS)), label="op")
    fn, reference, square = _TWO_OPERAND_OPS[name]
    size = data.draw(st.integers(0, 3), label="batch size")
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2), label="leading axes of a")
    n = data.draw(st.integers(1, 3), label="matrix size")
    a_shape = (*lead, n, n) if square else (*lead, n)
    b_shape = a_shape[data.draw(st.integers(0, len(lead)), label="axes b drops") :]
    shapes = [a_shape, b_shape]
    if data.draw(st.booleans(), label="swap"):
        shapes.reverse()
    elements = [RNG.normal(size=(max(size, 1), *shape)) + (3.0 * np.eye(n) if square else 0.0) for shape in shapes]
    in_axes = [data.draw(st.one_of(st.none(), st.integers(-len(s) - 1, len(s))), label="in_axes") for s in shapes]
    if in_axes == [None, None]:
        in_axes[0] = 0
    args = [e[0] if axis is None else np.moveaxis(e[:size], 0, axis) for e, axis in zip(elements, in_axes)]
    got = tl.vmap(fn, in_axes=tuple(in_axes))(*args).numpy()
    per_element = [reference(*(e[0 if axis is None else i] for e, axis in zip(elements, in_axes))) for i in range(size)]
    one_shape = reference(*(e[0] for e in elements)).shape
    expected = np.stack(per_element) if size else np.zeros((0, *one_shape))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_output_errors_name_the_output_leaf():
    # A leaf that cannot be stacked (a string) failed inside tl.tensor ("tensor: expected a tensor, array or
    # number, got str"), and outputs were numbered as flattened leaves.
    xs = np.zeros((3, 2))
    with pytest.raises(TypeError, match=r"tl.vmap: out\[1\]\['name'\] of <lambda> is str 'x', .* out_axes None"):
        tl.vmap(lambda x: (x, {"name": "x"}))(xs)
    assert tl.vmap(lambda x: (x, {"name": "x"}), out_axes=(0, None))(xs)[1] == {"name": "x"}
    with pytest.raises(ValueError, match=r"out\['b'\] depends on a mapped input, but its out_axes is None"):
        tl.vmap(lambda x: {"a": 1.0, "b": x}, out_axes=None)(xs)
    with pytest.raises(ValueError, match=r"out_axes 2 is out of range for out\[0\] \(shape \(2,\) per element\)"):
        tl.vmap(lambda x: (x, x), out_axes=(2, 0))(xs)


def test_traced_vmap_of_a_per_element_while_loop_promotes_python_number_carries():
    # tl.function(tl.vmap(f)) with an unbounded loop whose predicate differs per element, started from the
    # Python number 0.0 and adding float64 values: the batched loop kept the carry float32 and refused the
    # body's float64 (TypeError: body_fn must return the ... dtypes of loop_vars), where eager vmap and the
    # loop traced without vmap carry float64, as JAX's weak types do.
    ns, xs = np.array([0, 2, 5]), np.array([1.5, 2.0, 0.25])

    def f(n, x):
        return tl.while_loop(lambda s: s[1] < n, lambda s: (s[0] + x, s[1] + 1), (0.0, 0))

    for mapped in (tl.vmap(f), tl.function(tl.vmap(f))):
        total, count = mapped(ns, xs)
        assert total.dtype == np.float64 and count.dtype == np.int64
        np.testing.assert_allclose(total.numpy(), ns * xs)
        np.testing.assert_array_equal(count.numpy(), ns)


def _safe_cholesky(a):
    return tl.cond(tl.linalg.det(a) > 0, lambda: tl.linalg.cholesky(a), lambda: tl.zeros_like(a))


def test_eager_vmap_of_cond_runs_only_the_branch_every_element_takes():
    # Eagerly the predicate's values are known: where every element takes one branch, vmap ran the other one
    # too (JAX's rule for predicates that differ), and it raised on elements that never take it (Cholesky of a
    # matrix with a negative determinant, an index out of bounds) where a loop over the elements gives values.
    indefinite = np.array([[[1.0, 2.0], [2.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])
    np.testing.assert_array_equal(tl.vmap(_safe_cholesky)(indefinite).numpy(), np.zeros((2, 2, 2)))
    definite = np.array([[[2.0, 0.0], [0.0, 2.0]], [[4.0, 1.0], [1.0, 3.0]]])
    np.testing.assert_allclose(tl.vmap(_safe_cholesky)(definite).numpy(), np.linalg.cholesky(definite))
    rows, positions = np.arange(9.0).reshape(3, 3), np.array([5, 3, 7])
    read = tl.vmap(lambda x, i: tl.cond(i < 3, lambda: x[i], lambda: tl.tensor(-1.0, dtype="float64")))
    np.testing.assert_array_equal(read(rows, positions).numpy(), [-1.0, -1.0, -1.0])
    # where the elements differ both branches run (JAX's rule), and a failure says so
    mixed = np.concatenate([indefinite[:1], definite[:1]])
    with pytest.raises(np.linalg.LinAlgError) as failure:
        tl.vmap(_safe_cholesky)(mixed)
    assert "both branches ran on every element" in "".join(getattr(failure.value, "__notes__", []))


def test_nested_vmaps_with_axes_anywhere_match_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    a, b = RNG.normal(size=(2, 3, 2, 4, 4)) + 4.0 * np.eye(4), RNG.normal(size=(4, 2))

    def program(lib, vmap, solve):
        def f(m, v):  # m: (2, 4, 4) matrices, v: (4,) a right-hand side shared by them
            x = solve(m, lib.broadcast_to(v[:, None], (4, 1)))
            return lib.sum(x * v[:, None], axis=(-2, -1)) + lib.sum(m, axis=None)

        inner = vmap(f, in_axes=(0, 1), out_axes=-1)  # over axis 0 of a's (2, 2, 4, 4) and axis 1 of b (4, 2)
        return vmap(inner, in_axes=(1, None), out_axes=1)(a, b)

    ours = program(tl, tl.vmap, tl.linalg.solve).numpy()
    theirs = np.asarray(program(jnp, jax.vmap, jnp.linalg.solve))
    assert ours.shape == theirs.shape == (2, 3, 2)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
