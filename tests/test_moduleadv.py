"""tl.Module, tl.tree, checkpoints and tl.Variable attacked as a PyTorch / Keras / JAX user would use them.

References: PyTorch's ``nn.Module`` (``named_parameters``, ``state_dict``, ``nn.Sequential`` subclasses), Keras'
``Layer.trainable`` (frozen layers leave ``trainable_weights``, keep their weights), ``jax.tree_util``
(dicts matched by key, registered nodes, dataclasses); the values are checked against NumPy gradients written
out by hand, and against torch/jax where installed (importorskip).
"""

import re

import numpy as np
import pytest

import tensorlib as tl


# ---------------------------------------------------------------- Sequential subclasses


class _SeqWithHead(tl.nn.Sequential):
    def __init__(self):
        super().__init__(tl.nn.Dense(2, 2, seed=0), tl.nn.Dense(2, 2, seed=1))
        self.head = tl.nn.Dense(2, 1, seed=2, use_bias=False)
        self.drop = [tl.nn.Dropout(0.5)]
        self.gain = tl.Variable(np.float32(1.5))

    def forward(self, x):
        return self.head(self.drop[0](super().forward(x))) * self.gain


def test_a_sequential_subclass_keeps_the_submodules_it_adds():
    # Its head was missing from variables: never trained, never saved, not switched by eval() (PyTorch's
    # nn.Sequential subclass registers it: named_parameters() has 'head.weight').
    model = _SeqWithHead()
    assert list(model.variables) == ["gain", "0", "1", "head"]
    assert model.variables["head"]["kernel"] is model.head.kernel
    assert sorted(model.state_dict()) == ["0.bias", "0.kernel", "1.bias", "1.kernel", "gain", "head.kernel"]
    assert model.num_parameters() == 1 + 6 + 6 + 2
    model.eval()
    assert not model.drop[0].training and not model[0].training
    x = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    h = model[1](model[0](x)).numpy()
    want = model.head.kernel.numpy() - 0.1 * (h.T @ np.full((2, 1), 1.5, np.float32))
    with tl.GradientTape() as tape:
        loss = tl.sum(model(x))
    tl.optimizers.SGD(0.1).apply(tape.gradient(loss, model.trainable_variables), model)
    np.testing.assert_allclose(model.head.kernel.numpy(), want, rtol=1e-6)
    assert "(head): Dense(2, 1" in repr(model)


def test_a_sequential_subclass_names_match_torch():
    torch = pytest.importorskip("torch")

    class TorchSeq(torch.nn.Sequential):
        def __init__(self):
            super().__init__(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
            self.head = torch.nn.Linear(2, 1, bias=False)

    torch_modules = {name.split(".")[0] for name, _ in TorchSeq().named_parameters()}
    assert torch_modules == set(_SeqWithHead().variables) - {"gain"}


# ---------------------------------------------------------------- freezing (Keras' Layer.trainable)


def _backbone_and_head():
    return tl.nn.Sequential(
        tl.nn.Sequential(tl.nn.Dense(2, 3, seed=0), tl.nn.BatchNorm(3)), tl.nn.Dense(3, 1, seed=1, use_bias=False)
    )


def _sgd_step(model, x, opt=None):
    with tl.GradientTape() as tape:
        loss = tl.sum(model(x) ** 2)  # not a plain sum: that has a zero gradient through BatchNorm
    (opt or tl.optimizers.SGD(0.1)).apply(tape.gradient(loss, model.trainable_variables), model)


def test_a_frozen_submodule_leaves_trainable_variables_but_keeps_its_state():
    # `layer.trainable = False` set a plain attribute: the layer kept training (Keras moves its weights to
    # non_trainable_weights, and so out of the optimizer's reach; they stay in the weights and the checkpoint).
    model = _backbone_and_head()
    x = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 0.0]], np.float32)
    backbone = model[0]
    backbone.trainable = False
    assert not backbone.trainable and not backbone[0].trainable and not backbone[1].trainable
    assert list(model.trainable_variables) == ["1"]
    assert backbone.trainable_variables == {} and backbone.num_parameters() == 0
    assert sorted(model.state_dict()) == [
        "0.0.bias",
        "0.0.kernel",
        "0.1.offset",
        "0.1.running_mean",
        "0.1.running_var",
        "0.1.scale",
        "1.kernel",
    ]
    assert model.num_parameters(trainable_only=False) == 9 + 12 + 3
    frozen = {k: v.copy() for k, v in model.state_dict().items() if k.startswith("0.") and "running" not in k}
    head = model[1].kernel.numpy()
    h = backbone(x).numpy()  # training mode: the batch's statistics, as in the step
    _sgd_step(model, x)
    for name, value in frozen.items():
        np.testing.assert_array_equal(model.state_dict()[name], value)
    np.testing.assert_allclose(model[1].kernel.numpy(), head - 0.1 * h.T @ (2 * h @ head), rtol=1e-5)
    # Unfrozen, exactly the Variables that were trainable before are again (the running statistics never).
    model.trainable = True
    assert {k: sorted(v) for k, v in model.trainable_variables["0"].items()} == {
        "0": ["bias", "kernel"],
        "1": ["offset", "scale"],
    }


