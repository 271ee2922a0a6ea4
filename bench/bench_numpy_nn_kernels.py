"""Timing of the NumPy conv / pool / batch-norm kernels on three workloads.

Not a test: prints the median wall time (ms) of repeated runs.

* seed: x (N, 32, 32, 1), w (3, 3, 1, 6), conv VALID -> 2x2/2 avg pool VALID
  -> relu, N = 6000, float64 and float32.
* cnn: batch 128, 28x28x1 float32; conv 5x5 1->32 SAME, relu, maxpool 2,
  conv 5x5 32->64 SAME, relu, maxpool 2; forward plus the backprops of both
  convs (input and filter; none for the first conv's input) and both pools.
* bn: fused batch norm forward and backward on (128, 28, 28, 32) float32.
* pool: ``tl.nn.max_pool``/``avg_pool`` with PyTorch's options (padding, ceil_mode, dilations,
  return_indices, count_include_pad) on (16, 32, 56, 56) float32 NCHW, forward and forward plus
  backward, through the public functions (dispatch included), next to torch's max_pool2d/avg_pool2d
  with the same options.

Fresh output arrays cost page faults on first touch, so the numbers move
with the state of the allocator and the machine: compare within one run.

When PyTorch is installed, the same conv/pool parts run through it too.

    python bench/bench_numpy_nn_kernels.py [--repeats 7] [--only seed|cnn|bn|pool]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (pins threads before numpy is imported; puts the repo on sys.path)

import numpy as np  # noqa: E402

from tensorlib.backends import numpy_nn as nn  # noqa: E402

VALID = ((0, 0), (0, 0))
ONE = (1, 1)


def median_ms(fn, repeats: int) -> float:
    return 1e3 * common.median_time(fn, repeats=repeats, warmup=1)


def report(label: str, ms: float) -> None:
    print(f"  {label:<44s} {ms:8.1f} ms")


def bench_seed(repeats: int) -> None:
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        x = rng.standard_normal((6000, 32, 32, 1)).astype(dtype)
        w = rng.standard_normal((3, 3, 1, 6)).astype(dtype)
        strategy = nn.conv2d_strategy(x.shape, w.shape, ONE, ONE, VALID)
        print(f"seed workload, {np.dtype(dtype).name}, conv strategy {strategy}")
        conv = nn.conv2d(x, w, ONE, ONE, VALID)
        report("conv2d", median_ms(lambda: nn.conv2d(x, w, ONE, ONE, VALID), repeats))
        report("avg_pool", median_ms(lambda: nn.avg_pool(conv, (2, 2), (2, 2), VALID), repeats))
        # The two plain-NumPy pools DESIGN §4 asks to weigh against each other.
        windows = (conv.shape[0], conv.shape[1] // 2, 2, conv.shape[2] // 2, 2, conv.shape[3])
        report(
            "  vs reshape(...).mean(axis=(2, 4))", median_ms(lambda: conv.reshape(windows).mean(axis=(2, 4)), repeats)
        )
        report("  vs sum of 4 strided slices", median_ms(lambda: sum_of_slices_pool(conv), repeats))

        def forward():
            pooled = nn.avg_pool(nn.conv2d(x, w, ONE, ONE, VALID), (2, 2), (2, 2), VALID)
            return np.maximum(pooled, 0, out=pooled)

        report("conv2d + avg_pool + relu", median_ms(forward, repeats))


def sum_of_slices_pool(x):
    """2x2/2 average pool as a sum of the four strided tap slices."""
    out = np.add(x[:, 0::2, 0::2], x[:, 0::2, 1::2])
    out += x[:, 1::2, 0::2]
    out += x[:, 1::2, 1::2]
    out *= 0.25
    return out


def cnn_step_kernels(x, w1, w2):
    """The conv/pool kernel calls of one CNN training step."""
    pads1 = nn.resolve_conv_padding(x.shape[1:3], (5, 5), ONE, ONE, "SAME")[1]
    a1 = nn.conv2d(x, w1, ONE, ONE, pads1)
    np.maximum(a1, 0, out=a1)
    p1 = nn.max_pool(a1, (2, 2), (2, 2), VALID)
    pads2 = nn.resolve_conv_padding(p1.shape[1:3], (5, 5), ONE, ONE, "SAME")[1]
    a2 = nn.conv2d(p1, w2, ONE, ONE, pads2)
    np.maximum(a2, 0, out=a2)
    p2 = nn.max_pool(a2, (2, 2), (2, 2), VALID)

    dp2 = np.ones_like(p2)  # stands in for the dense layers' gradient
    da2 = nn.max_pool_grad(a2, p2, dp2, (2, 2), (2, 2), VALID)
    da2 *= a2 > 0
    dw2 = nn.conv2d_backprop_filter(p1, w2.shape, da2, ONE, ONE, pads2)
    dp1 = nn.conv2d_backprop_input(p1.shape, w2, da2, ONE, ONE, pads2)
    da1 = nn.max_pool_grad(a1, p1, dp1, (2, 2), (2, 2), VALID)
    da1 *= a1 > 0
    dw1 = nn.conv2d_backprop_filter(x, w1.shape, da1, ONE, ONE, pads1)
    return dw1, dw2


def bench_cnn(repeats: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 28, 28, 1)).astype(np.float32)
    w1 = (rng.standard_normal((5, 5, 1, 32)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((5, 5, 32, 64)) * 0.05).astype(np.float32)
    pads = ((2, 2), (2, 2))
    a1 = np.maximum(nn.conv2d(x, w1, ONE, ONE, pads), 0)
    p1 = nn.max_pool(a1, (2, 2), (2, 2), VALID)
    a2 = np.maximum(nn.conv2d(p1, w2, ONE, ONE, pads), 0)
    p2 = nn.max_pool(a2, (2, 2), (2, 2), VALID)
    da2 = np.ones_like(a2)
    da1 = np.ones_like(a1)
    print("cnn step, batch 128 float32 (conv/pool kernels only)")
    print(
        f"  conv1 strategy {nn.conv2d_strategy(x.shape, w1.shape, ONE, ONE, pads)}, "
        f"conv2 strategy {nn.conv2d_strategy(p1.shape, w2.shape, ONE, ONE, pads)}"
    )
    parts = {
        "conv1 forward": lambda: nn.conv2d(x, w1, ONE, ONE, pads),
        "maxpool1 forward": lambda: nn.max_pool(a1, (2, 2), (2, 2), VALID),
        "conv2 forward": lambda: nn.conv2d(p1, w2, ONE, ONE, pads),
        "maxpool2 forward": lambda: nn.max_pool(a2, (2, 2), (2, 2), VALID),
        "maxpool2 grad": lambda: nn.max_pool_grad(a2, p2, np.ones_like(p2), (2, 2), (2, 2), VALID),
        "conv2 backprop_filter": lambda: nn.conv2d_backprop_filter(p1, w2.shape, da2, ONE, ONE, pads),
        "conv2 backprop_input": lambda: nn.conv2d_backprop_input(p1.shape, w2, da2, ONE, ONE, pads),
        "maxpool1 grad": lambda: nn.max_pool_grad(a1, p1, np.ones_like(p1), (2, 2), (2, 2), VALID),
        "conv1 backprop_filter": lambda: nn.conv2d_backprop_filter(x, w1.shape, da1, ONE, ONE, pads),
    }
    for label, fn in parts.items():
        report(label, median_ms(fn, repeats))
    # conv2 with the patch strategy it would use without fourier_gemm.
    forced = {"strategy": "im2col_gemm"}
    report("  conv2 forward, im2col_gemm", median_ms(lambda: nn.conv2d(p1, w2, ONE, ONE, pads, **forced), repeats))
    report(
        "  conv2 backprop_filter, im2col_gemm",
        median_ms(lambda: nn.conv2d_backprop_filter(p1, w2.shape, da2, ONE, ONE, pads, **forced), repeats),
    )
    report(
        "  conv2 backprop_input, im2col_gemm",
        median_ms(lambda: nn.conv2d_backprop_input(p1.shape, w2, da2, ONE, ONE, pads, **forced), repeats),
    )
    report("whole step (incl. relu masks)", median_ms(lambda: cnn_step_kernels(x, w1, w2), repeats))
    bench_cnn_torch(x, w1, w2, repeats)


def bench_cnn_torch(x, w1, w2, repeats: int) -> None:
    if not common.installed("torch"):
        return
    torch = common.import_torch()
    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    w1t = torch.from_numpy(np.ascontiguousarray(w1.transpose(3, 2, 0, 1))).requires_grad_()
    w2t = torch.from_numpy(np.ascontiguousarray(w2.transpose(3, 2, 0, 1))).requires_grad_()
    functional = torch.nn.functional

    def step():
        a1 = functional.relu(functional.conv2d(xt, w1t, padding=2))
        p1 = functional.max_pool2d(a1, 2)
        a2 = functional.relu(functional.conv2d(p1, w2t, padding=2))
        p2 = functional.max_pool2d(a2, 2)
        p2.backward(torch.ones_like(p2))

    report(f"torch {torch.__version__} same conv/pool step", median_ms(step, repeats))


def bench_batch_norm(repeats: int) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 28, 28, 32)).astype(np.float32)
    scale, offset = np.ones(32, np.float32), np.zeros(32, np.float32)
    y, mean, _, inv_std = nn.fused_batch_norm_forward(x, scale, offset, 1e-3)
    print("fused batch norm, (128, 28, 28, 32) float32")
    report("forward", median_ms(lambda: nn.fused_batch_norm_forward(x, scale, offset, 1e-3), repeats))
    report("backward", median_ms(lambda: nn.fused_batch_norm_backward(y, x, scale, mean, inv_std), repeats))


# (label, tl options, torch options): PyTorch's pool options, NCHW; the 3x3/2 pool of a ResNet stem and its kin
POOLS = [
    ("max 3/2 pad 1", "max", dict(padding=1), dict(padding=1)),
    ("max 3/2 pad 1 ceil_mode", "max", dict(padding=1, ceil_mode=True), dict(padding=1, ceil_mode=True)),
    ("max 3/2 pad 1 dilation 2", "max", dict(padding=1, dilations=2), dict(padding=1, dilation=2)),
    ("max 3/2 pad 1 return_indices", "max", dict(padding=1, return_indices=True), dict(padding=1, return_indices=True)),
    (
        "avg 3/2 pad 1 ceil_mode, no pad count",
        "avg",
        dict(padding=1, ceil_mode=True, count_include_pad=False),
        dict(padding=1, ceil_mode=True, count_include_pad=False),
    ),
]


def bench_pools(repeats: int) -> None:
    import tensorlib as tl

    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 32, 56, 56)).astype(np.float32)
    torch = common.import_torch() if common.installed("torch") else None
    print("pools with PyTorch's options, (16, 32, 56, 56) float32 NCHW, ksize 3, stride 2: forward / fwd+bwd")
    for label, kind, ours, theirs in POOLS:
        pool = tl.nn.max_pool if kind == "max" else tl.nn.avg_pool

        def forward(pool=pool, ours=ours):
            return pool(x, 3, 2, data_format="NCHW", **ours)

        def step(pool=pool, ours=ours):
            xs = tl.tensor(x)
            with tl.GradientTape() as tape:
                tape.watch(xs)
                y = pool(xs, 3, 2, data_format="NCHW", **ours)
                y = y[0] if isinstance(y, tuple) else y
            return tape.gradient(y, xs, output_gradients=tl.ones_like(y))

        line = f"tl {median_ms(forward, repeats):7.1f} / {median_ms(step, repeats):7.1f} ms"
        if torch is not None:
            xt = torch.from_numpy(x)
            function = torch.nn.functional.max_pool2d if kind == "max" else torch.nn.functional.avg_pool2d

            def torch_forward(function=function, theirs=theirs):
                with torch.no_grad():
                    return function(xt, 3, 2, **theirs)

            def torch_step(function=function, theirs=theirs):
                leaf = xt.detach().requires_grad_()
                y = function(leaf, 3, 2, **theirs)
                y = y[0] if isinstance(y, tuple) else y
                y.backward(torch.ones_like(y))
                return leaf.grad

            line += f"   torch {median_ms(torch_forward, repeats):7.1f} / {median_ms(torch_step, repeats):7.1f} ms"
        print(f"  {label:<40s} {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=("seed", "cnn", "bn", "pool"))
    args = parser.parse_args()
    benches = {"seed": bench_seed, "cnn": bench_cnn, "bn": bench_batch_norm, "pool": bench_pools}
    for name, bench in benches.items():
        if args.only in (None, name):
            bench(args.repeats)


if __name__ == "__main__":
    main()
