"""Eager per-op dispatch overhead: a chain of 1000 elementwise ops on a
4-element float64 tensor, reported in microseconds per op.

The chain is the same fixed mix for every implementation (see ``make_chain``):
``x*1.0001, x+0.5, sin(x), x-0.25, exp(x)`` repeated 200 times.

Rows:
  forward              plain forward, nothing recorded
  forward, recording   forward while a tape / autograd graph records it
                       (tensorlib: GradientTape watching x; PyTorch:
                       requires_grad input; TF: GradientTape; JAX: jax.vjp;
                       autograd: make_vjp; MyGrad: non-constant tensor)
  forward + backward   recording forward, then d(sum(y))/dx
                       (tensorlib: tape.gradient; PyTorch: .backward();
                       JAX: jax.grad op by op; TF: tape.gradient;
                       autograd: autograd.grad; MyGrad: .backward())
  fwd+bwd, tl.grad     tensorlib's functional tl.grad (ratio vs the
                       forward + backward row's best peer)
  graph rows           one call of the traced chain: tensorlib tl.function,
                       jax.jit, tf.function (per-op = call time / 1000)

NumPy is the floor (forward only; it is not counted as a peer).

    python bench/dispatch_overhead.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (sets thread env vars before numpy is imported)

import numpy as np  # noqa: E402

N_OPS = 1000
X0 = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float64)

ROWS = [
    ("fwd", "forward"),
    ("fwd_rec", "forward, recording"),
    ("fwd_bwd", "forward + backward"),
    ("fwd_bwd_grad", "fwd+bwd, tl.grad"),
    ("graph_fwd", "graph: forward, 1 call"),
    ("graph_fwd_bwd", "graph: fwd+bwd, 1 call"),
]
FIRST_ROWS = [
    ("graph_first_fwd", "graph forward: trace + first call"),
    ("graph_first_fwd_bwd", "graph fwd+bwd: trace + first call"),
]
COLUMNS = [
    common.Column("numpy", "NumPy", "numpy", role="floor"),
    common.Column("tensorlib", "tensorlib", "tensorlib", role="ours", ratio_label="tensorlib / best peer"),
    common.Column("torch", "PyTorch", "torch"),
    common.Column("jax", "JAX", "jax"),
    common.Column("tensorflow", "TF", "tensorflow"),
    common.Column("autograd", "autograd", "autograd"),
    common.Column("mygrad", "MyGrad", "mygrad"),
]
LIB_ORDER = ["numpy", "tensorlib", "torch", "jax", "tensorflow", "autograd", "mygrad"]


def make_chain(sin, exp, n_ops: int = N_OPS):
    """The fixed op mix: 5 ops per round, ``n_ops // 5`` rounds."""
    assert n_ops % 5 == 0
    rounds = n_ops // 5

    def chain(x):
        for _ in range(rounds):
            x = x * 1.0001
            x = x + 0.5
            x = sin(x)
            x = x - 0.25
            x = exp(x)
        return x

    return chain


