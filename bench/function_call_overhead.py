"""Per-call overhead of a tiny ``tl.function``: the signature key, the cache lookup and the executor run.

Each row calls an already-traced function ``CALLS`` times on (4,) float32 tensors and reports the median
microseconds per call over ``REPEATS`` batches (and the fastest batch: on a shared, noisy machine the
minimum is the steadier figure):

  flat     ``f(x, y)`` for ``f = tl.function(lambda x, y: x * y + 1.0)``
  nested   the same math on ``f({"x": x, "pair": (y, z)})`` returning ``{"out": ..., "both": [...]}``

Compare two checkouts in one run by listing their roots (each row is measured in a fresh
subprocess per checkout, alternating)::

    python bench/function_call_overhead.py [--quick] [ROOT ...]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

CALLS = 10_000
REPEATS = 7
PROCESSES = 5

_WORKER = r"""
import json, statistics, sys, time
import numpy as np
import tensorlib as tl

calls, repeats = int(sys.argv[1]), int(sys.argv[2])
x = tl.tensor(np.arange(4, dtype=np.float32))
y = tl.tensor(np.ones(4, dtype=np.float32))
z = tl.tensor(np.full(4, 2.0, dtype=np.float32))
flat = tl.function(lambda x, y: x * y + 1.0)
nested = tl.function(lambda p: {"out": p["x"] * p["pair"][0] + 1.0, "both": [p["pair"][1], p["x"]]})
rows = {"flat": lambda: flat(x, y), "nested": lambda: nested({"x": x, "pair": (y, z)})}
out = {}
for name, call in rows.items():
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls * 1e6)
    out[name] = statistics.median(times)
    out[name + " (min)"] = min(times)
print(json.dumps(out))
"""


def _measure(root: str, calls: int, repeats: int) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _WORKER, str(calls), str(repeats)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    quick = "--quick" in sys.argv
    roots = [a for a in sys.argv[1:] if not a.startswith("--")] or [str(Path(__file__).resolve().parents[1])]
    calls, repeats = (2_000, 5) if quick else (CALLS, REPEATS)
    runs: dict = {root: [] for root in roots}
    for _ in range(PROCESSES):  # alternate the checkouts so machine noise hits each alike
        for root in roots:
            runs[root].append(_measure(root, calls, repeats))
        time.sleep(0.1)
    print(f"tl.function call overhead, us/call ({calls} calls x {repeats} batches, {PROCESSES} processes)")
    names = list(runs[roots[0]][0])
    print(f"{'row':<14}" + "".join(f"{Path(r).name[-20:]:>22}" for r in roots))
    for name in names:
        pick = min if name.endswith("(min)") else statistics.median
        cells = [pick(m[name] for m in runs[root]) for root in roots]
        print(f"{name:<14}" + "".join(f"{c:>22.2f}" for c in cells))


if __name__ == "__main__":
    main()
