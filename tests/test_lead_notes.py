"""The items earlier sessions' notes left open, now done: ``tl.complex`` (the constructor from real and
imaginary parts that ``tf.complex``, ``torch.complex`` and ``jax.lax.complex`` offer) and ``round`` of complex
tensors to ``decimals``; complex Variables in the optimizers (against torch.optim and NumPy formulas);
Module's refusal of a tensor in a Variable's place and ``tl.functional_call``; max/min ties with ``where=`` and
``initial=`` (JAX's split); ``ufunc.reduceat`` on Tensors; ``pad`` with a tensor constant (and
``signal.frame``'s ``pad_value``); traced histograms of non-finite data.  References: NumPy, float64
central differences, and JAX/PyTorch where installed."""

import numpy as np
import pytest
from _helpers import central_differences

import tensorlib as tl

MODES = ("eager", "traced")


def _run(mode, f, *args):
    return f(*args) if mode == "eager" else tl.function(f)(*args)


def _parts(x, y, dtype=complex):
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), dtype)
    out.real, out.imag = x, y
    return out


# ---------------------------------------------------------------- tl.complex
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_complex_keeps_infinite_and_nan_parts_exactly(mode, backend):
    # x + 1j * y gives a NaN real part where y is infinite (0 * inf); the constructor must not.
    if backend == "array_api_strict":
        pytest.importorskip("array_api_strict")
    x = np.array([1.0, -2.0, np.inf, 0.5, -0.0])
    y = np.array([np.inf, -np.inf, 3.0, np.nan, -0.0])
    out = _run(mode, tl.complex, tl.tensor(x, backend=backend), tl.tensor(y, backend=backend))
    got = np.asarray(out.numpy())
    assert got.dtype == np.complex128
    np.testing.assert_array_equal(got.real, x)
    np.testing.assert_array_equal(got.imag, y)
    if backend == "numpy":  # the standard's arithmetic cannot make a -0.0 imaginary part
        assert np.signbit(got.imag[-1]) and np.signbit(got.real[-1])


@pytest.mark.parametrize(
    "dx, dy, expected",
    [
        ("float32", "float32", np.complex64),
        ("float64", "float64", np.complex128),
        ("float32", "float64", np.complex128),
        ("float16", "float16", np.complex64),
        ("int32", "int32", np.complex128),
        ("bool", "float32", np.complex64),
    ],
)
def test_complex_result_dtype_and_broadcasting(dx, dy, expected):
    x, y = np.arange(3).astype(dx), np.arange(2)[:, None].astype(dy) * 0.5
    out = tl.complex(tl.tensor(x), tl.tensor(y))
    assert out.dtype == expected and out.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy(), _parts(x, y, expected))


def test_complex_of_a_python_float_is_weak():
    out = tl.complex(tl.tensor([1.0, 2.0], dtype="float32"), 0.5)
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out.numpy(), [1 + 0.5j, 2 + 0.5j])


def test_complex_refuses_complex_parts_naming_the_op():
    z = tl.tensor([1 + 1j], dtype="complex64")
    with pytest.raises(TypeError, match=r"^Complex: the real and imaginary parts must be real numbers, got complex64"):
        tl.complex(z, tl.tensor([1.0]))
    with pytest.raises(TypeError, match=r"^Complex: "):
        tl.complex(tl.tensor([1.0]), z)


@pytest.mark.parametrize("mode", MODES)
def test_complex_gradients_match_central_differences(mode):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,))

    def loss(x, y):  # a real loss of complex intermediates: |z|^2, Re(z^2), Im(exp(z)), angle
        z = tl.complex(x, y)
        return tl.sum(tl.abs(z) ** 2 + tl.real(z * z) + tl.imag(tl.exp(z)) + tl.angle(z * (1 + 2j)))

    def ref(x, y):
        z = x + 1j * y
        return np.sum(np.abs(z) ** 2 + np.real(z * z) + np.imag(np.exp(z)) + np.angle(z * (1 + 2j)))

    gx, gy = _run(mode, tl.grad(loss, argnums=(0, 1)), tl.tensor(a), tl.tensor(b))
    np.testing.assert_allclose(gx.numpy(), central_differences(lambda v: ref(v, b), a), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gy.numpy(), central_differences(lambda v: ref(a, v), b), rtol=1e-7, atol=1e-8)
    assert gx.dtype == np.float64 and gy.shape == (3,)