def test_freezing_a_parent_freezes_what_is_below_it_and_takes_only_bools():
    model = _backbone_and_head()
    model.trainable = False
    assert model.trainable_variables == {} and not any(m.trainable for m in model.modules())
    model[1].trainable = True  # a frozen parent has no trainable variables (Keras' rule)
    assert model.trainable_variables == {} and list(model[1].trainable_variables) == ["kernel"]
    with pytest.raises(TypeError, match=r"Sequential\.trainable: must be a bool, got 'False'"):
        model.trainable = "False"
    assert model.trainable is False


def test_a_traced_step_retraces_when_a_layer_is_frozen():
    model = _backbone_and_head()
    x = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 0.0]], np.float32)
    opt = tl.optimizers.SGD(0.1)
    step = tl.function(lambda x: _sgd_step(model, x, opt))
    kernel = model[0][0].kernel.numpy()
    step(x)
    assert not np.array_equal(model[0][0].kernel.numpy(), kernel)
    model[0].trainable = False
    kernel = model[0][0].kernel.numpy()
    step(x)  # the graph traced before updated the frozen kernel
    np.testing.assert_array_equal(model[0][0].kernel.numpy(), kernel)
    assert step.trace_count == 2 and re.fullmatch(r"ModuleFreezes\.count: \d+ -> \d+", step.retrace_reasons[-1])


# ---------------------------------------------------------------- copies (copy.deepcopy, pickle)


class _Compiled(tl.Module):
    def __init__(self):
        super().__init__()
        self.dense = tl.nn.Dense(2, 2, seed=0)
        self.fast = tl.function(self.forward, input_signature=[tl.TensorSpec((None, 2))])

    def forward(self, x):
        return self.dense(x)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_module_holding_a_tl_function_copies_with_its_own_variables(how):
    # copy.deepcopy failed (a lock cannot be copied; after a call, "a symbolic tensor has no value"), as did
    # pickle: PyTorch's deepcopy of a module is the usual way to make an EMA or a target network.
    import copy
    import pickle

    model = _Compiled()
    x = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    before = model.fast(x).numpy()
    twin = copy.deepcopy(model) if how == "deepcopy" else pickle.loads(pickle.dumps(model))
    twin.dense.kernel.assign(np.zeros((2, 2), np.float32))
    np.testing.assert_array_equal(twin.fast(x[:1]).numpy(), np.broadcast_to(model.dense.bias.numpy(), (1, 2)))
    np.testing.assert_array_equal(model.fast(x).numpy(), before)
    np.testing.assert_allclose(before, x @ model.dense.kernel.numpy() + model.dense.bias.numpy(), rtol=1e-6)
    assert twin.fast.input_signature == model.fast.input_signature and twin.fast.trace_count == 1


# ---------------------------------------------------------------- Variable


def test_a_variable_takes_a_bool_trainable_flag():
    with pytest.raises(TypeError, match=r"Variable: trainable must be a bool, got 'False'"):
        tl.Variable([1.0], trainable="False")  # was trainable: bool("False") is True
    assert tl.Variable([1.0], trainable=np.bool_(False)).trainable is False


# ---------------------------------------------------------------- tl.tree


def test_tree_map_pairs_dicts_by_key_whatever_their_order():
    # {"a": 1, "b": 2} with {"b": 20, "a": 10} raised "structures differ" (insertion orders): JAX's tree.map and
    # tf.nest.map_structure pair dict entries by key (both sort the keys).
    got = tl.tree.map(
        lambda a, b: (a, b), {"a": 1, "b": [2, {"c": 3, "d": 4}]}, {"b": [20, {"d": 40, "c": 30}], "a": 10}
    )
    assert got == {"a": (1, 10), "b": [(2, 20), {"c": (3, 30), "d": (4, 40)}]}
    assert list(got["b"][1]) == ["c", "d"]  # the first tree's order
    params = {"w": tl.tensor([1.0, 2.0]), "b": tl.tensor([3.0])}
    grads = {"b": tl.tensor([0.5]), "w": tl.tensor([1.0, -1.0])}
    step = tl.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(step["w"].numpy(), [0.9, 2.1], rtol=1e-6)
    np.testing.assert_allclose(step["b"].numpy(), [2.95], rtol=1e-6)


