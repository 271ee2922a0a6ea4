"""tl.testing.isolated_registries, which the repository's conftest wraps around every test and doctest."""

import numpy as np
import pytest

import tensorlib as tl


class _Backend(tl.backends.Backend):
    pass


def test_everything_registered_inside_is_gone_after():
    exp = tl.ops.get("Exp")
    exp_kernels = dict(exp.kernels)
    backends_before = tl.backends.names()
    with tl.testing.isolated_registries():
        backend = tl.backends.register(_Backend("isolation_test", np))
        tl.backends.set_backend(backend)
        exp.kernel("isolation_test")(np.exp)
        op = tl.ops.defop("IsolationTestOp", inputs=("x",), infer=lambda x: x)
        op.generic(lambda xp, x: x)
        tl.grad.register_gradient("IsolationTestOp", lambda node, g: g)
        tl.ops.defop("IsolationTestFlag", inputs=("x",), infer=lambda x: x, differentiable=False)
        assert "isolation_test" in tl.backends.names() and "IsolationTestOp" in tl.ops.all_ops()
    assert tl.backends.names() == backends_before
    assert tl.backends.current() is tl.backends.numpy
    assert exp.kernels == exp_kernels
    assert "IsolationTestOp" not in tl.ops.all_ops() and "IsolationTestFlag" not in tl.ops.all_ops()
    with pytest.raises(LookupError, match="No gradient defined for operation 'IsolationTestOp'"):
        tl.grad.get("IsolationTestOp")
    # The names are free again: registering them a second time works.
    with tl.testing.isolated_registries():
        tl.ops.defop("IsolationTestOp", inputs=("x",), infer=lambda x: x)
        tl.grad.register_gradient("IsolationTestOp", lambda node, g: g)


def test_a_test_module_backend_does_not_reach_explain_in_doctests(capsys):
    # tests/test_backends.py registers "counting" for its own module only.
    assert "counting" not in tl.backends.names()
    assert "counting" not in tl.ops.explain("Conv2D")
