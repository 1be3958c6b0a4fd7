"""Finding the files a description names: `package://` and `file://` URIs, relative paths and
xacro's `$(find pkg)`; reading description files as the tools they come from write them.

One search (`Search`) serves every reader: robots (`load_urdf`, xacro), world files (mesh
bodies, `robot.urdf`, `robot.srdf`), spawned entities and the viewer.

A package is looked for, in order, in:

1. the ament index (a sourced ROS 2 workspace), when `ament_index_python` is importable;
2. each entry of ROS_PACKAGE_PATH, then each folder of `package_dirs`: the entry itself when
   its folder is named like the package or its package.xml names it, and `<entry>/<package>`;
3. the packages below those entries: folders holding a package.xml, crawled as rospack and
   colcon do (`MAX_CRAWL_DEPTH` levels, not into hidden folders nor those holding a
   COLCON_IGNORE, CATKIN_IGNORE or AMENT_IGNORE file), known by the name their package.xml
   gives.

`package://pkg/path` is `<package folder>/path` of the first of these holding the file. When
none does, the file is looked for near the description that names it, as PyBullet, MuJoCo and
Gazebo read asset folders: as `pkg/path` and as `path` in the description's folder and the
folders above it, up to the first one holding a package.xml or `MAX_LEVELS_UP` levels up
(then in the folders of `package_dirs`); for a description given as text, in the folders of
`package_dirs` and the working folder. The first hit is used, with one info line per package
saying where its files were found. xacro's `$(find pkg)` is the package folder, found the same
way (`Search.find_package`).

A URI that cannot be resolved is not an error by itself: the caller keeps the explanation
(every place searched) and raises it only when the file is needed.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

log = logging.getLogger("mb_sim")

MAX_LEVELS_UP = 3
"""Folders above a description's own searched for its package-relative files."""
MAX_CRAWL_DEPTH = 4
"""Levels below a ROS_PACKAGE_PATH entry or package_dirs folder crawled for packages."""
MAX_CRAWL_FOLDERS = 20000
"""Folders visited at most per crawled entry (a folder of packages, not a file system)."""
_IGNORE_MARKERS = ("COLCON_IGNORE", "CATKIN_IGNORE", "AMENT_IGNORE")
_NAME = re.compile(r"<name>\s*([^<\s]+)\s*</name>")


def xml_text(text: str) -> str:
    """XML text as XML parsers take it: without the byte-order mark and the whitespace that
    editors and exporters leave before the `<?xml ...?>` declaration (which must come first),
    nor NUL characters after the document's end. Other text is returned as it is."""
    text = text.lstrip("\ufeff \t\r\n")
    end = text.rstrip("\x00 \t\r\n")
    return end + "\n" if "\x00" in text[len(end):] else text


def _ament_share(package: str) -> Path | None:
    try:
        from ament_index_python.packages import (
            PackageNotFoundError,
            get_package_share_directory,
        )
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory(package))
    except (PackageNotFoundError, ValueError, LookupError, OSError):
        return None


def _package_name(folder: Path) -> str | None:
    """The name a folder's package.xml gives its package (None: no readable package.xml)."""
    try:
        text = (folder / "package.xml").read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return None
    match = _NAME.search(text)
    return match.group(1) if match else None


def _crawl(entry: Path) -> dict[str, Path]:
    """{package name: folder} of the packages below `entry` (module docstring, step 3)."""
    found: dict[str, Path] = {}
    level, visited = [entry], 0
    for _ in range(MAX_CRAWL_DEPTH + 1):
        below: list[Path] = []
        for folder in level:
            visited += 1
            if visited > MAX_CRAWL_FOLDERS:
                log.debug("package search: stopped crawling %s after %d folders", entry,
                          MAX_CRAWL_FOLDERS)
                return found
            if any((folder / marker).exists() for marker in _IGNORE_MARKERS):
                continue
            name = _package_name(folder)
            if name is not None:
                found.setdefault(name, folder)
                continue  # packages do not nest
            try:
                below += sorted(p for p in folder.iterdir()
                                if p.is_dir() and not p.name.startswith("."))
            except OSError:
                continue
        level = below
    return found


