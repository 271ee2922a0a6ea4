"""The op and gradient registries: coverage by the catalogue, per-input rules, missing gradients,
overrides, double registration, and the user-facing ``opcheck`` / ``docs/adding_an_op.md``."""

import inspect
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import tensorlib as tl
from tensorlib import dispatch
from tensorlib.testing import SampleInput, check_sample_grads, opcheck
from tensorlib.testing.op_db import all_opinfos

PACKAGE = os.path.dirname(os.path.abspath(tl.__file__)) + os.sep
ROOT = os.path.dirname(PACKAGE.rstrip(os.sep))
INFOS = all_opinfos()


def _is_builtin(op) -> bool:
    """Defined by tensorlib itself (tests and docs define others)."""
    return os.path.abspath(op.defined_at.rsplit(":", 1)[0]).startswith(PACKAGE)


def builtin_ops() -> dict:
    return {name: op for name, op in tl.ops.all_ops().items() if _is_builtin(op)}


def test_builtin_filter_sees_the_core_and_not_test_ops():
    op = tl.ops.defop("TestRegistryLocal", inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: x)
    names = builtin_ops()
    assert {"Add", "BatchMatMulV2", "Einsum", "StridedSliceGrad", "CustomGradient"} <= set(names)
    assert "TestRegistryLocal" not in names


def test_every_builtin_op_type_is_covered_by_an_opinfo():
    covered = {t for info in INFOS for t in info.op_types}
    missing = sorted(set(builtin_ops()) - covered)
    assert not missing, f"op types without an OpInfo (add one to tensorlib/testing/op_db*.py): {missing}"


def test_opinfo_op_types_name_registered_ops():
    unknown = sorted({(info.name, t) for info in INFOS for t in info.op_types if t not in tl.ops.all_ops()})
    assert not unknown


def test_no_builtin_op_is_missing_a_gradient():
    audit = tl.grad.audit()
    missing = {name: per for name, per in audit.items() if name in builtin_ops() and "missing" in per.values()}
    assert not missing, f"give these a gradient or declare them not differentiable: {missing}"


def test_audit_reports_a_user_op_without_gradient_as_missing():
    op = tl.ops.defop("TestRegistryAudit", inputs=("x", "y"), infer=lambda x, y: x)
    op.generic(lambda xp, x, y: x)
    assert tl.grad.audit()["TestRegistryAudit"] == {"x": "missing", "y": "missing"}
    assert tl.grad.audit()["ArgMax"] == {"x": "not differentiable"}
    assert tl.grad.audit()["GatherV2"] == {"params": "gradient", "indices": "not differentiable"}


class _Observed:
    """A dispatch observer that records the op types run eagerly."""

    def __init__(self):
        self.types = set()

    def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, *rest, **more):
        self.types.add(op.name)


@pytest.mark.parametrize("info", INFOS, ids=lambda info: info.name)
def test_declared_op_types_really_run(info):
    # Forward, backward and second order on a few samples must between them run every declared op type.
    dtype = np.dtype(np.float64) if np.float64 in info.dtypes else np.dtype(info.dtypes[0])
    observer = _Observed()

    @settings(max_examples=5, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(info.samples(dtype))
    def run(sample):
        info.op(*[tl.tensor(a) if isinstance(a, np.ndarray) else a for a in sample.args], **sample.kwargs)
        if info.differentiable and dtype == np.float64 and sample.grad_argnums:
            with np.errstate(all="ignore"):
                check_sample_grads(
                    info.op, sample, order=2 if info.second_order else 1, modes=("rev",), atol=1e3, rtol=1e3
                )

    dispatch.observers.append(observer)
    try:
        run()
    finally:
        dispatch.observers.remove(observer)
    assert set(info.op_types) <= observer.types, f"{info.name}: ran {sorted(observer.types)}"


# ---------------------------------------------------------------- per-input gradient rules


def _spy_op(name):
    calls = []
    op = tl.ops.defop(name, inputs=("x", "y"), infer=lambda x, y: x, promote=(0, 1))
    op.generic(lambda xp, x, y: x * y)

    def grad_x(node, g):
        calls.append("x")
        return g * node.inputs[1]

    def grad_y(node, g):
        calls.append("y")
        return g * node.inputs[0]

    tl.grad.register_gradient(name, y=grad_y, x=grad_x)
    return op, calls


def test_the_rule_of_an_input_that_needs_no_gradient_is_never_called():
    op, calls = _spy_op("TestSpyMul")
    x, y = tl.tensor([1.0, 2.0]), tl.tensor([3.0, 4.0])
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = op(x, y)
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [3.0, 4.0])
    assert calls == ["x"]
    assert tape.gradient(z, y) is None and calls == ["x"]  # y was never watched: nothing recorded for it
    frozen = tl.Variable([3.0, 4.0], trainable=False)
    tl.grad(lambda x: tl.sum(op(x, frozen)))(x)
    assert calls == ["x", "x"]


