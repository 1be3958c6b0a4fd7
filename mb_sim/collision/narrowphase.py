"""Narrow phase and contact determination (Holck 2005, fig. 2.4 and 1.3).

For every candidate pair (a, b) the kernel below writes contacts with
    point  midway between the two surfaces,
    normal unit, from b to a (moving a along +normal separates them),
    depth  penetration (> 0 when overlapping), reported while depth > -envelope,
so the contact indication of Holck 2005, fig. 2.4 (dist = -depth, point = midpoint, normal from
B to A) extended to manifolds of up to four points.

Closed forms (closed_forms.py): sphere-sphere, sphere-plane, sphere-box, sphere-capsule,
sphere-cylinder, capsule-capsule, capsule-plane, box-plane, cylinder-plane, convex-plane. Boxes and convex hulls
against each other: SAT with face clipping (manifold.py); two hulls too large for SAT's
all-pairs tests (SAT_MAX_VERTEX_PAIRS) go to GJK/EPA with the feature manifold below, whose
support maps climb the hulls. A pair for SAT or GJK whose oriented bounding boxes lie farther
apart than the envelope is skipped before either runs (midphase.py), and so is one that the
axis which separated it at the last step still separates (separating_axes.py).
Everything else (pairs with a cylinder, capsule-box, capsule-convex, sphere-convex): GJK
distance on the shape cores, EPA when the cores overlap (gjk.py); then, when a flat feature
of one shape faces the other, the facing feature of the other (polygon, cylinder rim line,
capsule segment) is clipped against it to get several points (features.py). Any convex
shape against a mesh's triangles: the mesh's BVH walked with the shape's box, each triangle
met collided, the points reduced (mesh_contact.py).

Which function handles a pair is one table, `COLLIDER[kind a, kind b]` (kinds ordered a <= b),
as MuJoCo's mjCOLLISIONFUNC; every collider has the signature (g, w, ia, ib, envelope) and
writes its candidates into the workspace w (`mb_sim.collision.work.CollisionWork`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.collision.broadphase import BroadPhase, broad_phase
from mb_sim.collision.closed_forms import (
    capsule_capsule,
    plane_box,
    plane_capsule,
    plane_convex,
    plane_cylinder,
    plane_sphere,
    sphere_box,
    sphere_capsule,
    sphere_cylinder,
    sphere_sphere,
)
from mb_sim.collision.contacts import Contacts
from mb_sim.collision.features import (
    COS_TILT,
    FLAT,
    LINE,
    facing_feature,
    segment_on_face,
    segments_parallel,
)
from mb_sim.collision.gjk import core_radius, epa, gjk
from mb_sim.collision.manifold import (
    clip_face_contacts,
    emit,
    reduce4,
    sat_boxes,
    sat_polytopes,
)
from mb_sim.collision.mesh_contact import mesh_contacts
from mb_sim.collision.midphase import boxes_apart
from mb_sim.collision.poses import geometry_poses_into, owner_poses, shapes_of
from mb_sim.collision.separating_axes import found_apart, remember_axis, still_apart
from mb_sim.collision.work import (
    MAX_PER_PAIR,
    allocate_collision_work,
    allocate_contact_list,
    new_collision_work,
    new_contact_list,
)
from mb_sim.model.compile import geoms_of, new_geoms
from mb_sim.model.shapes import (
    MESH,
    PLANE,
    CollisionScene,
)
from mb_sim.vec3 import (
    Vec,
    add,
    dot,
    madd,
    normalize,
    row,
    scale,
    sub,
)

# ---------------------------------------------------------------- GJK / EPA with features

@inline
def _core_contact(g: Any, w: Any, ia: int, ib: int, env: float) -> tuple[bool, Vec, float, Vec]:
    """GJK on the cores; EPA when they overlap: (within the envelope, normal from b to a,
    depth, point midway between the surfaces)."""
    sh = shapes_of(g, w)
    ra = core_radius(g.kind, g.size, ia)
    rb = core_radius(g.kind, g.size, ib)
    dist, ns, pa, pb = gjk(sh, w, ia, ib, ra + rb + env)
    if dist > 0.0:
        depth = ra + rb - dist
        if depth <= -env:
            found_apart(w, ia, sub(pa, pb))
            return False, (0.0, 0.0, 1.0), depth, pa
        nrm = scale(sub(pa, pb), 1.0 / dist)
    else:
        ok, d, ne, pa, pb = epa(sh, w, ia, ib, ns)
        if ok:
            nrm = scale(ne, -1.0)
            depth = d + ra + rb
        else:
            nrm = normalize(sub(row(w.geom_pos, ia), row(w.geom_pos, ib)))
            if dot(nrm, nrm) == 0.0:
                nrm = (0.0, 0.0, 1.0)
            depth = ra + rb
    sa = madd(pa, -ra, nrm)
    sb = madd(pb, rb, nrm)
    return True, nrm, depth, scale(add(sa, sb), 0.5)


@inline
def _facing_manifold(g: Any, w: Any, ia: int, ib: int, nrm: Vec, env: float) -> int:
    """When a flat feature of one shape faces the other, the facing feature of the other
    (polygon, segment) clipped against it; two lying segments: their overlap. Returns the
    candidates written (0: the single point of `_core_contact` stands alone)."""
    FA, IA, FB, IB = w.polygon_a, w.polygon_a_id, w.polygon_b, w.polygon_b_id
    ta, na, fna, rada = facing_feature(g, w, ia, scale(nrm, -1.0), FA, IA, COS_TILT)
    tb, nb, fnb, radb = facing_feature(g, w, ib, nrm, FB, IB, COS_TILT)
    if ta == FLAT and tb >= LINE and (tb == LINE or abs(dot(fna, nrm)) >= abs(dot(fnb, nrm))):
        if tb == FLAT:
            return clip_face_contacts(w, FA, na, fna, FB, IB, nb, -1.0, env, 1 << 16)
        return segment_on_face(w, FA, na, fna, row(FB, 0), row(FB, 1), radb, -1.0, env,
                                1 << 16)
    if tb == FLAT and ta >= LINE:
        if ta == FLAT:
            return clip_face_contacts(w, FB, nb, fnb, FA, IA, na, 1.0, env, 2 << 16)
        return segment_on_face(w, FB, nb, fnb, row(FA, 0), row(FA, 1), rada, 1.0, env,
                                2 << 16)
    if ta == LINE and tb == LINE:
        return segments_parallel(w, row(FA, 0), row(FA, 1), rada, row(FB, 0), row(FB, 1),
                                  radb, nrm, env)
    return 0


@helper
def _generic(g: Any, w: Any, ia: int, ib: int, env: float, manifold: bool) -> int:
    """GJK/EPA's point (`_core_contact`), and with `manifold` the feature manifold
    (`_facing_manifold`) with that point added when it lies deeper."""
    near, nrm, depth, point = _core_contact(g, w, ia, ib, env)
    if not near:
        return 0
    m = _facing_manifold(g, w, ia, ib, nrm, env) if manifold else 0
    cp, cn, cd, cf = w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature
    if m == 0:
        return emit(cp, cn, cd, cf, 0, point, nrm, depth, 0)
    deepest = cd[0]
    for k in range(1, m):
        deepest = max(deepest, cd[k])
    if depth > deepest + 1e-7:
        m = emit(cp, cn, cd, cf, m, point, nrm, depth, 0)
    return reduce4(cp, cn, cd, cf, m)


@inline
def _gjk_point(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    return _generic(g, w, ia, ib, env, False)


@inline
def _gjk_manifold(g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    return _generic(g, w, ia, ib, env, True)


# ---------------------------------------------------------------- dispatch

(NONE, PLANE_SPHERE, PLANE_BOX, PLANE_CAPSULE, PLANE_CYLINDER, PLANE_CONVEX, SPHERE_SPHERE,
 SPHERE_BOX, SPHERE_CAPSULE, SPHERE_CYLINDER, BOX_BOX, POLYTOPES, CAPSULE_CAPSULE, GJK_POINT,
 GJK_MANIFOLD, TRIANGLES) = range(16)
"""The colliders, by number (see `collide_pair`)."""

_ = NONE
T = TRIANGLES
COLLIDER = np.array([
    # PLANE  SPHERE         BOX         CAPSULE          CYLINDER         CONVEX     MESH
    [_, PLANE_SPHERE, PLANE_BOX, PLANE_CAPSULE, PLANE_CYLINDER, PLANE_CONVEX, _],  # PLANE
    [_, SPHERE_SPHERE, SPHERE_BOX, SPHERE_CAPSULE, SPHERE_CYLINDER, GJK_POINT, T],  # SPHERE
    [_, _, BOX_BOX, GJK_MANIFOLD, GJK_MANIFOLD, POLYTOPES, T],  # BOX
    [_, _, _, CAPSULE_CAPSULE, GJK_MANIFOLD, GJK_MANIFOLD, T],  # CAPSULE
    [_, _, _, _, GJK_MANIFOLD, GJK_MANIFOLD, T],  # CYLINDER
    [_, _, _, _, _, POLYTOPES, T],  # CONVEX
    [_, _, _, _, _, _, _],  # MESH
], dtype=np.int64)
"""COLLIDER[kind a, kind b] (kind a <= kind b) handles a pair: closed forms, SAT with face
clipping (BOX_BOX, POLYTOPES), GJK/EPA's single point (GJK_POINT) or with the feature manifold
(GJK_MANIFOLD), a convex shape against a mesh's triangles (TRIANGLES:
`mb_sim.collision.mesh_contact`); NONE: the pair never collides (two planes, a plane or a mesh
with a mesh: static shapes)."""
assert COLLIDER.shape == (MESH + 1, MESH + 1)

SAT_MAX_VERTEX_PAIRS = 256
"""Two polyhedra whose vertex counts multiply to more than this go to GJK_MANIFOLD instead of
SAT: SAT tests every face of each against every vertex of the other and every edge pair
(Gauss-map pruned), which grows with the product of their sizes, where GJK's climbing support
maps grow with about the square root of each. On tiago_dual's touching hand links (hulls of
20-25 vertices, products 400-576) SAT took 9.5-37 us a pair and GJK_MANIFOLD 4.8-10, with
the same normal, depth and points on the faces in contact; boxes and hulls of up to 32
vertices against a box keep SAT's manifold."""


