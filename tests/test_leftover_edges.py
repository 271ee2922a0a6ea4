"""Regression tests for defects an adversarial sweep left behind: integer results of arithmetic on
bools, floor division, lossy complex conversions, float16 accumulation, batch norm with one value per
channel, cyclic module trees, rank checks of indexing, and jacobians inside a persistent tape."""

import numpy as np
import pytest

import tensorlib as tl

MODES = ("eager", "traced")


def _run(mode, f, *args):
    return f(*args) if mode == "eager" else tl.function(f)(*args)


# ---------------------------------------------------------------- 1. arithmetic on bools gives integers
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "name, ref",
    [("power", np.power), ("remainder", np.remainder)],
)
def test_power_and_remainder_of_bools_give_integers_as_numpy(mode, name, ref):
    # NumPy gives int8 (held as int32 by tensorlib, JAX's int32); the rule said bool and the
    # kernel's int8 was a KernelResultError.
    x, y = np.array([True, False, True, False]), np.array([True, True, True, True])
    got = _run(mode, getattr(tl, name), x, y)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.numpy(), ref(x, y).astype(np.int32))


@pytest.mark.parametrize("mode", MODES)
def test_bool_tensor_operators_power_and_mod(mode):
    x = np.array([True, False])
    got = _run(mode, lambda a: (tl.tensor(a) ** a, tl.tensor(a) % tl.tensor([True, True])), x)
    np.testing.assert_array_equal(got[0].numpy(), [1, 1])
    np.testing.assert_array_equal(got[1].numpy(), [0, 0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["sign", "nn.relu"])
def test_sign_and_relu_of_bools_are_a_type_error_naming_the_op(mode, name):
    # NumPy and JAX refuse sign of bools; the error was NumPy's "ufunc 'sign' did not contain a loop".
    fn = tl.nn.relu if name == "nn.relu" else tl.sign
    op = "Relu" if name == "nn.relu" else "Sign"
    with pytest.raises(TypeError, match=rf"^{op}: .*bool"):
        _run(mode, fn, np.array([True, False]))


def test_power_and_remainder_of_bools_on_the_array_api_backend():
    pytest.importorskip("array_api_strict")
    x = tl.tensor(np.array([True, False]), backend="array_api_strict")
    one = tl.tensor(np.array([True, True]), backend="array_api_strict")
    assert (x**one).numpy().tolist() == [1, 0]
    assert tl.remainder(x, one).numpy().tolist() == [0, 0]
    assert (x**one).dtype == np.int32


# ---------------------------------------------------------------- 2. floor division
_NUMERATORS = np.array([7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 6.0, 1e-3])
_DIVISORS = np.array([2.0, 2.0, -2.0, 2.0, 3.0, -3.0, -3.0, -5.0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_floor_divide_rounds_toward_minus_infinity_as_numpy(mode, dtype):
    x, y = _NUMERATORS.astype(dtype), _DIVISORS.astype(dtype)
    got = _run(mode, tl.floor_divide, x, y)
    assert got.dtype == np.dtype(dtype)
    # Python's // on each pair is the independent reference.
    np.testing.assert_array_equal(got.numpy(), np.array([a // b for a, b in zip(x.tolist(), y.tolist())], dtype))


@pytest.mark.parametrize("mode", MODES)
def test_floordiv_and_divmod_operators(mode):
    x = np.array([7, -7, 8, -8])

    def f(a):
        a = tl.tensor(a)
        return a // 3, 20 // a, *divmod(a, 3), *divmod(20, a)

    got = [t.numpy().tolist() for t in _run(mode, f, x)]
    v = x.tolist()
    assert got == [
        [a // 3 for a in v],
        [20 // a for a in v],
        [a // 3 for a in v],
        [a % 3 for a in v],
        [20 // a for a in v],
        [20 % a for a in v],
    ]


@pytest.mark.parametrize("mode", MODES)
def test_floor_divide_keeps_weak_scalars_and_float32(mode):
    got = _run(mode, lambda a: tl.tensor(a) // 2.0, np.array([3.0, -3.0], np.float32))
    assert got.dtype == np.float32 and got.numpy().tolist() == [1.0, -2.0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_float_floor_division_by_zero_is_numpys(mode):
    x = np.array([1.0, -1.0, 0.0])
    with np.errstate(all="ignore"):
        want = np.floor_divide(x, 0.0)
    got = _run(mode, tl.floor_divide, x, np.zeros(3))
    np.testing.assert_array_equal(got.numpy(), want)  # inf, -inf, nan


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_integer_division_by_zero_gives_numpys_zero_and_warning(mode, name):
    # NumPy's names give NumPy's values: 0 with a RuntimeWarning (Python, TF and PyTorch raise instead).
    with pytest.warns(RuntimeWarning, match=f"divide by zero encountered in {name}"):
        got = _run(mode, getattr(tl, name), np.array([5, -5]), np.array([2, 0]))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(got.numpy(), getattr(np, name)(np.array([5, -5]), np.array([2, 0])))


def test_floor_divide_of_bools_is_an_integer():
    x = np.array([True, False])
    got = tl.floor_divide(x, np.array([True, True]))
    assert got.dtype == np.int32 and got.numpy().tolist() == [1, 0]


@pytest.mark.parametrize("mode", MODES)
def test_floor_divide_gradient_is_zero_as_jax(mode):
    x, y = tl.tensor([5.0, -5.0, 0.3]), tl.tensor([2.0, 2.0, 0.7])

    def grads(x, y):
        return tl.grad(lambda a, b: tl.sum(tl.floor_divide(a, b) * a), argnums=(0, 1))(x, y)

    gx, gy = _run(mode, grads, x, y)
    # d/da [floor(a / b) * a] = floor(a / b) (the floor contributes zero); d/db = 0.
    np.testing.assert_allclose(gx.numpy(), np.floor_divide(x.numpy(), y.numpy()))
    np.testing.assert_allclose(gy.numpy(), [0.0, 0.0, 0.0])


def test_floor_divide_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    x, y = np.array([5.0, -5.0, 0.3]), np.array([2.0, 2.0, 0.7])
    want = jax.grad(lambda a, b: (jax.numpy.floor_divide(a, b) * a).sum(), argnums=(0, 1))(x, y)
    got = tl.grad(lambda a, b: tl.sum(tl.floor_divide(a, b) * a), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-6)


def test_floor_divide_survives_a_graph_file(tmp_path):
    f = tl.function(lambda a, b: divmod(a, b))
    x, y = np.array([7.0, -7.0]), np.array([2.0, 2.0])
    f.get_graph(x, y).save(tmp_path / "g")
    loaded = tl.graph.load(tmp_path / "g")
    q, r = loaded(x, y)
    assert q.numpy().tolist() == [3.0, -4.0] and r.numpy().tolist() == [1.0, 1.0]


def test_floor_divide_on_the_array_api_backend():
    pytest.importorskip("array_api_strict")
    x = tl.tensor(np.array([7, -7]), backend="array_api_strict")
    assert (x // 2).numpy().tolist() == [3, -4]
    assert tl.floor_divide(x.numpy().astype(np.float64), -2.0).numpy().tolist() == [-4.0, 3.0]


def test_numpy_floor_divide_on_a_tensor_dispatches():
    got = np.floor_divide(tl.tensor([7.0, -7.0]), 2.0)
    assert isinstance(got, tl.Tensor) and got.numpy().tolist() == [3.0, -4.0]


# ---------------------------------------------------------------- 3. complex data made real
@pytest.mark.parametrize(
    "make",
    [
        lambda: tl.tensor(1j, dtype="float32"),
        lambda: tl.tensor([1j, 2.0], dtype="float64"),
        lambda: tl.tensor(np.array([1 + 1j]), dtype="float32"),
        lambda: tl.tensor(np.complex64(1 + 1j), dtype="int64"),
        lambda: tl.tensor(tl.tensor([1 + 1j]), dtype="float64"),
        lambda: tl.Variable(np.array([1 + 1j]), dtype="float64"),
        lambda: tl.full((2,), 1j, dtype="float32"),
        lambda: tl.full_like(tl.tensor([1.0]), 2j),
    ],
)
def test_making_a_real_tensor_of_complex_data_is_a_type_error(make):
    # NumPy (and tensorlib before) silently kept the real part; tf.constant(1j, dtype=float32) raises.
    with pytest.raises(TypeError, match=r"complex\d+ data cannot become \w+ without losing its imaginary part"):
        make()


def test_traced_tensor_of_complex_data_as_real_is_a_type_error():
    with pytest.raises(TypeError, match=r"^tensor: complex128 data cannot become float64"):
        tl.function(lambda z: tl.tensor(z, dtype="float64"))(np.array([1 + 1j]))


def test_assigning_complex_to_a_real_variable_is_refused_and_keeps_the_value():
    v = tl.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"complex128 does not match variable"):
        v.assign(np.array([1j, 2j]))
    assert v.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("mode", MODES)
def test_cast_takes_the_real_part_on_purpose_as_tf_cast(mode):
    z = np.array([1.5 + 2j, -3 - 1j])
    got = _run(mode, lambda a: tl.cast(a, "float32"), z)
    np.testing.assert_array_equal(got.numpy(), z.real.astype(np.float32))


def test_complex_data_stays_allowed_where_nothing_is_lost():
    assert tl.tensor([1j], dtype="complex128").dtype == np.complex128
    assert tl.tensor(np.array([1.0]), dtype="complex64").numpy().tolist() == [1 + 0j]
    assert tl.full((1,), 2.0, dtype="complex64").numpy().tolist() == [2 + 0j]


# ---------------------------------------------------------------- 4. float16 accumulates in float32
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reverse", [False, True])
def test_float16_cumsum_accumulates_in_float32(mode, reverse):
    x = np.full(5000, 0.1, np.float16)
    want = np.cumsum(x.astype(np.float32)).astype(np.float16)  # PyTorch's float16 cumsum: ~500, not 256
    f = (lambda a: tl.flip(tl.cumsum(tl.flip(a, 0)), 0)) if reverse else tl.cumsum
    got = _run(mode, f, x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.numpy(), want[::-1] if reverse else want)


@pytest.mark.parametrize("mode", MODES)
def test_float16_cumsum_gradient_accumulates_in_float32(mode):
    # d/dx_i sum(cumsum(x)) = n - i: float16 counting ones stopped at 2048.
    x = np.zeros(5000, np.float16)
    got = _run(mode, tl.grad(lambda a: tl.sum(tl.cumsum(a))), x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.numpy(), np.arange(5000, 0, -1).astype(np.float16))


@pytest.mark.parametrize("mode", MODES)
def test_float16_cumprod_does_not_overflow_where_the_running_product_does_not(mode):
    x = np.array([1e-3, 1e3, 1e3, 1e-3, 2.0], np.float16)
    got = _run(mode, tl.cumprod, x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.numpy(), np.cumprod(x.astype(np.float64)), rtol=2e-3)


def test_float16_cumsum_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.full(5000, 0.1, np.float16)
    np.testing.assert_allclose(tl.cumsum(x).numpy()[-1], torch.cumsum(torch.from_numpy(x), 0)[-1].item(), rtol=1e-3)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["sum", "mean", "prod"])
def test_float16_reductions_accumulate_in_float32(mode, name):
    x = np.full(5000, 0.1, np.float16) if name != "prod" else np.full(40, 1.1, np.float16)
    got = _run(mode, getattr(tl, name), x)
    want = getattr(np, name)(x.astype(np.float64))
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=1e-3)


# ---------------------------------------------------------------- 5. batch norm with one value per channel
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "shape, data_format", [((1, 3), "NHWC"), ((1, 1, 1, 3), "NHWC"), ((1, 3, 1, 1), "NCHW"), ((1, 3, 1), "NCHW")]
)
def test_batch_norm_layer_training_on_one_value_per_channel_raises(mode, shape, data_format):
    # Normalised with its own mean, each value became 0 (and the running variance 0 * n / 1):
    # PyTorch raises "Expected more than 1 value per channel when training".
    bn = tl.nn.BatchNorm(3, data_format=data_format)
    with pytest.raises(ValueError, match=r"^BatchNorm: expected more than 1 value per channel when training, got "):
        _run(mode, bn, np.ones(shape, np.float32))
    assert bn.running_mean.numpy().tolist() == [0.0] * 3 and bn.running_var.numpy().tolist() == [1.0] * 3


@pytest.mark.parametrize("mode", MODES)
def test_batch_norm_layer_inference_on_one_value_per_channel_stays_allowed(mode):
    bn = tl.nn.BatchNorm(2, epsilon=0.0)
    bn.eval()
    x = np.array([[3.0, -1.0]], np.float32)
    np.testing.assert_allclose(_run(mode, bn, x).numpy(), x)  # running mean 0, variance 1


def test_batch_norm_layer_traced_with_an_unknown_batch_size():
    # The Bessel factor n / (n - 1) multiplied None sizes: a TypeError when tracing with TensorSpec(None, C).
    bn = tl.nn.BatchNorm(2, momentum=1.0)
    f = tl.function(lambda x: bn(x), input_signature=[tl.TensorSpec((None, 2), "float32")])
    x = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]], np.float32)
    y = f(x)
    np.testing.assert_allclose(y.numpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), x.var(0, ddof=1), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("data_format, shape", [("NHWC", (1, 1, 1, 2)), ("NCHW", (1, 2, 1, 1))])
def test_fused_batch_norm_training_on_one_value_per_channel_raises(mode, data_format, shape):
    def f(x):
        return tl.nn.fused_batch_norm(x, np.ones(2, np.float32), np.zeros(2, np.float32), data_format=data_format)

    with pytest.raises(ValueError, match=r"FusedBatchNormV3: expected more than 1 value per channel when training"):
        _run(mode, f, np.ones(shape, np.float32))


def test_batch_norm_matches_torch_refusal():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        torch.nn.BatchNorm1d(3)(torch.ones(1, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        tl.nn.BatchNorm(3)(np.ones((1, 3), np.float32))


# ---------------------------------------------------------------- 6. cyclic module trees
class _Child(tl.Module):
    def __init__(self, parent):
        super().__init__()
        self.parent = parent  # a back-reference
        self.w = tl.Variable([1.0, 2.0], name="w")

    def forward(self, x):
        return x * self.w


class _Parent(tl.Module):
    def __init__(self):
        super().__init__()
        self.child = _Child(self)
        self.b = tl.Variable([0.5, 0.5], name="b")

    def forward(self, x):
        return self.child(x) + self.b


def test_repr_of_a_module_with_a_back_reference_shows_a_reference():
    # It recursed until RecursionError.
    assert repr(_Parent()) == "_Parent(\n  (child): _Child(\n    (parent): <back-reference to _Parent>\n  )\n)"


def test_tree_walks_of_a_module_with_a_back_reference_visit_each_once():
    p = _Parent()
    assert [type(m).__name__ for m in p.modules()] == ["_Parent", "_Child"]
    assert tl.tree.flatten_with_path(p.variables)[0] == [(("b",), p.b), (("child", "w"), p.child.w)]
    assert p.num_parameters() == 4


class _SelfList(tl.Module):
    def __init__(self):
        super().__init__()
        self.items = [tl.Variable([3.0])]
        self.items.append(self.items)  # a list holding itself
        self.parts = {"me": self, "v": tl.Variable([4.0])}


def test_containers_holding_themselves_or_the_module_end_the_walk():
    m = _SelfList()
    assert {k: sorted(v) for k, v in m.variables.items()} == {"items": ["0"], "parts": ["v"]}
    text = repr(m)
    assert "<back-reference to list>" in text and "<back-reference to _SelfList>" in text
    assert len(m.modules()) == 1


def test_checkpoint_round_trip_of_a_module_with_a_back_reference(tmp_path):
    pytest.importorskip("safetensors")
    p = _Parent()
    p.child.w.assign([7.0, 8.0])
    tl.save_variables(tmp_path / "c.safetensors", p)
    fresh = _Parent()
    tl.load_variables(tmp_path / "c.safetensors", fresh)
    assert fresh.child.w.numpy().tolist() == [7.0, 8.0]


def test_deepcopy_of_a_module_copies_its_variables_and_keeps_the_cycle():
    import copy

    # copy.deepcopy of any Module (or Tensor) raised "cannot pickle 'module' object" (the backend's xp).
    p = _Parent()
    q = copy.deepcopy(p)
    assert q.child.parent is q and q.child.w is not p.child.w
    assert q.child.w.name == "w" and q.child.w.numpy().tolist() == [1.0, 2.0]
    q.child.w.assign([0.0, 0.0])
    assert p.child.w.numpy().tolist() == [1.0, 2.0]
    np.testing.assert_allclose(q(tl.tensor([1.0, 1.0])).numpy(), [0.5, 0.5])


def test_tensors_and_variables_pickle_and_copy_as_new_values():
    import copy
    import pickle

    t = tl.tensor(np.array([1.0, 2.0]))
    for u in (copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
        assert u is not t and u.dtype == np.float64 and u.numpy().tolist() == [1.0, 2.0]
    v = tl.Variable([1.0], name="v", trainable=False)
    w = pickle.loads(pickle.dumps(v))
    assert isinstance(w, tl.Variable) and (w.name, w.trainable, w.numpy().tolist()) == ("v", False, [1.0])
    with tl.GradientTape() as tape:
        tape.watch(t)
        y = copy.deepcopy(t) * 2.0  # a copy is a new tensor: not watched with the original
    assert tape.gradient(y, t) is None


def test_deepcopy_of_a_symbolic_tensor_is_a_clear_error():
    import copy

    with pytest.raises(TypeError, match=r"symbolic tensor .* has no value while tl.function traces"):
        tl.function(lambda x: copy.deepcopy(x))(np.ones(2))
