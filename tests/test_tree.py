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
        ({"b": 1, "a": [2, None]}, 2),
        (Pair(1, [2, 3]), 3),
        (None, 0),
        ([], 0),
        ({}, 0),
        ([[], (None,)], 0),
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
    with pytest.raises(
        ValueError,
        match=r"^tl.tree.map: structures differ at \[1\]: expected \(\*,\), got \*; "
        r"in full: expected \[\*, \(\*,\)\], got \[\*, \*\]$",
    ):
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


# ---------------------------------------------------------------- None, predicates and paths


def test_none_is_an_empty_subtree():
    leaves, treedef = tree.flatten({"a": None, "b": [1, None]})
    assert leaves == [1] and repr(treedef) == "{'a': None, 'b': [*, None]}"
    assert tree.unflatten(treedef, [5]) == {"a": None, "b": [5, None]}
    assert tree.flatten([None])[1] != tree.flatten([1])[1]
    assert tree.map(lambda v: v + 1, {"a": None, "b": 2}) == {"a": None, "b": 3}


def test_is_leaf_stops_the_walk_and_is_constant_keeps_leaves_in_the_treedef():
    leaves, treedef = tree.flatten([None, (1, 2)], is_leaf=lambda v: v is None or isinstance(v, tuple))
    assert leaves == [None, (1, 2)] and repr(treedef) == "[*, *]"
    leaves, treedef = tree.flatten({"x": 1, "tag": "t", "n": 2.5}, is_constant=lambda v: not isinstance(v, int))
    assert leaves == [1] and repr(treedef) == "{'x': *, 'tag': ='t', 'n': =2.5}"
    assert tree.unflatten(treedef, [7]) == {"x": 7, "tag": "t", "n": 2.5}
    same = tree.flatten({"x": 9, "tag": "t", "n": 2.5}, is_constant=lambda v: not isinstance(v, int))[1]
    other = tree.flatten({"x": 9, "tag": "u", "n": 2.5}, is_constant=lambda v: not isinstance(v, int))[1]
    assert same == treedef and hash(same) == hash(treedef) and other != treedef
    # Constants compare by type too: True is not 1.
    assert tree.flatten(True, is_constant=lambda v: True)[1] != tree.flatten(1, is_constant=lambda v: True)[1]


def test_flatten_with_path_gives_the_keys_to_each_leaf():
    pairs, treedef = tree.flatten_with_path({"w": [1, Pair(2, None)], "b": 3})
    assert pairs == [(("w", 0), 1), (("w", 1, 0), 2), (("b",), 3)]
    assert tree.unflatten(treedef, [p[1] for p in pairs]) == {"w": [1, Pair(2, None)], "b": 3}
    assert tree.flatten_with_path(5) == ([((), 5)], tree.flatten(5)[1])


# ---------------------------------------------------------------- modules, optimizers, checkpoints


def _model():
    class Block(tl.Module):
        def __init__(self):
            super().__init__()
            self.layers = [tl.nn.Dense(2, 3, seed=0), tl.nn.Dense(3, 1, seed=1)]
            self.gain = tl.Variable(np.float32(2.0))

        def forward(self, x):
            return self.layers[1](self.layers[0](x)) * self.gain

    return Block()


def test_module_parameter_trees_go_through_tapes_maps_and_optimizers():
    model = _model()
    params = model.trainable_variables
    _, param_def = tree.flatten(params)
    assert repr(param_def) == "{'gain': *, 'layers': {'0': {'kernel': *, 'bias': *}, '1': {'kernel': *, 'bias': *}}}"
    assert model.num_parameters() == sum(v.size for v in tree.leaves(params)) == 1 + 6 + 3 + 3 + 1
    x = np.array([[1.0, -1.0]], np.float32)
    with tl.GradientTape() as tape:
        loss = tl.sum(model(x))
    grads = tape.gradient(loss, params)
    assert tree.flatten(grads)[1] == param_def
    before = tree.map(lambda v: v.numpy().copy(), params)
    tl.optimizers.SGD(0.5).apply(grads, params)
    after = tree.map(lambda v: v.numpy(), params)
    tree.map(lambda b, a, g: np.testing.assert_allclose(a, b - 0.5 * g.numpy(), rtol=1e-6), before, after, grads)