def test_builtin_rules_are_called_per_input_too():
    calls = []
    spies = {
        "x": lambda node, g: calls.append("x") or g * node.inputs[1],
        "y": lambda node, g: calls.append("y") or g * node.inputs[0],
    }
    x = tl.tensor([1.0, 2.0])
    with tl.grad.override({"Mul": spies}):
        np.testing.assert_allclose(tl.grad(lambda x: tl.sum(x * 3.0))(x).numpy(), [3.0, 3.0])
    assert calls == ["x"]


def test_missing_gradient_names_the_op_and_the_callers_line_and_the_forward_still_works():
    op = tl.ops.defop("TestNoGradient", inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: x * 2)
    x = tl.tensor([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = op(x)
        line = inspect.currentframe().f_lineno - 1  # the call's line, just above
        z = tl.sum(y * y)
    np.testing.assert_allclose(y.numpy(), [2.0, 4.0])
    with pytest.raises(LookupError) as failure:
        tape.gradient(z, x)
    message = str(failure.value)
    assert message.startswith("No gradient defined for operation 'TestNoGradient' (op type: TestNoGradient)")
    assert f"{__file__}:{line}" in message
    assert "tl.stop_gradient" in message and "register_gradient('TestNoGradient'" in message


def test_missing_gradient_is_fine_when_no_gradient_flows_through_the_op():
    op = tl.ops.defop("TestNoGradientUnused", inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: x + 1)
    x = tl.tensor([1.0, 2.0])
    assert float(tl.grad(lambda x: tl.sum(x * x) + tl.sum(op(tl.stop_gradient(x))))(x)[0]) == 2.0
    with pytest.raises(LookupError, match="No gradient defined for operation 'TestNoGradientUnused'"):
        tl.grad.get("TestNoGradientUnused")


def test_not_differentiable_ops_give_none_and_do_not_raise():
    op = tl.ops.defop("TestNotDiff", inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: xp.floor(x))
    tl.grad.not_differentiable("TestNotDiff")
    x = tl.tensor([1.5])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = op(x) * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0])  # only through the second factor
    assert tl.grad.get("TestNotDiff") is None
    assert not tl.grad.is_differentiable("TestNotDiff")


# ---------------------------------------------------------------- override and registration errors


def test_override_applies_inside_the_block_only_and_nests():
    x = tl.tensor(0.5)
    g = tl.grad(tl.sin)
    with tl.grad.override({"Sin": lambda node, dy: dy * 7.0}):
        assert float(g(x)) == 7.0
        with tl.grad.override({"Sin": (lambda node, dy: dy * 9.0,)}):
            assert float(g(x)) == 9.0
        assert float(g(x)) == 7.0
    assert float(g(x)) == pytest.approx(np.cos(0.5))


def test_override_rejects_unknown_ops_and_inputs():
    with pytest.raises(LookupError, match="tl.grad.override: no op type 'NoSuchOp' is defined"):
        with tl.grad.override({"NoSuchOp": lambda node, g: g}):
            pass
    with pytest.raises(TypeError, match=r"override\('Mul'\): no input named 'z' \(inputs: x, y\)"):
        with tl.grad.override({"Mul": {"z": lambda node, g: g}}):
            pass
    with pytest.raises(TypeError, match=r"override\('Sin'\): 2 functions for 1 inputs"):
        with tl.grad.override({"Sin": (lambda node, g: g, lambda node, g: g)}):
            pass


def test_registering_twice_raises_and_points_to_override():
    with pytest.raises(ValueError, match=r"register_gradient: 'Sin' already has a gradient; use tl.grad.override"):
        tl.grad.register_gradient("Sin", lambda node, g: g)
    with pytest.raises(ValueError, match="'ArgMax' was declared not differentiable"):
        tl.grad.register_gradient("ArgMax", lambda node, g: g)
    with pytest.raises(LookupError, match="register_gradient: no op type 'NoSuchOp' is defined"):
        tl.grad.register_gradient("NoSuchOp", lambda node, g: g)
    with pytest.raises(ValueError, match="op type 'Add' is already defined"):
        tl.ops.defop("Add", inputs=("x",), infer=lambda x: x)


def test_unknown_attribute_is_rejected():
    with pytest.raises(TypeError, match=r"Sum: unknown attribute 'axes' \(attributes: axis, keepdims\)"):
        tl.ops.get("Sum")(tl.ones(3), axes=0)


