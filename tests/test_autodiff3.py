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
