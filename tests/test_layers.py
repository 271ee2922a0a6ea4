"""The import layering of docs/architecture.md: every module imports only from its own layer or below.

Each module's imports (at the top and inside functions alike) are read from its source with ``ast``
and mapped to layers, bottom to top.  Package ``__init__`` files only re-export and are the top of
their package, so imports *from* them are not checked.  The one upward dependency the design
keeps, Tensor's operators calling ops, is closed in one place (ops/_methods installs them); any
other upward import found here is listed in KNOWN_UPWARD with the reason it is still there, and
the test fails both on a new one and on a listed one that is gone (so the list only shrinks).
"""
import ast
import fnmatch
import pathlib

import tensorlib

PACKAGE = pathlib.Path(tensorlib.__file__).parent

# Bottom to top; a module matches the first pattern that fits (fnmatch on the dotted name).
LAYERS = [
    ("dtypes", ["tensorlib.dtypes"]),
    ("backends", ["tensorlib.backends.*"]),
    ("tensor", ["tensorlib.tensor"]),
    ("tree", ["tensorlib.tree"]),
    ("dispatch", ["tensorlib.dispatch"]),
    ("op registry", ["tensorlib.ops.registry", "tensorlib.ops._shapes"]),
    ("gradient registry", ["tensorlib.grad.registry"]),
    ("op families", ["tensorlib.ops.explain_never_here"]),  # placeholder filled below
    ("tensor methods", ["tensorlib.ops._methods"]),
    ("gradient engine and APIs", ["tensorlib.grad.*"]),
    ("graph IR", ["tensorlib.graph.ir"]),
    ("graph tools", ["tensorlib.graph.passes", "tensorlib.graph.executor", "tensorlib.graph.serialize",
                     "tensorlib.graph.visualize"]),
    ("tracing", ["tensorlib.graph.tracing", "tensorlib.graph.*"]),
    ("tools and API", ["tensorlib.*", "tensorlib"]),
]
# ops/explain.py is introspection (it dry-runs ops): a tool, above the engine; every other ops module
# is an op family.
LAYERS[7] = ("op families", ["tensorlib.ops.[!e]*", "tensorlib.ops.e[!x]*", "tensorlib.ops.nn.*"])

# (importer, imported): upward imports still to remove, each with why it is there.
KNOWN_UPWARD = {
}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    for index, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns):
            return index
    raise AssertionError(f"{module} is in no layer of tests/test_layers.py")


def _imports(module: str, path: pathlib.Path, known: set) -> set:
    """The tensorlib modules ``module`` imports (``from . import x`` resolved to the module x when it is one)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tensorlib")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("tensorlib"):
                target = node.module
            else:
                continue
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
    return found


def _upward_imports() -> dict:
    modules = _modules()
    upward = {}
    for module, path in modules.items():
        if path.name == "__init__.py":
            continue
        for target in _imports(module, path, set(modules)):
            if target in modules and _layer(target) > _layer(module):
                upward[(module, target)] = f"{LAYERS[_layer(module)][0]} imports {LAYERS[_layer(target)][0]}"
    return upward


def test_every_module_is_in_a_layer():
    for module in _modules():
        _layer(module)


def test_no_module_imports_from_a_higher_layer():
    upward = _upward_imports()
    new = {pair: why for pair, why in upward.items() if pair not in KNOWN_UPWARD}
    assert not new, "upward imports (import from below, or move the code): " + "; ".join(
        f"{a} -> {b} ({why})" for (a, b), why in sorted(new.items()))


def test_the_known_upward_imports_are_still_there():
    gone = sorted(set(KNOWN_UPWARD) - set(_upward_imports()))
    assert not gone, f"remove these from KNOWN_UPWARD, they are fixed: {gone}"


def test_the_layers_are_in_order():
    names = [name for name, _ in LAYERS]
    assert names.index("tensor") < names.index("dispatch") < names.index("op registry") \
        < names.index("gradient registry") < names.index("op families") < names.index("gradient engine and APIs") \
        < names.index("graph IR") < names.index("graph tools") < names.index("tracing")
