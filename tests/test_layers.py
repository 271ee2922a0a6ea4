"""The import layering of docs/architecture.md: every module imports only from its own layer or below.

Each module's imports (at the top and inside functions alike: a deferred import is still a
dependency) are read from its source with ``ast`` and mapped to layers, bottom to top.  The one
upward dependency the design keeps, Tensor's operators calling ops, has no import in tensor.py:
ops/_methods.py installs the operators and methods, once, above the op families.

Package ``__init__`` files only re-export (they are the top of their package), so imports *from*
them are not checked; importing a package (``from .. import graph``) counts as importing the top.
"""

import ast
import fnmatch
import pathlib

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
    ("tensorlib.ops.explain", "tools and API"),  # introspection: dry-runs ops in a mode of its own
    ("tensorlib.ops.table", "tools and API"),  # writes docs/ops_table.md from the registry and catalogue
    ("tensorlib.ops.*", "op families"),
    ("tensorlib.grad.*", "gradient engine and APIs"),
    ("tensorlib.graph.ir", "graph IR"),
    ("tensorlib.graph.passes", "graph tools"),
    ("tensorlib.graph.executor", "graph tools"),
    ("tensorlib.graph.serialize", "graph tools"),
    ("tensorlib.graph.visualize", "graph tools"),
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


def _imports(module: str, source: str, known: set) -> set:
    """The tensorlib modules that the (non-package) ``module`` imports; ``from . import x`` is the module x
    when x is one."""
    package = module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
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
