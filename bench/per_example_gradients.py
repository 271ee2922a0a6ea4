"""Per-example gradients of an MLP: ``vmap(grad(loss))`` against a Python loop of ``grad``, side by side.

The model is a 784-128-10 MLP (ReLU, softmax cross entropy) in float32; a batch of ``BATCH`` examples gets one
gradient of every parameter per example.  Rows (median ms per batch):

  vmap(grad)           tensorlib tl.vmap(tl.grad), PyTorch torch.func.vmap(torch.func.grad),
                       JAX jax.vmap(jax.grad) (not jitted), TF tf.vectorized_map over a GradientTape
  loop of grad         one grad call per example in a Python loop, stacked
  traced vmap(grad)    tl.function(tl.vmap(tl.grad)), jax.jit(jax.vmap(jax.grad)), tf.function(vectorized_map)

Every library's result is checked against a NumPy formula first (a warning below the table if it differs).

    python bench/per_example_gradients.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (sets thread env vars before numpy is imported)

import numpy as np  # noqa: E402

BATCH = 64
SIZES = (784, 128, 10)
ROWS = [("vmap", "vmap(grad)"), ("loop", "loop of grad"), ("traced", "traced vmap(grad)")]
COLUMNS = [
    common.Column("tensorlib", "tensorlib", "tensorlib", role="ours", ratio_label="tensorlib / best peer"),
    common.Column("torch", "PyTorch", "torch"),
    common.Column("jax", "JAX", "jax"),
    common.Column("tensorflow", "TF", "tensorflow"),
]
LIB_ORDER = ["tensorlib", "torch", "jax", "tensorflow"]


def make_data(batch: int = BATCH):
    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.normal(size=SIZES[:2]) / np.sqrt(SIZES[0])).astype(np.float32),
        "b1": np.zeros(SIZES[1], np.float32),
        "w2": (rng.normal(size=SIZES[1:]) / np.sqrt(SIZES[1])).astype(np.float32),
    }
    xs = rng.normal(size=(batch, SIZES[0])).astype(np.float32)
    ys = rng.integers(0, SIZES[2], size=batch)
    return params, xs, ys


def reference(params, xs, ys) -> dict:
    """Per-example gradients by the chain rule, in float64."""
    w1, b1, w2 = (params[k].astype(np.float64) for k in ("w1", "b1", "w2"))
    pre = xs.astype(np.float64) @ w1 + b1
    h = np.maximum(pre, 0.0)
    logits = h @ w2
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    d_logits = p - np.eye(SIZES[2])[ys]
    d_pre = (d_logits @ w2.T) * (pre > 0)
    return {
        "w1": np.einsum("bi,bj->bij", xs, d_pre),
        "b1": d_pre,
        "w2": np.einsum("bi,bj->bij", h, d_logits),
    }


def _settings(args):
    if args.quick:
        return dict(repeats=5, warmup=1, number=1, budget_s=3.0, target_sample_s=0.0)
    return dict(repeats=15, warmup=2, number=1, budget_s=10.0, target_sample_s=0.0)


def _checked(rep, name, got: dict, expected: dict) -> None:
    for k in expected:
        ok, err = common.compare_arrays(np.asarray(got[k]), expected[k], 1e-3)
        if not ok:
            rep.note(f"WARNING: {name} gradient of {k} differs from the NumPy reference (rel err {err:.2e})")


def _inputs(args, convert):
    """``(timing settings, NumPy reference gradients, params, xs, ys)``, the arrays converted by ``convert``."""
    params, xs, ys = make_data()
    converted = {k: convert(v) for k, v in params.items()}
    return _settings(args), reference(params, xs, ys), converted, convert(xs), convert(ys)


def _measure(rep, col, row, fn, settings, expected, to_numpy) -> None:
    def run():
        _checked(rep, f"{col} {row}", to_numpy(fn()), expected)
        return common.median_time(fn, **settings) * 1e3

    rep.measure(col, row, run)


# ---------------------------------------------------------------- workers
def w_tensorlib(rep: common.Reporter, args) -> None:
    tl = common.import_tensorlib()
    s, expected, p, x, y = _inputs(args, tl.tensor)

    def loss(p, x, y):
        h = tl.nn.relu(x @ p["w1"] + p["b1"])
        return tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h @ p["w2"])

    per_example = tl.vmap(tl.grad(loss), in_axes=(None, 0, 0))
    grad = tl.grad(loss)

    def loop():
        grads = [grad(p, x[i], y[i]) for i in range(BATCH)]
        return {k: tl.stack([g[k] for g in grads]) for k in p}

    def to_numpy(d):
        return {k: v.numpy() for k, v in d.items()}

    traced = tl.function(per_example)
    _measure(rep, "tensorlib", "vmap", lambda: per_example(p, x, y), s, expected, to_numpy)
    _measure(rep, "tensorlib", "loop", loop, s, expected, to_numpy)
    _measure(rep, "tensorlib", "traced", lambda: traced(p, x, y), s, expected, to_numpy)


def w_torch(rep: common.Reporter, args) -> None:
    torch = common.import_torch()
    from torch import func

    s, expected, p, x, y = _inputs(args, torch.tensor)

    def loss(p, x, y):
        logits = torch.relu(x @ p["w1"] + p["b1"]) @ p["w2"]
        return torch.nn.functional.cross_entropy(logits[None], y[None])

    per_example = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
    grad = func.grad(loss)

    def loop():
        grads = [grad(p, x[i], y[i]) for i in range(BATCH)]
        return {k: torch.stack([g[k] for g in grads]) for k in p}

    def to_numpy(d):
        return {k: v.detach().numpy() for k, v in d.items()}

    _measure(rep, "torch", "vmap", lambda: per_example(p, x, y), s, expected, to_numpy)
    _measure(rep, "torch", "loop", loop, s, expected, to_numpy)


def w_jax(rep: common.Reporter, args) -> None:
    jax = common.import_jax(x64=False)
    jnp = jax.numpy
    s, expected, p, x, y = _inputs(args, jnp.asarray)

    def loss(p, x, y):
        logits = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"]
        return -jax.nn.log_softmax(logits)[y]

    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    grad = jax.grad(loss)

    def loop():
        grads = [grad(p, x[i], y[i]) for i in range(BATCH)]
        return {k: jnp.stack([g[k] for g in grads]) for k in p}

    def ready(d):
        return {k: v.block_until_ready() for k, v in d.items()}

    def to_numpy(d):
        return {k: np.asarray(v) for k, v in d.items()}

    jitted = jax.jit(per_example)
    _measure(rep, "jax", "vmap", lambda: ready(per_example(p, x, y)), s, expected, to_numpy)
    _measure(rep, "jax", "loop", lambda: ready(loop()), s, expected, to_numpy)
    _measure(rep, "jax", "traced", lambda: ready(jitted(p, x, y)), s, expected, to_numpy)


def w_tensorflow(rep: common.Reporter, args) -> None:
    tf = common.import_tf()
    s, expected, p, x, y = _inputs(args, tf.constant)

    def grad(xi, yi):
        with tf.GradientTape() as tape:
            tape.watch(p)
            logits = tf.nn.relu(xi[None] @ p["w1"] + p["b1"]) @ p["w2"]
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yi[None], logits=logits)[0]
        return tape.gradient(loss, p)

    def per_example():
        return tf.vectorized_map(lambda e: grad(*e), (x, y))

    def loop():
        grads = [grad(x[i], y[i]) for i in range(BATCH)]
        return {k: tf.stack([g[k] for g in grads]) for k in p}

    def to_numpy(d):
        return {k: v.numpy() for k, v in d.items()}

    traced = tf.function(per_example)
    _measure(rep, "tensorflow", "vmap", per_example, s, expected, to_numpy)
    _measure(rep, "tensorflow", "loop", loop, s, expected, to_numpy)
    _measure(rep, "tensorflow", "traced", traced, s, expected, to_numpy)


WORKERS = {"tensorlib": w_tensorlib, "torch": w_torch, "jax": w_jax, "tensorflow": w_tensorflow}


def main(argv=None, header: bool = True) -> int:
    parser = common.base_arg_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    if args.worker:
        return common.run_as_worker(WORKERS, args)
    if header:
        print(common.env_header())
    timeout = args.timeout or (300 if args.quick else 900)
    res = common.collect(__file__, common.selected_libs(args, LIB_ORDER), common.quick_args(args), timeout)
    common.print_table(
        f"per_example_gradients: ms per batch of {BATCH}, MLP {'-'.join(map(str, SIZES))} float32 (median)",
        ROWS,
        COLUMNS,
        res,
        fmt="{:.3g}",
        scale=1.0,
        footnotes=["PyTorch has no traced row (torch.compile is not a peer here).", *res.notes],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
