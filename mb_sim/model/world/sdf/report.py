"""What an SDF world holds that mb_sim does not simulate, said in one info line.

Two sources feed it: the elements no reader touched (`Doc.unread`: sensors, plugins, lights,
actors, the GUI, the scene, visuals, physics engine settings, ...), and notes the readers add
for what they read but map otherwise than Gazebo would (a second friction coefficient, a joint
type without an equivalent, a link split into several bodies). Both are grouped by kind, with
a count and the first element's path, in one line per world:

    world.sdf: not simulated: plugin x3 (world/plugin[gz::sim::systems::Physics], ...),
    light x1 (world/light[sun]), visual x4 (only drawn; ...), ...
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from mb_sim.model.world.sdf.elements import Doc, Node

log = logging.getLogger("mb_sim")

WHY = {
    "visual": "only drawn; viewers draw the collision shapes",
    "plugin": "Gazebo plugins",
    "light": "not simulated",
    "gui": "Gazebo's GUI",
    "scene": "Gazebo's rendering",
    "physics": "dt and solver settings are the node's and the world's own",
    "actor": "animated actors are not simulated",
}
"""Words added after the kinds that need a reason."""


@dataclass
class Report:
    """The notes of one load: (kind, element path, words), and the documents read."""

    docs: list[Doc] = field(default_factory=list)
    notes: list[tuple[str, str, str]] = field(default_factory=list)

    def note(self, node: Node, kind: str, words: str = "") -> None:
        """Something read and not simulated as Gazebo would: `kind` groups it in the line."""
        self.notes.append((kind, _where(node), words))

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
        """The one info line (None when everything was simulated)."""
        groups: dict[str, list[tuple[str, str]]] = {}
        for kind, where, words in self.items():
            groups.setdefault(kind, []).append((where, words))
        if not groups:
            return None
        parts = []
        for kind, entries in groups.items():
            words = entries[0][1]
            shown = ", ".join(dict.fromkeys(w for w, _ in entries[:2]))
            more = ", ..." if len(entries) > 2 else ""
            parts.append(f"{kind} x{len(entries)} ({shown}{more}{'; ' + words if words else ''})")
        return f"{label}: not simulated: {'; '.join(parts)}"

    def log(self, label: str) -> None:
        """Log the line (at info level), if there is one."""
        text = self.line(label)
        if text is not None:
            log.info("%s", text)


def _where(node: Node) -> str:
    return node.path if not node.doc.note else f"{_short(node.doc.label)}: {node.path}"


def _short(label: str) -> str:
    """A file as the line names it: its last two path parts."""
    parts = label.replace("\\", "/").split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else label
