"""Train a small CNN on scikit-learn's 8x8 digits, eagerly and as a traced tl.function; plot loss and accuracy.

    pip install -e ".[examples]"
    python examples/train_digits.py                # both modes, 12 epochs each, writes digits_training.png
    python examples/train_digits.py --mode traced --epochs 3 --plot /tmp/curve.png

The digits ship inside scikit-learn (nothing is downloaded).  The same model,
seed and batches are trained twice: once with an eager step, once with the
step traced by ``tl.function`` (the optimizer's slots are Variables, so the
traced step updates them); both reach the same accuracy.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tensorlib as tl


def load_digits(test_fraction: float = 0.2, seed: int = 0):
    """(x_train, y_train, x_test, y_test): NHWC float32 images in [0, 1], int64 labels."""
    from sklearn.datasets import load_digits as sklearn_digits

    data = sklearn_digits()
    x = (data.images / 16.0).astype(np.float32)[..., None]
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def build_model(seed: int = 0) -> tl.nn.Sequential:
    return tl.nn.Sequential(
        tl.nn.Conv2D(1, 16, kernel_size=3, activation=tl.nn.relu, seed=seed),  # 8x8x16
        tl.nn.MaxPool2D(2),  # 4x4x16
        tl.nn.Conv2D(16, 32, kernel_size=3, activation=tl.nn.relu, seed=seed + 1),  # 4x4x32
        tl.nn.MaxPool2D(2),  # 2x2x32
        tl.nn.Flatten(),
        tl.nn.Dropout(0.2),
        tl.nn.Dense(2 * 2 * 32, 10, seed=seed + 2),
    )


def train(mode: str, epochs: int, batch_size: int = 64, seed: int = 0, progress: bool = True) -> dict:
    """Train one model in ``mode`` ("eager" or "traced"); returns per-epoch history and the time taken."""
    from tqdm import tqdm

    x_train, y_train, x_test, y_test = load_digits(seed=seed)
    tl.random.seed(seed)
    model = build_model(seed)
    steps_per_epoch = -(-len(y_train) // batch_size)
    optimizer = tl.optimizers.Adam(tl.optimizers.CosineDecay(0.01, decay_steps=epochs * steps_per_epoch))

    def train_step(images, labels):
        with tl.GradientTape() as tape:
            logits = model(images)
            loss = tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
        return loss

    def predict(images):
        return tl.argmax(model(images), axis=-1)

    if mode == "traced":
        # One graph for every batch size (the last batch is smaller).
        train_step = tl.function(
            train_step, input_signature=[tl.TensorSpec((None, 8, 8, 1), tl.float32), tl.TensorSpec((None,), tl.int64)]
        )
        predict = tl.function(predict)
    history = {"loss": [], "train_accuracy": [], "test_accuracy": []}
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    bar = tqdm(range(epochs), desc=f"{mode:>6}", disable=not progress, unit="epoch")
    for _ in bar:
        model.train()
        order = rng.permutation(len(y_train))
        losses = []
        for i in range(0, len(order), batch_size):
            batch = order[i : i + batch_size]
            losses.append(float(train_step(x_train[batch], y_train[batch])))
        model.eval()
        history["loss"].append(float(np.mean(losses)))
        history["train_accuracy"].append(float((predict(x_train).numpy() == y_train).mean()))
        history["test_accuracy"].append(float((predict(x_test).numpy() == y_test).mean()))
        bar.set_postfix(loss=f"{history['loss'][-1]:.3f}", test_acc=f"{history['test_accuracy'][-1]:.3f}")
    history["seconds"] = time.perf_counter() - start
    history["parameters"] = model.num_parameters()
    return history


def plot(histories: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(8, 3), dpi=80)
    for mode, h in histories.items():
        epochs = np.arange(1, len(h["loss"]) + 1)
        ax_loss.plot(epochs, h["loss"], marker=".", label=f"{mode}")
        ax_acc.plot(epochs, h["test_accuracy"], marker=".", label=f"{mode} test")
        ax_acc.plot(epochs, h["train_accuracy"], linestyle="--", label=f"{mode} train")
    ax_loss.set(xlabel="epoch", ylabel="training loss", title="loss")
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="accuracy", ylim=(0.5, 1.0))
    ax_loss.legend()
    ax_acc.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["eager", "traced", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--plot", default="digits_training.png", help="where to save the PNG ('' for none)")
    parser.add_argument("--no-progress", action="store_true", help="hide the tqdm bar")
    args = parser.parse_args(argv)
    modes = ["eager", "traced"] if args.mode == "both" else [args.mode]
    histories = {}
    for mode in modes:
        h = histories[mode] = train(mode, args.epochs, progress=not args.no_progress)
        print(
            f"{mode}: test accuracy {h['test_accuracy'][-1]:.3f} after {args.epochs} epochs "
            f"in {h['seconds']:.1f} s ({h['parameters']} parameters)"
        )
    if args.plot:
        plot(histories, args.plot)
        print(f"wrote {args.plot}")
    return histories


if __name__ == "__main__":
    main()
