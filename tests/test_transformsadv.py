"""The function transforms attacked as a JAX user would use them: ``holomorphic=`` Jacobians and Hessians,
cotangents of integer outputs, ``tl.cond`` with a predicate per element of ``tl.vmap`` under reverse mode,
and JAX's ``Tensor.at[...]`` update methods under ``tl.grad`` and ``tl.vmap``.

References: NumPy formulas and float64 central finite differences (along the real axis for complex
derivatives) everywhere; JAX in float64 only behind ``pytest.importorskip``.
"""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(7)
Z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
W = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))


def _f_np(z):
    return np.sin(z) * (W @ z) + np.exp(z[0]) * z**2


def _f_tl(z):
    return tl.sin(z) * (W @ z) + tl.exp(z[0]) * z**2


def _complex_jacobian_fd(f, z, eps=1e-6):
    """``d f_i / d z_j`` of a holomorphic ``f`` by central differences along the real axis (float64)."""
    columns = []
    for j in range(z.size):
        e = np.zeros_like(z)
        e[j] = eps
        columns.append((f(z + e) - f(z - e)) / (2 * eps))
    return np.stack(columns, axis=-1)


# ---------------------------------------------------------------- holomorphic Jacobians and Hessians


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "jacobian"])
def test_holomorphic_jacobians_are_the_complex_derivative(transform):
    # jacfwd(f, holomorphic=True), JAX's spelling, was a TypeError (unexpected keyword argument).
    got = getattr(tl, transform)(_f_tl, holomorphic=True)(Z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got.numpy(), _complex_jacobian_fd(_f_np, Z), rtol=1e-7, atol=1e-8)


def test_holomorphic_hessian_is_the_second_complex_derivative():
    def s_np(z):
        return np.sum(_f_np(z))

    got = tl.hessian(lambda z: tl.sum(_f_tl(z)), holomorphic=True)(Z).numpy()
    first = lambda z: _complex_jacobian_fd(lambda u: np.atleast_1d(s_np(u)), z)[0]  # noqa: E731
    np.testing.assert_allclose(got, _complex_jacobian_fd(first, Z, eps=1e-4), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(complex(tl.hessian(lambda z: z**3, holomorphic=True)(tl.tensor(1 + 2j))), 6 + 12j)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
def test_holomorphic_refuses_real_arguments_and_real_outputs(transform):
    jac = getattr(tl, transform)
    with pytest.raises(
        TypeError, match=r"holomorphic=True differentiates with respect to complex inputs, got dtype float64"
    ):
        jac(lambda z: z * (1 + 1j), holomorphic=True)(Z.real)
    with pytest.raises(TypeError, match=r"with holomorphic=True, f must return complex tensors, got dtype float64"):
        jac(lambda z: tl.sum(tl.abs(z)), holomorphic=True)(Z)


def test_holomorphic_jacobians_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def f_jax(z):
        return jnp.sin(z) * (W @ z) + jnp.exp(z[0]) * z**2

    for ours, theirs in [(tl.jacfwd, jax.jacfwd), (tl.jacrev, jax.jacrev), (tl.hessian, jax.hessian)]:
        np.testing.assert_allclose(
            ours(_f_tl, holomorphic=True)(Z).numpy(), theirs(f_jax, holomorphic=True)(Z), rtol=1e-12
        )


# ---------------------------------------------------------------- cotangents of integer outputs


def _float0_zeros(shape):
    """JAX's float0 zeros (a NumPy void dtype of no bytes), without JAX."""
    return np.zeros(shape, dtype=[("float0", "V")])


def test_vjp_takes_float0_or_zero_cotangents_for_integer_and_bool_outputs():
    # A float0 cotangent (what JAX asks for an integer output) was "dtype [('float0', 'V')] is not supported".
    x = np.array([1.0, 2.0, -0.5])
    out, vjp_fn = tl.vjp(lambda v: (tl.sin(v) * v, tl.argmax(v), v > 1), x)
    want = np.sin(x) + x * np.cos(x)
    for ints in [(_float0_zeros(()), _float0_zeros(3)), (0, np.zeros(3, bool)), (np.int64(0), tl.zeros(3, "bool"))]:
        (g,) = vjp_fn((np.ones(3), *ints))
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)
    # A nonzero cotangent for an integer output was dropped silently; JAX refuses it too.
    with pytest.raises(TypeError, match=r"vjp_fn: output 1 is int64 \(shape \(\)\), which carries no gradient"):
        vjp_fn((np.ones(3), 2, np.zeros(3, bool)))
    with pytest.raises(ValueError, match=r"cotangent shape \(3,\) does not match output shape \(\)"):
        vjp_fn((np.ones(3), _float0_zeros(3), _float0_zeros(3)))


