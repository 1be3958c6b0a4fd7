"""Mesh files: resolve their URIs, read their triangles, and build the convex hull that collides.

Formats: STL (binary and ASCII) and Wavefront OBJ are read by this module; when the `trimesh`
package is installed it reads them (and every other format it knows, e.g. PLY, OFF, GLB,
Collada) instead. `load_mesh` is the one place a mesh file's triangles are read (collision
shapes, mass properties, the cached hulls and triangle sets, convex pieces, the viewers and
the cameras all take them from it): a Collada file's vertices are in the unit its
`<asset><unit meter="...">` declares and are turned into metres first (`collada_unit`), then
multiplied by the per-axis `scale`. A mesh collides as its convex hull, which is built once
per (file, modification time, scale) and cached; what collides is that hull simplified
(`simplify_hull`) to within HULL_TOLERANCE of it, the mass properties use the exact one.

Errors are `MeshError` (a ValueError) with the file named; the URDF and world loaders wrap
them into their own errors with the element or key path.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import struct
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mb_sim.model import resources as _resources

_log = logging.getLogger("mb_sim")


@functools.cache
def _trimesh() -> Any:
    """The trimesh module, or None when it is not installed (imported on first use: it is slow)."""
    try:
        import trimesh
    except ImportError:
        return None
    return trimesh


def trimesh_available() -> bool:
    """Whether mesh files are read by trimesh (else by the built-in STL and OBJ readers)."""
    return _trimesh() is not None


class MeshError(ValueError):
    """A mesh file that cannot be found, read or turned into a solid."""


# --------------------------------------------------------------------------------------------
# URI resolution


def resolve_uri(uri: str, base_dir: str | os.PathLike[str] | None = None,
                package_dirs: Iterable[str | os.PathLike[str]] = (),
                source: str | None = None) -> str:
    """Absolute path of the existing file named by `uri`, or MeshError naming what was tried.

    `package://` URIs are looked up as `mb_sim.model.resources` does (ament index,
    ROS_PACKAGE_PATH, `package_dirs`, then near `base_dir`); `file://` URIs and absolute paths
    are used as they are; relative paths are taken from `base_dir` (the current folder if
    None). `source` names the file that refers to it in log lines.
    """
    if not isinstance(uri, str) or not uri:
        raise MeshError(f"mesh URI must be a non-empty string, got {uri!r}")
    if base_dir is None:
        base_dir = os.getcwd()
    try:
        path, why = _resources.resolve_uri(os.path.expanduser(uri), base_dir, package_dirs,
                                           source)
    except OSError as exc:
        raise MeshError(f"cannot resolve {uri!r}: {exc}") from exc
    if path is None:
        raise MeshError(why or f"cannot resolve {uri!r}")
    return path


# --------------------------------------------------------------------------------------------
# Readers


def _merge(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Triangle soup (m, 3, 3) -> shared vertices (n, 3) and triangles (m, 3)."""
    flat = corners.reshape(-1, 3)
    verts, inverse = np.unique(flat, axis=0, return_inverse=True)
    return verts, inverse.reshape(-1, 3).astype(np.int64)


def _read_stl(path: str) -> tuple[np.ndarray, np.ndarray]:
    data = Path(path).read_bytes()
    if len(data) >= 84:
        (count,) = struct.unpack_from("<I", data, 80)
        if len(data) == 84 + 50 * count:
            rec = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
            tris = np.frombuffer(data, dtype=rec, count=count, offset=84)["v"].astype(float)
            if count == 0:
                raise MeshError(f"{path}: binary STL holds no triangles")
            return _merge(tris)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise MeshError(f"{path}: neither a binary STL (size does not match its triangle "
                        "count) nor an ASCII STL") from exc
    if not text.lstrip().lower().startswith("solid"):
        raise MeshError(f"{path}: ASCII STL must start with 'solid'")
    nums = re.findall(r"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)", text, flags=re.MULTILINE)
    if not nums or len(nums) % 3:
        raise MeshError(f"{path}: ASCII STL has {len(nums)} vertex lines (need a non-zero "
                        "multiple of 3)")
    try:
        corners = np.array(nums, dtype=float).reshape(-1, 3, 3)
    except ValueError as exc:
        raise MeshError(f"{path}: ASCII STL has a vertex that is not three numbers") from exc
    return _merge(corners)


