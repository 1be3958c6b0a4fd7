"""Data: the preallocated workspace of one simulation (MuJoCo's mjData without the state).

Every stage of the step writes here; nothing in it outlives a step except the broad phase's
tree over the geometries (an acceleration structure) and the last step's contacts and rows, which
`Simulation.contacts` reports. Capacity (contacts, rows) is chosen at allocation and grown
between steps by `Simulation` when a step reports that it needs more. Each record's fields
are declared with their meaning below and in the modules named (docs/architecture.md lists
them all).
"""

from __future__ import annotations

from typing import Any

from mb_sim._jit import njit, record_fields
from mb_sim.collision.work import (
    CollisionWork,
    ContactList,
    allocate_collision_work,
    allocate_contact_list,
    new_collision_work,
    new_contact_list,
)
from mb_sim.dynamics.work import TreeWork, allocate_tree_work, forest_sizes, new_tree_work
from mb_sim.records import FLAG, IDENTITY, INDEX, REAL, Field, allocate, record
from mb_sim.sim.state import StateArrays, new_state
from mb_sim.solver.rows import Rows, allocate_rows, new_rows

BodyFrames, BodyFramesRecord = record("BodyFrames", """The free bodies at the state's poses
(Bender et al. n.d., the step); entry b is the world: at rest, infinite mass.""", (
    Field("pos", REAL, ("b+1", 3), "centre of mass, world, m"),
    Field("rot", REAL, ("b+1", 3, 3), "rotation", fill=IDENTITY),
    Field("inv_inertia", REAL, ("b+1", 3, 3), "world inverse inertia R I^-1 R^T (0: static)"),
    Field("inv_mass", REAL, ("b+1",), "1 / mass (0: static)"),
    Field("dynamic", FLAG, ("b+1",), "moves"),
), {"b": "free bodies"})
JointBlocks, JointBlocksRecord = record("JointBlocks", """The world joints' bilateral rows of
this step, K-orthonormalised (mb_sim.solver.world_joints.blocks), and what the keeping loop
did.""", (
    Field("J", REAL, ("j", 6, 2, 6), "rows L^-1 J on (child, parent) [v; w]"),
    Field("W", REAL, ("j", 6, 2, 6), "their responses L^-1 W"),
    Field("Linv", REAL, ("j", 6, 6), "L^-1, K = J W^T = L L^T"),
    Field("arms", REAL, ("j", 2, 3), "lever arms of the anchors, world: child, parent"),
    Field("basis", REAL, ("j", 3, 3), "the parent's axis n and t1, t2 around it, world"),
    Field("body_vel", REAL, ("b+1", 6), "body velocities the loop works on (entry b: the "
          "world, at rest)"),
    Field("first_row", INDEX, ("j",), "each joint's first row in Data.rows (-1: none)",
          fill=-1),
    Field("friction_row", INDEX, ("j",), "its friction row (-1: none)", fill=-1),
    Field("limit_row", INDEX, ("j", 2), "its lower and upper limit rows (-1: none)", fill=-1),
    Field("stats", REAL, (4,), "keeping loop: passes and corrections of the last step, its "
          "largest predicted error, corrections in total"),
), {"j": "world joints", "b": "free bodies"})
StepWork, StepWorkRecord = record("StepWork", """Velocities between the stages of the step,
the row bookkeeping of warm starting and what the step reports.""", (
    Field("tau", REAL, ("n",), "efforts of the free motion, by joint (body) of every tree: "
          "commanded, plus a servo's explicit part (mb_sim.sim.servo)"),
    Field("servo_flag", INDEX, ("n",), "servo of the step: FREE, SATURATED (effort at its "
          "limit) or SPEED_LIMITED (mb_sim.sim.servo)"),
    Field("clamped", INDEX, ("n",), "kinds of command the step has clamped into their "
          "bounds (since this workspace was made): CLAMPED_EFFORT | CLAMPED_POSITION | "
          "CLAMPED_VELOCITY"),
    Field("qd_free", REAL, ("nv",), "robot velocities after the free motion"),
    Field("dq_free", REAL, ("nv",), "RK4: the position increment of the free motion"),
    Field("qd_new", REAL, ("nv",), "robot velocities after the solve"),
    Field("body_vel", REAL, ("b", 6), "free-body velocities: after the free motion, then "
          "constrained"),
    Field("dq_push", REAL, ("nv",), "robot pseudo-velocities of the position correction"),
    Field("body_push", REAL, ("b", 6), "free-body pseudo-velocities of the position "
          "correction"),
    Field("body_move", REAL, ("b", 6), "the velocities that move the free bodies this step"),
    Field("joint_tag", INDEX, ("r",), "a tree joint row's tag: 3 joint + (0 lower, 1 upper, "
          "2 friction), 3 n + k for mimic pair k (joints and pairs of every tree)"),
    Field("group_key", INDEX, ("r",), "warm-start key of each row group (mb_sim.solver.warm)"),
    Field("group_row", INDEX, ("r",), "first row of each row group"),
    Field("impelled", FLAG, ("t",), "trees that a contact with rows pushes this step "
          "(mb_sim.solver.contact.drop_receding_contacts)"),
    "report",
    Field("info", INDEX, (8,), "what the last call of `step` reports: STATUS, STEPS_DONE, "
          "BAD_KIND, BAD_INDEX, SWEEPS, ROW_START, ROW_END, CLAMPS"),
), {"n": "movable joints of every tree", "nv": "velocities of every tree", "b": "free bodies",
    "t": "trees", "r": "row capacity"})
