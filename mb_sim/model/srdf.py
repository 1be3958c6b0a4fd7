"""SRDF (MoveIt's semantic robot description): the link pairs that never collide.

Only `<disable_collisions link1="a" link2="b" reason="..."/>` is read: the pairs that MoveIt's
setup assistant found adjacent, always touching, never able to touch, or overlapping at the
default pose. Groups, states, end effectors and virtual joints are left to MoveIt.

The file is checked where it is read (it exists, is XML, its root is `<robot>`, every
`<disable_collisions>` names two links); link names are checked against a robot by
`known_pairs`, which drops, with one warning naming them, the pairs of links the robot does
not have (an SRDF often covers a larger variant of the robot).
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from mb_sim.model.resources import read_text_file, xml_text

log = logging.getLogger("mb_sim")

MAX_SRDF_BYTES = 16 * 1024 * 1024
"""Largest SRDF accepted (pr2.srdf of example-robot-data, 1163 pairs: 0.1 MB)."""

LinkPair = tuple[str, str]


def read_disabled_collisions(path: str | Path, error: type[Exception]) -> tuple[LinkPair, ...]:
    """The `<disable_collisions>` link pairs of an SRDF file, each (link1, link2) once, in
    file order. `error` (ModelError, WorldError) names the file and what is wrong."""
    label = str(path)
    text = xml_text(read_text_file(Path(path), label, "SRDF", MAX_SRDF_BYTES, error))
    if not text.strip():
        raise error(f"{label}: the SRDF file is empty")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise error(f"{label}: not an SRDF file: malformed XML ({exc})") from None
    if root.tag != "robot":
        raise error(f"{label}: not an SRDF file: the root element is <{root.tag}>, "
                    "expected <robot>")
    pairs: dict[frozenset[str], LinkPair] = {}
    for k, element in enumerate(root.iter("disable_collisions")):
        a, b = element.get("link1"), element.get("link2")
        if not a or not b:
            raise error(f"{label}: <disable_collisions> number {k + 1} needs the attributes "
                        f"link1 and link2, got {dict(element.attrib)}")
        pairs.setdefault(frozenset((a, b)), (a, b))
    return tuple(pairs.values())


def known_pairs(pairs: Iterable[LinkPair], link_names: Iterable[str], source: str,
                robot: str) -> tuple[LinkPair, ...]:
    """The pairs whose two links the robot has; the others are dropped with one warning
    naming the unknown links (first 10 and a count)."""
    links = set(link_names)
    kept, unknown = [], []
    for a, b in pairs:
        missing = [x for x in (a, b) if x not in links]
        if missing:
            unknown.extend(x for x in missing if x not in unknown)
        else:
            kept.append((a, b))
    if unknown:
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        log.warning("%s: robot %r has no links %s%s; the <disable_collisions> pairs naming "
                    "them are ignored", source, robot, ", ".join(map(repr, unknown[:10])), more)
    return tuple(kept)
