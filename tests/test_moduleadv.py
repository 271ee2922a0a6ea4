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
