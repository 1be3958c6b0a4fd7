"""The part of a URDF document that mb_sim reads, with every number checked.

A URDF carries much that a simulator of rigid-body dynamics does not use: `<transmission>`
(either format), `<gazebo>`, `<ros2_control>`, `<sensor>`, textures,
`<calibration>`, `<safety_controller>` and any vendor element. `filter_urdf` removes all of
it (one debug log line per kind of element dropped), so none of it can stop a robot from
loading, and returns the document urdf-parser-py then reads. Materials and their colours
stay: cameras draw the visuals in them (`mb_sim.sensing.visuals`).

Numbers are checked in every element of the URDF format, used or not (`NUMERIC`): each
attribute must hold the right count of finite numbers within the range given there, and each
shape the attributes it needs (`REQUIRED`), else a `ModelError` names the element (with its
link or joint) and the value. What is only drawn never refuses a robot: a problem inside a
link's `<visual>` (a zero radius, a missing attribute, a bad colour) drops that visual, and
one in a top-level `<material>` that material, each with a warning naming the link, the
element and the value. Extension elements (`<gazebo>`, `<transmission>`, ...) belong to other
programs and are not read at all.

The XML is read by the standard library's expat parser, which refuses entity-expansion bombs
(expat >= 2.4) and never fetches external entities; the text is capped at MAX_URDF_BYTES.
"""

from __future__ import annotations

import logging
import math
import xml.etree.ElementTree as ET
from collections import Counter

from mb_sim.errors import ModelError
from mb_sim.model.resources import xml_text

log = logging.getLogger("mb_sim")

MAX_URDF_BYTES = 32 * 1024 * 1024
"""Largest URDF text accepted (the largest robot of example-robot-data is 0.2 MB)."""

POSITION = 1e5  # m: lengths and offsets
SIZE = (1e-6, 1e5)  # m: shape extents
MASS = 1e6  # kg
INERTIA = 1e6  # kg m^2
ANGLE = 1e3  # rad, for rpy

Range = tuple[float, float]
_ANY: Range = (-math.inf, math.inf)
_NONNEG: Range = (0.0, math.inf)
_POS: Range = (-POSITION, POSITION)