def test_complex_second_order_and_forward_mode():
    a = np.array([0.3, -0.7])

    def f(x):  # Re((x + i x)^3) = -2 x^3: second derivative -12 x
        return tl.sum(tl.real(tl.complex(x, x) ** 3))

    np.testing.assert_allclose(tl.hessian(f)(tl.tensor(a)).numpy(), np.diag(-12 * a), rtol=1e-12)
    _, tangent = tl.jvp(
        lambda x, y: tl.complex(x, y), (tl.tensor(a), tl.tensor(a)), (tl.ones(2, "float64"), 2 * tl.ones(2, "float64"))
    )
    np.testing.assert_array_equal(tangent.numpy(), [1 + 2j, 1 + 2j])
    batched = tl.vmap(tl.complex, in_axes=(0, None))(tl.tensor(np.ones((4, 2))), tl.tensor(a))
    np.testing.assert_array_equal(batched.numpy(), np.broadcast_to(1 + 1j * a, (4, 2)))


def test_complex_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    a, b = np.array([0.4, -1.3]), np.array([2.0, 0.25])

    def jloss(x, y):
        z = jax.lax.complex(x, y)
        return jax.numpy.sum(jax.numpy.real(z * z * (1 - 3j)) + jax.numpy.abs(z))

    def loss(x, y):
        z = tl.complex(x, y)
        return tl.sum(tl.real(z * z * (1 - 3j)) + tl.abs(z))

    expected = jax.grad(jloss, argnums=(0, 1))(a, b)
    got = tl.grad(loss, argnums=(0, 1))(tl.tensor(a), tl.tensor(b))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=1e-12)


# ---------------------------------------------------------------- round of complex to decimals
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("decimals", [-2, -1, 1, 2, 3])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_round_of_complex_to_decimals_matches_numpy(mode, decimals, dtype):
    z = np.array([1.2345 + 2.3455j, -0.125 - 7.5j, np.inf + 1.005j, 12345.678 - 0.5j, np.nan + 1j]).astype(dtype)
    got = _run(mode, lambda t: tl.round(t, decimals), tl.tensor(z))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), np.round(z, decimals))
    np.testing.assert_array_equal(np.round(tl.tensor(z), decimals).numpy(), np.round(z, decimals))


# ---------------------------------------------------------------- Module: a Variable is not replaced by a Tensor
class _Affine(tl.Module):
    def __init__(self):
        super().__init__()
        self.w = tl.Variable([1.0, 2.0], name="w")
        self.layers = [tl.nn.Dense(2, 2, seed=0)]

    def forward(self, x):
        return x * self.w


@pytest.mark.parametrize("value", [lambda m: m.w * 2, lambda m: np.zeros(2), lambda m: 3.0])
def test_replacing_a_variable_attribute_by_a_non_variable_is_refused(value):
    # self.w = self.w * 2 made w a constant: it left variables, gradients, optimizers and checkpoints silently
    # (PyTorch refuses a Tensor in a Parameter's place the same way).
    m = _Affine()
    new = value(m)
    with pytest.raises(
        TypeError, match=r"^_Affine\.w: cannot replace the Variable 'w' \(shape \(2,\), float32\) by .*assign"
    ):
        m.w = new
    assert isinstance(m.w, tl.Variable) and m.w.numpy().tolist() == [1.0, 2.0]
    assert sorted(m.trainable_variables) == ["layers", "w"]


def test_a_variable_attribute_takes_a_variable_or_none_and_other_attributes_anything():
    m = _Affine()
    m.w.assign(m.w * 2)  # the way to update its value
    assert m.w.numpy().tolist() == [2.0, 4.0]
    m.w = tl.Variable([5.0], name="v")  # replacing the Variable itself
    assert m.trainable_variables["w"] is m.w
    m.w = None
    assert "w" not in m.variables
    m.w = tl.ones(2)  # no Variable there any more: a plain attribute
    m.scale = tl.ones(2)
    m.scale = 2.0
    assert m.scale == 2.0


# ---------------------------------------------------------------- optimizers train complex variables
def _complex_loss(w):
    return tl.sum(tl.abs(w * w - (1 + 1j)) ** 2)


