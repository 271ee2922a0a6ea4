"""``tl.nn.torch``: PyTorch's recurrent layers ``RNN``, ``LSTM`` and ``GRU``, with torch.nn's arguments
(``hidden_size``, ``num_layers``, ``bias``, ``batch_first``, ``dropout`` between layers, ``bidirectional``), its
parameter names and layouts (``weight_ih_l0`` ``(gates * hidden_size, input_size)``, ``bias_hh_l1_reverse``, ...,
so ``load_state_dict`` takes a ``torch.nn.LSTM``'s state dict) and its return values (``output, (h_n, c_n)`` and
``output, h_n``).

They live apart from Keras' ``tl.nn.SimpleRNN``/``LSTM``/``GRU`` (``units``, ``return_sequences``, batch-major,
one bias, the gates of a GRU in Keras' order), whose names they share.  Each layer and direction runs one
``tl.scan`` over time (one ``Scan`` node when traced, for any number of steps), its input's product with
``weight_ih`` computed for every step at once before it.  Not offered: packed sequences.

>>> import tensorlib as tl
>>> lstm = tl.nn.torch.LSTM(3, 4, num_layers=2, bidirectional=True, seed=0)
>>> output, (h_n, c_n) = lstm(tl.ones((5, 2, 3)))  # (time, batch, features): torch's default layout
>>> output.shape, h_n.shape, c_n.shape
((5, 2, 8), (4, 2, 4), (4, 2, 4))
>>> sorted(lstm.variables)[:4]
['bias_hh_l0', 'bias_hh_l0_reverse', 'bias_hh_l1', 'bias_hh_l1_reverse']
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from . import initializers as _init
from .layers import _as_tensor, _float_dtype, _given_arguments, _number_in, _positive, _seed, _seed_for, _noise_stream
from .module import Module
from .module import in_training as _in_training
from .ops import control_flow as _control_flow
from .ops import linalg as _linalg
from .ops import math as _math
from .ops import nn as _nn
from .ops import reduce as _reduce
from .ops import shape as _shape
from .ops.creation import tensor as _tensor
from .ops.creation import zeros as _zeros
from .tensor import Tensor, Variable

__all__ = ["GRU", "LSTM", "RNN"]


class _TorchRecurrent(Module):
    """What RNN, LSTM and GRU share: the parameters, the layers and directions, the layouts and initial states.
    A subclass's ``_cell(*state, projected, weight_hh, bias_hh)`` gives one step's new state (a tuple, ``h``
    first) from the state and the step's input projection."""

    gates = 1
    states = 1  # LSTM carries (h, c)
    proj_size = 0  # LSTM's: h projected by weight_hr to this size

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        super().__init__()
        name = type(self).__name__
        self.input_size = _positive("input_size", input_size, name)
        self.hidden_size = _positive("hidden_size", hidden_size, name)
        self.num_layers = _positive("num_layers", num_layers, name)
        if not _number_in(dropout, 0.0, 1.0) or dropout == 1.0:
            raise ValueError(f"{name}: dropout must be a number in [0, 1), got {dropout!r}")
        self.bias, self.batch_first, self.bidirectional = bool(bias), bool(batch_first), bool(bidirectional)
        self.dropout = float(dropout)
        seed, dtype = _seed(seed, name), _float_dtype(dtype, name)
        # The dropout masks' (the seed drew only the weights): torch drops between layers only.
        self._draws = _noise_stream(self, seed, name, draws=self.dropout > 0 and self.num_layers > 1)
        # torch.nn's initialization: every weight and bias uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]
        bound = 1.0 / math.sqrt(self.hidden_size)
        width, k = self.gates * self.hidden_size, 0
        for layer in range(self.num_layers):
            fan_in = self.input_size if layer == 0 else self.output_size * self.directions
            for suffix in self._suffixes():
                shapes = {"weight_ih": (width, fan_in), "weight_hh": (width, self.output_size)}
                if self.bias:
                    shapes.update(bias_ih=(width,), bias_hh=(width,))
                if self.proj_size:
                    shapes.update(weight_hr=(self.proj_size, self.hidden_size))
                for what, shape in shapes.items():
                    draw = _init.random_uniform(shape, _seed_for(seed, k), dtype, -bound, bound)
                    setattr(self, f"{what}_l{layer}{suffix}", Variable(draw, name=f"{what}_l{layer}{suffix}"))
                    k += 1

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    @property
    def output_size(self) -> int:
        """The size of ``h`` (and of each direction's output): ``proj_size`` if set, else ``hidden_size``."""
        return self.proj_size or self.hidden_size

    def _suffixes(self) -> tuple:
        return ("", "_reverse") if self.bidirectional else ("",)

    def forward(self, input, hx=None):
        """``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``) for ``input`` ``(time, batch, input_size)`` (``(batch,
        time, input_size)`` with ``batch_first``, ``(time, input_size)`` unbatched) and initial states ``hx``
        ``(num_layers * directions, batch, hidden_size)`` (zeros when None; LSTM's a pair ``(h_0, c_0)``)."""
        name = type(self).__name__
        x = _as_tensor(input, self)
        if x.dtype.kind != "f" or len(x.shape) not in (2, 3) or x.shape[-1] not in (None, self.input_size):
            raise ValueError(
                f"{name}: input must be floating, (time, batch, {self.input_size}) or unbatched (time, "
                f"{self.input_size}){' ((batch, time, ...) with batch_first)' * self.batch_first}, got shape "
                f"{tuple(x.shape)} ({x.dtype})"
            )
        unbatched = len(x.shape) == 2
        if unbatched:
            x = _shape.expand_dims(x, 1)
        elif self.batch_first:
            x = _shape.transpose(x, (1, 0, 2))
        dtype = _dt.promote_types(x.dtype, self.weight_ih_l0.dtype)
        x = x if x.dtype == dtype else _math.cast(x, dtype)
        states = self._initial_states(hx, x, unbatched, dtype)
        finals = [[] for _ in range(self.states)]
        for layer in range(self.num_layers):
            if layer and self.dropout and _in_training(self):
                x = self._draws.dropout(x, self.dropout)  # torch's dropout on each layer's output but the last
            outputs = []
            for d, suffix in enumerate(self._suffixes()):
                index = layer * self.directions + d
                init = tuple(s[index] for s in states)
                carry, ys = self._scan(x, init, layer, suffix, reverse=d == 1)
                outputs.append(ys)
                for kept, s in zip(finals, carry):
                    kept.append(s)
            x = outputs[0] if len(outputs) == 1 else _shape.concat(outputs, axis=-1)
        output = x[:, 0] if unbatched else _shape.transpose(x, (1, 0, 2)) if self.batch_first else x
        finals = [_shape.stack(kept)[:, 0] if unbatched else _shape.stack(kept) for kept in finals]
        return (output, tuple(finals)) if self.states == 2 else (output, finals[0])

    def _scan(self, x, init: tuple, layer: int, suffix: str, reverse: bool) -> tuple:
        """One layer and direction over time: its final states and its outputs ``(time, batch, hidden_size)``."""
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
        weight = {w: getattr(self, f"{w}_l{layer}{suffix}", None) for w in names}
        cast = {w: v if v is None or v.dtype == x.dtype else _math.cast(v, x.dtype) for w, v in weight.items()}
        projected = _linalg.matmul(x, _shape.transpose(cast["weight_ih"]))  # every step at once
        if cast["bias_ih"] is not None:
            projected = projected + cast["bias_ih"]

        def step(carry, p):
            carry = self._cell(*carry, p, cast)
            return carry, carry[0]

        carry, ys = _control_flow.scan(step, init, projected, reverse=reverse)
        return carry, ys

    def _initial_states(self, hx, x, unbatched: bool, dtype) -> tuple:
        """``hx`` as a tuple of ``(layers * directions, batch, size)`` states in ``dtype`` (zeros if None): ``h``'s size
        is ``output_size``, LSTM's ``c``'s ``hidden_size``."""
        name = type(self).__name__
        sizes = (self.output_size, self.hidden_size)[: self.states]
        wants = [(self.num_layers * self.directions, x.shape[1], size) for size in sizes]
        if hx is None:
            if x.shape[1] is not None:
                return tuple(_zeros(want, dtype=dtype, backend=x.backend.name) for want in wants)
            # a batch of unknown size (traced): zeros (1, batch, 1) + zeros (layers, 1, size)
            first = _math.zeros_like(_reduce.sum(x[:, :, :1], axis=0, keepdims=True), dtype=dtype)
            return tuple(first + _zeros((want[0], 1, want[2]), dtype=dtype, backend=x.backend.name) for want in wants)
        given = tuple(hx) if self.states == 2 and isinstance(hx, (tuple, list)) else (hx,)
        given = tuple(h if isinstance(h, Tensor) else _tensor(h) for h in given)
        shapes = [want[:1] + want[2:] if unbatched else want for want in wants]
        if len(given) != self.states or any(
            len(h.shape) != len(shape)
            or any(a is not None and b is not None and a != b for a, b in zip(h.shape, shape))
            or h.dtype.kind != "f"
            for h, shape in zip(given, shapes)
        ):
            what = "a pair (h_0, c_0) of floating states" if self.states == 2 else "a floating state"
            shown = f"shape {shapes[0]}" if len(set(shapes)) == 1 else f"shapes {shapes[0]} and {shapes[1]}"
            raise ValueError(
                f"{name}: hx must be {what} of {shown}, got "
                f"{[(tuple(h.shape), str(h.dtype)) for h in given]} for input shape {tuple(x.shape)}"
            )
        given = tuple(_shape.expand_dims(h, 1) if unbatched else h for h in given)
        return tuple(h if h.dtype == dtype else _math.cast(h, dtype) for h in given)

    def extra_repr(self) -> str:
        """torch's: the sizes, then the arguments given other than their defaults (the seed left out)."""
        given = _given_arguments(self, ("input_size", "hidden_size", "seed"))
        return ", ".join([f"{self.input_size}, {self.hidden_size}", *given])


