"""The collision stage's records: its workspace (poses, the broad phase's tree over the
geometries, the narrow phase's scratch) and what it finds, the contacts (Holck 2005, fig. 2.4).

Contact c is between geometries geom_a[c] and geom_b[c]; its normal points from b to a, its
depth is positive when overlapping, its point lies midway between the surfaces, and `feature`
names the touching features within the pair (stable while they touch). The solver adds each
contact's normal row and friction directions (`normal_row`, `tangent1/2`).
"""

from __future__ import annotations

from typing import Any

from mb_sim._jit import njit, record_fields
from mb_sim.bvh import STACK
from mb_sim.collision.gjk import EPA_MAX_FACES, EPA_MAX_VERTS
from mb_sim.collision.separating_axes import slot_count
from mb_sim.records import FLAG, IDENTITY, INDEX, REAL, Field, allocate, record, view

MAX_PER_PAIR = 4
CAP_POINTS = 8
"""Rim points of a cylinder cap used as a contact polygon."""
HITS = 64
"""Leaf entries one chunk of a tree walk returns (mb_sim.bvh.query_next)."""
MESH_CANDIDATES = 32
"""Contacts of one shape with a mesh's triangles gathered before they are reduced."""

SCENE_TREE = (
    Field("scene_lo", REAL, ("nodes", 3), "node boxes, world: low corner"),
    Field("scene_hi", REAL, ("nodes", 3), "... high corner"),
    Field("scene_right", INDEX, ("nodes",), "an inner node's right child (the left one is the "
          "next node); -1: a leaf"),
    Field("scene_first", INDEX, ("nodes",), "a leaf's first entry in scene_items"),
    Field("scene_count", INDEX, ("nodes",), "a leaf's geometries (0: an inner node)"),
    Field("scene_items", INDEX, ("g",), "the bounded geometries (planes stay out), in leaf "
          "order"),
    Field("scene_size", INDEX, (2,), "nodes in use (0: not built yet), geometries in the tree"),
    Field("scene_area", REAL, (1,), "the inner nodes' surface area after the last build, m^2"),
    Field("scene_stack", INDEX, ("stack",), "a walk's stack"),
    Field("scene_hits", INDEX, ("hits",), "the leaf entries one chunk of a walk reached"),
)
SceneTree = view("SceneTree", """The scene's bounding-volume hierarchy over the geometries'
world boxes (mb_sim.bvh layout), with its scratch: the fields scene_* of CollisionWork.""",
                 tuple(Field(f.name[len("scene_"):], f.dtype, f.shape, f.doc)
                       for f in SCENE_TREE),
                 {"nodes": "nodes, 2 g - 1", "g": "geometries", "stack": "STACK",
                  "hits": "HITS"})