def _numpy_complex_grad(z):
    # L = sum |z^2 - c|^2; steepest ascent in (x, y) is 2 * conj(dL/dz) with dL/dz = 2 conj(z^2 - c) z ... as
    # one complex number: dL/dx + i dL/dy = 4 conj(z) (z^2 - c).
    return 4 * np.conj(z) * (z * z - (1 + 1j))


def _train(opt, z0, steps, mode="eager"):
    w = tl.Variable(z0.copy())

    def step():
        with tl.GradientTape() as tape:
            loss = _complex_loss(w)
        opt.apply(tape.gradient(loss, [w]), [w])

    run = step if mode == "eager" else tl.function(step)
    for _ in range(steps):
        run()
    return w


Z0 = np.array([1 + 2j, -0.5 + 0.3j, 0.2 - 1j])


@pytest.mark.parametrize("mode", MODES)
def test_sgd_with_momentum_on_a_complex_variable_matches_the_numpy_formula(mode):
    # Refused before ("only float variables are trained"); PyTorch trains complex parameters as (real,
    # imaginary) pairs: z <- z - lr * (steepest-ascent direction), with momentum on the pairs.
    w = _train(tl.optimizers.SGD(0.05, momentum=0.9), Z0, 4, mode)
    z, buf = Z0.copy(), np.zeros_like(Z0)
    for _ in range(4):
        buf = 0.9 * buf + _numpy_complex_grad(z)
        z = z - 0.05 * buf
    np.testing.assert_allclose(w.numpy(), z, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_adam_on_a_complex_variable_matches_the_numpy_formula_on_the_pairs(mode):
    w = _train(tl.optimizers.Adam(0.05), Z0, 4, mode)
    x = np.stack([Z0.real, Z0.imag], -1)
    m, v = np.zeros_like(x), np.zeros_like(x)
    for t in range(1, 5):
        gz = _numpy_complex_grad(x[..., 0] + 1j * x[..., 1])
        g = np.stack([gz.real, gz.imag], -1)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g  # the second moment per part, not |g|^2
        x = x - 0.05 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    np.testing.assert_allclose(w.numpy(), x[..., 0] + 1j * x[..., 1], rtol=1e-10)


def test_complex_slots_are_real_pairs_and_checkpoint(tmp_path):
    opt = tl.optimizers.Adam(0.05)
    w = _train(opt, Z0.astype(np.complex64), 2)
    assert w.dtype == np.complex64
    slots = opt.variables["slots"]
    (named,) = slots.values()
    assert named["m"].shape == (3, 2) and named["m"].dtype == np.float32
    state = opt.state_dict()
    fresh = tl.optimizers.Adam(0.05)
    fresh.build([tl.Variable(Z0.astype(np.complex64))])
    fresh.load_state_dict(state)
    assert np.array_equal(list(fresh.variables["slots"].values())[0]["v"].numpy(), named["v"].numpy())


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("SGD", dict(momentum=0.9, nesterov=True)),
        ("Adam", dict(amsgrad=True)),
        ("AdamW", dict(weight_decay=0.1)),
        ("RMSprop", dict(momentum=0.5, centered=True)),
        ("Adagrad", {}),
        ("Adadelta", {}),
        ("RAdam", {}),
        ("Adamax", {}),
        ("NAdam", {}),
    ],
)
def test_optimizers_on_complex_variables_match_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    w = _train(getattr(tl.optimizers, name)(0.05, **kwargs), Z0, 5)
    p = torch.tensor(Z0.copy(), requires_grad=True)
    topt = getattr(torch.optim, name)([p], lr=0.05, **kwargs)
    for _ in range(5):
        topt.zero_grad()
        (torch.abs(p * p - (1 + 1j)) ** 2).sum().backward()
        topt.step()
    np.testing.assert_allclose(w.numpy(), p.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_an_integer_variable_is_still_refused():
    with pytest.raises(TypeError, match=r"^SGD.apply: variable 'n' has dtype int64; only float and complex"):
        tl.optimizers.SGD(0.1).apply([tl.tensor([1])], [tl.Variable(np.array([1]), name="n")])


# ---------------------------------------------------------------- max/min with where= and initial=: ties
@pytest.mark.parametrize("reduction", ["max", "min"])
def test_an_element_left_out_by_where_takes_no_share_of_a_tie(reduction):
    # Left-out elements were filled with initial: where initial equalled the extreme they tied with it and
    # took half its gradient, which the mask then dropped (max(where=, initial=3) of [1, 3, (3), 2] gave 0.25
    # to the kept 3, JAX 0.5: the other half goes to initial).  Reference: the one-sided derivatives of
    # t -> max(t * x) at t = 1 average to 1/2 * 3 here (JAX's convention: a tie splits evenly).
    sign = 1.0 if reduction == "max" else -1.0
    x = sign * np.array([1.0, 3.0, 3.0, 2.0])
    keep = np.array([True, True, False, True])
    f = getattr(tl, reduction)
    grad = tl.grad(lambda t: f(t, where=keep, initial=sign * 3.0))(tl.tensor(x)).numpy()
    np.testing.assert_array_equal(grad, [0.0, 0.5, 0.0, 0.0])
    value = f(tl.tensor(x), where=keep, initial=sign * 3.0)
    assert float(value) == getattr(np, reduction)(x, where=keep, initial=sign * 3.0)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "float32"])
