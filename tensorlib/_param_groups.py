"""Parameter groups of ``tl.optimizers``: ``torch.optim``'s ``param_groups``, with its argument names.

An optimizer made from parameters (``Adam(model, lr=1e-3)``, or a list of group dicts, each with its own
hyperparameters) updates each Variable with its group's numbers.  ``opt.param_groups[i]`` is a live, writable view
of group ``i``: setting ``"lr"`` (or ``"weight_decay"``, ``"betas"``, ...) takes effect at the next step, a traced
one too, as a scheduler's write into a ``torch.optim`` param group does.

>>> import tensorlib as tl
>>> enc, head = tl.Variable([1.0]), tl.Variable([1.0])
>>> opt = tl.optimizers.SGD([{"params": [enc], "lr": 0.01}, {"params": [head]}], lr=0.1)
>>> opt.apply([tl.tensor([1.0]), tl.tensor([1.0])], [enc, head])
>>> [round(float(v[0]), 6) for v in (enc, head)]
[0.99, 0.9]
>>> opt.param_groups[1]["lr"] = 0.5
>>> opt.apply([tl.tensor([1.0]), tl.tensor([1.0])], [enc, head])
>>> [round(float(v[0]), 6) for v in (enc, head)]
[0.98, 0.4]
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator, MutableMapping

import numpy as np

from . import tree
from .module import Module
from .tensor import Tensor, Variable

__all__ = ["ParamGroup"]

# torch.optim's argument names for tensorlib's (RMSprop's "alpha" is its "rho": see _torch_name).
_TORCH_NAMES = {"lr": "learning_rate", "eps": "epsilon"}


def is_params(value) -> bool:
    """Whether an optimizer's first argument is its parameters (torch's form) rather than a learning rate."""
    if isinstance(value, Module):
        return True
    if isinstance(value, (Tensor, str, bytes, np.ndarray, np.generic)) or callable(value):
        return False  # a rate (a 0-d array included: SGD(np.array(0.1)) is a rate), or a schedule
    return isinstance(value, (dict, Iterable))


def _torch_name(cls, name: str) -> str:
    if name == "alpha" and "rho" in cls._hyperparameters and "alpha" not in cls._hyperparameters:
        return "rho"
    return _TORCH_NAMES.get(name, name)


def canonical(cls, settings: dict, who: str) -> dict:
    """``settings`` with torch.optim's names as tensorlib's (``lr``, ``eps``, ``betas`` as ``beta_1`` and
    ``beta_2``, RMSprop's ``alpha``); a name given twice (``lr`` and ``learning_rate``) is a TypeError."""
    out = {}
    for name, value in settings.items():
        if name == "betas":
            try:
                beta_1, beta_2 = value
            except (TypeError, ValueError):
                raise TypeError(f"{who}: betas must be a pair (beta_1, beta_2), got {value!r}") from None
            pairs = [("beta_1", beta_1), ("beta_2", beta_2)]
        else:
            pairs = [(_torch_name(cls, name), value)]
        for key, v in pairs:
            if key in out:
                raise TypeError(f"{who}: {key!r} is given twice (as {name!r} and under its other name)")
            out[key] = v
    return out


def settable(cls) -> tuple:
    """The names a group sets: the learning rate, the rule's numbers and its flags."""
    return ("learning_rate", *cls._hyperparameters, *cls._flag_names, "maximize")


def taking_params(init):
    """An optimizer's ``__init__`` that also takes torch's form: parameters (or group dicts) first, and torch's
    argument names (``lr``, ``betas``, ``eps``, ``alpha``)."""

    def __init__(self, *args, **kwargs):
        params = None
        if args and is_params(args[0]):
            params, args = args[0], args[1:]
        elif "params" in kwargs:
            params = kwargs.pop("params")
        init(self, *args, **canonical(type(self), kwargs, type(self).__name__))
        self._defaults = self._settings()  # torch.optim's defaults: what a group added later leaves out
        if params is not None:
            self._add_groups(params)

    __init__.__signature__ = inspect.signature(init)
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(__init__, attribute, getattr(init, attribute))
    __init__._takes_params = True
    return __init__


def group_dicts(params, who: str) -> list:
    """``params`` (torch's first argument) as a list of group dicts, each with its ``"params"`` as a list of
    distinct Variables."""
    if isinstance(params, dict) and "params" in params:
        groups = [params]
    elif isinstance(params, (list, tuple)) and params and all(isinstance(g, dict) for g in params):
        groups = list(params)
    else:
        groups = [{"params": params}]
    return [{**group, "params": variables_of(group.get("params"), who)} for group in groups]


def variables_of(params, who: str) -> list:
    """The distinct Variables of a group's ``"params"``: a Variable, a Module (its trainable variables), or a
    nested structure or iterable of them (a generator included)."""
    if params is None:
        raise TypeError(f"{who}: a parameter group needs its 'params'")
    if isinstance(params, Module):
        params = params.trainable_variables
    elif not isinstance(params, (Tensor, dict, list, tuple)) and isinstance(params, Iterable):
        params = list(params)
    found, seen = [], set()
    for path, v in tree.flatten_with_path(params)[0]:
        if not isinstance(v, Variable):
            raise TypeError(
                f"{who}: the parameters hold {type(v).__name__} {v!r} at {list(path)}; parameters are tl.Variables"
            )
        if v._id not in seen:
            seen.add(v._id)
            found.append(v)
    if not found:
        raise ValueError(f"{who}: got an empty parameter list")
    return found


class ParamGroup(MutableMapping):
    """A live view of one parameter group of an optimizer (``opt.param_groups[i]``): ``"params"`` (its
    Variables), ``"lr"`` and the rule's hyperparameters and flags by their tensorlib names; torch's names
    (``"lr"``, ``"eps"``, ``"betas"``, RMSprop's ``"alpha"``) read and write them too.  Writing one checks it
    as the constructor does and takes effect at the next step, without tracing a step again unless it picks
    other ops (a weight decay set to or from 0, a flag).

    >>> import tensorlib as tl
    >>> opt = tl.optimizers.Adam([tl.Variable([1.0])], lr=0.1, betas=(0.8, 0.99))
    >>> group = opt.param_groups[0]
    >>> group["lr"], group["betas"], group["beta_2"]
    (0.1, (0.8, 0.99), 0.99)
    >>> group["lr"] = 0.05
    >>> opt.learning_rate
    0.05
    """

    def __init__(self, opt, index: int):
        self._opt, self._index = opt, index

    def _name(self, key) -> str:
        name = _torch_name(type(self._opt), key) if isinstance(key, str) else key
        if name not in ("params", "betas", *settable(type(self._opt))) or (
            name == "betas" and "beta_1" not in type(self._opt)._hyperparameters
        ):
            raise KeyError(f"{type(self._opt).__name__}.param_groups[{self._index}] has no {key!r}")
        return name

    def __getitem__(self, key):
        name, opt = self._name(key), self._opt
        if name == "params":
            return opt._group_params(self._index)
        with opt._using(self._index):
            return (opt.beta_1, opt.beta_2) if name == "betas" else getattr(opt, name)

    def __setitem__(self, key, value) -> None:
        name, opt = self._name(key), self._opt
        if name == "params":
            raise TypeError(
                f"{type(opt).__name__}.param_groups[{self._index}]['params'] cannot be replaced; add the variables "
                "with add_param_group"
            )
        settings = canonical(type(opt), {name: value}, f"{type(opt).__name__}.param_groups[{self._index}]")
        with opt._using(self._index):
            for setting, v in settings.items():
                setattr(opt, setting, v)

    def __delitem__(self, key) -> None:
        raise TypeError(f"{type(self._opt).__name__}.param_groups[{self._index}]: a setting cannot be deleted")

    def __iter__(self) -> Iterator:
        names = settable(type(self._opt))
        return iter(("params", "lr", *names[1:]))

    def __len__(self) -> int:
        return len(settable(type(self._opt))) + 1

    def __repr__(self) -> str:
        return repr({key: self[key] for key in self})
