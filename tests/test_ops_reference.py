"""The op catalogue, forward: every OpInfo x dtype against its NumPy reference; every error input.

A new op gets these tests by adding an OpInfo to ``tensorlib/testing/op_db.py``
(or ``op_db_nn.py``); ``tests/test_registry.py`` fails until every registered
op type is covered by one.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import ErrorInput, SampleInput, check_error, check_forward
from tensorlib.testing.op_db import all_opinfos

INFOS = all_opinfos()
CASES = [(info, np.dtype(dtype)) for info in INFOS for dtype in info.dtypes]
ERRORS = [(info, error) for info in INFOS for error in info.error_inputs]


def test_opinfo_names_are_unique():
    names = [info.name for info in INFOS]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("info, dtype", CASES, ids=[f"{info.name}-{dtype}" for info, dtype in CASES])
@given(data=st.data())
def test_forward_matches_numpy_reference(info, dtype, data):
    sample = data.draw(info.samples(dtype), label="sample")
    with np.errstate(all="ignore"):
        check_forward(info.op, sample, info.ref, *info.tolerances(dtype), name=info.name)


@pytest.mark.parametrize("info, error", ERRORS, ids=[f"{info.name}-{k}" for k, (info, _) in enumerate(ERRORS)])
def test_error_input_raises_its_message(info, error):
    check_error(info.op, error, name=info.name)


# ---------------------------------------------------------------- the harness itself can fail


def test_check_forward_rejects_a_wrong_value():
    with pytest.raises(AssertionError, match="exp"):
        check_forward(tl.exp, SampleInput((np.array([0.5, 1.0]),)), np.expm1, name="exp")


def test_check_forward_rejects_a_wrong_dtype():
    with pytest.raises(AssertionError, match="dtype float32, the reference gives float64"):
        check_forward(
            tl.exp, SampleInput((np.array([0.5], np.float32),)), lambda x: np.exp(x.astype(np.float64)), name="exp"
        )


def test_check_forward_rejects_a_wrong_shape():
    with pytest.raises(AssertionError, match=r"shape \(2,\), the reference gives \(1, 2\)"):
        check_forward(tl.exp, SampleInput((np.array([0.5, 1.0]),)), lambda x: np.exp(x)[None], name="exp")


def test_check_forward_rejects_an_op_that_changes_its_input():
    def clobber(x):
        x._value[...] = 0.0
        return tl.identity(x)

    with pytest.raises(AssertionError, match="changed its input 0 in place"):
        check_forward(clobber, SampleInput((np.array([0.5, 1.0]),)), np.copy, name="clobber")


def test_check_error_rejects_a_call_that_succeeds_or_says_something_else():
    with pytest.raises(AssertionError, match="succeeded"):
        check_error(tl.add, ErrorInput((np.ones(2), np.ones(2)), match="not broadcastable"))
    with pytest.raises(AssertionError, match="does not match"):
        check_error(tl.add, ErrorInput((np.ones(2), np.ones(3)), match="something else"))
    with pytest.raises(AssertionError, match="expected TypeError"):
        check_error(tl.add, ErrorInput((np.ones(2), np.ones(3)), exc=TypeError, match="broadcastable"))