def test_max_min_with_where_and_initial_match_numpy_for_every_dtype(dtype):
    rng = np.random.default_rng(3)
    x = (rng.integers(-5, 5, (4, 6)) if dtype != "bool" else rng.integers(0, 2, (4, 6))).astype(dtype)
    keep = rng.random((4, 6)) < 0.5
    keep[0] = False  # a row with nothing kept: initial alone
    initial = {"bool": True, "float32": 0.5}.get(dtype, 2)
    for name in ("max", "min"):
        got = getattr(tl, name)(tl.tensor(x), axis=1, where=keep, initial=initial)
        want = getattr(np, name)(x, axis=1, where=keep, initial=initial)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


# ---------------------------------------------------------------- ufunc.reduceat on Tensors
@pytest.mark.parametrize(
    "ufunc", [np.add, np.multiply, np.maximum, np.minimum, np.fmax, np.fmin, np.logical_and, np.logical_or]
)
@pytest.mark.parametrize("indices, axis", [([0, 2, 5], 1), ([3, 1, 2], 0), ([0], 0), ([5, 5], -1), ([], 1)])
def test_reduceat_matches_numpy(ufunc, indices, axis):
    # It raised "tensorlib has no implementation of numpy.add.reduceat for Tensors".
    a = np.arange(24.0).reshape(4, 6) - 7
    a[1, 2] = np.nan
    got = ufunc.reduceat(tl.tensor(a), indices, axis=axis)
    want = ufunc.reduceat(a, indices, axis=axis)
    assert isinstance(got, tl.Tensor) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_reduceat_gradient_traced_dtype_and_errors():
    t = tl.tensor(np.array([1.0, 4.0, 2.0, 3.0]))
    # rows: max(t[0:2]) = t1 (weight 1), t[2] alone as 2 >= 1 (weight 2), max(t[1:4]) = t1 (weight 3)
    g = tl.grad(lambda t: tl.sum(np.maximum.reduceat(t, [0, 2, 1]) * tl.tensor([1.0, 2.0, 3.0])))(t)
    np.testing.assert_array_equal(g.numpy(), [0.0, 4.0, 2.0, 0.0])
    np.testing.assert_array_equal(tl.function(lambda t: np.add.reduceat(t, [0, 2]))(t).numpy(), [5.0, 5.0])
    ints = np.add.reduceat(tl.tensor(np.arange(5)), tl.tensor([0, 3]), dtype=float)
    assert ints.dtype == np.float64 and ints.numpy().tolist() == [3.0, 7.0]
    with pytest.raises(IndexError, match=r"^numpy.add.reduceat: index 7 out-of-bounds .*\(x shape \(4,\), float64"):
        np.add.reduceat(t, [7])
    with pytest.raises(TypeError, match=r"^numpy.add.reduceat: .*indices float64"):
        np.add.reduceat(t, [0.5])


# ---------------------------------------------------------------- tl.functional_call (torch.func.functional_call)
def _mlp():
    return tl.nn.Sequential(
        tl.nn.Dense(2, 3, activation=tl.nn.tanh, dtype="float64", seed=0), tl.nn.Dense(3, 1, dtype="float64", seed=1)
    )


def _numpy_mlp(p, x):
    return np.tanh(x @ p["0.kernel"] + p["0.bias"]) @ p["1.kernel"] + p["1.bias"]


