"""SDF documents as the reader sees them: elements that know where they are and whether they
were read, and the readers of their values (numbers, vectors, booleans, poses).

Every element of a document is wrapped in a `Node` when it is read: the node knows its file
(`Doc`), its element path (``world/model[box1]/link[base]/collision[c]/geometry/box/size``:
each element's tag, with its `name` attribute in brackets when it has one) and marks itself
read. What was never read is what the reader does not simulate: `Doc.unread` lists it, so
nothing is dropped without being named (`mb_sim.model.world.sdf.report`).

Errors are `WorldError`s naming the file, the element path and the value:
``table.sdf: world/model[box1]/link[base]/collision[c]/geometry/box/size: must be 3 finite
numbers >= 1e-06 (got '0.1 nan 0.1')``. An element of an included model names the model's
file and, after the message, the include that brought it in.

The XML is read by the standard library's expat parser, which never fetches external
entities; documents with a DTD are refused outright (no SDF file needs one), and the text is
capped at `MAX_SDF_BYTES`.
"""

from __future__ import annotations

import html
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from mb_sim.errors import WorldError
from mb_sim.model.resources import xml_text
from mb_sim.model.world.messages import MISSING, show
from mb_sim.rotations import matrix_from_quat, rpy_matrix

MAX_SDF_BYTES = 32 * 1024 * 1024
"""Largest SDF text accepted (a world of thousands of models)."""

POSITION = 1e5
"""m: |x|, |y|, |z| of a pose (as world files accept)."""


class MissingFileError(WorldError):
    """A file an SDF document names (an included model, a mesh) is found nowhere."""


@dataclass
class Doc:
    """One parsed SDF file: its label for messages, its folder (relative URIs), its SDF version
    and the elements read so far.

    note: appended to error messages of elements of this file (for an included model: which
    include of which file brought it in).
    """

    label: str
    folder: str
    root: ET.Element
    version: tuple[int, ...] = (1, 11)
    note: str = ""
    read: set[int] = field(default_factory=set)

    def unread(self) -> Iterator[tuple[str, ET.Element]]:
        """(path, element) of each element not read whose parent was read, in document
        order: the topmost parts of the document the reader left alone."""
        if id(self.root) in self.read:
            yield from self._unread(_root_path(self.root), self.root)

    def _unread(self, path: str, element: ET.Element) -> Iterator[tuple[str, ET.Element]]:
        for child in element:
            if not isinstance(child.tag, str):
                continue  # comments and processing instructions
            child_path = f"{path}/{_step(child)}" if path else _step(child)
            if id(child) in self.read:
                yield from self._unread(child_path, child)
            else:
                yield child_path, child


def _step(element: ET.Element) -> str:
    """One step of an element path: the tag, and [name] when the element has a name."""
    name = element.get("name")
    tag = str(element.tag)
    return f"{tag}[{name}]" if name is not None and tag != "world" else tag


def _root_path(root: ET.Element) -> str:
    """The path of a document's root: "" for <sdf> (its children start the paths)."""
    return "" if root.tag == "sdf" else _step(root)


def parse(text: str, label: str, folder: str, note: str = "") -> Doc:
    """The document of SDF `text` (from file `label`, relative URIs from `folder`).

    Read as Gazebo's own parser reads files: comments are dropped before parsing (Gazebo's
    worlds put command lines with `--` in them, which XML forbids), and element prefixes
    without an `xmlns` declaration (`<gz:system_priority>`) are taken as they are written.
    Raises WorldError for text that is not XML, holds a DTD, or is larger than MAX_SDF_BYTES.
    """
    if len(text) > MAX_SDF_BYTES:
        raise WorldError(f"{label}: SDF text of {len(text)} characters is larger than the "
                         f"{MAX_SDF_BYTES} accepted{note}")
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), xml_text(text))
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise WorldError(f"{label}: <!DOCTYPE ...>: SDF files take no DTD or entities{note}")
    text = _SCOPED_TAG.sub(lambda m: m.group(1) + _SCOPE, text)
    used = set(_PREFIX.findall(text)) | set(_PREFIXED_ATTRIBUTE.findall(text))
    prefixes = sorted(used - set(_DECLARED.findall(text)) - {"xml", "xmlns"})
    if prefixes:
        declared = "".join(f' xmlns:{p}="{_UNDECLARED}{p}"' for p in prefixes)
        text = _ROOT.sub(lambda m: m.group(1) + declared, text, count=1)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise WorldError(f"{label}: malformed XML: {exc}{note}") from None
    for element in root.iter():
        tag = str(element.tag)
        if tag.startswith("{" + _UNDECLARED):
            element.tag = tag = tag[len(_UNDECLARED) + 1:].replace("}", ":", 1)
        if _SCOPE in tag:
            element.tag = tag.replace(_SCOPE, "::")
    return Doc(label, folder, root, _version(root), note)


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PREFIX = re.compile(r"</?([A-Za-z_][\w.-]*):[A-Za-z_]")
_PREFIXED_ATTRIBUTE = re.compile(r"\s([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*\s*=")
_SCOPED_TAG = re.compile(r"(</?[A-Za-z_][\w.-]*)::(?=[A-Za-z_])")
_SCOPE = "-scoped-"
"""What `::` in an element name (`<gz::system_priority>`, not XML) reads as until parsed."""
_DECLARED = re.compile(r"xmlns:([A-Za-z_][\w.-]*)\s*=")
_ROOT = re.compile(r"(<(?!\?|!)[A-Za-z_][\w.:-]*)")
_UNDECLARED = "urn:mb-sim:undeclared:"


