"""The function transforms' leftovers attacked as a JAX user would use them: gradients of what a ``tl.cond``
or ``tl.while_loop`` branch reads from outside (closed-over tensors and Variables, values of enclosing
functions) under ``tl.vmap`` with a predicate per element, nested, inside ``tl.scan``, eager and traced.

References: closed-form derivatives in NumPy and float64 central finite differences everywhere; JAX in
float64 only behind ``pytest.importorskip``.
"""

import numpy as np
import pytest

import tensorlib as tl

# ---------------------------------------------------------------- closures of a per-element cond under vmap
# The untaken branch runs on every element; what it reads from outside must get no gradient from the elements
# that do not take it (JAX's rule), or sqrt of a negative there makes 0 * inf = NaN.

XS = np.array([1.0, -2.0, 4.0, -0.5])
C = -1.5


def _closure_cond_loss(x, c):
    return tl.sum(tl.vmap(lambda xi: tl.cond(xi > 0, lambda: xi * 2.0, lambda: tl.sqrt(c * xi)))(x))


def _closure_cond_grads_np(x, c):
    """d/dx and d/dc of sum(where(x > 0, 2 x, sqrt(c x))), each element by its own branch."""
    neg = x <= 0
    root = np.sqrt(np.where(neg, c * x, 1.0))
    gx = np.where(neg, c / (2 * root), 2.0)
    gc = np.sum(np.where(neg, x / (2 * root), 0.0))
    return gx, gc


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_cond_closure_under_vmap_gets_gradient_only_from_taken_elements(mode):
    grad = tl.grad(_closure_cond_loss, argnums=(0, 1))
    grad = tl.function(grad) if mode == "traced" else grad
    gx, gc = grad(tl.tensor(XS), tl.tensor(C, dtype="float64"))
    want_x, want_c = _closure_cond_grads_np(XS, C)
    np.testing.assert_allclose(gx.numpy(), want_x, rtol=1e-12)
    np.testing.assert_allclose(gc.numpy(), want_c, rtol=1e-12)


def test_cond_closure_under_vmap_of_grad():
    per = tl.grad(lambda xi, c: tl.cond(xi > 0, lambda: xi * 2.0, lambda: tl.sqrt(c * xi)), argnums=(0, 1))
    gx, gc = tl.vmap(per, in_axes=(0, None))(tl.tensor(XS), tl.tensor(C, dtype="float64"))
    neg = XS <= 0
    root = np.sqrt(np.where(neg, C * XS, 1.0))
    np.testing.assert_allclose(gx.numpy(), np.where(neg, C / (2 * root), 2.0), rtol=1e-12)
    np.testing.assert_allclose(gc.numpy(), np.where(neg, XS / (2 * root), 0.0), rtol=1e-12)


def test_cond_closed_over_variable_under_vmap():
    v = tl.Variable(np.array(C))
    with tl.GradientTape() as tape:
        y = tl.sum(tl.vmap(lambda xi: tl.cond(xi > 0, lambda: xi * 2.0, lambda: tl.sqrt(v * xi)))(tl.tensor(XS)))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), _closure_cond_grads_np(XS, C)[1], rtol=1e-12)


def test_cond_closure_over_the_mapped_value_itself():
    # The branch closes over the mapped element (no operands): log of a negative on the other elements.
    def loss(x):
        return tl.sum(tl.vmap(lambda xi: tl.cond(xi > 0, lambda: tl.log(xi), lambda: xi**2))(x))

    g = tl.grad(loss)(tl.tensor(XS)).numpy()
    np.testing.assert_allclose(g, np.where(XS > 0, 1 / np.where(XS > 0, XS, 1.0), 2 * XS), rtol=1e-12)


