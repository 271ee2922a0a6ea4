"""An MLP on scikit-learn's digits: 12 lines of tensorlib, the same in PyTorch takes 13 (no data loader or module class)."""

import numpy as np, tensorlib as tl  # noqa: E401
from sklearn.datasets import load_digits

x, y = load_digits(return_X_y=True)
x = (x / 16).astype(np.float32)
model = tl.nn.Sequential(tl.nn.Dense(64, 64, activation=tl.nn.relu, seed=0), tl.nn.Dense(64, 10, seed=1))
opt = tl.optimizers.Adam(1e-2)
for epoch in range(10):
    for i in range(0, len(y), 64):
        with tl.GradientTape() as tape:
            loss = tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(y[i : i + 64], model(x[i : i + 64])))
        opt.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
print(f"training accuracy: {(tl.argmax(model(x), axis=-1).numpy() == y).mean():.3f}")