def _read_obj(path: str) -> tuple[np.ndarray, np.ndarray]:
    verts: list[list[float]] = []
    tris: list[list[int]] = []
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    for lineno, line in enumerate(text.splitlines(), start=1):
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        if parts[0] == "v":
            try:
                verts.append([float(x) for x in parts[1:4]])
            except ValueError as exc:
                raise MeshError(f"{path}: line {lineno}: bad vertex {line.strip()!r}") from exc
            if len(verts[-1]) != 3:
                raise MeshError(f"{path}: line {lineno}: vertex needs 3 coordinates")
        elif parts[0] == "f":
            idx = []
            for token in parts[1:]:
                try:
                    i = int(token.split("/", 1)[0])
                except ValueError as exc:
                    raise MeshError(f"{path}: line {lineno}: bad face index {token!r}") from exc
                i = i - 1 if i > 0 else len(verts) + i
                if not 0 <= i < len(verts):
                    raise MeshError(f"{path}: line {lineno}: face index {token!r} names no "
                                    "vertex defined before it")
                idx.append(i)
            if len(idx) < 3:
                raise MeshError(f"{path}: line {lineno}: a face needs at least 3 vertices")
            tris.extend([idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1))
    if not verts or not tris:
        raise MeshError(f"{path}: OBJ holds no faces")
    return np.array(verts, dtype=float), np.array(tris, dtype=np.int64)


