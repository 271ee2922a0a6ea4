"""Shared helpers for tensorlib's benchmark suite (``bench/``).

How the scripts are organised
-----------------------------
Every benchmark script is both a *driver* and a *worker*:

* ``python bench/<name>.py [--quick]`` (the driver) starts one fresh worker
  subprocess per library (``python bench/<name>.py --worker <lib> ...``),
  collects the measurements the worker prints, and prints a table
  (rows = workloads, columns = implementations, plus a
  ``tensorlib / best peer`` ratio column).
* Running each library in its own process keeps the comparison fair: no
  library's thread pools, allocator state or imports leak into another's
  numbers, a crash or hang in one library (tensorlib is under construction)
  cannot take the others down, and peak memory can be read per process.

Every peer is optional: a library that is not installed gets a
"not installed (skipped)" line and its cells read ``n/i``.  A measurement that
raises prints ``n/a`` in its cell and a ``<lib>: n/a (<error>)`` line below the
table, so the suite runs before tensorlib is complete.

Threads are pinned to ``THREADS`` (2) for every library: the environment
variables below are set when this module is imported (before NumPy, torch,
TF or JAX are imported by a worker), and the ``import_*`` helpers also set
torch's and TF's thread pools explicitly.
"""

from __future__ import annotations

import os
import sys

# --------------------------------------------------------------------------
# Threads: must happen before numpy / torch / tensorflow / jax are imported.
# --------------------------------------------------------------------------
THREADS = int(os.environ.get("BENCH_THREADS", "2"))


def _configure_thread_env(n: int = THREADS) -> None:
    for var in (
        "OMP_NUM_THREADS",  # torch (OpenMP), oneDNN
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",  # numpy's OpenBLAS (and so tensorlib's numpy backend)
        "NUMEXPR_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "TF_NUM_INTRAOP_THREADS",  # TensorFlow
        "TF_NUM_INTEROP_THREADS",
    ):
        os.environ[var] = str(n)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # silence TF's INFO/WARNING spam
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:
        # XLA:CPU sizes its Eigen pool to the core count (2 on the reference
        # machine); this pins it explicitly for larger machines.
        flags = f"{flags} --xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={n}"
        os.environ["XLA_FLAGS"] = flags.strip()


_configure_thread_env()

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Iterable, Sequence  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
# Benchmark the checkout's tensorlib even when it is not pip-installed.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

# --------------------------------------------------------------------------
# Libraries
# --------------------------------------------------------------------------
# lib key -> (import name, display name, distribution names for the version)
LIBS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "numpy": ("numpy", "NumPy", ("numpy",)),
    "tensorlib": ("tensorlib", "tensorlib", ("tensorlib",)),
    "torch": ("torch", "PyTorch", ("torch",)),
    "jax": ("jax", "JAX", ("jax",)),
    "tensorflow": ("tensorflow", "TensorFlow", ("tensorflow-cpu", "tensorflow", "tf-nightly")),
    "autograd": ("autograd", "autograd", ("autograd",)),
    "mygrad": ("mygrad", "MyGrad", ("mygrad",)),
}


def installed(lib: str) -> bool:
    """True if the library can be found (without importing it)."""
    name = LIBS[lib][0]
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def version(lib: str) -> str | None:
    for dist in LIBS[lib][2]:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    if lib == "tensorlib" and installed(lib):
        return "checkout"
    return None


def import_tensorlib():
    import tensorlib as tl

    return tl


def import_torch():
    import torch

    torch.set_num_threads(THREADS)
    try:
        torch.set_num_interop_threads(THREADS)
    except RuntimeError:  # already set / parallel work started
        pass
    return torch


def import_tf():
    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(THREADS)
        tf.config.threading.set_inter_op_parallelism_threads(THREADS)
    except RuntimeError:  # the runtime was already initialised
        pass
    return tf