# ---------------------------------------------------------------- opcheck and the docs


def _scale_op(name, wrong=False):
    op = tl.ops.defop(name, inputs=("x",), attrs={"alpha": 1.0}, infer=lambda x, *, alpha: x)
    op.generic(lambda xp, x, *, alpha: x * alpha * x)
    factor = 3.0 if wrong else 2.0
    tl.grad.register_gradient(name, lambda node, g: g * factor * node.attrs["alpha"] * node.inputs[0])
    return op


def test_opcheck_passes_a_correct_user_op_and_reports_what_ran():
    op = _scale_op("TestOpcheckRight")
    samples = [SampleInput((np.array([0.5, -1.0, 2.0]),), {"alpha": 1.5}), (np.array([[1.0, 2.0]]),)]
    report = opcheck(op, samples, ref=lambda x, alpha=1.0: alpha * x * x)
    # Gradients are checked in float32 and float64; each kernel's raw result against the shape rule.
    assert report["forward"] == 4 and report["gradients"] == 4 and report["traced"] == 4 and report["kernels"] == 4


def test_opcheck_fails_on_a_wrong_gradient():
    op = _scale_op("TestOpcheckWrong", wrong=True)
    with pytest.raises(AssertionError, match="the gradient of input 0 \\('x'\\) of TestOpcheckWrong"):
        opcheck(op, [(np.array([0.5, -1.0]),)], ref=lambda x, alpha=1.0: alpha * x * x)


def test_opcheck_fails_on_a_wrong_reference_and_runs_error_inputs():
    op = _scale_op("TestOpcheckRef")
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        opcheck(op, [(np.array([0.5, -1.0]),)], ref=lambda x, alpha=1.0: x)
    from tensorlib.testing import ErrorInput

    report = opcheck(
        op,
        [(np.array([0.5]),)],
        ref=lambda x, alpha=1.0: alpha * x * x,
        error_inputs=[ErrorInput((np.array([1.0]),), {"beta": 2.0}, TypeError, "unknown attribute")],
    )
    assert report["errors"] == 1


def test_opcheck_accepts_hypothesis_strategies_and_opinfos():
    from tensorlib.testing import strategies as tls

    report = opcheck(tl.sin, tls.tensors(np.float64, tls.shapes(max_dims=2)), ref=np.sin, max_examples=3)
    assert report["forward"] == 6 and report["gradients"] == 6
    info = next(i for i in INFOS if i.name == "matmul")
    assert opcheck(info, max_examples=2)["gradients"] == 4


def test_adding_an_op_doc_examples_run():
    # In a fresh interpreter: the page registers ops ("Hypot", "Halve") that must not clash with a
    # pytest session that also collects docs/*.md.
    path = os.path.join(ROOT, "docs", "adding_an_op.md")
    run = subprocess.run(
        [sys.executable, "-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE", path],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_strategies_op_inputs_finds_opinfos_by_name_type_and_function():
    from tensorlib.testing.strategies import op_inputs

    @settings(max_examples=3)
    @given(op_inputs("BatchMatMulV2"), op_inputs(tl.einsum), op_inputs("take", np.int64))
    def draws(matmul_sample, einsum_sample, take_sample):
        assert tl.matmul(*matmul_sample.args).dtype == np.float64
        assert isinstance(einsum_sample.args[0], str)
        assert take_sample.args[0].dtype == np.int64

    draws()
    with pytest.raises(LookupError, match="no OpInfo describes 'NoSuchOp'"):
        op_inputs("NoSuchOp")
    with pytest.raises(ValueError, match=re.escape("einsum is not tested in int64")):
        op_inputs("einsum", np.int64)


def test_override_by_input_name_keeps_the_other_inputs_rules():
    x, y = tl.tensor(np.array([1.0, 2.0])), tl.tensor(np.array([3.0, 4.0]))
    f = tl.grad(lambda x, y: tl.sum(x * y), argnums=(0, 1))
    with tl.grad.override({"Mul": {"y": lambda node, g: g * 0.0 + 5.0}}):
        gx, gy = f(x, y)
    assert gx.numpy().tolist() == [3.0, 4.0] and gy.numpy().tolist() == [5.0, 5.0]
    with tl.grad.override({"Mul": {"y": None}}):
        gx, gy = f(x, y)
    assert gx.numpy().tolist() == [3.0, 4.0] and gy.numpy().tolist() == [0.0, 0.0]
    with tl.grad.override({"Mul": (lambda node, g: g * 0.0,)}):  # positional: y gets no rule
        gx, gy = f(x, y)
    assert gx.numpy().tolist() == [0.0, 0.0] and gy.numpy().tolist() == [0.0, 0.0]
