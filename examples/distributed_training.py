"""Data-parallel training on a dask cluster: the parameters stay here, only gradients come back.

The data lives on the workers (persisted dask arrays, chunked along the
batch axis).  Each step sends the current parameters to every worker once,
each worker computes the loss and gradient of its blocks with a graph it
traced once, dask sums the block results in a tree, and this process applies
plain SGD.  The same script runs on a multi-node cluster: pass the scheduler's
address (``--scheduler tcp://host:8786``) instead of starting a LocalCluster.

    python examples/distributed_training.py [--steps 30] [--scheduler ADDRESS]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tensorlib as tl  # noqa: E402

CLASSES = 4


def make_data(n, seed=0):
    """8x8 images: one bright quadrant per class, plus noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, n)
    x = rng.normal(0.0, 0.5, (n, 8, 8, 1)).astype(np.float32)
    for c in range(CLASSES):
        r, q = divmod(c, 2)
        x[labels == c, 4 * r : 4 * r + 4, 4 * q : 4 * q + 4, :] += 1.0
    return x, labels


def init_params(seed=1):
    rng = np.random.default_rng(seed)
    return {
        "conv": {"w": (rng.standard_normal((3, 3, 1, 8)) * 0.3).astype(np.float32), "b": np.zeros(8, np.float32)},
        "dense": {
            "w": (rng.standard_normal((4 * 4 * 8, CLASSES)) * 0.1).astype(np.float32),
            "b": np.zeros(CLASSES, np.float32),
        },
    }


def logits_of(params, x):
    h = tl.nn.relu(tl.nn.conv2d(x, params["conv"]["w"], strides=1, padding="SAME") + params["conv"]["b"])
    h = tl.nn.max_pool(h, ksize=2, strides=2, padding="VALID")
    return tl.reshape(h, (x.shape[0], 4 * 4 * 8)) @ params["dense"]["w"] + params["dense"]["b"]


def loss_fn(params, x, labels):
    """Mean cross entropy of a small CNN over its batch (what runs on the workers, block by block)."""
    logits = logits_of(params, x)
    return tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=512, help="global batch per step")
    ap.add_argument("--block", type=int, default=128, help="rows per dask block")
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--scheduler", help="address of an existing dask scheduler (default: a LocalCluster)")
    args = ap.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster

    cluster = (
        None
        if args.scheduler
        else LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=40
        )
    )
    client = Client(args.scheduler or cluster)
    try:
        x, labels = make_data(args.batch * 8)
        xd = client.persist(da.from_array(x, chunks=(args.block, 8, 8, 1)))
        yd = client.persist(da.from_array(labels, chunks=args.block))
        params = init_params()
        n_params = sum(p.size for layer in params.values() for p in layer.values())
        batches = len(x) // args.batch
        for step in range(args.steps):
            i = (step % batches) * args.batch
            loss, grads = tl.distributed.value_and_grad(
                loss_fn, params, xd[i : i + args.batch], yd[i : i + args.batch], client=client
            )
            params = {
                layer: {k: v - args.lr * grads[layer][k].numpy() for k, v in p.items()} for layer, p in params.items()
            }
            if step == 0 or (step + 1) % 10 == 0 or step + 1 == args.steps:
                print(f"step {step + 1:3d}  loss {float(loss):.4f}")
        workers = len(client.scheduler_info()["workers"])
        blocks = -(-args.batch // args.block)
        print(
            f"{n_params} float32 parameters = {4 * n_params / 1e3:.1f} kB; per step: the parameters to each of "
            f"{workers} workers, {blocks} block gradients summed in dask's tree, one gradient back"
        )
        full_loss = float(loss_fn(params, tl.tensor(x), tl.tensor(labels)))
        accuracy = float(np.mean(np.argmax(logits_of(params, tl.tensor(x)).numpy(), axis=1) == labels))
        print(f"final loss on all {len(x)} examples {full_loss:.4f}, accuracy {accuracy:.3f}")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
