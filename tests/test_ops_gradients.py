"""The op catalogue, backward: first and second order, reverse and forward mode, against
float64 central differences (``tl.testing.check_grads``); non-differentiable ops give None.

Also tests of ``check_grads`` itself: it must fail on a wrong gradient.
"""

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import KinkError, check_grads, check_sample_grads
from tensorlib.testing.op_db import all_opinfos

# Rules such as where(x > 0, log(x), 0) evaluate the masked branch too: inf/nan there is expected.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
F64 = np.dtype(np.float64)
F32 = np.dtype(np.float32)
INFOS = all_opinfos()
C128 = np.dtype(np.complex128)
# Complex-only entries (tensorlib/testing/op_db_complex.py) check their gradients in complex128.
DIFFERENTIABLE = [info for info in INFOS if info.differentiable and (F64 in info.dtypes or C128 in info.dtypes)]
DIFFERENTIABLE_F32 = [info for info in DIFFERENTIABLE if F32 in info.dtypes]
# Entries whose op types are all declared not differentiable (OpInfo.differentiable=False alone
# may only mean "no gradient check for these samples").
NOT_DIFFERENTIABLE = [
    info for info in INFOS if info.op_types and not any(tl.grad.is_differentiable(t) for t in info.op_types)
]


def _check(info, sample, **kwargs):
    try:
        check_sample_grads(info.op, sample, name=info.name, **kwargs)
    except KinkError:
        if not info.kinks:
            raise
        reject()  # a kinked op sampled where jittering found no smooth point: draw another sample


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=lambda info: info.name)
@given(data=st.data())
def test_gradients_float64_order_2_rev_and_fwd(info, data):
    sample = data.draw(info.samples(F64 if F64 in info.dtypes else C128), label="sample")
    _check(
        info,
        sample,
        order=2 if info.second_order else 1,
        modes=("rev", "fwd"),
        atol=info.grad_atol,
        rtol=info.grad_rtol,
    )


@pytest.mark.parametrize("info", DIFFERENTIABLE_F32, ids=lambda info: info.name)
@settings(max_examples=4)
@given(data=st.data())
def test_gradients_float32_first_order_keep_the_dtype(info, data):
    # float32 gradients against float64 differences, with float32 tolerances; check_grads also
    # asserts that each gradient has its input's dtype (no silent float64 in a float32 backward).
    sample = data.draw(info.samples(F32), label="sample")
    _check(info, sample, order=1, modes=("rev",))


@pytest.mark.parametrize("info", NOT_DIFFERENTIABLE, ids=lambda info: info.name)
@settings(max_examples=3)
@given(data=st.data())
def test_not_differentiable_ops_give_no_gradient(info, data):
    dtype = F64 if F64 in info.dtypes else np.dtype(info.dtypes[0])
    sample = data.draw(info.samples(dtype), label="sample")
    args = [tl.tensor(a) if isinstance(a, np.ndarray) else a for a in sample.args]
    sources = [a for a in args if isinstance(a, tl.Tensor) and a.dtype.kind == "f"]
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(sources)
        out = info.op(*args, **sample.kwargs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        assert all(g is None for g in tape.gradient(o, sources)), info.name
        zeros = tape.gradient(o, sources, unconnected_gradients="zero")
        assert all(not np.any(z.numpy()) for z in zeros), info.name


# ---------------------------------------------------------------- check_grads can fail


def _user_op(name, gradient):
    op = tl.ops.defop(name, inputs=("x", "y"), infer=lambda x, y: x, promote=(0, 1))
    op.generic(lambda xp, x, y: x * x * y)
    tl.grad.register_gradient(name, *gradient)
    return op


_right = _user_op(
    "TestCheckRight",
    (lambda node, g: g * 2.0 * node.inputs[0] * node.inputs[1], lambda node, g: g * node.inputs[0] * node.inputs[0]),
)
_wrong_y = _user_op(
    "TestCheckWrongY", (lambda node, g: g * 2.0 * node.inputs[0] * node.inputs[1], lambda node, g: g * node.inputs[0])
)
# Right values, but the rule hides x from the second derivative.
_wrong_order_2 = _user_op(
    "TestCheckWrongOrder2",
    (
        lambda node, g: g * 2.0 * tl.stop_gradient(node.inputs[0] * node.inputs[1]),
        lambda node, g: g * node.inputs[0] * node.inputs[0],
    ),
)
POINT = [np.array([0.5, 1.5, -2.0]), np.array([1.0, -0.7, 0.3])]


def test_check_grads_passes_a_correct_user_op_to_second_order():
    check_grads(_right, POINT, order=2)
    check_grads(_right, [p.astype(np.float32) for p in POINT], order=2)


def test_check_grads_fails_on_a_wrong_gradient_naming_input_and_op():
    with pytest.raises(AssertionError) as failure:
        check_grads(_wrong_y, POINT, modes=("rev",))
    message = str(failure.value)
    assert "argument 1" in message and "the gradient of input 1 ('y') of TestCheckWrongY" in message
    assert "analytic" in message and "numeric" in message and "atol 1e-05" in message


def test_check_grads_forward_mode_also_fails_on_it():
    with pytest.raises(AssertionError, match=r"forward-mode \(jvp\) derivative .* argument 1"):
        check_grads(_wrong_y, POINT, modes=("fwd",))


def test_check_grads_order_2_catches_a_rule_that_is_not_differentiable():
    check_grads(_wrong_order_2, POINT, order=1)
    with pytest.raises(AssertionError, match=r"of the gradient \(vjp\) of"):
        check_grads(_wrong_order_2, POINT, order=2)


def test_check_grads_float32_function_has_float32_tolerances_but_still_fails_when_wrong():
    with pytest.raises(AssertionError, match="float32"):
        check_grads(_wrong_y, [p.astype(np.float32) for p in POINT])


def test_check_grads_resamples_kinks_and_names_a_point_it_cannot_leave():
    check_grads(tl.abs, [np.zeros(4)], order=2)  # jittered off the kink
    check_grads(lambda x: tl.max(x), [np.ones(3)], order=2)  # ties broken by jittering
    with pytest.raises(
        KinkError,
        match=r"(?s)not differentiable at the sampled point .*Point: argument 0 = "
        r"\[0\., 0\.\]",
    ):
        check_grads(tl.abs, [np.zeros(2)], resample=lambda rng: [np.zeros(2)])


def test_a_rule_returning_float64_still_gives_a_float32_gradient():
    op = tl.ops.defop("TestCheckF64Grad", inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: 2 * x)
    tl.grad.register_gradient("TestCheckF64Grad", lambda node, g: tl.cast(g, "float64") * 2.0)
    x = tl.tensor(np.ones(2, np.float32))
    assert tl.grad(lambda x: tl.sum(op(x)))(x).dtype == np.float32  # the engine casts back once
    check_grads(op, [np.ones(2, np.float32)])


def test_check_grads_argument_errors():
    with pytest.raises(ValueError, match="order must be >= 1"):
        check_grads(tl.sin, [np.ones(2)], order=0)
    with pytest.raises(ValueError, match="modes"):
        check_grads(tl.sin, [np.ones(2)], modes=("sideways",))
    with pytest.raises(ValueError, match="argument 1 is not a floating-point array"):
        check_grads(tl.take, [np.ones(3), np.array([0, 1])], argnums=1)
    with pytest.raises(TypeError, match="no floating-point output"):
        check_grads(tl.argmax, [np.ones(3)])
