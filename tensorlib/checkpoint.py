"""Checkpoints: ``tl.save_variables`` / ``tl.load_variables`` in the safetensors format.

A file holds named arrays and nothing else (no pickle: loading never runs
code).  Names are the paths of the nested structure joined by dots, as in a
PyTorch ``state_dict``: ``"0.kernel"``, ``"1.running_mean"``.  The file is
written to a temporary name in the same folder and renamed over the target,
so a crash never leaves a half-written checkpoint.  The ``safetensors``
package (the ``checkpoints`` extra) is imported on first use.

>>> import os, tempfile, tensorlib as tl
>>> model = tl.nn.Dense(2, 3, seed=0)
>>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
>>> tl.save_variables(path, model)
>>> fresh = tl.nn.Dense(2, 3, seed=1)
>>> _ = tl.load_variables(path, fresh)
>>> bool((fresh.kernel.numpy() == model.kernel.numpy()).all())
True
"""

from __future__ import annotations

import errno
import json
import os
from typing import NamedTuple

import numpy as np

from . import _files, dtypes as _dtypes, tree
from .dispatch import current_state
from .module import _stream_position
from .tensor import Tensor, Variable

__all__ = ["save_variables", "load_variables", "state_dict", "load_state_dict"]

_COMPLEX_KEY = "tensorlib.complex"  # the header's list of entries stored as (real, imaginary) pairs


def _safetensors_numpy():
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            "tl.save_variables/tl.load_variables need the safetensors package: "
            "pip install 'tensorlib[checkpoints]' (or pip install safetensors)"
        ) from None
    return safetensors.numpy


def _holds_variables(node) -> bool:
    """A Module or an optimizer: its ``variables`` property gives its nested dict of Variables."""
    return hasattr(node, "variables") and not isinstance(node, Tensor) and not callable(node.variables)


def _named(target, who: str, prefix: str = "", optimizers: dict | None = None) -> dict:
    """``{dotted name: Tensor or NumPy array}`` for a Module/optimizer (its ``variables``) or a nested
    dict/list/tuple.  A leaf's own key may hold dots: it is the entry's name, as a ``state_dict``'s keys are
    (``{"0.kernel": array}``); a dot in a key above a subtree is refused.

    ``optimizers``, when given, collects ``{dotted prefix: optimizer}`` for the optimizers found.
    """
    if _holds_variables(target):
        if optimizers is not None and hasattr(target, "_restore_slots"):
            optimizers[prefix] = target
        # A Module names a shared Variable at every path (as PyTorch's state_dict does; files keep loading).
        every_path = getattr(target, "_variables_at_every_path", None)
        target = every_path() if every_path is not None else target.variables
    out = {}
    for path, leaf in tree.flatten_with_path(target, is_leaf=_holds_variables)[0]:
        name = prefix
        for i, key in enumerate(path):
            key = str(key)
            if "." in key and (i < len(path) - 1 or _holds_variables(leaf)):
                raise ValueError(f"{who}: key {key!r} under {name or '<root>'!r} contains '.', the name separator")
            name = f"{name}.{key}" if name else key
        if _holds_variables(leaf):
            for sub_name, t in _named(leaf, who, name, optimizers).items():
                _add(out, sub_name, t, who)
        elif isinstance(leaf, Tensor):
            _add(out, name or "value", leaf, who)
        elif isinstance(leaf, (np.ndarray, np.generic)):  # a state_dict()'s values (torch's habit)
            try:
                _dtypes.of_array(leaf.dtype)
            except TypeError as e:
                raise TypeError(f"{who}: entry {name or '<root>'!r} (shape {np.shape(leaf)}): {e}") from None
            _add(out, name or "value", leaf, who)
        else:
            raise TypeError(
                f"{who}: entry {name or '<root>'!r} is a {type(leaf).__name__}; expected a Variable, "
                "Tensor, NumPy array, Module, optimizer, or a dict/list/tuple of them"
            )
    return out


