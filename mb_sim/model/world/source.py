"""Reading world files: a path, YAML text or a dict becomes the document to validate.

YAML is read safely and strictly: duplicate keys and aliases are errors, `1e-6` is a float
(as in YAML 1.2), and a file larger than `MAX_WORLD_BYTES` is refused before it is parsed.
Errors are `WorldError`s that name the file, the line and the column.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mb_sim.errors import WorldError
from mb_sim.model.mesh import resolve_uri
from mb_sim.model.resources import read_text_file
from mb_sim.model.world.messages import brief
from mb_sim.model.world.schema import MAX_WORLD_BYTES


class _Loader(yaml.SafeLoader):
    """Safe YAML that rejects duplicate keys and aliases, and reads 1e-6 as a float (YAML 1.2).

    Aliases (`*name`) are refused outright: a world file does not need them, and a few hundred
    bytes of nested aliases ("billion laughs") expand to gigabytes.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"alias *{str(event.anchor)[:40]}: world files take no YAML aliases "
                "(write the value out)", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {brief(key, 60)} (first on line {seen[key]})",
                    key_node.start_mark)
            if isinstance(key, (str, int, float, bool)):
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> Any:
    """YAML integers; one of more digits than Python converts stays text (refused with its key)."""
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError:
        return str(node.value)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _looks_like_path(text: str) -> bool:
    """A one-line string that names a file rather than holding YAML text."""
    if "\n" in text or not text.strip():
        return False
    if os.path.exists(text) or text.lower().endswith((".yaml", ".yml")):
        return True
    return not (": " in text or text.lstrip().startswith(("{", "[")))


def read_source(source: Any, base_dir: str | os.PathLike[str] | None
                ) -> tuple[Any, str, str]:
    """(data, label for messages, folder for relative paths) of a world file's path, its
    YAML text (a one-line string that ends in .yaml or .yml, or holds no ": ", is a path),
    its bytes or a mapping."""
    if isinstance(source, Mapping):
        return dict(source), "<dict>", str(base_dir if base_dir is not None else os.getcwd())
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source[:MAX_WORLD_BYTES + 1]).decode("utf-8", errors="replace")
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        label = os.fspath(source)
        text = read_text_file(path, label, "world", MAX_WORLD_BYTES, WorldError)
        folder = str(base_dir if base_dir is not None else path.resolve().parent)
    elif isinstance(source, str):
        text, label = source, "<string>"
        folder = str(base_dir if base_dir is not None else os.getcwd())
    else:
        raise WorldError(f"load_world takes a path, YAML text or a dict, got {type(source)}")
    if len(text) > MAX_WORLD_BYTES:
        raise WorldError(f"{label}: world description of {len(text)} characters is larger than "
                         f"the {MAX_WORLD_BYTES} accepted")
    return parse_yaml(text, label), label, folder


def parse_yaml(text: str, label: str) -> Any:
    """The data of YAML `text`, read as world files are (safe; no duplicate keys, no aliases).

    Raises WorldError naming `label`, the line and column.
    """
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise WorldError(f"{label}: {where}YAML error: {str(problem)[:200]}") from None
    except RecursionError:
        raise WorldError(f"{label}: YAML error: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise WorldError(f"{label}: YAML error: {str(exc)[:200]}") from None


@dataclass(frozen=True)
class Files:
    """Where a world file's files are found: its folder (relative paths), `package_dirs`
    (`package://` URIs, after the ament index and ROS_PACKAGE_PATH) and the file's label
    (messages)."""

    folder: str
    package_dirs: tuple[str, ...] = ()
    label: str = "<world>"

    def resolve(self, uri: str) -> str:
        """The absolute path of an existing file the world names (`mb_sim.model.mesh.
        resolve_uri`: MeshError listing what was searched otherwise)."""
        return resolve_uri(uri, self.folder, self.package_dirs, self.label)
