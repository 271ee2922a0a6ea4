"""tl.distributed on this machine: 1 vs 2 dask workers against one process at equal cores.

Workloads
* seed: the seeds' forward (conv2d 3x3 VALID -> avg_pool 2 -> relu), N = 60000
  float32 (x is 246 MB), blocks of 5000 rows; each run computes the forward of
  every block and the sum of the output (so no run ships 324 MB of output back).
* cnn-grad: one data-parallel gradient step of bench/nn_workloads.py's
  cnn-train-step model (conv 5x5 1->32, conv 5x5 32->64, dense 3136->128->10;
  454,922 float32 parameters = 1.82 MB) on a global batch of 1024 in blocks of 128.

Configurations (per workload, in this one run, side by side)
* single, 1 thread / 2 threads: one process (a subprocess with
  OPENBLAS_NUM_THREADS = 1 or 2), the same tl.function, the same blocks in a
  loop (seed) or the whole batch at once (cnn-grad).
* dask, 1 worker / 2 workers: LocalCluster, processes, one thread and one BLAS
  thread per worker (dask's nanny default), data persisted on the workers
  first, so a run moves only the function (once), the parameters and the
  results.

Reported: median wall time of ``--repeats`` runs after one warm-up,
scaling efficiency t(1 worker) / (2 * t(2 workers)), the overhead of dask
against the single process at equal cores, and the TCP bytes moved between
the client, the scheduler and the workers during one gradient step (``ss
-tin`` counters of the cluster's connections).

The machine is shared: run it when it is quiet, or read the medians as
noisy; the ratios are taken in one run.

    python bench/distributed_scaling.py [--repeats 7] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import warnings

import numpy as np

# Persisting the inputs ships them inside the graph once, on purpose (that is the setup, not the step).
warnings.filterwarnings("ignore", message="Sending large graph")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED_N, SEED_BLOCK = 60000, 5000
CNN_BATCH, CNN_BLOCK = 1024, 128
CNN_SHAPES = {
    "w1": (5, 5, 1, 32),
    "b1": (32,),
    "w2": (5, 5, 32, 64),
    "b2": (64,),
    "w3": (3136, 128),
    "b3": (128,),
    "w4": (128, 10),
    "b4": (10,),
}


def seed_forward(tl, x, w):
    y = tl.nn.conv2d(x, w, strides=1, padding="VALID")
    y = tl.nn.avg_pool(y, ksize=2, strides=2, padding="VALID")
    return tl.nn.relu(y)


def cnn_loss(params, x, labels):
    import tensorlib as tl

    p = params
    h = tl.nn.relu(tl.nn.conv2d(x, p["w1"], strides=1, padding="SAME") + p["b1"])
    h = tl.nn.max_pool(h, ksize=2, strides=2, padding="VALID")
    h = tl.nn.relu(tl.nn.conv2d(h, p["w2"], strides=1, padding="SAME") + p["b2"])
    h = tl.nn.max_pool(h, ksize=2, strides=2, padding="VALID")
    h = tl.reshape(h, (x.shape[0], 7 * 7 * 64))
    h = tl.nn.relu(h @ p["w3"] + p["b3"])
    logits = h @ p["w4"] + p["b4"]
    return tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def seed_data(n):
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, 32, 32, 1)).astype(np.float32), rng.standard_normal((3, 3, 1, 6)).astype(np.float32)


def cnn_data(batch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, 28, 28, 1)).astype(np.float32)
    labels = rng.integers(0, 10, batch)
    params = {}
    for name, shape in CNN_SHAPES.items():
        fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 0
        scale = np.sqrt(2.0 / fan_in) if fan_in else 0.01
        params[name] = (rng.standard_normal(shape) * scale).astype(np.float32)
    return x, labels, params


def timed(fn, repeats):
    fn()  # warm-up: traces, first touches of memory
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


# ---------------------------------------------------------------- one process
def single(repeats, seed_n):
    import tensorlib as tl

    out = {}
    x, w = seed_data(seed_n)
    f = tl.function(lambda b: tl.sum(seed_forward(tl, b, w)))

    def seed_run():
        return sum(float(f(x[i : i + SEED_BLOCK])) for i in range(0, len(x), SEED_BLOCK))

    out["seed"] = timed(seed_run, repeats)[0]
    xc, labels, params = cnn_data(CNN_BATCH)
    names = list(params)
    step = tl.function(
        lambda leaves, x, y: tl.value_and_grad(
            lambda *ls: cnn_loss(dict(zip(names, ls)), x, y), argnums=tuple(range(len(names)))
        )(*leaves)
    )
    leaves = [params[k] for k in names]

    def cnn_run():
        loss, grads = step(leaves, xc, labels)
        return float(loss), [g.numpy() for g in grads]

    out["cnn-grad"] = timed(cnn_run, repeats)[0]
    out["cnn-loss"] = cnn_run()[0]
    return out


# ---------------------------------------------------------------- dask
def cluster_ports(cluster, client) -> set:
    return {int(a.rsplit(":", 1)[1]) for a in [cluster.scheduler_address, *client.scheduler_info()["workers"]]}


def tcp_bytes(ports: set) -> int:
    """Bytes received so far on the open TCP connections to or from these ports (``ss -tin``).

    Both ends of a loopback connection are listed, each with the bytes it
    received, so the sum counts every byte sent between the cluster's
    processes once (the client, the scheduler and the workers; the nannies'
    own traffic to their workers is not included)."""
    text = subprocess.run(["ss", "-tinH"], capture_output=True, text=True, check=True).stdout
    total, matched = 0, False
    for line in text.splitlines():
        if not line[:1].isspace():
            cols = line.split()
            matched = len(cols) >= 5 and any(
                c.rsplit(":", 1)[-1].isdigit() and int(c.rsplit(":", 1)[1]) in ports for c in cols[3:5]
            )
        elif matched:
            found = re.search(r"bytes_received:(\d+)", line)
            total += int(found.group(1)) if found else 0
    return total


def on_dask(n_workers, repeats, seed_n):
    import dask.array as da
    from distributed import Client, LocalCluster

    import tensorlib as tl

    out = {}
    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,
        ) as cluster,
        Client(cluster) as client,
    ):
        x, w = seed_data(seed_n)
        xd = client.persist(da.from_array(x, chunks=(SEED_BLOCK, 32, 32, 1)))
        y = tl.distributed.map_blocks(lambda b: seed_forward(tl, b, w), xd, client=client).sum()
        out["seed"] = timed(lambda: client.compute(y).result(), repeats)[0]

        xc, labels, params = cnn_data(CNN_BATCH)
        xcd = client.persist(da.from_array(xc, chunks=(CNN_BLOCK, 28, 28, 1)))
        yd = client.persist(da.from_array(labels, chunks=CNN_BLOCK))

        def cnn_run():
            loss, grads = tl.distributed.value_and_grad(cnn_loss, params, xcd, yd, client=client)
            return float(loss), grads

        out["cnn-grad"] = timed(cnn_run, repeats)[0]
        ports = cluster_ports(cluster, client)
        moved = []
        for _ in range(3):
            before = tcp_bytes(ports)
            loss, grads = cnn_run()
            moved.append(tcp_bytes(ports) - before)
        out["cnn-loss"] = loss
        out["bytes"] = statistics.median(moved)
        out["param_bytes"] = int(sum(p.nbytes for p in params.values()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="N = 12000 for the seed, 3 repeats")
    ap.add_argument("--single", type=int, help=argparse.SUPPRESS)  # worker mode: print single() as JSON
    args = ap.parse_args()
    seed_n = 12000 if args.quick else SEED_N
    repeats = 3 if args.quick else args.repeats
    if args.single:
        print(json.dumps(single(repeats, seed_n)))
        return
    results = {}
    for threads in (1, 2):
        env = dict(
            os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads)
        )
        done = subprocess.run(
            [sys.executable, __file__, "--single", str(threads), "--repeats", str(repeats)]
            + (["--quick"] if args.quick else []),
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        results[f"single-{threads}"] = json.loads(done.stdout.strip().splitlines()[-1])
    for n in (1, 2):
        results[f"dask-{n}"] = on_dask(n, repeats, seed_n)

    print(
        f"tl.distributed scaling, medians of {repeats} runs (seconds); seed N={seed_n} in blocks of "
        f"{SEED_BLOCK}, cnn-grad batch {CNN_BATCH} in blocks of {CNN_BLOCK}"
    )
    print(
        f"{'workload':10} {'single 1t':>10} {'single 2t':>10} {'dask 1w':>10} {'dask 2w':>10} "
        f"{'scaling eff':>12} {'dask/single 1 core':>19} {'dask/single 2 cores':>20}"
    )
    for key in ("seed", "cnn-grad"):
        s1, s2 = results["single-1"][key], results["single-2"][key]
        d1, d2 = results["dask-1"][key], results["dask-2"][key]
        print(
            f"{key:10} {s1:10.3f} {s2:10.3f} {d1:10.3f} {d2:10.3f} {d1 / (2 * d2):12.2f} {d1 / s1:19.2f} "
            f"{d2 / s2:20.2f}"
        )
    for n in (1, 2):
        r = results[f"dask-{n}"]
        p = r["param_bytes"]
        print(
            f"TCP bytes per cnn-grad step, {n} worker(s): {r['bytes'] / 1e6:.2f} MB = {r['bytes'] / p:.2f} x the "
            f"{p / 1e6:.2f} MB of parameters (median of 3 steps)"
        )
    losses = [results[k]["cnn-loss"] for k in results]
    print(f"cnn loss agrees across configurations: max |diff| = {max(losses) - min(losses):.2e}")


if __name__ == "__main__":
    main()
