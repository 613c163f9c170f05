"""The house's import rule, read from the source with ``ast`` (docs/architecture.md).

Floors, lowest first (:data:`FLOORS`); a module belongs to the floor of the longest name there
that is it or a prefix of it. The outer floors are the packages::

    sim <- policy <- kb <- wass_chat <- wass_chat.mcp_server <- tui <- wass_chat.cli

and inside them the inner ones: ``policy.learned`` above the classic schedulers, the registry
above both; the ``wass_chat`` chain (``slurm <- sacct <- ... <- report <- agent``) and the
agent's inner order; the terminal app's non-UI modules, widgets, screens and app.

(a) A module never imports one on a higher floor.
(b) No import cycle between modules.
(c) No import cycle between packages: a package's own modules and its subpackages' may not
    import each other both ways (a module named in FLOORS counts as a package of its own).
(d) Nothing outside ``wass_chat.cli`` imports it: the command line is the top floor, the
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
    "policy.learned",
    "policy.registry",
    "policy.bench",
    "kb",
    "wass_chat",
    "wass_chat.slurm",
    "wass_chat.sacct",
    "wass_chat.learn",
    "wass_chat.fault_run",
    "wass_chat.analytics",
    "wass_chat.batch",
    "wass_chat.report",
    "wass_chat.agent.cancellation",
    "wass_chat.agent.safety",
    "wass_chat.agent.units",
    "wass_chat.answers",
    "wass_chat.agent.understanding",
    "wass_chat.agent.facts",
    "wass_chat.agent",
    "wass_chat.mcp_server",
    "tui",
    "tui.widgets",
    "tui.screens",
    "tui.app",
    "tui.screenshot",
    "tui.app_bench",
    "wass_chat.cli",
)
"""Lowest first. ``policy``: the classic schedulers, then the learned ones (and the learned
composites, ``lachesis``, ``rag_guarded``), then the registry that names them all, then the
bench harness that runs them. ``wass_chat``'s own modules (settings, the run log
and journal, the knowledge base's wiring into training) are its bottom floor; then Slurm, its
accounting, the knowledge gained from finished runs, the fault run (a benchmark of submission
and cache faults), analytics, the cluster what-ifs, the report, and the agent: its basics
(cancellation, the safety of quoted text, how answers print quantities); the answers, one
module per kind, and their checks against the facts (``wass_chat.answers``: they quote and
print with the agent's basics, and the facts are made in their shapes); then the agent's
understanding of a message, the facts, then the session level (its own modules). The MCP server
sits above the agent it serves, so nothing else in ``wass_chat`` reaches it. ``tui``: its
non-UI modules (stores, bridges, keys), widgets, screens, the app, the screenshot tool, the
app bench (drives the app headless); and
``wass_chat.cli`` above the terminal app it opens."""
CHAINS = ("wass_chat", "wass_chat.agent", "tui")
"""Packages whose every subpackage has its own floor in :data:`FLOORS`: a new one would
otherwise land on its parent's bottom floor, below the rooms it uses."""
EXCUSED: dict[tuple[str, str], str] = {}
"""Known upward imports, each ``(importing module, imported module or package)`` with the
reason it is not fixed yet. An excuse nothing needs any more fails the test: delete it."""
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


def is_excused(edge: Import, excused: dict[tuple[str, str], str] = EXCUSED) -> bool:
    """Whether ``edge`` is a known upward import (its target the excused module or inside it)."""
    return any(
        edge.source == source and (edge.target == target or edge.target.startswith(target + "."))
        for source, target in excused
    )


def room_of(module: str, package: str, floors: tuple[str, ...] = FLOORS) -> str:
    """The package ``module`` counts in for package cycles: its own package (``package``), or
    the floor naming it when that name is longer (a module with a floor of its own, such as
    ``tui.app``, is a room apart from the package it sits in)."""
    named = max(
        (f for f in floors if module == f or module.startswith(f + ".")), key=len, default=""
    )
    return named if len(named) > len(package) else package


def package_cycles(
    edges: list[Import], packages: set[str], floors: tuple[str, ...] = FLOORS
) -> list[list[Import]]:
    """One cycle per strongly connected group of rooms (:func:`room_of`), as module imports
    whose source and target rooms are the cycle's; ``packages``: the modules that are
    packages (an ``__init__.py``)."""

    def room(module: str) -> str:
        return room_of(module, module if module in packages else module.rpartition(".")[0], floors)

    between = [
        Import(room(e.source), room(e.target), e.path, e.line, e.type_checking)
        for e in edges
        if room(e.source) != room(e.target)
    ]
    return import_cycles(between)


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
def modules() -> dict[str, Path]:
    return find_modules(ROOT, PACKAGES)


@pytest.fixture(scope="module")
def house(modules: dict[str, Path]) -> list[Import]:
    return read_imports(ROOT, modules)


def test_every_package_of_the_house_has_a_floor() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "scripts"}
    assert packages == set(PACKAGES), (
        f"top-level packages {sorted(packages)} differ from the scanned {sorted(PACKAGES)}: "
        "give a new package its floor in FLOORS and PACKAGES (tests/test_imports.py) and in "
        "docs/architecture.md"
    )