def _gate(z, i: int, size: int):
    return z[..., i * size : (i + 1) * size]


def _recurrent_product(h, weights):
    """``h W_hh^T + b_hh`` (no bias with ``bias=False``)."""
    z = _linalg.matmul(h, _shape.transpose(weights["weight_hh"]))
    return z if weights["bias_hh"] is None else z + weights["bias_hh"]


class RNN(_TorchRecurrent):
    """PyTorch's ``nn.RNN``: ``h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (``"tanh"`` or
    ``"relu"``), ``num_layers`` stacked, ``bidirectional``; returns ``(output, h_n)``.  See :mod:`tensorlib.torch_layers`.

    >>> import tensorlib as tl
    >>> rnn = tl.nn.torch.RNN(3, 4, nonlinearity="relu", batch_first=True, seed=0)
    >>> output, h_n = rnn(tl.ones((2, 5, 3)))
    >>> output.shape, h_n.shape
    ((2, 5, 4), (1, 2, 4))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, seed, dtype)

    def _cell(self, h, projected, weights) -> tuple:
        z = projected + _recurrent_product(h, weights)
        return ((_math.tanh(z) if self.nonlinearity == "tanh" else _nn.relu(z)),)


class LSTM(_TorchRecurrent):
    """PyTorch's ``nn.LSTM`` (gates ``i, f, g, o`` in ``weight_ih``'s rows, two biases), ``num_layers`` stacked,
    ``bidirectional``; returns ``(output, (h_n, c_n))`` and takes ``hx=(h_0, c_0)``.  ``proj_size`` (below
    ``hidden_size``) projects ``h`` by ``weight_hr_l{k}`` ``(proj_size, hidden_size)``: ``h``, the output and
    ``h_0`` then have ``proj_size`` features, as torch's.  See :mod:`tensorlib.torch_layers`.

    >>> import tensorlib as tl
    >>> lstm = tl.nn.torch.LSTM(3, 4, seed=0)
    >>> output, (h_n, c_n) = lstm(tl.ones((5, 3)))  # unbatched (time, features)
    >>> output.shape, h_n.shape
    ((5, 4), (1, 4))
    """

    gates = 4
    states = 2

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        seed: int | None = None,
        dtype=_dt.float32,
    ):
        whole = not isinstance(proj_size, bool) and _number_in(proj_size, 0, math.inf) and proj_size == int(proj_size)
        if not whole or (_number_in(hidden_size, 1, math.inf) and proj_size >= hidden_size):
            raise ValueError(f"LSTM: proj_size must be an integer in [0, hidden_size={hidden_size}), got {proj_size!r}")
        self.proj_size = int(proj_size)
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, seed, dtype)

    def _cell(self, h, c, projected, weights) -> tuple:
        z = projected + _recurrent_product(h, weights)
        i, f, g, o = (_gate(z, k, self.hidden_size) for k in range(4))
        c = _math.sigmoid(f) * c + _math.sigmoid(i) * _math.tanh(g)
        h = _math.sigmoid(o) * _math.tanh(c)
        if weights["weight_hr"] is not None:  # proj_size: h_t = (o * tanh(c_t)) W_hr^T
            h = _linalg.matmul(h, _shape.transpose(weights["weight_hr"]))
        return h, c


class GRU(_TorchRecurrent):
    """PyTorch's ``nn.GRU`` (gates ``r, z, n`` in ``weight_ih``'s rows; ``n = tanh(x W_in^T + b_in + r * (h W_hn^T +
    b_hn))``, ``h = (1 - z) * n + z * h``), ``num_layers`` stacked, ``bidirectional``; returns ``(output, h_n)``.
    See :mod:`tensorlib.torch_layers`.

    >>> import tensorlib as tl
    >>> gru = tl.nn.torch.GRU(3, 4, num_layers=2, seed=0)
    >>> output, h_n = gru(tl.ones((5, 2, 3)))
    >>> output.shape, h_n.shape
    ((5, 2, 4), (2, 2, 4))
    """

    gates = 3

    def _cell(self, h, projected, weights) -> tuple:
        recurrent = _recurrent_product(h, weights)
        size = self.hidden_size
        r = _math.sigmoid(_gate(projected, 0, size) + _gate(recurrent, 0, size))
        z = _math.sigmoid(_gate(projected, 1, size) + _gate(recurrent, 1, size))
        n = _math.tanh(_gate(projected, 2, size) + r * _gate(recurrent, 2, size))
        return ((1.0 - z) * n + z * h,)
