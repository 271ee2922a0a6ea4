"""tensorlib in five minutes: eager gradients, where conv2d runs, stopping and replacing
gradients, and the same code traced into an inspectable graph.

Run: python examples/demo.py
"""

import os
import tempfile

import numpy as np

import tensorlib as tl

rng = np.random.default_rng(0)


def section(title):
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


section("1. Eager mode: ops run at once, a tape records them")
x = tl.tensor(rng.normal(size=(8, 32, 32, 1)))  # NumPy arrays keep their dtype (float64)
w = tl.Variable(rng.normal(size=(3, 3, 1, 6)) * 0.1, name="w")
with tl.GradientTape() as tape:  # trainable Variables are watched automatically
    c = tl.nn.conv2d(x, w, strides=1, padding="VALID")
    p = tl.nn.avg_pool(c, ksize=2, strides=2, padding="VALID")
    loss = tl.mean(tl.nn.relu(p) ** 2)
grad_w = tape.gradient(loss, w)
print("loss", float(loss), "| dloss/dw shape", grad_w.shape, grad_w.dtype)
print(
    "finite-difference check of the whole pipeline:",
    tl.testing.check_grads(
        lambda w: tl.mean(tl.nn.relu(tl.nn.avg_pool(tl.nn.conv2d(x[:2], w, 1, "VALID"), 2, 2, "VALID")) ** 2),
        (w.numpy(),),
    )
    or "ok",
)

section("2. Where does tf.nn.conv2d really run? (the seeds' first question)")
tl.ops.explain(tl.nn.conv2d, x, w, strides=1, padding="VALID")

section("3. Why is its backprop two ops? Each input has its own gradient function")
print({name: getattr(fn, "__qualname__", fn) for name, fn in tl.grad.get("Conv2D").items()})
with tl.GradientTape() as tape:
    tape.watch(x)
    y = tl.sum(tl.nn.conv2d(x, tl.stop_gradient(w), 1, "SAME"))
with tl.profile() as prof:
    tape.gradient(y, x)  # the frozen filter's gradient is never computed
print("ops run for d/dx with a frozen filter:", [e.op_type for e in prof.events])

section("4. Stop or replace a gradient (straight-through estimator)")


@tl.custom_gradient
def round_ste(v):
    return tl.round(v), lambda dy: dy  # forward: round; backward: identity


v = tl.tensor([0.2, 1.7, -0.6])
print("d/dv sum(round_ste(v)*v) =", tl.grad(lambda v: tl.sum(round_ste(v) * v))(v).numpy())
with tl.grad.override({"Relu": lambda node, g: g}):  # TensorFlow's gradient_override_map
    print("relu grad, overridden to identity:", tl.grad(lambda v: tl.sum(tl.nn.relu(v)))(v).numpy())
try:
    tl.grad(lambda v: tl.sum(tl.round(v)))(v)
except LookupError as e:
    print("no gradient through Round:", str(e).splitlines()[0])

section("5. Graph mode: the same code traced once, optimized, inspectable")


@tl.function
def step(images, filters):
    with tl.GradientTape() as t:
        t.watch(filters)
        out = tl.nn.relu(tl.nn.avg_pool(tl.nn.conv2d(images, filters, 1, "VALID"), 2, 2, "VALID"))
        loss = tl.mean(out * out)
    return loss, t.gradient(loss, filters)


loss_g, grad_g = step(x, w.numpy())
print("traced loss equals eager:", np.allclose(float(loss_g), float(loss)))
graph = step.get_graph(x, w.numpy())
print(graph)  # the trace, one line per node, like a jaxpr
print("after the passes (CSE, dead nodes, conv+avg_pool fused into one strided conv):")
print(graph.optimize())

section("6. Big arrays are captured by reference, never embedded (the seeds' 10-second graph)")
big = rng.normal(size=(6000, 32, 32, 1))


@tl.function
def forward(filters):
    return tl.nn.relu(tl.nn.avg_pool(tl.nn.conv2d(big, filters, 1, "VALID"), 2, 2, "VALID"))


graph = forward.get_graph(w.numpy())
print("captures:", [(c.name, c.shape, f"{c.nbytes / 2**20:.0f} MiB") for c in graph.captures])
with tempfile.TemporaryDirectory() as tmp:
    graph.save(os.path.join(tmp, "forward"))
    size = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp))
print(f"saved graph without the captured array: {size} bytes")