def reference(x0=X0, n_ops: int = N_OPS):
    """NumPy value of chain(x0) and d(sum(chain(x)))/dx at x0 (forward mode)."""
    x = x0.copy()
    d = np.ones_like(x)
    for _ in range(n_ops // 5):
        x = x * 1.0001
        d = d * 1.0001
        x = x + 0.5
        d = d * np.cos(x)
        x = np.sin(x)
        x = x - 0.25
        x = np.exp(x)
        d = d * x
    return x, d


def _settings(args):
    if args.quick:
        return dict(repeats=7, warmup=1, number="auto", budget_s=1.5, target_sample_s=0.01)
    return dict(repeats=25, warmup=3, number="auto", budget_s=6.0, target_sample_s=0.03)


def _per_op(seconds: float) -> float:
    return seconds / N_OPS * 1e6  # microseconds per op


# ---------------------------------------------------------------- workers
def w_numpy(rep: common.Reporter, args) -> None:
    s = _settings(args)
    chain = make_chain(np.sin, np.exp)
    x = X0.copy()
    rep.measure("numpy", "fwd", lambda: _per_op(common.median_time(lambda: chain(x), **s)))


def w_tensorlib(rep: common.Reporter, args) -> None:
    s = _settings(args)
    tl = common.import_tensorlib()
    chain = make_chain(tl.sin, tl.exp)
    x = tl.tensor(X0.copy())
    ref_y, ref_g = reference()

    def fwd():
        return chain(x)

    def fwd_rec():
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = chain(x)
        return y

    def fwd_bwd():
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = chain(x).sum()
        return tape.gradient(y, [x])[0]

    loss = lambda x_: chain(x_).sum()  # noqa: E731
    grad_fn = tl.grad(loss) if hasattr(tl, "grad") else None

    def fwd_bwd_grad():
        return grad_fn(x)

    # Correctness first (warnings only), then timing.
    def check():
        y = np.asarray(fwd().numpy())
        ok, err = common.compare_arrays(y, ref_y, 1e-10)
        if not ok:
            rep.note(f"WARNING: forward result differs from NumPy (rel err {err:.2e})")
        g = np.asarray(fwd_bwd().numpy())
        ok, err = common.compare_arrays(g, ref_g, 1e-8)
        if not ok:
            rep.note(f"WARNING: tape gradient differs from the analytic NumPy gradient (rel err {err:.2e})")
        return None

    try:
        check()
    except Exception as e:  # noqa: BLE001
        rep.note(f"correctness check failed: {common.short_error(e)}")

    rep.measure("tensorlib", "fwd", lambda: _per_op(common.median_time(fwd, **s)))
    rep.measure("tensorlib", "fwd_rec", lambda: _per_op(common.median_time(fwd_rec, **s)))
    rep.measure("tensorlib", "fwd_bwd", lambda: _per_op(common.median_time(fwd_bwd, **s)))
    rep.measure("tensorlib", "fwd_bwd_grad", lambda: _per_op(common.median_time(fwd_bwd_grad, **s)))

    # Graph mode: tl.function over the same chain.
    def graph_fwd():
        f = tl.function(chain)
        first = common.time_once(lambda: f(x).numpy())
        rep.value("tensorlib", "graph_first_fwd", first)
        y = np.asarray(f(x).numpy())
        ok, err = common.compare_arrays(y, ref_y, 1e-10)
        if not ok:
            rep.note(f"WARNING: tl.function forward differs from NumPy (rel err {err:.2e})")
        return _per_op(common.median_time(lambda: f(x), **s))

    def graph_fwd_bwd():
        @tl.function
        def g(x_):
            with tl.GradientTape() as tape:
                tape.watch(x_)
                y = chain(x_).sum()
            return tape.gradient(y, [x_])[0]

        first = common.time_once(lambda: g(x).numpy())
        rep.value("tensorlib", "graph_first_fwd_bwd", first)
        return _per_op(common.median_time(lambda: g(x), **s))

    rep.measure("tensorlib", "graph_fwd", graph_fwd)
    rep.measure("tensorlib", "graph_fwd_bwd", graph_fwd_bwd)


def w_torch(rep: common.Reporter, args) -> None:
    s = _settings(args)
    torch = common.import_torch()
    chain = make_chain(torch.sin, torch.exp)
    x_plain = torch.tensor(X0.copy())
    x = torch.tensor(X0.copy(), requires_grad=True)

    def fwd():
        return chain(x_plain)

    def fwd_rec():
        return chain(x)

    def fwd_bwd():
        x.grad = None
        chain(x).sum().backward()
        return x.grad

    rep.measure("torch", "fwd", lambda: _per_op(common.median_time(fwd, **s)))
    rep.measure("torch", "fwd_rec", lambda: _per_op(common.median_time(fwd_rec, **s)))
    rep.measure("torch", "fwd_bwd", lambda: _per_op(common.median_time(fwd_bwd, **s)))


def w_jax(rep: common.Reporter, args) -> None:
    s = _settings(args)
    jax = common.import_jax(x64=True)
    import jax.numpy as jnp

    chain = make_chain(jnp.sin, jnp.exp)
    x = jnp.asarray(X0.copy())
    loss = lambda x_: chain(x_).sum()  # noqa: E731
    grad_eager = jax.grad(loss)

    def fwd():
        return chain(x).block_until_ready()

    def fwd_rec():
        y, vjp = jax.vjp(chain, x)
        return y.block_until_ready()

    def fwd_bwd():
        return grad_eager(x).block_until_ready()

    rep.measure("jax", "fwd", lambda: _per_op(common.median_time(fwd, **s)))
    rep.measure("jax", "fwd_rec", lambda: _per_op(common.median_time(fwd_rec, **s)))
    rep.measure("jax", "fwd_bwd", lambda: _per_op(common.median_time(fwd_bwd, **s)))

    def graph(row, fn):
        jf = jax.jit(fn)
        first = common.time_once(lambda: jf(x).block_until_ready())
        rep.value("jax", row.replace("graph_", "graph_first_"), first)
        return _per_op(common.median_time(lambda: jf(x).block_until_ready(), **s))

    rep.measure("jax", "graph_fwd", lambda: graph("graph_fwd", chain))
    rep.measure("jax", "graph_fwd_bwd", lambda: graph("graph_fwd_bwd", jax.grad(loss)))


def w_tensorflow(rep: common.Reporter, args) -> None:
    s = _settings(args)
    tf = common.import_tf()
    chain = make_chain(tf.sin, tf.exp)
    x = tf.constant(X0.copy())

    def fwd():
        return chain(x)

    def fwd_rec():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = chain(x)
        return y

    def fwd_bwd():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(chain(x))
        return tape.gradient(y, x)

    rep.measure("tensorflow", "fwd", lambda: _per_op(common.median_time(fwd, **s)))
    rep.measure("tensorflow", "fwd_rec", lambda: _per_op(common.median_time(fwd_rec, **s)))
    rep.measure("tensorflow", "fwd_bwd", lambda: _per_op(common.median_time(fwd_bwd, **s)))

    def graph(row, fn):
        tff = tf.function(fn)
        first = common.time_once(lambda: tff(x).numpy())
        rep.value("tensorflow", row.replace("graph_", "graph_first_"), first)
        return _per_op(common.median_time(lambda: tff(x), **s))

    rep.measure("tensorflow", "graph_fwd", lambda: graph("graph_fwd", chain))
    rep.measure("tensorflow", "graph_fwd_bwd", lambda: graph("graph_fwd_bwd", fwd_bwd_of(tf, chain)))


def fwd_bwd_of(tf, chain):
    def g(x_):
        with tf.GradientTape() as tape:
            tape.watch(x_)
            y = tf.reduce_sum(chain(x_))
        return tape.gradient(y, x_)

    return g


def w_autograd(rep: common.Reporter, args) -> None:
    s = _settings(args)
    import autograd
    import autograd.numpy as anp

    chain = make_chain(anp.sin, anp.exp)
    x = X0.copy()
    loss = lambda x_: anp.sum(chain(x_))  # noqa: E731
    grad_fn = autograd.grad(loss)
    make_vjp = autograd.make_vjp(chain)

    rep.measure("autograd", "fwd", lambda: _per_op(common.median_time(lambda: chain(x), **s)))
    rep.measure("autograd", "fwd_rec", lambda: _per_op(common.median_time(lambda: make_vjp(x), **s)))
    rep.measure("autograd", "fwd_bwd", lambda: _per_op(common.median_time(lambda: grad_fn(x), **s)))


def w_mygrad(rep: common.Reporter, args) -> None:
    s = _settings(args)
    import mygrad as mg

    chain = make_chain(mg.sin, mg.exp)
    x_const = mg.tensor(X0.copy(), constant=True)
    x = mg.tensor(X0.copy(), constant=False)

    def fwd():
        return chain(x_const)

    def fwd_rec():
        return chain(x)

    def fwd_bwd():
        y = chain(x).sum()
        y.backward()
        return x.grad

    rep.measure("mygrad", "fwd", lambda: _per_op(common.median_time(fwd, **s)))
    rep.measure("mygrad", "fwd_rec", lambda: _per_op(common.median_time(fwd_rec, **s)))
    rep.measure("mygrad", "fwd_bwd", lambda: _per_op(common.median_time(fwd_bwd, **s)))


WORKERS = {
    "numpy": w_numpy,
    "tensorlib": w_tensorlib,
    "torch": w_torch,
    "jax": w_jax,
    "tensorflow": w_tensorflow,
    "autograd": w_autograd,
    "mygrad": w_mygrad,
}


def main(argv=None, header: bool = True) -> int:
    parser = common.base_arg_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    if args.worker:
        return common.run_as_worker(WORKERS, args)
    if header:
        print(common.env_header())
    timeout = args.timeout or (150 if args.quick else 900)
    res = common.collect(__file__, common.selected_libs(args, LIB_ORDER), common.quick_args(args), timeout)
    print_results(res)
    return 0


def print_results(res: common.Results) -> None:
    common.print_table(
        f"dispatch_overhead: us per op, chain of {N_OPS} elementwise ops on float64[4] (median)",
        ROWS,
        COLUMNS,
        res,
        fmt="{:.3g}",
        ratio_rows={"fwd_bwd_grad": "fwd_bwd"},
        footnotes=[
            "graph rows: tensorlib = tl.function, JAX = jax.jit, TF = tf.function; NumPy is the floor, not a peer.",
            *res.notes,
        ],
    )
    common.print_table(
        "dispatch_overhead: graph trace + compile + first call (ms)",
        FIRST_ROWS,
        [c for c in COLUMNS if c.key in ("tensorlib", "jax", "tensorflow")],
        res,
        fmt="{:.4g}",
        scale=1e3,
    )


if __name__ == "__main__":
    sys.exit(main())
