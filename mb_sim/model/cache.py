"""What is computed once per input file and kept on disk: the triangles and BVH of a static
mesh or a heightfield image (`mb_sim.model.triangles`), a mesh's convex decomposition
(`mb_sim.model.decompose`), a mesh's simplified hull (`mb_sim.model.mesh.simplify_hull`).

An entry is a `.npz` file of arrays named by a hash of what it depends on: the file's real
path, size and modification time, the parameters (scale, decomposition settings) and the
version of the code that made it, so a changed file or a new version is computed again.
The folder is `MB_SIM_CACHE` when set, else `$XDG_CACHE_HOME/mb_sim` or `~/.cache/mb_sim`;
when it cannot be written the arrays are computed every time (nothing fails). Entries are
written to a temporary name and renamed, so a reader never sees half an entry.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping

import numpy as np

Arrays = dict[str, np.ndarray]


def cache_dir() -> str:
    """The folder of the cached entries (not created here)."""
    given = os.environ.get("MB_SIM_CACHE")
    if given:
        return given
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mb_sim")


def file_stamp(path: str) -> str:
    """What identifies a file's contents cheaply: real path, size, modification time."""
    st = os.stat(path)
    return f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}"


def key(kind: str, *parts: object) -> str:
    """The entry name of `kind` for these inputs."""
    text = "|".join(str(p) for p in parts)
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def _read(path: str) -> Arrays | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None


def _write(path: str, arrays: Mapping[str, np.ndarray]) -> None:
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except OSError:
        return


def cached(name: str, make: Callable[[], Arrays]) -> Arrays:
    """The arrays of entry `name` (`key`): read from the cache folder, or made by `make` and
    written there."""
    path = os.path.join(cache_dir(), name + ".npz")
    found = _read(path) if os.path.isfile(path) else None
    if found is not None:
        return found
    arrays = make()
    _write(path, arrays)
    return arrays