Data, DataRecord = record("Data", """The workspace of one simulation: a record of
records.""", (
    Field("tree", TreeWork, (), "the articulated-body quantities of the current q (Holck 2005, ch. 3), "
          "link poses, the impulse-response scratch"),
    Field("frames", BodyFrames, (), "the free bodies' world frames and inverse inertias"),
    Field("collision", CollisionWork, (), "geometry poses, the scene tree, narrow-phase "
          "scratch"),
    Field("contacts", ContactList, (), "the contacts found"),
    Field("rows", Rows, (), "the constraint rows (mb_sim.solver.rows)"),
    Field("push", Rows, (), "the position-correction rows"),
    Field("joints", JointBlocks, (), "the world joints' rows and keeping-loop statistics"),
    Field("work", StepWork, (), "velocities between stages, warm-start bookkeeping, the "
          "report"),
    Field("before", StateArrays, (), "the state before the step (the check stage restores "
          "it; link accelerations difference it)"),
))

# StepWork.info: what the last call of `step` reports
STATUS, STEPS_DONE, BAD_KIND, BAD_INDEX, SWEEPS, ROW_START, ROW_END, CLAMPS = range(8)
"""ROW_START, ROW_END: the tree joint rows of the last step; BAD_INDEX: a joint (body) of
the forest, n + k for tree k's floating base, or a free body; CLAMPS: joints and kinds of
command clamped for the first time in the last call (StepWork.clamped says which)."""
OK = 0
NEED_CAPACITY = 1
NOT_FINITE = 2
# BAD_KIND: what held the non-finite value
BAD_JOINT = 0
BAD_BODY = 1
BAD_EFFORT = 2
BAD_POSITION_TARGET = 3
BAD_VELOCITY_TARGET = 4
# StepWork.clamped: which commands of a joint the step clamped into their bounds
CLAMPED_EFFORT = 1
CLAMPED_POSITION = 2
CLAMPED_VELOCITY = 4
EFFORT_CAP = 1e6
"""N m or N: the effort bound of a joint whose URDF gives no effort limit."""


@njit
def new_body_frames(values: BodyFrames) -> Any:
    return BodyFramesRecord(*record_fields(values))


@njit
def new_joint_blocks(values: JointBlocks) -> Any:
    return JointBlocksRecord(*record_fields(values))


@njit
def new_step_work(values: StepWork) -> Any:
    return StepWorkRecord(*record_fields(values))


@njit
def new_data(tree: Any, frames: Any, collision: Any, contacts: Any, rows: Any, push: Any,
             joints: Any, work: Any, before: Any) -> Any:
    return DataRecord(*record_fields((tree, frames, collision, contacts, rows, push, joints,
                                      work, before)))


def data_record(d: Data) -> Any:
    """The record compiled code takes, over the same arrays."""
    return new_data(new_tree_work(d.tree), new_body_frames(d.frames),
                    new_collision_work(d.collision), new_contact_list(d.contacts),
                    new_rows(d.rows), new_rows(d.push), new_joint_blocks(d.joints),
                    new_step_work(d.work), new_state(d.before))


ROWS_PER_WORLD_JOINT = 11
"""6 bilateral, up to 3 friction, 2 limit rows."""
KEPT = ("scene_lo", "scene_hi", "scene_right", "scene_first", "scene_count", "scene_items",
        "scene_size", "scene_area")
"""What carries over when the workspace grows: the scene's tree (mb_sim.collision.broadphase)."""


def row_capacity(scene: Any, contact_capacity: int) -> int:
    n = scene.tree.parent.shape[0]
    nj = scene.joints.jtype.shape[0]
    return 3 * contact_capacity + 3 * n + scene.tree.mimic.shape[0] + \
        ROWS_PER_WORLD_JOINT * nj + 1


def allocate_data(scene: Any, contact_capacity: int = 0,
                  old: Data | None = None) -> Data:
    """Workspace for `scene` (a `mb_sim.model.compile.SceneModel`). With `old`, the broad
    phase's tree carries over (capacity growth between steps)."""
    sizes = forest_sizes(scene.tree)
    n, t, nv, nq = sizes["n"], sizes["t"], sizes["nv"], sizes["nq"]
    nb = scene.bodies.inv_mass.shape[0]
    nj = scene.joints.jtype.shape[0]
    ng = scene.geoms.kind.shape[0]
    if contact_capacity <= 0:
        contact_capacity = max(16, 4 * ng)
    collision = allocate_collision_work(scene.geoms, n + nb + t, max(ng * (ng - 1) // 2, 1))
    if old is not None:
        for name in KEPT:
            getattr(collision, name)[...] = getattr(old.collision, name)
    rows = row_capacity(scene, contact_capacity)
    return Data(
        tree=allocate_tree_work(scene.tree),
        frames=allocate(BodyFrames, b=nb),
        collision=collision,
        contacts=allocate_contact_list(contact_capacity),
        rows=allocate_rows(rows, sizes["w"], nb, t, nv),
        push=allocate_rows(rows, sizes["w"], nb, t, nv),
        joints=allocate(JointBlocks, j=nj, b=nb),
        work=allocate(StepWork, n=n, nv=nv, b=nb, t=t, r=rows),
        before=allocate(StateArrays, n=n, nq=nq, nv=nv, b=nb, w=rows),
    )


__all__ = ["Data", "Rows", "allocate_data", "data_record"]
