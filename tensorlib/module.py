"""``tl.Module``: a container of Variables and sub-Modules with a train/eval flag.

A Module's attributes that are Variables or Modules (or lists, tuples,
dicts or registered ``tl.tree`` nodes holding them, other entries skipped) are its state, collected in
attribute order; a Variable or Module reachable twice is listed, counted and updated once (checkpoints
name it at every path).  A child may hold
its parent: walks stop at the back-reference, and ``repr`` shows it as ``<back-reference to ...>``.
``copy.deepcopy`` (and pickle) copies the Variables (same names, new values) and keeps the structure, a
``tl.function`` of its methods included (without its graphs, so the copy runs on the copy's Variables);
``copy.copy`` is shallow, as in PyTorch: the copy shares the Variables and sub-Modules.  ``variables`` and
``trainable_variables`` return them as a nested dict keyed by attribute name,
the structure that ``tape.gradient``, optimizers and checkpoints take.  An attribute holding a Variable
takes another Variable or None, as a PyTorch Parameter does: ``self.w = self.w * 2`` is a TypeError (the
result would silently leave all of those); ``self.w.assign(self.w * 2)`` updates the value.

>>> import tensorlib as tl
>>> class Affine(tl.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = tl.Variable([[2.0]])
...         self.b = tl.Variable([1.0])
...     def forward(self, x):
...         return x @ self.w + self.b
>>> m = Affine()
>>> m(tl.tensor([[3.0]])).numpy().tolist()
[[7.0]]
>>> sorted(m.trainable_variables)
['b', 'w']
"""

from __future__ import annotations

import copy
import functools
import inspect
import threading

import numpy as np

from . import tree
from .dispatch import current_state, state_read
from .tensor import Tensor, Variable

__all__ = ["Module", "Sequential", "functional_call"]


