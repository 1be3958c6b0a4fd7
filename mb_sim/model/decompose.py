"""Approximate convex decomposition: a concave mesh (a mug, a tray, a bin) as a few convex
pieces, so that a moving body holds what is put in it, where its convex hull would be solid.

The pieces come from CoACD (Wei et al., "Approximate Convex Decomposition for 3D Meshes with
Collision-Aware Concavity and Tree Search", SIGGRAPH 2022), an optional dependency (the extra
`mb_sim[decompose]`, `pip install coacd`), with the settings below; they are computed once per
mesh file, scale and settings and kept on disk (`mb_sim.model.cache`). Each piece collides as
a CONVEX geometry of the body (`mb_sim.model.compile`); the body's mass properties stay those
of the whole mesh.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

import numpy as np

from mb_sim.model import cache
from mb_sim.model.mesh import READ_VERSION, MeshError, load_mesh

EXTRA = "decompose"
"""The pip extra that brings CoACD: pip install 'mb_sim[decompose]'."""
SETTINGS = {"threshold": 0.05, "preprocess_resolution": 40, "resolution": 1000,
            "mcts_nodes": 15, "mcts_iterations": 60, "mcts_max_depth": 3, "seed": 0}
"""CoACD's settings: concavity threshold 0.05 of the mesh's size, a lighter tree search than
its defaults (a decomposition of a mug-sized mesh in seconds), a fixed seed (the same pieces
every time)."""
VERSION = 1


@functools.cache
def _coacd() -> Any:
    try:
        import coacd
    except ImportError:
        return None
    coacd.set_log_level("error")
    return coacd


def available() -> bool:
    """Whether CoACD is installed."""
    return _coacd() is not None


def missing_message() -> str:
    return (f"needs the CoACD package for convex decomposition: pip install "
            f"'mb_sim[{EXTRA}]' (or pip install coacd)")


def _decompose(path: str, scale: tuple[float, float, float]) -> cache.Arrays:
    coacd = _coacd()
    verts, tris = load_mesh(path, scale)
    logging.getLogger("mb_sim").info("decomposing %s into convex pieces (once: kept in %s)",
                                     path, cache.cache_dir())
    try:
        parts = coacd.run_coacd(coacd.Mesh(np.asarray(verts, dtype=float),
                                           np.asarray(tris, dtype=np.int64)), **SETTINGS)
    except Exception as exc:  # the library's errors are of many kinds; all mean no pieces
        raise MeshError(f"{path}: convex decomposition failed: {exc}") from exc
    pieces = [np.asarray(v, dtype=float) for v, _ in parts if len(v) >= 4]
    if not pieces:
        raise MeshError(f"{path}: convex decomposition gave no piece")
    return {"verts": np.concatenate(pieces),
            "counts": np.array([len(p) for p in pieces], dtype=np.int64)}


@functools.lru_cache(maxsize=64)
def _pieces(path: str, stamp: str, scale: tuple[float, float, float]
            ) -> tuple[np.ndarray, ...]:
    entry = cache.key("pieces", stamp, scale, sorted(SETTINGS.items()), VERSION,
                      f"read{READ_VERSION}")
    arrays = cache.cached(entry, lambda: _decompose(path, scale))
    ends = np.cumsum(arrays["counts"])
    out = tuple(np.ascontiguousarray(arrays["verts"][e - c:e])
                for c, e in zip(arrays["counts"], ends))
    for piece in out:
        piece.setflags(write=False)
    return out


def convex_pieces(path: str | os.PathLike[str],
                  scale: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> tuple[np.ndarray, ...]:
    """The vertices of each convex piece of a mesh file at `scale`, in the file's frame.
    MeshError names the file when CoACD is missing, the file cannot be read or gives no
    piece."""
    if not available():
        raise MeshError(f"{path}: {missing_message()}")
    path = os.path.realpath(str(path))
    try:
        stamp = cache.file_stamp(path)
    except OSError as exc:
        raise MeshError(f"mesh file {path!r} does not exist") from exc
    return _pieces(path, stamp, tuple(float(s) for s in scale))