def test_nested_cond_closures_under_vmap():
    def loss(x, c):
        def per(xi):
            def inner():
                return tl.cond(xi > 2.0, lambda: tl.log(xi - 2.0), lambda: tl.sqrt(-c * (2.0 - xi)))

            return tl.cond(xi > 0, inner, lambda: tl.sqrt(c * xi))

        return tl.sum(tl.vmap(per)(x))

    xs = np.array([3.0, 1.0, -2.0, 5.0])
    gx, gc = tl.grad(loss, argnums=(0, 1))(tl.tensor(xs), tl.tensor(C, dtype="float64"))
    fd_x = _central_differences(lambda x: float(loss(tl.tensor(x), tl.tensor(C, dtype="float64"))), xs)
    fd_c = _central_differences(lambda cc: float(loss(tl.tensor(xs), tl.tensor(cc[0]))), np.array([C]))
    np.testing.assert_allclose(gx.numpy(), fd_x, rtol=1e-6)
    np.testing.assert_allclose(gc.numpy(), fd_c[0], rtol=1e-6)


def test_cond_closure_inside_scan_under_vmap():
    def loss(x, c):
        def per(xi):
            def body(carry, _):
                return carry + tl.cond(carry > 0, lambda: tl.log(carry), lambda: tl.sqrt(c * carry)), None

            return tl.scan(body, xi, tl.arange(3))[0]

        return tl.sum(tl.vmap(per)(x))

    xs = np.array([1.5, -2.0, 4.0, -0.5])
    c = tl.tensor(C, dtype="float64")
    gx, gc = tl.grad(loss, argnums=(0, 1))(tl.tensor(xs), c)
    fd_x = _central_differences(lambda x: float(loss(tl.tensor(x), c)), xs)
    fd_c = _central_differences(lambda cc: float(loss(tl.tensor(xs), tl.tensor(cc[0]))), np.array([C]))
    np.testing.assert_allclose(gx.numpy(), fd_x, rtol=1e-6)
    np.testing.assert_allclose(gc.numpy(), fd_c[0], rtol=1e-6)


@pytest.mark.parametrize("form", ["eager", "traced bounded", "traced unbounded"])
def test_while_body_closure_under_vmap(form):
    # Each element steps s += sqrt(c (s - 3)) while s < 3; the elements that stopped run the body too.
    bound = 6 if form == "traced bounded" else None

    def loss(x, c):
        def per(xi):
            return tl.while_loop(lambda s: s < 3.0, lambda s: s + tl.sqrt(c * (s - 3.0)), xi, maximum_iterations=bound)

        return tl.sum(tl.vmap(per)(x))

    grad = tl.grad(loss, argnums=(0, 1))
    grad = grad if form == "eager" else tl.function(grad)
    xs = np.array([1.0, 2.5, 4.0])
    gx, gc = grad(tl.tensor(xs), tl.tensor(C, dtype="float64"))
    want_x, want_c = _while_grads_np(xs, C)
    np.testing.assert_allclose(gx.numpy(), want_x, rtol=1e-10)
    np.testing.assert_allclose(gc.numpy(), want_c, rtol=1e-10)


def _while_grads_np(xs, c):
    """Forward-mode by hand for s += sqrt(c (s - 3)) while s < 3, per element: (ds/dx, ds/dc) summed over c."""
    gx, gc = [], 0.0
    for s in xs:
        ds_dx, ds_dc = 1.0, 0.0
        while s < 3.0:
            r = np.sqrt(c * (s - 3.0))
            ds_dx, ds_dc = ds_dx + c * ds_dx / (2 * r), ds_dc + ((s - 3.0) + c * ds_dc) / (2 * r)
            s = s + r
        gx.append(ds_dx)
        gc += ds_dc
    return np.array(gx), gc


def _central_differences(f, x, eps=1e-6):
    out = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        out.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.array(out)


def test_cond_closures_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss_j(x, c):
        return jnp.sum(jax.vmap(lambda xi: jax.lax.cond(xi > 0, lambda: xi * 2.0, lambda: jnp.sqrt(c * xi)))(x))

    want = jax.grad(loss_j, argnums=(0, 1))(XS, C)
    got = tl.grad(_closure_cond_loss, argnums=(0, 1))(tl.tensor(XS), tl.tensor(C, dtype="float64"))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-12)


