"""The testing kit's failure messages and checks: opcheck in float32, kernels vs shape rules, check_grads details,
tl.grad.audit's summary."""

import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import SampleInput, check_grads, opcheck


def _op(name, kernel, rule):
    op = tl.ops.defop(name, inputs=("x",), infer=lambda x: x)
    op.generic(kernel)
    tl.grad.register_gradient(name, rule)
    return op


def test_opcheck_checks_float32_gradients_by_default():
    # Right in float64, wrong in float32: only the float32 check can see it.
    op = _op(
        "KitFloat32Only",
        lambda xp, x: x * x,
        lambda node, g: g * (3.0 if node.inputs[0].dtype == np.float32 else 2.0) * node.inputs[0],
    )
    samples = [SampleInput((np.array([0.5, -1.5]),))]
    assert opcheck(op, samples, ref=lambda x: x * x, grad_dtypes=(tl.float64,))["gradients"] == 1
    with pytest.raises(
        AssertionError,
        match=r"derivative of KitFloat32Only with respect to argument 0 "
        r"\(shape \(2,\), float32\)",
    ):
        opcheck(op, samples, ref=lambda x: x * x)


def test_opcheck_compares_each_kernel_with_the_shape_rule():
    op = tl.ops.defop("KitWideKernel", inputs=("x",), infer=lambda x: x)

    @op.kernel("numpy")
    def wide_kernel(x):
        return x.astype(np.float64) * 2  # dispatch would cast this back to float32 and hide it

    tl.grad.register_gradient("KitWideKernel", lambda node, g: g * 2.0)
    assert op(np.ones(2, np.float32)).dtype == tl.float32
    with pytest.raises(
        AssertionError,
        match=r"KitWideKernel: KitWideKernel's numpy kernel \(.*wide_kernel\) returned "
        r"output 0 of shape \(2,\) float64, but the shape rule says \(2,\) float32",
    ):
        opcheck(op, [SampleInput((np.ones(2),))], ref=lambda x: 2 * x)
    assert tl.testing.check_kernels(op, SampleInput((np.ones(3),))) == 1  # float64 input: consistent

    # A function is checked through every op it dispatches, the wide kernel included.
    def composite(x):
        return tl.exp(op(x)) + 1.0

    with pytest.raises(AssertionError, match=r"composite: KitWideKernel's numpy kernel"):
        tl.testing.check_kernels(composite, SampleInput((np.ones(2, np.float32),)))
    assert tl.testing.check_kernels(composite, SampleInput((np.ones(2),))) == 3  # KitWideKernel, Exp, Add


def test_catalogue_kernels_agree_with_their_rules():
    for fn, args in [
        (tl.nn.conv2d, (np.ones((1, 4, 4, 2), np.float32), np.ones((3, 3, 2, 3), np.float32), 1, "SAME")),
        (tl.nn.gelu, (np.ones((3,), np.float16),)),
        (tl.mean, (np.arange(4),)),
    ]:
        assert tl.testing.check_kernels(fn, SampleInput(args)) >= 1


def test_check_grads_failure_names_the_op_type_and_the_worst_element():
    # The gradient is wrong in element 2 only.
    op = _op(
        "KitWorstElement",
        lambda xp, x: x * x,
        lambda node, g: g * 2.0 * node.inputs[0] * tl.tensor(np.array([1.0, 1.0, 5.0, 1.0])),
    )
    with pytest.raises(AssertionError) as info:
        check_grads(op, [np.array([1.0, 2.0, 3.0, 4.0])], modes=("rev",))
    message = str(info.value)
    assert "derivative of KitWorstElement with respect to argument 0" in message
    assert "OpDef object" not in message
    worst = re.search(r"^  Worst element \(2,\): analytic (\S+) vs numeric (\S+) ", message, flags=re.M)
    assert worst and abs(float(worst[1]) / float(worst[2]) - 5.0) < 1e-6


def test_check_grads_says_when_the_point_was_moved_off_a_kink():
    # abs at 0 is a kink; away from it the registered gradient (2 * sign) is wrong.
    op = _op("KitKinkedAbs", lambda xp, x: xp.abs(x), lambda node, g: g * 2.0 * tl.sign(node.inputs[0]))
    with pytest.raises(AssertionError) as info:
        check_grads(op, [np.array([0.0, 1.0])], modes=("rev",))
    message = str(info.value)
    assert (
        "This point was moved off a kink (by jittering, 1 time(s)): check_grads: KitKinkedAbs is not "
        "differentiable at the sampled point along argument 0" in message
    )
    assert "The first point was: argument 0 = [0., 1.]" in message
    assert not isinstance(info.value, tl.testing.KinkError)


def test_audit_prints_a_readable_summary():
    tl.ops.defop("KitNoGradient", inputs=("a", "b"), infer=lambda a, b: a)
    report = tl.grad.audit()
    assert report["KitNoGradient"] == {"a": "missing", "b": "missing"}
    text = repr(report)
    first = text.splitlines()[0]
    n_missing = len(report.ops_with("missing"))
    assert first.startswith(f"gradient audit of {len(report)} op types: ")
    assert first.endswith(f"{n_missing} missing a gradient")
    assert "  MISSING  KitNoGradient: no gradient for a, b" in text.splitlines()
    assert "GatherV2(indices)" in text and "ArgMax" in text.splitlines()[-1]
    assert str(report) == text
