"""The seeds' question: "why does a graph with a 60000x32x32 constant take 10 s
on first run?"

Workload: the seed pipeline of nn_workloads (x [N,32,32,1] float64,
w [3,3,1,6]; conv2d VALID -> avg_pool 2x2 stride 2 -> relu), N = 60000
(6000 with --quick), run five ways per library:

  1 eager, NumPy arrays in           f(x_np, w_np), op by op
  2 eager, library tensors in        f(T(x_np), T(w_np))
  3 traced, tensors as arguments     F = trace(f); F(T(x), T(w))
  4 traced, closing over tensors     xt = T(x); F = trace(lambda: f(xt, wt)); F()
                                     (captured by reference)
  5 traced, closing over NumPy       F = trace(lambda: f(x_np, w_np)); F()
                                     (the arrays become constants in the graph)

T / trace: tensorlib tl.tensor / tl.function, TF tf.constant / tf.function,
JAX jnp.asarray / jax.jit.  "first call" is the time from having the NumPy
arrays to having the first result: tensor conversion + tracing + compiling +
running once.  "steady" is the median of later calls.  Every worker first runs
the pipeline once on a tiny input, so library start-up costs (kernel
registration, thread-pool creation) are not charged to method 1.

A second table repeats the question for small ops: the 1000-op elementwise
chain of dispatch_overhead.py on a float64[4] tensor, eager vs traced.

    python bench/seed_graph_methods.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (sets thread env vars before numpy is imported)

import numpy as np  # noqa: E402

import dispatch_overhead as dov  # noqa: E402
import nn_workloads as nw  # noqa: E402

METHODS = [
    ("m1", "1 eager, NumPy arrays in"),
    ("m2", "2 eager, tensors in"),
    ("m3", "3 traced, tensors as args"),
    ("m4", "4 traced, captured tensors"),
    ("m5", "5 traced, NumPy consts"),
]
LIB_ORDER = ["tensorlib", "tensorflow", "jax"]
LABEL = {"tensorlib": "tensorlib", "tensorflow": "TF", "jax": "JAX"}


def _columns(suffix: str, what: str):
    cols = []
    for lib in LIB_ORDER:
        role = "ours" if lib == "tensorlib" else "peer"
        cols.append(
            common.Column(
                f"{lib}:{suffix}",
                f"{LABEL[lib]} {what}",
                lib,
                role=role,
                ratio_label=f"tensorlib / best peer ({what})",
            )
        )
    return cols


SMALL_ROWS = [
    ("eager", "eager, us per op"),
    ("traced", "traced, us per op"),
    ("first", "trace + first call, ms"),
]


def _n(args) -> int:
    return 6000 if args.quick else 60000


def _steady(args) -> dict:
    return dict(repeats=3, warmup=0, budget_s=10.0 if args.quick else 60.0)


def _small_settings(args) -> dict:
    return dict(repeats=7 if args.quick else 25, warmup=1, number="auto", budget_s=2.0 if args.quick else 6.0)


def _run_methods(rep, lib: str, args, f, to_tensor, trace, sync, skip_captured: str | None = None) -> None:
    """Measure methods 1-5 for one library.

    f(x, w) -> output; to_tensor(np) -> library tensor; trace(fn) -> traced fn;
    sync(out) forces the result to be materialised.
    """
    small = nw.make_seed_data(2, np.float64)
    sync(f(to_tensor(small["x"]), to_tensor(small["w"])))  # library warm-up

    d = nw.make_seed_data(_n(args), np.float64)
    xn, wn = d["x"], d["w"]
    st = _steady(args)

    def method(key, make_call):
        """make_call() performs the one-time set-up and returns the per-call fn."""
        holder = {}

        def first():
            holder["call"] = make_call()
            sync(holder["call"]())

        try:
            rep.value(f"{lib}:first", key, common.time_once(first))
            call = holder["call"]
            rep.value(f"{lib}:steady", key, common.median_time(lambda: sync(call()), **st))
        except Exception as e:  # noqa: BLE001 - fail soft
            err = common.short_error(e)
            if "call" not in holder:
                rep.error(f"{lib}:first", key, err)
            rep.error(f"{lib}:steady", key, err)
        holder.clear()

    method("m1", lambda: lambda: f(xn, wn))

    def m2():
        xt, wt = to_tensor(xn), to_tensor(wn)
        return lambda: f(xt, wt)

    method("m2", m2)

    def m3():
        xt, wt = to_tensor(xn), to_tensor(wn)
        g = trace(f)
        return lambda: g(xt, wt)

    method("m3", m3)

    def m4():
        xt, wt = to_tensor(xn), to_tensor(wn)
        return trace(lambda: f(xt, wt))

    if skip_captured:
        for key in ("m4", "m5"):
            rep.value(f"{lib}:first", key, "skip")
            rep.value(f"{lib}:steady", key, "skip")
        rep.note(skip_captured)
        return
    method("m4", m4)
    method("m5", lambda: trace(lambda: f(xn, wn)))


def _small_ops(rep, lib: str, args, sin, exp, to_tensor, trace, sync) -> None:
    chain = dov.make_chain(sin, exp)
    x = to_tensor(dov.X0.copy())
    s = _small_settings(args)
    per_op = lambda t: t / dov.N_OPS * 1e6  # noqa: E731
    rep.measure(f"{lib}:small", "eager", lambda: per_op(common.median_time(lambda: sync(chain(x)), **s)))

    def traced():
        g = trace(chain)
        rep.value(f"{lib}:small", "first", common.time_once(lambda: sync(g(x))) * 1e3)
        return per_op(common.median_time(lambda: sync(g(x)), **s))

    rep.measure(f"{lib}:small", "traced", traced)


def w_tensorlib(rep, args) -> None:
    tl = common.import_tensorlib()

    def sync(y):
        return y.numpy()

    # Separate try blocks: a missing small-op feature must not hide the big table.
    try:
        _run_methods(rep, "tensorlib", args, nw.tl_seed_fn(tl), tl.tensor, tl.function, sync)
    except Exception as e:  # noqa: BLE001
        for key, _ in METHODS:
            rep.error("tensorlib:first", key, common.short_error(e))
            rep.error("tensorlib:steady", key, common.short_error(e))
    _small_ops(rep, "tensorlib", args, tl.sin, tl.exp, tl.tensor, tl.function, sync)


def w_tensorflow(rep, args) -> None:
    tf = common.import_tf()
    # TF eager and tf.function calls are synchronous on CPU: nothing to sync.
    _run_methods(rep, "tensorflow", args, nw.tf_seed_fn(tf), tf.constant, tf.function, lambda y: y)
    _small_ops(rep, "tensorflow", args, tf.sin, tf.exp, tf.constant, tf.function, lambda y: y)


def w_jax(rep, args) -> None:
    jax = common.import_jax(x64=True)
    import jax.numpy as jnp

    # Method 1 for JAX: lax.conv on NumPy inputs, op by op.
    sync = lambda y: y.block_until_ready()  # noqa: E731
    skip = None
    if not args.jax_captured:
        # jax.jit treats closed-over arrays as compile-time constants and XLA
        # constant-folds the whole pipeline: 25-75 s per method already at
        # N=6000 on 2 cores, growing with N (and the steady state then only
        # returns the folded result). Opt in with --jax-captured.
        skip = (
            "methods 4-5 skipped (XLA constant-folds captured arrays: 25-75 s each "
            "already at N=6000); --jax-captured runs them"
        )
    _run_methods(rep, "jax", args, nw.jax_seed_fn(jax), jnp.asarray, jax.jit, sync, skip_captured=skip)
    _small_ops(rep, "jax", args, jnp.sin, jnp.exp, jnp.asarray, jax.jit, sync)


WORKERS = {"tensorlib": w_tensorlib, "tensorflow": w_tensorflow, "jax": w_jax}


def main(argv=None, header: bool = True) -> int:
    parser = common.base_arg_parser(__doc__.splitlines()[0])
    parser.add_argument(
        "--jax-captured",
        action="store_true",
        help="also run JAX methods 4-5 (closures; minutes of XLA constant folding)",
    )
    args = parser.parse_args(argv)
    if args.worker:
        return common.run_as_worker(WORKERS, args)
    if header:
        print(common.env_header())
    timeout = args.timeout or (240 if args.quick else 1800)
    extra = common.quick_args(args) + (["--jax-captured"] if args.jax_captured else [])
    res = common.collect(__file__, common.selected_libs(args, LIB_ORDER), extra, timeout)
    n = _n(args)
    common.print_table(
        f"seed_graph_methods: first call (s; incl. conversion, trace, compile), x float64[{n},32,32,1]",
        METHODS,
        _columns("first", "first"),
        res,
        fmt="{:.3g}",
        footnotes=[
            *res.notes,
            "JAX 4-5: jax.jit embeds closed-over arrays as constants and XLA constant-folds the "
            "pipeline at compile time, so its steady state only returns the precomputed result.",
        ],
    )
    common.print_table(
        f"seed_graph_methods: steady-state median per call (ms), x float64[{n},32,32,1]",
        METHODS,
        _columns("steady", "steady"),
        res,
        fmt="{:.4g}",
        scale=1e3,
    )
    common.print_table(
        f"seed_graph_methods: small ops, chain of {dov.N_OPS} elementwise ops on float64[4]",
        SMALL_ROWS,
        [
            common.Column(
                f"{lib}:small",
                LABEL[lib],
                lib,
                role="ours" if lib == "tensorlib" else "peer",
                ratio_label="tensorlib / best peer",
            )
            for lib in LIB_ORDER
        ],
        res,
        fmt="{:.3g}",
        footnotes=["traced = tl.function / tf.function / jax.jit"],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