def import_jax(x64: bool = True):
    import jax

    jax.config.update("jax_enable_x64", x64)
    return jax


def env_header() -> str:
    """A few lines describing the machine and the library versions."""
    load = ""
    busy = None
    try:
        la = os.getloadavg()
        load = ", load average %.2f %.2f %.2f" % la
        if la[0] > 1.0:
            busy = la[0]
    except OSError:
        pass
    lines = [
        f"python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cpus, threads pinned to {THREADS}{load}",
    ]
    vers = []
    for lib in LIBS:
        v = version(lib) if installed(lib) else None
        vers.append(f"{LIBS[lib][1]} {v if v else 'not installed'}")
    if installed("jax"):
        jl = None
        try:
            jl = importlib.metadata.version("jaxlib")
        except importlib.metadata.PackageNotFoundError:
            pass
        if jl:
            vers.append(f"jaxlib {jl}")
    lines.append("versions: " + ", ".join(vers))
    try:
        import threadpoolctl  # optional

        import numpy  # noqa: F401

        info = [
            f"{d.get('internal_api')} {d.get('version')} ({d.get('architecture', '?')}, {d.get('num_threads')} threads)"
            for d in threadpoolctl.threadpool_info()
            if d.get("user_api") == "blas"
        ]
        if info:
            lines.append("numpy BLAS: " + "; ".join(info))
    except Exception:
        pass
    if busy is not None:
        lines.append(
            f"WARNING: the machine is not idle (1-min load {busy:.2f} before starting); "
            "other processes compete for the cores and the numbers will be noisy."
        )
    core = os.environ.get("OPENBLAS_CORETYPE")
    if core:
        lines.append(
            f"note: OPENBLAS_CORETYPE={core} is set; it forces an older OpenBLAS kernel and slows "
            "NumPy (and so a NumPy-backed tensorlib). For benchmarking only, run with "
            "`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE`."
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------
def time_once(fn: Callable[[], Any]) -> float:
    """Wall time of a single call, in seconds."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_time(
    fn: Callable[[], Any],
    repeats: int = 10,
    warmup: int = 2,
    number: int | str = 1,
    budget_s: float | None = None,
    target_sample_s: float = 0.02,
) -> float:
    """Median wall time of ``fn()`` in seconds.

    ``warmup`` calls are made first (not timed; skipped once they exceed the
    budget).  Then ``repeats`` samples are taken; each sample times ``number``
    back-to-back calls and is divided by ``number``.  ``number="auto"`` picks
    it so that one sample lasts about ``target_sample_s`` (useful for
    microsecond-scale functions).  If ``budget_s`` is given, sampling stops
    early once that much time has been spent (at least one sample is always
    taken), which keeps slow implementations from blowing up the run time.
    """
    start = time.perf_counter()
    last = None
    for _ in range(warmup):
        last = time_once(fn)
        if budget_s is not None and time.perf_counter() - start > budget_s / 2:
            break
    if number == "auto":
        if last is None:
            last = time_once(fn)
        number = max(1, int(target_sample_s / max(last, 1e-9)))
    number = int(number)
    gc.collect()
    samples: list[float] = []
    t_start = time.perf_counter()
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
        if budget_s is not None and time.perf_counter() - t_start > budget_s:
            break
    return statistics.median(samples)


# --------------------------------------------------------------------------
# Memory (Linux)
# --------------------------------------------------------------------------
def _status_kib(field_name: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_mib() -> float | None:
    kib = _status_kib("VmRSS")
    return None if kib is None else kib / 1024.0


def peak_rss_mib() -> float | None:
    """Peak resident set size of this process so far (VmHWM), MiB."""
    kib = _status_kib("VmHWM")
    if kib is None:
        import resource

        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kib / 1024.0


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0). True if it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    hwm, rss = _status_kib("VmHWM"), _status_kib("VmRSS")
    return hwm is not None and rss is not None and hwm <= rss + 1024


def measure_peak_above_baseline(run: Callable[[], Any]) -> dict[str, Any]:
    """Run ``run()`` and return the peak RSS above the RSS at call time (MiB).

    Call this in a fresh process, after the imports and after creating the
    inputs that every implementation shares; the baseline is taken here.
    """
    gc.collect()
    baseline = rss_mib()
    reset_ok = reset_peak_rss()
    run()
    peak = peak_rss_mib()
    return {
        "baseline_mib": baseline,
        "peak_mib": peak,
        "delta_mib": None if baseline is None or peak is None else peak - baseline,
        "hwm_reset": reset_ok,
    }


# --------------------------------------------------------------------------
# Worker protocol
# --------------------------------------------------------------------------
TAG = "@@BENCH@@ "


def short_error(exc: BaseException, limit: int = 160) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Reporter:
    """Used inside a worker: prints one tagged JSON line per measurement.

    Lines are flushed as they are produced, so a worker that is killed by the
    driver's timeout still delivers everything it measured before.
    """

    def __init__(self, lib: str):
        self.lib = lib

    def _emit(self, rec: dict) -> None:
        sys.stdout.write(TAG + json.dumps(rec) + "\n")
        sys.stdout.flush()

    def value(self, col: str, row: str, value: Any) -> None:
        self._emit({"col": col, "row": row, "value": value})

    def error(self, col: str, row: str, err: str) -> None:
        self._emit({"col": col, "row": row, "error": err})

    def fatal(self, err: str) -> None:
        self._emit({"fatal": err})

    def note(self, text: str) -> None:
        self._emit({"note": text})

    def measure(self, col: str, row: str, fn: Callable[[], Any]) -> Any:
        """Record ``fn()``'s return value (or its exception) for a cell."""
        try:
            v = fn()
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - fail soft, always
            self.error(col, row, short_error(e))
            return None
        self.value(col, row, v)
        return v


def base_arg_parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--outdir", help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per worker subprocess")
    p.add_argument(
        "--libs",
        default=None,
        help="comma-separated subset of libraries to run (default: all that are installed)",
    )
    return p