@helper
def collide_pair(code: int, g: Any, w: Any, ia: int, ib: int, env: float) -> int:
    """Run collider `code` of the table on geometries ia, ib: candidates into w."""
    if code == PLANE_SPHERE:
        return plane_sphere(g, w, ia, ib, env)
    if code == PLANE_BOX:
        return plane_box(g, w, ia, ib, env)
    if code == PLANE_CAPSULE:
        return plane_capsule(g, w, ia, ib, env)
    if code == PLANE_CYLINDER:
        return plane_cylinder(g, w, ia, ib, env)
    if code == PLANE_CONVEX:
        return plane_convex(g, w, ia, ib, env)
    if code == SPHERE_SPHERE:
        return sphere_sphere(g, w, ia, ib, env)
    if code == SPHERE_BOX:
        return sphere_box(g, w, ia, ib, env)
    if code == SPHERE_CAPSULE:
        return sphere_capsule(g, w, ia, ib, env)
    if code == SPHERE_CYLINDER:
        return sphere_cylinder(g, w, ia, ib, env)
    if code == BOX_BOX:
        return sat_boxes(g, w, ia, ib, env)
    if code == POLYTOPES:
        return sat_polytopes(g, w, ia, ib, env)
    if code == CAPSULE_CAPSULE:
        return capsule_capsule(g, w, ia, ib, env)
    if code == GJK_POINT:
        return _gjk_point(g, w, ia, ib, env)
    if code == GJK_MANIFOLD:
        return _gjk_manifold(g, w, ia, ib, env)
    if code == TRIANGLES:
        return mesh_contacts(g, w, ia, ib, env)
    return 0


