"""Data: the preallocated workspace of one simulation (MuJoCo's mjData without the state).

Every stage of the step writes here; nothing in it outlives a step except the broad phase's
sorted end points (an acceleration structure) and the last step's contacts and rows, which
`Simulation.contacts` reports. Capacity (contacts, rows) is chosen at allocation and grown
between steps by `Simulation` when a step reports that it needs more.

Records:
- `TreeWork` (`tree`, mb_sim.dynamics.work): the articulated-body quantities of the current
  q (000.md 2.4: X_i, S_i, U_i, D_i, I^A_i), link poses, the impulse-response scratch;
- `BodyFrames` (`frames`): each free body's rotation, world inverse inertia R I^-1 R^T and
  inverse mass (entry nb is the world: at rest, infinite mass);
- `ContactBuffer` (`contacts`): owner and geometry poses, the broad phase, the narrow phase's
  scratch and the contacts found;
- `Rows` (`rows`, and `push` for position correction): the constraint rows (mb_sim.solver.rows);
- `JointBlocks` (`joints`): the world joints' K-orthonormal rows and keeping-loop statistics;
- `StepWork` (`work`): velocities between stages, the state before the step (check stage).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit, record
from mb_sim.collision.buffer import allocate_contact_buffer, new_contact_buffer
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.solver.rows import Rows, allocate_rows, new_rows

BodyFrames, BodyFramesRecord = record("BodyFrames", ("X", "R", "Iw", "im", "dyn"))
JointBlocks, JointBlocksRecord = record("JointBlocks", (
    "J", "W", "Linv", "arms", "basis", "u", "first_row", "friction_row", "limit_row", "stats",
))
StepWork, StepWorkRecord = record("StepWork", (
    "qd_free", "dq_free", "qd_new", "vb", "dq_push", "vb_push", "vb_pos", "joint_tag",
    "group_key", "group_row", "prev_q", "prev_qd", "prev_body_pos", "prev_body_quat",
    "prev_body_vel", "prev_clock", "prev_warm_key", "prev_warm_value", "prev_warm_count",
    "info",
))
Data, DataRecord = record("Data", ("tree", "frames", "contacts", "rows", "push", "joints",
                                   "work"))

# StepWork.info: what the last call of `step` reports
STATUS, STEPS_DONE, BAD_KIND, BAD_INDEX, SWEEPS, ROW_START, ROW_END = range(7)
"""ROW_START, ROW_END: the robot joint rows of the last step."""
OK = 0
NEED_CAPACITY = 1
NOT_FINITE = 2
# BAD_KIND: what held the non-finite value
BAD_JOINT = 0
BAD_BODY = 1
BAD_EFFORT = 2


@njit
def new_body_frames(values: BodyFrames) -> Any:
    return BodyFramesRecord(*values)


@njit
def new_joint_blocks(values: JointBlocks) -> Any:
    return JointBlocksRecord(*values)


@njit
def new_step_work(values: StepWork) -> Any:
    return StepWorkRecord(*values)


@njit
def new_data(tree: Any, frames: Any, contacts: Any, rows: Any, push: Any, joints: Any,
             work: Any) -> Any:
    return DataRecord(tree, frames, contacts, rows, push, joints, work)


def data_record(d: Data) -> Any:
    """The record compiled code takes, over the same arrays."""
    return new_data(new_tree_work(d.tree), new_body_frames(d.frames),
                    new_contact_buffer(d.contacts), new_rows(d.rows), new_rows(d.push),
                    new_joint_blocks(d.joints), new_step_work(d.work))


ROWS_PER_WORLD_JOINT = 11
"""6 bilateral, up to 3 friction, 2 limit rows."""


def row_capacity(scene: Any, contact_capacity: int) -> int:
    nv = scene.tree.parent.shape[0]
    nj = scene.joints.jtype.shape[0]
    return 3 * contact_capacity + 3 * nv + scene.tree.mimic.shape[0] + \
        ROWS_PER_WORLD_JOINT * nj + 1


def allocate_data(scene: Any, contact_capacity: int = 0,
                  old: Data | None = None) -> Data:
    """Workspace for `scene` (a `mb_sim.model.compile.SceneModel`). With `old`, the broad
    phase's sorted end points carry over (capacity growth between steps)."""
    n = scene.tree.parent.shape[0]
    floating = scene.tree.base_inertia.shape[0] > 0
    nv, nq = (n + 6, n + 7) if floating else (n, n)
    nb = scene.bodies.inv_mass.shape[0]
    nj = scene.joints.jtype.shape[0]
    ng = scene.geoms.kind.shape[0]
    pair_capacity = max(ng * (ng - 1) // 2, 1)
    if contact_capacity <= 0:
        contact_capacity = max(16, 4 * ng)
    n_owners = n + nb + 1
    contacts = allocate_contact_buffer(scene.geoms, n_owners, pair_capacity, contact_capacity)
    if old is not None:
        for name in ("ep_val", "ep_id", "overlap"):
            getattr(contacts, name)[...] = getattr(old.contacts, name)
    rows_n = row_capacity(scene, contact_capacity)
    frames_R = np.zeros((nb + 1, 3, 3))
    frames_R[:] = np.eye(3)
    return Data(
        tree=allocate_tree_work(n, floating),
        frames=BodyFrames(X=np.zeros((nb + 1, 3)), R=frames_R, Iw=np.zeros((nb + 1, 3, 3)), im=np.zeros(nb + 1),
                          dyn=np.zeros(nb + 1, dtype=np.bool_)),
        contacts=contacts,
        rows=allocate_rows(rows_n, nv),
        push=allocate_rows(rows_n, nv),
        joints=JointBlocks(
            J=np.zeros((nj, 6, 2, 6)), W=np.zeros((nj, 6, 2, 6)), Linv=np.zeros((nj, 6, 6)),
            arms=np.zeros((nj, 2, 3)), basis=np.zeros((nj, 3, 3)), u=np.zeros((nb + 1, 6)),
            first_row=np.full(nj, -1, dtype=np.int64),
            friction_row=np.full(nj, -1, dtype=np.int64),
            limit_row=np.full((nj, 2), -1, dtype=np.int64), stats=np.zeros(4),
        ),
        work=StepWork(
            qd_free=np.zeros(nv), dq_free=np.zeros(nv), qd_new=np.zeros(nv),
            vb=np.zeros((nb, 6)), dq_push=np.zeros(nv), vb_push=np.zeros((nb, 6)),
            vb_pos=np.zeros((nb, 6)), joint_tag=np.zeros(rows_n, dtype=np.int64),
            group_key=np.zeros(rows_n, dtype=np.int64),
            group_row=np.zeros(rows_n, dtype=np.int64), prev_q=np.zeros(nq),
            prev_qd=np.zeros(nv), prev_body_pos=np.zeros((nb, 3)),
            prev_body_quat=np.zeros((nb, 4)), prev_body_vel=np.zeros((nb, 6)),
            prev_clock=np.zeros(1), prev_warm_key=np.zeros(rows_n, dtype=np.int64),
            prev_warm_value=np.zeros((rows_n, 4)), prev_warm_count=np.zeros(1, dtype=np.int64),
            info=np.zeros(8, dtype=np.int64),
        ),
    )


__all__ = ["Data", "Rows", "allocate_data", "data_record"]
