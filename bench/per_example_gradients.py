"""Per-example gradients: ``vmap(grad(loss))`` against a Python loop of ``grad``, side by side.

Two models in float32, softmax cross entropy: a 784-128-10 MLP (ReLU) and a small CNN (28x28x1 image,
conv 5x5x8 VALID + bias, ReLU, mean over the pixels, dense 8-10); a batch of ``BATCH`` examples gets one
gradient of every parameter per example.  Rows (median ms per batch), for each model:

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
MODELS = ("mlp", "cnn")
ROWS = [
    (f"{model} {row}", f"{model} {label}")
    for model in MODELS
    for row, label in (("vmap", "vmap(grad)"), ("loop", "loop of grad"), ("traced", "traced vmap(grad)"))
]
IMAGE, KERNEL, CHANNELS = 28, 5, 8
COLUMNS = [
    common.Column("tensorlib", "tensorlib", "tensorlib", role="ours", ratio_label="tensorlib / best peer"),
    common.Column("torch", "PyTorch", "torch"),
    common.Column("jax", "JAX", "jax"),
    common.Column("tensorflow", "TF", "tensorflow"),
]
LIB_ORDER = ["tensorlib", "torch", "jax", "tensorflow"]


def make_data(model: str, batch: int = BATCH):
    rng = np.random.default_rng(0)
    if model == "mlp":
        params = {
            "w1": (rng.normal(size=SIZES[:2]) / np.sqrt(SIZES[0])).astype(np.float32),
            "b1": np.zeros(SIZES[1], np.float32),
            "w2": (rng.normal(size=SIZES[1:]) / np.sqrt(SIZES[1])).astype(np.float32),
        }
        xs = rng.normal(size=(batch, SIZES[0])).astype(np.float32)
    else:
        params = {
            "w1": (rng.normal(size=(KERNEL, KERNEL, 1, CHANNELS)) / KERNEL).astype(np.float32),
            "b1": np.full(CHANNELS, 0.1, np.float32),
            "w2": (rng.normal(size=(CHANNELS, SIZES[2])) / np.sqrt(CHANNELS)).astype(np.float32),
        }
        xs = rng.normal(size=(batch, IMAGE, IMAGE, 1)).astype(np.float32)
    ys = rng.integers(0, SIZES[2], size=batch)
    return params, xs, ys


def reference(model: str, params, xs, ys) -> dict:
    """Per-example gradients by the chain rule, in float64."""
    w1, b1, w2 = (params[k].astype(np.float64) for k in ("w1", "b1", "w2"))
    x = xs.astype(np.float64)
    if model == "mlp":
        pre = x @ w1 + b1
        h = np.maximum(pre, 0.0)
    else:  # patches (batch, out, out, kernel, kernel): the VALID correlation as one contraction
        patches = np.lib.stride_tricks.sliding_window_view(x[..., 0], (KERNEL, KERNEL), axis=(1, 2))
        pre = np.einsum("bijpq,pqf->bijf", patches, w1[:, :, 0]) + b1
        h = np.maximum(pre, 0.0).mean(axis=(1, 2))
    logits = h @ w2
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    d_logits = p - np.eye(SIZES[2])[ys]
    d_h = d_logits @ w2.T
    if model == "mlp":
        d_pre = d_h * (pre > 0)
        return {"w1": np.einsum("bi,bj->bij", x, d_pre), "b1": d_pre, "w2": np.einsum("bi,bj->bij", h, d_logits)}
    d_pre = d_h[:, None, None, :] * (pre > 0) / pre[0, ..., 0].size
    return {
        "w1": np.einsum("bijpq,bijf->bpqf", patches, d_pre)[:, :, :, None, :],
        "b1": d_pre.sum(axis=(1, 2)),
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


def _inputs(args, model: str, convert):
    """``(timing settings, NumPy reference gradients, params, xs, ys)``, the arrays converted by ``convert``."""
    params, xs, ys = make_data(model)
    converted = {k: convert(v) for k, v in params.items()}
    return _settings(args), reference(model, params, xs, ys), converted, convert(xs), convert(ys)


def _looped(grad, p, x, y, stack):
    """A Python loop of ``grad`` per example, each parameter's gradients stacked by ``stack``."""

    def loop():
        grads = [grad(p, x[i], y[i]) for i in range(BATCH)]
        return {k: stack([g[k] for g in grads]) for k in p}

    return loop


def _measure(rep, col, row, fn, settings, expected, to_numpy) -> None:
    def run():
        _checked(rep, f"{col} {row}", to_numpy(fn()), expected)
        return common.median_time(fn, **settings) * 1e3

    rep.measure(col, row, run)


