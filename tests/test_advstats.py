"""Adversarial checks of the stats, optimizer and transforms APIs: tl.stats.multivariate_normal's cdf at its
edges, tl.optimizers' parameter-group checks, tl.linear_transpose of non-linear functions, tl.all_gather's options.
References: SciPy, closed forms, float64 central differences; torch and JAX where installed (skipped if absent)."""

import numpy as np
import pytest
from scipy import stats

import tensorlib as tl

mvn = tl.stats.multivariate_normal


# ------------------------------------------------------------------ multivariate_normal.cdf / logcdf / logpdf
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # sqrt of the negative variances, before the factor
@pytest.mark.parametrize("method", ["cdf", "logcdf", "logpdf"])
def test_mvn_cov_not_positive_definite_names_the_method_shapes_and_dtype(method):
    cov = -np.eye(3, dtype=np.float32)
    with pytest.raises(np.linalg.LinAlgError, match=f"multivariate_normal.{method}: cov is not positive definite") as e:
        getattr(mvn, method)(np.zeros((2, 3), np.float32), 0.0, cov)
    message = str(e.value)
    assert "x shape (2, 3) float32" in message and "cov shape (3, 3) float32" in message, message
    with pytest.raises(np.linalg.LinAlgError, match="cov is not positive definite.*lower_limit shape"):
        mvn.cdf(np.zeros(3), 0.0, np.ones((3, 3)), lower_limit=np.full(3, -1.0))
    # SciPy refuses it too
    with pytest.raises(ValueError):
        stats.multivariate_normal.cdf(np.zeros(3), np.zeros(3), -np.eye(3))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_mvn_cdf_of_a_nan_is_nan(k):
    cov = 0.5 * np.eye(k) + 0.5
    for i in range(k):
        x = np.zeros(k)
        x[i] = np.nan
        assert np.isnan(mvn.cdf(x, 0.0, cov).numpy()) and np.isnan(mvn.logcdf(x, 0.0, cov).numpy())
        if k != 2:  # SciPy 1.17's bivariate branch returns 0 for a NaN; elsewhere it gives NaN as here
            assert np.isnan(stats.multivariate_normal.cdf(x, np.zeros(k), cov))
    assert np.isnan(mvn.cdf(np.zeros(k), np.full(k, np.nan), cov).numpy())
    # the finite rows of a batch keep their values
    x = np.zeros((2, k))
    x[0, 0] = np.nan
    got = mvn.cdf(x, 0.0, cov).numpy()
    assert np.isnan(got[0]) and abs(got[1] - 1.0 / (k + 1)) < 1e-5  # the equicorrelated orthant: 1 / (k + 1)


# ------------------------------------------------------------------ optimizers: settings that conflict
def _sgd_step(opt, *variables):
    opt.apply([tl.tensor(np.ones(v.shape)) for v in variables], list(variables))


def test_sgd_nesterov_without_momentum_is_refused_in_a_group_added_later():
    a, b = tl.Variable([1.0]), tl.Variable([1.0])
    opt = tl.optimizers.SGD([a], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=r"SGD.add_param_group: parameter group 1: nesterov=True needs a positive"):
        opt.add_param_group({"params": [b], "nesterov": True, "momentum": 0.0})
    assert len(opt.param_groups) == 1  # nothing added: b can join a valid group
    opt.add_param_group({"params": [b], "nesterov": True})  # the constructor's momentum 0.9
    # inherited dampening too: the constructor's 0.3 with a group's nesterov
    opt = tl.optimizers.SGD([a], lr=0.1, momentum=0.9, dampening=0.3)
    with pytest.raises(ValueError, match="parameter group 1: nesterov=True needs .* zero dampening"):
        opt.add_param_group({"params": [b], "nesterov": True})
    # a group of the constructor's list, and its group 0 overriding the defaults
    with pytest.raises(ValueError, match="SGD: parameter group 1: nesterov"):
        tl.optimizers.SGD([{"params": [a]}, {"params": [b], "nesterov": True}], lr=0.1)
    with pytest.raises(ValueError, match="SGD: parameter group 0: nesterov"):
        tl.optimizers.SGD([{"params": [a], "momentum": 0.0}], lr=0.1, momentum=0.9, nesterov=True)