class Module:
    """Base class: subclasses create Variables and sub-Modules in ``__init__`` and define ``forward``.

    The arguments a Module is constructed with are recorded, so every Module has Keras' ``get_config`` and
    ``from_config`` without writing them.
    """

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.__dict__["_constructed_with"] = _Arguments(args, kwargs)
        return self

    def __init__(self):
        self.training = True

    @property
    def training(self) -> bool:
        """Training mode (True) or inference (False); ``train()`` and ``eval()`` set it on a whole tree.

        A ``tl.function`` that reads it while tracing keys its graphs by it: after ``eval()`` the
        same function runs (or traces) its inference graph, as ``torch.compile`` guards on it.
        """
        if current_state().modes:
            state_read(self, "training")
        return self.__dict__.get("_training", True)  # True also where a subclass skips Module.__init__

    @training.setter
    def training(self, mode: bool) -> None:
        self.__dict__["_training"] = bool(mode)

    @property
    def trainable(self) -> bool:
        """Whether this Module's Variables are in ``trainable_variables`` (Keras' ``Layer.trainable``).

        ``m.trainable = False`` freezes ``m`` and every Module below it: their Variables leave
        ``trainable_variables`` (so gradients and optimizers given the model skip them) and stay in
        ``variables``, ``state_dict`` and checkpoints.  Each Variable keeps its own ``trainable`` flag, so
        unfreezing gives back exactly the Variables trainable before (never BatchNorm's running statistics).
        A frozen Module has no trainable variables, whatever the flags below it.  A ``tl.function`` that
        reads it while tracing traces again after it changes.

        >>> import tensorlib as tl
        >>> model = tl.nn.Sequential(tl.nn.Dense(2, 3), tl.nn.Dense(3, 1))
        >>> model[0].trainable = False
        >>> list(model.trainable_variables), list(model.variables)
        (['1'], ['0', '1'])
        """
        if current_state().modes:
            state_read(_FREEZES, "count")
        return self.__dict__.get("_trainable", True)

    @trainable.setter
    def trainable(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{type(self).__name__}.trainable: must be a bool, got {value!r}")
        for m in self.modules():
            m.__dict__["_trainable"] = bool(value)
        _FREEZES.count += 1

    def __setattr__(self, name: str, value) -> None:
        # As PyTorch: a Variable attribute takes a Variable or None.  ``self.w = self.w * 2`` made ``w`` a
        # plain tensor, silently gone from ``variables``, gradients, optimizers and checkpoints.
        old = self.__dict__.get(name)
        if isinstance(old, Variable) and value is not None and not isinstance(value, Variable):
            what = f"a {type(value).__name__}" + (
                f" (shape {value.shape}, {value.dtype})" if hasattr(value, "dtype") else ""
            )
            raise TypeError(
                f"{type(self).__name__}.{name}: cannot replace the Variable {old.name!r} (shape {old.shape}, "
                f"{old.dtype}) by {what}: it would leave variables, gradients and checkpoints; update its "
                f"value with self.{name}.assign(...), or assign a tl.Variable (or None) to replace it"
            )
        object.__setattr__(self, name, value)

    def forward(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__}: a Module subclass must define forward(...)")

    def __call__(self, *args, **kwargs):
        if "training" in kwargs:
            training = kwargs["training"]
            if not _takes_training(type(self).forward):
                del kwargs["training"]
        else:
            # By position too, as tf.keras binds it: block(x, False) left the layers inside in their own mode.
            at = _training_position(type(self).forward) if len(args) > 1 else None  # (one argument: the input)
            if at is None or len(args) <= at:
                return self.forward(*args, **kwargs)
            training = args[at]
        return _forward_in_mode(self, training, args, kwargs)

    def _children(self) -> dict:
        """Sub-Modules by name, in attribute order (a list of Modules ``blocks`` gives ``blocks.0`` ...)."""
        out = {}
        for name, value in vars(self).items():
            if isinstance(value, Module):
                out[name] = value
            elif (isinstance(value, _CONTAINERS) or value.__class__ in tree.nodes) and _holds_state(value):
                out[name] = _ModuleList(value)
        return out

    def _own_variables(self) -> dict:
        return {name: value for name, value in vars(self).items() if isinstance(value, Variable)}

    def _tree(self, trainable: bool, seen: set | None, _above: frozenset = frozenset()) -> dict:
        # seen: ids of the Variables found so far, each listed at its first path (None: at every path).
        # _above: the Modules on the path here, so a back reference (a child holding its parent) ends the walk.
        if _identity(self) in _above or trainable and not self.trainable:
            return {}
        above = _above | {_identity(self)}
        found = {}
        for name, v in self._own_variables().items():
            if (v.trainable or not trainable) and (seen is None or v._id not in seen):
                found[name] = v
                if seen is not None:
                    seen.add(v._id)
        for name, child in self._children().items():
            sub = child._tree(trainable, seen, above)
            if sub:
                found[name] = sub
        return found

    @property
    def variables(self) -> dict:
        """Every Variable (trainable or not, e.g. BatchNorm's running statistics) as a nested dict, each once: a
        Variable reachable by several paths (tied weights, a layer used twice) at its first, as PyTorch's
        ``named_parameters`` and Keras' ``variables`` list it (``state_dict`` and checkpoints name it at every
        path, as PyTorch's ``state_dict`` does)."""
        return self._tree(False, set())

    @property
    def trainable_variables(self) -> dict:
        """The trainable Variables as a nested dict (what ``tape.gradient`` and optimizers take), each once (see
        :attr:`variables`), less those of frozen Modules (:attr:`trainable`)."""
        return self._tree(True, set())

    def _variables_at_every_path(self) -> dict:
        """:attr:`variables` with a shared Variable under each of its paths: the names of checkpoints."""
        return self._tree(False, None)

    def modules(self) -> list:
        """This Module and every sub-Module, depth first, each once (a shared or cyclic one too)."""
        found, seen = [], set()

        def visit(module):
            if _identity(module) in seen:
                return
            seen.add(_identity(module))
            if not isinstance(module, _ModuleList):
                found.append(module)
            for child in module._children().values():
                visit(child)

        visit(self)
        return found

    def train(self, mode: bool = True) -> "Module":
        """Set training mode (BatchNorm uses batch statistics, Dropout drops) on this Module and all below.

        ``mode`` must be a bool, as in PyTorch: ``train("False")`` had set training mode (a non-empty string).
        """
        if not isinstance(mode, (bool, np.bool_)):
            raise TypeError(f"{type(self).__name__}.train: mode must be a bool, got {mode!r}")
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self) -> "Module":
        """Set inference mode: BatchNorm uses its running statistics, Dropout passes values through."""
        return self.train(False)

    def state_dict(self) -> dict:
        """``{dotted name: NumPy array}``, a copy of every Variable (PyTorch's ``state_dict``; names as in a
        checkpoint): :func:`tl.checkpoint.state_dict`.  Optimizers have this method too: theirs holds the
        step counter, a constant learning rate, the other hyperparameters and the slots.

        >>> import tensorlib as tl
        >>> opt, w = tl.optimizers.SGD(0.1, momentum=0.9), tl.Variable([1.0, 2.0])
        >>> opt.apply([tl.tensor([1.0, -1.0])], [w])
        >>> sorted(opt.state_dict())  # doctest: +NORMALIZE_WHITESPACE
        ['hyperparameters.dampening', 'hyperparameters.maximize', 'hyperparameters.momentum',
         'hyperparameters.nesterov', 'hyperparameters.weight_decay', 'iterations', 'learning_rate', 'slots.0.momentum']
        """
        from .checkpoint import state_dict

        return state_dict(self)

    def load_state_dict(self, state: dict, strict: bool = True) -> tuple:
        """Assign ``state`` to this Module's Variables, all or nothing, shapes and dtypes checked; returns
        ``(missing, unexpected)`` names (PyTorch's ``load_state_dict``): :func:`tl.checkpoint.load_state_dict`.
        Optimizers have this method too; one that has taken no step keeps the slots for its first step.

        >>> import tensorlib as tl
        >>> a, b = tl.nn.Dense(2, 3, seed=0), tl.nn.Dense(2, 3, use_bias=False, seed=1)
        >>> missing, unexpected = b.load_state_dict(a.state_dict(), strict=False)
        >>> missing, unexpected
        ([], ['bias'])
        """
        from .checkpoint import load_state_dict

        return load_state_dict(self, state, strict)

    def num_parameters(self, trainable_only: bool = True) -> int:
        """How many numbers the (trainable) Variables hold."""
        variables = self.trainable_variables if trainable_only else self.variables
        # A Variable reachable by two paths (a shared layer) holds its numbers once.
        return sum(v.size for v in {id(v): v for v in tree.leaves(variables)}.values())

    def _arguments(self) -> dict:
        """The constructor's arguments by name, defaults included, as given (``*layers`` as a tuple)."""
        recorded = self.__dict__.get("_constructed_with")
        if recorded is None:
            raise TypeError(f"{type(self).__name__}: the arguments it was constructed with are not known")
        signature = inspect.signature(type(self).__init__)
        bound = signature.bind(self, *recorded.args, **recorded.kwargs)
        bound.apply_defaults()
        arguments = {}
        for name, parameter in list(signature.parameters.items())[1:]:
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update(bound.arguments[name])
            else:
                arguments[name] = bound.arguments[name]
        return {**arguments, **recorded.arrays}

    def _record_arrays(self, **arrays) -> None:
        """Keep copies of array arguments the layer holds (a Normalization's statistics) for its config, as nested
        lists (Keras writes them so); other arrays given to a constructor are not kept (see :class:`_Arguments`)."""
        recorded = self.__dict__["_constructed_with"]
        recorded.arrays = {**recorded.arrays, **{k: np.asarray(v).tolist() for k, v in arrays.items()}}

    def get_config(self) -> dict:
        """The constructor's arguments (defaults included) as JSON-serialisable values, Keras' ``get_config``:
        activations and initializers by name (with parameters bound by ``functools.partial``, as ``{"module":
        "tl.initializers", "function": "variance_scaling", "keywords": {"scale": 2.0}}``), dtypes as strings,
        sub-layers as ``{"class_name": ..., "config": ...}``.  ``type(m).from_config(m.get_config())`` builds a layer like ``m`` (with new weights: copy them with
        ``load_state_dict``).  An argument that has no such form (a lambda) raises a TypeError naming it.

        >>> import json, tensorlib as tl
        >>> dense = tl.nn.Dense(3, 2, activation=tl.nn.relu, seed=0)
        >>> config = dense.get_config()
        >>> config["activation"], config["dtype"]
        ('relu', 'float32')
        >>> copy = tl.nn.Dense.from_config(json.loads(json.dumps(config)))
        >>> copy.get_config() == config
        True
        """
        who = f"{type(self).__name__}.get_config"
        config = {name: _serialized(value, f"{who}: argument {name}") for name, value in self._arguments().items()}
        return {**config, "trainable": self.__dict__.get("_trainable", True)} if "trainable" not in config else config

    @classmethod
    def from_config(cls, config: dict, custom_objects: dict | None = None) -> Module:
        """A new layer from :meth:`get_config`'s dict (Keras' ``from_config``); sub-layers are ``tl.nn`` layers or
        classes named in ``custom_objects`` (``{"MyLayer": MyLayer}``).

        >>> import tensorlib as tl
        >>> lstm = tl.nn.LSTM(3, 4, return_sequences=True)
        >>> tl.nn.LSTM.from_config(lstm.get_config())
        LSTM(3, 4, return_sequences=True)
        """
        if not isinstance(config, dict):
            raise TypeError(f"{cls.__name__}.from_config: config must be a dict, got {type(config).__name__}")
        config = {name: _deserialized(value, custom_objects) for name, value in config.items()}
        signature = inspect.signature(cls.__init__)
        trainable = True if "trainable" in signature.parameters else config.pop("trainable", True)
        if not isinstance(trainable, bool):
            raise TypeError(f"{cls.__name__}.from_config: trainable must be a bool, got {trainable!r}")
        variadic = [n for n, p in signature.parameters.items() if p.kind is inspect.Parameter.VAR_POSITIONAL]
        args = tuple(config.pop(variadic[0], ())) if variadic else ()
        try:
            signature.bind(None, *args, **config)
        except TypeError as e:
            raise TypeError(
                f"{cls.__name__}.from_config: the config does not fit {cls.__name__}{signature}: {e}"
            ) from None
        layer = cls(*args, **config)
        if not trainable:  # (setting True would unfreeze sub-layers saved frozen)
            layer.trainable = False
        return layer

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        return self._repr(frozenset())

    def _repr(self, above: frozenset) -> str:
        # A Module already on the path here (a child holding its parent) is shown as a reference.
        children = self._children()
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not children:
            return head + ")"
        above = above | {_identity(self)}

        def show(child):
            if _identity(child) in above:
                return f"<back-reference to {type(getattr(child, 'source', child)).__name__}>"
            return child._repr(above).replace("\n", "\n  ")

        return head + "".join(f"\n  ({name}): {show(c)}" for name, c in children.items()) + "\n)"