# element -> attribute -> (count, allowed range); count 0: one or three numbers (mesh scale)
NUMERIC: dict[str, dict[str, tuple[int, Range]]] = {
    "origin": {"xyz": (3, _POS), "rpy": (3, (-ANGLE, ANGLE))},
    "mass": {"value": (1, (0.0, MASS))},
    "inertia": {k: (1, (-INERTIA, INERTIA)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
    "axis": {"xyz": (3, (-1e6, 1e6))},
    "limit": {"lower": (1, _ANY), "upper": (1, _ANY), "effort": (1, _NONNEG),
              "velocity": (1, _NONNEG)},
    "dynamics": {"damping": (1, _NONNEG), "friction": (1, _NONNEG)},
    "mimic": {"multiplier": (1, _ANY), "offset": (1, _ANY)},
    "box": {"size": (3, SIZE)},
    "sphere": {"radius": (1, SIZE)},
    "cylinder": {"radius": (1, SIZE), "length": (1, SIZE)},
    "mesh": {"scale": (0, (-SIZE[1], SIZE[1]))},  # negative: mirrored; |scale| >= SIZE[0]
    "calibration": {"rising": (1, _ANY), "falling": (1, _ANY),
                    "reference_position": (1, _ANY)},
    "safety_controller": {"soft_lower_limit": (1, _ANY), "soft_upper_limit": (1, _ANY),
                          "k_position": (1, _ANY), "k_velocity": (1, _ANY)},
    "color": {"rgba": (4, _ANY)},
}

# The attributes each shape needs.
REQUIRED: dict[str, tuple[str, ...]] = {
    "box": ("size",), "sphere": ("radius",), "cylinder": ("radius", "length"),
    "mesh": ("filename",),
}
DRAWN = ("visual", "material")
"""Elements that are only drawn: a problem in one drops it with a warning (module docstring)."""

# What mb_sim reads: element -> children kept. Children not listed are dropped; those of the
# URDF format are still number-checked (`_FORMAT`), others are not read.
KEEP: dict[str, set[str]] = {
    "robot": {"link", "joint", "material"},
    "link": {"inertial", "visual", "collision"},
    "inertial": {"origin", "mass", "inertia"},
    "visual": {"origin", "geometry", "material"},
    "material": {"color"},
    "collision": {"origin", "geometry"},
    "geometry": {"box", "sphere", "cylinder", "mesh"},
    "joint": {"parent", "child", "origin", "axis", "limit", "dynamics", "mimic"},
}
_FORMAT: dict[str, set[str]] = {
    "robot": {"material"},
    "visual": {"material"},
    "material": {"color", "texture"},
    "joint": {"calibration", "safety_controller"},
}


def _where(stack: list[ET.Element]) -> str:
    """'link 'l1' <inertial><mass>' for the element at the end of `stack` (robot excluded)."""
    parts: list[str] = []
    for el in stack[1:]:
        name = el.get("name")
        if el.tag in ("link", "joint") and name is not None:
            parts.append(f"{el.tag} {name!r}")
        else:
            parts.append(f"<{el.tag}>")
    return " ".join(parts) if parts else "<robot>"


def _show(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57]) + "..."


class _Filter:
    def __init__(self, source: str) -> None:
        self.source = source
        self.dropped: Counter[str] = Counter()

    def fail(self, stack: list[ET.Element], what: str) -> ModelError:
        return ModelError(f"{self.source}: {_where(stack)}: {what}")

    def numbers(self, stack: list[ET.Element]) -> None:
        el = stack[-1]
        in_geometry = len(stack) > 1 and stack[-2].tag == "geometry"
        for attr in REQUIRED.get(el.tag, ()) if in_geometry else ():
            if el.get(attr) is None:
                raise self.fail(stack, f"the attribute {attr} is missing")
        spec = NUMERIC.get(el.tag, {})
        for attr, (count, (lo, hi)) in spec.items():
            text = el.get(attr)
            if text is None:
                continue
            try:
                values = [float(t) for t in text.split()]
            except ValueError:
                raise self.fail(stack, f"{attr}={_show(text)} is not a number"
                                f"{' list' if count != 1 else ''}") from None
            expected = (1, 3) if count == 0 else (count,)
            if len(values) not in expected:
                raise self.fail(stack, f"{attr}={_show(text)} must hold "
                                f"{' or '.join(map(str, expected))} number(s)")
            for v in values:
                if not math.isfinite(v):
                    raise self.fail(stack, f"{attr}={_show(text)} is not finite")
                if count == 0 and abs(v) < SIZE[0]:
                    raise self.fail(stack, f"{attr}={_show(text)}: scale factors must not be "
                                    f"smaller than {SIZE[0]:g} in size")
                if not lo <= v <= hi:
                    raise self.fail(stack, f"{attr}={_show(text)} is outside the accepted "
                                    f"range [{lo:g}, {hi:g}]")

    def walk(self, stack: list[ET.Element], keep: bool) -> bool:
        """Check the numbers of `stack[-1]` and of its format children; when `keep`, remove
        the children mb_sim does not read. False: a visual or collision without a shape that
        mb_sim knows, to be dropped by the caller."""
        el = stack[-1]
        self.numbers(stack)
        kept = KEEP.get(el.tag, set()) if keep else set()
        checked = kept | _FORMAT.get(el.tag, set())
        for child in list(el):
            if not isinstance(child.tag, str):  # comments, processing instructions
                el.remove(child)
                continue
            if child.tag in checked:
                usable = self.checked(stack, child, keep=child.tag in kept)
                if child.tag in kept and usable:
                    continue
            if keep:
                el.remove(child)
                self.dropped[f"<{child.tag}>"] += 1
        if keep and el.tag in ("visual", "collision"):
            geometry = el.find("geometry")
            if geometry is None or len(geometry) != 1:
                log.warning("%s: %s: no <box>, <sphere>, <cylinder> or <mesh> in its <geometry>;"
                            " the %s is ignored", self.source, _where(stack), el.tag)
                return False
        return True

    def checked(self, stack: list[ET.Element], child: ET.Element, keep: bool) -> bool:
        """walk() into `child`; a problem in a drawn element (DRAWN) is a warning and the
        element unusable (False), elsewhere a ModelError."""
        try:
            return self.walk([*stack, child], keep=keep)
        except ModelError as exc:
            if child.tag not in DRAWN:
                raise
            problem = str(exc).removeprefix(f"{self.source}: ")
            log.warning("%s: %s; the <%s> is ignored (it is only drawn)", self.source, problem,
                        child.tag)
            return False


def filter_urdf(text: str, source: str) -> str:
    """The URDF `text` reduced to what mb_sim reads, its numbers checked (module docstring)."""
    text = xml_text(text)
    if len(text) > MAX_URDF_BYTES:
        raise ModelError(f"{source}: URDF of {len(text)} characters is larger than the "
                         f"{MAX_URDF_BYTES} accepted")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"{source}: malformed XML: {exc}") from None
    if root.tag.startswith("{") and root.tag.endswith("}robot"):  # a default xmlns on <robot>
        ns = root.tag[: root.tag.index("}") + 1]
        for el in root.iter():
            if isinstance(el.tag, str) and el.tag.startswith(ns):
                el.tag = el.tag[len(ns):]
    if root.tag != "robot":
        raise ModelError(f"{source}: the root element is <{root.tag}>, a URDF's is <robot>")
    f = _Filter(source)
    f.walk([root], keep=True)
    if f.dropped:
        log.debug("%s: not used by mb_sim, ignored: %s", source,
                  ", ".join(f"{tag} x{n}" for tag, n in sorted(f.dropped.items())))
    return ET.tostring(root, encoding="unicode")

