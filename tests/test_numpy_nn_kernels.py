"""Checks of the NumPy conv / pool / batch-norm kernels against slow references.

The references (``tensorlib.testing.references``) are written the obvious way,
one shifted, strided view per filter tap, so that their correctness can be read off.
The fast kernels must match them over a sweep of strides, dilations,
paddings and sizes, satisfy the adjoint identities that tie a linear map to
its transpose, and agree with PyTorch where it is installed.
"""

import itertools

import numpy as np
import pytest

from tensorlib.backends import numpy_nn as nn
from tensorlib.backends.numpy_nn import blocks, conv, fourier, pool
from tensorlib.testing import references

NO_PADS = ((0, 0), (0, 0))
STRATEGIES = ("shifted_gemm", "im2col_gemm", "fourier_gemm")


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


def resolve(x_shape, kernel_hw, strides, dilations, padding):
    return references.explicit_pads(x_shape[1:3], kernel_hw, strides, dilations, padding)


def conv_cases():
    """Every stride x dilation x padding kind x kernel parity, with the other
    sizes (non-square strides, input sizes, channels, batch) drawn per case."""
    rng = np.random.default_rng(1234)
    cases = []
    for stride, dilation, padding, kernel in itertools.product(
        (1, 2, 3), (1, 2), ("VALID", "SAME", "EXPLICIT"), (3, 2)
    ):
        strides = (stride, int(rng.integers(1, 4)))
        dilations = (dilation, int(rng.integers(1, 3)))
        kernel_hw = (kernel, int(rng.integers(1, 5)))
        min_hw = [(k - 1) * d + 1 for k, d in zip(kernel_hw, dilations)]
        in_hw = tuple(m + int(rng.integers(0, 5)) for m in min_hw)
        if padding == "EXPLICIT":
            padding = tuple(tuple(int(p) for p in rng.integers(0, 3, 2)) for _ in range(2))
        batch, cin, cout = (int(v) for v in rng.integers(1, [4, 6, 6]))
        cases.append(((batch, *in_hw, cin), (*kernel_hw, cin, cout), strides, dilations, padding))
    return cases


CONV_CASES = conv_cases()


