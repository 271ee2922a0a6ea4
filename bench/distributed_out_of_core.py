"""Out of core: the seeds' forward over N = 600000 float32 images (2.46 GB) that no worker can hold.

The input is a ``.npy`` file (written once, by chunks, to ``--path``) read
through ``tl.distributed.from_npy`` -- ``dask.array.from_array`` over a
memory map that each task opens where it runs, so the graph carries the
path and every worker reads only its own blocks.  A ``LocalCluster`` of 2
worker processes, each with a memory limit of ``--memory-limit`` (default
1 GiB, so both together hold less than the input), maps the seed forward
(conv2d 3x3 VALID -> avg_pool 2 -> relu) over blocks of ``--rows`` rows and
reduces the 3.24 GB output to its sum and its first 256 rows.

Checked: the head against the same function run in this process, the sum
against a streaming single-process pass over the same memory map (also the
time to beat at equal cores: that process uses 2 BLAS threads); reported:
wall times, each worker's peak resident memory (sampled every 50 ms) and the bytes it
spilled to disk.

    python bench/distributed_out_of_core.py [--n 600000] [--rows 10000] [--keep]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tensorlib as tl  # noqa: E402

HEAD = 256


def seed_forward(x, w):
    y = tl.nn.conv2d(x, w, strides=1, padding="VALID")
    y = tl.nn.avg_pool(y, ksize=2, strides=2, padding="VALID")
    return tl.nn.relu(y)


def write_input(path: str, n: int) -> None:
    """Write x [n, 32, 32, 1] float32 by chunks of 20000 rows, never holding it all in memory."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, 32, 32, 1))
    rng = np.random.default_rng(0)
    for i in range(0, n, 20000):
        out[i : i + 20000] = rng.standard_normal((min(20000, n - i), 32, 32, 1), dtype=np.float32)
    out.flush()
    del out


def spilled_bytes(dask_worker):
    """Bytes this worker spilled to disk (dask's own counters); run by ``client.run``."""
    digests = dask_worker.digests_total  # keyed by (..., activity, unit)
    return int(sum(v for k, v in digests.items() if isinstance(k, tuple) and k[-2:] == ("disk-write", "bytes")))


class PeakMemory(threading.Thread):
    """Samples the resident memory of some processes every 50 ms and keeps each one's peak.

    (``ru_maxrss`` will not do: a spawned worker inherits its parent's peak through exec.)"""

    def __init__(self, pids):
        super().__init__(daemon=True)
        import psutil

        self.procs = {pid: psutil.Process(pid) for pid in pids}
        self.peak = dict.fromkeys(pids, 0)
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(0.05):
            for pid, proc in self.procs.items():
                try:
                    self.peak[pid] = max(self.peak[pid], proc.memory_info().rss)
                except Exception:  # a worker that died (and was restarted) has no memory to sample
                    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=600000)
    ap.add_argument("--rows", type=int, default=10000, help="rows per block")
    ap.add_argument("--memory-limit", default="1GiB", help="per worker")
    ap.add_argument("--path", default=os.path.join(tempfile.gettempdir(), "tensorlib_seed_x.npy"))
    ap.add_argument("--keep", action="store_true", help="keep the input file for the next run")
    args = ap.parse_args()

    import dask
    from distributed import Client, LocalCluster

    w = np.random.default_rng(1).standard_normal((3, 3, 1, 6)).astype(np.float32)
    expected_bytes = args.n * 32 * 32 * 4
    if not (
        os.path.exists(args.path)
        and os.path.getsize(args.path) >= expected_bytes
        and np.load(args.path, mmap_mode="r").shape[0] == args.n
    ):
        t0 = time.perf_counter()
        write_input(args.path, args.n)
        print(f"wrote {args.path}: {os.path.getsize(args.path) / 1e9:.2f} GB in {time.perf_counter() - t0:.1f} s")
    size = os.path.getsize(args.path)

    # The time to beat: one process, 2 BLAS threads, streaming over the same memory map.
    f = tl.function(seed_forward)
    x_map = np.load(args.path, mmap_mode="r")
    t0 = time.perf_counter()
    total_single = 0.0
    for i in range(0, args.n, args.rows):
        total_single += float(np.sum(f(np.array(x_map[i : i + args.rows]), w).numpy(), dtype=np.float64))
    t_single = time.perf_counter() - t0
    print(f"single process done in {t_single:.1f} s", flush=True)
    head_single = f(np.array(x_map[:HEAD]), w).numpy()
    del x_map

    # Workers must never pause on memory pressure before doing the work; spill past 60 % like dask's default.
    with dask.config.set({"distributed.worker.memory.target": 0.6, "distributed.worker.memory.spill": 0.7}):
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                memory_limit=args.memory_limit,
                silence_logs=40,
            ) as cluster,
            Client(cluster) as client,
        ):
            limit = next(iter(client.scheduler_info()["workers"].values()))["memory_limit"]
            pids = client.run(os.getpid)
            sampler = PeakMemory(list(pids.values()))
            sampler.start()
            x = tl.distributed.from_npy(args.path, rows_per_block=args.rows)
            y = tl.distributed.map_blocks(seed_forward, x, w, client=client)
            t0 = time.perf_counter()
            total, head = client.compute([y.sum(dtype=np.float64), y[:HEAD]], sync=True)
            t_dask = time.perf_counter() - t0
            sampler.done.set()
            print(f"dask done in {t_dask:.1f} s", flush=True)
            spilled = client.run(spilled_bytes)
            memory = {addr: (sampler.peak[pid] / 1e6, spilled.get(addr, 0)) for addr, pid in pids.items()}

    print(
        f"input {size / 1e9:.2f} GB ({args.n} x 32 x 32 x 1 float32), output "
        f"{args.n * 15 * 15 * 6 * 4 / 1e9:.2f} GB, blocks of {args.rows} rows ({x.numblocks[0]} blocks)"
    )
    print(
        f"2 workers x 1 thread, memory limit {limit / 2**30:.2f} GiB each ({2 * limit / size:.2f} x the input "
        "for both together)"
    )
    for addr, (peak_mb, spilled) in sorted(memory.items()):
        print(f"  worker {addr}: peak resident {peak_mb:.0f} MB, spilled {spilled / 1e6:.1f} MB")
    print(f"dask, 2 workers:               {t_dask:7.1f} s")
    print(f"single process, 2 threads:     {t_single:7.1f} s   (dask / single = {t_dask / t_single:.2f})")
    head_ok = np.allclose(head, head_single, rtol=1e-5, atol=1e-5)
    sum_ok = np.isclose(total, total_single, rtol=1e-6)
    print(f"head of {HEAD} rows equals the single process: {head_ok}; sums {total:.6e} vs {total_single:.6e}: {sum_ok}")
    if not args.keep:
        os.remove(args.path)
    if not (head_ok and sum_ok):
        sys.exit(1)


if __name__ == "__main__":
    main()