def _version(root: ET.Element) -> tuple[int, ...]:
    """The (major, minor) of <sdf version="1.9">; 1.11 (the newest read) when absent."""
    parts = (root.get("version") or "").strip().split(".")
    try:
        return tuple(int(p) for p in parts[:2]) if len(parts) >= 2 else (1, 11)
    except ValueError:
        return (1, 11)


class Node:
    """One element of a `Doc`, with its path; reading it (or a child) marks it read."""

    __slots__ = ("doc", "element", "path")

    def __init__(self, doc: Doc, element: ET.Element, path: str) -> None:
        self.doc = doc
        self.element = element
        self.path = path
        doc.read.add(id(element))

    @classmethod
    def root(cls, doc: Doc) -> Node:
        return cls(doc, doc.root, _root_path(doc.root))

    @property
    def tag(self) -> str:
        return str(self.element.tag)

    @property
    def name(self) -> str | None:
        return self.element.get("name")

    def attr(self, name: str, default: str | None = None) -> str | None:
        return self.element.get(name, default)

    @property
    def text(self) -> str:
        return (self.element.text or "").strip()

    def _wrap(self, child: ET.Element) -> Node:
        step = _step(child)
        return Node(self.doc, child, f"{self.path}/{step}" if self.path else step)

    def child(self, tag: str) -> Node | None:
        """The first child element `tag` (marked read), or None."""
        found = self.element.find(tag)
        return None if found is None else self._wrap(found)

    def children(self, tag: str) -> list[Node]:
        """Every child element `tag`, in document order (each marked read)."""
        return [self._wrap(c) for c in self.element.findall(tag)]

    def read_all(self) -> None:
        """Mark the element's whole subtree read (a part handed whole to another reader)."""
        self.doc.read.update(id(e) for e in self.element.iter())

    def kids(self, tags: tuple[str, ...]) -> list[Node]:
        """The child elements whose tag is one of `tags`, in document order (each marked
        read)."""
        return [self._wrap(c) for c in self.element if c.tag in tags]

    def has(self, tag: str) -> bool:
        """Whether a child element `tag` exists (without reading it)."""
        return self.element.find(tag) is not None

    def where(self, tag: str) -> str:
        """The path of a child `tag` that is missing (for errors)."""
        return f"{self.path}/{tag}"

    def fail(self, message: str, value: Any = MISSING, path: str | None = None,
             error: type[WorldError] = WorldError) -> NoReturn:
        """Raise `error`: `<file>: <element path>: <message> (got <value>)<note>`."""
        got = "" if value is MISSING else f" (got {show(value)})"
        raise error(f"{self.doc.label}: {path or self.path or self.tag}: {message}{got}"
                    f"{self.doc.note}")

    def required(self, tag: str) -> Node:
        """The child `tag`, which must be there."""
        node = self.child(tag)
        if node is None:
            self.fail("is missing (required)", path=self.where(tag))
        return node


# ------------------------------------------------------------------------ values


def numbers(node: Node, count: int, lo: float = -math.inf, hi: float = math.inf
            ) -> np.ndarray:
    """The `count` whitespace-separated numbers of an element's text, each finite and within
    [lo, hi]."""
    parts = node.text.split()
    bounds = _bounds(lo, hi)
    what = f"must be {count} finite number{'s' if count != 1 else ''}{bounds}"
    if len(parts) != count:
        node.fail(what, node.text)
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        node.fail(what, node.text)
    if not (np.all(np.isfinite(values)) and np.all(values >= lo) and np.all(values <= hi)):
        node.fail(what, node.text)
    return values


