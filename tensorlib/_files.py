"""Atomic file writes, shared by checkpoints (``tl.save_variables``) and graph files (``f.save``).

A file is written to a temporary name in its target's folder, flushed to the disk and renamed over the
target, so a failure at any point leaves the old file as it was and no temporary behind.  The checks come
before anything is written: a folder where the file should be, or a folder that does not exist, is one
clear error naming the function; a symlink is followed (the file it names is replaced, as
``open(path, "w")`` writes it); a new file gets ``open``'s permissions, an overwritten one keeps its own.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
>>> target = resolve(path, "example", "notes")
>>> tmp = temporary(target, "example")
>>> with open(tmp, "w") as fh:
...     _ = fh.write("hello")
>>> commit([(tmp, target)])
>>> open(path).read()
'hello'
"""

from __future__ import annotations

import os
import stat
import uuid

# The mode each temporary was given (a writer that recreates its file, as safetensors' save_file does, resets it
# to mkstemp's 0o600, and commit gives it back).
_MODES: dict = {}


def fspath(path) -> str:
    """A path as a str: a ``str``, ``bytes`` or ``os.PathLike`` (a bytes path failed when joined with a str)."""
    return os.fsdecode(os.fspath(path))


def resolve(path, who: str, what: str) -> str:
    """The file a write to ``path`` replaces: symlinks followed, checked to be no folder and to have a folder."""
    path = fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{who}: {path!r} is a folder; give the {what}'s file name")
    if path.endswith((os.sep, os.altsep or os.sep)):  # realpath drops it: "ck/" wrote a file "ck", open() refuses
        raise IsADirectoryError(f"{who}: {path!r} ends with a separator, a folder's name; give the {what}'s file name")
    # Through a symlink: the rename replaces the file it names, as open(path, "w") writes it (renamed over
    # the link itself, the link became a file and its target kept the old contents).
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(f"{who}: {path!r} names the folder {target!r}; give the {what}'s file name")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):  # the error named the temporary file, not the target
        raise FileNotFoundError(f"{who}: the folder {folder!r} of {path!r} does not exist")
    return target


def temporary(target: str, who: str) -> str:
    """An empty temporary file beside ``target`` (a path from :func:`resolve`), with the permissions the
    target will have: ``open(path, "w")``'s for a new file (0o666 less the umask, not ``mkstemp``'s 0o600),
    the old file's own for an overwritten one (a file kept at 0o600 had become 0o644 at the next save)."""
    try:
        kept = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        kept = None
    tmp = os.path.join(os.path.dirname(target), f".tmp-{os.getpid()}-{uuid.uuid4().hex}-{os.path.basename(target)}")
    # Never more open than the target will be while it is written (only its owner may also write it).
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if kept is None else kept & 0o666 | 0o600))
    except OSError as e:  # a read-only folder or file system: the OS's error named the temporary, not the target
        why = os.strerror(e.errno) if e.errno else str(e)
        folder = os.path.dirname(target)
        raise type(e)(e.errno, f"{who}: cannot write a file in the folder {folder!r} ({why})", target) from None
    try:
        mode = os.stat(tmp).st_mode & 0o777 if kept is None else kept
        os.chmod(tmp, mode)
    except BaseException:
        os.remove(tmp)
        raise
    _MODES[tmp] = mode
    return tmp


def commit(pairs) -> None:
    """Rename each ``(temporary, target)`` over its target, in order, after their bytes reach the disk (after a
    power cut the target holds the old file or the new one, never a partial one), then the renames
    themselves.  On a failure, the temporaries not yet renamed are removed."""
    pairs = list(pairs)
    try:
        for tmp, target in pairs:
            # A writer that recreated the temporary (safetensors does) reset its mode: the target's own, or for a
            # new file the one temporary() gave it.
            mode = stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else _MODES.get(tmp)
            if mode is not None:
                os.chmod(tmp, mode)
            _fsync(tmp, os.O_RDONLY)
        for tmp, target in pairs:
            os.replace(tmp, target)
            _MODES.pop(tmp, None)
    except BaseException:
        discard(tmp for tmp, _ in pairs)
        raise
    for folder in {os.path.dirname(target) for _, target in pairs}:
        _fsync(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def discard(temporaries) -> None:
    """Remove the temporaries that still exist (after a failed write)."""
    for tmp in temporaries:
        _MODES.pop(tmp, None)
        if os.path.exists(tmp):
            os.remove(tmp)


def _fsync(path: str, flags: int) -> None:
    try:
        fd = os.open(path, flags)
    except OSError:  # a folder cannot be opened on Windows, where the rename is durable by itself
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
