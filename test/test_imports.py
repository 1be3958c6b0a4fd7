"""The package has no import circles: every import of every module of mb_sim (at module level,
inside functions, under `if`), resolved to the module it loads, makes a graph without a cycle.

Imports only a type checker reads (`if TYPE_CHECKING:`) are left out: they never run."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mb_sim"


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module in `path` of the package in folder `root`."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """{dotted name: file} of every module of the package."""
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree` but those under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module of the package that importing `name` loads last (a name that is not a
    module is an attribute of the longest prefix that is)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """{module of the package: line of its first import} of module `name`."""
    out: dict[str, int] = {}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _nodes(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        for target in targets:
            resolved = _resolve(target, known)
            if resolved is not None and resolved != name:
                out.setdefault(resolved, node.lineno)
    return out


def graph(root: Path = PACKAGE) -> dict[str, dict[str, int]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def find_circle(edges: dict[str, dict[str, int]]) -> list[str] | None:
    """A cycle of the graph as [a, b, ..., a], or None (depth-first, white/grey/black)."""
    state: dict[str, int] = {}
    for start in sorted(edges):
        if state.get(start):
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                path = [n for n, _ in stack]
                return [*path[path.index(child):], child]
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(sorted(edges.get(child, {})))))
    return None


def describe(circle: list[str], edges: dict[str, dict[str, int]]) -> str:
    steps = (f"{a} (line {edges[a][b]})" for a, b in itertools.pairwise(circle))
    return " -> ".join(steps) + f" -> {circle[-1]}"


def test_the_package_has_no_import_circles() -> None:
    edges = graph()
    assert len(edges) > 100 and "mb_sim.sim.data" in edges["mb_sim.doc_tables"]
    circle = find_circle(edges)
    assert circle is None, f"import circle: {describe(circle, edges)}"


def test_the_check_finds_a_circle_through_a_function_level_import(tmp_path: Path) -> None:
    pkg = tmp_path / "mb_sim"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from mb_sim.sub import b\n")
    (pkg / "sub" / "b.py").write_text("import os\n\n\ndef f():\n    from .c import g\n")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mb_sim.sub.b\n"
        "def g():\n    import mb_sim.a\n")
    edges = graph(pkg)
    assert edges["mb_sim.sub.b"] == {"mb_sim.sub.c": 5}
    assert edges["mb_sim.sub.c"] == {"mb_sim.a": 5}
    circle = find_circle(edges)
    assert circle == ["mb_sim.a", "mb_sim.sub.b", "mb_sim.sub.c", "mb_sim.a"]
    assert describe(circle, edges) == ("mb_sim.a (line 1) -> mb_sim.sub.b (line 5) -> "
                                       "mb_sim.sub.c (line 5) -> mb_sim.a")
    (pkg / "sub" / "c.py").write_text("def g():\n    pass\n")
    assert find_circle(graph(pkg)) is None