@inline
def _bad_pair(pairs: np.ndarray, npairs: int, ng: int) -> int:
    """The first pair that does not name two different geometries, or -1."""
    for p in range(npairs):
        i = pairs[p, 0]
        j = pairs[p, 1]
        if i < 0 or i >= ng or j < 0 or j >= ng or i == j:
            return p
    return -1


@inline
def _append(c: Any, w: Any, k: int, i: int, j: int, sign: float, m: int) -> int:
    """The first m candidates of w as contacts k, k + 1, ... of pair (i, j) in c (normals
    times sign); returns the next free contact."""
    geom_a, geom_b, point, normal, depth, feature = (c.geom_a, c.geom_b, c.point, c.normal,
                                                     c.depth, c.feature)
    cp, cn, cd, cf = w.cand_point, w.cand_normal, w.cand_depth, w.cand_feature
    for q in range(m):
        geom_a[k] = i
        geom_b[k] = j
        for x in range(3):
            point[k, x] = cp[q, x]
            normal[k, x] = sign * cn[q, x]
        depth[k] = cd[q]
        feature[k] = cf[q]
        k += 1
    return k


@njit
def narrow_phase_into(g: Any, w: Any, c: Any, npairs: int, env: float,
                      force_generic: bool) -> int:
    """Contacts of the first npairs pairs of w.pairs (geometries `g`, a
    `mb_sim.model.compile.Geoms` record, posed at w.geom_pos, w.geom_rot) into c (a
    `ContactList`). Returns the number of contacts, -1 when they do not fit, or -2 - p when
    pair p does not name two different geometries."""
    kind, pairs = g.kind, w.pairs
    bad = _bad_pair(pairs, npairs, kind.shape[0])
    if bad >= 0:
        return -2 - bad
    capacity = c.depth.shape[0]
    ng = kind.shape[0]
    sh = shapes_of(g, w)
    k = 0
    for p in range(npairs):
        i = pairs[p, 0]
        j = pairs[p, 1]
        if kind[i] <= kind[j]:
            ia, ib, sign = i, j, 1.0
        else:
            ia, ib, sign = j, i, -1.0
        code = GJK_POINT if force_generic else COLLIDER[kind[ia], kind[ib]]
        convex = code == POLYTOPES or code == GJK_MANIFOLD or code == GJK_POINT
        key = i * ng + j + 1
        if convex:
            if boxes_apart(g.box_center, g.box_half, w.geom_pos, w.geom_rot, ia, ib, env):
                continue
            gap = core_radius(kind, g.size, ia) + core_radius(kind, g.size, ib) + env
            if still_apart(sh, w, key, ia, ib, gap):
                continue
            if code == POLYTOPES and g.vert_count[ia] * g.vert_count[ib] > SAT_MAX_VERTEX_PAIRS:
                code = GJK_MANIFOLD
            w.apart_last_frame[0] = -1
        m = min(collide_pair(code, g, w, ia, ib, env), MAX_PER_PAIR)
        if convex and m == 0:
            remember_axis(w, key, ia, ib)
        if k + m > capacity:
            return -1
        k = _append(c, w, k, i, j, sign, m)
    return k