def test_vjp_float0_cotangents_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.array([1.0, 2.0, -0.5])
    _, ours = tl.vjp(lambda v: (v**3, tl.argmax(v)), x)
    _, theirs = jax.vjp(lambda v: (v**3, jax.numpy.argmax(v)), x)
    ct = (np.arange(3.0), np.zeros((), jax.dtypes.float0))
    np.testing.assert_allclose(ours(ct)[0].numpy(), theirs(ct)[0], rtol=1e-14)


# ---------------------------------------------------------------- control flow with a predicate per element of tl.vmap

A = np.array([0.5, -1.0, 2.0, 0.0, -3.0])
# d/da of cond(a > 0, sqrt(a), a): sqrt's derivative is infinite or NaN at the elements that take the other branch.
COND_DERIVATIVE = np.where(A > 0, 0.5 / np.sqrt(np.abs(A) + (A <= 0)), 1.0)


def _root_or_identity(a):
    return tl.cond(a > 0, tl.sqrt, lambda b: b * 1.0, a)


@pytest.mark.parametrize(
    "how",
    [
        "vmap(grad)",
        "grad(vmap)",
        "jacrev(vmap)",
        "jacfwd(vmap)",
        "traced vmap(grad)",
    ],
)
def test_cond_under_vmap_gives_gradients_of_the_branch_each_element_takes_not_nan(how):
    # Both branches run on every element and are selected; sqrt's backward at the negative elements that do not
    # take it made 0 * inf: NaN gradients where a loop over the elements (and JAX) give 1.
    if how == "vmap(grad)":
        got = tl.vmap(tl.grad(_root_or_identity))(A)
    elif how == "grad(vmap)":
        got = tl.grad(lambda x: tl.sum(tl.vmap(_root_or_identity)(x)))(A)
    elif how == "jacrev(vmap)":
        got = tl.diagonal(tl.jacrev(tl.vmap(_root_or_identity))(A))
    elif how == "jacfwd(vmap)":
        got = tl.diagonal(tl.jacfwd(tl.vmap(_root_or_identity))(A))
    else:
        got = tl.function(tl.vmap(tl.grad(_root_or_identity)))(A)
    np.testing.assert_allclose(got.numpy(), COND_DERIVATIVE, rtol=1e-14)


def test_switch_under_vmap_gives_gradients_of_the_branch_each_element_takes():
    # The elements of the third branch are at 0, where sqrt's and log's derivatives are infinite.
    index = np.array([0, 1, 2, 1, 2])
    x = np.where(index == 2, 0.0, np.abs(A) + 0.5)
    branches = [tl.sqrt, tl.log, lambda b: b**2 + b]
    got = tl.vmap(tl.grad(lambda i, a: tl.switch(i, branches, a), argnums=1))(index, x)
    safe = np.where(index == 2, 1.0, x)
    np.testing.assert_allclose(got.numpy(), np.choose(index, [0.5 / np.sqrt(safe), 1 / safe, 2 * x + 1]), rtol=1e-14)


def test_while_loop_under_vmap_gives_the_gradient_of_the_elements_that_stopped():
    # The body runs on every element while any goes on; sqrt(4 - c) has an infinite derivative at the element
    # that starts at 4 and never enters the loop, whose gradient 1 was NaN.
    x = np.array([0.5, 4.0, 1.5, 2.5])

    def loop(v):
        return tl.while_loop(lambda c: c < 2.0, lambda c: c + tl.sqrt(4.0 - c), v)

    def loop_np(v):
        while v < 2.0:
            v = v + np.sqrt(4.0 - v)
        return v

    eps = 1e-6
    want = [(loop_np(v + eps) - loop_np(v - eps)) / (2 * eps) for v in x]
    got = tl.grad(lambda v: tl.sum(tl.vmap(loop)(v)))(x)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(tl.vmap(tl.grad(loop))(x).numpy(), want, rtol=1e-6)