class Search:
    """The search for the files one description names (module docstring).

    base_dir: the description's folder (None for a description given as text: the working
    folder is searched instead); package_dirs: folders of packages or package folders; source:
    the description, as log lines name it. Packages crawled and packages reported are
    remembered for the description's lifetime (one load).
    """

    def __init__(self, base_dir: str | os.PathLike[str] | None = None,
                 package_dirs: Iterable[str | os.PathLike[str]] = (),
                 source: str | None = None) -> None:
        self.base_dir = None if base_dir is None else Path(base_dir)
        self.package_dirs = tuple(Path(d).expanduser() for d in package_dirs)
        self.source = source or (str(self.base_dir) if self.base_dir else "<string>")
        self._crawled: dict[Path, dict[str, Path]] = {}
        self._reported: set[tuple[str, Path]] = set()
        self._names: dict[Path, str | None] = {}
        self._near: list[Path] | None = None

    # --- where packages are -------------------------------------------------------------
    def entries(self) -> list[Path]:
        """ROS_PACKAGE_PATH's entries, then package_dirs."""
        ros = [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        return [*ros, *self.package_dirs]

    def direct_roots(self, package: str) -> list[Path]:
        """Where `package` may be in the entries, without crawling: each entry named like it
        (by folder or package.xml) and `<entry>/<package>` (step 2)."""
        roots: list[Path] = []
        for entry in self.entries():
            if entry.name == package or self.package_name(entry) == package:
                roots.append(entry)
            roots.append(entry / package)
        return roots

    def package_name(self, folder: Path) -> str | None:
        """The name in `folder`'s package.xml (None: none), read once per search."""
        if folder not in self._names:
            self._names[folder] = _package_name(folder)
        return self._names[folder]

    def crawled_roots(self, package: str) -> list[Path]:
        """The folders below the entries whose package.xml names `package` (step 3)."""
        roots = []
        for entry in self.entries():
            if entry not in self._crawled:
                self._crawled[entry] = _crawl(entry) if entry.is_dir() else {}
            if package in self._crawled[entry]:
                roots.append(self._crawled[entry][package])
        return roots

    def package_roots(self, package: str, searched: list[str]) -> Iterator[Path]:
        """The ament index's share folder of `package`, direct_roots, then crawled_roots
        (crawled only when the caller asks for more); `searched` notes the ament index and the
        crawl when they do not know the package."""
        share = _ament_share(package)
        if share is None:
            searched.append(f"the ament index (no package {package!r})")
        else:
            yield share
        yield from self.direct_roots(package)
        roots = self.crawled_roots(package)
        entries = self.entries()
        if entries and not roots:
            searched.append(f"the packages below {', '.join(map(str, entries))} (none is "
                            f"{package!r})")
        yield from roots

    def near(self) -> list[Path]:
        """The folders searched near the description: its folder and those above it, up to
        the first holding a package.xml or MAX_LEVELS_UP up, then package_dirs; for text,
        package_dirs and the working folder."""
        if self._near is None:
            self._near = self._near_folders()
        return self._near

    def _near_folders(self) -> list[Path]:
        if self.base_dir is None:
            return [*self.package_dirs, Path.cwd()]
        folders = []
        folder = self.base_dir.resolve()
        for _ in range(MAX_LEVELS_UP + 1):
            folders.append(folder)
            if (folder / "package.xml").is_file() or folder.parent == folder:
                break
            folder = folder.parent
        return [*folders, *(d for d in self.package_dirs if d not in folders)]

    # --- lookups -------------------------------------------------------------------------
    def resolve(self, uri: str) -> tuple[str | None, str | None]:
        """(absolute path, None) of the existing file `uri` names, else (None, why not: every
        place searched)."""
        if uri.startswith("package://"):
            return self._resolve_package(uri)
        if uri.startswith("file://"):
            candidates = [Path(uri[len("file://"):])]
        else:
            path = Path(uri)
            candidates = [path if path.is_absolute() or self.base_dir is None
                          else self.base_dir / path]
        for candidate in candidates:
            if candidate.is_file():
                return str(candidate.resolve()), None
        return None, _not_found(uri, [str(c) for c in candidates])

    def _resolve_package(self, uri: str) -> tuple[str | None, str | None]:
        package, _, rel = uri[len("package://"):].partition("/")
        searched: list[str] = []
        for root in self.package_roots(package, searched):
            candidate = root / rel
            searched.append(str(candidate))
            if candidate.is_file():
                return str(candidate.resolve()), None
        for folder in self.near():
            for candidate in (folder / package / rel, folder / rel):
                searched.append(str(candidate))
                if candidate.is_file():
                    self._report(package, folder, f"{uri} is {candidate.resolve()}")
                    return str(candidate.resolve()), None
        return None, _not_found(uri, searched)

    def find_package(self, package: str) -> tuple[str | None, str]:
        """(folder of `package`, "") as xacro's `$(find package)` means it, else (None, why
        not: every place searched)."""
        searched: list[str] = []
        for root in self.package_roots(package, searched):
            searched.append(str(root))
            if root.is_dir():
                return str(root.resolve()), ""
        for folder in self.near():
            if folder.name == package or self.package_name(folder) == package:
                self._report(package, folder, f"$(find {package}) is {folder}")
                return str(folder.resolve()), ""
            searched.append(str(folder / package))
            if (folder / package).is_dir():
                self._report(package, folder, f"$(find {package}) is {folder / package}")
                return str((folder / package).resolve()), ""
        return None, (f"no package {package!r} in the ament index, ROS_PACKAGE_PATH or "
                      f"package_dirs (nor below them), nor near {self.source}; searched: "
                      f"{', '.join(searched)}")

    def _report(self, package: str, folder: Path, what: str) -> None:
        """One info line per package and folder: where its files were found."""
        key = (package, folder)
        if key in self._reported:
            return
        self._reported.add(key)
        log.info("%s: package %r is not in the ament index, ROS_PACKAGE_PATH or package_dirs; "
                 "found near the description, in %s: %s", self.source, package, folder, what)


def _not_found(uri: str, searched: list[str]) -> str:
    return f"cannot resolve {uri!r}; searched: {', '.join(searched) or 'nothing'}"


def resolve_uri(
    uri: str,
    base_dir: str | os.PathLike | None = None,
    package_dirs: Iterable[str | os.PathLike] = (),
    source: str | None = None,
) -> tuple[str | None, str | None]:
    """Return (absolute path, None) when the file exists, else (None, why not): one lookup
    of a `Search` (module docstring)."""
    return Search(base_dir, package_dirs, source).resolve(uri)


def read_text_file(path: Path, label: str, what: str, max_bytes: int,
                   error: type[Exception]) -> str:
    """The UTF-8 text of a description file (a byte-order mark dropped), or `error` naming the
    file (`label`), what kind of file it should be and why it cannot be read: a folder,
    missing, larger than `max_bytes`, unreadable, not text."""
    if path.is_dir():
        raise error(f"{label}: is a directory, not a {what} file")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise error(f"{label}: {what} file of {size} bytes is larger than the {max_bytes} "
                        f"accepted")
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise error(f"{label}: {what} file does not exist") from None
    except UnicodeDecodeError as exc:
        raise error(f"{label}: not a {what} file: not UTF-8 text ({exc.reason} at byte "
                    f"{exc.start})") from None
    except OSError as exc:
        raise error(f"{label}: cannot read {what} file: {exc.strerror}") from None
