"""Griffe extension for the docs site: show docstrings' doctest examples as Python code blocks.

Docstrings hold runnable ``>>>`` examples (the test suite runs them); as plain
Markdown their output lines (``[1.0, 2.0]``) would read as link references.
"""

from __future__ import annotations

import griffe


def fence_doctests(text: str) -> str:
    """Wrap each run of ``>>>``/``...`` lines and their output in a ```` ```pycon ```` fence."""
    out, in_block, indent = [], False, ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if not in_block and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            in_block = True
        elif in_block and (not stripped or not line.startswith(indent)):
            out.append(f"{indent}```")
            in_block = False
        out.append(line)
    if in_block:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