def test_cond_under_vmap_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def theirs(a):
        return jax.lax.cond(a > 0, jnp.sqrt, lambda b: b * 1.0, a)

    np.testing.assert_allclose(
        tl.vmap(tl.grad(_root_or_identity))(A).numpy(), jax.vmap(jax.grad(theirs))(A), rtol=1e-14
    )
    np.testing.assert_allclose(
        tl.grad(lambda x: tl.sum(tl.vmap(_root_or_identity)(x)))(A).numpy(),
        jax.grad(lambda x: jnp.sum(jax.vmap(theirs)(x)))(A),
        rtol=1e-14,
    )


# ---------------------------------------------------------------- JAX's Tensor.at[...] update methods


def _at_reference(x, index, values, how):
    """``x.at[index].<how>(values)`` with NumPy's unbuffered ``ufunc.at`` (repeated positions combine)."""
    out = np.array(x, dtype=np.result_type(x, 1.0) if how == "divide" else x.dtype)
    if how == "subtract":
        np.subtract.at(out, index, values)
    elif how == "multiply":
        np.multiply.at(out, index, values)
    elif how in ("min", "max"):
        (np.minimum if how == "min" else np.maximum).at(out, index, values)
    else:  # divide and power: by the product of the values at each position (JAX's scatter_mul of ones)
        product = np.ones_like(out)
        np.multiply.at(product, index, values)
        out = out / product if how == "divide" else out**product
    return out


AT_METHODS = ["subtract", "multiply", "divide", "power", "min", "max"]
AT_INDICES = [np.array([0, 3, 3, 1]), np.array([4, 4, 4, 4]), np.array([-1, 0, -1, 2]), np.array([2, 0, 1, 3])]


@pytest.mark.parametrize("how", AT_METHODS)
@pytest.mark.parametrize("index", AT_INDICES, ids=lambda i: str(i.tolist()))
def test_at_update_methods_combine_repeated_positions_as_numpy_ufunc_at(how, index):
    # x.at[i].multiply(v) (and divide, power, min, max, subtract: JAX's methods) was an AttributeError.
    rng = np.random.default_rng(len(how) + int(index.sum()))
    x, v = np.abs(rng.standard_normal((3, 5))) + 0.5, rng.standard_normal(4) + 1.5
    got = getattr(tl.tensor(x).at[1, index], how)(tl.tensor(v)).numpy()
    want = x.copy()
    want[1] = _at_reference(x[1], index, v, how)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    # the gradient of sum(sin(.)) with respect to both, against central differences
    gx, gv = tl.grad(lambda a, b: tl.sum(tl.sin(getattr(a.at[1, index], how)(b))), argnums=(0, 1))(x, v)

    def loss(a, b):
        out = a.copy()
        out[1] = _at_reference(a[1], index, b, how)
        return np.sum(np.sin(out))

    eps = 1e-6
    for got_grad, arg in [(gx, 0), (gv, 1)]:
        base = [x, v]
        numeric = np.zeros_like(base[arg])
        for k in range(numeric.size):
            step = np.zeros_like(base[arg])
            step.flat[k] = eps
            hi, lo = list(base), list(base)
            hi[arg], lo[arg] = base[arg] + step, base[arg] - step
            numeric.flat[k] = (loss(*hi) - loss(*lo)) / (2 * eps)
        np.testing.assert_allclose(got_grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("how", AT_METHODS)
def test_at_update_methods_under_vmap_with_indices_per_element_and_traced(how):
    rng = np.random.default_rng(3)
    xs, v = np.abs(rng.standard_normal((3, 5))) + 0.5, rng.standard_normal(4) + 1.5
    indices = np.stack(AT_INDICES[:3])
    got = tl.vmap(lambda a, i: getattr(a.at[i], how)(v))(xs, indices).numpy()
    want = np.stack([_at_reference(a, i, v, how) for a, i in zip(xs, indices)])
    np.testing.assert_allclose(got, want, rtol=1e-14)
    traced = tl.function(lambda a, i: getattr(a.at[i], how)(v))(xs[0], indices[0]).numpy()
    np.testing.assert_allclose(traced, want[0], rtol=1e-14)


def test_at_update_methods_on_integers_and_the_limit_of_unknown_positions():
    x = np.arange(6)
    for how in AT_METHODS:
        got = getattr(tl.tensor(x).at[[1, 1, 4]], how)(2).numpy()
        np.testing.assert_array_equal(got, _at_reference(x, [1, 1, 4], 2, how))
    many = np.zeros(3000, dtype=np.int64)
    with pytest.raises(ValueError, match=r"Tensor.at\[...\].multiply: 3000 updates at positions unknown until run"):
        tl.function(lambda a, i: a.at[i].multiply(2.0))(np.ones(4), many)
    np.testing.assert_allclose(
        tl.tensor(np.ones(4)).at[many].multiply(1.0009765625).numpy()[0], 1.0009765625**3000, rtol=1e-12
    )


def test_at_update_methods_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x, v = np.array([1.5, -2.0, 0.7, 3.0]), np.array([2.0, -0.5, 4.0])
    for how in AT_METHODS:
        index = np.array([1, 1, 3])
        xx = np.abs(x) if how == "power" else x
        ours = getattr(tl.tensor(xx).at[index], how)(v).numpy()
        np.testing.assert_allclose(ours, getattr(jnp.asarray(xx).at[index], how)(v), rtol=1e-14)
        index = np.array([2, 0, 1])  # JAX differentiates its scatter_mul only for indices declared unique
        ours = tl.grad(lambda a, b: tl.sum(tl.sin(getattr(a.at[index], how)(b))), argnums=(0, 1))(xx, v)
        theirs = jax.grad(
            lambda a, b: jnp.sum(jnp.sin(getattr(a.at[index], how)(b, unique_indices=True))), argnums=(0, 1)
        )(xx, v)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-12)