def run_as_worker(workers: dict[str, Callable[[Reporter, argparse.Namespace], None]], args) -> int:
    rep = Reporter(args.worker)
    fn = workers.get(args.worker)
    if fn is None:
        rep.fatal(f"unknown worker {args.worker!r}")
        return 2
    try:
        fn(rep, args)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001
        rep.fatal(short_error(e))
    return 0


@dataclass
class WorkerRun:
    records: list[dict] = field(default_factory=list)
    fatal: str | None = None
    maxrss_mib: float | None = None  # the child's ru_maxrss, from wait4
    wall_s: float = 0.0


def run_worker(
    script: str | Path,
    lib: str,
    extra_args: Sequence[str] = (),
    timeout: float | None = None,
) -> WorkerRun:
    """Run ``python script --worker lib extra_args`` in a fresh process."""
    cmd = [sys.executable, str(script), "--worker", lib, *extra_args]
    res = WorkerRun()
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=str(REPO_ROOT), env=os.environ.copy())
        timed_out = False
        deadline = None if timeout is None else time.monotonic() + timeout
        status = None
        ru = None
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if deadline is not None and time.monotonic() > deadline:
                timed_out = True
                proc.kill()
                _, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        res.wall_s = time.perf_counter() - t0
        res.maxrss_mib = ru.ru_maxrss / 1024.0 if ru is not None else None
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    for line in stdout.splitlines():
        if line.startswith(TAG):
            try:
                rec = json.loads(line[len(TAG) :])
            except json.JSONDecodeError:
                continue
            if "fatal" in rec:
                res.fatal = rec["fatal"]
            else:
                res.records.append(rec)
    if timed_out:
        res.fatal = res.fatal or f"timed out after {timeout:.0f} s"
        if res.records:
            res.fatal = None
            res.records.append({"note": f"worker timed out after {timeout:.0f} s; later cells missing"})
    elif proc.returncode != 0 and res.fatal is None:
        tail = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        last = tail[-1].strip() if tail else ""
        res.fatal = f"worker exited with status {proc.returncode}" + (f": {last[:200]}" if last else "")
    return res