def test_tree_map_names_the_first_place_where_structures_differ():
    big = {"encoder": [{"w": 1, "b": 2}] * 3, "head": {"w": 1, "b": (2, 3)}}
    other = {"encoder": [{"w": 1, "b": 2}] * 3, "head": {"w": 1, "b": (2, 3, 4)}}
    with pytest.raises(
        ValueError,
        match=r"tl\.tree\.map: structures differ at \['head'\]\['b'\]: expected \(\*, \*\), got \(\*, \*, \*\)",
    ):
        tl.tree.map(lambda a, b: a, big, other)
    with pytest.raises(
        ValueError,
        match=r"structures differ at \['encoder'\]\[1\]: expected \{'w': \*, 'b': \*\}, got \{'w': \*, 'x': \*\}",
    ):
        tl.tree.map(lambda a, b: a, big, {**other, "encoder": [{"w": 1, "b": 2}, {"w": 1, "x": 2}, {"w": 1, "b": 2}]})
    with pytest.raises(ValueError, match=r"structures differ at \[1\]: expected None, got \*"):
        tl.tree.map(lambda a, b: a, [1, None], [1, 2])  # None is an empty node (JAX), not a leaf


def test_tree_map_agrees_with_jax():
    jax = pytest.importorskip("jax")
    a, b = {"x": 1.0, "y": (2.0, [3.0])}, {"y": (20.0, [30.0]), "x": 10.0}
    assert tl.tree.map(lambda u, v: u + v, a, b) == jax.tree_util.tree_map(lambda u, v: u + v, a, b)
    with pytest.raises(ValueError):
        jax.tree_util.tree_map(lambda u, v: u, [1, None], [1, 2])


# ---------------------------------------------------------------- registered nodes (JAX's register_pytree_node)
import dataclasses  # noqa: E402


@tl.tree.register_dataclass
@dataclasses.dataclass
class _Params:
    w: object
    b: object


@dataclasses.dataclass(frozen=True)
class _Scaled:
    value: object
    scale: float


tl.tree.register_dataclass(_Scaled, meta_fields=("scale",))


class _Box:
    """A registered class that is no dataclass: two children and a tag."""

    def __init__(self, left, right, tag):
        self.left, self.right, self.tag = left, right, tag


tl.tree.register_node(_Box, lambda b: ((b.left, b.right), b.tag), lambda tag, lr: _Box(*lr, tag))


def _loss(p):
    return tl.sum(p.w**2) + 3.0 * tl.sum(p.b)


def test_a_registered_dataclass_is_a_node_everywhere():
    # A dataclass of parameters was a leaf: tl.grad failed ("expected a tensor ... got _Params"), optimizers
    # and checkpoints could not take it.  JAX's register_dataclass makes it a node.
    w, b = np.array([1.0, -2.0], np.float32), np.array([0.5], np.float32)
    p = _Params(tl.tensor(w), tl.tensor(b))
    leaves, treedef = tl.tree.flatten(p)
    assert repr(treedef) == "_Params(w=*, b=*)" and [x for x in leaves] == [p.w, p.b]
    assert [path for path, _ in tl.tree.flatten_with_path(p)[0]] == [("w",), ("b",)]
    g = tl.grad(_loss)(p)
    assert isinstance(g, _Params)
    np.testing.assert_allclose(g.w.numpy(), 2 * w)
    np.testing.assert_allclose(g.b.numpy(), [3.0])
    traced = tl.function(tl.grad(_loss))(p)  # as an argument and a result of a traced function
    assert isinstance(traced, _Params)
    np.testing.assert_allclose(traced.w.numpy(), 2 * w)
    doubled = tl.tree.map(lambda t: t * 2.0, p)
    np.testing.assert_allclose(doubled.w.numpy(), 2 * w)