@pytest.mark.parametrize("how", ["set", "add", "subtract", "multiply", "min"])
def test_at_updates_take_python_numbers_in_the_tensor_s_dtype_not_float32_first(how):
    # x.at[0].set(0.1) on a float64 tensor stored 0.10000000149011612 (0.1 made float32, then cast), where NumPy
    # and JAX store 0.1: Python numbers are weak and take the tensor's dtype.
    x = np.array([1.0, 2.0, 3.0])
    for values in (0.1, [0.1, 0.3]):
        got = getattr(tl.tensor(x).at[:2] if isinstance(values, list) else tl.tensor(x).at[0], how)(values).numpy()
        want = x.copy()
        index = slice(0, 2) if isinstance(values, list) else 0
        want[index] = {"set": lambda a, v: v, "add": np.add, "subtract": np.subtract, "multiply": np.multiply}.get(
            how, np.minimum
        )(x[index], np.array(values))
        np.testing.assert_array_equal(got, want)
    complex_x = tl.tensor(x.astype(np.complex128))
    assert complex_x.at[1].set(0.1 + 0.7j).numpy()[1] == 0.1 + 0.7j
    # an int tensor still refuses what it cannot hold, past float32's precision too
    assert tl.tensor(np.zeros(2, np.int64)).at[0].set(16777217.0).numpy()[0] == 16777217
    with pytest.raises(TypeError, match=r"cannot be held exactly by the tensor's dtype int64"):
        tl.tensor(np.zeros(2, np.int64)).at[0].set(2.7)


@pytest.mark.parametrize("how", ["min", "max"])
def test_at_min_max_share_the_gradient_equally_between_the_element_and_tied_values(how):
    # DESIGN's tie rule, as one reduction over the element and every value at its position (JAX's scatter_min).
    x, v = np.array([1.0, 2.0]), np.array([1.0, 1.0, 5.0 if how == "min" else -5.0])
    gx, gv = tl.grad(lambda a, b: tl.sum(getattr(a.at[[0, 0, 1]], how)(b)), argnums=(0, 1))(x, v)
    np.testing.assert_allclose(gx.numpy(), [1 / 3, 1.0], rtol=1e-15)
    np.testing.assert_allclose(gv.numpy(), [1 / 3, 1 / 3, 0.0], rtol=1e-15)