@dataclass
class Results:
    """Measurements of all workers of one script, keyed by (column, row)."""

    values: dict[tuple[str, str], Any] = field(default_factory=dict)
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    lib_status: dict[str, str] = field(default_factory=dict)  # lib -> "not installed" / "n/a (...)"
    notes: list[str] = field(default_factory=list)
    runs: dict[str, WorkerRun] = field(default_factory=dict)

    def get(self, col: str, row: str, default=None):
        return self.values.get((col, row), default)

    def merge(self, lib: str, run: WorkerRun) -> None:
        self.runs[lib] = run
        if run.fatal:
            self.lib_status[lib] = f"n/a ({run.fatal})"
        for rec in run.records:
            if "note" in rec:
                self.notes.append(f"{LIBS.get(lib, (lib, lib))[1]}: {rec['note']}")
            elif "error" in rec:
                self.errors[(rec["col"], rec["row"])] = rec["error"]
            elif "value" in rec:
                self.values[(rec["col"], rec["row"])] = rec["value"]


def selected_libs(args, libs: Iterable[str]) -> list[str]:
    libs = list(libs)
    if getattr(args, "libs", None):
        wanted = {s.strip() for s in args.libs.split(",") if s.strip()}
        libs = [lib for lib in libs if lib in wanted]
    return libs


def collect(
    script: str | Path,
    libs: Iterable[str],
    extra_args: Sequence[str] = (),
    timeout: float | None = None,
    results: Results | None = None,
    verbose: bool = True,
) -> Results:
    """Run one worker per installed library and merge what they report."""
    results = results or Results()
    sys.stdout.flush()
    for lib in libs:
        if not installed(lib):
            results.lib_status[lib] = "not installed"
            continue
        if verbose:
            print(f"  running {LIBS[lib][1]} ...", end="", flush=True, file=sys.stderr)
        run = run_worker(script, lib, extra_args, timeout)
        if verbose:
            print(f" {run.wall_s:.1f} s", file=sys.stderr, flush=True)
        results.merge(lib, run)
    return results


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------
@dataclass
class Column:
    key: str  # column key used by the workers
    label: str  # header text
    lib: str  # which library (for installed / fatal status)
    role: str = "peer"  # "ours" (tensorlib), "peer" (counts for best peer), "floor" (shown, not a peer)
    ratio_label: str | None = None  # header of this "ours" column's ratio column


def _fmt_num(v: float, fmt: str) -> str:
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "n/a"
    return fmt.format(v)