# ---------------------------------------------------------------- workers
def w_tensorlib(rep: common.Reporter, args) -> None:
    tl = common.import_tensorlib()

    def features(p, x, model):
        if model == "mlp":
            return tl.nn.relu(x @ p["w1"] + p["b1"])
        return tl.mean(tl.nn.relu(tl.nn.conv2d(x[None], p["w1"], 1, "VALID") + p["b1"]), axis=(1, 2))[0]

    def to_numpy(d):
        return {k: v.numpy() for k, v in d.items()}

    for model in MODELS:
        s, expected, p, x, y = _inputs(args, model, tl.tensor)

        def loss(p, x, y, model=model):
            return tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=features(p, x, model) @ p["w2"])

        per_example = tl.vmap(tl.grad(loss), in_axes=(None, 0, 0))
        grad = tl.grad(loss)

        loop = _looped(grad, p, x, y, tl.stack)

        traced = tl.function(per_example)
        _measure(rep, "tensorlib", f"{model} vmap", lambda: per_example(p, x, y), s, expected, to_numpy)
        _measure(rep, "tensorlib", f"{model} loop", loop, s, expected, to_numpy)
        _measure(rep, "tensorlib", f"{model} traced", lambda: traced(p, x, y), s, expected, to_numpy)


def w_torch(rep: common.Reporter, args) -> None:
    torch = common.import_torch()
    from torch import func

    def features(p, x, model):
        if model == "mlp":
            return torch.relu(x @ p["w1"] + p["b1"])
        image, weight = x.permute(2, 0, 1)[None], p["w1"].permute(3, 2, 0, 1)  # NCHW, OIHW
        return torch.relu(torch.nn.functional.conv2d(image, weight, p["b1"])).mean(dim=(2, 3))[0]

    def to_numpy(d):
        return {k: v.detach().numpy() for k, v in d.items()}

    for model in MODELS:
        s, expected, p, x, y = _inputs(args, model, torch.tensor)

        def loss(p, x, y, model=model):
            return torch.nn.functional.cross_entropy((features(p, x, model) @ p["w2"])[None], y[None])

        per_example = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
        grad = func.grad(loss)

        loop = _looped(grad, p, x, y, torch.stack)

        _measure(rep, "torch", f"{model} vmap", lambda: per_example(p, x, y), s, expected, to_numpy)
        _measure(rep, "torch", f"{model} loop", loop, s, expected, to_numpy)


def w_jax(rep: common.Reporter, args) -> None:
    jax = common.import_jax(x64=False)
    jnp = jax.numpy

    def features(p, x, model):
        if model == "mlp":
            return jax.nn.relu(x @ p["w1"] + p["b1"])
        conv = jax.lax.conv_general_dilated(
            x[None], p["w1"], (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        return jax.nn.relu(conv + p["b1"]).mean(axis=(1, 2))[0]

    def ready(d):
        return {k: v.block_until_ready() for k, v in d.items()}

    def to_numpy(d):
        return {k: np.asarray(v) for k, v in d.items()}

    for model in MODELS:
        s, expected, p, x, y = _inputs(args, model, jnp.asarray)

        def loss(p, x, y, model=model):
            return -jax.nn.log_softmax(features(p, x, model) @ p["w2"])[y]

        per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
        grad = jax.grad(loss)

        loop = _looped(grad, p, x, y, jnp.stack)

        jitted = jax.jit(per_example)
        _measure(rep, "jax", f"{model} vmap", lambda: ready(per_example(p, x, y)), s, expected, to_numpy)
        _measure(rep, "jax", f"{model} loop", lambda: ready(loop()), s, expected, to_numpy)
        _measure(rep, "jax", f"{model} traced", lambda: ready(jitted(p, x, y)), s, expected, to_numpy)


def w_tensorflow(rep: common.Reporter, args) -> None:
    tf = common.import_tf()

    def features(p, x, model):
        if model == "mlp":
            return tf.nn.relu(x[None] @ p["w1"] + p["b1"])
        return tf.reduce_mean(tf.nn.relu(tf.nn.conv2d(x[None], p["w1"], 1, "VALID") + p["b1"]), axis=(1, 2))

    def to_numpy(d):
        return {k: v.numpy() for k, v in d.items()}

    for model in MODELS:
        s, expected, p, x, y = _inputs(args, model, tf.constant)

        def grad(xi, yi, p=p, model=model):
            with tf.GradientTape() as tape:
                tape.watch(p)
                logits = features(p, xi, model) @ p["w2"]
                loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yi[None], logits=logits)[0]
            return tape.gradient(loss, p)

        def per_example(x=x, y=y, grad=grad):
            return tf.vectorized_map(lambda e: grad(*e), (x, y))

        def loop(p=p, x=x, y=y, grad=grad):
            grads = [grad(x[i], y[i]) for i in range(BATCH)]
            return {k: tf.stack([g[k] for g in grads]) for k in p}

        traced = tf.function(per_example)
        _measure(rep, "tensorflow", f"{model} vmap", per_example, s, expected, to_numpy)
        _measure(rep, "tensorflow", f"{model} loop", loop, s, expected, to_numpy)
        _measure(rep, "tensorflow", f"{model} traced", traced, s, expected, to_numpy)


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
        f"per_example_gradients: ms per batch of {BATCH}, MLP {'-'.join(map(str, SIZES))} and CNN, float32 (median)",
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
