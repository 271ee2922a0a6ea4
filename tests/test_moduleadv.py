"""tl.Module, tl.tree, checkpoints and tl.Variable attacked as a PyTorch / Keras / JAX user would use them.

References: PyTorch's ``nn.Module`` (``named_parameters``, ``state_dict``, ``nn.Sequential`` subclasses), Keras'
``Layer.trainable`` (frozen layers leave ``trainable_weights``, keep their weights), ``jax.tree_util``
(dicts matched by key, registered nodes, dataclasses); the values are checked against NumPy gradients written
out by hand, and against torch/jax where installed (importorskip).
"""

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
