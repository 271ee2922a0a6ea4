"""Contract: gradient rules and kernels are checked, kernel errors name the op, numerics at edges (issue 7, 5/6/8)."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.dispatch import KernelResultError
from tensorlib.grad.backprop import GradientRuleError

_counter = iter(range(10**6))


def _op(infer=lambda x: x, inputs=("x",), kernel=lambda x: x * 2.0):
    op = tl.ops.defop(f"ContractOp{next(_counter)}", inputs=inputs, infer=infer)
    op.kernel("numpy")(kernel)
    return op


# ---------------------------------------------------------------- point 5: rule outputs are checked


def _grad_of(op, x):
    return tl.grad(lambda v: tl.sum(op(v)))(x)


def test_a_rule_of_the_wrong_shape_names_op_input_site_and_shapes():
    op = _op()
    tl.grad.register_gradient(op.name, lambda node, g: tl.ones((3,), dtype="float64"))
    with pytest.raises(
        GradientRuleError,
        match=rf"^gradient of {op.name} for input 'x' \(shape \(2,\) float64\): "
        r"got shape \(3,\), expected \(2,\); rule defined at "
        r".*test_contracts_rules.py:\d+$",
    ):
        _grad_of(op, tl.tensor(np.ones(2)))


def test_a_rule_with_fewer_dimensions_than_its_input_is_an_error_not_an_index_error():
    op = _op()
    tl.grad.register_gradient(op.name, lambda node, g: tl.sum(g))
    with pytest.raises(GradientRuleError, match=r"got shape \(\), expected \(1,\)"):
        _grad_of(op, tl.tensor(np.ones(1)))


def test_a_rule_that_sums_back_is_accepted_and_reduced():
    op = _op()
    # (2, 3) sums back to (1, 3): the engine reduces it, as for broadcasting ops
    tl.grad.register_gradient(op.name, lambda node, g: tl.ones((2, 3), dtype="float64"))
    np.testing.assert_array_equal(_grad_of(op, tl.tensor(np.ones((1, 3)))).numpy(), [[2.0, 2.0, 2.0]])


@pytest.mark.parametrize(
    "bad,message",
    [
        (lambda node, g: np.ones(2), r"got ndarray .*, expected a Tensor or None"),
        (lambda node, g: 1.0, r"got float 1.0, expected a Tensor or None"),
        (lambda node, g: tl.cast(g, "int64"), r"got dtype int64, expected a float dtype \(float64\)"),
    ],
)
def test_a_rule_returning_a_non_tensor_or_an_integer_is_an_error(bad, message):
    op = _op()
    tl.grad.register_gradient(op.name, bad)
    with pytest.raises(GradientRuleError, match=message):
        _grad_of(op, tl.tensor(np.ones(2)))


def test_override_rules_are_checked_too():
    with tl.grad.override({"Exp": lambda node, g: tl.ones((5,), dtype="float64")}):
        with pytest.raises(GradientRuleError, match=r"^gradient of Exp for input 'x'.*got shape \(5,\), expected"):
            tl.grad(lambda v: tl.sum(tl.exp(v)))(tl.tensor(np.ones(2)))


def test_custom_gradient_of_the_wrong_shape_names_grad_fn():
    @tl.custom_gradient
    def f(x):
        return x * 1.0, lambda dy: tl.tensor([1.0, 2.0, 3.0])

    for shape in [(2,), (1,)]:
        with pytest.raises(
            GradientRuleError,
            match=rf"^gradient of CustomGradient for input 'inputs\[0\]' "
            rf"\(shape \({shape[0]},\) float32\): got shape \(3,\), "
            r"expected .*test_contracts_rules.py:\d+$",
        ):
            tl.grad(lambda x: tl.sum(f(x)))(tl.ones(shape))


def test_custom_gradient_without_grad_fn_is_a_clear_error():
    @tl.custom_gradient
    def f(x):
        return x * 1.0

    for call in (lambda: f(tl.ones((2,))), lambda: tl.grad(lambda x: tl.sum(f(x)))(tl.ones((2,)))):
        with pytest.raises(
            TypeError,
            match=r"^custom_gradient: .*f must return \(outputs, grad_fn\) with a callable "
            r"grad_fn, got Tensor of shape \(2,\)$",
        ):
            call()


@pytest.mark.parametrize(
    "fn,message",
    [
        (3, r"must be a function fn\(node, \*output_grads\), got int 3"),
        (lambda g: g, r"cannot be: it takes fewer than two positional arguments"),
        (lambda node, g, *, scale: g, r"it requires keyword arguments \['scale'\]"),
    ],
)
def test_register_gradient_rejects_non_callables_and_wrong_arity(fn, message):
    op = _op()
    with pytest.raises(TypeError, match=rf"^register_gradient\('{op.name}'\): the gradient for input 'x' .*{message}"):
        tl.grad.register_gradient(op.name, fn)
    with pytest.raises(TypeError, match=rf"^override\('{op.name}'\): the gradient for input 'x'"):
        with tl.grad.override({op.name: (fn,)}):
            pass
    assert op.name not in tl.grad.registry.rules


def test_variadic_rules_must_take_index():
    op = tl.ops.defop(f"ContractVariadic{next(_counter)}", inputs=("xs",), infer=lambda *xs: xs[0], variadic=True)
    with pytest.raises(TypeError, match=r"it has no index= parameter"):
        tl.grad.register_gradient(op.name, lambda node, g: g)
    tl.grad.register_gradient(op.name, lambda node, g, index: g)


# ---------------------------------------------------------------- point 5: kernel results are checked


@pytest.mark.parametrize(
    "kernel,got",
    [
        (lambda x: None, "None"),
        (lambda x: x[:1], r"shape \(1,\) float64"),
        (lambda x: x.reshape(1, 2), r"shape \(1, 2\) float64"),
    ],
)
def test_a_kernel_disagreeing_with_its_shape_rule_names_op_and_kernel(kernel, got):
    op = _op(kernel=kernel)
    with pytest.raises(
        KernelResultError,
        match=rf"^{op.name}: kernel .*<lambda> returned {got}, but the op's shape "
        r"rule gives shape \(2,\) float64$",
    ):
        op(tl.tensor(np.ones(2)))


def test_a_multi_output_kernel_is_checked_per_output():
    op = _op(infer=lambda x: (x, x), kernel=lambda x: (x, x[:1]))
    with pytest.raises(
        KernelResultError,
        match=r"returned shape \(1,\) float64, but the op's shape rule gives shape "
        r"\(2,\)",
    ):
        op(tl.tensor(np.ones(2)))
    op2 = _op(infer=lambda x: (x, x), kernel=lambda x: (x,))
    with pytest.raises(KernelResultError, match=r"returned 1 results, but the op's shape rule gives 2 outputs"):
        op2(tl.tensor(np.ones(2)))


# ---------------------------------------------------------------- point 6: one error path for kernels


@pytest.mark.parametrize(
    "call,error,message",
    [
        (
            lambda: tl.tensor([True]) - tl.tensor([False]),
            TypeError,
            r"^Sub: numpy boolean subtract.* \(inputs x: shape \(1,\) bool, y: shape \(1,\) bool\)$",
        ),
        (
            lambda: tl.max(tl.tensor(np.zeros(0))),
            ValueError,
            r"^Max: zero-size array.* \(inputs x: shape \(0,\) float64\)$",
        ),
        (
            lambda: tl.argmax(tl.tensor(np.zeros(0))),
            ValueError,
            r"^ArgMax: .*empty.* \(inputs x: shape \(0,\) float64\)$",
        ),
        (
            lambda: tl.tensor([2]) ** -1,
            ValueError,
            r"^Pow: Integers to negative integer powers are not allowed. \(inputs x: shape \(1,\) int64, y: shape \(\) int64\)$",
        ),
        (lambda: tl.zeros((-1,)), ValueError, r"^full: negative dimension in shape \(-1,\)$"),
        (
            lambda: tl.reshape(tl.tensor(np.zeros(6)), (-2, -3)),
            ValueError,
            r"^Reshape: negative dimension in \(-2, -3\)",
        ),
        (lambda: tl.tile(tl.tensor(np.zeros(2)), -1), ValueError, r"^Tile: reps \(-1,\) must not be negative"),
        (lambda: tl.split(tl.tensor(1.0), 2), ValueError, r"^SplitV: cannot split a 0-d tensor"),
        (
            lambda: tl.take(tl.tensor(1.0), tl.tensor([0]), axis=0),
            ValueError,
            r"^GatherV2: cannot take along an axis of a 0-d",
        ),
        (lambda: tl.concat([tl.tensor(1.0), tl.tensor(2.0)], 0), ValueError, r"^ConcatV2: cannot concatenate of a 0-d"),
        (lambda: tl.one_hot(tl.tensor([1]), -3), ValueError, r"^OneHot: depth must not be negative, got -3"),
    ],
)
def test_kernel_and_shape_errors_name_the_op_and_inputs(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_user_kernel_error_is_reraised_once_naming_op_and_inputs():
    def broken(x):
        raise KeyError("missing")

    op = _op(kernel=broken)
    with pytest.raises(KeyError, match=rf"{op.name}: 'missing' \(inputs x: shape \(2,\) float64\)") as info:
        op(tl.tensor(np.ones(2)))
    assert isinstance(info.value.__cause__, KeyError)


def test_a_kernel_error_with_an_unusual_constructor_becomes_a_runtime_error():
    class Odd(Exception):
        def __init__(self, a, b):
            super().__init__(f"{a}/{b}")

    def broken(x):
        raise Odd(1, 2)

    op = _op(kernel=broken)
    with pytest.raises(RuntimeError, match=rf"^{op.name}: 1/2 \(inputs x: shape \(2,\) float64\)$"):
        op(tl.tensor(np.ones(2)))


def test_kernel_errors_are_named_under_observers_too():
    from tensorlib.profiler import Profile

    with Profile():
        with pytest.raises(ValueError, match=r"^Max: zero-size array"):
            tl.max(tl.tensor(np.zeros(0)))
        op = _op(kernel=lambda x: x[:1])
        with pytest.raises(KernelResultError, match=r"returned shape \(1,\) float64"):
            op(tl.tensor(np.ones(2)))


# ---------------------------------------------------------------- point 8: numerics at edges


def test_second_derivative_of_x_to_the_zero_at_zero_is_zero():
    d2 = tl.grad(tl.grad(lambda x: x**0.0))(tl.tensor(0.0, dtype="float64"))
    assert d2.numpy().item() == 0.0
    d1 = tl.grad(lambda x: x**0.0)(tl.tensor(0.0, dtype="float64"))
    assert d1.numpy().item() == 0.0
    # away from the edge, x ** 2 keeps its exact derivatives
    assert tl.grad(tl.grad(lambda x: x**2.0))(tl.tensor(0.0, dtype="float64")).numpy().item() == 2.0
    assert tl.grad(tl.grad(lambda x: x**3.0))(tl.tensor(2.0, dtype="float64")).numpy().item() == 12.0


def test_std_gradient_at_zero_spread_is_zero():
    g = tl.grad(lambda x: tl.std(x))(tl.tensor([2.0, 2.0, 2.0], dtype="float64"))
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0])
    g = tl.grad(lambda x: tl.sum(tl.std(x, axis=1)))(tl.tensor([[1.0, 1.0], [1.0, 3.0]], dtype="float64"))
    np.testing.assert_allclose(g.numpy(), [[0.0, 0.0], [-0.5, 0.5]], rtol=1e-15)
    h = tl.hessian(lambda x: tl.std(x))(tl.tensor([2.0, 2.0], dtype="float64"))
    assert np.isfinite(h.numpy()).all()


def test_safe_sqrt_gradient_at_zero_is_zero():
    from tensorlib.ops.reduce import safe_sqrt

    g = tl.grad(lambda x: tl.sum(safe_sqrt(x * x)))(tl.tensor([0.0, -3.0], dtype="float64"))
    np.testing.assert_array_equal(g.numpy(), [0.0, -1.0])


@pytest.mark.parametrize("fn", [tl.maximum, tl.minimum])
def test_elementwise_ties_split_the_gradient_equally(fn):
    x = tl.tensor([1.0, 2.0, 3.0], dtype="float64")
    y = tl.tensor([1.0, 5.0, 0.0], dtype="float64")
    gx, gy = tl.grad(lambda a, b: tl.sum(fn(a, b) * tl.tensor([1.0, 10.0, 100.0], dtype="float64")), argnums=(0, 1))(
        x, y
    )
    win_x = [0.5, 0.0, 100.0] if fn is tl.maximum else [0.5, 10.0, 0.0]
    win_y = [0.5, 10.0, 0.0] if fn is tl.maximum else [0.5, 0.0, 100.0]
    np.testing.assert_array_equal(gx.numpy(), win_x)
    np.testing.assert_array_equal(gy.numpy(), win_y)


def test_maximum_of_x_with_itself_has_gradient_one():
    g = tl.grad(lambda a: tl.sum(tl.maximum(a, a)))(tl.tensor([1.0, -2.0], dtype="float64"))
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])


@pytest.mark.parametrize("reduce", [tl.max, tl.min])
def test_reduce_ties_split_the_gradient_equally(reduce):
    x = tl.tensor([[3.0, 3.0, 1.0], [2.0, 2.0, 2.0]], dtype="float64") * (1.0 if reduce is tl.max else -1.0)
    g = tl.grad(lambda a: tl.sum(reduce(a, axis=1) * tl.tensor([1.0, 6.0], dtype="float64")))(x)
    np.testing.assert_array_equal(g.numpy(), [[0.5, 0.5, 0.0], [2.0, 2.0, 2.0]])
    g_all = tl.grad(lambda a: reduce(a))(
        tl.tensor([5.0, 1.0, 5.0, 5.0], dtype="float64") * (1.0 if reduce is tl.max else -1.0)
    )
    np.testing.assert_array_equal(g_all.numpy(), [1 / 3, 0.0, 1 / 3, 1 / 3])