def _add(named: dict, name: str, t: Tensor, who: str) -> None:
    # Two entries with one name ({"0": a, 0: b}) kept only the last: the checkpoint silently lost one.
    if name in named and named[name] is not t:
        raise ValueError(f"{who}: two entries are both named {name!r}; give them keys that differ as strings")
    named[name] = t


def save_variables(path, target) -> None:
    """Write every Variable/Tensor of ``target`` (a Module, an optimizer, or a nested dict/list of them) to ``path``.

    A ``state_dict()`` (``{dotted name: array}``, PyTorch's habit) is a target too: its keys are the names, and
    ``model.load_state_dict(tl.load_variables(path))`` loads it back.

    >>> import os, tempfile, tensorlib as tl
    >>> path = os.path.join(tempfile.mkdtemp(), "state.safetensors")
    >>> model = tl.nn.Sequential(tl.nn.Dense(2, 3, seed=0), tl.nn.Dense(3, 1, seed=1))
    >>> tl.save_variables(path, model.state_dict())
    >>> fresh = tl.nn.Sequential(tl.nn.Dense(2, 3, seed=2), tl.nn.Dense(3, 1, seed=3))
    >>> fresh.load_state_dict(tl.load_variables(path))
    _IncompatibleKeys(missing_keys=[], unexpected_keys=[])
    >>> bool((fresh[1].kernel.numpy() == model[1].kernel.numpy()).all())
    True

    The write is atomic: a temporary file in the same folder is written, flushed to the disk and renamed
    over ``path``.  A complex entry (the format has no complex128) is stored as its (real, imaginary) pairs
    along a last axis of 2, and the header's metadata ``"tensorlib.complex"`` lists it, so that
    :func:`load_variables` gives it back complex; other readers see the pairs.
    """
    _refuse_tracing("save_variables")
    path = _files.fspath(path)
    st = _safetensors_numpy()
    named = _named(target, "save_variables")
    if "__metadata__" in named:  # the format's own header key: the file would not load
        raise ValueError("save_variables: the name '__metadata__' is reserved by the safetensors format")
    for name in named:  # the header is UTF-8 JSON: a lone surrogate (os.fsdecode's escape) had raised in its encoder
        try:
            name.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(
                f"save_variables: the name {name!r} is not UTF-8 text, as a checkpoint's names are ({e.reason})"
            ) from None
    # np.array, not ascontiguousarray, which would turn a 0-d value (a step counter) into 1-d.
    arrays = {name: np.array(_value(t), order="C") for name, t in named.items()}
    # The format has no complex128 (and complex64 only from safetensors 0.6): a complex entry is stored as its
    # (real, imaginary) pairs along a last axis of 2, and the header's metadata names it.
    complex_names = sorted(name for name, a in arrays.items() if a.dtype.kind == "c")
    for name in complex_names:  # shape S complex -> S + (1,) complex -> S + (2,) real (0-d included)
        arrays[name] = arrays[name][..., None].view(_dtypes.real_dtype(arrays[name].dtype))
    metadata = {"format": "tensorlib"}
    if complex_names:
        metadata[_COMPLEX_KEY] = json.dumps(complex_names)
    dest = _files.resolve(path, "save_variables", "checkpoint")
    tmp = _files.temporary(dest, "save_variables")
    try:
        st.save_file(arrays, tmp, metadata=metadata)
    except BaseException:
        _files.discard([tmp])
        raise
    _files.commit([(tmp, dest)])


def _refuse_tracing(who: str) -> None:
    """A file is read or written in Python, once, while ``tl.function`` traces: the graph's later calls
    re-assigned the values read at trace time (or saved nothing), so tracing it is an error."""
    if current_state().modes:
        raise RuntimeError(
            f"{who}: called while tl.function traces; a checkpoint is read and written in Python, once, at trace "
            "time, so the graph would replay stale values. Call it outside the traced function"
        )


