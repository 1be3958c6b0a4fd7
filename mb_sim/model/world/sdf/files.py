"""Where the files an SDF world names are: `model://` URIs, Fuel URLs, `file://`, `package://`,
absolute and relative paths; what a model folder's model.config names; the built-in models.

`model://name/path` is looked for as Gazebo looks for it, in the folders of the environment
variables `RESOURCE_PATH_VARIABLES` (each a list of folders, each folder holding model folders
`name/`), in that order; then as `package://name/path` is found (`mb_sim.model.resources`: the
ament index, ROS_PACKAGE_PATH, `package_dirs`, and near the file that names it), which is how
ROS packages ship Gazebo models and how a world beside its `models/` folder finds them.

A Fuel URL (``https://fuel.gazebosim.org/1.0/<owner>/models/<name>[/<version>][/files/<path>]``)
is read from the local Fuel cache that Gazebo's downloads fill (`fuel_cache_roots`:
``<root>/<host>/<owner>/models/<name>/<version>/``, owner and name as written or in lower
case, the newest version unless the URL names one); nothing is downloaded. A model that is not
there is an error naming the URL, every folder searched and the command that downloads it.

`model://sun` and `model://ground_plane` are built in (`BUILTIN`): every Gazebo install has
them, and worlds written for Gazebo include them by name. Their Fuel counterparts, which
gz-sim's own worlds and TurtleBot3's include (`FUEL_BUILTIN`: OpenRobotics' "Ground Plane"
and "Sun", `fuel_builtin`), are read from the Fuel cache when it holds them, else they are the
built-in ones: the same plane and light, which a fresh install has not downloaded.
"""

from __future__ import annotations

import os
import re
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mb_sim.model.resources import Search, xml_text

RESOURCE_PATH_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH",
                           "GAZEBO_MODEL_PATH")
"""Environment variables listing folders of models (gz-sim, Ignition Gazebo, sdformat,
Gazebo Classic), searched in this order for `model://` URIs."""

FUEL_CACHE_VARIABLES = ("GZ_FUEL_CACHE_PATH", "IGN_FUEL_CACHE_PATH")
"""Environment variables naming a Fuel cache folder (before the default ones)."""

FUEL_HOSTS = ("fuel.gazebosim.org", "fuel.ignitionrobotics.org")
"""Names of the one Fuel server (its old name first served the same models)."""

BUILTIN_GROUND_FRICTION = 1.0
"""Friction of the built-in ground_plane. Gazebo's ground_plane says mu 100, meaning with
Gazebo's rule (the smaller coefficient of the two surfaces wins) that the other surface
decides; mb_sim combines sqrt(mu_a mu_b), so 100 would multiply every friction by 10. SDF's
default coefficient, 1.0, gives the other surface's own coefficient when that is 1.0."""

BUILTIN: dict[str, str] = {
    "ground_plane": f"""<sdf version="1.11">
  <model name="ground_plane">
    <static>true</static>
    <link name="link">
      <collision name="collision">
        <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
        <surface><friction><ode><mu>{BUILTIN_GROUND_FRICTION}</mu></ode></friction></surface>
      </collision>
      <visual name="visual">
        <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
        <material><ambient>0.8 0.8 0.8 1</ambient><diffuse>0.8 0.8 0.8 1</diffuse></material>
      </visual>
    </link>
  </model>
</sdf>""",
    "sun": """<sdf version="1.11">
  <light type="directional" name="sun">
    <pose>0 0 10 0 0 0</pose>
    <diffuse>0.8 0.8 0.8 1</diffuse>
    <direction>-0.5 0.1 -0.9</direction>
  </light>
</sdf>""",
}
"""The built-in models, as SDF: the ground plane (a static plane, normal +z, 100 m x 100 m,
friction BUILTIN_GROUND_FRICTION, its visual light grey) and the sun (a directional light
along -0.5 0.1 -0.9, diffuse 0.8: what the cameras are lit by), as Gazebo's own models have
them."""


FUEL_BUILTIN: dict[tuple[str, str], str] = {("openrobotics", "ground plane"): "ground_plane",
                                            ("openrobotics", "sun"): "sun"}
"""Fuel models (owner, name, both in lower case) that are a built-in model (its name in
BUILTIN) when the local Fuel cache lacks them: Gazebo's ground plane and sun as published on
Fuel (https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane, .../Sun)."""