@pytest.mark.parametrize("mode", MODES)
def test_functional_call_is_a_function_of_the_values(mode):
    model, x = _mlp(), np.array([[0.3, -1.2], [2.0, 0.5]])
    rng = np.random.default_rng(1)
    values = {k: rng.standard_normal(v.shape) for k, v in model.state_dict().items()}
    before = model.state_dict()
    out = _run(
        mode, lambda v, x: tl.functional_call(model, v, x), {k: tl.tensor(v) for k, v in values.items()}, tl.tensor(x)
    )
    np.testing.assert_allclose(out.numpy(), _numpy_mlp(values, x), rtol=1e-12)
    for k, v in model.state_dict().items():  # the Variables are back
        np.testing.assert_array_equal(v, before[k])
    assert all(isinstance(v, tl.Variable) for v in tl.tree.leaves(model.variables))

    def loss(v):
        return tl.sum(tl.functional_call(model, v, tl.tensor(x)) ** 2)

    grads = tl.grad(loss)({k: tl.tensor(v) for k, v in values.items()})
    for k in values:
        eps, g = 1e-6, np.zeros_like(values[k])
        for i in np.ndindex(g.shape):
            up, down = ({**values, k: values[k].copy()} for _ in range(2))
            up[k][i] += eps
            down[k][i] -= eps
            g[i] = (np.sum(_numpy_mlp(up, x) ** 2) - np.sum(_numpy_mlp(down, x) ** 2)) / (2 * eps)
        np.testing.assert_allclose(grads[k].numpy(), g, rtol=1e-6, atol=1e-9)


def test_functional_call_nested_values_tied_weights_and_vmap():
    class Tied(tl.Module):
        def __init__(self):
            super().__init__()
            self.a = tl.Variable([1.0])
            self.parts = [self.a]
            self.by_name = {"k": self.a}

        def forward(self, x):
            return self.a * x + self.parts[0] * x + self.by_name["k"]

    tied = Tied()
    assert float(tl.functional_call(tied, {"a": tl.tensor([5.0])}, tl.tensor([1.0]))[0]) == 15.0  # every path
    assert float(tied(tl.tensor([1.0]))[0]) == 3.0
    model = _mlp()
    zeros = tl.functional_call(model, {"0": {"kernel": np.zeros((2, 3))}, "1.bias": [2.0]}, tl.ones((1, 2), "float64"))
    np.testing.assert_allclose(zeros.numpy(), [[2.0]])
    kernels = tl.tensor(np.arange(6.0).reshape(3, 2, 1))
    layer = tl.nn.Dense(2, 1, use_bias=False, dtype="float64", seed=0)
    per_kernel = tl.vmap(lambda w: tl.functional_call(layer, {"kernel": w}, tl.ones((1, 2), "float64")))(kernels)
    np.testing.assert_array_equal(per_kernel.numpy().ravel(), [1.0, 5.0, 9.0])


def test_functional_call_errors_name_the_variables_and_restore_them():
    model, x = _mlp(), tl.ones((1, 2), "float64")
    with pytest.raises(KeyError, match=r"has no Variable named \['0.weight'\]; its Variables: \['0.bias', '0.kernel'"):
        tl.functional_call(model, {"0.weight": np.zeros((2, 3))}, x)
    with pytest.raises(ValueError, match=r"'0.kernel' has shape \(3, 3\) \(float64\); the Variable has shape \(2, 3\)"):
        tl.functional_call(model, {"0.kernel": tl.zeros((3, 3), "float64")}, x)
    with pytest.raises(KeyError, match=r"strict=True and no value for \['1.bias', '1.kernel'\]"):
        tl.functional_call(model, {"0.kernel": np.zeros((2, 3)), "0.bias": np.zeros(3)}, x, strict=True)
    with pytest.raises(TypeError, match=r"needs a tl.Module"):
        tl.functional_call(lambda x: x, {}, x)
    with pytest.raises(ValueError):
        tl.functional_call(model, {"0.kernel": np.zeros((2, 3))}, tl.ones((1, 5), "float64"))  # the call fails
    assert isinstance(model.layers[0].kernel, tl.Variable)  # back in place after the error


