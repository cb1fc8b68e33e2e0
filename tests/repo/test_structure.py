"""The library's shape, checked from its source: imports run down the layers and never in a circle, and no
function grows past one screen.

Imports are read with ``ast`` (module-level and function-level alike: an import inside a function to dodge a
circle is still a circle). ``from wirespeed.x import y`` is an edge to ``wirespeed.x.y`` when that is a module,
else to ``wirespeed.x``. Importing a submodule also runs its package's ``__init__``; that implicit step is not an
edge (every package would otherwise be a circle with its own ``__init__`` re-exports).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from test_import_purity import HEAVY

COMPONENTS = Path(__file__).resolve().parents[2] / "components"
PACKAGE = COMPONENTS / "wirespeed"

# Lowest first. A module may import from its own layer or any below it, never from one above. Keyed by the first
# name under ``wirespeed`` (a subpackage or a top-level module). The pure core (catalog, sizing, profile, rules,
# manifests, userdata, and the profiles and workload they build on) fills the layers up to PURE_CORE_TOP, so it
# imports nothing of the Pulumi components, policy pack, generators or front ends above it.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "__init__",
            "deadline",
            "errors",
            "io_limits",
            "names",
            "problems",
            "message_table",
            "values",
            "install_hint",
            "references",
            "yaml_input",
            "yaml_text",
        }
    ),
    frozenset({"catalog"}),
    frozenset({"sizing"}),
    frozenset({"profile", "workload"}),
    frozenset({"rules", "profiles"}),
    frozenset({"manifests", "userdata"}),
    frozenset({"check", "policy_pack", "tables", "tuning_paths", "kubernetes", "drift", "pulumi_inputs"}),
    frozenset({"azure", "aws"}),
    frozenset({"program", "terraform", "numbers", "rule_catalog", "audit", "measure", "plot", "provider"}),
    frozenset({"cli", "__main__"}),
)
LAYER_OF = {name: index for index, names in enumerate(LAYERS) for name in names}
PURE_CORE_TOP = LAYER_OF["manifests"]
assert LAYER_OF["userdata"] == PURE_CORE_TOP

MAX_FUNCTION_LINES = 80


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(COMPONENTS).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _imported(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(wirespeed module imported, line) for every import statement anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base, node.lineno)
                     for alias in node.names]  # fmt: skip
        else:
            continue
        for name, line in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                yield name, line


EDGES: dict[str, dict[str, int]] = {
    module: {target: line for target, line in _imported(module, path)} for module, path in MODULES.items()
}


def _imported_packages(path: Path) -> Iterator[tuple[str, int]]:
    """(top-level package, line) of every absolute import anywhere in the file, function level included."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name.partition(".")[0], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.partition(".")[0], node.lineno


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_part_of_the_library_has_a_layer() -> None:
    unplaced = sorted({_top(m) for m in MODULES} - set(LAYER_OF))
    assert unplaced == [], f"add {unplaced} to LAYERS in {Path(__file__).name}"


def test_no_import_runs_from_a_lower_layer_to_a_higher_one() -> None:
    upward = [
        f"{MODULES[module].relative_to(COMPONENTS.parent)}:{line} imports {target} "
        f"(layer {LAYER_OF[_top(module)]} {_top(module)} -> layer {LAYER_OF[_top(target)]} {_top(target)})"
        for module, targets in EDGES.items()
        for target, line in targets.items()
        if LAYER_OF.get(_top(target), 0) > LAYER_OF.get(_top(module), len(LAYERS))
    ]
    assert upward == [], "imports against the layers:\n" + "\n".join(upward)


def test_the_pure_core_imports_no_pulumi_or_cloud_sdk_even_inside_a_function() -> None:
    """tests/repo/test_import_purity.py imports the core and sees what loads; an import inside a function runs only when
    called, so this reads the source for those too."""
    heavy = [
        f"{path.relative_to(COMPONENTS.parent)}:{line} imports {package}"
        for module, path in MODULES.items()
        if LAYER_OF.get(_top(module), len(LAYERS)) <= PURE_CORE_TOP
        for package, line in _imported_packages(path)
        if package in HEAVY
    ]
    assert heavy == [], "the pure core imports a Pulumi or cloud SDK:\n" + "\n".join(heavy)


def _cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)

    for root in edges:
        if root in index:
            continue
        visit(root)
        work = [(root, iter(sorted(edges[root])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    visit(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while component[-1:] != [node]:
                    component.append(stack.pop())
                    on_stack.discard(component[-1])
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_between_modules() -> None:
    described = [
        " <-> ".join(cycle)
        + ": "
        + "; ".join(f"{m} imports {t} (line {EDGES[m][t]})" for m in cycle for t in sorted(EDGES[m]) if t in cycle)
        for cycle in _cycles(EDGES)
    ]
    assert described == [], "import circles:\n" + "\n".join(described)


def test_the_circle_finder_finds_circles_and_only_circles() -> None:
    edges = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}, "e": {"d": 1}, "f": {"f": 1}}
    assert _cycles(edges) == [["a", "b", "c"]]


def _functions(root: Path) -> Iterator[tuple[str, int]]:
    """(where, lines) of every function and method below ``root``, def line to the last line of its body."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("test_"):
                owner, names = parents.get(node), [node.name]
                while owner is not None:
                    if isinstance(owner, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                        names.insert(0, owner.name)
                    owner = parents.get(owner)
                where = f"{path.relative_to(root.parent)}:{node.lineno} {'.'.join(names)}"
                yield where, (node.end_lineno or node.lineno) - node.lineno + 1


def test_no_function_in_components_is_longer_than_80_lines() -> None:
    long = [f"{where} is {lines} lines" for where, lines in _functions(COMPONENTS) if lines > MAX_FUNCTION_LINES]
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines (split them by step):\n" + "\n".join(long)


def test_a_function_counts_from_its_def_line_to_the_last_line_of_its_body(tmp_path: Path) -> None:
    source = (
        "@decorator\n"  # not counted: the def line is the first
        + "def fits(\n    a: int,\n) -> None:\n"
        + "    x = 1\n" * 77
        + "class C:\n    def long(self):\n"
        + "        x = 1\n" * 80
        + "        def inner():\n"
        + "            x = 1\n" * 2
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(source)
    assert sorted((where.split(" ")[1], lines) for where, lines in _functions(tmp_path / "src")) == [
        ("C.long", 84),
        ("C.long.inner", 3),
        ("fits", 80),
    ]