@njit
def detect_into(g: Any, w: Any, c: Any, env: float) -> bool:
    """Owner poses (w.owner_pos, w.owner_rot) -> geometry poses -> the scene tree's pairs
    (world boxes grown by the envelope) -> contacts into c. False when the contacts do not
    fit."""
    geometry_poses_into(g, w)
    npairs = broad_phase(g, w, env)
    w.pair_count[0] = npairs
    k = narrow_phase_into(g, w, c, npairs, env, False)
    if k < 0:
        return False
    c.count[0] = k
    return True


# ---------------------------------------------------------------- on a bare CollisionScene


def _records(scene: CollisionScene, n_owners: int, npairs: int) -> tuple[Any, Any, Any]:
    """Geoms, workspace and contact list for the functions below, which take a
    `CollisionScene` (room for 4 contacts per pair)."""
    g = geoms_of(scene)
    w = allocate_collision_work(g, n_owners, max(npairs, 1))
    return g, w, allocate_contact_list(MAX_PER_PAIR * max(npairs, 1))


def _run(scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray, pairs: np.ndarray,
         envelope: float, force_generic: bool) -> Contacts:
    ng = scene.n_geoms
    if geom_pos.shape != (ng, 3) or geom_rot.shape != (ng, 3, 3):
        raise ValueError(f"geom_pos, geom_rot must be ({ng}, 3), ({ng}, 3, 3); got "
                         f"{geom_pos.shape}, {geom_rot.shape}")
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    env = float(envelope)
    if not env >= 0.0:
        raise ValueError(f"envelope must be >= 0, got {envelope!r}")
    g, w, c = _records(scene, scene.n_owners, pairs.shape[0])
    w.geom_pos[...] = geom_pos
    w.geom_rot[...] = geom_rot
    w.pairs[: pairs.shape[0]] = pairs
    k = narrow_phase_into(new_geoms(g), new_collision_work(w), new_contact_list(c),
                          pairs.shape[0], env, force_generic)
    if k <= -2:
        bad = -2 - k
        raise ValueError(f"pairs[{bad}] = {pairs[bad].tolist()}: geometry indices must be two "
                         f"different numbers in [0, {ng})")
    c.count[0] = k
    return Contacts.found(c)