class _Arguments:
    """The arguments a Module was constructed with, as far as a config can hold them, and callables (not a list or
    dict: no part of the variable tree).  Anything else (an array, a tensor) is kept as an :class:`_Unrecorded`
    note: a module given a data set to read in ``__init__`` does not keep it alive, nor copy or pickle it.  A
    pickle notes a lambda or local function instead of failing on it (a layer given a lambda initializer, which it
    does not keep, pickles as before)."""

    __slots__ = ("args", "arrays", "kwargs")

    def __init__(self, args: tuple, kwargs: dict, arrays: dict | None = None):
        self.args = tuple(_recorded(v) for v in args)
        self.kwargs = {k: _recorded(v) for k, v in kwargs.items()}
        self.arrays = arrays or {}  # arguments by name, as nested lists, that the layer kept (Module._record_arrays)

    def __reduce__(self):
        return _Arguments, (_picklable(self.args), _picklable(self.kwargs), self.arrays)

    def __deepcopy__(self, memo):
        copied = _Arguments.__new__(_Arguments)
        copied.args, copied.kwargs = copy.deepcopy(self.args, memo), copy.deepcopy(self.kwargs, memo)
        copied.arrays = copy.deepcopy(self.arrays, memo)
        return copied


class _Unrecorded:
    """An argument that has no config form, by its description (see :class:`_Arguments`)."""

    __slots__ = ("description",)

    def __init__(self, description: str):
        self.description = description

    def __reduce__(self):
        return _Unrecorded, (self.description,)


