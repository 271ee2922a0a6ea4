"""Where is ``tl.nn.conv2d`` actually executed?  Answered by running code.

1. ``tl.ops.explain`` names the op type that ``tl.nn.conv2d`` dispatches, its
   attributes, the kernel on each backend (function and file:line), the conv
   strategy it picks for the given shapes, and the gradient function of each
   input -- ops of their own (Conv2DBackpropInput, Conv2DBackpropFilter), with
   their own kernels.
2. ``tl.profile`` lists the kernels that really ran, forward and backward:
   a first conv layer's images need no gradient, so Conv2DBackpropInput never runs.
3. The seeds' workload (x [6000, 32, 32, 1] float64, conv VALID -> avg_pool 2x2 -> relu),
   eager and traced with a placeholder for x, so no constant is embedded in the graph.

    python examples/conv_where_does_it_run.py
"""

import time

import numpy as np

import tensorlib as tl


def main():
    print("== 1. explain ==")
    tl.ops.explain(tl.nn.conv2d, (6000, 32, 32, 1), (3, 3, 1, 6), strides=1, padding="VALID")

    print("\n== 2. the kernels that ran, forward and backward ==")
    rng = np.random.default_rng(0)
    images = tl.tensor(rng.random((64, 32, 32, 1)))
    filters = tl.Variable(rng.random((3, 3, 1, 6)))
    with tl.profile() as prof:
        with tl.GradientTape() as tape:
            y = tl.nn.relu(tl.nn.avg_pool(tl.nn.conv2d(images, filters, 1, "VALID"), 2, 2, "VALID"))
            loss = tl.sum(y * y)
        tape.gradient(loss, filters)
    print(prof.table(limit=12))

    print("\n== 3. the seeds' workload ==")
    x = rng.random((6000, 32, 32, 1))
    w = rng.random((3, 3, 1, 6))

    def forward(x, w):
        y = tl.nn.conv2d(x, w, strides=1, padding="VALID")
        y = tl.nn.avg_pool(y, ksize=2, strides=2, padding="VALID")
        return tl.nn.relu(y)

    traced = tl.function(forward)
    for name, f in (("eager", forward), ("tl.function", traced)):
        times = []
        for _ in range(4):
            start = time.perf_counter()
            result = f(x, w).numpy()
            times.append(time.perf_counter() - start)
        print(
            f"{name:12s} first call {times[0] * 1e3:7.1f} ms, then {min(times[1:]) * 1e3:7.1f} ms "
            f"-> {result.shape} {result.dtype}"
        )


if __name__ == "__main__":
    main()
