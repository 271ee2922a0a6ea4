"""Kernels of the ops that have both a NumPy kernel and a generic (Array API) one: the NumPy kernel,
the generic kernel on NumPy (xp = numpy) and on array_api_strict, medians side by side in one run.

The NumPy backend keeps its own kernel where the generic one is slower on NumPy (this table is how
that was decided); array_api_strict shows the cost of the standard's wrapper, not of a GPU.

    python bench/bench_generic_kernels.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402, F401  (sets thread env vars before numpy is imported; puts the repo on the path)

import numpy as np  # noqa: E402

import tensorlib as tl  # noqa: E402


def _median_us(fn, repeats, inner=10):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    repeats = parser.parse_args().repeats
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 32, 32, 16)).astype(np.float32)
    w = rng.standard_normal((3, 3, 16, 16)).astype(np.float32)
    m = rng.standard_normal((256, 256)).astype(np.float32)
    idx = np.argsort(m, axis=1)
    conv = {"strides": (1, 1), "padding": "SAME", "dilations": (1, 1)}
    pool = {"ksize": (2, 2), "strides": (2, 2), "padding": "VALID"}
    cases = [
        ("Cumsum", (m,), {"axis": 1, "reverse": False}),
        ("ReverseV2", (m,), {"axis": (0,)}),
        ("TakeAlongAxisGrad", (m, idx, m), {"axis": 1}),
        ("MatrixDiagPart", (m,), {"offset": 0, "axis1": 0, "axis2": 1}),
        ("NanToNum", (m,), {"nan": 0.0, "posinf": None, "neginf": None}),
        ("Conv2D", (x, w), conv),
        ("MaxPool", (x,), pool),
        ("AvgPool", (x,), pool),
        (
            "FusedBatchNormV3",
            (x, np.ones(16, np.float32), np.zeros(16, np.float32), np.zeros(0), np.zeros(0)),
            {"epsilon": 1e-3, "is_training": True},
        ),
    ]
    strict = tl.backends.get("array_api_strict")
    try:
        strict_xp = strict.xp
    except ImportError:
        strict_xp = None
    print(f"{'op':20s} {'numpy kernel':>14s} {'generic, numpy':>15s} {'generic, strict':>16s}  (median us)")
    for op_type, arrays, attrs in cases:
        op = tl.ops.get(op_type)
        native = _median_us(lambda: op.kernels["numpy"](*arrays, **attrs), repeats)
        generic = _median_us(lambda: op.generic_kernel(np, *arrays, **attrs), repeats)
        if strict_xp is None:
            on_strict = float("nan")
        else:
            converted = [strict.asarray(a) for a in arrays]
            on_strict = _median_us(lambda: op.generic_kernel(strict_xp, *converted, **attrs), repeats)
        print(f"{op_type:20s} {native:14.1f} {generic:15.1f} {on_strict:16.1f}   generic/numpy {generic / native:.2f}")


if __name__ == "__main__":
    main()