def _recorded(value):
    """``value`` if a config can hold it (JSON's scalars, a Module, a dtype, and lists, tuples and dicts of them) or
    it is a function or class (a Bidirectional's mirrored layer takes its activation and initializers), else an
    :class:`_Unrecorded` note of it."""
    if value is None or isinstance(value, (bool, int, float, str, np.generic, np.dtype, Module, _Unrecorded)):
        return value
    if isinstance(value, type) or inspect.isroutine(value) or isinstance(value, functools.partial):
        return value
    if type(value) in (list, tuple):
        return type(value)(_recorded(v) for v in value)
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {k: _recorded(v) for k, v in value.items()}
    return _unrecorded(value)


def _picklable(value):
    """:func:`_recorded` values as a pickle takes them: a lambda or local function (no name to pickle by) noted."""
    if inspect.isroutine(value) and "<" in getattr(value, "__qualname__", "<"):
        return _unrecorded(value)
    if type(value) in (list, tuple):
        return type(value)(_picklable(v) for v in value)
    if type(value) is dict:
        return {k: _picklable(v) for k, v in value.items()}
    return value


def _unrecorded(value) -> _Unrecorded:
    kind = type(value).__name__
    if isinstance(getattr(value, "shape", None), tuple) and hasattr(value, "dtype"):
        return _Unrecorded(f"a {kind} of shape {value.shape} ({value.dtype})")
    text = repr(value)
    return _Unrecorded(f"{text[:60] + '...' if len(text) > 60 else text} (a {kind})")