def narrow_phase(scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray,
                 pairs: np.ndarray, envelope: float) -> Contacts:
    """Contacts of the geometry pairs (p, 2); for a pair (a, b) normals point from b to a.

    Up to four contacts per pair, in pair order; contacts are kept while depth > -envelope.
    """
    return _run(scene, np.ascontiguousarray(geom_pos, dtype=np.float64),
                np.ascontiguousarray(geom_rot, dtype=np.float64), pairs, envelope, False)


def generic_contact(scene: CollisionScene, geom_pos: np.ndarray, geom_rot: np.ndarray,
                    pairs: np.ndarray, envelope: float) -> Contacts:
    """Single-point contacts from GJK + EPA alone (the general fallback), for any non-plane
    pairs; used to check the fallback against the closed forms."""
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    for a, b in pairs:
        if scene.kind[a] == PLANE or scene.kind[b] == PLANE:
            raise ValueError(f"generic_contact: pair ({a}, {b}) has a plane (no support map)")
    return _run(scene, np.ascontiguousarray(geom_pos, dtype=np.float64),
                np.ascontiguousarray(geom_rot, dtype=np.float64), pairs, envelope, True)


def detect(scene: CollisionScene, broadphase: BroadPhase, owner_pos: np.ndarray,
           owner_rot: np.ndarray, envelope: float) -> Contacts:
    """Owner poses -> geometry poses -> the scene tree's pairs (world boxes grown by the
    envelope) -> contacts, in one compiled call; the same result as geometry_poses,
    BroadPhase.pairs and narrow_phase in turn."""
    if broadphase.scene is not scene:
        raise ValueError("detect: the broad phase was built for another scene")
    owner_pos, owner_rot = owner_poses(scene, owner_pos, owner_rot)
    env = float(envelope)
    if not env >= 0.0:
        raise ValueError(f"envelope must be >= 0, got {envelope!r}")
    ng = scene.n_geoms
    g, w, c = _records(scene, owner_pos.shape[0], ng * (ng - 1) // 2)
    w.owner_pos[...] = owner_pos
    w.owner_rot[...] = owner_rot
    t = broadphase.tree
    w = w._replace(**{"scene_" + f: getattr(t, f) for f in t._fields})
    detect_into(new_geoms(g), new_collision_work(w), new_contact_list(c), env)
    return Contacts.found(c)
