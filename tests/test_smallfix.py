"""Regression tests for five small defects: float0 gradients under tl.function, the sign of zero in two-sided
spectrograms, PixelShuffle layers on (*, C, H, W), torch_stft of integers, polygamma of a bool order."""

import numpy as np
import pytest

import tensorlib as tl


# ---------------------------------------------------------------- 1. tl.function of tl.grad(allow_int=True)
def _loss(x, n):
    return tl.sum(x * x) * 2.0


def _assert_same_grads(traced, eager):
    assert len(traced) == len(eager)
    for t, e in zip(traced, eager):
        if isinstance(e, np.ndarray):
            assert isinstance(t, np.ndarray) and t.dtype == e.dtype and t.shape == e.shape
        else:
            np.testing.assert_allclose(np.asarray(t), np.asarray(e), rtol=1e-6)
            assert t.dtype == e.dtype and t.shape == e.shape


@pytest.mark.parametrize("n", [np.array([3, 4]), np.array(5), np.array([[True, False]]), np.zeros((0, 2), np.int32)])
def test_traced_grad_allow_int_returns_the_eager_float0(n):
    x = tl.tensor([1.0, 2.0])
    g = tl.grad(_loss, argnums=(0, 1), allow_int=True)
    eager = g(x, tl.tensor(n))
    traced = tl.function(g)(x, tl.tensor(n))
    _assert_same_grads(traced, eager)
    # d/dx sum(2 x^2) = 4 x, by hand
    np.testing.assert_allclose(np.asarray(traced[0]), [4.0, 8.0])
    assert traced[1].dtype.names == ("float0",) and traced[1].shape == n.shape


def test_traced_float0_is_a_new_array_at_each_call():
    f = tl.function(tl.grad(_loss, argnums=1, allow_int=True))
    x, n = tl.tensor([1.0, 2.0]), tl.tensor([3, 4])
    a = f(x, n)
    a.shape = (1, 2)  # the caller's to change: the next call must not see it
    b = f(x, n)
    assert b.shape == (2,) and b is not a


def test_traced_value_and_grad_allow_int_nested():
    def loss(p):
        return tl.sum(p["w"] * tl.cast(p["k"], "float32"))

    p = {"w": tl.tensor([1.0, 2.0, 3.0]), "k": tl.tensor([2, 3, 4])}
    v_e, g_e = tl.value_and_grad(loss, allow_int=True)(p)
    v_t, g_t = tl.function(tl.value_and_grad(loss, allow_int=True))(p)
    assert float(v_t) == float(v_e) == 20.0
    np.testing.assert_allclose(np.asarray(g_t["w"]), [2.0, 3.0, 4.0])
    assert g_t["k"].dtype == g_e["k"].dtype and g_t["k"].shape == (3,)


def test_traced_float0_with_an_unknown_dim_is_a_clear_error():
    f = tl.function(
        tl.grad(_loss, argnums=(0, 1), allow_int=True),
        input_signature=[tl.TensorSpec((None,), "float32"), tl.TensorSpec((None,), "int64")],
    )
    with pytest.raises(TypeError, match=r"allow_int=True.*unknown dim.*input_signature"):
        f(tl.tensor([1.0, 2.0]), tl.tensor([3, 4]))


def test_saving_a_graph_with_a_float0_output_is_a_clear_error(tmp_path):
    f = tl.function(tl.grad(_loss, argnums=(0, 1), allow_int=True))
    with pytest.raises(ValueError, match=r"graph.save: an output is a float0\(2,\) array.*allow_int=True"):
        f.save(tmp_path / "g.tlg", tl.tensor([1.0, 2.0]), tl.tensor([3, 4]))


def test_traced_float0_matches_jax_jit():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def jloss(x, n):
        return jnp.sum(x * x) * 2.0

    x, n = np.array([1.0, 2.0], np.float32), np.array([3, 4], np.int32)
    jx, jn = jax.jit(jax.grad(jloss, argnums=(0, 1), allow_int=True))(x, n)
    tx, tn = tl.function(tl.grad(_loss, argnums=(0, 1), allow_int=True))(tl.tensor(x), tl.tensor(n))
    np.testing.assert_allclose(np.asarray(tx), np.asarray(jx), rtol=1e-6)
    assert tn.dtype == jn.dtype and tn.shape == jn.shape