def _function_name(value) -> str | None:
    """The name of a ``tl.nn`` activation or ``tl.initializers`` initializer (``"linear"`` for the recurrent
    layers' identity), None for anything else."""
    name = getattr(value, "__name__", None)
    if not callable(value) or not isinstance(name, str):
        return None
    if name == "_linear":  # the recurrent layers' identity: Keras' "linear"
        return "linear"
    return name if _function_module(value) else None


def _serialized(value, where: str):
    """A recorded argument in JSON's types: a Module as its class name and config, a dtype by name, an activation
    or initializer by its name, tuples as lists (as Keras writes them)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Module):
        return {"class_name": _class_name(type(value)), "config": value.get_config()}
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_serialized(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _serialized(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, functools.partial) and not value.args and _function_module(value.func):
        # a tl.nn / tl.initializers function with parameters bound by keyword: partial(variance_scaling, scale=2.0)
        keywords = _serialized(dict(value.keywords), f"{where} (its keywords)")
        return {"module": _function_module(value.func), "function": value.func.__name__, "keywords": keywords}
    name = None if isinstance(value, _Unrecorded) else _function_name(value)
    if name is None:
        description = value.description if isinstance(value, _Unrecorded) else _unrecorded(value).description
        raise TypeError(
            f"{where} is {description}, which has no JSON form: a config holds numbers, strings, dtypes, layers, "
            "and activations and initializers by name (or as tl.nn / tl.initializers functions)"
        )
    return name


def _class_name(cls: type) -> str:
    """A layer's class name in a config: ``"torch.LSTM"`` for ``tl.nn.torch.LSTM`` (``"LSTM"`` is Keras'
    ``tl.nn.LSTM``), else the class's name."""
    from . import nn

    dotted = f"torch.{cls.__name__}"
    return dotted if _nn_attribute(nn, dotted) is cls else cls.__name__


def _nn_attribute(nn, name: str):
    """``tl.nn``'s attribute of a dotted ``name`` (``"torch.LSTM"``), None where there is none."""
    found = nn
    for part in name.split("."):
        found = getattr(found, part, None)
    return found


def _function_module(value) -> str | None:
    """``"tl.nn"`` or ``"tl.initializers"`` for a function of that module (by its name), else None."""
    from . import initializers, nn

    name = getattr(value, "__name__", None)
    for module, where in ((nn, "tl.nn"), (initializers, "tl.initializers")):
        if isinstance(name, str) and getattr(module, name, None) is value:
            return where
    return None


def _deserialized(value, custom_objects: dict | None):
    """:func:`_serialized` undone: ``{"class_name": ..., "config": ...}`` becomes that layer, lists become tuples
    (what JSON made of them: ``kernel_size=(3, 2)``); names are left for the constructor to resolve."""
    if isinstance(value, list):
        return tuple(_deserialized(v, custom_objects) for v in value)
    if isinstance(value, dict) and set(value) == {"class_name", "config"}:
        from . import nn

        name = value["class_name"]
        cls = (custom_objects or {}).get(name) or _nn_attribute(nn, str(name))
        if not (isinstance(cls, type) and issubclass(cls, Module)):
            raise ValueError(
                f"from_config: unknown layer class {name!r}: not a tl.nn layer; pass custom_objects={{{name!r}: cls}}"
            )
        return cls.from_config(value["config"], custom_objects)
    if isinstance(value, dict) and set(value) == {"module", "function", "keywords"}:
        from . import initializers, nn

        module = {"tl.nn": nn, "tl.initializers": initializers}.get(value["module"])
        function = getattr(module, str(value["function"]), None) if module is not None else None
        if not callable(function):
            raise ValueError(
                f"from_config: unknown function {value['module']}.{value['function']}: a config's functions are "
                "tl.nn's or tl.initializers'"
            )
        return functools.partial(function, **_deserialized(value["keywords"], custom_objects))
    if isinstance(value, dict):
        return {k: _deserialized(v, custom_objects) for k, v in value.items()}
    return value


class ModuleFreezes:
    """How many times a Module's ``trainable`` was set: what a ``tl.function`` that read ``trainable`` while
    tracing keys its graphs by (one guard per call, where one per Module read cost ~0.4 us each per call)."""

    count = 0