# ---------------------------------------------------------------- a traced update read on a recording tape
# Eagerly, v.assign_add(d) is no read of v a tape records (it would forbid the update itself), and later reads
# are reads of the updated v.  A tl.function doing the same, called under a tape, was refused at its assign.

D = np.array([1.0, -2.0])


def _updated_square(v):
    v.assign_add(D)
    return tl.sum(v * v)


def _downdated_result(v):
    return tl.sum(v.assign_sub(D) * 3.0)


@pytest.mark.parametrize(
    ("fn", "value", "grad"),
    [
        (_updated_square, lambda v: np.sum((v + D) ** 2), lambda v: 2 * (v + D)),
        (_downdated_result, lambda v: 3 * np.sum(v - D), lambda v: np.full_like(v, 3.0)),
    ],
)
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_update_then_read_on_a_recording_tape(fn, value, grad, mode):
    start = np.array([1.5, 2.0])
    v = tl.Variable(start)
    f = tl.function(fn) if mode == "traced" else fn
    with tl.GradientTape() as tape:
        out = f(v)
    np.testing.assert_allclose(out.numpy(), value(start), rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(out, v).numpy(), grad(start), rtol=1e-12)
    np.testing.assert_allclose(v.numpy(), start + (D if fn is _updated_square else -D), rtol=1e-12)


def test_traced_update_gives_its_delta_no_gradient_as_eagerly():
    x = tl.tensor(np.array([1.0, 1.0]))
    for f in (lambda v, x: (v.assign_add(x * 2.0), tl.sum(v * v))[1],) * 2:
        f = tl.function(f)
        v = tl.Variable(np.array([1.0, 2.0]))
        with tl.GradientTape() as tape:
            tape.watch(x)
            out = f(v, x)
        gv, gx = tape.gradient(out, [v, x])
        np.testing.assert_allclose(gv.numpy(), [6.0, 8.0])
        assert gx is None


def test_traced_update_after_a_recorded_read_is_refused_naming_the_update():
    v = tl.Variable(np.array([1.5, 2.0]))

    @tl.function
    def f(v):
        before = tl.sum(v)
        v.assign_add(D)
        return before + tl.sum(v * v)

    with tl.GradientTape() as tape, pytest.raises(RuntimeError, match="Variable.assign_add: .* still recording"):
        f(v)
    del tape
    np.testing.assert_array_equal(v.numpy(), [1.5, 2.0])


def test_saved_graph_keeps_the_update(tmp_path):
    v = tl.Variable(np.array([1.5, 2.0]))
    graph = tl.function(_updated_square).get_graph(v)
    graph.save(tmp_path / "g")
    loaded = tl.graph.load(tmp_path / "g")
    assert "how='assign_add'" in str(loaded)
    w = tl.Variable(np.array([0.5, 1.0]))
    with tl.GradientTape() as tape:
        out = loaded(v=w, D=D)
    np.testing.assert_allclose(out.numpy(), np.sum((np.array([0.5, 1.0]) + D) ** 2))
    np.testing.assert_allclose(tape.gradient(out, w).numpy(), 2 * (np.array([0.5, 1.0]) + D))


def test_loading_an_assign_with_a_foreign_how_is_refused(tmp_path):
    from tensorlib.graph import GraphFormatError

    v = tl.Variable(np.array([1.5, 2.0]))
    tl.function(lambda v: (v.assign_add(tl.ones(2, dtype="float64")), tl.sum(v))[1]).get_graph(v).save(tmp_path / "g")
    path = tmp_path / "g"
    path.write_text(path.read_text().replace('"assign_add"', '"assign_mul"'))
    with pytest.raises(GraphFormatError, match="AssignVariable.*how=assign"):
        tl.graph.load(path)


# ---------------------------------------------------------------- tl.grad(allow_int=True): float0 gradients

FLOAT0 = np.dtype([("float0", np.void, 0)])


