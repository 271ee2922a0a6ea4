"""Attacks on this session's new APIs: complex Variables in the optimizers (gradient clipping),
``tl.functional_call`` with state a call in training mode updates.  References: the same model written
on real (real, imaginary) pairs, which the optimizers' complex steps are defined as (PyTorch's
``view_as_real``), NumPy formulas, and PyTorch where installed."""

import numpy as np
import pytest

import tensorlib as tl


# ---------------------------------------------------------------- complex Variables in the optimizers
def test_clipvalue_clips_real_and_imaginary_parts_of_a_complex_gradient():
    # Clipped as one complex number (NumPy's clip compares by real part), -0.2-0.9j and 0.1+2j passed
    # unclipped, and 0.5+0.1j lost its imaginary part: clipvalue bounded nothing.  The step runs on the
    # (real, imaginary) pairs, so each part is clipped, as for the same model on real pairs.
    g = np.array([0.5 + 0.1j, -0.2 - 0.9j, 0.1 + 2.0j, -0.4 + 0.0j])
    z0 = np.array([1.0 + 1.0j, -1.0 + 2.0j, 0.5 - 0.5j, 0.0 + 0.0j])
    w = tl.Variable(z0.copy())
    tl.optimizers.SGD(0.5, clipvalue=0.3).apply([tl.tensor(g)], [w])
    # JAX-convention gradient: descent on the pairs is z - lr * conj(g), parts clipped one by one.
    step = np.clip(g.real, -0.3, 0.3) - 1j * np.clip(g.imag, -0.3, 0.3)
    np.testing.assert_allclose(w.numpy(), z0 - 0.5 * step, rtol=0, atol=1e-15)

    # The same model on real pairs, with a real loss, takes the same steps.
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    start = 3 * (rng.normal(size=3) + 1j * rng.normal(size=3))

    def loss(z):
        r = tl.matmul(tl.tensor(a), z)
        return tl.sum(tl.real(r * tl.conj(r)))

    zc = tl.Variable(start.copy())
    zr = tl.Variable(np.stack([start.real, start.imag], -1))
    opt_c, opt_r = tl.optimizers.Adam(0.1, clipvalue=0.5), tl.optimizers.Adam(0.1, clipvalue=0.5)
    for _ in range(4):
        opt_c.apply([tl.grad(loss)(tl.tensor(zc))], [zc])
        opt_r.apply([tl.grad(lambda p: loss(tl.complex(p[..., 0], p[..., 1])))(tl.tensor(zr))], [zr])
    np.testing.assert_allclose(zc.numpy(), zr.numpy()[..., 0] + 1j * zr.numpy()[..., 1], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- tl.functional_call
def test_functional_call_of_state_the_call_updates():
    # BatchNorm in training mode assigns its running statistics.  Given as a tensor (immutable), the update
    # crashed with "'Tensor' object has no attribute 'assign'"; now one TypeError names functional_call and
    # the Variable, and the module is left as it was.  Given as a tl.Variable, the Variable takes the
    # update, PyTorch's running = (1 - momentum) * running + momentum * batch (torch.func updates the
    # buffer it is given in place).
    x = np.arange(8.0).reshape(4, 2)
    bn = tl.nn.BatchNorm(2)
    before = {k: np.array(v) for k, v in bn.state_dict().items()}
    with pytest.raises(TypeError, match=r"functional_call.*running_mean.*tl\.Variable"):
        tl.functional_call(bn, {"running_mean": tl.tensor([5.0, 5.0])}, tl.tensor(x))
    assert isinstance(bn.running_mean, tl.Variable)
    for k, v in bn.state_dict().items():
        np.testing.assert_array_equal(v, before[k])

    given = tl.Variable(np.array([5.0, 5.0]), trainable=False)
    out = tl.functional_call(bn, {"running_mean": given}, tl.tensor(x))
    np.testing.assert_allclose(given.numpy(), 0.9 * 5.0 + 0.1 * x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + bn.epsilon), rtol=1e-5)
    np.testing.assert_array_equal(bn.running_mean.numpy(), before["running_mean"])
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.var(0, ddof=1), rtol=1e-6)

    bn.eval()  # no update in inference mode: a tensor is fine
    out = tl.functional_call(bn, {"running_mean": [1.0, 2.0], "running_var": [4.0, 9.0]}, tl.tensor(x))
    np.testing.assert_allclose(out.numpy(), (x - [1.0, 2.0]) / np.sqrt(np.array([4.0, 9.0]) + bn.epsilon), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_optimizer_state_of_complex_variables_restores(dtype):
    # A checkpoint's slots of a complex Variable hold its (real, imaginary) pairs, shape (..., 2) in the real
    # dtype; loading them checked them against the Variable's own shape and dtype, so the first step after
    # load_state_dict raised "the checkpoint's slot c/m has shape (2, 2) float32, but ... needs (2,) complex64".
    # Restored, the optimizer steps as the one it was saved from; mixed with a real Variable.
    def make():
        return {"c": tl.Variable(np.array([1 + 2j, -1 + 0.5j], dtype)), "r": tl.Variable(np.array([0.5, 2.0]))}

    def step(opt, v):
        with tl.GradientTape() as tape:
            loss = tl.sum(tl.real(v["c"] * tl.conj(v["c"]))) + tl.sum(v["r"] ** 3)
        opt.apply(tape.gradient(loss, v), v)

    for make_opt in (lambda: tl.optimizers.Adam(0.1, amsgrad=True), lambda: tl.optimizers.RMSprop(0.1, centered=True)):
        v, opt = make(), make_opt()
        step(opt, v)
        state = opt.state_dict()
        v2, opt2 = {k: tl.Variable(x.numpy()) for k, x in v.items()}, make_opt()
        opt2.load_state_dict(state)
        for _ in range(2):
            step(opt, v)
            step(opt2, v2)
        for k in v:
            np.testing.assert_array_equal(v2[k].numpy(), v[k].numpy())
        # A slot of the wrong shape is still refused, naming the slot.
        bad = dict(state)
        bad[next(k for k in state if k.endswith("c.v"))] = np.zeros(2, np.real(np.zeros(1, dtype)).dtype)
        opt3 = make_opt()
        opt3.load_state_dict(bad)
        with pytest.raises(ValueError, match=r"slot c/v has shape \(2,\)"):
            step(opt3, make())


# ---------------------------------------------------------------- np.<ufunc>.reduceat on Tensors
def test_reduceat_with_indices_by_keyword():
    # NumPy hands __array_ufunc__ the indices positionally and again as indices=: the call crashed with
    # "_reduceat() got multiple values for argument 'indices'".
    a = np.arange(12.0).reshape(3, 4)
    got = np.add.reduceat(tl.tensor(a), indices=[0, 3, 1], axis=1)
    np.testing.assert_array_equal(got.numpy(), np.add.reduceat(a, indices=[0, 3, 1], axis=1))
    g = tl.grad(lambda x: tl.sum(np.maximum.reduceat(x, indices=[0, 2]) * tl.tensor([1.0, 10.0])))(tl.tensor(a[0]))
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0, 0.0, 10.0])  # the maxima: x[1] and x[3]


def test_reduceat_of_a_0d_tensor_is_numpys_error():
    # NumPy: TypeError "cannot reduceat on a scalar"; tensorlib gave a bare IndexError "tuple index out of range".
    with pytest.raises(TypeError, match=r"numpy.add.reduceat.*scalar.*float32"):
        np.add.reduceat(tl.tensor(3.0), [0])