def _read_with_trimesh(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Every triangle of the file, each part moved by its node transform (a Collada or glTF
    scene has several); colours, materials and textures are not read."""
    if os.path.splitext(path)[1].lower() == ".dae" and not _collada_available():
        raise MeshError(f"{path}: reading Collada (.dae) meshes needs the pycollada package "
                        "(pip install pycollada; rosdep key python3-collada)")
    try:
        scene = _trimesh().load(path, force="scene", process=False, skip_materials=True)
        parts = []
        for node in scene.graph.nodes_geometry:
            transform, name = scene.graph[node]
            part = scene.geometry[name]
            if hasattr(part, "faces") and len(part.faces):
                parts.append((np.asarray(part.vertices, dtype=float) @ transform[:3, :3].T
                              + transform[:3, 3], np.asarray(part.faces, dtype=np.int64)))
    except Exception as exc:  # readers raise many types; all mean unreadable
        raise MeshError(f"{path}: cannot read mesh: {exc}") from exc
    if not parts:
        raise MeshError(f"{path}: the mesh holds no triangles")
    offsets = np.cumsum([0] + [len(v) for v, _ in parts[:-1]])
    verts = np.concatenate([v for v, _ in parts])
    tris = np.concatenate([t + k for (_, t), k in zip(parts, offsets)])
    return verts, tris


def _part_colors(part: Any) -> np.ndarray | None:
    """(faces, 3) rgb in 0..1 of one trimesh part from the file's own colours: face or vertex
    colours, else its material's colour (a texture's mean colour when it has one); None when
    the file gives none."""
    visual = getattr(part, "visual", None)
    faces = len(part.faces)
    kind = getattr(visual, "kind", None)
    if kind == "face":
        return np.asarray(visual.face_colors, dtype=float)[:, :3] / 255.0
    if kind == "vertex":
        colors = np.asarray(visual.vertex_colors, dtype=float)[:, :3] / 255.0
        return colors[np.asarray(part.faces)].mean(axis=1)
    material = getattr(visual, "material", None)
    if material is None:
        return None
    image = getattr(material, "image", None) or getattr(material, "baseColorTexture", None)
    if image is not None:
        try:
            pixels = np.asarray(image.convert("RGB"), dtype=float).reshape(-1, 3)
            return np.tile(pixels.mean(axis=0) / 255.0, (faces, 1))
        except Exception as exc:  # noqa: BLE001 - an unreadable texture: the material's colour
            _log.info("a mesh's texture cannot be read (%s); its material's colour is drawn",
                      exc)
    color = getattr(material, "main_color", None)
    if color is None:
        return None
    return np.tile(np.asarray(color, dtype=float)[:3] / 255.0, (faces, 1))


def _texture_resolver(path: str) -> Any:
    """A resolver of the files a mesh names (its textures) that, as Gazebo's and RViz's mesh
    loaders do, also reaches outside the mesh's folder (Gazebo models keep textures in
    `../materials/textures/`); None (trimesh's default) where trimesh has no such option."""
    try:
        return _trimesh().resolvers.FilePathResolver(os.path.dirname(path), allow_anywhere=True)
    except TypeError:
        return None


@functools.lru_cache(maxsize=64)
def _face_colors_cached(path: str, _stamp: tuple[int, int], faces: int) -> np.ndarray | None:
    try:
        scene = _trimesh().load(path, force="scene", process=False,
                                resolver=_texture_resolver(path))
        parts = []
        for node in scene.graph.nodes_geometry:
            part = scene.geometry[scene.graph[node][1]]
            if hasattr(part, "faces") and len(part.faces):
                parts.append(part)
    except Exception:  # noqa: BLE001 - colours are only drawn: the caller's colour then
        return None
    colors = [_part_colors(part) for part in parts]
    if all(c is None for c in colors) or sum(len(p.faces) for p in parts) != faces:
        return None
    out = np.concatenate([np.full((len(p.faces), 3), np.nan) if c is None else c
                          for p, c in zip(parts, colors)])
    out.setflags(write=False)
    return out


def mesh_face_colors(path: str | os.PathLike[str], faces: int) -> np.ndarray | None:
    """(faces, 3) rgb in 0..1 of each triangle of `load_mesh(path)` (`faces` of them) from
    the file's own colours and materials (read by trimesh; NaN for a part without any), or
    None when the file has none or cannot be read with them."""
    path = os.path.realpath(str(path))
    if not trimesh_available() or not os.path.isfile(path):
        return None
    st = os.stat(path)
    return _face_colors_cached(path, (st.st_mtime_ns, st.st_size), int(faces))


@functools.cache
def _collada_available() -> bool:
    try:
        import collada  # noqa: F401
    except ImportError:
        return False
    return True


READ_VERSION = 2
"""Of `load_mesh`: what it returns for a file. Everything made from a mesh's triangles and
kept on disk (`mb_sim.model.cache`: simplified hulls, triangle sets, convex pieces) carries it
in its key, so an entry made by an earlier reader is made again, never served. 2: Collada
units applied (`collada_unit`)."""

UNIT_RANGE = (1e-6, 1e6)
"""Accepted `<unit meter>` of a Collada file, metres per unit of the file (micrometres to
thousands of kilometres)."""


def _local(tag: str) -> str:
    """An element's tag without its XML namespace (`{http://www.collada.org/...}asset`)."""
    return tag.rpartition("}")[2]


@functools.lru_cache(maxsize=256)
def _collada_unit_cached(path: str, _stamp: tuple[int, int]) -> float:
    """The `meter` of the `<unit>` of the document's top `<asset>` (the first child of
    `<COLLADA>` in a valid file, which ends the reading; looked for among all its children
    otherwise, as gz-common's FirstChildElement does)."""
    depth = 0
    in_asset = False
    try:
        for event, element in ET.iterparse(path, events=("start", "end")):
            depth += 1 if event == "start" else -1
            tag = _local(element.tag)
            if event == "start":
                if depth == 1 and tag != "COLLADA":
                    raise MeshError(f"{path}: a Collada file's root element is <COLLADA>, "
                                    f"not <{tag}>")
                in_asset = in_asset or (depth == 2 and tag == "asset")
                continue
            if in_asset and depth == 2 and tag == "unit":  # <COLLADA><asset><unit>
                return _unit_meter(path, element.get("meter"), element.get("name"))
            if in_asset and depth == 1:  # the top <asset> ended without a <unit>
                return 1.0
            if depth <= 1:
                element.clear()  # a top-level library read past: keep no memory of it
    except ET.ParseError as exc:
        raise MeshError(f"{path}: cannot read mesh: malformed XML: {exc}") from exc
    return 1.0


def _unit_meter(path: str, meter: str | None, name: str | None) -> float:
    """Metres per unit of a Collada `<unit meter name>` (COLLADA 1.4.1: meter defaults to
    1.0); MeshError naming the file and the value when it is not a positive finite number
    within UNIT_RANGE."""
    if meter is None:
        return 1.0
    try:
        value = float(meter)
    except ValueError:
        value = float("nan")
    if not (np.isfinite(value) and UNIT_RANGE[0] <= value <= UNIT_RANGE[1]):
        shown = f" name={name!r}" if name is not None else ""
        raise MeshError(f"{path}: <COLLADA><asset><unit meter={meter!r}{shown}>: meter must "
                        f"be the metres per unit of the file, a number within "
                        f"[{UNIT_RANGE[0]:g}, {UNIT_RANGE[1]:g}]")
    if value != 1.0:
        _log.debug("%s: Collada unit %s (%g m): vertices scaled by %g", path, name or "?",
                   value, value)
    return value


def collada_unit(path: str | os.PathLike[str]) -> float:
    """Metres per unit of a mesh file: a Collada (`.dae`) file's `<COLLADA><asset><unit
    meter>` (1.0 when absent), 1.0 for every other format (STL and OBJ carry no unit).

    As gz-common's ColladaLoader (which scales the loaded mesh by it, after the node
    transforms) and RViz (`getMeshUnitRescale`) read it: only the document's top `<asset>`;
    its `<up_axis>` is ignored, as both ignore it (a Y_UP file is read as written, and so
    drawn by Gazebo and RViz). Cached per file and modification time."""
    path = str(path)
    if os.path.splitext(path)[1].lower() != ".dae":
        return 1.0
    try:
        st = os.stat(path)
    except OSError as exc:
        raise MeshError(f"mesh file {path!r} does not exist") from exc
    return _collada_unit_cached(os.path.realpath(path), (st.st_mtime_ns, st.st_size))


def _scale_vector(scale: float | tuple[float, ...] | np.ndarray) -> np.ndarray:
    s = np.broadcast_to(np.asarray(scale, dtype=float), (3,)).copy()
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise MeshError(f"mesh scale must be finite and > 0, got {np.asarray(scale).tolist()}")
    return s


def load_mesh(path: str | os.PathLike[str], scale: float | tuple[float, ...] = (1.0, 1.0, 1.0),
              use_trimesh: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (n, 3) in metres times `scale`, and triangles (m, 3), of a mesh file.

    Metres: a Collada file's vertices (after its node transforms) times its unit
    (`collada_unit`: `<asset><unit meter>`), before `scale` (the URDF's or SDF's), as Gazebo
    and RViz read them. `use_trimesh`: None uses trimesh when installed; False forces the
    built-in STL/OBJ reader.
    """
    path = str(path)
    s = _scale_vector(scale)
    if not os.path.isfile(path):
        raise MeshError(f"mesh file {path!r} does not exist")
    if not os.access(path, os.R_OK):
        raise MeshError(f"mesh file {path!r} is not readable")
    ext = os.path.splitext(path)[1].lower()
    if use_trimesh is None:
        use_trimesh = trimesh_available()
    elif use_trimesh and not trimesh_available():
        raise MeshError(f"{path}: use_trimesh=True but the trimesh package is not installed")
    try:
        if use_trimesh:
            verts, tris = _read_with_trimesh(path)
        elif ext == ".stl":
            verts, tris = _read_stl(path)
        elif ext == ".obj":
            verts, tris = _read_obj(path)
        else:
            raise MeshError(f"{path}: format {ext or '(none)'!r} needs the trimesh package "
                            "(built-in readers: .stl, .obj)")
    except OSError as exc:
        raise MeshError(f"{path}: cannot read: {exc}") from exc
    if not np.all(np.isfinite(verts)):
        raise MeshError(f"{path}: vertex coordinates are not all finite")
    return verts * (collada_unit(path) * s), tris


# --------------------------------------------------------------------------------------------
# Convex hull


def convex_hull(vertices: np.ndarray, name: str = "mesh") -> tuple[np.ndarray, np.ndarray]:
    """Convex hull of a point set: hull vertices (k, 3) and outward-wound triangles.

    Raises MeshError when the points span no volume (fewer than 4, or all in a plane).
    """
    from scipy.spatial import ConvexHull, QhullError

    pts = _distinct(np.asarray(vertices, dtype=float))
    if len(pts) < 4:
        raise MeshError(f"{name}: {len(pts)} vertices span no volume (need 4 or more)")
    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError) as exc:
        raise MeshError(f"{name}: the vertices are flat or degenerate and span no volume") from exc
    tris = hull.simplices.copy()
    p0, p1, p2 = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    inward = np.einsum("ij,ij->i", np.cross(p1 - p0, p2 - p0), hull.equations[:, :3]) < 0
    tris[inward] = tris[inward][:, [0, 2, 1]]
    used = np.unique(tris)
    remap = np.full(len(pts), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return pts[used], remap[tris]


HULL_TOLERANCE = 0.0005
"""m: the default deviation of a colliding hull from the exact hull of its mesh."""
HULL_VERSION = 1
"""Of `simplify_hull`: simplified hulls kept on disk (`mb_sim.model.cache`) are made again
when it changes."""


def simplify_hull(points: np.ndarray, tolerance: float = HULL_TOLERANCE,
                  max_vertices: int | None = None) -> np.ndarray:
    """A subset of the hull vertices `points` whose hull lies within `tolerance` (m) of the
    whole: no point of the exact hull is farther than that from the simplified one, which
    lies inside it. Greedy farthest-point insertion (the Quickhull order, Barber et al. 1996)
    from the points farthest apart: every face of the hull so far takes its farthest point
    beyond its plane while that is more than `tolerance` away; once none is, the true
    distances (to the nearest triangle, not the plane) are checked and the farthest point is
    added until all are within. `max_vertices` (4 or more; MuJoCo's `maxhullvert`) stops the
    insertion earlier, the deviation then unbounded. Points spanning no volume are returned
    as they are."""
    from scipy.spatial import ConvexHull, QhullError

    pts = np.asarray(points, dtype=float)
    cap = len(pts) if max_vertices is None else max(4, int(max_vertices))
    if len(pts) <= 4 or (tolerance <= 0.0 and cap >= len(pts)):
        return pts
    chosen = _initial_simplex(pts)
    try:
        hull = ConvexHull(pts[chosen], incremental=True)
    except (QhullError, ValueError):
        return pts
    active = np.setdiff1d(np.arange(len(pts)), chosen)  # the hull grows: inside stays inside
    while len(chosen) < cap and len(active):
        eq = hull.equations
        above = pts[active] @ eq[:, :3].T + eq[:, 3]
        face = np.argmax(above, axis=1)
        beyond = above[np.arange(len(active)), face]
        keep = beyond > 0.0
        active, face, beyond, above = active[keep], face[keep], beyond[keep], above[keep]
        far = np.flatnonzero(beyond > tolerance)
        if len(far):  # each face's farthest point beyond it
            order = far[np.lexsort((-beyond[far], face[far]))]
            firsts = order[np.r_[True, face[order][1:] != face[order][:-1]]]
        elif len(active):
            true = _distances(pts[active], pts[chosen][hull.simplices], above)
            if true.max() <= tolerance:
                break
            firsts = np.array([int(np.argmax(true))])
        else:
            break
        new = active[firsts[np.argsort(-beyond[firsts])]][:cap - len(chosen)]
        chosen += new.tolist()
        active = np.setdiff1d(active, new)
        hull.add_points(pts[new])
    hull.close()
    return pts[np.sort(chosen)]


def _initial_simplex(pts: np.ndarray) -> list[int]:
    """Four points spanning a large tetrahedron: the extremes along x, the farthest from
    their line, the farthest from their plane."""
    a, b = int(np.argmin(pts[:, 0])), int(np.argmax(pts[:, 0]))
    if a == b:
        b = int(np.argmax(np.linalg.norm(pts - pts[a], axis=1)))
    ab = pts[b] - pts[a]
    c = int(np.argmax(np.linalg.norm(np.cross(pts - pts[a], ab), axis=1)))
    n = np.cross(ab, pts[c] - pts[a])
    d = int(np.argmax(np.abs((pts - pts[a]) @ n)))
    return list(dict.fromkeys([a, b, c, d]))


def _distances(points: np.ndarray, tri: np.ndarray, above: np.ndarray) -> np.ndarray:
    """Distance of each point outside a convex polytope to it: to the nearest of the triangles
    tri (t, 3, 3) whose planes it lies above (`above` > 0, (p, t); the nearest point of a
    convex polytope lies on such a face), to the plane when the foot falls inside the
    triangle, else to the nearest of its edges."""
    ip, it = np.nonzero(above > 0.0)
    p = points[ip]
    a, b, c = tri[it, 0], tri[it, 1], tri[it, 2]
    n = np.cross(b - a, c - a)
    n /= np.maximum(np.linalg.norm(n, axis=1), 1e-300)[:, None]
    h = np.einsum("ik,ik->i", p - a, n)
    foot = p - h[:, None] * n
    inside = np.ones(len(ip), dtype=bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ik,ik->i", np.cross(v - u, foot - u), n) >= 0.0
    best = np.where(inside, np.abs(h), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        e = v - u
        t = np.clip(np.einsum("ik,ik->i", p - u, e) / np.maximum(
            np.einsum("ik,ik->i", e, e), 1e-300), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(p - u - t[:, None] * e, axis=1))
    out = np.full(len(points), np.inf)
    np.minimum.at(out, ip, best)
    return out


def _distinct(points: np.ndarray) -> np.ndarray:
    """The points without exact repeats (a triangle soup lists each vertex about six times):
    grouped by a hash of their bits, the points that differ from their group's first kept
    too, so the result is exact whatever the hash does."""
    bits = np.ascontiguousarray(points).reshape(-1, 3).view(np.uint64)
    key = ((bits[:, 0] * np.uint64(0x9E3779B97F4A7C15))
           ^ (bits[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)) ^ bits[:, 2])
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    differ = np.any(points != points[first][group.reshape(-1)], axis=1)
    return np.concatenate([points[first], points[differ]])


@functools.lru_cache(maxsize=256)
def _hull_cached(path: str, _stamp: tuple[int, int], scale: tuple[float, float, float]
                 ) -> tuple[np.ndarray, np.ndarray]:
    verts, tris = convex_hull(load_mesh(path, scale)[0], name=path)
    verts.setflags(write=False)
    tris.setflags(write=False)
    return verts, tris


def convex_hull_mesh(path: str | os.PathLike[str],
                     scale: float | tuple[float, ...] = (1.0, 1.0, 1.0)
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Read-only hull vertices and outward triangles of a mesh file, cached per file and scale."""
    path = os.path.realpath(str(path))
    s = tuple(float(x) for x in _scale_vector(scale))
    try:
        st = os.stat(path)
    except OSError as exc:
        raise MeshError(f"mesh file {path!r} does not exist") from exc
    return _hull_cached(path, (st.st_mtime_ns, st.st_size), s)


@functools.lru_cache(maxsize=256)
def _collision_hull_cached(path: str, _stamp: tuple[int, int], scale: tuple[float, float, float],
                           tolerance: float, max_vertices: int | None) -> np.ndarray:
    from mb_sim.model import cache

    entry = cache.key("hull", cache.file_stamp(path), scale, tolerance, max_vertices,
                      HULL_VERSION, f"read{READ_VERSION}")
    verts = cache.cached(entry, lambda: {"verts": simplify_hull(
        _hull_cached(path, _stamp, scale)[0], tolerance, max_vertices)})["verts"]
    verts.setflags(write=False)
    return verts


def collision_hull_vertices(path: str | os.PathLike[str],
                            scale: float | tuple[float, ...] = (1.0, 1.0, 1.0),
                            tolerance: float = HULL_TOLERANCE,
                            max_vertices: int | None = None) -> np.ndarray:
    """Vertices (k, 3) of the hull that collides: the mesh's scaled hull simplified to within
    `tolerance` m (`simplify_hull`), cached per file, scale and limits. A negative scale
    mirrors the mesh (as URDF files of symmetric limbs use it): the hull is made at the
    scale's magnitudes and mirrored, distances unchanged."""
    path = os.path.realpath(str(path))
    given = np.broadcast_to(np.asarray(scale, dtype=float), (3,))
    s = tuple(float(x) for x in _scale_vector(np.abs(given)))
    try:
        st = os.stat(path)
    except OSError as exc:
        raise MeshError(f"mesh file {path!r} does not exist") from exc
    verts = _collision_hull_cached(path, (st.st_mtime_ns, st.st_size), s, float(tolerance),
                                   max_vertices)
    return verts * np.where(given < 0.0, -1.0, 1.0)


def convex_hull_vertices(path: str | os.PathLike[str],
                         scale: float | tuple[float, ...] = (1.0, 1.0, 1.0)) -> np.ndarray:
    """Read-only vertices (k, 3) of the convex hull of a mesh file, in the mesh file's frame."""
    return convex_hull_mesh(path, scale)[0]
