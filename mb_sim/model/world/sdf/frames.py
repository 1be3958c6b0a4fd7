"""SDF frames and the poses between them (SDFormat's pose frame semantics).

Each model, and the world, is a scope of named frames: its links, joints, `<frame>`s and
nested models, and its own frame (`__model__` for a model, `world` for the world). A frame's
`<pose>` is expressed in the frame its `relative_to` attribute names, else in the element's
default frame:

| element | default frame of its pose |
| --- | --- |
| link, nested model, model in the world | the scope's own frame (`__model__`, `world`) |
| joint | its child link |
| frame | the frame its `attached_to` names, else the scope's own frame |
| collision, visual, inertial (not frames of the scope) | their link |

A name may reach into nested models with `::` (``arm::gripper::palm``, SDF 1.8). `Scope.pose`
resolves a frame to the scope's own frame by following these references, composing the poses
on the way (a reference cycle is an error naming the elements). A model's world pose is the
world scope's pose of its name; a link's is that composed with its model scope's pose of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mb_sim.model.world.sdf.elements import Node, Pose


@dataclass
class Frame:
    """A named frame of a scope: its pose as written, the frame that pose is in by default,
    the element (for errors), and for a nested model its own scope."""

    pose: Pose
    default: str
    node: Node
    kind: str
    """link, joint, frame or model."""
    scope: Scope | None = None


@dataclass
class Scope:
    """The frames of one model (root `__model__`) or of the world (root `world`)."""

    root: str
    node: Node
    frames: dict[str, Frame] = field(default_factory=dict)
    canonical: str | None = None
    """The model's canonical link (a name of this scope, maybe nested), for joints that name
    the model."""

    def add(self, name: str, frame: Frame) -> None:
        """A new frame; a name used twice in one scope is an error naming both elements."""
        if name in self.frames or name == self.root:
            other = self.frames[name].node.path if name in self.frames else "the scope's frame"
            frame.node.fail(f"the name {name!r} is taken in this scope (by {other})", name)
        self.frames[name] = frame

    def lookup(self, name: str) -> tuple[Scope, str] | None:
        """(the scope holding the frame, its name there) of a name of this scope, maybe
        nested with `::`; None when no frame has that name."""
        if name in self.frames or name == self.root:
            return self, name
        head, sep, rest = name.partition("::")
        frame = self.frames.get(head)
        if not sep or frame is None or frame.scope is None:
            return None
        return frame.scope.lookup(rest)

    def pose(self, name: str, asker: Node | None = None) -> np.ndarray:
        """The 4x4 pose of frame `name` in this scope's own frame."""
        return self._pose(name, asker or self.node, ())

    def _pose(self, name: str, asker: Node, chain: tuple[str, ...]) -> np.ndarray:
        if name == self.root:
            return np.eye(4)
        head, sep, rest = name.partition("::")
        if sep:
            frame = self.frames.get(head)
            if frame is None or frame.scope is None:
                asker.fail(f"names no frame of this scope (no nested model {head!r}); frames: "
                           f"{self.listing()}", name)
            return self._pose(head, asker, chain) @ frame.scope._pose(rest, asker, ())
        frame = self.frames.get(name)
        if frame is None:
            asker.fail(f"names no frame of this scope; frames: {self.listing()}", name)
        if name in chain:
            loop = " -> ".join((*chain, name))
            node = frame.pose.node or frame.node
            node.fail(f"the poses refer to each other in a cycle ({loop})",
                      frame.pose.relative_to or frame.default)
        reference = frame.pose.relative_to or frame.default
        where = frame.pose.node or frame.node
        return self._pose(reference, where, (*chain, name)) @ frame.pose.matrix

    def listing(self) -> str:
        names = [self.root, *self.frames]
        return ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")

    def in_scope(self, pose: Pose, default: str, asker: Node) -> np.ndarray:
        """The pose of an element that is no frame of the scope (a collision, an inertial, an
        include's model): `pose` composed on its `relative_to` frame, else on `default`."""
        return self._pose(pose.relative_to or default, pose.node or asker, ()) @ pose.matrix
