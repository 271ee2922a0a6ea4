"""tensorlib on CuPy against PyTorch CUDA (cuDNN), side by side in one run.

Workloads (seeded inputs, identical for both; see bench/nn_workloads.py for their definition):

* seed-f32-N60000: x [60000,32,32,1], w [3,3,1,6]; conv2d VALID -> avg_pool 2x2 -> relu, forward.
* cnn-train-step: batch 128 of 28x28x1; two 5x5 SAME convs (32, 64) with relu and max_pool 2, dense
  3136->128->10, mean sparse softmax cross entropy; loss and all 8 gradients.
* mlp-train-step: batch 256, 784->512->512->10 relu MLP, softmax cross entropy; loss and 6 gradients.
* tiny-add: one elementwise add of two 4-element float32 tensors (per-op eager overhead).

tensorlib runs eager and with the step in ``tl.function``; PyTorch runs eager (NCHW, cuDNN, its
default TF32 setting for convolutions).  Every timed call ends with a device synchronisation.
Times are medians of ``--repeats`` calls after warm-up; ratios are tensorlib / PyTorch.

    python bench/gpu_bench.py [--backend cupy] [--quick] [--repeats 15]

``--backend numpy --quick`` runs the same script on the CPU (to check the script itself).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import tensorlib as tl  # noqa: E402

CNN_BATCH, MLP_BATCH = 128, 256


def median_ms(step, sync, repeats, warmup=3):
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def data(kind, n):
    rng = np.random.default_rng({"seed": 0, "cnn": 1, "mlp": 2}[kind])
    f32 = np.float32
    if kind == "seed":
        return {
            "x": rng.standard_normal((n, 32, 32, 1)).astype(f32),
            "w": rng.standard_normal((3, 3, 1, 6)).astype(f32),
        }
    if kind == "cnn":
        d = {"x": rng.standard_normal((CNN_BATCH, 28, 28, 1)).astype(f32), "y": rng.integers(0, 10, CNN_BATCH)}
        shapes = {
            "w1": ((5, 5, 1, 32), 25),
            "b1": ((32,), 0),
            "w2": ((5, 5, 32, 64), 800),
            "b2": ((64,), 0),
            "w3": ((3136, 128), 3136),
            "b3": ((128,), 0),
            "w4": ((128, 10), 128),
            "b4": ((10,), 0),
        }
    else:
        labels = rng.integers(0, 10, MLP_BATCH)
        d = {"x": rng.standard_normal((MLP_BATCH, 784)).astype(f32), "y": np.eye(10, dtype=f32)[labels]}
        shapes = {
            "w1": ((784, 512), 784),
            "b1": ((512,), 0),
            "w2": ((512, 512), 512),
            "b2": ((512,), 0),
            "w3": ((512, 10), 512),
            "b3": ((10,), 0),
        }
    for name, (shape, fan_in) in shapes.items():
        d[name] = (rng.standard_normal(shape) * (np.sqrt(2.0 / fan_in) if fan_in else 0.01)).astype(f32)
    return d


# ---------------------------------------------------------------- tensorlib


def tl_step(kind, d, backend, traced):
    on = lambda a: tl.tensor(a, backend=backend)  # noqa: E731
    if kind == "seed":

        def f(x, w):
            return tl.nn.relu(tl.nn.avg_pool(tl.nn.conv2d(x, w, 1, "VALID"), 2, 2, "VALID"))

        f = tl.function(f) if traced else f
        x, w = on(d["x"]), on(d["w"])
        return lambda: f(x, w), lambda y: float(tl.sum(tl.cast(y, "float64")))
    names = [k for k in d if k not in ("x", "y")]
    params = [tl.Variable(d[k], backend=backend) for k in names]
    x, y = on(d["x"]), on(d["y"])

    def loss_fn(x, y):
        if kind == "cnn":
            w1, b1, w2, b2, w3, b3, w4, b4 = params
            h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w1, 1, "SAME") + b1), 2, 2, "VALID")
            h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(h, w2, 1, "SAME") + b2), 2, 2, "VALID")
            h = tl.nn.relu(tl.reshape(h, (CNN_BATCH, 3136)) @ w3 + b3)
            return tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h @ w4 + b4))
        w1, b1, w2, b2, w3, b3 = params
        h = tl.nn.relu(tl.nn.relu(x @ w1 + b1) @ w2 + b2)
        return tl.mean(tl.nn.softmax_cross_entropy_with_logits(labels=y, logits=h @ w3 + b3))

    def train_step(x, y):
        with tl.GradientTape() as tape:
            loss = loss_fn(x, y)
        return loss, tape.gradient(loss, params)

    train_step = tl.function(train_step) if traced else train_step
    return lambda: train_step(x, y), lambda r: float(r[0])


# ---------------------------------------------------------------- PyTorch CUDA


def torch_step(kind, d):
    import torch

    F = torch.nn.functional
    dev = "cuda"
    to = lambda a: torch.as_tensor(np.ascontiguousarray(a), device=dev)  # noqa: E731
    oihw = lambda a: a.transpose(3, 2, 0, 1)  # noqa: E731
    if kind == "seed":
        x, w = to(d["x"].transpose(0, 3, 1, 2)), to(oihw(d["w"]))

        def step():
            with torch.no_grad():
                return F.relu(F.avg_pool2d(F.conv2d(x, w), 2, 2))

        return step, lambda y: float(y.double().sum())
    if kind == "cnn":
        w3 = d["w3"].reshape(7, 7, 64, 128).transpose(2, 0, 1, 3).reshape(3136, 128)
        init = [oihw(d["w1"]), d["b1"], oihw(d["w2"]), d["b2"], w3, d["b3"], d["w4"], d["b4"]]
        params = [to(a).requires_grad_() for a in init]
        x, y = to(d["x"].transpose(0, 3, 1, 2)), to(d["y"])

        def step():
            w1, b1, w2, b2, w3_, b3, w4, b4 = params
            h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=2)), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=2)), 2)
            h = F.relu(torch.addmm(b3, h.reshape(CNN_BATCH, 3136), w3_))
            loss = F.cross_entropy(torch.addmm(b4, h, w4), y)
            return loss, torch.autograd.grad(loss, params)

        return step, lambda r: float(r[0])
    params = [to(d[k]).requires_grad_() for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
    x, y = to(d["x"]), to(d["y"])

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h = F.relu(torch.addmm(b2, F.relu(torch.addmm(b1, x, w1)), w2))
        loss = F.cross_entropy(torch.addmm(b3, h, w3), y)
        return loss, torch.autograd.grad(loss, params)

    return step, lambda r: float(r[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cupy")
    parser.add_argument("--quick", action="store_true", help="N=600 for the seed workload, fewer repeats")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    backend = tl.backends.get(args.backend)
    repeats = 3 if args.quick else args.repeats
    try:
        import torch

        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    sync_torch = (lambda: torch.cuda.synchronize()) if have_torch else None
    rows = []
    n_seed = 600 if args.quick else 60000
    for label, kind in (
        (f"seed-f32-N{n_seed}", "seed"),
        ("cnn-train-step b128", "cnn"),
        ("mlp-train-step b256", "mlp"),
    ):
        d = data(kind, n_seed)
        row = {"workload": label}
        checks = {}
        for column, traced in (("tensorlib", False), ("tl.function", True)):
            try:
                step, value = tl_step(kind, d, args.backend, traced)
                row[column] = median_ms(step, backend.synchronize, repeats)
                checks[column] = value(step())
            except Exception as e:  # noqa: BLE001 - report and go on: one run must give every number it can
                row[column] = None
                print(f"  {label} {column}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
        if have_torch:
            step, value = torch_step(kind, d)
            row["PyTorch"] = median_ms(step, sync_torch, repeats)
            checks["PyTorch"] = value(step())
        print(f"  {label}: values {checks}", flush=True)
        rows.append(row)

    # Per-op eager overhead: one add of two 4-element tensors, 2000 times, then one synchronisation.
    a, b = (
        tl.tensor(np.ones(4, np.float32), backend=args.backend),
        tl.tensor(np.ones(4, np.float32), backend=args.backend),
    )
    row = {"workload": "tiny-add (us/op)"}

    def tl_adds():
        for _ in range(2000):
            a + b

    row["tensorlib"] = median_ms(tl_adds, backend.synchronize, repeats) / 2000 * 1e3
    if have_torch:
        ta, tb = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")

        def torch_adds():
            for _ in range(2000):
                ta + tb

        row["PyTorch"] = median_ms(torch_adds, sync_torch, repeats) / 2000 * 1e3
    rows.append(row)

    print(f"\nbackend {args.backend}; ms per call (tiny-add: microseconds per op); median of {repeats}")
    header = f"{'workload':24s} {'tensorlib':>10s} {'tl.function':>12s} {'PyTorch':>9s} {'eager/PT':>9s} {'fn/PT':>7s}"
    print(header)
    print("-" * len(header))
    for r in rows:

        def cell(k, width):
            return f"{r[k]:{width}.3f}" if r.get(k) is not None else f"{'-':>{width}s}"

        def ratio(k):
            return f"{r[k] / r['PyTorch']:7.2f}x" if r.get(k) and r.get("PyTorch") else f"{'-':>8s}"

        print(
            f"{r['workload']:24s} {cell('tensorlib', 10)} {cell('tl.function', 12)} {cell('PyTorch', 9)} "
            f"{ratio('tensorlib'):>9s} {ratio('tl.function'):>7s}"
        )


if __name__ == "__main__":
    main()
