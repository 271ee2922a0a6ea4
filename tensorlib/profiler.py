"""``tl.profile()``: every op executed, eager or traced, forward or gradient, with its kernel and wall time.

Each :class:`OpEvent` says which op ran, on which shapes and dtypes, which
kernel ran it (the function that does the work, not the adapter that
resolves attributes), for how long, in which ``mode`` (``"eager"``, or
``"graph"`` for a node the executor of a ``tl.function`` ran) and in which
``phase`` (``"forward"``, or ``"gradient"`` for ops that gradient rules ran).

>>> import tensorlib as tl
>>> x = tl.Variable([1.0, 2.0])
>>> with tl.profile() as prof:
...     with tl.GradientTape() as tape:
...         y = tl.sum(tl.exp(x))
...     _ = tape.gradient(y, x)
>>> [(e.op_type, e.mode, e.phase) for e in prof.events][:2]
[('Exp', 'eager', 'forward'), ('Sum', 'eager', 'forward')]
>>> sorted({e.phase for e in prof.events})
['forward', 'gradient']

``prof.export_chrome_trace("trace.json")`` writes Chrome's trace format: open
https://ui.perfetto.dev (or ``chrome://tracing``) and load the file.  Each
mode and phase is one row ("eager forward", "graph gradient", ...), each op a
box whose arguments list its shapes, dtypes, backend and kernel:

>>> import json, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
>>> prof.export_chrome_trace(path)
>>> trace = json.load(open(path))
>>> sorted({e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"})
['eager forward', 'eager gradient']
>>> first = [e for e in trace["traceEvents"] if e["ph"] == "X"][0]
>>> first["name"], first["args"]["shapes"], first["args"]["kernel"]
('Exp', [[2]], 'numpy.exp')

``with tl.profiler.annotate("name"):`` names a block of code (PyTorch's
``record_function``): the ops inside carry it in ``scope``, and the block is a
box of its own on the trace's "annotations" row (see :func:`annotate`).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import threading
import time

from . import dispatch
from .graph.ir import current_phase
from .tensor import scopes as _scopes

_ROWS = ("eager forward", "eager gradient", "graph forward", "graph gradient")


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
    phase: str = "forward"
    scope: str = ""  # the names of the enclosing annotate() blocks, outermost first, joined by "/"
    strategy: str = ""  # the algorithm the kernel picked for these shapes, where it says (conv: "shifted_gemm")
    thread: str = ""  # the name of the thread that ran the op


@dataclasses.dataclass
class RangeEvent:
    """One :func:`annotate` block: its name, its scope (with the enclosing blocks' names) and its times."""

    name: str
    scope: str
    start_s: float
    seconds: float
    thread: str = ""


def _kernel_name(kernel) -> str:
    """The function doing the work: unwrap ``functools.partial`` (generic kernels) and adapters (``__wrapped__``)."""
    fn = getattr(kernel, "func", kernel)
    while getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    return f"{getattr(fn, '__module__', None) or '?'}.{getattr(fn, '__qualname__', None) or repr(fn)}"


def _strategy(kernel, inputs, attrs) -> str:
    """The algorithm ``kernel`` picks for these inputs, for a kernel that says (its ``strategy`` function):
    the NumPy conv kernels' ``"shifted_gemm"``, ``"im2col_gemm"`` or ``"fourier_gemm"``."""
    choose = getattr(kernel, "strategy", None)
    return "" if choose is None else choose(*inputs, **(attrs or {}))


def _kernel_text(e) -> str:
    return f"{e.kernel} [{e.strategy}]" if e.strategy else e.kernel


class Profile:
    """Collects :class:`OpEvent` records while active (a context manager)."""

    def __init__(self):
        self.events: list[OpEvent] = []
        self.ranges: list[RangeEvent] = []
        self._origin = time.perf_counter()

    def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager", phase=None):
        end = time.perf_counter()
        self.events.append(
            OpEvent(
                op.name,
                tuple(tuple(t.shape) for t in inputs),
                tuple(str(t.dtype) for t in inputs),
                backend.name,
                _kernel_name(kernel),
                end - seconds - self._origin,
                seconds,
                mode,
                phase or current_phase(),
                "/".join(_scopes.get()),
                _strategy(kernel, inputs, attrs),
                threading.current_thread().name,
            )
        )

    def on_assign(self, var, raw, mode):
        """A Variable's assign, eager or a graph's step, as an ``AssignVariable`` event (an instant: the value
        is handed over, not computed)."""
        now = time.perf_counter() - self._origin
        shape, dtype = (tuple(var.shape),), (str(var.dtype),)
        self.events.append(
            OpEvent(
                "AssignVariable", shape, dtype, var.backend.name, "Variable.assign", now, 0.0, mode, current_phase(),
                "/".join(_scopes.get()), "", threading.current_thread().name,
            )
        )  # fmt: skip

    def __enter__(self):
        if self in dispatch.observers:
            # Entered twice, it would record every op twice and stay active after the outer block.
            raise RuntimeError("tl.profile: this profile is already recording in this thread")
        dispatch.observers.append(self)
        return self

    def __exit__(self, *exc):
        dispatch.observers.remove(self)

    def summary(self) -> list[tuple]:
        """Rows ``(op_type, mode, phase, kernel, calls, total_s, mean_s)``, most expensive first; ``kernel``
        ends with the strategy in brackets where the kernel picked one (``... [shifted_gemm]``)."""
        totals = collections.defaultdict(lambda: [0, 0.0])
        for e in self.events:
            row = totals[(e.op_type, e.mode, e.phase, _kernel_text(e))]
            row[0] += 1
            row[1] += e.seconds
        rows = [(*key, n, t, t / n) for key, (n, t) in totals.items()]
        return sorted(rows, key=lambda r: -r[5])

    def table(self, limit: int | None = 30) -> str:
        """A text table of time per op type, mode (eager/graph), phase (forward/gradient) and kernel.

        >>> import tensorlib as tl
        >>> with tl.profile() as prof:
        ...     _ = tl.exp(tl.ones((3,)))
        >>> print(prof.table())  # doctest: +ELLIPSIS
        op type       mode   phase     calls   total ms    mean us      %  kernel
        Exp           eager  forward       1 ...  100.0  numpy.exp
        """
        rows = self.summary()[:limit]
        total = sum(e.seconds for e in self.events) or 1.0
        lines = [
            f"{'op type':<13} {'mode':<6} {'phase':<8} {'calls':>6} {'total ms':>10} {'mean us':>10} {'%':>6}  kernel"
        ]
        for op, mode, phase, kernel, n, t, mean in rows:
            lines.append(
                f"{op:<13} {mode:<6} {phase:<8} {n:>6} {t * 1e3:>10.3f} {mean * 1e6:>10.1f} "
                f"{100 * t / total:>6.1f}  {kernel}"
            )
        return "\n".join(lines)

    def export_chrome_trace(self, path) -> None:
        """Write the events in Chrome's trace format: open in https://ui.perfetto.dev or chrome://tracing.

        One row (trace "thread") per mode and phase, and per thread where the
        profile recorded in several (its name in brackets: enter the same
        profile in each thread to see them side by side); each op's box
        carries its shapes, dtypes, backend and kernel as arguments.
        """
        threads = list(dict.fromkeys(e.thread for e in (*self.events, *self.ranges)))

        def row(e) -> tuple:
            base = "annotations" if isinstance(e, RangeEvent) else f"{e.mode} {e.phase}"
            return threads.index(e.thread), (*_ROWS, "annotations", base).index(base), base, e.thread

        rows = sorted({row(e) for e in (*self.events, *self.ranges)})
        tid = {r: i for i, r in enumerate(rows)}
        events = [
            {"name": "thread_name", "ph": "M", "pid": 0, "tid": tid[r], "args": {"name": _row_name(r, threads)}}
            for r in rows
        ]
        events += [
            {
                "name": e.op_type,
                "cat": f"{e.mode},{e.phase}",
                "ph": "X",
                "pid": 0,
                "tid": tid[row(e)],
                "ts": e.start_s * 1e6,
                "dur": e.seconds * 1e6,
                "args": {
                    "shapes": [list(s) for s in e.input_shapes],
                    "dtypes": list(e.dtypes),
                    "backend": e.backend,
                    "kernel": e.kernel,
                    "strategy": e.strategy,
                    "scope": e.scope,
                },
            }
            for e in self.events
        ]
        events += [
            {
                "name": r.name,
                "cat": "annotation",
                "ph": "X",
                "pid": 0,
                "tid": tid[row(r)],
                "ts": r.start_s * 1e6,
                "dur": r.seconds * 1e6,
                "args": {"scope": r.scope},
            }
            for r in self.ranges
        ]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


def _row_name(row, threads) -> str:
    _, _, base, thread = row
    return base if len(threads) == 1 else f"{base} ({thread})"


def profile() -> Profile:
    """Record every op run inside ``with tl.profile() as prof:`` (see :class:`Profile`)."""
    return Profile()


@contextlib.contextmanager
def annotate(name: str):
    """Name a block of code in the profiles recording in this thread (``torch.profiler.record_function``,
    ``jax.profiler.TraceAnnotation``): each op run inside gets the block's name in its ``scope``, nested
    blocks join theirs with ``/``, and each block becomes a :class:`RangeEvent` in ``prof.ranges`` (a box
    on the trace's "annotations" row), also when the block raises.  Without a profile it costs a
    context-variable write.  A ``tl.function``'s graph ops get the scope of the blocks its call runs in.  A
    gradient op, eager or traced, gets the blocks its gradient is taken in followed by its forward op's blocks
    (TF's ``gradients/<scope>``), so a profile adds up each block's forward and backward time.

    >>> import tensorlib as tl
    >>> with tl.profile() as prof:
    ...     with tl.profiler.annotate("step"):
    ...         with tl.profiler.annotate("loss"):
    ...             _ = tl.exp(tl.ones((2,)))
    >>> [(e.op_type, e.scope) for e in prof.events]
    [('Exp', 'step/loss')]
    >>> [(r.name, r.scope) for r in prof.ranges]
    [('loss', 'step/loss'), ('step', 'step')]
    """
    if not isinstance(name, str):
        raise TypeError(f"tl.profiler.annotate: name must be a str, got {type(name).__name__}")
    scopes = _scopes.get() + (name,)
    token = _scopes.set(scopes)
    start = time.perf_counter()
    try:
        yield
    finally:
        end = time.perf_counter()
        _scopes.reset(token)
        for observer in dispatch.observers:
            if isinstance(observer, Profile):
                observer.ranges.append(
                    RangeEvent(
                        name, "/".join(scopes), start - observer._origin, end - start, threading.current_thread().name
                    )
                )
