"""The house's import rule, read from the source with ``ast`` (docs/architecture.md).

Floors, lowest first; a module belongs to the floor of the longest prefix naming it::

    sim <- policy <- policy.bench <- kb <- wass_chat <- wass_chat.mcp_server <- tui <- wass_chat.cli

(a) A module never imports one on a higher floor.
(b) No import cycle between modules.
(c) Nothing outside ``wass_chat.cli`` imports it: the command line is the top floor, the
    console entry point, and the one place that opens the terminal app.

What counts as an import: every ``import x.y`` and ``from x import y`` in the file, at the top
or inside a function (a lazy import still runs, so it still counts), relative ones resolved,
those under ``if TYPE_CHECKING:`` included (an annotation naming a higher floor is still a
dependency on it: the lower floor declares a Protocol instead, as ``policy/learned/teacher.py``
does with ``CaseRetriever``), and ``importlib.import_module("...")`` with a literal name.
``from pkg import name`` points at the module ``pkg.name`` when there is one, else at ``pkg``.
``import a.b.c`` points at ``a.b.c`` only: the parent packages' ``__init__`` files it also runs
are not counted, or every package re-exporting its own modules would be a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FLOORS: tuple[str, ...] = (
    "sim",
    "policy",
    "policy.bench",
    "kb",
    "wass_chat",
    "wass_chat.mcp_server",
    "tui",
    "wass_chat.cli",
)
"""Lowest first. ``policy.bench`` (the harness that runs and compares schedulers) sits above
the schedulers; ``wass_chat.mcp_server`` (the MCP server) above the agent it serves, so nothing
else in ``wass_chat`` reaches it; ``wass_chat.cli`` above the terminal app it opens."""
TOP = "wass_chat.cli"
PACKAGES = ("sim", "policy", "kb", "wass_chat", "tui")


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` imports ``target`` at ``path:line``."""

    source: str
    target: str
    path: Path
    line: int
    type_checking: bool

    def where(self, root: Path) -> str:
        guard = " (under TYPE_CHECKING)" if self.type_checking else ""
        return f"{self.path.relative_to(root)}:{self.line}{guard}"


def find_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``packages`` under ``root``."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _import_nodes(tree: ast.Module, text: str) -> Iterable[tuple[ast.AST, bool]]:
    """Every import statement at any depth (functions, classes, ``if``, ``try``...), with
    whether it sits under ``if TYPE_CHECKING:`` (its ``else`` runs, so not that); and the
    ``import_module(...)`` calls when the text has any. Statements only: walking every
    expression of every file would double the test's time."""
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, guarded = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, guarded
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if not isinstance(children, list):
                continue
            inner = guarded or (field == "body" and _is_type_checking(node))
            pending.extend((child, inner) for child in children if isinstance(child, ast.AST))
    if "import_module(" in text or "__import__(" in text:
        yield from ((n, False) for n in ast.walk(tree) if isinstance(n, ast.Call))


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (
        test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
    ) == "TYPE_CHECKING"


def _imported_names(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names one node imports (relative ones made absolute)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = package[: len(package) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        return [origin] + [f"{origin}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        first = node.args[0]
        if name in ("import_module", "__import__") and isinstance(first, ast.Constant):
            return [str(first.value)]
    return []


def read_imports(root: Path, modules: dict[str, Path]) -> list[Import]:
    """Every import of every module that names one of ``modules``."""
    edges: list[Import] = []
    for module, path in modules.items():
        text = path.read_text(encoding="utf-8")
        is_package = path.name == "__init__.py"
        for node, guarded in _import_nodes(ast.parse(text, filename=str(path)), text):
            names = _imported_names(node, module, is_package)
            if isinstance(node, ast.ImportFrom):
                origin, *members = names
                # ``from pkg import mod`` imports the module; ``from mod import name``, mod.
                names = [m if m in modules else origin for m in members]
            for name in names:
                target = _known_prefix(name, modules)
                if target is not None and target != module:
                    line = getattr(node, "lineno", 0)
                    edges.append(Import(module, target, path, line, guarded))
    return edges


def _known_prefix(name: str, modules: dict[str, Path]) -> str | None:
    parts = name.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


def floor_of(module: str, floors: tuple[str, ...] = FLOORS) -> int:
    """Index in ``floors`` of the longest floor name that is ``module`` or a prefix of it."""
    best, length = -1, -1
    for index, floor in enumerate(floors):
        if (module == floor or module.startswith(floor + ".")) and len(floor) > length:
            best, length = index, len(floor)
    if best < 0:
        raise KeyError(f"{module} is on no floor: add its package to FLOORS")
    return best


def upward_imports(edges: list[Import], floors: tuple[str, ...] = FLOORS) -> list[Import]:
    return [e for e in edges if floor_of(e.target, floors) > floor_of(e.source, floors)]


def imports_of_top(edges: list[Import], top: str = TOP) -> list[Import]:
    """Imports of ``top`` from modules outside it."""
    inside = (top, top + ".")
    return [e for e in edges if e.target.startswith(inside) and not e.source.startswith(inside)]


def import_cycles(edges: list[Import]) -> list[list[Import]]:
    """One cycle (as its edges, in order) per strongly connected group of modules."""
    graph: dict[str, dict[str, Import]] = {}
    for edge in edges:
        graph.setdefault(edge.source, {}).setdefault(edge.target, edge)
    cycles = []
    for group in _strongly_connected(graph):
        if len(group) > 1:
            cycles.append(_cycle_through(min(group), graph, group))
    return sorted(cycles, key=lambda c: c[0].source)


def _strongly_connected(graph: dict[str, dict[str, Import]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on long import chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, {})))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                groups.append(group)
    return groups


def _cycle_through(
    start: str, graph: dict[str, dict[str, Import]], group: set[str]
) -> list[Import]:
    """The shortest path from ``start`` back to itself inside ``group`` (breadth first)."""
    came_from: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ, edge in sorted(graph.get(node, {}).items()):
                if succ not in group or succ in came_from:
                    continue
                came_from[succ] = edge
                if succ == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came_from[path[0].source])
                    return path
                following.append(succ)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a group of two or more always has one


# --- the house ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def house() -> list[Import]:
    return read_imports(ROOT, find_modules(ROOT, PACKAGES))


def test_every_package_of_the_house_has_a_floor() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "scripts"}
    assert packages == set(PACKAGES), (
        f"top-level packages {sorted(packages)} differ from the scanned {sorted(PACKAGES)}: "
        "give a new package its floor in FLOORS and PACKAGES (tests/test_imports.py) and in "
        "docs/architecture.md"
    )