def load_variables(path, target=None, strict: bool = True):
    """Read a checkpoint; assign it into ``target``'s Variables, or return ``{name: Tensor}`` without a target.

    Every entry is checked before any Variable changes: with ``strict=True``
    a name missing from the file or present in the file only is an error, as
    is a shape or dtype that differs; the one ``ValueError`` lists them all.
    With ``strict=False`` missing and extra names are allowed (shapes still
    must match).  An entry of a dtype tensorlib cannot hold (bfloat16,
    float8, uint64) is an error naming it where it is asked for.  A load that
    fails changes no Variable.  An optimizer's constant learning rate is restored where the file has
    one (as ``torch.optim``'s ``load_state_dict`` does); it is never a missing or extra name.  An
    optimizer that has taken no step (and had no ``build``) keeps
    the file's slots and its first ``apply`` starts from them, so a fresh model and optimizer resume
    training from a checkpoint.  Returns ``target``.
    """
    _refuse_tracing("load_variables")
    path = _files.fspath(path)
    arrays, unreadable = _read(path)
    if target is None:
        from .ops.creation import tensor

        if unreadable:
            raise TypeError(f"load_variables: {path!r} has entries tensorlib cannot hold: {unreadable}")
        return {name: tensor(a) for name, a in arrays.items()}
    _assign_all(arrays, unreadable, target, strict, "load_variables", f"{path!r}", "the file")
    return target


def state_dict(target) -> dict:
    """``{dotted name: NumPy array}``: a copy of every Variable/Tensor of ``target`` (a Module, an optimizer or a
    nested dict/list of them), named as in a checkpoint (PyTorch's ``state_dict``).

    >>> import tensorlib as tl
    >>> sorted(tl.checkpoint.state_dict(tl.nn.Dense(2, 3)))
    ['bias', 'kernel']
    """
    return {name: np.array(_value(t), copy=True) for name, t in _named(target, "state_dict").items()}


def _value(t) -> np.ndarray:
    """A named entry's value: a Tensor's on the host, or the NumPy array itself."""
    return t.numpy() if isinstance(t, Tensor) else np.asarray(t)


class _IncompatibleKeys(NamedTuple):
    """The names :func:`load_state_dict` skipped: in the target but not the state, and the other way
    (PyTorch's ``_IncompatibleKeys``: a pair, with ``missing_keys`` and ``unexpected_keys`` by name)."""

    missing_keys: list
    unexpected_keys: list


def load_state_dict(target, state: dict, strict: bool = True) -> tuple:
    """Assign ``state`` (``{dotted name: array or Tensor}``, as :func:`state_dict` gives) to ``target``'s
    Variables with :func:`load_variables`' checks: all or nothing, shapes and dtypes exact, and with
    ``strict=True`` no name missing or extra.  Returns ``(missing, unexpected)``, the names skipped on
    either side (PyTorch's ``load_state_dict``'s keys, also as ``.missing_keys`` and ``.unexpected_keys``;
    both empty when strict).

    >>> import tensorlib as tl
    >>> a, b = tl.nn.Dense(2, 3, seed=0), tl.nn.Dense(2, 3, use_bias=False, seed=1)
    >>> tl.checkpoint.load_state_dict(b, tl.checkpoint.state_dict(a), strict=False).unexpected_keys
    ['bias']
    >>> bool((a.kernel.numpy() == b.kernel.numpy()).all())
    True
    """
    _refuse_tracing("load_state_dict")
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise TypeError(f"load_state_dict: state must be a dict of names (str) to arrays, got {type(state).__name__}")
    # A value NumPy cannot take (a torch bfloat16 or requires_grad tensor) is named with the reason, as a file's
    # entry tensorlib cannot hold is (its converter's own error had named neither the function nor the entry).
    arrays, unreadable = {}, {}
    for name, value in state.items():
        try:
            arrays[name] = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        except (TypeError, ValueError, RuntimeError) as e:
            unreadable[name] = f"{type(value).__name__} ({e})"
    return _IncompatibleKeys(
        *_assign_all(arrays, unreadable, target, strict, "load_state_dict", "the state", "the state")
    )