# ---------------------------------------------------------------- pad (and signal.frame) with a tensor constant
@pytest.mark.parametrize("mode", MODES)
def test_pad_differentiates_in_a_tensor_constant(mode):
    # The constant was read as a number: its gradient was a silent 0 (JAX's lax.pad: the count of padded
    # places), and traced it raised "a symbolic tensor has no value".  signal.frame's pad_value too.
    x = tl.tensor(np.array([1.0, -2.0, 0.5]))
    weights = np.arange(1.0, 7.0)

    def f(x, c):
        return tl.sum(tl.pad(x, [(1, 2)], constant_values=c) * tl.tensor(weights))

    run = f if mode == "eager" else tl.function(f)
    value = run(x, tl.tensor(2.0, dtype="float64"))
    assert float(value) == np.sum(np.pad(x.numpy(), (1, 2), constant_values=2.0) * weights)
    gx, gc = (tl.grad(f, argnums=(0, 1)) if mode == "eager" else tl.function(tl.grad(f, argnums=(0, 1))))(
        x, tl.tensor(2.0, dtype="float64")
    )
    np.testing.assert_array_equal(gx.numpy(), weights[1:4])
    assert float(gc) == weights[0] + weights[4] + weights[5]
    signal = tl.tensor(np.arange(5.0))
    frames_grad = tl.grad(lambda p: tl.sum(tl.signal.frame(signal, 3, 2, pad_end=True, pad_value=p)))
    assert float(frames_grad(tl.tensor(2.0, dtype="float64"))) == 2.0  # frame [4, p, p]


def test_pad_with_a_tensor_constant_keeps_exact_values_and_refuses_lossy_ones():
    np.testing.assert_array_equal(
        tl.pad(tl.tensor([1.0, 2.0]), 1, constant_values=tl.tensor(np.inf)).numpy(), [np.inf, 1, 2, np.inf]
    )
    assert tl.pad(tl.tensor([1, 2]), 1, constant_values=tl.tensor(7)).numpy().tolist() == [7, 1, 2, 7]
    with pytest.raises(TypeError, match=r"^pad: constant_values .*cannot be held exactly by x's dtype int64"):
        tl.pad(tl.tensor([1, 2]), 1, constant_values=tl.tensor(7.5))
    with pytest.raises(
        TypeError, match=r"^pad: constant_values of dtype float32 cannot be held exactly by x's dtype int64"
    ):
        tl.function(lambda c: tl.pad(tl.tensor([1, 2]), 1, constant_values=c))(tl.tensor(7.0))


# ---------------------------------------------------------------- traced histogram of NaN or inf data
@pytest.mark.parametrize("data", [[1.0, np.nan, 2.0], [1.0, np.inf], [-np.inf, 0.0]])
def test_traced_histogram_of_non_finite_data_raises_as_eagerly(data):
    # Eagerly a ValueError (NumPy: 'autodetected range ... is not finite'); traced the edges were NaN and every
    # count a silent 0.  The data's min and max are now checked when the graph runs.
    x = tl.tensor(np.array(data))
    with pytest.raises(ValueError, match=r"^histogram: range must be finite"):
        tl.histogram(x, bins=3)
    with pytest.raises(ValueError, match=r"^histogram: the data's min and max \(the default range\) must be finite"):
        tl.function(lambda t: tl.histogram(t, bins=3))(x)
    counts, edges = tl.function(lambda t: tl.histogram(t, bins=3, range=(0, 3)))(x)  # a range given: NumPy's counts
    want = np.histogram(np.array(data), bins=3, range=(0, 3))
    np.testing.assert_array_equal(counts.numpy(), want[0])
    np.testing.assert_array_equal(edges.numpy(), want[1])


def test_traced_apply_along_axis_of_unknown_length_with_a_matrix_result():
    # Found by the catalogue's unknown-size test: the results' (None, None) shape went into a reshape, a
    # TypeError ('shape must be known integers') instead of the graph.  NumPy's values are the reference.
    spec = [tl.TensorSpec((None,), "float64")]
    f = tl.function(lambda a: tl.apply_along_axis(lambda v: tl.outer(v, v), 0, a), input_signature=spec)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(f(tl.tensor(x)).numpy(), np.apply_along_axis(lambda v: np.outer(v, v), 0, x))
    a = np.arange(24.0).reshape(2, 3, 4)
    for axis in (0, 1, 2):
        got = tl.apply_along_axis(lambda v: tl.outer(v, v[:2]), axis, tl.tensor(a))
        np.testing.assert_array_equal(got.numpy(), np.apply_along_axis(lambda v: np.outer(v, v[:2]), axis, a))


RNG = np.random.default_rng(12)


