"""The package has no import circles: every import of every module of mb_sim (at module level,
inside functions, under `if`), resolved to the module it loads, makes a graph without a cycle;
not even with the imports only a type checker reads (`if TYPE_CHECKING:`), which never run but
still tie two modules together.

And the layout stays readable (docs/architecture.md, "Layers"): no folder of the package holds
more than 15 modules, and each room of `mb_sim/ros` imports only the rooms its docstring's
"May import:" names."""

from __future__ import annotations

import ast
import itertools
import re
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


def _nodes(tree: ast.AST, type_checking: bool = False) -> Iterator[ast.AST]:
    """Every node of `tree` but those under `if TYPE_CHECKING:` (with `type_checking`: every
    node)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not type_checking and isinstance(child, ast.If) and _type_checking(child):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module of the package that importing `name` loads last (a name that is not a
    module is an attribute of the longest prefix that is)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, known: dict[str, Path],
            type_checking: bool = False) -> dict[str, int]:
    """{module of the package: line of its first import} of module `name` (with
    `type_checking`, also the imports under `if TYPE_CHECKING:`)."""
    out: dict[str, int] = {}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _nodes(ast.parse(path.read_text(encoding="utf-8")), type_checking):
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


def graph(root: Path = PACKAGE, type_checking: bool = False) -> dict[str, dict[str, int]]:
    known = modules(root)
    return {name: imports(name, path, known, type_checking) for name, path in known.items()}


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


def test_no_circle_even_through_imports_for_type_checkers() -> None:
    edges = graph(type_checking=True)
    circle = find_circle(edges)
    assert circle is None, f"import circle: {describe(circle, edges)}"


def test_the_strict_check_follows_imports_for_type_checkers(tmp_path: Path) -> None:
    pkg = tmp_path / "mb_sim"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from mb_sim import b\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mb_sim.a import A\n")
    assert find_circle(graph(pkg)) is None
    assert find_circle(graph(pkg, type_checking=True)) == ["mb_sim.a", "mb_sim.b", "mb_sim.a"]


MAX_MODULES = 15
"""The most modules one folder holds (its __init__.py not counted)."""

LARGER_TODAY = {"mb_sim": 16, "mb_sim/model": 25, "mb_sim/sim": 18}
"""Folders of the library that held more than MAX_MODULES before the rule: they may not grow
until they are divided."""


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = {}
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]:
        name = str(folder.relative_to(PACKAGE.parent))
        count = sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")
        if count > max(MAX_MODULES, LARGER_TODAY.get(name, 0)):
            crowded[name] = count
    assert not crowded, f"folders of more than {MAX_MODULES} modules: {crowded}"
    assert sum(1 for p in (PACKAGE / "ros").glob("*.py")) <= 3  # sim_node, __init__ and rooms


MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 800


def test_no_function_or_module_is_too_long_to_read() -> None:
    """Every function of the library at most 80 lines, every module at most 800."""
    long_functions, long_modules = [], []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            long_modules.append(f"{path.relative_to(PACKAGE.parent)} ({text.count(chr(10))})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long_functions.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} "
                                          f"{node.name} ({lines})")
    assert not long_modules, f"modules over {MAX_MODULE_LINES} lines: {long_modules}"
    assert not long_functions, f"functions over {MAX_FUNCTION_LINES} lines: {long_functions}"


ROS = "mb_sim.ros"


def rooms(root: Path = PACKAGE) -> dict[str, set[str]]:
    """{room of mb_sim/ros: the rooms its docstring's "May import:" paragraph names}."""
    names = {p.name for p in (root / "ros").iterdir() if (p / "__init__.py").is_file()}
    allowed = {}
    for room in names:
        text = ast.get_docstring(ast.parse((root / "ros" / room / "__init__.py").read_text()))
        assert text and "May import:" in text, f"mb_sim/ros/{room}/__init__.py: no 'May import:'"
        may = text.split("May import:", 1)[1]
        words = set(re.findall(r"[a-z_]+", may.replace(f"{ROS}.", " ")))
        allowed[room] = (words & names) | {room}
    return allowed


def room_of(module: str) -> str | None:
    """The room of a module of mb_sim/ros (None: the top, sim_node and the package itself)."""
    parts = module.split(".")
    return parts[2] if module.startswith(f"{ROS}.") and len(parts) > 3 else None


def test_each_room_of_ros_imports_only_what_its_docstring_allows() -> None:
    allowed = rooms()
    assert {"process", "wire", "topics", "services", "demos"} <= set(allowed)
    edges = graph(type_checking=True)
    wrong = []
    for module, targets in sorted(edges.items()):
        room = room_of(module)
        if room is None and module.startswith(f"{ROS}.") and module.count(".") == 2:
            continue  # a room's own __init__ (mb_sim.ros.<room>)
        for target, line in sorted(targets.items()):
            to = room_of(target)
            if target.startswith(ROS) and room is None and module.startswith(ROS):
                continue  # the top (sim_node) wires every room
            if target.startswith(ROS) and room is not None and to not in allowed[room]:
                wrong.append(f"{module} (line {line}) imports {target}")
    assert not wrong, "imports a room's docstring does not allow:\n" + "\n".join(wrong)


def test_only_the_rclpy_free_rooms_are_imported_from_outside_ros() -> None:
    """The replay, the viewer's command, the warm-up, the sweeps and the docs' tables run
    without ROS: outside mb_sim/ros only modules that import no rclpy are imported."""
    edges = graph()
    outside = {t for m, ts in edges.items() if not m.startswith(ROS) for t in ts
               if t.startswith(f"{ROS}.")}
    assert outside, "nothing outside mb_sim/ros imports it: the check looks at nothing"
    for module in sorted(outside):
        path = modules()[module]
        names = [a.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Import)
                 for a in n.names]
        names += [n.module or "" for n in ast.walk(ast.parse(path.read_text()))
                  if isinstance(n, ast.ImportFrom)]
        assert not any(n.split(".")[0] == "rclpy" for n in names), f"{module} imports rclpy"