def _bounds(lo: float, hi: float) -> str:
    if math.isinf(lo) and math.isinf(hi):
        return ""
    if math.isinf(hi):
        return f" >= {lo:g}"
    if math.isinf(lo):
        return f" <= {hi:g}"
    return f" within [{lo:g}, {hi:g}]"


def number(node: Node, lo: float = -math.inf, hi: float = math.inf) -> float:
    return float(numbers(node, 1, lo, hi)[0])


def child_number(parent: Node, tag: str, default: float, lo: float = -math.inf,
                 hi: float = math.inf) -> float:
    """The number of child `tag`, or `default` when there is none."""
    node = parent.child(tag)
    return default if node is None else number(node, lo, hi)


def child_vector(parent: Node, tag: str, default: tuple[float, ...], lo: float = -math.inf,
                 hi: float = math.inf) -> np.ndarray:
    node = parent.child(tag)
    if node is None:
        return np.array(default, dtype=float)
    return numbers(node, len(default), lo, hi)


def boolean(node: Node) -> bool:
    """An SDF boolean: true, false, 1 or 0."""
    text = node.text.lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    node.fail("must be true, false, 1 or 0", node.text)


def child_boolean(parent: Node, tag: str, default: bool) -> bool:
    node = parent.child(tag)
    return default if node is None else boolean(node)


def child_text(parent: Node, tag: str, default: str = "") -> str:
    node = parent.child(tag)
    return default if node is None else node.text


# ------------------------------------------------------------------------ poses


@dataclass(frozen=True)
class Pose:
    """A `<pose>` as written: the 4x4 transform and the frame it is relative to ("" for the
    element's default frame); node is the <pose> element (None: no <pose>, the identity)."""

    matrix: np.ndarray
    relative_to: str = ""
    node: Node | None = None


IDENTITY = Pose(np.eye(4))


def transform(rotation: np.ndarray, position: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = rotation
    T[:3, 3] = position
    return T


def read_pose(parent: Node) -> Pose:
    """The <pose> child of `parent` (the identity when there is none): x y z roll pitch yaw
    (radians, or degrees with degrees="true"; fixed axes X, Y, Z as in URDF), or x y z and a
    quaternion x y z w with rotation_format="quat_xyzw" (normalised). `relative_to` (SDF 1.7+),
    or `frame` (1.5, 1.6), names the frame it is expressed in."""
    node = parent.child("pose")
    if node is None:
        return IDENTITY
    relative_to = (node.attr("relative_to") or node.attr("frame") or "").strip()
    if not node.text:
        return Pose(np.eye(4), relative_to, node)
    form = (node.attr("rotation_format") or "euler_rpy").strip()
    if form not in ("euler_rpy", "quat_xyzw"):
        node.fail("rotation_format must be euler_rpy or quat_xyzw", form)
    values = numbers(node, 7 if form == "quat_xyzw" else 6)
    if np.any(np.abs(values[:3]) > POSITION):
        node.fail(f"position must be within +-{POSITION:g} m", node.text)
    if form == "quat_xyzw":
        q = values[3:]
        norm = float(np.linalg.norm(q))
        if norm < 1e-9:
            node.fail("the quaternion must not be zero", node.text)
        rotation = matrix_from_quat(q / norm)
    else:
        rpy = values[3:]
        degrees = (node.attr("degrees") or "false").strip().lower()
        if degrees not in ("true", "false", "1", "0"):
            node.fail("degrees must be true or false", degrees)
        if degrees in ("true", "1"):
            rpy = np.radians(rpy)
        rotation = rpy_matrix(rpy)
    return Pose(transform(rotation, values[:3]), relative_to, node)


def quoteattr(text: str) -> str:
    """`text` as an XML attribute value, its quotes included: what xml.sax.saxutils.quoteattr
    gives (&, <, > and the whitespace controls escaped; single quotes around a value holding a
    double one), without that module's imports (urllib, http, ssl: 0.1 s of each start)."""
    escaped = (html.escape(text, quote=False)
               .replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;"))
    if '"' not in escaped:
        return f'"{escaped}"'
    if "'" not in escaped:
        return f"'{escaped}'"
    return '"' + escaped.replace('"', "&quot;") + '"'