def test_no_module_imports_a_higher_floor(house: list[Import]) -> None:
    found = [
        f"{e.where(ROOT)}: {e.source} (floor {FLOORS[floor_of(e.source)]}) imports {e.target} "
        f"(floor {FLOORS[floor_of(e.target)]})"
        for e in upward_imports(house)
        if not e.target.startswith(TOP)
    ]
    assert not found, (
        "upward imports (floors, lowest first: "
        + " <- ".join(FLOORS)
        + "):\n  "
        + "\n  ".join(found)
        + "\nFix: move the piece both need down to the lower floor (a constant, a dataclass, a "
        "pure function), or let the higher floor pass it in: the lower one declares a Protocol "
        "(see CaseRetriever in policy/learned/teacher.py). A lazy import does not fix it."
    )


def test_nothing_below_the_cli_imports_it(house: list[Import]) -> None:
    found = [f"{e.where(ROOT)}: {e.source} imports {e.target}" for e in imports_of_top(house)]
    assert not found, (
        f"{TOP} is the top floor (the console entry point); only its own modules import it:\n  "
        + "\n  ".join(found)
        + "\nFix: move the helper you need out of wass_chat/cli/ into the wass_chat module that "
        "owns its idea (as wass_chat/atomic_files.py holds write_atomic), and import it from both."
    )


def test_no_import_cycles(house: list[Import]) -> None:
    found = [
        " -> ".join([c[0].source] + [f"{e.target} [{e.where(ROOT)}]" for e in c])
        for c in import_cycles(house)
    ]
    assert not found, (
        "import cycles (lazy and TYPE_CHECKING imports count):\n  "
        + "\n  ".join(found)
        + "\nFix: move what the modules share (constants, dataclasses, the function both call) "
        "into a module below all of them, and import it from each. Importing inside a function "
        "only hides the cycle."
    )


# --- the checker itself, on a small house of its own ---------------------------------------


def _imports_of_house(root: Path, files: dict[str, str]) -> list[Import]:
    """Write ``files`` (path -> source) under ``root`` and read the imports of packages
    ``low`` and ``high``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return read_imports(root, find_modules(root, ("low", "high")))


def test_the_checker_sees_lazy_relative_and_type_checking_imports(tmp_path: Path) -> None:
    edges = _imports_of_house(
        tmp_path,
        {
            "low/__init__.py": "",
            "low/a.py": "def f():\n    from .b import g\n    return g\n",
            "low/b.py": "from low import a\n",
            "low/c.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import high.top\n"
                "else:\n    import low.b\n"
            ),
            "low/d.py": "import importlib\nimportlib.import_module('high.top')\n",
            "high/__init__.py": "",
            "high/top.py": "from ..low.a import f\nimport low.c, json\n",
        },
    )
    seen = {(e.source, e.target, e.line, e.type_checking) for e in edges}
    assert seen == {
        ("low.a", "low.b", 2, False),
        ("low.b", "low.a", 1, False),
        ("low.c", "high.top", 3, True),
        ("low.c", "low.b", 5, False),
        ("low.d", "high.top", 2, False),
        ("high.top", "low.a", 1, False),
        ("high.top", "low.c", 2, False),
    }
    floors = ("low", "high")
    assert {(e.source, e.target) for e in upward_imports(edges, floors)} == {
        ("low.c", "high.top"),
        ("low.d", "high.top"),
    }
    assert {(e.source, e.target) for e in imports_of_top(edges, "high")} == {
        ("low.c", "high.top"),
        ("low.d", "high.top"),
    }
    cycles = import_cycles(edges)
    # low.a -> low.b -> low.a (lazy) and high.top -> low.c -> high.top (TYPE_CHECKING).
    assert sorted([e.source for e in c] for c in cycles) == [
        ["high.top", "low.c"],
        ["low.a", "low.b"],
    ]


def test_from_a_package_import_a_module_points_at_the_module(tmp_path: Path) -> None:
    edges = _imports_of_house(
        tmp_path,
        {
            "low/__init__.py": "from low.inner import VALUE\n",
            "low/inner.py": "VALUE = 1\n",
            "low/user.py": "from low import inner, VALUE\nfrom . import inner as again\n",
        },
    )
    assert {(e.source, e.target) for e in edges} == {
        ("low", "low.inner"),
        ("low.user", "low.inner"),
        ("low.user", "low"),
    }
    assert import_cycles(edges) == []
