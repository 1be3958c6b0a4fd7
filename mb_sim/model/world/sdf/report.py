"""What an SDF world holds that mb_sim does not simulate, said in one info line.

Two sources feed it: the elements no reader touched (`Doc.unread`: plugins, actors, the GUI,
physics engine settings, what cameras do not draw of a light or a material, ...), and notes
the readers add for what they read but cannot simulate (a joint type without an equivalent,
a sensor type, a point light) or map otherwise than Gazebo would (`mapped`: a second
friction coefficient, a link split into several bodies, a name made a ROS name). Both are grouped by kind, with a count and the first
elements' paths, in one line per world:

    world.sdf: not simulated: plugin x3 (world/plugin[gz::sim::systems::Physics], ...;
    Gazebo plugins); point light x1 (world/light[lamp]; point and spot lights are not
    drawn); ...; read otherwise than Gazebo reads it: static link of several collisions x1
    (...; one static body per collision)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from mb_sim.model.world.sdf.elements import Doc, Node

log = logging.getLogger("mb_sim")

WHY = {
    "plugin": "Gazebo plugins",
    "light": "not drawn",
    "gui": "Gazebo's GUI",
    "scene": "Gazebo's rendering",
    "physics": "dt and solver settings are the node's and the world's own",
    "actor": "animated actors are not simulated",
}
"""Words added after the kinds that need a reason."""


@dataclass
class Report:
    """The notes of one load: (kind, element path, words), and the documents read; `mapped`:
    those simulated otherwise than Gazebo would."""

    docs: list[Doc] = field(default_factory=list)
    notes: list[tuple[str, str, str]] = field(default_factory=list)
    mapped: list[tuple[str, str, str]] = field(default_factory=list)

    def note(self, node: Node, kind: str, words: str = "", mapped: bool = False) -> None:
        """Something read and not simulated (`mapped`: simulated otherwise than Gazebo
        would); `kind` groups it in the line."""
        (self.mapped if mapped else self.notes).append((kind, _where(node), words))

    def items(self) -> list[tuple[str, str, str]]:
        """The notes, then every unread element of every document, as (kind, path, words)."""
        out = list(self.notes)
        for doc in self.docs:
            for path, element in doc.unread():
                where = path if doc.label.startswith("<") or doc is self.docs[0] \
                    else f"{_short(doc.label)}: {path}"
                out.append((str(element.tag), where, WHY.get(str(element.tag), "")))
        return out

    def line(self, label: str) -> str | None:
        """The one info line (None when everything was simulated as Gazebo would)."""
        parts = [f"{head}: {text}" for head, text in (
            ("not simulated", _grouped(self.items())),
            ("read otherwise than Gazebo reads it", _grouped(self.mapped))) if text]
        return f"{label}: {'; '.join(parts)}" if parts else None

    def log(self, label: str) -> None:
        """Log the line (at info level), if there is one."""
        text = self.line(label)
        if text is not None:
            log.info("%s", text)


def _grouped(items: list[tuple[str, str, str]]) -> str:
    """`kind xN (first paths; words)` for each kind, joined by `; `."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for kind, where, words in items:
        groups.setdefault(kind, []).append((where, words))
    parts = []
    for kind, entries in groups.items():
        words = entries[0][1]
        shown = ", ".join(dict.fromkeys(w for w, _ in entries[:2]))
        more = ", ..." if len(entries) > 2 else ""
        parts.append(f"{kind} x{len(entries)} ({shown}{more}{'; ' + words if words else ''})")
    return "; ".join(parts)


def _where(node: Node) -> str:
    return node.path if not node.doc.note else f"{_short(node.doc.label)}: {node.path}"


def _short(label: str) -> str:
    """A file as the line names it: its last two path parts."""
    parts = label.replace("\\", "/").split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else label
