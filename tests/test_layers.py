"""The import layering of docs/architecture.md: every module imports only from its own layer or below.

Each module's imports (at the top and inside functions alike: a deferred import is still a
dependency) are read from its source with ``ast`` and mapped to layers, bottom to top.  The one
upward dependency the design keeps, Tensor's operators calling ops, has no import in tensor.py:
ops/_methods.py installs the operators and methods, once, above the op families.

Package ``__init__`` files only re-export (they are the top of their package), so imports *from*
them are not checked by the first test; importing a package (``from .. import graph``) counts as
importing the top.  But Python runs a package's ``__init__`` before any module of the package is
imported, so what an ``__init__`` imports at import time is loaded by everyone who imports one of
its modules: the second check holds every ``__init__`` to the layer of its lowest importer from
outside (``grad/__init__`` and ``ops/__init__`` load only their registries and re-export the rest
lazily), and a fresh interpreter confirms it for the lowest layers.
"""

import ast
import fnmatch
import functools
import json
import pathlib
import subprocess
import sys

import pytest

import tensorlib

PACKAGE = pathlib.Path(tensorlib.__file__).parent

# Bottom to top (docs/architecture.md draws them).
LAYERS = [
    "dtypes",
    "backends",
    "tensor",
    "tree",
    "dispatch",
    "op registry",
    "gradient registry",
    "op families",
    "tensor methods",
    "gradient engine and APIs",
    "graph IR",
    "graph tools",
    "tracing",
    "control flow ops",
    "tools and API",
]
# Where each module sits: the first pattern (fnmatch on the dotted name) that fits decides.
PLACEMENT = [
    ("tensorlib.dtypes", "dtypes"),
    ("tensorlib._files", "dtypes"),  # atomic file writes: the standard library only
    ("tensorlib.backends.*", "backends"),  # kernels are leaves: raw arrays in, raw arrays out
    ("tensorlib.tensor", "tensor"),  # Tensor, Variable, TensorSpec, Node: data
    ("tensorlib.tree", "tree"),
    ("tensorlib.dispatch", "dispatch"),
    ("tensorlib.ops.registry", "op registry"),
    ("tensorlib.ops._shapes", "op registry"),
    ("tensorlib.grad.registry", "gradient registry"),
    ("tensorlib.ops._methods", "tensor methods"),  # closes the one kept loop: Tensor operators call ops
    # cond/while_loop/scan trace their branch and body functions into subgraphs (as JAX's lax control
    # flow sits above its tracing): ops, but of the layer above tracing.
    ("tensorlib.ops.control_flow", "control flow ops"),
    ("tensorlib.ops._explain", "tools and API"),  # introspection: dry-runs ops in a mode of its own
    ("tensorlib.ops.table", "tools and API"),  # writes docs/ops_table.md from the registry and catalogue
    ("tensorlib.ops.*", "op families"),
    ("tensorlib.grad.*", "gradient engine and APIs"),
    ("tensorlib.graph.ir", "graph IR"),
    ("tensorlib.graph.passes", "graph tools"),
    ("tensorlib.graph.executor", "graph tools"),
    ("tensorlib.graph.serialize", "graph tools"),
    ("tensorlib.graph.visualize", "graph tools"),
    ("tensorlib.graph.dry_run", "graph tools"),  # the dry run of eval_shape, explain and scan's empty stacks
    ("tensorlib.graph.tracing", "tracing"),
    ("tensorlib.*", "tools and API"),
    ("tensorlib", "tools and API"),
]


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    for pattern, layer in PLACEMENT:
        if fnmatch.fnmatchcase(module, pattern):
            return LAYERS.index(layer)
    raise AssertionError(f"{module} is in no layer of tests/test_layers.py")


def _imports(module: str, source: str, known: set, is_package: bool = False, eager_only: bool = False) -> set:
    """The tensorlib modules that ``module`` imports (with ``eager_only``, only those it imports when it is
    imported, not inside functions); ``from . import x`` is the module x when x is one."""
    return set(_imports_once(module, source, frozenset(known), is_package, eager_only))


