"""Contract: nested structures everywhere, one tree module (issue 7, point 7)."""

import collections

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import tree

Pair = collections.namedtuple("Pair", ["a", "b"])


def f64(v):
    return tl.tensor(v, dtype="float64")


# ---------------------------------------------------------------- the tree module


@pytest.mark.parametrize(
    "structure,n",
    [
        (1.0, 1),
        ([1, 2], 2),
        ((1, (2, 3)), 3),
        ({"b": 1, "a": [2, None]}, 3),
        (Pair(1, [2, 3]), 3),
        (None, 1),
        ([], 0),
        ({}, 0),
        ([[], (None,)], 1),
        (collections.OrderedDict(x=1, y=2), 2),
    ],
)
def test_flatten_then_unflatten_round_trips(structure, n):
    leaves, treedef = tree.flatten(structure)
    assert len(leaves) == n == treedef.num_leaves
    rebuilt = tree.unflatten(treedef, leaves)
    assert rebuilt == (dict(structure) if isinstance(structure, collections.OrderedDict) else structure)
    assert type(rebuilt) is (dict if isinstance(structure, dict) else type(structure))


def test_leaves_keep_order_and_namedtuples_keep_their_type():
    leaves, treedef = tree.flatten({"z": Pair(1, 2), "a": [3, {"k": 4}]})
    assert leaves == [1, 2, 3, 4]
    out = tree.unflatten(treedef, [10, 20, 30, 40])
    assert out == {"z": Pair(10, 20), "a": [30, {"k": 40}]} and isinstance(out["z"], Pair)
    assert list(out) == ["z", "a"]


def test_unflatten_with_the_wrong_number_of_leaves_is_an_error():
    _, treedef = tree.flatten([1, (2, 3)])
    with pytest.raises(
        ValueError, match=r"^tl.tree.unflatten: 2 leaves for a structure with 3 \(\[\*, \(\*, \*\)\]\)$"
    ):
        tree.unflatten(treedef, [1, 2])


def test_map_requires_equal_structures():
    assert tree.map(lambda a, b: a * b, [1, (2,)], [3, (4,)]) == [3, (8,)]
    with pytest.raises(ValueError, match=r"^tl.tree.map: structures differ: expected \[\*, \(\*,\)\], got \[\*, \*\]$"):
        tree.map(lambda a, b: a, [1, (2,)], [3, 4])


def test_treedefs_compare_by_structure():
    assert tree.flatten({"a": 1, "b": [2]})[1] == tree.flatten({"a": 5, "b": [6]})[1]
    assert tree.flatten({"a": 1, "b": [2]})[1] != tree.flatten({"a": 1, "c": [2]})[1]
    assert tree.flatten((1, 2))[1] != tree.flatten([1, 2])[1]
    assert hash(tree.flatten({"a": 1})[1]) == hash(tree.flatten({"a": 2})[1])


# ---------------------------------------------------------------- the transforms take structures


def _loss(p):
    return tl.sum(p["w"] * p["x"][0]) + p["b"] * p["x"][1]


def _params():
    return {"w": f64([1.0, 2.0]), "b": f64(3.0), "x": [f64([4.0, 5.0]), f64(6.0)]}


def test_value_and_grad_of_a_dict_of_parameters():
    value, g = tl.value_and_grad(_loss)(_params())
    assert float(value) == 1 * 4 + 2 * 5 + 3 * 6
    assert set(g) == {"w", "b", "x"} and isinstance(g["x"], list)
    np.testing.assert_array_equal(g["w"].numpy(), [4.0, 5.0])
    assert float(g["b"]) == 6.0
    np.testing.assert_array_equal(g["x"][0].numpy(), [1.0, 2.0])
    assert float(g["x"][1]) == 3.0