def test_a_registered_dataclass_of_variables_trains_and_checkpoints(tmp_path):
    p = _Params(tl.Variable(np.array([1.0, -2.0], np.float32)), tl.Variable(np.array([0.5], np.float32)))
    opt = tl.optimizers.SGD(0.1)
    with tl.GradientTape() as tape:
        loss = _loss(p)
    opt.apply(tape.gradient(loss, p), p)
    np.testing.assert_allclose(p.w.numpy(), [1.0 - 0.2, -2.0 + 0.4], rtol=1e-6)
    np.testing.assert_allclose(p.b.numpy(), [0.5 - 0.3], rtol=1e-6)
    path = tmp_path / "p.safetensors"
    tl.save_variables(path, {"params": p})
    assert sorted(tl.load_variables(path)) == ["params.b", "params.w"]
    fresh = _Params(tl.Variable(np.zeros(2, np.float32)), tl.Variable(np.zeros(1, np.float32)))
    tl.load_variables(path, {"params": fresh})
    np.testing.assert_array_equal(fresh.w.numpy(), p.w.numpy())


def test_meta_fields_are_static_and_custom_nodes_rebuild():
    a = tl.tree.flatten(_Scaled(1.0, 2.0))
    assert a[0] == [1.0] and a[1] != tl.tree.flatten(_Scaled(1.0, 3.0))[1]
    calls = []

    @tl.function
    def f(s):
        calls.append(s.scale)
        return s.value * s.scale

    assert float(f(_Scaled(tl.tensor(2.0), 3.0))) == 6.0
    assert float(f(_Scaled(tl.tensor(5.0), 3.0))) == 15.0
    assert float(f(_Scaled(tl.tensor(5.0), 4.0))) == 20.0
    assert calls == [3.0, 4.0]  # one trace per static scale
    box = tl.tree.map(lambda v: v + 1, _Box(1, [2, None], "t"))
    assert (box.left, box.right, box.tag) == (2, [3, None], "t")
    assert repr(tl.tree.flatten(box)[1]) == "_Box(*, [*, None])"
    assert tl.tree.flatten_with_path(box)[0] == [((0,), 2), ((1, 0), 3)]
    with pytest.raises(ValueError, match=r"structures differ at \['b'\]\[1\]: expected \*, got None"):
        tl.tree.map(lambda a, b: a, _Params(1, [2, 3]), _Params(1, [2, None]))
    reordered = tl.tree.map(lambda a, b: (a, b), _Params({"x": 1, "y": 2}, 3), _Params({"y": 20, "x": 10}, 30))
    assert reordered == _Params({"x": (1, 10), "y": (2, 20)}, (3, 30))


def test_registration_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match=r"tl\.tree\.register_dataclass: _Params is already registered"):
        tl.tree.register_dataclass(_Params)
    with pytest.raises(ValueError, match=r"register_node: list is a list, tuple or dict type"):
        tl.tree.register_node(list, lambda x: (x, None), lambda a, c: list(c))
    with pytest.raises(TypeError, match=r"register_dataclass: .* is not a dataclass type"):
        tl.tree.register_dataclass(_Box)

    @dataclasses.dataclass
    class Three:
        a: object
        b: object

    with pytest.raises(ValueError, match=r"must together name each __init__ field once: \['a', 'b'\]"):
        tl.tree.register_dataclass(Three, data_fields=["a"], meta_fields=["c"])
    graph_fn = tl.function(lambda x: _Params(x * 2.0, x))
    with pytest.raises(ValueError, match=r"graph\.save: an output is a _Params, a registered tl\.tree node"):
        graph_fn.get_graph(tl.tensor([1.0])).save(str(tmp_path / "g"))


def test_registered_nodes_flatten_as_in_jax():
    jax = pytest.importorskip("jax")

    @dataclasses.dataclass
    class JaxParams:
        w: object
        b: object

    jax.tree_util.register_dataclass(JaxParams, data_fields=["w", "b"], meta_fields=[])
    value = {"layer": _Params([1.0, 2.0], (3.0, None))}
    jax_value = {"layer": JaxParams([1.0, 2.0], (3.0, None))}
    assert tl.tree.leaves(value) == jax.tree_util.tree_leaves(jax_value)
    jax_paths = [
        tuple(getattr(k, "name", getattr(k, "key", getattr(k, "idx", None))) for k in path)
        for path, _ in jax.tree_util.tree_flatten_with_path(jax_value)[0]
    ]
    assert [p for p, _ in tl.tree.flatten_with_path(value)[0]] == jax_paths


# ---------------------------------------------------------------- containers a Module cannot name