def test_no_module_imports_a_higher_floor(house: list[Import]) -> None:
    found = list(
        dict.fromkeys(  # ``from m import a, b`` is one line
            f"{e.where(ROOT)}: {e.source} (floor {FLOORS[floor_of(e.source)]}) imports "
            f"{e.target} (floor {FLOORS[floor_of(e.target)]})"
            for e in upward_imports(house)
            if not e.target.startswith(TOP) and not is_excused(e)
        )
    )
    assert not found, (
        "upward imports (floors, lowest first: "
        + " <- ".join(FLOORS)
        + "):\n  "
        + "\n  ".join(found)
        + "\nFix: move the piece both need down to the lower floor (a constant, a dataclass, a "
        "pure function), or let the higher floor pass it in: the lower one declares a Protocol "
        "(see CaseRetriever in policy/learned/teacher.py). A lazy import does not fix it."
    )


def test_every_excuse_is_still_needed(house: list[Import]) -> None:
    upward = upward_imports(house)
    stale = [
        f"{source} -> {target}"
        for source, target in EXCUSED
        if not any(is_excused(e, {(source, target): ""}) for e in upward)
    ]
    assert not stale, "excused upward imports that no longer exist (delete them from "
    "EXCUSED in tests/test_imports.py):\n  " + "\n  ".join(stale)


def test_every_subpackage_of_a_chain_has_its_floor() -> None:
    missing = [
        f"{chain}.{init.parent.name}"
        for chain in CHAINS
        for init in sorted(ROOT.joinpath(*chain.split(".")).glob("*/__init__.py"))
        if f"{chain}.{init.parent.name}" not in FLOORS
    ]
    assert not missing, (
        f"subpackages with no floor of their own: {missing}. Place each in FLOORS "
        "(tests/test_imports.py) above what it imports and below what imports it, and in the "
        "floors table of docs/architecture.md"
    )


def test_nothing_below_the_cli_imports_it(house: list[Import]) -> None:
    found = [f"{e.where(ROOT)}: {e.source} imports {e.target}" for e in imports_of_top(house)]
    assert not found, (
        f"{TOP} is the top floor (the console entry point); only its own modules import it:\n  "
        + "\n  ".join(found)
        + "\nFix: move the helper you need out of wass_chat/cli/ into the wass_chat module that "
        "owns its idea (as sim/atomic_files.py holds write_atomic), and import it from both."
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


def test_no_cycles_between_packages(house: list[Import], modules: dict[str, Path]) -> None:
    packages = {m for m, path in modules.items() if path.name == "__init__.py"}
    found = [
        " -> ".join([c[0].source] + [f"{e.target} [{e.where(ROOT)}]" for e in c])
        for c in package_cycles([e for e in house if not is_excused(e)], packages)
    ]
    assert not found, (
        "import cycles between packages (a package's own modules and a subpackage's importing "
        "each other):\n  "
        + "\n  ".join(found)
        + "\nFix: move what the subpackage needs of its parent down into a module it owns or "
        "below it, or the module that reaches into the subpackage up into it (as the learned "
        "composites moved into policy/learned/). A module that assembles its subpackages (as "
        "tui/app.py does its screens) may instead get a floor of its own above them in FLOORS."
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


def test_any_break_of_the_chain_is_an_upward_import() -> None:
    """Every floor importing any higher one, at any distance: each such edge is reported, and
    each edge downward or within a floor is not."""
    edges = [
        Import(f"{low}.x", f"{high}.y", ROOT / "x.py", i * len(FLOORS) + j, False)
        for i, low in enumerate(FLOORS)
        for j, high in enumerate(FLOORS)
    ]
    reported = {(e.source, e.target) for e in upward_imports(edges)}
    expected = {
        (f"{low}.x", f"{high}.y") for i, low in enumerate(FLOORS) for high in FLOORS[i + 1 :]
    }
    assert reported == expected


def test_the_checker_reports_an_inner_chain_break_and_a_package_cycle(tmp_path: Path) -> None:
    edges = _imports_of_house(
        tmp_path,
        {
            "low/__init__.py": "",
            "high/__init__.py": "",
            # the chain low.base <- low.slurm <- low.report: slurm lazily imports the report
            "low/base.py": "",
            "low/slurm/__init__.py": "",
            "low/slurm/queue.py": "import low.base\ndef f():\n    from low.report import x\n",
            "low/report/__init__.py": "",
            "low/report/x.py": "from low import base\n",
            # a package cycle, no module cycle: low.runner -> low.tools.b, low.tools.a -> low.base
            "low/runner.py": "from low.tools import b\n",
            "low/tools/__init__.py": "",
            "low/tools/a.py": "from low import base\n",
            "low/tools/b.py": "",
        },
    )
    floors = ("low", "low.slurm", "low.report", "high")
    assert {(e.source, e.target, e.line) for e in upward_imports(edges, floors)} == {
        ("low.slurm.queue", "low.report.x", 3)
    }
    assert import_cycles(edges) == []
    packages = {"low", "high", "low.slurm", "low.report", "low.tools"}
    cycles = package_cycles(edges, packages, floors)
    assert [[(e.source, e.target) for e in c] for c in cycles] == [
        [("low", "low.tools"), ("low.tools", "low")]
    ]
    # low.runner named as a floor above low.tools is a room of its own: no cycle left.
    assert package_cycles(edges, packages, (*floors, "low.tools", "low.runner")) == []
    # an excuse silences exactly its import
    (queue,) = upward_imports(edges, floors)
    assert is_excused(queue, {("low.slurm.queue", "low.report"): "why"})
    assert not is_excused(queue, {("low.slurm.queue", "low.base"): "why"})
