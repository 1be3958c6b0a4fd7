"""Resolving resource URIs (`package://`, `file://`, relative paths) to files.

`package://pkg/path` is looked up, in order, through ament_index (when importable), the
entries of ROS_PACKAGE_PATH (each a package folder or a folder of packages), the extra
`package_dirs` the caller gives, and finally relative to the referring file's folder. A URI
that cannot be resolved is not an error by itself: the caller keeps the explanation and
raises it only when the file is actually needed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


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


def _package_roots(package: str, package_dirs: Iterable[str | os.PathLike]) -> list[Path]:
    roots: list[Path] = []
    entries = [p for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
    for entry in [*entries, *(str(d) for d in package_dirs)]:
        base = Path(entry)
        if base.name == package:
            roots.append(base)
        roots.append(base / package)
    return roots


def resolve_uri(
    uri: str,
    base_dir: str | os.PathLike | None = None,
    package_dirs: Iterable[str | os.PathLike] = (),
) -> tuple[str | None, str | None]:
    """Return (absolute path, None) when the file exists, else (None, why not)."""
    searched: list[str] = []
    if uri.startswith("package://"):
        package, _, rel = uri[len("package://") :].partition("/")
        candidates: list[Path] = []
        share = _ament_share(package)
        if share is not None:
            candidates.append(share / rel)
        candidates += [root / rel for root in _package_roots(package, package_dirs)]
        if base_dir is not None:
            candidates += [Path(base_dir) / rel, Path(base_dir).parent / rel]
    elif uri.startswith("file://"):
        candidates = [Path(uri[len("file://") :])]
    else:
        path = Path(uri)
        candidates = [path] if path.is_absolute() or base_dir is None else [Path(base_dir) / path]
    for candidate in candidates:
        searched.append(str(candidate))
        if candidate.is_file():
            return str(candidate.resolve()), None
    return None, f"cannot resolve {uri!r}; searched: {', '.join(searched) or 'nothing'}"


def read_text_file(path: Path, label: str, what: str, max_bytes: int,
                   error: type[Exception]) -> str:
    """The UTF-8 text of a description file, or `error` naming the file (`label`), what kind of
    file it should be and why it cannot be read: a folder, missing, larger than `max_bytes`,
    unreadable, not text."""
    if path.is_dir():
        raise error(f"{label}: is a directory, not a {what} file")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise error(f"{label}: {what} file of {size} bytes is larger than the {max_bytes} "
                        f"accepted")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{label}: {what} file does not exist") from None
    except UnicodeDecodeError as exc:
        raise error(f"{label}: not a {what} file: not UTF-8 text ({exc.reason} at byte "
                    f"{exc.start})") from None
    except OSError as exc:
        raise error(f"{label}: cannot read {what} file: {exc.strerror}") from None
