"""Graph mode in five minutes: the seeds' three ways to feed a big array, answered with tl.function.

The question: a TF1 graph using a 60000x32x32 NumPy array directly (or via
tf.constant) took 10 s on its first run, a placeholder version didn't.  The
array was copied into the graph as a constant.  Here a closed-over array is
captured by reference, so all three methods cost the same on the first call.

    python examples/graph_mode.py            # N = 6000 images
    python examples/graph_mode.py --n 60000  # the seeds' size (about 0.5 GB per array)
"""

import argparse
import os
import tempfile
import time

import numpy as np

import tensorlib as tl


def timed(fn, repeats=3):
    """(first call seconds, median of the next calls)."""
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times[0], float(np.median(times[1:]))


def conv_pool_relu(x, w):
    c = tl.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="VALID")
    p = tl.nn.avg_pool(c, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    return tl.nn.relu(p)


def seed_methods(n):
    print(f"== the seeds' workload: x [{n}, 32, 32, 1] float64, conv 3x3 VALID -> avg_pool 2x2 -> relu ==")
    rng = np.random.default_rng(0)
    x_np, w_np = rng.random((n, 32, 32, 1)), rng.random((3, 3, 1, 6))
    x_t, w_t = tl.tensor(x_np), tl.tensor(w_np)
    methods = {
        "eager": lambda: conv_pool_relu(x_np, w_np),
        "1: NumPy arrays used directly": tl.function(lambda: conv_pool_relu(x_np, w_np)),
        "2: tl.tensor values closed over": tl.function(lambda: conv_pool_relu(x_t, w_t)),
    }
    placeholder = tl.function(conv_pool_relu)
    methods["3: arguments (placeholders)"] = lambda: placeholder(x_np, w_np)
    reference = None
    for name, fn in methods.items():
        first, steady = timed(fn)
        out = fn().numpy()
        reference = out if reference is None else reference
        print(
            f"  {name:34s} first call {first:6.3f} s, then {steady:6.3f} s  "
            f"(max diff vs eager {np.abs(out - reference).max():.1e})"
        )
    graph = methods["1: NumPy arrays used directly"].get_graph()
    print("\nThe traced graph: both closed-over arrays are captures, read at every call")
    print(graph)
    print("\nWhat runs: AvgPool after a stride-1 Conv2D became one stride-2 Conv2D with a 4x4 filter")
    print(graph.optimize())
    path = os.path.join(tempfile.mkdtemp(), "seed.json")
    graph.save(path)
    size = os.path.getsize(path) + os.path.getsize(path[:-5] + ".npz")
    print(f"\nSaved without its captures: {size} bytes; load it and pass the arrays by name:")
    loaded = tl.graph.load(path)
    arrays = {c.name: x_np if tuple(c.shape) == x_np.shape else w_np for c in loaded.captures}
    print(
        f"  loaded({', '.join(f'{k}=...' for k in arrays)}) matches: {np.allclose(loaded(**arrays).numpy(), reference)}"
    )


def retracing():
    print("\n== retracing explains itself ==")
    f = tl.function(lambda x, mode: x * 2.0 if mode == "double" else x)
    f(np.ones((32, 3)), "double")
    f(np.ones((17, 3)), "double")
    f(np.ones((17, 3)), "same")
    for reason in f.retrace_reasons:
        print("  ", reason)


def per_op_cost():
    print("\n== 1000 small elementwise ops: eager vs one traced call ==")

    def chain(x):
        for _ in range(200):
            x = tl.exp(tl.sin(x * 1.0001 + 0.5) - 0.25)
        return x

    x = tl.tensor(np.array([0.1, 0.2, 0.3, 0.4]))
    traced = tl.function(chain)
    traced(x)
    eager_s = timed(lambda: chain(x), 10)[1]
    traced_s = timed(lambda: traced(x), 10)[1]
    print(
        f"  eager {eager_s / 1000 * 1e6:.2f} us/op, traced {traced_s / 1000 * 1e6:.2f} us/op "
        f"({eager_s / traced_s:.1f}x faster)"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6000, help="number of 32x32 images")
    args = parser.parse_args()
    seed_methods(args.n)
    retracing()
    per_op_cost()


if __name__ == "__main__":
    main()
