"""The small LeNet-style training step that the fusion tests trace: two conv + bias + ReLU + max pool layers,
then a dense layer and a softmax cross-entropy, differentiated with respect to all six parameters."""

import numpy as np

import tensorlib as tl

PARAMETER_SHAPES = [(5, 5, 1, 8), (8,), (5, 5, 8, 16), (16,), (3 * 3 * 16, 5), (5,)]


def lenet_loss(x, labels, w1, b1, w2, b2, w3, b3):
    h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w1, strides=1, padding="SAME") + b1), 2, 2, "VALID")
    h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(h, w2, strides=1, padding="SAME") + b2), 2, 2, "VALID")
    logits = tl.reshape(h, (x.shape[0], -1)) @ w3 + b3
    return tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits).mean()


def lenet_step(x, labels, params):
    """The gradients of :func:`lenet_loss` with respect to ``params``."""
    return tl.grad(lambda *p: lenet_loss(x, labels, *p), argnums=tuple(range(6)))(*params)


def lenet_data(rng: np.random.Generator):
    """Six 12x12 images, their labels among 5 classes and the parameters, float32."""
    x = rng.standard_normal((6, 12, 12, 1)).astype(np.float32)
    labels = rng.integers(0, 5, 6)
    return x, labels, [rng.standard_normal(s).astype(np.float32) * 0.3 for s in PARAMETER_SHAPES]
