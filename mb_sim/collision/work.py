"""The collision stage's records: its workspace (poses, the broad phase's sorted end points,
the narrow phase's scratch) and what it finds, the contacts (Holck 2005, fig. 2.4).

Contact c is between geometries geom_a[c] and geom_b[c]; its normal points from b to a, its
depth is positive when overlapping, its point lies midway between the surfaces, and `feature`
names the touching features within the pair (stable while they touch). The solver adds each
contact's normal row and friction directions (`normal_row`, `tangent1/2`).
"""

from __future__ import annotations

from typing import Any

from mb_sim._jit import njit
from mb_sim.collision.gjk import EPA_MAX_FACES, EPA_MAX_VERTS
from mb_sim.records import ARANGE, COUNT8, FLAG, IDENTITY, INDEX, REAL, Field, allocate, record

MAX_PER_PAIR = 4
CAP_POINTS = 8
"""Rim points of a cylinder cap used as a contact polygon."""

CollisionWork, CollisionWorkRecord = record("CollisionWork", """The collision stage's
workspace: where every geometry is this step, the sweep-and-prune lists kept from step to step,
and the narrow phase's scratch.""", (
    "poses",
    Field("owner_pos", REAL, ("o", 3), "world position of each geometry owner (robot bodies, "
          "free bodies, a floating base), m"),
    Field("owner_rot", REAL, ("o", 3, 3), "... and rotation", fill=IDENTITY),
    Field("geom_pos", REAL, ("g", 3), "world position of each geometry, m"),
    Field("geom_rot", REAL, ("g", 3, 3), "... and rotation"),
    Field("aabb_lo", REAL, ("g", 3), "world bounding box grown by the envelope: low corner"),
    Field("aabb_hi", REAL, ("g", 3), "... high corner"),
    "sweep and prune (mb_sim.collision.broadphase), kept between steps",
    Field("end_value", REAL, (3, "2*g"), "per axis, the box end points in sorted order"),
    Field("end_id", INDEX, (3, "2*g"), "their ids, 2 geometry + (0: low, 1: high)",
          fill=ARANGE),
    Field("overlap_axes", COUNT8, ("g", "g"), "on how many axes the boxes of i < j overlap"),
    Field("pairs", INDEX, ("p", 2), "candidate pairs of this step"),
    Field("pair_count", INDEX, (1,), "pairs in use"),
    "GJK and EPA (mb_sim.collision.gjk)",
    Field("simplex", REAL, (4, 3), "GJK simplex: points of the Minkowski difference A - B"),
    Field("simplex_a", REAL, (4, 3), "their support points on A"),
    Field("simplex_b", REAL, (4, 3), "... and on B"),
    Field("simplex_weight", REAL, (4,), "barycentric weights of the closest point"),
    Field("polytope", REAL, ("pv", 3), "EPA polytope vertices (points of A - B)"),
    Field("polytope_a", REAL, ("pv", 3), "their support points on A"),
    Field("polytope_b", REAL, ("pv", 3), "... and on B"),
    Field("epa_face", INDEX, ("pf", 3), "polytope faces: vertex indices, outward order"),
    Field("epa_normal", REAL, ("pf", 3), "their unit outward normals"),
    Field("epa_dist", REAL, ("pf",), "their distances from the origin"),
    Field("epa_alive", FLAG, ("pf",), "face in the polytope"),
    Field("epa_seen", FLAG, ("pf",), "face seen from the new vertex"),
    Field("epa_horizon", INDEX, ("3*pf", 2), "edges bounding the seen faces"),
    Field("epa_stack", INDEX, ("pf",), "faces to visit; then free face slots"),
    "polyhedra and polygons (SAT, face clipping: mb_sim.collision.manifold)",
    Field("verts_a", REAL, ("hv", 3), "world vertices of polyhedron A"),
    Field("verts_b", REAL, ("hv", 3), "... of polyhedron B"),
    Field("normals_a", REAL, ("hf", 3), "world face normals of polyhedron A"),
    Field("normals_b", REAL, ("hf", 3), "... of polyhedron B"),
    Field("polygon_a", REAL, ("c", 3), "a contact polygon (face, cap rim, segment) of A, or "
          "the reference face"),
    Field("polygon_a_id", INDEX, ("c",), "its points' feature ids"),
    Field("polygon_b", REAL, ("c", 3), "one of B, or the incident face"),
    Field("polygon_b_id", INDEX, ("c",), "its points' feature ids"),
    Field("clipped", REAL, ("c", 3), "a polygon being clipped"),
    Field("clipped_id", INDEX, ("c",), "its points' feature ids"),
    "candidate contacts of one pair (at most MAX_PER_PAIR kept)",
    Field("cand_point", REAL, ("m", 3), "point, world"),
    Field("cand_normal", REAL, ("m", 3), "normal, from b to a"),
    Field("cand_depth", REAL, ("m",), "depth (> 0: overlapping), m"),
    Field("cand_feature", INDEX, ("m",), "feature id"),
), {"o": "geometry owners", "g": "geometries", "p": "pair capacity, g (g - 1) / 2",
    "pv": "EPA_MAX_VERTS", "pf": "EPA_MAX_FACES", "hv": "most vertices of one polyhedron",
    "hf": "most faces of one polyhedron",
    "c": "polygon room: 2 max(most vertices of a face, CAP_POINTS) + 4",
    "m": "candidate room: max(c + 2, hv + 2, 16)"})

ContactList, ContactListRecord = record("ContactList", """The contacts the collision stage
found (the module docstring), with what the solver adds to each.""", (
    Field("geom_a", INDEX, ("k",), "first geometry"),
    Field("geom_b", INDEX, ("k",), "second geometry"),
    Field("point", REAL, ("k", 3), "midway between the surfaces, world, m"),
    Field("normal", REAL, ("k", 3), "unit normal from b to a"),
    Field("depth", REAL, ("k",), "penetration, m (< 0: still a gap apart)"),
    Field("feature", INDEX, ("k",), "touching features within the pair"),
    Field("normal_row", INDEX, ("k",), "the contact's NORMAL row (mb_sim.solver.rows)"),
    Field("tangent1", REAL, ("k", 3), "first friction direction"),
    Field("tangent2", REAL, ("k", 3), "second friction direction"),
    Field("count", INDEX, (1,), "contacts in use"),
), {"k": "contact capacity"})


@njit
def new_collision_work(values: CollisionWork) -> Any:
    return CollisionWorkRecord(*values)


@njit
def new_contact_list(values: ContactList) -> Any:
    return ContactListRecord(*values)


def allocate_collision_work(g: Any, n_owners: int, pair_capacity: int) -> CollisionWork:
    """The workspace for the geometries g (a `mb_sim.model.compile.Geoms`) of n_owners
    owners."""
    polygon = 2 * max(int(g.max_face_verts), CAP_POINTS) + 4
    return allocate(CollisionWork, o=n_owners, g=g.kind.shape[0], p=pair_capacity,
                    pv=EPA_MAX_VERTS, pf=EPA_MAX_FACES, hv=max(int(g.max_verts), 1),
                    hf=max(int(g.max_faces), 1), c=polygon,
                    m=max(polygon + 2, int(g.max_verts) + 2, 16))


def allocate_contact_list(capacity: int) -> ContactList:
    return allocate(ContactList, k=capacity)
