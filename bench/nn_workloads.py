"""Neural-network workloads: tensorlib vs PyTorch, JAX and TensorFlow.

Workloads (identical seeded NumPy inputs for every implementation):

* seed-<dtype>-N<n>: x [N,32,32,1], w [3,3,1,6]; conv2d VALID stride 1 ->
  avg_pool 2x2 stride 2 VALID -> relu; forward only; float64 and float32;
  N = 6000 (and 60000 unless --quick).
* cnn-train-step: batch 128 of 28x28x1 float32; conv 5x5 1->32 SAME + b, relu,
  maxpool 2, conv 5x5 32->64 SAME + b, relu, maxpool 2, flatten,
  dense 3136->128 + b, relu, dense 128->10 + b, mean sparse softmax cross
  entropy with integer labels; forward + backward for all 8 parameters.
* mlp-train-step: batch 256, 784->512->512->10 relu MLP, float32, mean softmax
  cross entropy with one-hot labels; forward + backward for all 6 parameters.

Implementations: tensorlib eager, tensorlib with the step wrapped in
tl.function, PyTorch eager, JAX jit, TF eager, TF tf.function.  Each timed call
ends with its results materialised (tensorlib: ``.numpy()`` on the outputs,
JAX: ``block_until_ready``; PyTorch and TF eager are synchronous on CPU).

PyTorch layout: PyTorch runs NCHW.  Inputs and weights are transposed to
NCHW / OIHW once, outside the timed region (and the dense-layer weight rows are
permuted to NCHW flatten order, so no transpose is needed inside the step);
PyTorch's outputs are converted back to NHWC / HWIO only for verification.

tensorlib's output is checked against PyTorch's (or NumPy's when PyTorch is
missing); a mismatch prints a WARNING line.

    python bench/nn_workloads.py [--quick]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (sets thread env vars before numpy is imported)

import numpy as np  # noqa: E402

CNN_PARAMS = ["w1", "b1", "w2", "b2", "w3", "b3", "w4", "b4"]
MLP_PARAMS = ["w1", "b1", "w2", "b2", "w3", "b3"]
CNN_BATCH = 128
MLP_BATCH = 256
HEAD = 256  # seed outputs: how many samples are kept for verification

COLUMNS = [
    common.Column("tensorlib", "tensorlib", "tensorlib", role="ours", ratio_label="tensorlib / best peer"),
    common.Column("tensorlib-fn", "tl.function", "tensorlib", role="ours", ratio_label="tl.function / best peer"),
    common.Column("torch", "PyTorch", "torch"),
    common.Column("jax", "JAX jit", "jax"),
    common.Column("tf", "TF eager", "tensorflow"),
    common.Column("tf-fn", "tf.function", "tensorflow"),
]
LIB_COLS = {
    "tensorlib": ["tensorlib", "tensorlib-fn"],
    "torch": ["torch"],
    "jax": ["jax"],
    "tensorflow": ["tf", "tf-fn"],
}
LIB_ORDER = ["tensorlib", "torch", "jax", "tensorflow"]


# ------------------------------------------------------------------ workloads
def workload_keys(quick: bool) -> list[str]:
    keys = ["seed-f64-N6000", "seed-f32-N6000"]
    if not quick:
        keys += ["seed-f64-N60000", "seed-f32-N60000"]
    return keys + ["cnn-train-step", "mlp-train-step"]


def kind_of(key: str) -> str:
    return key.split("-")[0]


def seed_params(key: str) -> tuple[np.dtype, int]:
    _, dt, n = key.split("-")
    return (np.float64 if dt == "f64" else np.float32), int(n[1:])


def dtype_of(key: str):
    return seed_params(key)[0] if kind_of(key) == "seed" else np.float32


def make_seed_data(n: int, dtype) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 32, 32, 1))
    w = rng.standard_normal((3, 3, 1, 6))
    if dtype != np.float64:
        x = x.astype(dtype)
        w = w.astype(dtype)
    return {"x": x, "w": w}


def make_data(key: str) -> dict:
    """Seeded inputs for a workload (identical for every implementation)."""
    kind = kind_of(key)
    if kind == "seed":
        dtype, n = seed_params(key)
        return make_seed_data(n, dtype)
    f32 = np.float32
    if kind == "cnn":
        rng = np.random.default_rng(1)
        d = {
            "x": rng.standard_normal((CNN_BATCH, 28, 28, 1)).astype(f32),
            "y": rng.integers(0, 10, CNN_BATCH).astype(np.int64),
        }
        shapes = {
            "w1": ((5, 5, 1, 32), 25),
            "b1": ((32,), None),
            "w2": ((5, 5, 32, 64), 25 * 32),
            "b2": ((64,), None),
            "w3": ((3136, 128), 3136),
            "b3": ((128,), None),
            "w4": ((128, 10), 128),
            "b4": ((10,), None),
        }
    elif kind == "mlp":
        rng = np.random.default_rng(2)
        labels = rng.integers(0, 10, MLP_BATCH)
        d = {
            "x": rng.standard_normal((MLP_BATCH, 784)).astype(f32),
            "y": np.eye(10, dtype=f32)[labels],
        }
        shapes = {
            "w1": ((784, 512), 784),
            "b1": ((512,), None),
            "w2": ((512, 512), 512),
            "b2": ((512,), None),
            "w3": ((512, 10), 512),
            "b3": ((10,), None),
        }
    else:
        raise ValueError(key)
    for name, (shape, fan_in) in shapes.items():
        scale = np.sqrt(2.0 / fan_in) if fan_in else 0.01
        d[name] = (rng.standard_normal(shape) * scale).astype(f32)
    return d


def seed_outputs(y_nhwc: np.ndarray) -> dict:
    return {"y_head": np.array(y_nhwc[:HEAD]), "y_sum": np.sum(y_nhwc, dtype=np.float64)}


# ------------------------------------------------------- per-library models
def tl_seed_fn(tl):
    def f(x, w):
        y = tl.nn.conv2d(x, w, strides=1, padding="VALID")
        y = tl.nn.avg_pool(y, ksize=2, strides=2, padding="VALID")
        return tl.nn.relu(y)

    return f


def tf_seed_fn(tf):
    def f(x, w):
        y = tf.nn.conv2d(x, w, strides=1, padding="VALID")
        y = tf.nn.avg_pool2d(y, ksize=2, strides=2, padding="VALID")
        return tf.nn.relu(y)

    return f


def jax_seed_fn(jax):
    import jax.numpy as jnp
    from jax import lax

    def f(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        return jax.nn.relu(y)

    return f


def build_tensorlib(key: str, d: dict, traced: bool):
    tl = common.import_tensorlib()
    kind = kind_of(key)
    if kind == "seed":
        x, w = tl.tensor(d["x"]), tl.tensor(d["w"])
        f = tl_seed_fn(tl)
        if traced:
            f = tl.function(f)

        def step():
            y = f(x, w)
            y.numpy()
            return y

        return step, lambda y: seed_outputs(np.asarray(y.numpy()))

    names = CNN_PARAMS if kind == "cnn" else MLP_PARAMS
    params = [tl.Variable(d[k]) for k in names]
    x, y = tl.tensor(d["x"]), tl.tensor(d["y"])

    if kind == "cnn":

        def loss_fn(x, y):
            w1, b1, w2, b2, w3, b3, w4, b4 = params
            h = tl.nn.relu(tl.nn.conv2d(x, w1, strides=1, padding="SAME") + b1)
            h = tl.nn.max_pool(h, ksize=2, strides=2, padding="VALID")
            h = tl.nn.relu(tl.nn.conv2d(h, w2, strides=1, padding="SAME") + b2)
            h = tl.nn.max_pool(h, ksize=2, strides=2, padding="VALID")
            h = tl.reshape(h, (CNN_BATCH, 7 * 7 * 64))
            h = tl.nn.relu(h @ w3 + b3)
            logits = h @ w4 + b4
            return tl.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits).mean()

    else:

        def loss_fn(x, y):
            w1, b1, w2, b2, w3, b3 = params
            h = tl.nn.relu(x @ w1 + b1)
            h = tl.nn.relu(h @ w2 + b2)
            logits = h @ w3 + b3
            return tl.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits).mean()

    def train_step(x, y):
        with tl.GradientTape() as tape:
            loss = loss_fn(x, y)
        return loss, tape.gradient(loss, params)

    if traced:
        train_step = tl.function(train_step)

    def step():
        loss, grads = train_step(x, y)
        loss.numpy()
        for g in grads:
            g.numpy()
        return loss, grads

    def to_np(r):
        loss, grads = r
        out = {"loss": np.asarray(loss.numpy())}
        out.update({f"g_{k}": np.asarray(g.numpy()) for k, g in zip(names, grads)})
        return out

    return step, to_np


def build_torch(key: str, d: dict):
    torch = common.import_torch()
    F = torch.nn.functional
    kind = kind_of(key)
    if kind == "seed":
        # NCHW, transposed outside the timed region (C_in = 1, so this is the
        # same memory layout); weights HWIO -> OIHW.
        x = torch.from_numpy(np.ascontiguousarray(d["x"].transpose(0, 3, 1, 2)))
        w = torch.from_numpy(np.ascontiguousarray(d["w"].transpose(3, 2, 0, 1)))

        def step():
            with torch.no_grad():
                return F.relu(F.avg_pool2d(F.conv2d(x, w), 2, 2))

        return step, lambda y: seed_outputs(y.numpy().transpose(0, 2, 3, 1))

    if kind == "cnn":
        x = torch.from_numpy(np.ascontiguousarray(d["x"].transpose(0, 3, 1, 2)))
        y = torch.from_numpy(d["y"])
        conv = lambda a: np.ascontiguousarray(a.transpose(3, 2, 0, 1))  # noqa: E731  HWIO -> OIHW
        # Rows of the first dense weight in NCHW flatten order (c, h, w).
        w3 = d["w3"].reshape(7, 7, 64, 128).transpose(2, 0, 1, 3).reshape(3136, 128)
        init = [conv(d["w1"]), d["b1"], conv(d["w2"]), d["b2"], np.ascontiguousarray(w3), d["b3"], d["w4"], d["b4"]]
        params = [torch.tensor(a, requires_grad=True) for a in init]

        def step():
            w1, b1, w2, b2, w3_, b3, w4, b4 = params
            h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=2)), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=2)), 2)
            h = h.reshape(CNN_BATCH, 3136)
            h = F.relu(torch.addmm(b3, h, w3_))
            logits = torch.addmm(b4, h, w4)
            loss = F.cross_entropy(logits, y)
            grads = torch.autograd.grad(loss, params)
            return loss, grads

        def to_np(r):
            loss, g = r
            g = [t.numpy() for t in g]
            back = lambda a: a.transpose(2, 3, 1, 0)  # noqa: E731  OIHW -> HWIO
            g3 = g[4].reshape(64, 7, 7, 128).transpose(1, 2, 0, 3).reshape(3136, 128)
            gs = [back(g[0]), g[1], back(g[2]), g[3], g3, g[5], g[6], g[7]]
            out = {"loss": np.asarray(loss.item())}
            out.update({f"g_{k}": a for k, a in zip(CNN_PARAMS, gs)})
            return out

        return step, to_np

    x = torch.from_numpy(d["x"])
    y = torch.from_numpy(d["y"])
    params = [torch.tensor(d[k], requires_grad=True) for k in MLP_PARAMS]

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h = F.relu(torch.addmm(b1, x, w1))
        h = F.relu(torch.addmm(b2, h, w2))
        logits = torch.addmm(b3, h, w3)
        loss = F.cross_entropy(logits, y)  # probability (one-hot) targets
        return loss, torch.autograd.grad(loss, params)

    def to_np(r):
        out = {"loss": np.asarray(r[0].item())}
        out.update({f"g_{k}": g.numpy() for k, g in zip(MLP_PARAMS, r[1])})
        return out

    return step, to_np


def build_jax(key: str, d: dict):
    jax = common.import_jax(x64=True)  # x64 for the float64 seed; float32 inputs stay float32
    import jax.numpy as jnp
    from jax import lax

    kind = kind_of(key)
    if kind == "seed":
        f = jax.jit(jax_seed_fn(jax))
        x, w = jnp.asarray(d["x"]), jnp.asarray(d["w"])

        def step():
            return f(x, w).block_until_ready()

        return step, lambda y: seed_outputs(np.asarray(y))

    def maxpool(h):
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def conv_same(h, w):
        return lax.conv_general_dilated(h, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    if kind == "cnn":
        names = CNN_PARAMS

        def loss_fn(params, x, y):
            w1, b1, w2, b2, w3, b3, w4, b4 = params
            h = maxpool(jax.nn.relu(conv_same(x, w1) + b1))
            h = maxpool(jax.nn.relu(conv_same(h, w2) + b2))
            h = h.reshape(CNN_BATCH, 3136)
            h = jax.nn.relu(h @ w3 + b3)
            logits = h @ w4 + b4
            logp = jax.nn.log_softmax(logits)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    else:
        names = MLP_PARAMS

        def loss_fn(params, x, y):
            w1, b1, w2, b2, w3, b3 = params
            h = jax.nn.relu(x @ w1 + b1)
            h = jax.nn.relu(h @ w2 + b2)
            logits = h @ w3 + b3
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=1))

    params = tuple(jnp.asarray(d[k]) for k in names)
    x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
    vg = jax.jit(jax.value_and_grad(loss_fn))

    def step():
        return jax.block_until_ready(vg(params, x, y))

    def to_np(r):
        out = {"loss": np.asarray(r[0])}
        out.update({f"g_{k}": np.asarray(g) for k, g in zip(names, r[1])})
        return out

    return step, to_np


def build_tf(key: str, d: dict, traced: bool):
    tf = common.import_tf()
    kind = kind_of(key)
    if kind == "seed":
        f = tf_seed_fn(tf)
        if traced:
            f = tf.function(f)
        x, w = tf.constant(d["x"]), tf.constant(d["w"])
        return (lambda: f(x, w)), (lambda y: seed_outputs(y.numpy()))

    names = CNN_PARAMS if kind == "cnn" else MLP_PARAMS
    params = [tf.Variable(d[k]) for k in names]
    x, y = tf.constant(d["x"]), tf.constant(d["y"])

    if kind == "cnn":

        def loss_fn(x, y):
            w1, b1, w2, b2, w3, b3, w4, b4 = params
            h = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME") + b1)
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.nn.relu(tf.nn.conv2d(h, w2, 1, "SAME") + b2)
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.reshape(h, (CNN_BATCH, 3136))
            h = tf.nn.relu(tf.matmul(h, w3) + b3)
            logits = tf.matmul(h, w4) + b4
            return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))

    else:

        def loss_fn(x, y):
            w1, b1, w2, b2, w3, b3 = params
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            h = tf.nn.relu(tf.matmul(h, w2) + b2)
            logits = tf.matmul(h, w3) + b3
            return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(x, y)
        return loss, tape.gradient(loss, params)

    if traced:
        train_step = tf.function(train_step)

    def to_np(r):
        out = {"loss": r[0].numpy()}
        out.update({f"g_{k}": g.numpy() for k, g in zip(names, r[1])})
        return out

    return (lambda: train_step(x, y)), to_np


def build_step(col: str, key: str, d: dict):
    """(step, to_numpy) for one column (implementation) and workload."""
    if col == "tensorlib":
        return build_tensorlib(key, d, traced=False)
    if col == "tensorlib-fn":
        return build_tensorlib(key, d, traced=True)
    if col == "torch":
        return build_torch(key, d)
    if col == "jax":
        return build_jax(key, d)
    if col == "tf":
        return build_tf(key, d, traced=False)
    if col == "tf-fn":
        return build_tf(key, d, traced=True)
    raise ValueError(col)


# ----------------------------------------------------------- NumPy reference
def numpy_reference(key: str, d: dict | None = None) -> dict | None:
    """Reference outputs computed with NumPy (float64), or None."""
    kind = kind_of(key)
    d = d if d is not None else make_data(key)
    if kind == "seed":
        x = d["x"][:HEAD, :, :, 0].astype(np.float64)
        w = d["w"][:, :, 0, :].astype(np.float64)
        win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))  # n,30,30,3,3
        conv = np.einsum("nhwij,ijo->nhwo", win, w)
        pooled = conv.reshape(conv.shape[0], 15, 2, 15, 2, 6).mean(axis=(2, 4))
        return {"y_head": np.maximum(pooled, 0.0)}
    if kind == "mlp":
        f = lambda k: d[k].astype(np.float64)  # noqa: E731
        x, y = f("x"), f("y")
        w1, b1, w2, b2, w3, b3 = (f(k) for k in MLP_PARAMS)
        h1 = np.maximum(x @ w1 + b1, 0)
        h2 = np.maximum(h1 @ w2 + b2, 0)
        z = h2 @ w3 + b3
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -np.mean(np.sum(y * logp, axis=1))
        n = x.shape[0]
        dz = (np.exp(logp) * y.sum(axis=1, keepdims=True) - y) / n
        dh2 = (dz @ w3.T) * (h2 > 0)
        dh1 = (dh2 @ w2.T) * (h1 > 0)
        return {
            "loss": np.asarray(loss),
            "g_w1": x.T @ dh1,
            "g_b1": dh1.sum(0),
            "g_w2": h1.T @ dh2,
            "g_b2": dh2.sum(0),
            "g_w3": h2.T @ dz,
            "g_b3": dz.sum(0),
        }
    return None


def tolerance(key: str, name: str) -> float:
    """Allowed max |got - ref| / max |ref| for one output array.

    float32 gradients get 1e-2: a float32 conv output that lands within
    rounding of a relu / max-pool tie can route one gradient term differently
    from PyTorch's. In cnn-train-step this moves g_w1 by about 3e-3
    (JAX f32 shows the same vs a float64 reference, while tensorlib f64
    matches PyTorch f64 to 1e-14). Real bugs give errors of order 1.
    """
    if dtype_of(key) == np.float64:
        return 1e-9
    return 1e-2 if name.startswith("g_") else 2e-4


# ------------------------------------------------------------------ timing
def settings(key: str, quick: bool) -> dict:
    kind = kind_of(key)
    if kind == "seed":
        big = seed_params(key)[1] > 10000
        if big:
            return dict(repeats=3, warmup=1, budget_s=40.0)
        return dict(repeats=3, warmup=1, budget_s=3.0) if quick else dict(repeats=7, warmup=2, budget_s=15.0)
    if kind == "cnn":
        return dict(repeats=7, warmup=2, budget_s=3.0) if quick else dict(repeats=25, warmup=3, budget_s=15.0)
    return dict(repeats=15, warmup=3, budget_s=2.0) if quick else dict(repeats=50, warmup=5, budget_s=10.0)


def _save(outdir: str | None, col: str, key: str, arrays: dict) -> None:
    if outdir:
        np.savez(os.path.join(outdir, f"{col}__{key}.npz"), **arrays)


def _load(outdir: str, col: str, key: str) -> dict | None:
    p = os.path.join(outdir, f"{col}__{key}.npz")
    if not os.path.exists(p):
        return None
    with np.load(p) as z:
        return {k: z[k] for k in z.files}


def make_worker(lib: str):
    def worker(rep: common.Reporter, args) -> None:
        # Import (and pin threads) up front so a missing library fails once.
        {
            "tensorlib": common.import_tensorlib,
            "torch": common.import_torch,
            "jax": common.import_jax,
            "tensorflow": common.import_tf,
        }[lib]()
        save_cols = {"tensorlib", "tensorlib-fn", "torch"}
        for key in workload_keys(args.quick):
            d = make_data(key)
            s = settings(key, args.quick)
            for col in LIB_COLS[lib]:

                def run(col=col):
                    step, to_np = build_step(col, key, d)
                    first = step()
                    if col in save_cols:
                        _save(args.outdir, col, key, to_np(first))
                    del first
                    return common.median_time(step, **s)

                rep.measure(col, key, run)
            del d

    return worker


WORKERS = {lib: make_worker(lib) for lib in LIB_ORDER}


def verify(outdir: str, keys: list[str]) -> list[str]:
    """Compare tensorlib's saved outputs with PyTorch's (or NumPy's)."""
    lines = []
    for key in keys:
        for col, label in (("tensorlib", "tensorlib"), ("tensorlib-fn", "tl.function")):
            got = _load(outdir, col, key)
            if got is None:
                continue
            ref, src = _load(outdir, "torch", key), "PyTorch"
            if ref is None:
                ref, src = numpy_reference(key), "NumPy"
            if ref is None:
                lines.append(f"verify {key} [{label}]: not verified (no PyTorch reference)")
                continue
            worst, worst_name, bad, missing = 0.0, "", [], []
            for name, r in ref.items():
                if name not in got:
                    missing.append(name)
                    continue
                ok, err = common.compare_arrays(got[name], r, tolerance(key, name))
                if err >= worst:
                    worst, worst_name = err, name
                if not ok:
                    bad.append(f"{name} (rel err {err:.2e} > {tolerance(key, name):.0e})")
            if bad or missing:
                what = ", ".join(bad + [f"{m} missing" for m in missing])
                lines.append(f"WARNING: {key} [{label}] does not match {src}: {what}")
            else:
                lines.append(f"verify {key} [{label}] vs {src}: OK (max rel err {worst:.1e} in {worst_name})")
    if not lines:
        lines.append("verify: skipped (tensorlib produced no outputs)")
    return lines


def main(argv=None, header: bool = True) -> int:
    parser = common.base_arg_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    if args.worker:
        return common.run_as_worker(WORKERS, args)
    if header:
        print(common.env_header())
    timeout = args.timeout or (240 if args.quick else 1800)
    outdir = common.make_outdir()
    try:
        extra = common.quick_args(args) + ["--outdir", outdir]
        res = common.collect(__file__, common.selected_libs(args, LIB_ORDER), extra, timeout)
        keys = workload_keys(args.quick)
        checks = verify(outdir, keys)
    finally:
        common.remove_outdir(outdir)
    common.print_table(
        "nn_workloads: median ms per call (2 threads)",
        [(k, k) for k in keys],
        COLUMNS,
        res,
        fmt="{:.4g}",
        scale=1e3,
        footnotes=[*res.notes, *checks],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