def print_table(
    title: str,
    rows: Sequence[tuple[str, str]],
    columns: Sequence[Column],
    results: Results,
    fmt: str = "{:.3g}",
    scale: float = 1.0,
    ratio: bool = True,
    ratio_rows: dict[str, str] | None = None,
    footnotes: Sequence[str] = (),
    ratio_note: str | None = None,
    file=None,
) -> None:
    """Print rows x columns, plus "tensorlib / best peer" ratio column(s).

    ``rows`` is a list of (row key, row label).  Values are multiplied by
    ``scale`` for display.  The best peer is the smallest value among the
    ``role == "peer"`` columns of the row (or of ``ratio_rows[row]`` when a
    row has no peers of its own).  Cells: ``n/a`` = the measurement failed
    (reason below the table), ``n/i`` = library not installed, ``-`` = not
    applicable to that implementation.
    """
    file = file or sys.stdout
    ratio_rows = ratio_rows or {}
    ours = [c for c in columns if c.role == "ours"] if ratio else []
    header = ["workload"] + [c.label for c in columns] + [c.ratio_label or f"{c.label} / best peer" for c in ours]
    table: list[list[str]] = []

    def best_peer(row: str) -> float | None:
        vals = [
            results.values.get((c.key, row))
            for c in columns
            if c.role == "peer" and isinstance(results.values.get((c.key, row)), (int, float))
        ]
        vals = [v for v in vals if v is not None and v > 0 and not math.isnan(v)]
        return min(vals) if vals else None

    for row, label in rows:
        line = [label]
        for c in columns:
            v = results.values.get((c.key, row))
            if isinstance(v, (int, float)):
                line.append(_fmt_num(v * scale, fmt))
            elif isinstance(v, str):
                line.append(v)
            elif (c.key, row) in results.errors:
                line.append("n/a")
            elif results.lib_status.get(c.lib) == "not installed":
                line.append("n/i")
            elif c.lib in results.lib_status:
                line.append("n/a")
            else:
                line.append("-")
        for c in ours:
            v = results.values.get((c.key, row))
            bp = best_peer(row)
            if bp is None and row in ratio_rows:
                bp = best_peer(ratio_rows[row])
            if isinstance(v, (int, float)) and bp:
                line.append(f"{v / bp:.2f}x")
            else:
                line.append("-")
        table.append(line)

    widths = [max(len(r[i]) for r in [header] + table) for i in range(len(header))]
    print(f"\n== {title} ==", file=file)

    def fmt_line(cells):
        first = cells[0].ljust(widths[0])
        rest = [cells[i].rjust(widths[i]) for i in range(1, len(cells))]
        return "  ".join([first] + rest)

    print(fmt_line(header), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for line in table:
        print(fmt_line(line), file=file)

    # Status / error lines.
    shown_libs = []
    for c in columns:
        if c.lib not in shown_libs:
            shown_libs.append(c.lib)
    for lib in shown_libs:
        name = LIBS.get(lib, (lib, lib))[1]
        st = results.lib_status.get(lib)
        if st == "not installed":
            print(f"  {name}: not installed (skipped)", file=file)
        elif st:
            print(f"  {name}: {st}", file=file)
    # Per-cell errors, grouped by (column, message).
    grouped: dict[tuple[str, str], list[str]] = {}
    row_labels = dict(rows)
    col_by_key = {c.key: c for c in columns}
    for (ck, rk), msg in results.errors.items():
        if ck in col_by_key and rk in row_labels:
            grouped.setdefault((ck, msg), []).append(row_labels[rk])
    for (ck, msg), rws in grouped.items():
        c = col_by_key[ck]
        if results.lib_status.get(c.lib) == f"n/a ({msg})":
            continue  # already said once for the whole library
        print(f"  {c.label}: n/a ({msg}) [{'; '.join(rws)}]", file=file)
    for fn_ in footnotes:
        print(f"  {fn_}", file=file)
    if ours:
        peers = [c.label for c in columns if c.role == "peer"]
        if ratio_note is None:
            ratio_note = f"best peer = fastest of: {', '.join(peers)}; ratio > 1 means tensorlib is slower."
        if ratio_note:
            print(f"  {ratio_note}", file=file)


# --------------------------------------------------------------------------
# Numerical comparison
# --------------------------------------------------------------------------
def compare_arrays(got, ref, tol: float) -> tuple[bool, float]:
    """Max abs difference relative to max |ref|; ok if <= tol."""
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return False, float("inf")
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    err = float(np.max(np.abs(got - ref))) if ref.size else 0.0
    rel = err / scale if scale > 0 else err
    return bool(rel <= tol), rel


def make_outdir() -> str:
    return tempfile.mkdtemp(prefix="tensorlib-bench-")


def remove_outdir(path: str | None) -> None:
    if path:
        shutil.rmtree(path, ignore_errors=True)


def quick_args(args) -> list[str]:
    return ["--quick"] if args.quick else []