def test_optimizer_state_is_a_tree_keyed_by_variable_paths():
    w, b = tl.Variable(np.array([1.0, 2.0])), tl.Variable(np.array(3.0))
    opt = tl.optimizers.Adam(0.1)
    variables = {"dense": Pair(w, b), "frozen": [w]}
    grads = {"dense": Pair(tl.tensor([1.0, 1.0], dtype="float64"), None), "frozen": [None]}
    opt.apply(grads, variables)
    state = opt.variables
    assert list(state["slots"]) == ["dense/0"] and list(state["slots"]["dense/0"]) == ["m", "v", "step"]
    assert b.numpy() == 3.0  # its gradient was None: skipped
    np.testing.assert_allclose(w.numpy(), [0.9, 1.9])  # Adam's first step moves by lr * sign
    assert list(state["hyperparameters"]) == ["maximize", "beta_1", "beta_2", "epsilon", "weight_decay", "amsgrad"]
    # iterations, the learning rate, Adam's four other hyperparameters and two flags, the two moments and w's own
    # step count
    assert len(tree.leaves(state)) == 11
    # A tuple of gradients for a list of variables pairs by position, as before.
    opt.apply((tl.tensor([1.0, 1.0], dtype="float64"),), [w])


def test_optimizer_structure_mismatch_names_both_structures():
    w = tl.Variable(np.array([1.0]))
    with pytest.raises(
        ValueError,
        match=r"SGD.apply: grads and variables must have the same structure; missing gradients for "
        r"\[\"\['b'\]\"\], gradients without a variable at none \(1 gradients, 2 variables; "
        r"grads \{'a': \*\}, variables \{'a': \*, 'b': \*\}\)",
    ):
        tl.optimizers.SGD(0.1).apply({"a": tl.tensor([1.0])}, {"a": w, "b": w})
    # A None slot in both structures is empty; a gradient for a None slot is an error.
    tl.optimizers.SGD(0.1).apply({"a": tl.tensor([1.0]), "b": None}, {"a": w, "b": None})
    assert w.numpy().tolist() == [0.9]
    with pytest.raises(TypeError, match=r"^SGD.apply: \['b'\] is a NoneType, not a tl.Variable$"):
        tl.optimizers.SGD(0.1).apply({"a": tl.tensor([1.0]), "b": tl.tensor([1.0])}, {"a": w, "b": None})


def test_clip_by_global_norm_keeps_nested_structures_and_none():
    grads = {"a": Pair(f64([3.0]), None), "b": [f64([4.0])]}
    clipped, norm = tl.optimizers.clip_by_global_norm(grads, 1.0)
    assert float(norm) == 5.0 and isinstance(clipped["a"], Pair) and clipped["a"].b is None
    assert float(clipped["a"].a[0]) == pytest.approx(0.6) and float(clipped["b"][0][0]) == pytest.approx(0.8)


def test_checkpoint_names_follow_tree_paths(tmp_path):
    pytest.importorskip("safetensors")
    model = _model()
    target = {"model": model, "extra": Pair(tl.Variable(np.float32(1.0)), None)}
    tl.save_variables(tmp_path / "c.safetensors", target)
    fresh = {"model": _model(), "extra": Pair(tl.Variable(np.float32(0.0)), None)}
    fresh["model"].gain.assign(np.float32(5.0))
    tl.load_variables(tmp_path / "c.safetensors", fresh)
    assert float(fresh["model"].gain) == 2.0 and float(fresh["extra"].a) == 1.0
    from tensorlib.checkpoint import _named

    assert sorted(_named(target, "save_variables")) == [
        "extra.0",
        "model.gain",
        "model.layers.0.bias",
        "model.layers.0.kernel",
        "model.layers.1.bias",
        "model.layers.1.kernel",
    ]
