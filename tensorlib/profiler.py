"""``tl.profile()``: every op executed, eager or traced, with its kernel and wall time.

>>> import tensorlib as tl
>>> with tl.profile() as prof:
...     _ = tl.exp(tl.ones((3,)))
>>> [e.op_type for e in prof.events]
['Exp']
"""
from __future__ import annotations

import collections
import dataclasses
import json
import time

from . import dispatch


@dataclasses.dataclass
class OpEvent:
    op_type: str
    input_shapes: tuple
    dtypes: tuple
    backend: str
    kernel: str
    start_s: float
    seconds: float
    mode: str


def _kernel_name(kernel) -> str:
    fn = getattr(kernel, "func", kernel)
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


class Profile:
    """Collects :class:`OpEvent` records while active (a context manager)."""

    def __init__(self):
        self.events: list[OpEvent] = []
        self._origin = time.perf_counter()

    def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager"):
        end = time.perf_counter()
        self.events.append(OpEvent(op.name, tuple(tuple(t.shape) for t in inputs),
                                   tuple(str(t.dtype) for t in inputs), backend.name, _kernel_name(kernel),
                                   end - seconds - self._origin, seconds, mode))

    def __enter__(self):
        dispatch.observers.append(self)
        return self

    def __exit__(self, *exc):
        dispatch.observers.remove(self)

    def summary(self) -> list[tuple]:
        """Rows ``(op_type, kernel, calls, total_s, mean_s)``, most expensive first."""
        totals = collections.defaultdict(lambda: [0, 0.0])
        for e in self.events:
            row = totals[(e.op_type, e.kernel)]
            row[0] += 1
            row[1] += e.seconds
        rows = [(op, k, n, t, t / n) for (op, k), (n, t) in totals.items()]
        return sorted(rows, key=lambda r: -r[3])

    def table(self, limit: int | None = 30) -> str:
        """A text table of time per op type and kernel."""
        rows = self.summary()[:limit]
        total = sum(e.seconds for e in self.events) or 1.0
        lines = [f"{'op type':<24} {'calls':>6} {'total ms':>10} {'mean us':>10} {'%':>6}  kernel"]
        for op, kernel, n, t, mean in rows:
            lines.append(f"{op:<24} {n:>6} {t * 1e3:>10.3f} {mean * 1e6:>10.1f} {100 * t / total:>6.1f}  {kernel}")
        return "\n".join(lines)

    def export_chrome_trace(self, path) -> None:
        """Write the events in Chrome's trace format (open in Perfetto or chrome://tracing)."""
        events = [{"name": e.op_type, "cat": e.mode, "ph": "X", "pid": 0, "tid": 0,
                   "ts": e.start_s * 1e6, "dur": e.seconds * 1e6,
                   "args": {"shapes": [list(s) for s in e.input_shapes], "dtypes": list(e.dtypes),
                            "backend": e.backend, "kernel": e.kernel}} for e in self.events]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


def profile() -> Profile:
    """Record every op run inside ``with tl.profile() as prof:``."""
    return Profile()