def _assign_all(arrays: dict, unreadable: dict, target, strict: bool, who: str, source: str, where: str) -> tuple:
    """Check every entry of ``arrays`` against ``target``'s Variables, then assign them all (or none);
    returns ``(missing, extra)``, the names skipped on either side."""
    optimizers = {}
    named = _named(target, who, optimizers=optimizers)
    problems = [f"{name!r} cannot be read: {why}" for name, why in unreadable.items() if name in named]
    later, restore, slot_problems, slots_missing, unused = _slots_not_built(arrays, named, optimizers)
    problems += slot_problems + _refused_by_optimizers(arrays, optimizers, where)
    arrays.update({name: None for name in unreadable})  # present in the file, for the missing/extra lists
    # An optimizer's learning rate is optional both ways: files written before it was saved have none, and
    # one with a schedule (or the caller's rate Variable) keeps that and ignores the file's.  Its other
    # hyperparameters may be missing from a file written before they were saved.
    rates = {
        f"{prefix}.{rate}" if prefix else rate
        for prefix, opt in optimizers.items()
        for rate in ["learning_rate", *(f"param_groups.{i}.learning_rate" for i in range(1, len(opt._groups)))]
    }
    heads = tuple(f"{prefix}.hyperparameters." if prefix else "hyperparameters." for prefix in optimizers)
    # A shared (tied) Variable is named at every path, but a file that gives it under one of them (saved once, as
    # safetensors.torch.save_model keeps one name of tied weights) gives its value: its other names are not missing.
    given = {t._id for n, t in named.items() if n in arrays and isinstance(t, Variable)}
    missing = [
        n
        for n, t in named.items()
        if n not in arrays
        and n not in rates
        and not n.startswith(heads)
        and not (isinstance(t, Variable) and t._id in given)
        and n not in unused
        and not _stream_position(n, t)
    ]
    missing += slots_missing
    extra = [n for n in arrays if n not in named and n not in later and n not in rates]
    if strict and missing:
        problems.append(f"missing from {where}: {missing}")
    if strict and extra:
        problems.append(f"in {where} but not in the target: {extra}")
    first_name = {}  # a Variable under two names (a shared layer): the file must give it one value
    for name, t in named.items():
        if arrays.get(name) is None:
            continue
        a = arrays[name]
        if not isinstance(t, Variable):
            problems.append(f"{name!r} is a {type(t).__name__}, not a Variable, so it cannot be loaded into")
        elif tuple(a.shape) != tuple(t.shape) or a.dtype != t.dtype:
            problems.append(
                f"{name!r} has shape {tuple(a.shape)} {a.dtype} in {where}, "
                f"but {tuple(t.shape)} {t.dtype} in the target"
            )
        elif t._id in first_name and not np.array_equal(arrays[first_name[t._id]], a, equal_nan=True):
            problems.append(
                f"{first_name[t._id]!r} and {name!r} are one Variable in the target ({t.name!r}, shared) but differ "
                f"in {where} (saved from a model where they were two); the last one silently won"
            )
        else:
            first_name.setdefault(t._id, name)
    if problems:
        raise ValueError(f"{who}: {source} does not fit the target: " + "; ".join(problems))
    # An assign can still fail (a Variable that a recording tape has read): put back the ones done before
    # it, so that a failed load leaves the target as it was, not half loaded.
    done = []
    try:
        for name, t in named.items():
            if arrays.get(name) is not None:
                before = t._value
                t.assign(arrays[name])
                done.append((t, before))
    except BaseException:
        for t, before in reversed(done):
            t.assign(before)
        raise
    for prefix, opt in optimizers.items():
        head = f"{prefix}." if prefix else ""
        # A state of its training (its step counter or slots) leaves no slot stale; one of settings alone (a
        # learning rate, hyperparameters, loaded with strict=False) leaves the slots alone.
        if f"{head}iterations" in arrays or any(name.startswith(f"{head}slots.") for name in arrays):
            opt._state_loaded(f"{head}slots.", arrays)
    for opt, slots in restore:
        opt._restore_slots(slots)
    for opt in optimizers.values():
        opt._hyperparameters_loaded()
    return missing, extra