def test_grad_of_namedtuples_and_argnums_tuple():
    def f(pair, scale):
        return tl.sum(pair.a * pair.b) * scale

    ga, gs = tl.grad(f, argnums=(0, 1))(Pair(f64([1.0, 2.0]), f64([3.0, 4.0])), f64(2.0))
    assert isinstance(ga, Pair)
    np.testing.assert_array_equal(ga.a.numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(ga.b.numpy(), [2.0, 4.0])
    assert float(gs) == 11.0


def test_none_entries_get_none_back_everywhere():
    params = {"w": f64([1.0]), "frozen": None}
    g = tl.grad(lambda p: tl.sum(p["w"] * 2.0))(params)
    assert g["frozen"] is None and g["w"].numpy().tolist() == [2.0]
    (g,) = tl.vjp(lambda p: p["w"] * 3.0, params)[1](f64([1.0]))
    assert g["frozen"] is None and g["w"].numpy().tolist() == [3.0]
    _, t = tl.jvp(lambda p: p["w"] * 3.0, (params,), ({"w": f64([2.0]), "frozen": None},))
    assert t.numpy().tolist() == [6.0]
    jac = tl.jacobian(lambda p: p["w"] * 3.0)(params)
    assert jac["frozen"] is None and jac["w"].numpy().tolist() == [[3.0]]


def test_grad_of_an_integer_leaf_names_it():
    with pytest.raises(
        TypeError,
        match=r"tl.grad: cannot differentiate with respect to argument 0 \(leaf 1\) "
        r"of dtype int64",
    ):
        tl.grad(lambda p: p[0] * 2.0)([f64(1.0), tl.tensor(3)])


def test_vjp_and_jvp_of_nested_primals_and_outputs():
    def f(p):
        return {"sq": p["a"] * p["a"], "both": (p["a"] * p["b"],)}

    primal = {"a": f64([1.0, 2.0]), "b": f64([3.0, 4.0])}
    out, vjp_fn = tl.vjp(f, primal)
    (g,) = vjp_fn({"sq": f64([1.0, 1.0]), "both": (f64([1.0, 0.0]),)})
    np.testing.assert_array_equal(g["a"].numpy(), [2.0 + 3.0, 4.0])
    np.testing.assert_array_equal(g["b"].numpy(), [1.0, 0.0])
    _, tangent = tl.jvp(f, (primal,), ({"a": f64([1.0, 0.0]), "b": f64([0.0, 1.0])},))
    np.testing.assert_array_equal(tangent["sq"].numpy(), [2.0, 0.0])
    np.testing.assert_array_equal(tangent["both"][0].numpy(), [3.0, 2.0])
    with pytest.raises(ValueError, match="structures differ"):
        tl.jvp(f, (primal,), ([f64([1.0, 0.0]), f64([0.0, 1.0])],))


def test_jacobian_and_hessian_of_dict_arguments():
    def f(p):
        return p["a"] * p["b"]

    jac = tl.jacobian(f)({"a": f64([1.0, 2.0]), "b": f64([3.0, 4.0])})
    np.testing.assert_array_equal(jac["a"].numpy(), np.diag([3.0, 4.0]))
    np.testing.assert_array_equal(jac["b"].numpy(), np.diag([1.0, 2.0]))
    hess = tl.hessian(lambda p: tl.sum(p["a"] ** 2 * p["b"]))({"a": f64([1.0]), "b": f64([2.0])})
    assert hess["a"]["a"].numpy().tolist() == [[4.0]] and hess["a"]["b"].numpy().tolist() == [[2.0]]
    assert hess["b"]["a"].numpy().tolist() == [[2.0]] and hess["b"]["b"].numpy().tolist() == [[0.0]]


def test_tape_gradient_with_nested_sources_and_targets():
    p = _params()
    with tl.GradientTape() as tape:
        tape.watch(p)
        loss = {"l": _loss(p), "extra": [tl.sum(p["w"])]}
    g = tape.gradient(loss, {"w": p["w"], "maybe": None, "pair": Pair(p["b"], p["x"][1])})
    np.testing.assert_array_equal(g["w"].numpy(), [5.0, 6.0])
    assert g["maybe"] is None and isinstance(g["pair"], Pair)
    assert float(g["pair"].a) == 6.0 and float(g["pair"].b) == 3.0


# ---------------------------------------------------------------- lists of tensors given to ops


def test_a_list_of_tensors_given_to_an_op_is_stacked_and_keeps_its_gradient():
    g = tl.grad(lambda x: tl.mean([x, x + 2.0]))(f64(3.0))
    assert float(g) == 1.0
    g = tl.grad(lambda x: tl.sum(tl.multiply([x, x * 3.0], 2.0)))(f64(1.0))
    assert float(g) == 8.0
    out = tl.add([[f64(1.0), 2.0], [3.0, f64(4.0)]], 0.5)
    assert out.shape == (2, 2) and out.numpy().tolist() == [[1.5, 2.5], [3.5, 4.5]]


def test_a_list_of_tensors_given_to_tl_tensor_keeps_its_gradient():
    g = tl.grad(lambda x: tl.sum(tl.tensor([x, 2.0 * x]) * f64([1.0, 10.0])))(f64(1.0))
    assert float(g) == 21.0


# ---------------------------------------------------------------- constants returned by f


def test_vjp_of_a_function_returning_a_numpy_constant_gives_zeros():
    out, vjp_fn = tl.vjp(lambda x: np.ones(2), f64([1.0, 2.0]))
    assert isinstance(out, np.ndarray)
    (g,) = vjp_fn(np.ones(2))
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_jvp_of_a_function_returning_a_numpy_constant_gives_zeros():
    out, tangent = tl.jvp(lambda x: np.ones(3), (f64([1.0, 2.0]),), (f64([1.0, 1.0]),))
    assert tangent.shape == (3,) and tangent.numpy().tolist() == [0.0, 0.0, 0.0]
    _, tangents = tl.jvp(lambda x: (x * 2.0, 5.0), (f64([1.0]),), (f64([1.0]),))
    assert tangents[0].numpy().tolist() == [2.0] and float(tangents[1]) == 0.0


def test_jacobian_of_a_constant_is_a_clear_error():
    with pytest.raises(TypeError, match=r"^tl.jacobian: f returned a constant ndarray"):
        tl.jacobian(lambda x: np.ones(2))(f64([1.0]))