def conv_case_id(case):
    x_shape, w_shape, strides, dilations, padding = case
    return f"x{x_shape}-w{w_shape}-s{strides}-d{dilations}-{padding}".replace(" ", "")


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Block budgets so small that every image is split into row bands and
    every batch into one-image blocks (chunks), to exercise the blocking logic."""
    for module, budget in (
        (conv, "_PATCH_BLOCK_BYTES"),
        (pool, "_POOL_BLOCK_BYTES"),
        (fourier, "_FOURIER_CHUNK_BYTES"),
        (fourier, "_FOURIER_GRAM_CHUNK_BYTES"),
        (fourier, "_FOURIER_BLOCK_BYTES"),
    ):
        monkeypatch.setattr(module, budget, 64)


def random_conv_inputs(case, seed=0):
    x_shape, w_shape, strides, dilations, padding = case
    rng = np.random.default_rng(seed)
    pads = resolve(x_shape, w_shape[:2], strides, dilations, padding)
    out_hw = references.output_hw(x_shape[1:3], w_shape[:2], strides, dilations, pads)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    dy = rng.standard_normal((x_shape[0], *out_hw, w_shape[3]))
    return x, w, dy, strides, dilations, pads


# ---------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, expected",
    [
        ((32, 3, 1, 1, "VALID"), (30, (0, 0))),
        ((5, 2, 2, 1, "SAME"), (3, (0, 1))),
        ((28, 5, 1, 1, "SAME"), (28, (2, 2))),
        ((28, 5, 2, 1, "SAME"), (14, (1, 2))),
        ((7, 3, 3, 2, "SAME"), (3, (2, 2))),
        ((8, 3, 3, 2, "SAME"), (3, (1, 2))),
        ((4, 1, 3, 1, "SAME"), (2, (0, 0))),
        ((10, 3, 2, 2, "VALID"), (3, (0, 0))),
        ((6, 3, 2, 1, (1, 2)), (4, (1, 2))),
    ],
)
def test_conv_output_size_and_padding(args, expected):
    assert nn.conv_output_size_and_padding(*args) == expected


@pytest.mark.parametrize(
    "args",
    [(2, 3, 1, 1, "VALID"), (3, 2, 1, 3, "VALID"), (3, 3, 1, 1, "FULL"), (3, 3, 0, 1, "SAME"), (3, 3, 1, 1, (-1, 0))],
)
def test_conv_output_size_rejects_bad_geometry(args):
    with pytest.raises(ValueError, match="conv geometry"):
        nn.conv_output_size_and_padding(*args)


def test_resolve_conv_padding_per_dimension():
    out_hw, pads = nn.resolve_conv_padding((28, 9), (5, 2), (2, 3), (1, 2), "SAME")
    assert out_hw == (14, 3)
    assert pads == (
        nn.conv_output_size_and_padding(28, 5, 2, 1, "SAME")[1],
        nn.conv_output_size_and_padding(9, 2, 3, 2, "SAME")[1],
    )
    assert nn.resolve_conv_padding((5, 5), (3, 3), (1, 1), (1, 1), ((1, 0), (0, 2))) == ((4, 5), ((1, 0), (0, 2)))


def test_kernel_errors_name_the_kernel_and_shapes():
    with pytest.raises(ValueError, match=r"conv2d: input depth 3 .* filter in_channels 1"):
        nn.conv2d(np.zeros((1, 4, 4, 3)), np.zeros((2, 2, 1, 1)), (1, 1), (1, 1), NO_PADS)
    with pytest.raises(ValueError, match=r"conv2d_backprop_input: output gradient shape"):
        nn.conv2d_backprop_input((1, 4, 4, 1), np.zeros((2, 2, 1, 1)), np.zeros((1, 2, 2, 1)), (1, 1), (1, 1), NO_PADS)
    with pytest.raises(ValueError, match=r"max_pool: .*smaller than"):
        nn.max_pool(np.zeros((1, 2, 2, 1)), (3, 3), (1, 1), NO_PADS)
    with pytest.raises(ValueError, match="unknown strategy"):
        nn.conv2d(np.zeros((1, 4, 4, 1)), np.zeros((2, 2, 1, 1)), (1, 1), (1, 1), NO_PADS, strategy="winograd")


def test_strategy_rule():
    same_5x5 = ((2, 2), (2, 2))
    assert nn.conv2d_strategy((6000, 32, 32, 1), (3, 3, 1, 6), (1, 1), (1, 1), NO_PADS) == ("shifted_gemm")
    assert nn.conv2d_strategy((128, 28, 28, 1), (5, 5, 1, 32), (1, 1), (1, 1), same_5x5) == ("shifted_gemm")
    assert nn.conv2d_strategy((128, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), same_5x5) == ("fourier_gemm")
    assert nn.conv2d_strategy((8, 28, 28, 32), (3, 3, 32, 64), (2, 2), (1, 1), NO_PADS) == ("im2col_gemm")


# ---------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CONV_CASES, ids=conv_case_id)
def test_conv_kernels_match_loop_references(case):
    x, w, dy, strides, dilations, pads = random_conv_inputs(case)
    expected = references.conv2d(x, w, strides, pads, dilations)
    for strategy in STRATEGIES:
        np.testing.assert_allclose(
            nn.conv2d(x, w, strides, dilations, pads, strategy=strategy),
            expected,
            rtol=1e-10,
            atol=1e-10,
            err_msg=f"conv2d {strategy}",
        )
        np.testing.assert_allclose(
            nn.conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads, strategy=strategy),
            references.conv2d_backprop_input(x.shape, w, dy, strides, pads, dilations),
            rtol=1e-10,
            atol=1e-10,
            err_msg=f"conv2d_backprop_input {strategy}",
        )
        np.testing.assert_allclose(
            nn.conv2d_backprop_filter(x, w.shape, dy, strides, dilations, pads, strategy=strategy),
            references.conv2d_backprop_filter(x, w.shape, dy, strides, pads, dilations),
            rtol=1e-10,
            atol=1e-10,
            err_msg=f"conv2d_backprop_filter {strategy}",
        )


@pytest.mark.parametrize("case", CONV_CASES[::3], ids=conv_case_id)
def test_conv_adjoint_identities(case):
    """<conv(x, w), dy> = <x, backprop_input(dy)> = <w, backprop_filter(x, dy)>."""
    x, w, dy, strides, dilations, pads = random_conv_inputs(case, seed=7)
    forward = np.vdot(nn.conv2d(x, w, strides, dilations, pads), dy)
    via_input = np.vdot(x, nn.conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads))
    via_filter = np.vdot(w, nn.conv2d_backprop_filter(x, w.shape, dy, strides, dilations, pads))
    np.testing.assert_allclose(via_input, forward, rtol=1e-10)
    np.testing.assert_allclose(via_filter, forward, rtol=1e-10)


def _assert_conv_family_matches_references(x, w, dy, strides, dilations, pads, strategy):
    """Conv2D and both of its gradients, by ``strategy``, against the float64 references."""
    np.testing.assert_allclose(
        nn.conv2d(x, w, strides, dilations, pads, strategy=strategy),
        references.conv2d(x, w, strides, pads, dilations),
        rtol=1e-10,
        atol=1e-10,
    )
    np.testing.assert_allclose(
        nn.conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads, strategy=strategy),
        references.conv2d_backprop_input(x.shape, w, dy, strides, pads, dilations),
        rtol=1e-10,
        atol=1e-10,
    )
    np.testing.assert_allclose(
        nn.conv2d_backprop_filter(x, w.shape, dy, strides, dilations, pads, strategy=strategy),
        references.conv2d_backprop_filter(x, w.shape, dy, strides, pads, dilations),
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize("case", CONV_CASES[::4], ids=conv_case_id)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_conv_kernels_split_into_row_bands(case, strategy, tiny_blocks):
    x, w, dy, strides, dilations, pads = random_conv_inputs(case, seed=3)
    _assert_conv_family_matches_references(x, w, dy, strides, dilations, pads, strategy)


def test_fourier_transform_is_shorter_than_the_padded_image():
    """SAME padding of a 5x5 filter on 14x14 needs a 16-point transform, not the padded 18."""
    shapes = conv._ConvShapes("conv2d", (8, 14, 14, 3), (5, 5, 3, 4), (1, 1), (1, 1), ((2, 2), (2, 2)), "f4", None)
    assert fourier._FourierPlan(shapes).lengths == (16, 16)
    valid = conv._ConvShapes("conv2d", (8, 14, 9, 3), (5, 3, 3, 4), (1, 1), (1, 1), NO_PADS, "f4", None)
    assert fourier._FourierPlan(valid).lengths == (14, 9)


@pytest.mark.parametrize(
    "case",
    [
        # Padding wider than the dilated filter, on one side and on both.
        ((2, 5, 6, 3), (3, 2, 3, 4), (1, 2), (2, 1), ((4, 1), (0, 5))),
        ((2, 4, 3, 2), (2, 3, 2, 3), (2, 1), (1, 2), ((6, 6), (5, 0))),
        ((1, 1, 2, 2), (5, 1, 2, 2), (1, 1), (1, 1), ((4, 4), (3, 3))),
        # SAME on the LeNet sizes, and a strided, dilated one whose outputs overshoot the input.
        ((2, 14, 14, 2), (5, 5, 2, 3), (1, 1), (1, 1), "SAME"),
        ((2, 9, 7, 2), (3, 4, 2, 3), (3, 2), (2, 2), "SAME"),
    ],
    ids=conv_case_id,
)
def test_fourier_gemm_is_exact_with_its_shortest_transform(case):
    """The circular convolution of the shortened transform never lands a wrapped value on a kept one."""
    x, w, dy, strides, dilations, pads = random_conv_inputs(case, seed=11)
    _assert_conv_family_matches_references(x, w, dy, strides, dilations, pads, "fourier_gemm")


def test_conv_strategies_agree_on_a_batch_of_many_blocks(monkeypatch):
    monkeypatch.setattr(fourier, "_FOURIER_CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(fourier, "_FOURIER_GRAM_CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(fourier, "_FOURIER_BLOCK_BYTES", 8 << 10)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 12, 11, 3))
    w = rng.standard_normal((3, 4, 3, 7))
    dy = rng.standard_normal((40, 6, 4, 7))
    pads = resolve(x.shape, (3, 4), (2, 3), (1, 1), "SAME")
    args = ((2, 3), (1, 1), pads)
    for kernel, first_arg, second_arg in [
        (nn.conv2d, x, w),
        (nn.conv2d_backprop_input, x.shape, w),
        (nn.conv2d_backprop_filter, x, w.shape),
    ]:
        extra = () if kernel is nn.conv2d else (dy,)
        shifted = kernel(first_arg, second_arg, *extra, *args, strategy="shifted_gemm")
        for strategy in ("im2col_gemm", "fourier_gemm"):
            other = kernel(first_arg, second_arg, *extra, *args, strategy=strategy)
            np.testing.assert_allclose(other, shifted, rtol=1e-11, atol=1e-11, err_msg=strategy)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float16, 2e-2)])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_conv_kernels_keep_dtype(dtype, rtol, strategy):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 9, 8, 3)).astype(dtype)
    w = rng.standard_normal((3, 3, 3, 4)).astype(dtype)
    dy = rng.standard_normal((3, 5, 4, 4)).astype(dtype)
    strides, dilations = (2, 2), (1, 1)
    pads = resolve(x.shape, (3, 3), strides, dilations, "SAME")
    x64, w64, dy64 = (a.astype(np.float64) for a in (x, w, dy))
    results = {
        "conv2d": (
            nn.conv2d(x, w, strides, dilations, pads, strategy=strategy),
            references.conv2d(x64, w64, strides, pads, dilations),
        ),
        "input": (
            nn.conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads, strategy=strategy),
            references.conv2d_backprop_input(x.shape, w64, dy64, strides, pads, dilations),
        ),
        "filter": (
            nn.conv2d_backprop_filter(x, w.shape, dy, strides, dilations, pads, strategy=strategy),
            references.conv2d_backprop_filter(x64, w.shape, dy64, strides, pads, dilations),
        ),
    }
    for name, (got, expected) in results.items():
        assert got.dtype == dtype, name
        scale = np.abs(expected).max()
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale, err_msg=name)


# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------


def pool_cases():
    rng = np.random.default_rng(99)
    cases = []
    for (kh, kw), (sh, sw), padding in itertools.product(
        ((2, 2), (3, 3), (2, 3), (1, 2)), ((1, 1), (2, 2), (3, 2), (2, 3)), ("VALID", "SAME")
    ):
        in_hw = (kh + int(rng.integers(0, 5)), kw + int(rng.integers(0, 5)))
        batch, channels = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        cases.append(((batch, *in_hw, channels), (kh, kw), (sh, sw), padding))
    # Non-overlapping windows that tile the input exactly (the GEMM column
    # path), and the same with more channels than the GEMM path takes.
    cases += [
        ((2, 8, 6, 3), (2, 2), (2, 2), "VALID"),
        ((2, 8, 6, 10), (2, 2), (2, 2), "VALID"),
        ((1, 9, 9, 10), (3, 3), (2, 2), "SAME"),
        ((2, 7, 6, 2), (2, 3), (2, 3), "SAME"),
        ((2, 6, 7, 2), (3, 2), (3, 2), ((1, 2), (0, 1))),
    ]
    return cases


POOL_CASES = pool_cases()


def pool_case_id(case):
    return "x{}-k{}-s{}-{}".format(*case).replace(" ", "")


def random_pool_inputs(case, seed=0, integer_values=False):
    x_shape, ksize, strides, padding = case
    rng = np.random.default_rng(seed)
    pads = resolve(x_shape, ksize, strides, (1, 1), padding)
    out_hw = references.output_hw(x_shape[1:3], ksize, strides, (1, 1), pads)
    # Few distinct integer values make many ties inside windows.
    x = rng.integers(0, 3, x_shape).astype(float) if integer_values else rng.standard_normal(x_shape)
    dy = rng.standard_normal((x_shape[0], *out_hw, x_shape[3]))
    ddx = rng.standard_normal(x_shape)
    return x, dy, ddx, ksize, strides, pads


@pytest.mark.parametrize("case", POOL_CASES, ids=pool_case_id)
def test_avg_pool_matches_loop_reference(case):
    x, dy, _, ksize, strides, pads = random_pool_inputs(case)
    np.testing.assert_allclose(
        nn.avg_pool(x, ksize, strides, pads), references.avg_pool(x, ksize, strides, pads), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        nn.avg_pool_grad(x.shape, dy, ksize, strides, pads),
        references.avg_pool_grad(x.shape, dy, ksize, strides, pads),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("integer_values", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("case", POOL_CASES, ids=pool_case_id)
def test_max_pool_matches_loop_reference(case, integer_values):
    x, dy, ddx, ksize, strides, pads = random_pool_inputs(case, integer_values=integer_values)
    y = nn.max_pool(x, ksize, strides, pads)
    np.testing.assert_array_equal(y, references.max_pool(x, ksize, strides, pads))
    np.testing.assert_allclose(
        nn.max_pool_grad(x, y, dy, ksize, strides, pads),
        references.max_pool_grad(x, dy, ksize, strides, pads),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_array_equal(
        nn.max_pool_grad_grad(x, y, ddx, ksize, strides, pads),
        references.max_pool_grad_grad(x, ddx, ksize, strides, pads),
    )


@pytest.mark.parametrize("case", POOL_CASES[::5], ids=pool_case_id)
def test_pool_adjoint_identities(case):
    """avg_pool_grad is avg_pool's transpose; max_pool_grad_grad is max_pool_grad's."""
    x, dy, ddx, ksize, strides, pads = random_pool_inputs(case, seed=11, integer_values=True)
    np.testing.assert_allclose(
        np.vdot(nn.avg_pool(ddx, ksize, strides, pads), dy),
        np.vdot(ddx, nn.avg_pool_grad(x.shape, dy, ksize, strides, pads)),
        rtol=1e-10,
    )
    y = nn.max_pool(x, ksize, strides, pads)
    np.testing.assert_allclose(
        np.vdot(nn.max_pool_grad(x, y, dy, ksize, strides, pads), ddx),
        np.vdot(dy, nn.max_pool_grad_grad(x, y, ddx, ksize, strides, pads)),
        rtol=1e-10,
    )


@pytest.mark.parametrize("case", POOL_CASES[::6], ids=pool_case_id)
def test_pool_kernels_split_into_blocks(case, tiny_blocks):
    x, dy, ddx, ksize, strides, pads = random_pool_inputs(case, seed=4, integer_values=True)
    np.testing.assert_allclose(
        nn.avg_pool(x, ksize, strides, pads), references.avg_pool(x, ksize, strides, pads), rtol=1e-12
    )
    np.testing.assert_allclose(
        nn.avg_pool_grad(x.shape, dy, ksize, strides, pads),
        references.avg_pool_grad(x.shape, dy, ksize, strides, pads),
        rtol=1e-12,
    )
    y = nn.max_pool(x, ksize, strides, pads)
    np.testing.assert_array_equal(y, references.max_pool(x, ksize, strides, pads))
    np.testing.assert_allclose(
        nn.max_pool_grad(x, y, dy, ksize, strides, pads),
        references.max_pool_grad(x, dy, ksize, strides, pads),
        rtol=1e-12,
    )
    np.testing.assert_array_equal(
        nn.max_pool_grad_grad(x, y, ddx, ksize, strides, pads),
        references.max_pool_grad_grad(x, ddx, ksize, strides, pads),
    )


def test_kernels_split_images_between_threads(monkeypatch, tiny_blocks):
    """Shares of the batch in three threads, with GEMMs cut into stacks of
    tiny single-thread ones plus a remainder, match the references."""
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(blocks, "_thread_count", lambda: 3)
    monkeypatch.setattr(blocks, "_BLAS_SINGLE_THREAD_FLOPS", 100)
    rng = np.random.default_rng(5)
    x = rng.integers(-4, 5, (7, 9, 8, 2)).astype(np.float64)
    pads = ((0, 0), (0, 0))
    for ksize, strides in (((2, 2), (2, 2)), ((3, 2), (1, 2))):
        np.testing.assert_allclose(
            nn.avg_pool(x, ksize, strides, pads), references.avg_pool(x, ksize, strides, pads), rtol=1e-12, atol=1e-12
        )
        np.testing.assert_array_equal(
            nn.max_pool(x, ksize, strides, pads), references.max_pool(x, ksize, strides, pads)
        )
    w = rng.standard_normal((3, 2, 2, 5))
    for strategy in ("shifted_gemm", "im2col_gemm"):
        np.testing.assert_allclose(
            nn.conv2d(x, w, (1, 2), (1, 1), ((1, 1), (0, 1)), strategy=strategy),
            references.conv2d(x, w, (1, 2), ((1, 1), (0, 1)), (1, 1)),
            rtol=1e-10,
            atol=1e-10,
        )


@pytest.fixture
def three_threads(monkeypatch):
    """Every kernel shares its blocks out between three threads, however small."""
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_FLOPS", 0)
    monkeypatch.setattr(pool, "_MAX_POOL_GRAD_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(blocks, "_thread_count", lambda: 3)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    "x_shape, w_shape, strides, dilations, padding",
    [
        ((9, 7, 6, 1), (3, 3, 1, 4), (1, 1), (1, 1), "SAME"),  # Cin = 1, odd sizes
        ((7, 8, 9, 3), (2, 4, 3, 5), (2, 1), (1, 2), "SAME"),  # even kernel: the odd pad cell at the end
        ((5, 9, 8, 2), (3, 2, 2, 3), (2, 2), (2, 1), ((1, 0), (2, 1))),
    ],
)
def test_conv_kernels_shared_between_threads(
    monkeypatch, three_threads, strategy, x_shape, w_shape, strides, dilations, padding
):
    """Blocks of images drawn by three threads at once (each with its own
    buffers and, for the filter gradient, its own partial sum of stacked
    thin GEMMs plus a remainder) match the references."""
    monkeypatch.setattr(blocks, "_THIN_GEMM_MAX_STEP", 8)
    monkeypatch.setattr(blocks, "_THIN_GEMM_MIN_STEP", 2)
    x, w, dy, strides, dilations, pads = random_conv_inputs((x_shape, w_shape, strides, dilations, padding), seed=8)
    _assert_conv_family_matches_references(x, w, dy, strides, dilations, pads, strategy)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("ksize, strides", [((2, 2), (2, 2)), ((3, 2), (1, 2)), ((3, 3), (2, 2))])
def test_max_pool_grad_shared_between_threads(three_threads, tiny_blocks, ksize, strides, padding):
    """Each thread scatters into a padded block of its own; ties go to the first max."""
    rng = np.random.default_rng(9)
    x = rng.integers(-2, 3, (7, 9, 8, 2)).astype(np.float64)  # many ties
    pads = resolve(x.shape, ksize, strides, (1, 1), padding)
    y = nn.max_pool(x, ksize, strides, pads)
    np.testing.assert_array_equal(y, references.max_pool(x, ksize, strides, pads))
    dy = rng.standard_normal(y.shape)
    np.testing.assert_allclose(
        nn.max_pool_grad(x, y, dy, ksize, strides, pads),
        references.max_pool_grad(x, dy, ksize, strides, pads),
        rtol=1e-12,
    )


NONFINITE_POOL_CASES = [
    ((3, 8, 6, 3), (2, 2), (2, 2), "VALID"),  # the windows tile the input
    ((3, 7, 7, 3), (2, 2), (2, 2), "SAME"),  # they tile the padded input
    ((3, 8, 8, 3), (2, 2), (3, 3), "VALID"),  # apart: some cells are in no window
    ((3, 7, 7, 3), (3, 3), (2, 2), "SAME"),  # overlapping
]


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf + -inf where windows overlap
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("case", NONFINITE_POOL_CASES, ids=pool_case_id)
def test_max_pool_grad_sends_inf_and_nan_to_the_maximum_only(case, dtype, three_threads, tiny_blocks):
    """An inf or NaN in a window's gradient reaches its first maximum and no
    other cell: those stay exactly 0, as in TensorFlow and PyTorch (a product
    ``dy * hit`` would make them ``inf * 0 = NaN``). Some blocks are finite."""
    x, dy, ddx, ksize, strides, pads = random_pool_inputs(case, seed=12, integer_values=True)
    for grad in (dy, ddx):
        grad[1:, ...].flat[::4] = np.inf
        grad[1:, ...].flat[1::6] = -np.inf
        grad[1:, ...].flat[2::5] = np.nan
    x, dy, ddx = (a.astype(dtype) for a in (x, dy, ddx))
    y = nn.max_pool(x, ksize, strides, pads)
    dx = nn.max_pool_grad(x, y, dy, ksize, strides, pads)
    expected = references.max_pool_grad(x.astype(float), dy.astype(float), ksize, strides, pads)
    assert dx.dtype == dtype
    maxima = references.max_pool_grad(x.astype(float), np.ones(dy.shape), ksize, strides, pads) != 0
    assert not np.isfinite(dy).all() and np.all(dx[~maxima] == 0)
    rtol = {np.float64: 0, np.float32: 1e-6, np.float16: 1e-3}[dtype]
    np.testing.assert_allclose(dx, expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(
        nn.max_pool_grad_grad(x, y, ddx, ksize, strides, pads),
        references.max_pool_grad_grad(x.astype(float), ddx.astype(float), ksize, strides, pads),
        rtol=rtol,
        atol=rtol,
    )


def test_max_pool_grad_with_inf_and_nan_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(32)
    x = rng.integers(-2, 3, (2, 8, 8, 3)).astype(np.float64)  # ties, and windows all 0
    for ksize, strides in (((2, 2), (2, 2)), ((2, 2), (3, 3)), ((3, 3), (2, 2))):
        y = nn.max_pool(x, ksize, strides, NO_PADS)
        dy = rng.standard_normal(y.shape)
        dy.flat[::5], dy.flat[1::7], dy.flat[2::9] = np.inf, np.nan, -np.inf
        xt = torch_nchw(x)
        torch.nn.functional.max_pool2d(xt, ksize, strides).backward(
            torch.tensor(np.ascontiguousarray(dy.transpose(0, 3, 1, 2)))
        )
        np.testing.assert_array_equal(nn.max_pool_grad(x, y, dy, ksize, strides, NO_PADS), nhwc(xt.grad))


def test_share_blocks_gives_each_block_to_one_thread(three_threads):
    seen = []

    def run(shared):
        for block in shared:
            seen.append(block)

    blocks._share_blocks(run, blocks._shared_blocks(50, 4, parallel=True), parallel=True)
    assert sorted(seen) == blocks._even_blocks(50, 4, 12)
    covered = sorted(i for first, last in seen for i in range(first, last))
    assert covered == list(range(50))


@pytest.mark.parametrize(
    "total, size, count, expected",
    [
        (0, 5, 1, []),
        (10, 3, 1, [(0, 2), (2, 5), (5, 7), (7, 10)]),
        (10, 100, 4, [(0, 2), (2, 5), (5, 7), (7, 10)]),
        (3, 100, 8, [(0, 1), (1, 2), (2, 3)]),
        (7, 7, 1, [(0, 7)]),
    ],
)
def test_even_blocks(total, size, count, expected):
    assert blocks._even_blocks(total, size, count) == expected


@pytest.mark.parametrize("length", [0, 5, 64, 1000])
@pytest.mark.parametrize("fortran", [False, True])
def test_thin_gemm_sums_its_pieces(length, fortran):
    """Stacked single-thread pieces plus a remainder give ``a @ b``, for a
    C-ordered (shifted_gemm) or transposed (im2col_gemm) patch matrix."""
    rng = np.random.default_rng(10)
    a = rng.standard_normal((length, 6)).T if fortran else rng.standard_normal((6, length))
    b = rng.standard_normal((length, 4))
    total = np.ones((6, 4))
    step = blocks._thin_gemm_step(6, 4)
    assert step == blocks._THIN_GEMM_MAX_STEP
    blocks._add_thin_gemm(a, b, total, 64)
    np.testing.assert_allclose(total, 1 + a @ b, rtol=1e-12, atol=1e-12)
    assert blocks._thin_gemm_step(64, 8192) == 0  # pieces shorter than the minimum: one GEMM


def test_single_thread_matmul_cuts_wide_operands(monkeypatch):
    monkeypatch.setattr(blocks, "_BLAS_SINGLE_THREAD_FLOPS", 50)
    monkeypatch.setattr(blocks, "_THIN_GEMM_MIN_STEP", 2)
    rng = np.random.default_rng(11)
    a = rng.standard_normal((4, 3))
    b = rng.standard_normal((2, 3, 23))  # a broadcast over a batch, 23 = 5 pieces of 4 and 3
    out = np.empty((2, 4, 23))
    blocks._single_thread_matmul(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    monkeypatch.setattr(blocks, "_THIN_GEMM_MIN_STEP", 5)  # pieces of 4 columns would be too narrow: one call
    out = np.empty((2, 4, 23))
    blocks._single_thread_matmul(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)


def test_relu_kernels_split_between_threads_and_keep_dtype(monkeypatch):
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(blocks, "_thread_count", lambda: 3)
    rng = np.random.default_rng(6)
    for dtype in (np.float16, np.float32, np.float64):
        x = rng.standard_normal((7, 5, 3)).astype(dtype)
        dy = rng.standard_normal((7, 5, 3)).astype(dtype)
        y = nn.relu(x)
        assert y.dtype == dtype
        np.testing.assert_array_equal(y, np.where(x > 0, x, 0))
        dx = nn.relu_grad(dy, x)
        assert dx.dtype == dtype
        np.testing.assert_array_equal(dx, np.where(x > 0, dy, 0))
    np.testing.assert_array_equal(nn.relu(np.array(-2.0)), 0.0)
    np.testing.assert_array_equal(nn.relu_grad(np.ones((2, 3)), np.array([1.0, -1.0, 2.0])), [[1, 0, 1], [1, 0, 1]])
    x_t = rng.standard_normal((4, 6)).T  # not contiguous
    np.testing.assert_array_equal(nn.relu(x_t), np.maximum(x_t, 0))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
def test_relu_against_an_array_of_zeros_is_the_scalar_maximum_bit_for_bit(dtype, monkeypatch):
    """ReLU compares with an array of zeros (NumPy's vectorized loop): the same bits as ``np.maximum(x, 0)``,
    signed zeros, NaNs of either sign and infinities included, for blocks of every layout and for a block too big
    for the kept zeros (the scalar then)."""
    from tensorlib.backends.numpy_nn import activations, fused

    monkeypatch.setattr(activations, "_ZEROS_MAX_BYTES", 2048)
    monkeypatch.setattr(activations, "_ZEROS_MIN_SIZE", 8)
    rng = np.random.default_rng(12)
    special = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, -1e-40, 1e-40, -1.0, 3.0])
    for shape in [(37,), (9, 33), (600, 7), ()]:
        x = rng.standard_normal(shape) * 10
        if x.ndim and np.dtype(dtype).kind == "f":
            x.flat[: special.size] = special[: x.size]
        x = x.astype(dtype)
        for view in [x, x.T, x[::-1], np.asfortranarray(x)] if x.ndim else [x]:
            expected = np.maximum(view, 0)
            got = nn.relu(view)
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(_bits(got), _bits(expected))
            block = np.array(view)
            fused._relu(block)
            np.testing.assert_array_equal(_bits(block), _bits(expected.astype(block.dtype)))
    zeros = activations._zeros.get(np.dtype(dtype))
    assert zeros is None or not zeros.any()  # never written through an ``out``


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def test_same_avg_pool_divides_by_real_cells_only():
    x = np.ones((1, 3, 3, 1))
    pads = resolve(x.shape, (2, 2), (2, 2), (1, 1), "SAME")  # ((0, 1), (0, 1))
    y = nn.avg_pool(x, (2, 2), (2, 2), pads)
    np.testing.assert_array_equal(y, np.ones((1, 2, 2, 1)))
    dx = nn.avg_pool_grad(x.shape, np.ones((1, 2, 2, 1)), (2, 2), (2, 2), pads)
    np.testing.assert_array_equal(dx[0, :, :, 0], [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5], [0.5, 0.5, 1.0]])


def test_max_pool_grad_sends_ties_to_the_first_max_in_row_major_order():
    x = np.array([[0.0, 2.0, 2.0], [2.0, 2.0, 1.0], [0.0, 0.0, 0.0]]).reshape(1, 3, 3, 1)
    # 2x2 windows, stride 1: every window but the bottom-right holds a tie.
    y = nn.max_pool(x, (2, 2), (1, 1), NO_PADS)
    dy = np.array([1.0, 10.0, 100.0, 1000.0]).reshape(1, 2, 2, 1)
    dx = nn.max_pool_grad(x, y, dy, (2, 2), (1, 1), NO_PADS)
    np.testing.assert_array_equal(dx[0, :, :, 0], [[0, 11, 0], [100, 1000, 0], [0, 0, 0]])
    ddx = np.arange(9.0).reshape(1, 3, 3, 1)
    gathered = nn.max_pool_grad_grad(x, y, ddx, (2, 2), (1, 1), NO_PADS)
    np.testing.assert_array_equal(gathered[0, :, :, 0], [[1, 1], [3, 4]])


def test_max_pool_grad_never_routes_into_padding():
    x = np.full((1, 3, 3, 1), -np.inf)
    x[0, 2, 2, 0] = 5.0
    pads = resolve(x.shape, (3, 3), (2, 2), (1, 1), "SAME")  # ((1, 1), (1, 1))
    y = nn.max_pool(x, (3, 3), (2, 2), pads)
    np.testing.assert_array_equal(y[0, :, :, 0], [[-np.inf, -np.inf], [-np.inf, 5.0]])
    dx = nn.max_pool_grad(x, y, np.ones_like(y), (3, 3), (2, 2), pads)
    # Windows whose max is -inf send their gradient to their first real cell.
    np.testing.assert_array_equal(dx[0, :, :, 0], [[1, 1, 0], [1, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_pool_kernels_keep_dtype(dtype):
    rng = np.random.default_rng(8)
    for case in (((2, 8, 6, 3), (2, 2), (2, 2), "VALID"), ((2, 7, 7, 10), (3, 3), (2, 2), "SAME")):
        x64, dy64, ddx64, ksize, strides, pads = random_pool_inputs(case, seed=int(rng.integers(99)))
        x, dy, ddx = (a.astype(dtype) for a in (x64, dy64, ddx64))
        rtol = 1e-5 if dtype == np.float32 else 3e-3
        y = nn.max_pool(x, ksize, strides, pads)
        checks = {
            "avg_pool": (
                nn.avg_pool(x, ksize, strides, pads),
                references.avg_pool(x.astype(float), ksize, strides, pads),
            ),
            "avg_pool_grad": (
                nn.avg_pool_grad(x.shape, dy, ksize, strides, pads),
                references.avg_pool_grad(x.shape, dy.astype(float), ksize, strides, pads),
            ),
            "max_pool": (y, references.max_pool(x.astype(float), ksize, strides, pads)),
            "max_pool_grad": (
                nn.max_pool_grad(x, y, dy, ksize, strides, pads),
                references.max_pool_grad(x.astype(float), dy.astype(float), ksize, strides, pads),
            ),
            "max_pool_grad_grad": (
                nn.max_pool_grad_grad(x, y, ddx, ksize, strides, pads),
                references.max_pool_grad_grad(x.astype(float), ddx.astype(float), ksize, strides, pads),
            ),
        }
        for name, (got, expected) in checks.items():
            assert got.dtype == dtype, name
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol, err_msg=name)


# ---------------------------------------------------------------------------
# Fused batch norm
# ---------------------------------------------------------------------------


def test_batch_norm_forward_matches_reference():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((3, 4, 5, 6)) * 3 + 1
    scale, offset = rng.standard_normal(6), rng.standard_normal(6)
    y, mean, var, inv_std = nn.fused_batch_norm_forward(x, scale, offset, 1e-3)
    np.testing.assert_allclose(y, references.batch_norm(x, scale, offset, 1e-3), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean, x.mean(axis=(0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(var, x.var(axis=(0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(inv_std, 1 / np.sqrt(x.var(axis=(0, 1, 2)) + 1e-3), rtol=1e-12)


def test_batch_norm_backward_matches_central_differences():
    rng = np.random.default_rng(22)
    x = rng.standard_normal((2, 3, 2, 3))
    scale, offset = rng.standard_normal(3), rng.standard_normal(3)
    weights = rng.standard_normal(x.shape)  # loss = sum(weights * y)
    epsilon, step = 1e-3, 1e-6

    def loss(x, scale, offset):
        return np.vdot(weights, nn.fused_batch_norm_forward(x, scale, offset, epsilon)[0])

    _, mean, _, inv_std = nn.fused_batch_norm_forward(x, scale, offset, epsilon)
    dx, dscale, doffset = nn.fused_batch_norm_backward(weights, x, scale, mean, inv_std)
    params = {"x": x, "scale": scale, "offset": offset}
    for name, analytic in (("x", dx), ("scale", dscale), ("offset", doffset)):
        numeric = np.zeros_like(params[name])
        for index in np.ndindex(numeric.shape):
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[name][index] += step
            minus[name][index] -= step
            numeric[index] = (loss(**plus) - loss(**minus)) / (2 * step)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_batch_norm_keeps_dtype(dtype):
    rng = np.random.default_rng(23)
    x64 = rng.standard_normal((4, 5, 6, 3)) * 2 + 3
    dy64 = rng.standard_normal(x64.shape)
    scale, offset = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    x, dy = x64.astype(dtype), dy64.astype(dtype)
    y, mean, var, inv_std = nn.fused_batch_norm_forward(x, scale, offset, 1e-3)
    assert y.dtype == dtype
    assert mean.dtype == var.dtype == inv_std.dtype == np.float32
    tol = 1e-4 if dtype == np.float32 else 1e-2
    x_cast = x.astype(float)
    np.testing.assert_allclose(y, references.batch_norm(x_cast, scale, offset, 1e-3), rtol=tol, atol=tol)
    np.testing.assert_allclose(var, x_cast.var(axis=(0, 1, 2)), rtol=tol)
    dx, dscale, doffset = nn.fused_batch_norm_backward(dy, x, scale, mean, inv_std)
    assert dx.dtype == dtype and dscale.dtype == doffset.dtype == np.float32
    dx64, dscale64, doffset64 = nn.fused_batch_norm_backward(
        dy.astype(float), x_cast, scale.astype(float), mean.astype(float), inv_std.astype(float)
    )
    np.testing.assert_allclose(dx, dx64, rtol=tol, atol=tol * np.abs(dx64).max())
    np.testing.assert_allclose(dscale, dscale64, rtol=tol, atol=tol)
    np.testing.assert_allclose(doffset, doffset64, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# PyTorch cross-check (skipped when torch is absent)
# ---------------------------------------------------------------------------


def torch_nchw(x):
    import torch

    return torch.tensor(np.ascontiguousarray(x.transpose(0, 3, 1, 2)), requires_grad=True)


def nhwc(t):
    return t.detach().numpy().transpose(0, 2, 3, 1)


@pytest.mark.parametrize("case", CONV_CASES[::5], ids=conv_case_id)
def test_conv_kernels_match_torch(case):
    torch = pytest.importorskip("torch")
    x, w, dy, strides, dilations, pads = random_conv_inputs(case, seed=13)
    xt = torch_nchw(x)
    wt = torch.tensor(np.ascontiguousarray(w.transpose(3, 2, 0, 1)), requires_grad=True)
    padded = torch.nn.functional.pad(xt, (*pads[1], *pads[0]))
    yt = torch.nn.functional.conv2d(padded, wt, stride=strides, dilation=dilations)
    yt.backward(torch.tensor(np.ascontiguousarray(dy.transpose(0, 3, 1, 2))))
    np.testing.assert_allclose(nn.conv2d(x, w, strides, dilations, pads), nhwc(yt), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        nn.conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads),
        xt.grad.numpy().transpose(0, 2, 3, 1),
        rtol=1e-10,
        atol=1e-10,
    )
    np.testing.assert_allclose(
        nn.conv2d_backprop_filter(x, w.shape, dy, strides, dilations, pads),
        wt.grad.numpy().transpose(2, 3, 1, 0),
        rtol=1e-10,
        atol=1e-10,
    )


def test_max_pool_and_batch_norm_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, 9, 9, 4))
    dy = rng.standard_normal((2, 5, 5, 4))
    pads = ((1, 1), (1, 1))  # symmetric, which torch's padding argument can express
    y = nn.max_pool(x, (3, 3), (2, 2), pads)
    xt = torch_nchw(x)
    yt = torch.nn.functional.max_pool2d(xt, 3, 2, padding=1)
    yt.backward(torch.tensor(np.ascontiguousarray(dy.transpose(0, 3, 1, 2))))
    np.testing.assert_array_equal(y, nhwc(yt))
    np.testing.assert_allclose(
        nn.max_pool_grad(x, y, dy, (3, 3), (2, 2), pads), xt.grad.numpy().transpose(0, 2, 3, 1), rtol=1e-12
    )

    xt = torch_nchw(x)
    at = torch.nn.functional.avg_pool2d(xt, 3, 2, padding=1, count_include_pad=False)
    np.testing.assert_allclose(nn.avg_pool(x, (3, 3), (2, 2), pads), nhwc(at), rtol=1e-12)

    scale, offset = rng.standard_normal(4), rng.standard_normal(4)
    xt = torch_nchw(x)
    st = torch.tensor(scale, requires_grad=True)
    ot = torch.tensor(offset, requires_grad=True)
    bt = torch.nn.functional.batch_norm(xt, None, None, st, ot, training=True, eps=1e-3)
    dyb = rng.standard_normal(x.shape)
    bt.backward(torch.tensor(np.ascontiguousarray(dyb.transpose(0, 3, 1, 2))))
    yb, mean, _, inv_std = nn.fused_batch_norm_forward(x, scale, offset, 1e-3)
    np.testing.assert_allclose(yb, nhwc(bt), rtol=1e-10, atol=1e-10)
    dx, dscale, doffset = nn.fused_batch_norm_backward(dyb, x, scale, mean, inv_std)
    np.testing.assert_allclose(dx, xt.grad.numpy().transpose(0, 2, 3, 1), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(dscale, st.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(doffset, ot.grad.numpy(), rtol=1e-9)
