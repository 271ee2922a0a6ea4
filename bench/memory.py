"""Peak memory of the nn workloads: tensorlib vs PyTorch.

Every (implementation, workload) pair runs in its own fresh subprocess:

1. import the library (threads pinned to 2) and create the shared, seeded NumPy
   inputs of ``nn_workloads.make_data``;
2. baseline = current RSS; reset the peak (VmHWM, via /proc/self/clear_refs);
3. convert the inputs to the library's tensors, build the step and run it
   twice (the first call includes one-time allocations such as kernel caches
   and tracing);
4. report VmHWM - baseline in MiB.

So the numbers are "memory the library needs on top of the NumPy inputs".  The
child's ``ru_maxrss`` (from ``os.wait4`` in the parent, i.e. the whole
process's peak including imports) is shown as a cross-check in a second table.

    python bench/memory.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (sets thread env vars before numpy is imported)

import nn_workloads as nw  # noqa: E402

COLUMNS = [
    common.Column("tensorlib", "tensorlib", "tensorlib", role="ours", ratio_label="tensorlib / PyTorch"),
    common.Column("torch", "PyTorch", "torch"),
]
IMPORTERS = {"tensorlib": common.import_tensorlib, "torch": common.import_torch}


def worker(rep: common.Reporter, args) -> None:
    lib, key = args.worker, args.workload
    IMPORTERS[lib]()
    d = nw.make_data(key)

    def run():
        step, _ = nw.build_step(lib, key, d)
        step()
        step()

    m = common.measure_peak_above_baseline(run)
    if not m["hwm_reset"]:
        rep.note("could not reset VmHWM; peak may include input creation")
    rep.value(lib, key, m["delta_mib"])
    rep.value(lib, key + "#baseline", m["baseline_mib"])


def main(argv=None, header: bool = True) -> int:
    parser = common.base_arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--workload", help=argparse_suppress())
    args = parser.parse_args(argv)
    if args.worker:
        return common.run_as_worker({"tensorlib": worker, "torch": worker}, args)
    if header:
        print(common.env_header())
    timeout = args.timeout or (120 if args.quick else 1200)
    keys = nw.workload_keys(args.quick)
    res = common.Results()
    total = common.Results()  # whole-process ru_maxrss, for the cross-check table
    libs = common.selected_libs(args, ["tensorlib", "torch"])
    sys.stdout.flush()
    for lib in libs:
        if not common.installed(lib):
            res.lib_status[lib] = total.lib_status[lib] = "not installed"
            continue
        print(f"  running {common.LIBS[lib][1]} ...", end="", flush=True, file=sys.stderr)
        wall = 0.0
        fatal = None
        for key in keys:
            run = common.run_worker(__file__, lib, common.quick_args(args) + ["--workload", key], timeout)
            wall += run.wall_s
            if run.fatal:
                res.errors[(lib, key)] = run.fatal
                fatal = fatal or run.fatal
                continue
            for rec in run.records:
                if "note" in rec:
                    res.notes.append(f"{common.LIBS[lib][1]} {key}: {rec['note']}")
                elif "error" in rec:
                    res.errors[(lib, key)] = rec["error"]
                elif rec.get("row") == key:
                    res.values[(lib, key)] = rec["value"]
            if run.maxrss_mib is not None and (lib, key) in res.values:
                total.values[(lib, key)] = run.maxrss_mib
        print(f" {wall:.1f} s", file=sys.stderr, flush=True)
        if fatal and not any((lib, k) in res.values for k in keys):
            # Same failure everywhere: report it once, as a library status.
            for k in keys:
                res.errors.pop((lib, k), None)
            res.lib_status[lib] = total.lib_status[lib] = f"n/a ({fatal})"
    rows = [(k, k) for k in keys]
    common.print_table(
        "memory: peak RSS above baseline (MiB); baseline = after imports + NumPy inputs",
        rows,
        COLUMNS,
        res,
        fmt="{:.1f}",
        footnotes=res.notes,
        ratio_note="ratio > 1 means tensorlib needs more memory than PyTorch.",
    )
    common.print_table(
        "memory: whole-process peak RSS incl. imports and inputs (MiB, ru_maxrss of the child)",
        rows,
        COLUMNS,
        total,
        fmt="{:.0f}",
        ratio_note="",
    )
    return 0


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
