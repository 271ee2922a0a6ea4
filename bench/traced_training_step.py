"""The traced LeNet-style training step: tl.function against tf.function (no XLA) and PyTorch eager.

Workload (``cnn-train-step`` of ``bench/nn_workloads.py``, the same seeded
data and definitions): batch 128 of 28x28x1 float32; conv 5x5 1->32 SAME + b,
relu, max pool 2, conv 5x5 32->64 SAME + b, relu, max pool 2, dense
3136->128 + b, relu, dense 128->10 + b, mean sparse softmax cross entropy;
forward + backward for all 8 parameters.  Columns: tensorlib traced
(``tl.function``), tensorlib eager, PyTorch eager, TF ``tf.function`` (XLA
off, as TF's default).  One worker process per library, all in one run; the
other rows give each step's peak RSS above the RSS after its timing (MiB:
what a step allocates and frees), its peak RSS above the RSS before the step
was built (MiB: that plus what the step keeps between calls, such as
tl.function's buffer pool), and its minor page faults (first touches of
fresh memory) per step, each measured over 5 steps after the timing.  Each
column runs in a process of its own.

    python bench/traced_training_step.py [--quick]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (sets thread env vars before numpy is imported)
import nn_workloads as nw  # noqa: E402

KEY = "cnn-train-step"
COLUMNS = [
    common.Column("tensorlib-fn", "tl.function", "tensorlib", role="ours", ratio_label="tl.function / best peer"),
    common.Column("tensorlib", "tensorlib eager", "tensorlib"),
    common.Column("torch", "PyTorch eager", "torch"),
    common.Column("tf-fn", "tf.function", "tensorflow"),
]
LIB_COLS = {"tensorlib": ["tensorlib-fn", "tensorlib"], "torch": ["torch"], "tensorflow": ["tf-fn"]}
LIB_ORDER = ["tensorlib", "torch", "tensorflow"]


def make_worker(lib: str):
    def worker(rep: common.Reporter, args) -> None:
        {"tensorlib": common.import_tensorlib, "torch": common.import_torch, "tensorflow": common.import_tf}[lib]()
        if lib == "tensorflow":
            import tensorflow as tf

            tf.config.optimizer.set_jit(False)  # tf.function without XLA
        d = nw.make_data(KEY)
        s = nw.settings(KEY, args.quick)
        for col in LIB_COLS[lib]:
            if args.column in (None, col):
                _measure_column(rep, col, d, s)

    return worker


def _measure_column(rep: common.Reporter, col: str, d: dict, s: dict) -> None:
    gc.collect()
    _return_free_heap()  # what an earlier column freed must not lower this one's baseline's share
    before_build = common.rss_mib()
    step, _ = nw.build_step(col, KEY, d)

    def five():
        for _ in range(5):
            step()

    rep.measure(col, "step ms", lambda: common.median_time(step, **s) * 1e3)
    rep.measure(col, "peak MiB", lambda: common.measure_peak_above_baseline(five)["delta_mib"])
    rep.measure(col, "held+peak MiB", lambda: common.measure_peak_above_baseline(five)["peak_mib"] - before_build)
    rep.measure(col, "faults/step", lambda: _page_faults(five) / 5)


def _return_free_heap() -> None:
    """glibc's ``malloc_trim(0)``: give freed heap memory back to the system (where there is glibc)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _page_faults(run) -> int:
    """Minor page faults (first touches of fresh pages) while ``run()`` runs."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    run()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


WORKERS = {lib: make_worker(lib) for lib in LIB_ORDER}


def main(argv=None) -> int:
    parser = common.base_arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--column", help=argparse.SUPPRESS)  # a worker measures this column only
    args = parser.parse_args(argv)
    if args.worker:
        return common.run_as_worker(WORKERS, args)
    print(common.env_header())
    timeout = args.timeout or (300 if args.quick else 1200)
    res = common.Results()
    for lib in common.selected_libs(args, LIB_ORDER):
        # One process per column: what one column leaves behind (kernel workspaces, freed heap) must
        # not count in another's memory rows, nor its warm caches in another's time.
        for col in LIB_COLS[lib]:
            common.collect(__file__, [lib], [*common.quick_args(args), "--column", col], timeout, res)
    common.print_table(
        "traced training step (LeNet-style, batch 128): median ms per step; peak RSS MiB; page faults per step",
        [
            ("step ms", "step ms"),
            ("peak MiB", "peak MiB"),
            ("held+peak MiB", "held+peak MiB"),
            ("faults/step", "faults/step"),
        ],
        COLUMNS,
        res,
        fmt="{:.4g}",
        footnotes=list(res.notes),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
