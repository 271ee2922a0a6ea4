"""tl.ops.explain: op, attributes, kernels with file:line, conv strategy and gradient ops."""

import inspect
import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.backends import numpy_nn


def _line_of(fn):
    return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"


def test_every_public_nn_function_names_a_registered_op():
    for name in tl.nn.__all__:
        fn = getattr(tl.nn, name)
        if name in ("moments", "batch_normalization", "sigmoid", "tanh") or isinstance(fn, type):  # layers
            continue
        if fn.op_type is None:  # built from several ops (glu, layer_norm, ...): the tensors it takes are named
            assert fn.tensor_params, name
            continue
        assert tl.ops.get(fn.op_type).name == fn.op_type, name


def test_conv2d_with_shapes(capsys):
    text = tl.ops.explain(tl.nn.conv2d, (8, 32, 32, 3), (3, 3, 3, 6), strides=1, padding="VALID")
    assert capsys.readouterr().out.strip() == text.strip()
    lines = text.splitlines()
    assert lines[0].startswith("Conv2D: ")
    assert "Conv2D(input: (8, 32, 32, 3) float32, filters: (3, 3, 3, 6) float32) -> (8, 30, 30, 6) float32" in text
    assert "strides=(1, 1), padding='VALID', dilations=(1, 1)" in text
    assert f"numpy: tensorlib.backends.numpy_nn.conv.conv2d at {_line_of(numpy_nn.conv2d)}" in text
    strategy = numpy_nn.conv2d_strategy((8, 32, 32, 3), (3, 3, 3, 6), (1, 1), (1, 1), ((0, 0), (0, 0)))
    assert f"strategy    {strategy}" in text
    # The gradient of each input is an op of its own, with its own kernel and file:line.
    assert re.search(r"input <- tensorlib\.ops\.nn\.conv\._conv2d_grad_input at .*nn/conv\.py:\d+", text)
    assert (
        "Conv2DBackpropInput(filters: (3, 3, 3, 6) float32, out_backprop: (8, 30, 30, 6) float32) -> "
        "(8, 32, 32, 3) float32" in text
    )
    assert f"numpy_nn.conv.conv2d_backprop_input at {_line_of(numpy_nn.conv2d_backprop_input)}" in text
    assert (
        "Conv2DBackpropFilter(input: (8, 32, 32, 3) float32, out_backprop: (8, 30, 30, 6) float32) -> "
        "(3, 3, 3, 6) float32" in text
    )
    assert f"numpy_nn.conv.conv2d_backprop_filter at {_line_of(numpy_nn.conv2d_backprop_filter)}" in text


def test_the_strategy_follows_the_shapes(capsys):
    few = tl.ops.explain("Conv2D", (6000, 32, 32, 1), (3, 3, 1, 6), strides=1, padding="VALID")
    many = tl.ops.explain("Conv2D", (8, 16, 16, 64), (3, 3, 64, 64), strides=1, padding="SAME")
    large_filter = tl.ops.explain("Conv2D", (128, 14, 14, 32), (5, 5, 32, 64), strides=1, padding="SAME")
    assert "strategy    shifted_gemm" in few and "strategy    im2col_gemm" in many
    assert "strategy    fourier_gemm" in large_filter


def test_by_name_without_shapes(capsys):
    text = tl.ops.explain("Conv2D")
    assert "inputs      input, filters" in text
    assert "called as   tl.nn.conv2d(input, filters, strides, padding, dilations=1, data_format='NHWC')" in text
    assert "calls Conv2DBackpropInput" in text and "calls Conv2DBackpropFilter" in text
    assert f"numpy_nn.conv.conv2d_backprop_filter at {_line_of(numpy_nn.conv2d_backprop_filter)}" in text


def test_an_op_type_name_with_tensor_specs_and_arrays(capsys):
    text = tl.ops.explain("MaxPool", tl.TensorSpec((None, 28, 28, 32), "float16"), 2, 2, "VALID")
    assert "MaxPool(input: (None, 28, 28, 32) float16) -> (None, 14, 14, 32) float16" in text
    assert "MaxPoolGrad(orig_input: (None, 28, 28, 32) float16" in text
    text = tl.ops.explain(tl.nn.relu, np.zeros((2, 3), np.float64))
    assert "Relu(features: (2, 3) float64) -> (2, 3) float64" in text and "ReluGrad(" in text


def test_composites_list_every_op(capsys):
    text = tl.ops.explain(tl.nn.batch_normalization, (8, 3), (3,), (3,), None, None, 1e-3)
    assert re.search(r"dispatches \d+ ops: Add, Sqrt, Div", text)


def test_no_kernel_runs_so_huge_shapes_are_free(capsys):
    text = tl.ops.explain(tl.nn.conv2d, (60000, 32, 32, 1), (3, 3, 1, 6), strides=1, padding="VALID")
    assert "(60000, 30, 30, 6)" in text


def test_errors():
    with pytest.raises(LookupError, match=r"^explain: no op type 'Conv3D' is defined"):
        tl.ops.explain("Conv3D")
    with pytest.raises(TypeError, match=r"^explain: 'moments' does not name an op type; pass example inputs"):
        tl.ops.explain(tl.nn.moments)
    with pytest.raises(TypeError, match=r"^explain: the example arguments do not fit conv2d"):
        tl.ops.explain(tl.nn.conv2d, (1, 2, 2, 1), bogus=1)
    with pytest.raises(ValueError, match=r"^Conv2D: input depth 3 does not match filter in_channels 1"):
        tl.ops.explain(tl.nn.conv2d, (8, 32, 32, 3), (3, 3, 1, 6), 1, "SAME")


def test_explain_leaves_tapes_alone(capsys):
    x = tl.tensor(1.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        tl.ops.explain(tl.nn.relu, (2,))
        y = x * 2.0
    assert float(tape.gradient(y, x)) == 2.0


def test_tensor_parameters_are_told_apart_from_shape_arguments(capsys):
    text = tl.ops.explain(tl.nn.conv2d_transpose, (8, 16, 16, 3), (3, 3, 6, 3), (8, 32, 32, 6), 2, "SAME")
    assert (
        "Conv2DBackpropInput(filters: (3, 3, 6, 3) float32, out_backprop: (8, 16, 16, 3) float32) -> "
        "(8, 32, 32, 6) float32" in text
    )
    assert "input_shape=(8, 32, 32, 6)" in text
    text = tl.ops.explain(tl.nn.moments, (8, 3), [0])
    assert "Sum(x: (8, 3) float32) -> (1, 3) float32" in text


def test_a_gradient_that_dispatches_nothing_says_so(capsys):
    text = tl.ops.explain(tl.add, (2,), (2,))
    assert "(dispatches no op: the incoming gradient passes through)" in text