def test_grad_allow_int_gives_float0_zeros_for_integer_and_bool_arguments():
    x, n = np.array([2.0, 3.0]), np.array([3, 2])
    gx, gn = tl.grad(lambda x, n: tl.sum(x**n), argnums=(0, 1), allow_int=True)(tl.tensor(x), tl.tensor(n))
    np.testing.assert_allclose(gx.numpy(), n * x ** (n - 1))
    assert gn.dtype == FLOAT0 and gn.shape == (2,)
    g = tl.grad(lambda p: tl.sum(p["x"] * tl.cast(p["k"], "float64")), allow_int=True)(
        {"x": tl.tensor(x), "k": np.array([True, False])}
    )
    np.testing.assert_allclose(g["x"].numpy(), [1.0, 0.0])
    assert g["k"].dtype == FLOAT0 and g["k"].shape == (2,)
    value, g = tl.value_and_grad(lambda n: tl.cast(n, "float64") * 2.0, allow_int=True)(tl.tensor(3))
    assert float(value) == 6.0 and g.dtype == FLOAT0 and g.shape == ()


def test_grad_of_an_integer_without_allow_int_is_refused():
    with pytest.raises(TypeError, match="tl.grad: cannot differentiate with respect to argument 0 of dtype int64"):
        tl.grad(lambda n: n * 1.0)(tl.tensor(3))
    with pytest.raises(TypeError, match="tl.value_and_grad: allow_int must be a bool, got 1"):
        tl.value_and_grad(lambda n: n * 1.0, allow_int=1)


def test_grad_allow_int_matches_jax_float0():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    got = tl.grad(lambda x, n: tl.sum(x**n), argnums=(0, 1), allow_int=True)(tl.tensor([2.0, 3.0]), tl.tensor([3, 2]))
    want = jax.grad(lambda x, n: jax.numpy.sum(x**n), argnums=(0, 1), allow_int=True)(
        jax.numpy.array([2.0, 3.0]), jax.numpy.array([3, 2])
    )
    np.testing.assert_allclose(got[0].numpy(), np.asarray(want[0]), rtol=1e-6)
    assert got[1].dtype == want[1].dtype == jax.dtypes.float0 and got[1].shape == want[1].shape


# ---------------------------------------------------------------- tl.linear_transpose

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 4))
ZA = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))


def _linear(x, z):
    return tl.tensor(A) @ x, {"s": tl.tensor(ZA) @ z, "c": tl.cumsum(x)}


def _linear_np_transpose(ct):
    y, rest = ct
    # The transpose, not the conjugate transpose, for the complex part (JAX's linear_transpose).
    return A.T @ y + np.cumsum(rest["c"][::-1])[::-1], ZA.T @ rest["s"]


@pytest.mark.parametrize("given", ["arrays", "specs"])
def test_linear_transpose_is_the_matrix_transpose(given):
    primals = (
        (np.zeros(4), np.zeros(3, complex))
        if given == "arrays"
        else (tl.TensorSpec((4,), "float64"), tl.TensorSpec((3,), "complex128"))
    )
    f_t = tl.linear_transpose(_linear, *primals)
    ct = (RNG.standard_normal(3), {"c": RNG.standard_normal(4), "s": RNG.standard_normal(2) + 1j})  # keys reordered
    got = f_t(ct)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, _linear_np_transpose(ct)):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)


def test_linear_transpose_of_an_affine_function_is_its_linear_parts():
    f_t = tl.linear_transpose(lambda x: 2.0 * x + 1.0, np.zeros(3))
    np.testing.assert_allclose(f_t(np.array([1.0, 2.0, 3.0]))[0].numpy(), [2.0, 4.0, 6.0])


def test_linear_transpose_refuses_wrong_cotangents_and_integer_primals():
    f_t = tl.linear_transpose(lambda x: x * 3.0, np.zeros(2))
    with pytest.raises(
        TypeError, match=r"tl.linear_transpose: the cotangent .* expected \(float64\[2\]\), got \(float32"
    ):
        f_t(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"expected \(float64\[2\]\), got \(float64\[3\]\)"):
        f_t(np.ones(3))
    with pytest.raises(
        TypeError, match=r"tl.linear_transpose: primal 0 .* float or complex dtype, got shape \(2,\) int64"
    ):
        tl.linear_transpose(lambda x: x, np.zeros(2, np.int64))
    with pytest.raises(TypeError, match=r"primal 0 must give a known shape"):
        tl.linear_transpose(lambda x: x, tl.TensorSpec((None,), "float64"))