def test_variables_in_a_set_are_an_error_not_silently_untrained():
    # A set of Variables was skipped: never trained nor saved.  A set has no order (Variables hash by id),
    # so its entries cannot get names that agree from run to run; lists and dicts are walked.
    class Bag(tl.Module):
        def __init__(self, holder):
            super().__init__()
            self.w = tl.Variable(1.0)
            self.extra = holder

    for holder in ({tl.Variable(2.0)}, [frozenset({tl.nn.Dense(1, 1)})]):
        with pytest.raises(TypeError, match=r"Module: a set holds a (Variable|Dense); a set has no order"):
            Bag(holder).variables
    assert list(Bag({1, 2}).variables) == ["w"]  # a set of other things is no state


def test_a_module_walks_a_registered_dataclass_of_variables():
    # Skipped like any leaf: its Variables were never trained nor saved.
    class Holder(tl.Module):
        def __init__(self):
            super().__init__()
            self.p = _Params(tl.Variable(np.array([1.0, -2.0], np.float32)), [tl.nn.Dense(1, 1, seed=0)])

    m = Holder()
    assert sorted(m.state_dict()) == ["p.b.0.bias", "p.b.0.kernel", "p.w"]
    assert m.trainable_variables["p"]["w"] is m.p.w and m.num_parameters() == 4


# ---------------------------------------------------------------- tl.tree properties (hypothesis)
import collections  # noqa: E402

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_Pair = collections.namedtuple("_Pair", ["a", "b"])
_keys = st.one_of(st.text(max_size=3), st.integers(-3, 3), st.tuples(st.integers(0, 2)))
_trees = st.recursive(
    st.one_of(st.none(), st.floats(allow_nan=False), st.integers()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_keys, inner, max_size=3),
        st.tuples(inner, inner).map(lambda t: _Pair(*t)),
        st.tuples(inner, inner).map(lambda t: _Params(*t)),
    ),
    max_leaves=12,
)


def _at(tree, path):
    for k in path:
        tree = getattr(tree, k) if isinstance(k, str) and isinstance(tree, _Params) else tree[k]
    return tree


def _reversed_dicts(tree):
    """``tree`` with every dict's insertion order reversed."""
    if isinstance(tree, dict):
        return {k: _reversed_dicts(tree[k]) for k in reversed(list(tree))}
    if isinstance(tree, _Params):
        return _Params(_reversed_dicts(tree.w), _reversed_dicts(tree.b))
    if isinstance(tree, (list, tuple)):
        items = [_reversed_dicts(t) for t in tree]
        return type(tree)(*items) if isinstance(tree, _Pair) else type(tree)(items)
    return tree


@given(_trees)
def test_flatten_unflatten_paths_and_map_agree(tree):
    leaves, treedef = tl.tree.flatten(tree)
    assert tl.tree.unflatten(treedef, leaves) == tree
    pairs, _ = tl.tree.flatten_with_path(tree)
    assert [leaf for _, leaf in pairs] == leaves and all(_at(tree, p) is leaf for p, leaf in pairs)
    # Paired by key, the reordered copy gives each leaf back to itself (zipped by position it would not).
    assert tl.tree.map(lambda a, b: (a, b), tree, _reversed_dicts(tree)) == tl.tree.map(lambda a: (a, a), tree)


# ---------------------------------------------------------------- dict order through control flow


def _cf_cases():
    a, b = tl.tensor(1.5), tl.tensor(-2.0)
    return {
        "cond": lambda: tl.cond(tl.tensor(False), lambda: {"a": a, "b": b}, lambda: {"b": b * 10.0, "a": a * 10.0}),
        "switch": lambda: tl.switch(tl.tensor(1), [lambda: {"a": a, "b": b}, lambda: {"b": b + 1.0, "a": a + 1.0}]),
        "while": lambda: tl.while_loop(
            lambda s: s["i"] < 3, lambda s: {"x": s["x"] * 2.0, "i": s["i"] + 1}, {"i": tl.tensor(0), "x": a}
        ),
        "scan": lambda: tl.scan(
            lambda c, x: ({"p": c["p"] * x, "s": c["s"] + x}, c["s"]),
            {"s": tl.tensor(0.0), "p": tl.tensor(1.0)},
            tl.tensor([1.0, 2.0, 3.0]),
        ),
    }


_CF_WANT = {
    "cond": {"a": 15.0, "b": -20.0},
    "switch": {"a": 2.5, "b": -1.0},
    "while": {"i": 3, "x": 12.0},
    "scan": ({"s": 6.0, "p": 6.0}, [0.0, 1.0, 3.0]),
}


def _plain(value):
    return tl.tree.map(lambda t: t.numpy().tolist(), value)