def _overlap_and_add_loop(frames, step):
    count, length = frames.shape[-2:]
    out = np.zeros(frames.shape[:-2] + (max((count - 1) * step + length, 0),))
    for i in range(count):
        out[..., i * step : i * step + length] += frames[..., i, :]
    return out


@pytest.mark.parametrize("lead", [(), (3,), (2, 2)])
@pytest.mark.parametrize("length, step", [(4, 2), (5, 2), (3, 3), (2, 5), (6, 4), (1, 1)])
def test_traced_overlap_and_add_with_an_unknown_frame_count_matches_a_loop(lead, length, step):
    # It was refused ("both known"): the scatter needs the frame count. TensorFlow's construction from pads and
    # reshapes needs only frame_length and frame_step, so one trace serves every frame count, 0 included.
    traced = tl.function(
        lambda f: tl.signal.overlap_and_add(f, step), input_signature=[tl.TensorSpec((*lead, None, length), tl.float64)]
    )
    for count in (0, 1, 2, 7):
        frames = RNG.standard_normal((*lead, count, length))
        np.testing.assert_allclose(traced(frames).numpy(), _overlap_and_add_loop(frames, step), rtol=1e-13, atol=1e-15)


def test_traced_inverse_stft_with_an_unknown_frame_count_and_its_gradient():
    step, length = 3, 8
    inverse = tl.function(
        lambda s: tl.signal.inverse_stft(s, length, step, 8), input_signature=[tl.TensorSpec((None, 5), tl.complex128)]
    )
    x = RNG.standard_normal(40)
    spec = tl.signal.stft(x, length, step, 8)
    np.testing.assert_allclose(
        inverse(spec).numpy(), tl.signal.inverse_stft(spec, length, step, 8).numpy(), rtol=1e-12, atol=1e-14
    )
    # The gradient of <overlap_and_add(frames), w> is w framed (frame is overlap_and_add's adjoint).
    frames = tl.Variable(RNG.standard_normal((6, 5)))
    w = RNG.standard_normal(5 * 3 + 5)

    @tl.function(input_signature=[tl.TensorSpec((None, 5), tl.float64)])
    def grad(f):
        with tl.GradientTape() as tape:
            tape.watch(f)
            loss = tl.sum(tl.signal.overlap_and_add(f, 3) * w)
        return tape.gradient(loss, f)

    np.testing.assert_allclose(grad(frames).numpy(), tl.signal.frame(w, 5, 3).numpy(), rtol=1e-13)


def test_overlap_and_add_with_unknown_frames_and_unknown_leading_axes_is_one_clear_error():
    traced = tl.function(
        lambda f: tl.signal.overlap_and_add(f, 2), input_signature=[tl.TensorSpec((None, None, 4), tl.float64)]
    )
    with pytest.raises(
        ValueError, match=r"overlap_and_add: .*unknown frame count and unknown leading axes.*\(None, None, 4\)"
    ):
        traced(np.ones((2, 3, 4)))


@pytest.mark.parametrize(
    "name, args", [("rayleigh", ()), ("invgamma", (0.7,)), ("invgamma", (1.0,)), ("invgamma", (2.5,))]
)
def test_densities_at_an_infinite_x_are_zero_not_nan(name, args):
    # rayleigh's log z - z**2 / 2 and invgamma's (a - 1) log y + 2 log y (y = 1 / z, a < 1) read inf - inf at x = inf;
    # the density's limit there is 0 (SciPy: 0 and -inf), and traced as eagerly.
    dist = getattr(tl.stats, name)
    x = np.array([np.inf, 1e300, 2.5, -np.inf, np.nan])
    for scale in (1.0, 2.0):
        logpdf = dist.logpdf(x, *args, scale=scale).numpy()
        pdf = dist.pdf(x, *args, scale=scale).numpy()
        traced = tl.function(lambda v, s=scale: dist.pdf(v, *args, scale=s))(x).numpy()
        assert logpdf[0] == -np.inf and logpdf[1] < -600 and np.isfinite(logpdf[2]) and logpdf[3] == -np.inf
        np.testing.assert_array_equal(pdf[[0, 1, 3]], 0.0)
        assert np.isnan(logpdf[4]) and np.isnan(pdf[4])
        np.testing.assert_allclose(pdf, np.exp(logpdf), rtol=1e-15)
        np.testing.assert_allclose(traced, pdf, rtol=1e-15)
    stats = pytest.importorskip("scipy.stats")
    np.testing.assert_allclose(dist.logpdf(x, *args).numpy(), getattr(stats, name).logpdf(x, *args), rtol=1e-13)


