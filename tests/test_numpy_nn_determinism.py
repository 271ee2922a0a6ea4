"""The NumPy conv kernels' filter gradient, a sum over the batch shared out between threads, gives the
same bits on every call: its blocks are summed in a fixed order whichever thread ran them."""

import numpy as np
import pytest

from tensorlib.backends import numpy_nn
from tensorlib.backends.numpy_nn import blocks, conv, fourier
from tensorlib.testing import references


@pytest.mark.parametrize("strategy", [numpy_nn.SHIFTED_GEMM, numpy_nn.IM2COL_GEMM, numpy_nn.FOURIER_GEMM])
def test_the_filter_gradient_is_the_same_to_the_bit_on_every_call(strategy, monkeypatch):
    monkeypatch.setattr(blocks, "_thread_count", lambda: 3)  # even where the process is held to one thread
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_BYTES", 0)  # share out whatever the size
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_FLOPS", 0)
    monkeypatch.setattr(conv, "_PATCH_BLOCK_BYTES", 8 * 1024)  # many blocks of a few images
    monkeypatch.setattr(fourier, "_FOURIER_GRAM_CHUNK_BYTES", 64 * 1024)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((48, 10, 10, 6)).astype(np.float32)
    dy = rng.standard_normal((48, 10, 10, 8)).astype(np.float32)
    pads = ((1, 1), (1, 1))
    results = [
        numpy_nn.conv2d_backprop_filter(x, (3, 3, 6, 8), dy, (1, 1), (1, 1), pads, strategy=strategy) for _ in range(12)
    ]
    assert len({r.tobytes() for r in results}) == 1
    want = references.conv2d_backprop_filter(x, (3, 3, 6, 8), dy, (1, 1), "SAME")
    np.testing.assert_allclose(results[0], want, rtol=1e-4, atol=1e-4)
