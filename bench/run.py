"""Run the whole tensorlib benchmark suite and print every table.

    python bench/run.py            # full sizes (takes a while: N=60000 seeds)
    python bench/run.py --quick    # smaller sizes, fewer repeats (a few minutes)
    python bench/run.py --only dispatch_overhead,memory
    python bench/run.py --libs tensorlib,torch   # restrict the implementations

Each script is also runnable alone: ``python bench/<name>.py [--quick]``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (sets thread env vars before anything else)

SCRIPTS = ["dispatch_overhead", "nn_workloads", "memory", "seed_graph_methods", "per_example_gradients"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    p.add_argument("--only", default=None, help="comma-separated subset of: " + ", ".join(SCRIPTS))
    p.add_argument("--libs", default=None, help="comma-separated subset of libraries (default: all installed)")
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per worker subprocess")
    args = p.parse_args(argv)

    scripts = SCRIPTS
    if args.only:
        wanted = [s.strip() for s in args.only.split(",") if s.strip()]
        unknown = [s for s in wanted if s not in SCRIPTS]
        if unknown:
            p.error(f"unknown script(s): {', '.join(unknown)}")
        scripts = [s for s in SCRIPTS if s in wanted]

    sub_argv = []
    if args.quick:
        sub_argv.append("--quick")
    if args.libs:
        sub_argv += ["--libs", args.libs]
    if args.timeout:
        sub_argv += ["--timeout", str(args.timeout)]

    print(common.env_header())
    print(f"mode: {'quick' if args.quick else 'full'}")
    t_all = time.perf_counter()
    status = 0
    for name in scripts:
        print(f"\n######## {name} ########", flush=True)
        t0 = time.perf_counter()
        try:
            mod = importlib.import_module(name)
            rc = mod.main(list(sub_argv), header=False)
            status = status or (rc or 0)
        except Exception as e:  # noqa: BLE001 - one broken script must not stop the rest
            print(f"  {name}: failed ({common.short_error(e)})")
            status = 1
        sys.stdout.flush()
        print(f"  [{name}: {time.perf_counter() - t0:.1f} s]", flush=True)
    print(f"\ntotal: {time.perf_counter() - t_all:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