@pytest.mark.parametrize("code", [">f8", ">f4", ">f2", ">i4", ">i8", ">i2", ">u2", ">c16", ">c8", ">b1"])
def test_big_endian_arrays_are_taken_in_native_order_and_never_changed(code):
    # FITS files and some HDF5 files give big-endian arrays; tl.tensor, ops, Variables and traced functions refused
    # them ("dtype >f8 is not supported") where jnp.asarray and tf.constant take them. Values are NumPy's own.
    raw = np.arange(1, 7).reshape(2, 3) % 2 == 0 if code == ">b1" else np.arange(1, 7).reshape(2, 3)
    a = raw.astype(code)
    before = a.copy()
    native = a.astype(a.dtype.newbyteorder("="))
    expect = tl.tensor(native)
    for got in (
        tl.tensor(a),
        tl.Variable(a),
        tl.function(lambda x: tl.identity(x))(a),
        tl.add(a, tl.zeros_like(expect)),
    ):
        assert got.dtype == expect.dtype and got.numpy().dtype.isnative
        np.testing.assert_array_equal(got.numpy(), native)
    np.testing.assert_array_equal(a, before)
    assert a.dtype == before.dtype


def test_gradient_at_a_big_endian_point_is_the_native_one():
    a = np.array([0.5, 1.5, -2.0], dtype=">f8")
    g = tl.grad(lambda x: tl.sum(tl.sin(x) * x))(a).numpy()
    np.testing.assert_allclose(g, np.cos(a) * a + np.sin(a), rtol=1e-15)


def test_hessian_errors_name_hessian_not_the_jacobian_it_is_built_from():
    # tl.hessian(..., holomorphic=True) of a real output, or at a real point, said "tl.jacobian: ...", naming a
    # function the user did not call (DESIGN §5); the Hessian itself is unchanged.
    with pytest.raises(TypeError, match=r"^tl\.hessian: with holomorphic=True, f must return complex tensors"):
        tl.hessian(lambda z: tl.real(tl.sum(z * z)), holomorphic=True)(np.ones(2) + 0j)
    with pytest.raises(TypeError, match=r"^tl\.hessian: holomorphic=True differentiates with respect to complex"):
        tl.hessian(lambda z: tl.sum(z * z * z), holomorphic=True)(np.ones(2))
    with pytest.raises(ValueError, match=r"^tl\.hessian: argnums 3 out of range"):
        tl.hessian(lambda x: tl.sum(x), argnums=3)(np.ones(2))
    z = np.array([1 + 2j, -0.5 + 1j])
    h = tl.hessian(lambda v: tl.sum(v * v * v), holomorphic=True)(z).numpy()
    np.testing.assert_allclose(h, np.diag(6 * z), rtol=1e-15)
    with pytest.raises(TypeError, match=r"^tl\.jacobian: with holomorphic=True"):
        tl.jacobian(lambda v: tl.real(v), holomorphic=True)(z)


@pytest.mark.parametrize("traced", [False, True])
def test_jacfwd_of_an_f_that_assigns_refuses_before_changing_the_variable(traced):
    # jacfwd ran f once (assigning v), then tl.vmap refused the assign in its mapped runs: the error left v
    # changed by one run, and named tl.vmap.  Now it refuses naming tl.jacfwd with v as it was; tl.jacrev (one
    # run of f) still assigns once and gives the Jacobian 2 I.
    v = tl.Variable(np.zeros(2), name="acc")

    def f(x):
        v.assign_add(x)
        return x * 2.0

    g = tl.function(f) if traced else f
    with pytest.raises(ValueError, match=r"^tl\.jacfwd: f assigns Variable 'acc' \(shape \(2,\), float64\)"):
        tl.jacfwd(g)(np.ones(2))
    np.testing.assert_array_equal(v.numpy(), [0.0, 0.0])
    if not traced:  # (a traced assign_add reads v on jacrev's tape first, which its own rule refuses)
        np.testing.assert_array_equal(tl.jacrev(g)(np.ones(2)).numpy(), 2.0 * np.eye(2))
        np.testing.assert_array_equal(v.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(tl.jacfwd(lambda x: x * v)(np.array([3.0, 4.0])).numpy(), np.diag(v.numpy()))
