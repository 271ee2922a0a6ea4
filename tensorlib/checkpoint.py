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

import os
import uuid

import numpy as np

from . import tree
from .tensor import Tensor, Variable

__all__ = ["save_variables", "load_variables"]


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


def _named(target, who: str, prefix: str = "") -> dict:
    """``{dotted name: Tensor}`` for a Module/optimizer (its ``variables``) or a nested dict/list/tuple."""
    if _holds_variables(target):
        target = target.variables
    out = {}
    for path, leaf in tree.flatten_with_path(target, is_leaf=_holds_variables)[0]:
        name = prefix
        for key in path:
            key = str(key)
            if "." in key:
                raise ValueError(f"{who}: key {key!r} under {name or '<root>'!r} contains '.', the name separator")
            name = f"{name}.{key}" if name else key
        if _holds_variables(leaf):
            for sub_name, t in _named(leaf, who, name).items():
                _add(out, sub_name, t, who)
        elif isinstance(leaf, Tensor):
            _add(out, name or "value", leaf, who)
        else:
            raise TypeError(
                f"{who}: entry {name or '<root>'!r} is a {type(leaf).__name__}; expected a Variable, "
                "Tensor, Module, optimizer, or a dict/list/tuple of them"
            )
    return out


def _add(named: dict, name: str, t: Tensor, who: str) -> None:
    # Two entries with one name ({"0": a, 0: b}) kept only the last: the checkpoint silently lost one.
    if name in named and named[name] is not t:
        raise ValueError(f"{who}: two entries are both named {name!r}; give them keys that differ as strings")
    named[name] = t


def save_variables(path, target) -> None:
    """Write every Variable/Tensor of ``target`` (a Module, an optimizer, or a nested dict/list of them) to ``path``.

    The write is atomic: a temporary file in the same folder is renamed over ``path``.
    """
    st = _safetensors_numpy()
    named = _named(target, "save_variables")
    # np.array, not ascontiguousarray, which would turn a 0-d value (a step counter) into 1-d.
    arrays = {name: np.array(t.numpy(), order="C") for name, t in named.items()}
    unstorable = {name: str(a.dtype) for name, a in arrays.items() if a.dtype.kind == "c"}
    if unstorable:
        raise TypeError(f"save_variables: the safetensors format has no complex dtypes; entries {unstorable}")
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    # os.open with mode 0o666, not mkstemp (0o600): the checkpoint gets the permissions the umask allows,
    # as a file written by open() would; safetensors may recreate the file, so the mode is set again after.
    tmp = os.path.join(folder, f".tmp-{os.getpid()}-{uuid.uuid4().hex}.safetensors")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        mode = os.stat(tmp).st_mode & 0o777
        st.save_file(arrays, tmp, metadata={"format": "tensorlib"})
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load_variables(path, target=None, strict: bool = True):
    """Read a checkpoint; assign it into ``target``'s Variables, or return ``{name: Tensor}`` without a target.

    Every entry is checked before any Variable changes: with ``strict=True``
    a name missing from the file or present in the file only is an error, as
    is a shape or dtype that differs; the one ``ValueError`` lists them all.
    With ``strict=False`` missing and extra names are allowed (shapes still
    must match).  Returns ``target``.
    """
    st = _safetensors_numpy()
    try:
        arrays = st.load_file(os.fspath(path))
    except FileNotFoundError:
        raise
    except Exception as e:
        raise ValueError(f"load_variables: {os.fspath(path)!r} is not a readable safetensors file ({e})") from None
    if target is None:
        from .ops.creation import tensor

        return {name: tensor(a) for name, a in arrays.items()}
    named = _named(target, "load_variables")
    problems = []
    missing = [n for n in named if n not in arrays]
    extra = [n for n in arrays if n not in named]
    if strict and missing:
        problems.append(f"missing from the file: {missing}")
    if strict and extra:
        problems.append(f"in the file but not in the target: {extra}")
    for name, t in named.items():
        if name not in arrays:
            continue
        a = arrays[name]
        if not isinstance(t, Variable):
            problems.append(f"{name!r} is a {type(t).__name__}, not a Variable, so it cannot be loaded into")
        elif tuple(a.shape) != tuple(t.shape) or a.dtype != t.dtype:
            problems.append(
                f"{name!r} has shape {tuple(a.shape)} {a.dtype} in the file, "
                f"but {tuple(t.shape)} {t.dtype} in the target"
            )
    if problems:
        raise ValueError(f"load_variables: {os.fspath(path)!r} does not fit the target: " + "; ".join(problems))
    for name, t in named.items():
        if name in arrays:
            t.assign(arrays[name])
    return target