_FREEZES = ModuleFreezes()


def functional_call(module: Module, values: dict, args=(), kwargs: dict | None = None, *, strict: bool = False):
    """``module(*args, **kwargs)`` with the given tensors in place of its Variables (PyTorch's
    ``torch.func.functional_call``): so the result is a function of ``values``, to differentiate, vmap or
    trace in them; the Variables are back in place afterwards, even after an error.

    ``values`` maps names as in :meth:`Module.state_dict` (``"0.kernel"``) to tensors or arrays of the
    Variables' shapes, or is nested as :attr:`Module.variables` is.  A Variable reachable by several
    paths (tied weights) is replaced at all of them.  An unknown name is a ``KeyError``; with
    ``strict=True`` every Variable must be given.  ``args`` is one argument or a tuple of them.  A call that
    assigns a Variable (BatchNorm's running statistics in training mode) needs a ``tl.Variable`` as its value,
    which takes the update (a tensor cannot change: a TypeError).  Not thread-safe: the module holds the
    values during the call, so two threads calling one module at once see each other's.
    (Assigning a tensor to a Variable's attribute, ``model.w = t``, is a TypeError: it would leave the
    model's variables.)

    >>> import tensorlib as tl
    >>> layer = tl.nn.Dense(1, 1, seed=0)
    >>> f = lambda w: tl.functional_call(layer, {"kernel": w, "bias": [0.0]}, tl.tensor([[3.0]]))
    >>> tl.grad(lambda w: tl.sum(f(w)))(tl.tensor([[2.0]])).numpy().tolist()
    [[3.0]]
    """
    from .ops.creation import tensor

    if not isinstance(module, Module):
        raise TypeError(f"functional_call: needs a tl.Module, got {type(module).__name__}")
    if not isinstance(values, dict):
        raise TypeError(f"functional_call: values must be a dict of names to tensors, got {type(values).__name__}")
    given = _dotted(values)
    places = list(_variable_places(module))
    named = {name: var for name, _, _, var in places}
    unknown = sorted(set(given) - set(named))
    if unknown:
        raise KeyError(
            f"functional_call: {type(module).__name__} has no Variable named {unknown}; its Variables: {sorted(named)}"
        )
    if strict:  # (a noise layer's stream position is no value the call is a function of)
        missing = sorted(
            {
                name
                for name in named
                if not any(named[g] is named[name] for g in given) and not _stream_position(name, named[name])
            }
        )
        if missing:
            raise KeyError(f"functional_call: strict=True and no value for {missing}")
    by_variable = {}
    for name, value in given.items():
        var = named[name]
        value = value if isinstance(value, Tensor) else tensor(value, dtype=var.dtype, backend=var.backend)
        if tuple(value.shape) != tuple(var.shape):
            raise ValueError(
                f"functional_call: the value for {name!r} has shape {value.shape} ({value.dtype}); the Variable "
                f"has shape {var.shape} ({var.dtype})"
            )
        if by_variable.get(var._id, value) is not value:
            raise ValueError(f"functional_call: two values for one (tied) Variable, at {name!r} and another name")
        by_variable[var._id] = value
    swapped = []
    try:
        for name, owner, key, var in places:
            if var._id in by_variable:
                if isinstance(owner, (tuple, frozenset)) or not isinstance(owner, (Module, list, dict)):
                    raise TypeError(
                        f"functional_call: the Variable {name!r} sits in a {type(owner).__name__}, which cannot "
                        "hold another value for the call; keep it in a list, dict or attribute"
                    )
                _put(owner, key, by_variable[var._id])
                swapped.append((owner, key, var))
        return module(*(args if isinstance(args, tuple) else (args,)), **(kwargs or {}))
    except AttributeError as e:
        # A forward that updates state (BatchNorm's running statistics in training mode) assigned to a value
        # given for a Variable: a tensor, immutable, has no ``assign``.
        name = next((n for n, v in given.items() if by_variable.get(named[n]._id) is e.obj), None)
        if name is None or e.name not in ("assign", "assign_add", "assign_sub"):
            raise
        raise TypeError(
            f"functional_call: {type(module).__name__}'s call assigns to {name!r} ({e.name}), whose value was "
            f"given as a {type(e.obj).__name__} (shape {e.obj.shape}, {e.obj.dtype}), which cannot change: give "
            "a tl.Variable for it to take the update, or call the module in eval() mode"
        ) from None
    finally:
        for owner, key, var in reversed(swapped):
            _put(owner, key, var)