@pytest.mark.parametrize("traced", [False, True])
def test_sgd_nesterov_made_invalid_through_param_groups_is_refused_at_the_step(traced):
    a, b = tl.Variable([1.0]), tl.Variable([2.0])
    opt = tl.optimizers.SGD([{"params": [a]}, {"params": [b], "momentum": 0.5}], lr=0.1, momentum=0.9, nesterov=True)
    step = tl.function(lambda: _sgd_step(opt, a, b)) if traced else (lambda: _sgd_step(opt, a, b))
    step()
    before = (a.numpy().copy(), b.numpy().copy())
    opt.param_groups[1]["momentum"] = 0.0
    with pytest.raises(ValueError, match="SGD.apply: parameter group 1: nesterov=True needs a positive momentum"):
        step()
    np.testing.assert_array_equal(a.numpy(), before[0])  # no variable changed
    np.testing.assert_array_equal(b.numpy(), before[1])
    opt.param_groups[1]["momentum"] = 0.5
    opt.param_groups[0]["dampening"] = 0.1
    with pytest.raises(ValueError, match="parameter group 0: nesterov=True needs .* zero dampening"):
        step()
    opt.param_groups[0]["nesterov"] = False
    step()  # valid again
    assert not np.array_equal(a.numpy(), before[0])


# ------------------------------------------------------------------ linear_transpose of non-linear functions
_SPEC = tl.TensorSpec((3,), "float64")


@pytest.mark.parametrize(
    "f",
    [tl.sin, lambda x: x * x, tl.nn.relu, tl.abs, lambda x: tl.exp(x) - 1.0, tl.stop_gradient],
    ids=["sin", "square", "relu", "abs", "expm1", "stop_gradient"],
)
def test_linear_transpose_of_a_non_linear_function_raises(f):
    # at zeros their vjps were the identity (sin, expm1) or 0: a silent wrong transpose; JAX raises for each
    with pytest.raises(ValueError, match="tl.linear_transpose: .* is not linear"):
        tl.linear_transpose(f, _SPEC)
    with pytest.raises(ValueError, match="is not linear"):
        tl.linear_transpose(lambda x, y: x * y, _SPEC, _SPEC)


def test_linear_transpose_of_linear_and_affine_functions_against_their_matrices():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    c = rng.standard_normal(300).astype(np.float32)
    f_t = tl.linear_transpose(lambda x: tl.tensor(a) @ x + 1e6, tl.TensorSpec((200,), "float32"))  # large constant
    np.testing.assert_allclose(f_t(tl.tensor(c))[0].numpy(), a.T @ c, rtol=1e-4, atol=1e-3)
    f_t = tl.linear_transpose(lambda x: tl.cumsum(3.0 * x - 100.0), tl.TensorSpec((50,), "float16"))
    np.testing.assert_allclose(f_t(tl.ones(50, dtype="float16"))[0].numpy(), 3.0 * np.arange(50, 0, -1), rtol=1e-2)
    # nested arguments and outputs, an integer output and a constant one
    f = lambda d: ({"s": d["x"] * 2.0 + d["y"], "t": tl.sum(d["y"])}, tl.argmax(d["x"]), tl.ones(2, dtype="float64"))
    f_t = tl.linear_transpose(f, {"x": _SPEC, "y": _SPEC})
    (got,) = f_t(
        ({"s": tl.tensor([1.0, 2.0, 3.0], "float64"), "t": tl.tensor(10.0, "float64")}, 0, tl.zeros(2, dtype="float64"))
    )
    np.testing.assert_allclose(got["x"].numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(got["y"].numpy(), [11.0, 12.0, 13.0])


@pytest.mark.parametrize("name", ["conj", "real", "imag", "scale"])
def test_linear_transpose_of_real_linear_complex_functions(name):
    # conj, real and imag are linear over the reals: JAX transposes them (ct -> conj(ct), ct + 0j, -1j * ct)
    f, expected = {
        "conj": (tl.conj, np.conj),
        "real": (tl.real, lambda c: c + 0j),
        "imag": (tl.imag, lambda c: -1j * c),
        "scale": (lambda x: x * (1 + 2j), lambda c: c * (1 + 2j)),
    }[name]
    c = np.array([1 + 2j, 3 - 1j, 0.5j]) if name in ("conj", "scale") else np.array([1.0, 3.0, -2.0])
    got = tl.linear_transpose(f, tl.TensorSpec((3,), "complex128"))(tl.tensor(c))[0].numpy()
    np.testing.assert_allclose(got, expected(c))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jf = {"conj": jax.numpy.conj, "real": jax.numpy.real, "imag": jax.numpy.imag, "scale": lambda x: x * (1 + 2j)}
    np.testing.assert_allclose(got, np.asarray(jax.linear_transpose(jf[name], np.zeros(3, complex))(c)[0]))


# ------------------------------------------------------------------ optimizers: resuming from torch.optim's state
_SHAPES = [(3,), (2, 2), (4,)]


def _grads(i, values):  # a gradient that depends on the parameters, as a real loss's does
    return [np.sin(v * (i + 1)) + 0.1 * v**2 for v in values]


_TORCH_CASES = {
    "sgd": ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01), None),
    "sgd_nesterov_groups": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True), [{"lr": 0.05, "momentum": 0.5}]),
    "adam": ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1), None),
    "adam_amsgrad_groups": ("Adam", dict(lr=0.01), [{"lr": 0.05, "amsgrad": True}]),
    "adamw": ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True, maximize=True), None),
    "rmsprop": ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1), None),
}