def _refused_by_optimizers(arrays: dict, optimizers: dict, where: str) -> list:
    """The learning rates, hyperparameters and step counters in ``arrays`` that their optimizer would refuse: a
    negative or NaN rate (its constructor and setter refuse one: it climbs the loss), a hyperparameter out of its
    constructor's range (Adam's ``beta_1=1.5``, a NaN epsilon) or a negative counter (Adam's bias correction of
    step -5 is no step's).  Loaded, each had trained silently wrong."""
    problems = []
    for prefix, opt in optimizers.items():
        head = f"{prefix}." if prefix else ""
        given = {n[len(head) :]: a for n, a in arrays.items() if n.startswith(head)}
        problems += [f"{(head + name)!r} in {where}: {why}" for name, why in opt._refused_settings(given).items()]
        counters = {n for n, kind in opt._slot_kinds_in({})[0].items() if kind == "counter"}
        for name, a in arrays.items():
            rest = name[len(head) :] if name.startswith(head) else None
            if rest == "learning_rate" or (rest or "").startswith("param_groups.") and rest.endswith(".learning_rate"):
                what = "learning rate"
            elif rest == "iterations" or (rest or "").startswith("slots.") and rest.rpartition(".")[2] in counters:
                what = "step counter"
            else:
                continue
            if a is not None and a.ndim == 0 and a.dtype.kind in "fiu" and not a >= 0:
                problems.append(f"{name!r} is {a.item()} in {where}, but a {what} of {type(opt).__name__} must be >= 0")
    return problems


def _slots_not_built(arrays: dict, named: dict, optimizers: dict) -> tuple:
    """The file's slots for variables an optimizer has not seen yet (it took no step and had no ``build``), or
    has seen without the slot: the slots are those of the file's flags and hyperparameters (an ``SGD()``
    loading a momentum run's buffers, an ``Adam()`` an ``amsgrad`` run's ``v_max``), as ``torch.optim``'s
    ``load_state_dict`` takes its param groups' flags with the state.

    Returns ``(names, [(optimizer, {slot key: {slot name: array}}), ...], problems, missing, unused)``,
    ``unused`` the optimizers' slots that the file's flags do not call for (not missing).  The
    optimizer keeps them and the slots start from them when their variable is first seen, as a TensorFlow
    checkpoint restores slot variables created later and ``torch.optim``'s ``load_state_dict``
    restores an optimizer that took no step.  A counter that is not a 0-d int64 is a problem now; a
    slot's shape is checked when its variable is first seen; a slot name the optimizer does not have
    stays an extra entry; one it has but the file lacks for a key the file has (``v_max`` of an
    ``amsgrad`` Adam, NAdam's ``mu_product`` in an Adam file) is a missing name, as for a built optimizer:
    it had started from zero beside the restored moments, silently.
    """
    names, restore, problems, missing, unused = set(), [], [], [], set()
    for prefix, opt in optimizers.items():
        head = f"{prefix}.slots." if prefix else "slots."
        state = f"{prefix}." if prefix else ""
        kinds, kinds_of = opt._slot_kinds_in({n[len(state) :]: a for n, a in arrays.items() if n.startswith(state)})
        built = {key: slots for key, _, slots in opt._slots.values()}
        unused |= {f"{head}{key}.{slot}" for key, slots in built.items() for slot in slots if slot not in kinds_of(key)}
        found = {}
        for name, a in arrays.items():
            key, _, slot = name[len(head) :].rpartition(".")
            if not name.startswith(head) or name in named or not key or slot not in kinds:
                continue
            zero_d = {"counter": np.dtype(np.int64), "scalar": np.dtype(np.float64)}.get(kinds[slot])
            if zero_d is not None and (a.shape, a.dtype) != ((), zero_d):
                problems.append(
                    f"{name!r} has shape {tuple(a.shape)} {a.dtype} in the file, but () {zero_d} in the target"
                )
            elif zero_d is None and a.dtype.kind != "f":
                problems.append(f"{name!r} has dtype {a.dtype} in the file; an optimizer slot is a float")
            found.setdefault(key, {})[slot] = a
            names.add(name)
        missing += [
            f"{head}{key}.{slot}"
            for key, slots in found.items()
            for slot in kinds_of(key)
            if slot not in slots and slot not in built.get(key, ())
        ]
        in_file = {name[len(head) :].rpartition(".")[0] for name in arrays if name.startswith(head)}
        missing += [
            f"{head}{key}.{slot}"
            for key, slots in built.items()
            if key in in_file and key not in found
            for slot in kinds_of(key)
            if slot not in slots
        ]
        if found:
            restore.append((opt, found))
    return names, restore, problems, missing, unused