def _stream_position(name: str, t) -> bool:
    """A seeded noise layer's ``seed_state`` (its stream's calls so far, ``layers._noise_stream``): saved, but
    optional in a checkpoint (files written before it was saved lack it: the stream keeps its position) and in
    ``functional_call(strict=True)``."""
    return (
        name.rpartition(".")[2] == "seed_state"
        and isinstance(t, Variable)
        and t.name == "seed_state"
        and t.shape == ()
        and t.dtype == np.int64
    )


def _dotted(values: dict, prefix: str = "") -> dict:
    """A nested dict of values as ``{"a.b": value}`` (a dotted name given flat stays as it is)."""
    out = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out.update(_dotted(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _put(owner, key, value) -> None:
    if isinstance(owner, Module):
        object.__setattr__(owner, key, value)  # past __setattr__, which refuses a tensor in a Variable's place
    else:
        owner[key] = value


def _variable_places(module, prefix: str = "", above: frozenset = frozenset()):
    """``(name, owner, key, Variable)`` for each Variable reachable from ``module`` at each of its paths, named
    as ``variables`` and ``state_dict`` name them; ``owner[key]`` (or the attribute ``key``) holds it."""
    if _identity(module) in above:
        return
    above = above | {_identity(module)}
    keys = {str(k): k for k in _items(module.source)} if isinstance(module, _ModuleList) else None
    owner = module.source if keys is not None else module
    for name, var in module._own_variables().items():
        yield prefix + name, owner, (keys[name] if keys is not None else name), var
    for name, child in module._children().items():
        yield from _variable_places(child, f"{prefix}{name}.", above)


def _identity(module) -> int:
    """What a tree walk has seen: the Module, or for a list or dict of them the container itself."""
    return id(module.source) if isinstance(module, _ModuleList) else id(module)


_CONTAINERS = (list, tuple, dict, set, frozenset)  # a set with state is an error (see _holds_state)


def _holds_state(value, _seen: frozenset = frozenset()) -> bool:
    """A list, tuple or dict with a Module or Variable somewhere inside (other entries are ignored)."""
    if isinstance(value, (Module, Variable)):
        return True
    if isinstance(value, (set, frozenset)):
        state = next((v for v in value if isinstance(v, (Module, Variable))), None)
        if state is not None:
            # Skipped, its Variables were never trained nor saved; and Variables hash by identity, so a set's
            # order (their names) would change from run to run.
            raise TypeError(
                f"Module: a set holds a {type(state).__name__}; a set has no order, so its entries cannot have "
                "names that agree from run to run in variables, optimizers and checkpoints: keep them in a list "
                "or dict"
            )
        return False
    if (isinstance(value, (list, tuple, dict)) or value.__class__ in tree.nodes) and id(value) not in _seen:
        seen = _seen | {id(value)}  # a list holding itself ends here
        return any(_holds_state(v, seen) for v in _items(value).values())
    return False


def _items(value) -> dict:
    """The entries of a list, tuple, dict or registered tl.tree node (a dataclass by field) by name."""
    if isinstance(value, dict):
        return dict(value)
    node = tree.nodes.get(value.__class__)
    if node is not None:
        children, aux = node[0](value)
        children = list(children)
        return dict(zip(tree._names((value.__class__, aux), len(children)), children))
    return dict(enumerate(value))


def _check_names(source: dict) -> None:
    """Keys name entries as strings: two with state under one name ({1: a, "1": b}) hid one of them from
    ``variables``, optimizers and checkpoints."""
    seen = {}
    for k, v in source.items():
        if _holds_state(v):
            if str(k) in seen:
                raise ValueError(
                    f"Module: the keys {seen[str(k)]!r} and {k!r} of a dict of Modules/Variables are both named "
                    f"{str(k)!r} in the variable tree; give them keys that differ as strings"
                )
            seen[str(k)] = k


class _CallContext(threading.local):
    """The ``training=`` of the Module calls in progress on this thread (Keras' call context); None: none given."""

    training = None


_CALL = _CallContext()


def in_training(module: Module, training=None) -> bool:
    """A call's mode: its ``training`` argument, else that of the Module call it runs inside (Keras' call
    context: ``model(x, training=False)`` puts every layer it calls in inference), else the Module's
    ``train()``/``eval()``.  A Sequential, a TimeDistributed, a Lambda or a user's Module passed ``training=`` to
    none of its layers before, so their dropout dropped (and BatchNorm moved its statistics) at inference.

    >>> import tensorlib as tl
    >>> model = tl.nn.Sequential(tl.nn.Dropout(0.5))
    >>> model(tl.ones((4,)), training=False).numpy().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    if training is None:
        if current_state().modes:  # a tl.function tracing here keys its graph by the call's mode
            state_read(_CALL, "training")
        training = _CALL.training
        return module.training if training is None else training
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"{type(module).__name__}: training must be True, False or None, got {training!r}")
    return bool(training)


@functools.cache
def _takes_training(forward) -> bool:
    parameters = inspect.signature(forward).parameters.values()
    return any(p.name == "training" or p.kind is p.VAR_KEYWORD for p in parameters)


@functools.cache
def _training_position(forward):
    """The index in a call's positional arguments of ``forward``'s parameter ``training``; None if it has none that
    a position can give."""
    parameters = list(inspect.signature(forward).parameters.values())[1:]  # after self
    for i, p in enumerate(parameters):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
        if p.name == "training":
            return i
    return None


def _forward_in_mode(module: Module, training, args: tuple, kwargs: dict):
    """``module.forward(*args, **kwargs)`` called with ``training`` (by keyword or by position; it reaches
    ``forward`` only where it takes it, as Keras passes it only to a ``call`` that has it): the mode holds for
    every Module called inside."""
    if training is None:
        return module.forward(*args, **kwargs)
    outer = _CALL.training
    _CALL.training = in_training(module, training)
    try:
        return module.forward(*args, **kwargs)
    finally:
        _CALL.training = outer


class _ModuleList(Module):
    """A list (keys ``"0"``, ``"1"``, ...) or dict of Modules and Variables seen as one node of the variable tree.

    Entries that are neither (an activation function in a list of layers) are skipped, so the
    Variables of the layers beside them are still found.
    """

    def __new__(cls, source):  # made at every walk of the tree: nothing to record (no config)
        return object.__new__(cls)

    def __init__(self, source):
        super().__init__()
        self.source = source  # the list, tuple or dict: what cycle checks compare
        self.items = _items(source)
        if isinstance(source, dict) and len({str(k) for k in source}) != len(source):
            _check_names(source)

    def _own_variables(self) -> dict:
        return {str(k): v for k, v in self.items.items() if isinstance(v, Variable)}

    def _children(self) -> dict:
        return {
            str(k): (m if isinstance(m, Module) else _ModuleList(m))
            for k, m in self.items.items()
            if isinstance(m, Module) or (not isinstance(m, Variable) and _holds_state(m))
        }


class Sequential(Module):
    """Layers applied in order; variables are keyed by position (``"0"``, ``"1"``, ...), as in PyTorch.  The layers
    are the arguments (PyTorch's ``nn.Sequential(a, b)``) or one list of them (Keras' ``Sequential([a, b])``).

    >>> import tensorlib as tl
    >>> model = tl.nn.Sequential(tl.nn.Dense(4, 8, activation=tl.nn.relu, seed=0), tl.nn.Dense(8, 2, seed=1))
    >>> model(tl.ones((3, 4))).shape
    (3, 2)
    >>> {k: sorted(v) for k, v in model.trainable_variables.items()}
    {'0': ['bias', 'kernel'], '1': ['bias', 'kernel']}
    >>> model[:1](tl.ones((3, 4))).shape  # a slice is a Sequential sharing the layers
    (3, 8)
    """

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):  # Keras' Sequential([layer, ...])
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            if not callable(layer):
                raise TypeError(f"Sequential: layer {i} is a {type(layer).__name__}, not a Module or callable")
            if isinstance(layer, type) and issubclass(layer, Module):  # Flatten for Flatten(): failed at the call
                raise TypeError(
                    f"Sequential: layer {i} is the class {layer.__name__}, not a layer; make one "
                    f"({layer.__name__}(...)) and pass it"
                )
        self.layers = list(layers)

    def _children(self) -> dict:
        # The layers by position, then what a subclass adds (a head beside the layers was left out of
        # variables, checkpoints and eval(), where PyTorch's nn.Sequential subclass registers it).
        layers = {str(i): m for i, m in enumerate(self.layers) if isinstance(m, Module)}
        return layers | {name: m for name, m in super()._children().items() if name != "layers"}

    def __getitem__(self, i):
        """A layer, or for a slice a Sequential of those layers (sharing them), as in PyTorch."""
        return Sequential(*self.layers[i]) if isinstance(i, slice) else self.layers[i]

    def __len__(self):
        return len(self.layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