CollisionWork, CollisionWorkRecord = record("CollisionWork", """The collision stage's
workspace: where every geometry is this step, the tree over their boxes kept from step to
step, and the narrow phase's scratch.""", (
    "poses",
    Field("owner_pos", REAL, ("o", 3), "world position of each geometry owner (robot bodies, "
          "free bodies, a floating base), m"),
    Field("owner_rot", REAL, ("o", 3, 3), "... and rotation", fill=IDENTITY),
    Field("geom_pos", REAL, ("g", 3), "world position of each geometry, m"),
    Field("geom_rot", REAL, ("g", 3, 3), "... and rotation"),
    Field("aabb_lo", REAL, ("g", 3), "world bounding box grown by the envelope: low corner"),
    Field("aabb_hi", REAL, ("g", 3), "... high corner"),
    "the scene's bounding-volume hierarchy (mb_sim.collision.broadphase), kept between steps",
    *SCENE_TREE,
    Field("pairs", INDEX, ("p", 2), "candidate pairs of this step"),
    Field("pair_count", INDEX, (1,), "pairs in use"),
    "a shape against a mesh's triangles (mb_sim.collision.mesh_contact)",
    Field("tri_hits", INDEX, ("hits",), "triangles one chunk of the mesh BVH's walk reached"),
    Field("tri_stack", INDEX, ("stack",), "that walk's stack"),
    Field("pair_kind", INDEX, (2,), "the shape and the triangle as two geometries GJK reads: "
          "kinds"),
    Field("pair_size", REAL, (2, 3), "... sizes"),
    Field("pair_vert_start", INDEX, (2,), "... first vertex in pair_verts"),
    Field("pair_vert_count", INDEX, (2,), "... vertex counts"),
    Field("pair_verts", REAL, ("hv+3", 3), "the shape's hull vertices (its frame), then the "
          "triangle's corners (world)"),
    Field("pair_adjacent_start", INDEX, ("hv+3",), "the hull vertices' neighbours in "
          "Geoms.adjacent (the triangle's corners are scanned)"),
    Field("pair_adjacent_count", INDEX, ("hv+3",), "... their number"),
    Field("pair_seed_verts", INDEX, (2, 6), "the hull's climbing seeds (Geoms.seed_verts)"),
    Field("pair_pos", REAL, (2, 3), "... world positions (the triangle's: zero)"),
    Field("pair_rot", REAL, (2, 3, 3), "... world rotations (the triangle's: the identity)",
          fill=IDENTITY),
    Field("mesh_point", REAL, ("mc", 3), "contacts with the mesh so far: point, world"),
    Field("mesh_normal", REAL, ("mc", 3), "... normal, from the mesh to the shape"),
    Field("mesh_depth", REAL, ("mc",), "... depth, m"),
    Field("mesh_feature", INDEX, ("mc",), "... feature id"),
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
    "separating axes kept from step to step (mb_sim.collision.separating_axes)",
    Field("apart_last", REAL, (1, 3), "the direction (from b to a, world) along which the "
          "last collider run found its pair apart"),
    Field("apart_last_frame", INDEX, (1,), "... the geometry it turns with (-1: none found)"),
    Field("apart_key", INDEX, ("ac",), "the pair whose axis a slot holds: i g + j + 1 "
          "(0: none)"),
    Field("apart_frame", INDEX, ("ac",), "the geometry its axis turns with: 0 a, 1 b"),
    Field("apart_axis", REAL, ("ac", 3), "its unit separating axis, from b to a, in that "
          "geometry's frame"),
    Field("apart_hint", INDEX, ("ac", 2), "the hull vertices where its support maps' next "
          "climbs start (-1: their seeds)"),
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
    "nodes": "scene tree nodes, 2 g - 1", "stack": "STACK (mb_sim.bvh)", "hits": "HITS",
    "mc": "MESH_CANDIDATES", "ac": "axis slots, slot_count(p)",
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
    Field("receding_tree", INDEX, ("k",), "the tree of a contact between its own links "
          "still apart and not closing (-1: any other contact; "
          "mb_sim.solver.contact.drop_receding_contacts)"),
    Field("count", INDEX, (1,), "contacts in use"),
), {"k": "contact capacity"})


@njit
def new_collision_work(values: CollisionWork) -> Any:
    return CollisionWorkRecord(*record_fields(values))


@njit
def new_contact_list(values: ContactList) -> Any:
    return ContactListRecord(*record_fields(values))


def allocate_scene_tree(g: int) -> Any:
    """The arrays of a scene tree over g geometries (not built yet)."""
    return allocate(SceneTree, nodes=max(2 * g - 1, 1), g=g, stack=STACK, hits=HITS)


def allocate_collision_work(g: Any, n_owners: int, pair_capacity: int) -> CollisionWork:
    """The workspace for the geometries g (a `mb_sim.model.compile.Geoms`) of n_owners
    owners."""
    polygon = 2 * max(int(g.max_face_verts), CAP_POINTS) + 4
    ng = g.kind.shape[0]
    return allocate(CollisionWork, o=n_owners, g=ng, p=pair_capacity,
                    nodes=max(2 * ng - 1, 1), stack=STACK, hits=HITS, mc=MESH_CANDIDATES,
                    ac=slot_count(pair_capacity),
                    pv=EPA_MAX_VERTS, pf=EPA_MAX_FACES, hv=max(int(g.max_verts), 1),
                    hf=max(int(g.max_faces), 1), c=polygon,
                    m=max(polygon + 2, int(g.max_verts) + 2, 16))


def allocate_contact_list(capacity: int) -> ContactList:
    return allocate(ContactList, k=capacity)
