"""Elementwise functions at their awkward points: dtypes as NumPy 2 (float-valued functions of integers and
bools compute in float64), values bit for bit NumPy's ufuncs, gradients against float64 central differences."""

import numpy as np
import pytest

import tensorlib as tl

from _helpers import MODES, assert_same, run_in_mode

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BOOLS = np.array([True, False, True])
FLOAT_VALUED_UNARY = ["tan", "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "deg2rad", "rad2deg"]
FLOAT_VALUED_BINARY = ["hypot", "arctan2", "logaddexp", "logaddexp2"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FLOAT_VALUED_UNARY + FLOAT_VALUED_BINARY)
def test_float_valued_functions_of_bools_compute_in_float64(name, mode):
    # NumPy's ufuncs compute bools in float16: tl.hypot(True, True) was 1.4140625, sinh(True) 1.1748046875.
    n = 2 if name in FLOAT_VALUED_BINARY else 1
    got = run_in_mode(mode, getattr(tl, name), *[BOOLS] * n)
    assert_same(got, getattr(np, name)(*[BOOLS.astype(np.float64)] * n))