def test_linear_transpose_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def f_j(x, z):
        return jnp.asarray(A) @ x, {"s": jnp.asarray(ZA) @ z, "c": jnp.cumsum(x)}

    ct = (RNG.standard_normal(3), {"s": RNG.standard_normal(2) + 2j, "c": RNG.standard_normal(4)})
    want = jax.linear_transpose(f_j, np.zeros(4), np.zeros(3, complex))(ct)
    got = tl.linear_transpose(_linear, np.zeros(4), np.zeros(3, complex))(ct)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-12)


# ---------------------------------------------------------------- reductions of a 0-d tensor along an axis
# NumPy: the ufunc reductions (sum, max, any, argmax, cumsum, nan*...) take an int axis 0 or -1 of a 0-d array;
# mean, var, std, average, median, quantile (and nanmedian, nanquantile) raise AxisError, and a tuple of axes
# raises everywhere.  tl.mean answered, tl.median crashed with an IndexError naming nothing, and
# tl.mean(x, axis=(0,)) failed in the Sum kernel.

REDUCTIONS = [
    "sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "cumsum", "cumprod", "ptp", "count_nonzero",
    "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
    "mean", "var", "std", "average", "median", "nanmedian",
    "quantile", "percentile", "nanquantile", "nanpercentile",
]  # fmt: skip


@pytest.mark.parametrize("axis", [-1, 0, 1, (0,), (), None])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_of_a_0d_tensor_along_an_axis_follow_numpy(name, axis):
    q = {"quantile": (0.5,), "nanquantile": (0.5,), "percentile": (50,), "nanpercentile": (50,)}.get(name, ())
    if name in ("argmax", "argmin", "cumsum", "cumprod") and isinstance(axis, tuple):
        return  # an int-only axis argument: a TypeError in both
    x = np.array(2.5)
    try:
        want = getattr(np, name)(x, *q, axis=axis)
    except np.exceptions.AxisError:
        with pytest.raises(ValueError, match=rf"(?i){name}\b.*: axis -?\d is out of range for a tensor of rank 0"):
            getattr(tl, name)(tl.tensor(x), *q, axis=axis)
        return
    got = getattr(tl, name)(tl.tensor(x), *q, axis=axis)
    np.testing.assert_allclose(got.numpy(), want)
    assert got.shape == np.shape(want)


def test_a_0d_mean_along_an_axis_is_refused_when_traced_too():
    f = tl.function(lambda x: tl.mean(x, axis=-1))
    with pytest.raises(ValueError, match="Mean: axis -1 is out of range for a tensor of rank 0"):
        f(tl.tensor(2.5))


# ---------------------------------------------------------------- vmap axis_name= and the collectives (jax.lax's)

XB = RNG.standard_normal((4, 3))
WB = RNG.standard_normal(3)
COLLECTIVES = {
    "psum": lambda p: p.sum(0),
    "pmean": lambda p: p.mean(0),
    "pmax": lambda p: p.max(0),
    "pmin": lambda p: p.min(0),
    "all_gather": lambda p: p,
}