def fuel_builtin(uri: str) -> str | None:
    """The built-in model (a BUILTIN name) that the Fuel model URL `uri` stands for
    (FUEL_BUILTIN), or None. Fuel names are matched as Fuel matches them: in any letter case,
    a space written as it is or as %20; on either Fuel host (FUEL_HOSTS), with or without a
    version (a number or `tip`) and a trailing slash. A file of the model (`.../files/...`)
    is not the model."""
    parsed = urllib.parse.urlparse(uri.strip())
    if parsed.scheme not in ("https", "http") or parsed.hostname not in FUEL_HOSTS:
        return None
    parts = [urllib.parse.unquote(p) for p in parsed.path.strip("/").split("/")]
    if len(parts) not in (4, 5) or parts[2].lower() != "models":
        return None
    if len(parts) == 5 and not (parts[4].isdigit() or parts[4].lower() == "tip"):
        return None
    return FUEL_BUILTIN.get((parts[1].lower(), " ".join(parts[3].lower().split())))


def builtin(uri: str) -> str | None:
    """The name of the built-in model `uri` names (model://sun, model://ground_plane), or None."""
    if not uri.startswith("model://"):
        return None
    name = uri[len("model://"):].strip("/")
    return name if name in BUILTIN else None


def resource_paths() -> list[Path]:
    """The folders of RESOURCE_PATH_VARIABLES, in order, without repeats."""
    out: list[Path] = []
    for variable in RESOURCE_PATH_VARIABLES:
        for entry in os.environ.get(variable, "").split(os.pathsep):
            path = Path(entry).expanduser()
            if entry and path not in out:
                out.append(path)
    return out


def fuel_cache_roots() -> list[Path]:
    """The Fuel cache folders: FUEL_CACHE_VARIABLES, then ~/.gz/fuel and ~/.ignition/fuel."""
    roots = [Path(os.environ[v]).expanduser() for v in FUEL_CACHE_VARIABLES if os.environ.get(v)]
    home = Path.home()
    return [*roots, home / ".gz" / "fuel", home / ".ignition" / "fuel"]


@dataclass(frozen=True)
class Found:
    """A URI looked up: the absolute path (None when not found) and every place searched."""

    path: str | None
    searched: tuple[str, ...]
    hint: str = ""

    def why(self, uri: str) -> str:
        """Why `uri` was not found: what was searched, and how to fix it."""
        places = ", ".join(self.searched[:12]) or "nothing"
        more = f" and {len(self.searched) - 12} more" if len(self.searched) > 12 else ""
        return f"cannot find {uri!r}; searched {places}{more}{self.hint}"


class Finder:
    """The lookups of one SDF file: its folder for relative paths, `package_dirs` for
    `package://` and `model://` after the resource paths."""

    def __init__(self, folder: str, package_dirs: Iterable[str] = (), label: str = "") -> None:
        self.folder = folder
        self.package_dirs = tuple(package_dirs)
        self.search = Search(folder, self.package_dirs, label or folder)

    def find(self, uri: str, want_dir: bool = False) -> Found:
        """The file (or with `want_dir`, the folder) `uri` names."""
        uri = uri.strip()
        if uri.startswith("model://"):
            return self._model(uri[len("model://"):], want_dir)
        if uri.startswith(("https://", "http://")):
            return _fuel(uri, want_dir)
        if uri.startswith("package://") and not want_dir:
            path, why = self.search.resolve(uri)
            return Found(path, () if path else (why or "",))
        if uri.startswith("file://"):
            uri = urllib.parse.unquote(uri[len("file://"):])
        path = Path(uri).expanduser()
        path = path if path.is_absolute() else Path(self.folder) / path
        ok = path.is_dir() if want_dir else path.is_file()
        return Found(str(path.resolve()) if ok else None, (str(path),))

    def _model(self, rest: str, want_dir: bool) -> Found:
        """model://name/path: in the resource paths, then as a ROS package file."""
        name, _, sub = rest.strip("/").partition("/")
        searched: list[str] = []
        for folder in resource_paths():
            candidate = folder / name / sub if sub else folder / name
            searched.append(str(candidate))
            if candidate.is_dir() if want_dir else candidate.is_file():
                return Found(str(candidate.resolve()), tuple(searched))
        if want_dir:
            return self._model_folder(name, sub, searched)
        path, why = self.search.resolve(f"package://{name}/{sub}")
        if path is not None:
            return Found(path, tuple(searched))
        searched.append(f"the ROS package search ({why})")
        return Found(None, tuple(searched), _PATH_HINT)

    def _model_folder(self, name: str, sub: str, searched: list[str]) -> Found:
        """A model folder not in the resource paths: a ROS package of that name, or a folder
        of that name near the file (`Search.near`)."""
        package, _ = self.search.find_package(name)
        candidates = [Path(package)] if package else []
        candidates += [folder / name for folder in self.search.near()]
        for candidate in candidates:
            candidate = candidate / sub if sub else candidate
            searched.append(str(candidate))
            if candidate.is_dir():
                return Found(str(candidate.resolve()), tuple(searched))
        return Found(None, tuple(searched), _PATH_HINT)