@functools.lru_cache(maxsize=None)
def _imports_once(module: str, source: str, known: frozenset, is_package: bool, eager_only: bool) -> frozenset:
    """:func:`_imports`, read once per source: both checks read every module, and the ``__init__`` check reads
    each ``__init__`` again for every import that runs it (walking the syntax trees took 9 s a test here)."""
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    todo = [ast.parse(source)]
    while todo:
        node = todo.pop()
        if eager_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(node))
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
    return frozenset(found)


def _upward_imports() -> dict:
    modules = _modules()
    upward = {}
    for module, path in modules.items():
        if path.name == "__init__.py":
            continue
        for target in _imports(module, path.read_text(), set(modules)):
            if target in modules and _layer(target) > _layer(module):
                upward[(module, target)] = f"{LAYERS[_layer(module)]} imports {LAYERS[_layer(target)]}"
    return upward


def test_every_module_is_in_a_layer():
    for module in _modules():
        _layer(module)


def test_no_module_imports_from_a_higher_layer():
    upward = _upward_imports()
    assert not upward, "upward imports (import from below, or move the code down): " + "; ".join(
        f"{a} -> {b} ({why})" for (a, b), why in sorted(upward.items())
    )


def test_imports_are_found_at_the_top_and_inside_functions():
    source = "from .tensor import Tensor\nfrom . import ops\n\ndef f():\n    from .graph.ir import Graph\n"
    found = _imports("tensorlib.dispatch", source, set(_modules()))
    assert found == {"tensorlib.tensor", "tensorlib.ops", "tensorlib.graph.ir"}
    assert _layer("tensorlib.dispatch") < _layer("tensorlib.graph.ir") < _layer("tensorlib.ops")


def test_every_placement_names_a_layer():
    assert {layer for _, layer in PLACEMENT} == set(LAYERS)


# ---------------------------------------------------------------- package __init__ files


def _eager_imports(package: str, modules: dict) -> set:
    """The tensorlib modules that ``package``'s ``__init__`` imports when it runs."""
    return _imports(package, modules[package].read_text(), set(modules), is_package=True, eager_only=True)


def _is_package(module: str) -> bool:
    return _modules()[module].name == "__init__.py"


def _packages_run(target: str, importer: str, modules: dict) -> list:
    """The packages whose ``__init__`` runs when ``importer`` imports ``target``: the ones on ``target``'s
    path that do not hold ``importer`` (those already run), except the root (``import tensorlib`` is
    the entry point: it loads everything, by design)."""
    parts = target.split(".")
    found = []
    for end in range(2, len(parts) + 1):
        package = ".".join(parts[:end])
        if package in modules and modules[package].name == "__init__.py":
            if importer != package and not importer.startswith(package + "."):
                found.append(package)
    return found


def _init_loads(package: str, modules: dict, seen=None) -> tuple:
    """(highest layer, the module in it) that running ``package``'s ``__init__`` loads."""
    seen = set() if seen is None else seen
    seen.add(package)
    best = (-1, None)
    for target in _eager_imports(package, modules):
        if target not in modules:
            continue
        candidates = [] if modules[target].name == "__init__.py" else [(_layer(target), target)]
        for inner in _packages_run(target, package, modules):
            if inner not in seen:
                candidates.append(_init_loads(inner, modules, seen))
        best = max([best] + candidates, key=lambda c: c[0])
    return best


def test_package_inits_load_nothing_above_the_modules_that_import_from_them():
    modules = _modules()
    bad = []
    for module, path in modules.items():
        if path.name == "__init__.py":
            continue
        for target in _imports(module, path.read_text(), set(modules)):
            for package in _packages_run(target, module, modules):
                layer, culprit = _init_loads(package, modules)
                if layer > _layer(module):
                    bad.append(
                        f"{module} ({LAYERS[_layer(module)]}) imports {target}, which runs {package}/__init__ "
                        f"first; it loads {culprit} ({LAYERS[layer]})"
                    )
    assert not bad, "package __init__ files loading higher layers (re-export those names lazily): " + "; ".join(
        sorted(set(bad))
    )