@pytest.mark.parametrize("case", sorted(_TORCH_CASES))
def test_load_torch_state_dict_resumes_as_torch_continues(case):
    torch = pytest.importorskip("torch")
    name, settings, more = _TORCH_CASES[case]
    rng = np.random.default_rng(0)
    params = [torch.nn.Parameter(torch.tensor(rng.standard_normal(s))) for s in _SHAPES]
    groups = [{"params": params[:2]}] + ([{"params": params[2:], **more[0]}] if more else [])
    if not more:
        groups[0]["params"] = params
    torch_opt = getattr(torch.optim, name)(groups, **settings)

    def torch_step(i):
        for p, g in zip(params, _grads(i, [p.detach().numpy() for p in params])):
            p.grad = torch.tensor(g)
        torch_opt.step()

    for i in range(5):
        torch_step(i)
    variables = [tl.Variable(p.detach().numpy().copy()) for p in params]
    ours = [{"params": variables[:2]}, {"params": variables[2:]}] if more else variables
    opt = getattr(tl.optimizers, name)(ours)  # its own defaults: every setting comes from torch's state
    opt.load_torch_state_dict(torch_opt.state_dict())
    for i in range(5, 11):
        torch_step(i)
        opt.apply([tl.tensor(g) for g in _grads(i, [v.numpy() for v in variables])])
    for p, v in zip(params, variables):
        np.testing.assert_allclose(v.numpy(), p.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_load_torch_state_dict_of_adam_by_hand_against_the_formula():
    # torch's format with NumPy arrays: no torch needed
    w = tl.Variable(np.array([1.0, -2.0]))
    m, v, g = np.array([0.1, -0.2]), np.array([0.01, 0.04]), np.array([0.5, 0.5])
    state = {
        "state": {0: {"step": np.float32(3.0), "exp_avg": m, "exp_avg_sq": v}},
        "param_groups": [{"lr": 0.1, "betas": (0.8, 0.9), "eps": 1e-8, "weight_decay": 0, "amsgrad": False,
                          "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                          "fused": None, "decoupled_weight_decay": False, "params": [0]}],
    }  # fmt: skip
    opt = tl.optimizers.Adam([w])
    opt.load_torch_state_dict(state)
    assert int(opt.iterations.numpy()) == 3 and opt.param_groups[0]["betas"] == (0.8, 0.9)
    opt.apply([tl.tensor(g)])
    m4, v4 = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g * g
    expected = np.array([1.0, -2.0]) - 0.1 * (m4 / (1 - 0.8**4)) / (np.sqrt(v4 / (1 - 0.9**4)) + 1e-8)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-14)


def test_load_torch_state_dict_refuses_what_does_not_fit_and_changes_nothing():
    a, b = tl.Variable(np.ones(3)), tl.Variable(np.ones(2))
    group = {"lr": 0.5, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "nesterov": False, "maximize": False}
    opt = tl.optimizers.SGD([a, b], lr=0.1, momentum=0.1)
    bad_shape = {"state": {1: {"momentum_buffer": np.ones(3)}}, "param_groups": [{**group, "params": [0, 1]}]}
    with pytest.raises(ValueError, match=r"parameter 1's 'momentum_buffer' has shape \(3,\).*needs \(2,\)"):
        opt.load_torch_state_dict(bad_shape)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["momentum"] == 0.1  # nothing was set
    with pytest.raises(ValueError, match=r"torch's groups hold \[1\] parameters, this optimizer's \[2\]"):
        opt.load_torch_state_dict({"state": {}, "param_groups": [{**group, "params": [0]}]})
    with pytest.raises(ValueError, match="made without them"):
        tl.optimizers.SGD(0.1).load_torch_state_dict({"state": {}, "param_groups": [{**group, "params": [0, 1]}]})
    with pytest.raises(ValueError, match="momentum must be >= 0"):
        opt.load_torch_state_dict({"state": {}, "param_groups": [{**group, "momentum": -1, "params": [0, 1]}]})
    with pytest.raises(ValueError, match=r"settings \['alpha'\] that SGD does not have"):
        opt.load_torch_state_dict({"state": {}, "param_groups": [{**group, "alpha": 0.9, "params": [0, 1]}]})
    with pytest.raises(ValueError, match="state 'exp_avg', which SGD does not keep"):
        opt.load_torch_state_dict(
            {"state": {0: {"exp_avg": np.ones(3)}}, "param_groups": [{**group, "params": [0, 1]}]}
        )
    adam = {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.1, "amsgrad": False, "params": [0]}
    with pytest.raises(ValueError, match="decoupled_weight_decay=True; load it into an AdamW"):
        tl.optimizers.Adam([a]).load_torch_state_dict(
            {"state": {}, "param_groups": [{**adam, "decoupled_weight_decay": True}]}
        )
    with pytest.raises(ValueError, match="decoupled_weight_decay=False; load it into an Adam"):
        tl.optimizers.AdamW([a]).load_torch_state_dict(
            {"state": {}, "param_groups": [{**adam, "decoupled_weight_decay": False}]}
        )
    with pytest.raises(NotImplementedError, match="and Adadelta, not of Lion"):
        tl.optimizers.Lion([a]).load_torch_state_dict({"state": {}, "param_groups": []})
    # a parameter torch kept no state for starts afresh; a schedule stays
    schedule = tl.optimizers.ExponentialDecay(0.3, 1, 0.5)
    opt = tl.optimizers.SGD([a, b], lr=schedule, momentum=0.9)
    opt.apply([tl.tensor(np.ones(3)), tl.tensor(np.ones(2))])
    opt.load_torch_state_dict(
        {"state": {0: {"momentum_buffer": np.full(3, 2.0)}}, "param_groups": [{**group, "params": [0, 1]}]}
    )
    assert opt.learning_rate is schedule
    np.testing.assert_array_equal(opt.variables["slots"]["1"]["momentum"].numpy(), np.zeros(2))
    np.testing.assert_array_equal(opt.variables["slots"]["0"]["momentum"].numpy(), np.full(3, 2.0))


# ------------------------------------------------------------------ collectives: all_gather's axis/tiled, tuples of names
_X = np.random.default_rng(1).standard_normal((3, 4, 2))


def _gathered(x, axis, tiled):  # NumPy's reference: every element sees the whole batch
    stacked = np.stack(list(x), axis=axis) if not tiled else np.concatenate(list(x), axis=axis)
    return np.broadcast_to(stacked, (x.shape[0], *stacked.shape))


@pytest.mark.parametrize(
    "axis, tiled", [(0, False), (1, False), (2, False), (-1, False), (0, True), (1, True), (-1, True)]
)
def test_all_gather_axis_and_tiled_against_numpy_and_jax(axis, tiled):
    gather = lambda r: tl.all_gather(r, "i", axis=axis, tiled=tiled)
    expected = _gathered(_X, axis, tiled)
    np.testing.assert_array_equal(tl.vmap(gather, axis_name="i")(tl.tensor(_X)).numpy(), expected)
    traced = tl.function(tl.vmap(gather, axis_name="i"), input_signature=[tl.TensorSpec((None, 4, 2), "float64")])
    np.testing.assert_array_equal(traced(_X).numpy(), expected)
    # the gradient of sum(w * gather(x)): each x[k] collects its weights from every element
    w = np.random.default_rng(2).standard_normal(expected.shape)
    got = tl.grad(lambda x: tl.sum(tl.tensor(w) * tl.vmap(gather, axis_name="i")(x)))(tl.tensor(_X)).numpy()
    flat = lambda x: np.sum(w * _gathered(x, axis, tiled))
    numeric = np.zeros_like(_X)
    for idx in np.ndindex(_X.shape):
        step = np.zeros_like(_X)
        step[idx] = 1e-6
        numeric[idx] = (flat(_X + step) - flat(_X - step)) / 2e-6
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    reference = jax.vmap(lambda r: jax.lax.all_gather(r, "i", axis=axis, tiled=tiled), axis_name="i")(_X)
    np.testing.assert_array_equal(expected, np.asarray(reference))


def test_all_gather_options_are_checked():
    run = lambda **kw: tl.vmap(lambda r: tl.all_gather(r, "i", **kw), axis_name="i")(tl.tensor(_X))
    with pytest.raises(ValueError, match=r"tl.all_gather: axis 3 is out of range for x of rank 2 with tiled=False"):
        run(axis=3)
    with pytest.raises(ValueError, match=r"axis -3 is out of range .* tiled=True \(from -2 to 1\)"):
        run(axis=-3, tiled=True)
    with pytest.raises(TypeError, match="tiled must be a bool"):
        run(tiled="yes")
    with pytest.raises(NotImplementedError, match="one named axis"):
        tl.vmap(tl.vmap(lambda r: tl.all_gather(r, ("i", "j")), axis_name="j"), axis_name="i")(tl.tensor(_X))


@pytest.mark.parametrize("name", ["psum", "pmean", "pmax", "pmin"])
def test_collectives_over_a_tuple_of_axis_names(name):
    reduce = {"psum": np.sum, "pmean": np.mean, "pmax": np.max, "pmin": np.min}[name]
    collective = getattr(tl, name)
    for names, axes in [(("i", "j"), (0, 1)), (("j", "i"), (0, 1)), (("j",), (1,)), ((), ())]:
        f = tl.vmap(tl.vmap(lambda x: collective(x, names) * x, axis_name="j"), axis_name="i")
        expected = reduce(_X, axis=axes, keepdims=True) * _X if axes else _X * _X
        np.testing.assert_allclose(f(tl.tensor(_X)).numpy(), expected, rtol=1e-13)
    # a vmap named by the tuple itself is that one axis
    got = tl.vmap(lambda x: collective(x, ("a", "b")), axis_name=("a", "b"))(tl.tensor(_X[:, 0, 0]))
    np.testing.assert_allclose(got.numpy(), np.full(3, reduce(_X[:, 0, 0])), rtol=1e-13)
    with pytest.raises(NameError, match="unbound axis name 'b'"):
        tl.vmap(lambda x: collective(x, ("a", "b")), axis_name="a")(tl.tensor([1.0, 2.0]))


def test_a_bad_setting_in_a_group_names_the_call_and_the_group():
    a, b = tl.Variable([1.0]), tl.Variable([1.0])
    opt = tl.optimizers.Adam([a], lr=0.1)
    with pytest.raises(ValueError, match=r"^Adam.add_param_group: parameter group 1: learning_rate must be >= 0"):
        opt.add_param_group({"params": [b], "lr": -1})
    with pytest.raises(ValueError, match=r"^Adam.add_param_group: parameter group 1: beta_1 must be in \[0, 1\)"):
        opt.add_param_group({"params": [b], "betas": (1.5, 0.9)})
    with pytest.raises(TypeError, match=r"^Adam.add_param_group: parameter group 1: amsgrad must be a bool"):
        opt.add_param_group({"params": [b], "amsgrad": "yes"})
    with pytest.raises(ValueError, match=r"^SGD: parameter group 1: momentum must be >= 0, got -1"):
        tl.optimizers.SGD([{"params": [a]}, {"params": [b], "momentum": -1}], lr=0.1)
    assert len(opt.param_groups) == 1
    opt.add_param_group({"params": [b], "lr": 0.5})  # b was not taken by the refused groups