@pytest.mark.parametrize("case", sorted(_CF_WANT))
@pytest.mark.parametrize("traced", [False, True])
def test_control_flow_pairs_dicts_by_key_in_both_modes(case, traced):
    # A branch or body that builds its dict in another order raised "the nesting differs" (traced cond; while and
    # scan in both modes), where JAX (which sorts dict keys) and tf.nest accept it.  A loop's result has the order
    # of its loop variables; a traced cond's that of true_fn (an eager one runs, and returns, one branch).
    fn = _cf_cases()[case]
    got = _plain(tl.function(fn)() if traced else fn())
    assert got == _CF_WANT[case]
    if traced or case in ("while", "scan"):
        first, want = (got[0], _CF_WANT[case][0]) if case == "scan" else (got, _CF_WANT[case])
        assert list(first) == list(want)


# ---------------------------------------------------------------- a Variable reachable twice (tied weights)


class _TiedPair(tl.Module):
    def __init__(self):
        super().__init__()
        self.enc = tl.nn.Dense(2, 2, seed=0, dtype="float64")
        self.dec = tl.nn.Dense(2, 2, seed=1, dtype="float64")
        self.dec.kernel = self.enc.kernel  # tied, as PyTorch's weight tying
        self.again = self.enc  # a whole layer used twice

    def forward(self, x):
        return self.again(tl.nn.relu(self.dec(tl.nn.relu(self.enc(x)))))


def test_a_tied_variable_is_listed_once_and_a_hand_written_step_moves_it_once():
    # It was listed under every path ('enc', 'dec', 'again'): a hand-written step over
    # tree.leaves(model.trainable_variables), or tree.map over variables and gradients, moved the tied kernel
    # three times.  PyTorch's parameters()/named_parameters() and Keras' trainable_variables list it once.
    model = _TiedPair()
    assert {k: sorted(v) for k, v in model.trainable_variables.items()} == {"enc": ["bias", "kernel"], "dec": ["bias"]}
    assert {k: sorted(v) for k, v in model.variables.items()} == {"enc": ["bias", "kernel"], "dec": ["bias"]}
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    k, b1, b2 = (v.numpy().copy() for v in (model.enc.kernel, model.enc.bias, model.dec.bias))

    def loss_of(k):
        h1 = np.maximum(x @ k + b1, 0)
        h2 = np.maximum(h1 @ k + b2, 0)
        return np.sum((h2 @ k + b1) ** 2)

    eps, numeric = 1e-6, np.zeros_like(k)  # central differences in float64
    for i in np.ndindex(k.shape):
        d = np.zeros_like(k)
        d[i] = eps
        numeric[i] = (loss_of(k + d) - loss_of(k - d)) / (2 * eps)
    variables = model.trainable_variables
    with tl.GradientTape() as tape:
        loss = tl.sum(model(x) ** 2)
    grads = tape.gradient(loss, variables)
    tl.tree.map(lambda v, g: v.assign_sub(0.01 * g), variables, grads)
    np.testing.assert_allclose(model.enc.kernel.numpy(), k - 0.01 * numeric, rtol=1e-7, atol=1e-9)
    assert model.dec.kernel is model.enc.kernel and model.num_parameters() == 8


def test_a_tied_variable_keeps_every_name_in_checkpoints(tmp_path):
    # PyTorch's state_dict() keeps tied weights under every key too; a file saved from the tied model loads
    # into a fresh one, and one with two different values there is refused (test_optadv).
    model = _TiedPair()
    assert sorted(model.state_dict()) == [
        "again.bias",
        "again.kernel",
        "dec.bias",
        "dec.kernel",
        "enc.bias",
        "enc.kernel",
    ]
    tl.save_variables(tmp_path / "tied.safetensors", model)
    fresh = _TiedPair()
    fresh.enc.kernel.assign(np.zeros((2, 2)))
    tl.load_variables(tmp_path / "tied.safetensors", fresh)
    np.testing.assert_array_equal(fresh.dec.kernel.numpy(), model.enc.kernel.numpy())


def test_tied_names_match_torch():
    torch = pytest.importorskip("torch")

    class TorchTied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc, self.dec = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
            self.dec.weight = self.enc.weight
            self.again = self.enc

    tied = TorchTied()
    assert [n for n, _ in tied.named_parameters()] == ["enc.weight", "enc.bias", "dec.bias"]
    assert sorted(tied.state_dict()) == sorted(n.replace("kernel", "weight") for n in _TiedPair().state_dict())