def test_the_init_check_sees_what_an_init_loads():
    modules = _modules()
    assert _packages_run("tensorlib.grad.registry", "tensorlib.ops.math", modules) == ["tensorlib.grad"]
    assert _packages_run("tensorlib.ops.registry", "tensorlib.ops.math", modules) == []  # already running
    assert _packages_run("tensorlib.ops.nn.conv", "tensorlib.nn", modules) == ["tensorlib.ops", "tensorlib.ops.nn"]
    source = "from .registry import get\n\ndef f():\n    from .api import grad\n"
    assert _imports("tensorlib.grad", source, set(modules), is_package=True, eager_only=True) == {
        "tensorlib.grad.registry"
    }
    assert _imports("tensorlib.grad", source, set(modules), is_package=True) == {
        "tensorlib.grad.registry",
        "tensorlib.grad.api",
    }
    # graph/__init__ installs the Graph's methods from the tools and tracing: nothing below imports graph.
    assert _init_loads("tensorlib.graph", modules)[0] == LAYERS.index("tracing")


# The lowest layers, where an __init__ loading too much would close an import circle.
FRESH = ["tensorlib.dispatch", "tensorlib.ops.registry", "tensorlib.grad.registry", "tensorlib.ops.math"]
_FRESH_IMPORT = """
import importlib, json, sys, types
loaded = {}
for name in sys.argv[2:]:
    for m in [m for m in sys.modules if m == "tensorlib" or m.startswith("tensorlib.")]:
        del sys.modules[m]
    root = types.ModuleType("tensorlib")  # an empty root: what importing `name` alone loads
    root.__path__ = [sys.argv[1]]
    sys.modules["tensorlib"] = root
    importlib.import_module(name)
    loaded[name] = sorted(m for m in sys.modules if m.startswith("tensorlib."))
print(json.dumps(loaded))
"""


def test_importing_a_low_module_in_a_fresh_interpreter_loads_only_its_layer_and_below():
    out = subprocess.run([sys.executable, "-c", _FRESH_IMPORT, str(PACKAGE), *FRESH], capture_output=True, text=True)
    assert out.returncode == 0, f"importing {FRESH} one at a time in a fresh interpreter failed:\n{out.stderr}"
    loaded = json.loads(out.stdout)
    assert "tensorlib.grad.registry" in loaded["tensorlib.grad.registry"]
    for name, found in loaded.items():
        above = [m for m in found if not _is_package(m) and _layer(m) > _layer(name)]
        assert not above, f"importing {name} ({LAYERS[_layer(name)]}) loads {above}"
    assert "tensorlib.grad.api" not in loaded["tensorlib.ops.math"]


def test_the_lazy_package_namespaces_give_every_exported_name():
    import tensorlib.grad.backprop
    import tensorlib.ops._explain
    import tensorlib.ops.math

    assert all(getattr(tensorlib.grad, name) is not None for name in tensorlib.grad.__all__)
    assert all(getattr(tensorlib.ops, name) is not None for name in tensorlib.ops.__all__)
    assert tensorlib.ops.explain is tensorlib.ops._explain.explain  # the function, not a module of that name
    assert tensorlib.ops.math is sys.modules["tensorlib.ops.math"]
    assert tensorlib.grad.GradientTape is sys.modules["tensorlib.grad.tape"].GradientTape
    assert tensorlib.grad.backprop is sys.modules["tensorlib.grad.backprop"].backprop  # the function, as before
    for package in (tensorlib.grad, tensorlib.ops):
        with pytest.raises(AttributeError, match=rf"^module '{package.__name__}' has no attribute 'no_such_name'$"):
            package.no_such_name  # noqa: B018