def _read(path) -> tuple:
    """``({name: array}, {name: why})``: the entries of a safetensors file, and those NumPy or tensorlib
    cannot hold (bfloat16, float8, uint64), each with the reason; a file that is no safetensors raises."""
    _safetensors_numpy()
    from safetensors import safe_open

    if os.path.isdir(path):
        raise IsADirectoryError(f"load_variables: {path!r} is a folder, not a checkpoint file")
    try:
        with safe_open(path, framework="np") as f:
            arrays, unreadable = {}, {}
            paired = _complex_names(f.metadata())
            for name in f.keys():
                try:
                    arrays[name] = f.get_tensor(name)
                    if name in paired:
                        arrays[name] = _from_pairs(arrays[name])
                    _dtypes.of_array(arrays[name].dtype)
                except (TypeError, ValueError, AttributeError) as e:
                    arrays.pop(name, None)
                    unreadable[name] = str(e)
    except OSError as e:
        # The OS's error keeps its type (a PermissionError was a ValueError about the file's format), and
        # names the function (safetensors' FileNotFoundError had no errno and named none).
        number = errno.ENOENT if isinstance(e, FileNotFoundError) else e.errno
        why = os.strerror(number) if number is not None else str(e)
        raise type(e)(number, f"load_variables: cannot read the checkpoint ({why})", path) from None
    except Exception as e:
        raise ValueError(f"load_variables: {path!r} is not a readable safetensors file ({e})") from None
    return arrays, unreadable


def _complex_names(metadata) -> frozenset:
    """The entries the header says are stored as (real, imaginary) pairs; a header whose list is no JSON list
    of names names none (each such entry then loads as the real array it is)."""
    try:
        names = json.loads((metadata or {}).get(_COMPLEX_KEY, "[]"))
    except ValueError:
        return frozenset()
    return frozenset(n for n in names if isinstance(n, str)) if isinstance(names, list) else frozenset()


def _from_pairs(a: np.ndarray) -> np.ndarray:
    """A complex array from its (real, imaginary) pairs along the last axis (float32 -> complex64)."""
    if a.dtype not in (np.float32, np.float64) or a.ndim == 0 or a.shape[-1] != 2:
        raise ValueError(
            f"the header marks it complex, but it holds {a.shape} {a.dtype}, not float32/float64 pairs along a last "
            "axis of 2"
        )
    return np.array(a, order="C").view(_dtypes.complex_dtype(a.dtype))[..., 0]