_PATH_HINT = (f"; put the folder holding the model in {RESOURCE_PATH_VARIABLES[0]} (or "
              f"{', '.join(RESOURCE_PATH_VARIABLES[1:])})")


def _fuel(url: str, want_dir: bool) -> Found:
    """A Fuel model URL, or a file of one (``.../files/<path>``), in the local Fuel cache."""
    parsed = urllib.parse.urlparse(url)
    parts = [urllib.parse.unquote(p) for p in parsed.path.strip("/").split("/")]
    if "models" not in parts[1:-1]:
        return Found(None, (), "; mb_sim reads Fuel model URLs (https://fuel.gazebosim.org/1.0/"
                               "<owner>/models/<name>) from the local Fuel cache, and nothing "
                               "else from the web")
    i = parts.index("models", 1)
    owner, name, rest = parts[i - 1], parts[i + 1], parts[i + 2:]
    version = rest.pop(0) if rest and (rest[0].isdigit() or rest[0] == "tip") else "tip"
    sub = rest[1:] if rest and rest[0] == "files" else rest
    hosts = [parsed.netloc.lower(), *(h for h in FUEL_HOSTS if h != parsed.netloc.lower())]
    searched: list[str] = []
    for root in fuel_cache_roots():
        for host in hosts:
            for o, n in dict.fromkeys(((owner, name), (owner.lower(), name.lower()))):
                folder = root / host / o / "models" / n
                searched.append(str(folder))
                chosen = _version_folder(folder, version)
                if chosen is None:
                    continue
                target = chosen.joinpath(*sub)
                if target.is_dir() if want_dir else target.is_file():
                    return Found(str(target.resolve()), tuple(searched))
    model_url = url.split("/files/")[0] if "/files/" in url else url
    return Found(None, tuple(searched),
                 f"; it is not in the local Fuel cache (download it: gz fuel download -u "
                 f"{model_url!r}, or put the model folder in {RESOURCE_PATH_VARIABLES[0]} and "
                 f"include it as model://{name})")


def _version_folder(folder: Path, version: str) -> Path | None:
    """The version folder of a cached Fuel model: the one named, else the highest number."""
    if not folder.is_dir():
        return None
    if version != "tip":
        return folder / version if (folder / version).is_dir() else None
    numbered = [p for p in folder.iterdir() if p.is_dir() and p.name.isdigit()]
    return max(numbered, key=lambda p: int(p.name)) if numbered else None


_VERSION = re.compile(r"^\s*(\d+)(?:\.(\d+))?")


def model_file(folder: str) -> tuple[str | None, str]:
    """The SDF file of a model folder, as its model.config names it (the `<sdf>` entry of the
    highest version; model.sdf when there is no model.config), or (None, why not)."""
    config = Path(folder) / "model.config"
    if not config.is_file():
        fallback = Path(folder) / "model.sdf"
        if fallback.is_file():
            return str(fallback), ""
        return None, f"the folder {folder} holds no model.config (nor model.sdf)"
    try:
        root = ET.fromstring(xml_text(config.read_text(encoding="utf-8-sig")))
    except (OSError, ET.ParseError, UnicodeDecodeError) as exc:
        return None, f"{config}: cannot be read as XML: {exc}"
    entries = []
    for element in root.iter("sdf"):
        match = _VERSION.match(element.get("version", ""))
        version = (int(match.group(1)), int(match.group(2) or 0)) if match else (0, 0)
        if (element.text or "").strip():
            entries.append((version, element.text.strip()))
    if not entries:
        return None, f"{config}: names no SDF file (<sdf version=...>model.sdf</sdf>)"
    name = max(entries)[1]
    path = Path(folder) / name
    if not path.is_file():
        return None, f"{config}: names {name!r}, which is not in {folder}"
    return str(path.resolve()), ""