def _times_each(name, collected, p):
    """What ``vmap(lambda x: collective(x) * x)`` gives per element, in NumPy (a gathered stack times x broadcasts)."""
    return np.stack([collected * row for row in p])


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collectives_over_the_named_axis(name):
    coll = getattr(tl, name)
    got = tl.vmap(lambda x: coll(x, "i") * x, axis_name="i")(tl.tensor(XB))
    np.testing.assert_allclose(got.numpy(), _times_each(name, COLLECTIVES[name](XB), XB), rtol=1e-12)
    # An argument the same for every element: the batch of copies of it.
    got = tl.vmap(lambda x, w: coll(w, "i") + x, in_axes=(0, None), axis_name="i")(tl.tensor(XB), tl.tensor(WB))
    copies = COLLECTIVES[name](np.stack([WB] * 4))
    want = copies[None] + XB[:, None] if name == "all_gather" else copies + XB
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    traced = tl.function(tl.vmap(lambda x: coll(x, "i") * x, axis_name="i"))(tl.tensor(XB))
    np.testing.assert_allclose(traced.numpy(), _times_each(name, COLLECTIVES[name](XB), XB), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collectives_of_nested_vmaps_name_their_axis(name):
    coll = getattr(tl, name)
    outer = tl.vmap(lambda r: tl.vmap(lambda e: coll(e, "i") * e, axis_name="j")(r), axis_name="i")(tl.tensor(XB))
    inner = tl.vmap(lambda r: tl.vmap(lambda e: coll(e, "j") * e, axis_name="j")(r), axis_name="i")(tl.tensor(XB))
    if name == "all_gather":  # element (r, c) gathers column c (over "i") or row r (over "j")
        want_outer, want_inner = np.einsum("ic,rc->rci", XB, XB), np.einsum("rj,rc->rcj", XB, XB)
    else:
        want_outer = COLLECTIVES[name](XB)[None, :] * XB
        want_inner = np.stack([COLLECTIVES[name](row) for row in XB])[:, None] * XB
    np.testing.assert_allclose(outer.numpy(), want_outer, rtol=1e-12)
    np.testing.assert_allclose(inner.numpy(), want_inner, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_gradient_of_vmap_through_a_collective(name):
    coll = getattr(tl, name)

    def loss(x, w):
        return tl.sum(tl.vmap(lambda xi: tl.sin(coll(xi * w, "i")) * xi, axis_name="i")(x))

    def loss_np(x, w):
        return np.sum(_times_each(name, np.sin(COLLECTIVES[name](x * w)), x))

    gx, gw = tl.grad(loss, argnums=(0, 1))(tl.tensor(XB), tl.tensor(WB))
    np.testing.assert_allclose(
        gx.numpy(), _central_differences(lambda x: loss_np(x, WB), XB).reshape(XB.shape), rtol=1e-6
    )
    np.testing.assert_allclose(gw.numpy(), _central_differences(lambda w: loss_np(XB, w), WB), rtol=1e-6)


def test_axis_index_of_nested_vmaps():
    got = tl.vmap(
        lambda r: tl.vmap(lambda e: e * tl.axis_index("i") + tl.axis_index("j"), axis_name="j")(r), axis_name="i"
    )(tl.tensor(XB))
    np.testing.assert_allclose(got.numpy(), XB * np.arange(4)[:, None] + np.arange(3)[None, :])
    assert tl.vmap(lambda x: tl.axis_index("i"), axis_name="i")(tl.tensor(XB)).dtype == np.int64


def test_batch_norm_written_with_pmean_matches_the_batch_formula():
    def normalized(x):
        centered = x - tl.pmean(x, "b")
        return centered / tl.sqrt(tl.pmean(centered**2, "b"))

    got = tl.vmap(normalized, axis_name="b")(tl.tensor(XB))
    np.testing.assert_allclose(got.numpy(), (XB - XB.mean(0)) / XB.std(0), rtol=1e-12)
    g = tl.grad(lambda x: tl.sum(tl.vmap(normalized, axis_name="b")(x) * tl.tensor(WB)))(tl.tensor(XB))
    fd = _central_differences(lambda x: np.sum((x - x.mean(0)) / x.std(0) * WB), XB).reshape(XB.shape)
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-5, atol=1e-8)


def test_collectives_refuse_an_unbound_name_and_a_tape_inside_the_mapped_function():
    with pytest.raises(NameError, match=r"tl.psum: unbound axis name 'i'.*tl.vmap\(\.\.\., axis_name='i'\)"):
        tl.psum(tl.tensor(1.0), "i")
    with pytest.raises(NameError, match=r"tl.pmax: unbound axis name 'k'.*mapped here: \['i'\]"):
        tl.vmap(lambda x: tl.pmax(x, "k"), axis_name="i")(tl.tensor(XB))
    with pytest.raises(
        NotImplementedError, match="tl.psum: a GradientTape opened inside the function mapped by tl.vmap"
    ):
        tl.vmap(tl.grad(lambda x: tl.sum(x * tl.psum(x, "i"))), axis_name="i")(tl.tensor(XB))
    with pytest.raises(TypeError, match="tl.vmap: axis_name must be hashable, got list"):
        tl.vmap(lambda x: x, axis_name=["i"])


@pytest.mark.parametrize("name", ["psum", "pmean", "all_gather"])
def test_collectives_match_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    coll, coll_j = getattr(tl, name), getattr(jax.lax, name)
    got = tl.grad(
        lambda x: tl.sum(tl.vmap(lambda r: tl.vmap(lambda e: coll(e * e, "i") * e, axis_name="j")(r), axis_name="i")(x))
    )
    want = jax.grad(
        lambda x: jnp.sum(
            jax.vmap(lambda r: jax.vmap(lambda e: coll_j(e * e, "i") * e, axis_name="j")(r), axis_name="i")(x)
        )
    )
    np.testing.assert_allclose(got(tl.tensor(XB)).numpy(), np.asarray(want(XB)), rtol=1e-10)


def test_collectives_with_a_batch_size_unknown_until_run():
    spec = [tl.TensorSpec((None, 3), "float64")]
    f = tl.function(tl.vmap(lambda x: tl.psum(x, "i") * x, axis_name="i"), input_signature=spec)
    np.testing.assert_allclose(f(XB).numpy(), XB.sum(0) * XB, rtol=1e-12)
    g = tl.function(tl.vmap(lambda x: x * tl.axis_index("i"), axis_name="i"), input_signature=spec)
    with pytest.raises(ValueError, match="tl.axis_index: the size of the tl.vmap axis 'i' is unknown"):
        g(XB)


# ---------------------------------------------------------------- a Python number from one branch of tl.cond
# Eagerly one branch runs, so cond(p, lambda: x, lambda: 0.0) works for a float64 x; traced and under tl.vmap
# (both branches) the weak 0.0 met x's dtype and was refused as float32.  It takes the other branch's dtype.


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("number_first", [False, True])
@pytest.mark.parametrize("mode", ["traced", "vmap"])
def test_cond_python_number_branch_takes_the_other_branchs_dtype(dtype, number_first, mode):
    x = np.array([1.5, -2.0, 3.0], dtype=dtype)

    def per(v):
        strong, weak = (lambda: v * 2.0), (lambda: 0.5)
        return tl.cond(v > 0, weak, strong) if number_first else tl.cond(v > 0, strong, weak)

    if mode == "vmap":
        got = tl.vmap(per)(tl.tensor(x))
        grad = tl.grad(lambda v: tl.sum(tl.vmap(per)(v)))(tl.tensor(x))
    else:
        run = tl.function(lambda v: tl.stack([per(v[i]) for i in range(3)]))
        got = run(tl.tensor(x))
        grad = tl.function(tl.grad(lambda v: tl.sum(tl.stack([per(v[i]) for i in range(3)]))))(tl.tensor(x))
    taken = (x > 0) != number_first  # where the strong branch 2 v is taken
    np.testing.assert_allclose(got.numpy(), np.where(taken, 2 * x, 0.5))
    assert got.dtype == dtype and grad.dtype == dtype
    np.testing.assert_allclose(grad.numpy(), np.where(taken, 2.0, 0.0))


def test_cond_python_number_of_another_kind_is_still_refused():
    with pytest.raises(
        TypeError, match=r"tl.cond: true_fn and false_fn must return the same structure.*int64\[\].*float32\[\]"
    ):
        tl.vmap(lambda v: tl.cond(v > 0, lambda: v, lambda: 0.5))(tl.tensor(np.array([1, -2])))
