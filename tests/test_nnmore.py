"""The nn functions a PyTorch or Keras user still missed, attacked as such a user would call them.

References: NumPy formulas in float64 written from PyTorch's documentation (loops over classes and samples
where PyTorch defines a sum), float64 central differences (``tl.testing.check_grads``), and, where installed,
PyTorch's ``torch.nn.functional`` in float64 (values and gradients).  Every torch check has a NumPy twin that
runs without it."""

import numpy as np
import pytest

import tensorlib as tl


def test_pair_errors_name_the_arguments_the_caller_passed():
    # Before: "margin_ranking_loss: input shape (2,) ... and target shape (3,) ..." for input1 and input2, and
    # cosine_similarity's x1 and x2 were "input" and "target" too.
    with pytest.raises(
        ValueError, match=r"^margin_ranking_loss: input1 shape \(2,\) \(float64\) and input2 shape \(3,\)"
    ):
        tl.nn.margin_ranking_loss(np.ones(2), np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match=r"^cosine_similarity: x1 shape \(2, 2\) \(float64\) and x2 shape \(3, 2\)"):
        tl.nn.cosine_similarity(np.ones((2, 2)), np.ones((3, 2)))
