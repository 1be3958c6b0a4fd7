"""The collision stage's workspace: owner and geometry poses, the broad phase's sorted end
points, the narrow phase's scratch, and the contacts found (000.md 1.1).

`count[0]` is the number of candidate pairs in `pairs`, `count[1]` the number of contacts;
contact c is between geometries geom_a[c] and geom_b[c], its normal points from b to a, its
depth is positive when overlapping, its point lies midway between the surfaces, and
`feature` names the touching features within the pair (stable while they touch). The solver
adds each contact's normal row and friction directions (`normal_row`, `tangent1/2`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit, record

MAX_PER_PAIR = 4
CAP_POINTS = 8
"""Rim points of a cylinder cap used as a contact polygon."""

ContactBuffer, ContactBufferRecord = record("ContactBuffer", (
    "owner_pos", "owner_rot", "geom_pos", "geom_rot", "aabb_lo", "aabb_hi", "ep_val", "ep_id",
    "overlap", "pairs", "W", "SA", "SB", "lam4", "V", "V2", "NA", "NB", "FA", "IA", "FB", "IB",
    "T", "TI", "cp", "cn", "cd", "cf", "geom_a", "geom_b", "point", "normal", "depth",
    "feature", "normal_row", "tangent1", "tangent2", "count",
))

@njit
def new_contact_buffer(values: ContactBuffer) -> Any:
    return ContactBufferRecord(*values)



def allocate_contact_buffer(g: Any, n_owners: int, pair_capacity: int,
                            contact_capacity: int) -> ContactBuffer:
    """Buffers for the geometries g (a `mb_sim.model.compile.Geoms`) of n_owners owners."""
    ng = g.kind.shape[0]
    clip_cap = 2 * max(int(g.max_face_verts), CAP_POINTS) + 4
    mcap = max(clip_cap + 2, int(g.max_verts) + 2, 16)
    nvb = max(int(g.max_verts), 1)
    nf = max(int(g.max_faces), 1)
    ids = np.arange(2 * ng, dtype=np.int64)
    owner_rot = np.zeros((n_owners, 3, 3))
    owner_rot[:] = np.eye(3)
    c = contact_capacity
    return ContactBuffer(
        owner_pos=np.zeros((n_owners, 3)), owner_rot=owner_rot,
        geom_pos=np.zeros((ng, 3)), geom_rot=np.zeros((ng, 3, 3)),
        aabb_lo=np.zeros((ng, 3)), aabb_hi=np.zeros((ng, 3)),
        ep_val=np.zeros((3, 2 * ng)), ep_id=np.ascontiguousarray(np.stack([ids, ids, ids])),
        overlap=np.zeros((ng, ng), dtype=np.int8),
        pairs=np.zeros((pair_capacity, 2), dtype=np.int64),
        W=np.zeros((4, 3)), SA=np.zeros((4, 3)), SB=np.zeros((4, 3)), lam4=np.zeros(4),
        V=np.zeros((nvb, 3)), V2=np.zeros((nvb, 3)), NA=np.zeros((nf, 3)),
        NB=np.zeros((nf, 3)), FA=np.zeros((clip_cap, 3)),
        IA=np.zeros(clip_cap, dtype=np.int64), FB=np.zeros((clip_cap, 3)),
        IB=np.zeros(clip_cap, dtype=np.int64), T=np.zeros((clip_cap, 3)),
        TI=np.zeros(clip_cap, dtype=np.int64), cp=np.zeros((mcap, 3)), cn=np.zeros((mcap, 3)),
        cd=np.zeros(mcap), cf=np.zeros(mcap, dtype=np.int64),
        geom_a=np.zeros(c, dtype=np.int64), geom_b=np.zeros(c, dtype=np.int64),
        point=np.zeros((c, 3)), normal=np.zeros((c, 3)), depth=np.zeros(c),
        feature=np.zeros(c, dtype=np.int64), normal_row=np.zeros(c, dtype=np.int64),
        tangent1=np.zeros((c, 3)), tangent2=np.zeros((c, 3)),
        count=np.zeros(2, dtype=np.int64),
    )
