"""Force-torque sensors at joints and contact sensors on links: what a step measures.

Force-torque sensor at joint i: the wrench f_i that the parent exerts on the child through the
joint, [moment about the child body's origin; force], child body axes. It is the backward
pass of recursive Newton-Euler (Featherstone's RNEA; Valášek 2011 ch. 4.1, the cut method,
and ch. 11, inverse dynamics: 004.md 1.2 and 1.10) run on the step that was taken:

    f_i = I_i a_i + v_i x* I_i v_i - f^x_i + sum over children c of X_c^T f_c

with v_i the body velocities at the start of the step (q, qd), a_i the body accelerations of
qdd = (qd+ - qd) / h, the velocity change the step actually applied (so the efforts, servos,
damping, and the contact, joint-limit and joint-friction impulses are all in it), gravity as
the base acceleration a_0 = [0; -g] (`mb_sim.dynamics.rnea`), and f^x_i = P / h for the
contact impulses P on body i (at their points, start-of-step poses). Cutting the tree at joint
i, f_i is what keeps the subtree's momentum changing as it did (Newton-Euler of the subtree:
rate of momentum = f_i + gravity + contacts). Exact for the semi-implicit Euler step; with
RK4, qdd is the step's mean acceleration and the velocity terms are those of its start.

Contact sensor on link l: the sum of the impulses P_c of the contacts on l's collision
geometries, [(p_c - o_l) x P_c; P_c], world axes, about the link origin o_l (start-of-step
pose; the impulse at a contact is `mb_sim.sim.queries`'s: normal, bounce and friction).

Both are summed as impulses (h f per step) and divided by the time since the last read, so a
reading is the mean wrench over that interval and an impact between two reads is not lost:
its impulse / interval. Nothing here runs when no sensor is set.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit, record_fields
from mb_sim.dynamics.rnea import inverse_dynamics
from mb_sim.dynamics.spatial import mtv6_add
from mb_sim.dynamics.work import TreeWork, forest_sizes, new_tree_work
from mb_sim.model.compile import ROBOT
from mb_sim.records import FLAG, INDEX, REAL, Field, allocate, record
from mb_sim.solver.rows import TANGENT

Sensors, SensorsRecord = record("Sensors", """The sensors a step feeds: which joints and
links, what they summed since the last read, and the work arrays of the backward pass.""", (
    Field("work", TreeWork, (), "tree work arrays of the F/T pass (its own, never the step's)"),
    "force-torque sensors",
    Field("ft_body", INDEX, ("f",), "the body (movable joint) of each F/T sensor"),
    Field("ft_tree", FLAG, ("t",), "the trees with an F/T sensor (the pass runs on them)"),
    Field("ft_sum", REAL, ("f", 6), "sum of h f_i since the last read: [moment; force], child "
          "body axes, about its origin, N m s and N s"),
    Field("ft_time", REAL, ("f",), "time summed by each, s"),
    Field("qdd", REAL, ("nv",), "the step's qdd = (qd+ - qd) / h"),
    Field("tau", REAL, ("nv",), "joint efforts of the pass (unused)"),
    Field("external", REAL, ("n+t", 6), "contact forces on each body and its subtree, body "
          "axes, about its origin (slot n + k: tree k's floating base)"),
    "contact sensors",
    Field("geom_sensor", INDEX, ("g",), "contact sensor of each collision geometry (-1: none)"),
    Field("contact_body", INDEX, ("c",), "the work slot carrying each sensed link (a body, or "
          "n + k: tree k's base)"),
    Field("contact_offset", REAL, ("c", 3), "the link's origin in that body's frame, m"),
    Field("contact_sum", REAL, ("c", 6), "sum of the contact impulses since the last read: "
          "[moment about the link origin; force], world axes, N m s and N s"),
    Field("contact_time", REAL, ("c",), "time summed by each, s"),
    Field("vec3", REAL, (4, 3), "scratch: an impulse, lever arms, an origin"),
), {"f": "F/T sensors", "c": "contact sensors", "g": "geometries",
    "n": "bodies of the trees", "t": "trees", "nv": "velocities of the trees"})


@njit
def new_sensors(values: Sensors) -> Any:
    """The record of `values`, whose `work` is already a `TreeWork` record."""
    return SensorsRecord(*record_fields(values))


def allocate_sensors(tree: Any, n_geoms: int, ft: int = 0, contact: int = 0) -> Sensors:
    """Zeroed sensor arrays for the forest `tree` (the arrays of a
    `mb_sim.model.forest.Tree`), `ft` F/T and `contact` contact sensors."""
    sizes = forest_sizes(tree)
    if not ft:  # the F/T pass's arrays only when it runs
        sizes = {"n": 0, "t": 0, "nv": 0, "nq": 0, "w": 0}
    n, t, nv = sizes["n"], sizes["t"], sizes["nv"]
    return Sensors(
        work=allocate(TreeWork, **sizes),
        ft_body=np.zeros(ft, dtype=np.int64), ft_tree=np.zeros(t, dtype=np.bool_),
        ft_sum=np.zeros((ft, 6)), ft_time=np.zeros(ft),
        qdd=np.zeros(nv), tau=np.zeros(nv), external=np.zeros((n + t, 6)),
        geom_sensor=np.full(n_geoms, -1, dtype=np.int64),
        contact_body=np.zeros(contact, dtype=np.int64), contact_offset=np.zeros((contact, 3)),
        contact_sum=np.zeros((contact, 6)), contact_time=np.zeros(contact),
        vec3=np.zeros((4, 3)))


def sensors_record(s: Sensors) -> Any:
    """The record compiled code takes, over the same arrays."""
    return new_sensors(s._replace(work=new_tree_work(s.work)))


@helper
def contact_impulse(rows: Any, con: Any, c: int, out: np.ndarray) -> None:
    """The impulse contact c gave its geometry a in the last step (world, N s; b got -out):
    (normal + bounce) n + the friction pair's t1, t2 impulses."""
    r = con.normal_row[c]
    lam = rows.lam[r] + rows.bounce[r]
    for k in range(3):
        out[k] = lam * con.normal[c, k]
    if r + 2 < rows.count[0] and rows.kind[r + 1] == TANGENT:
        l1, l2 = rows.lam[r + 1], rows.lam[r + 2]
        for k in range(3):
            out[k] += l1 * con.tangent1[c, k] + l2 * con.tangent2[c, k]


@inline
def _add_moment(out: np.ndarray, arm: np.ndarray, P: np.ndarray, sign: float,
                scale: float) -> None:
    """out += scale sign [arm x P; P]."""
    f = scale * sign
    out[0] += f * (arm[1] * P[2] - arm[2] * P[1])
    out[1] += f * (arm[2] * P[0] - arm[0] * P[2])
    out[2] += f * (arm[0] * P[1] - arm[1] * P[0])
    for k in range(3):
        out[3 + k] += f * P[k]


@helper
def _contact_forces(m: Any, d: Any, sensors: Any, h: float) -> bool:
    """sensors.external[i] = the contact forces P / h on robot body i, body axes, about its
    origin (start-of-step poses d.tree.rot, pos). True when any contact touches the robot."""
    con, g, w = d.contacts, m.geoms, d.tree
    ext = sensors.external
    ext[:, :] = 0.0
    P, arm, Pb, armb = sensors.vec3[0], sensors.vec3[1], sensors.vec3[2], sensors.vec3[3]
    any_robot = False
    for c in range(con.count[0]):
        contact_impulse(d.rows, con, c, P)
        for slot in range(2):
            geom = con.geom_a[c] if slot == 0 else con.geom_b[c]
            if g.what[geom] != ROBOT:
                continue
            any_robot = True
            b = g.index[geom]
            R, o = w.rot[b], w.pos[b]
            for k in range(3):
                arm[k] = con.point[c, k] - o[k]
            for k in range(3):  # body axes: R^T
                armb[k] = R[0, k] * arm[0] + R[1, k] * arm[1] + R[2, k] * arm[2]
                Pb[k] = R[0, k] * P[0] + R[1, k] * P[1] + R[2, k] * P[2]
            _add_moment(ext[b], armb, Pb, 1.0 if slot == 0 else -1.0, 1.0 / h)
    return any_robot


@helper
def transmitted_wrenches(m: Any, d: Any, s: Any, sensors: Any) -> None:
    """sensors.work.pA[i] = f_i of the module docstring for every body of the trees with an
    F/T sensor, from the state before the step (d.before) and after it (s)."""
    tree, before, w = m.tree, d.before, sensors.work
    h = m.options.dt
    qdd = sensors.qdd
    for i in range(qdd.shape[0]):
        qdd[i] = (s.qd[i] - before.qd[i]) / h
    for k in range(sensors.ft_tree.shape[0]):
        if sensors.ft_tree[k]:
            inverse_dynamics(tree, w, k, before.q, before.qd, qdd, sensors.tau)
    if not _contact_forces(m, d, sensors, h):
        return
    ext, f, up = sensors.external, w.pA, tree.up
    for i in range(up.shape[0] - 1, -1, -1):  # the subtrees' contact forces, as f was summed
        j = up[i]
        if j >= 0:
            mtv6_add(w.X[i], ext[i], ext[j])
    for i in range(ext.shape[0]):
        for k in range(6):
            f[i, k] -= ext[i, k]


@helper
def contact_wrenches(m: Any, d: Any, sensors: Any) -> None:
    """sensors.contact_sum += each sensed link's contact impulses of the step (world axes,
    moments about the link origin at the start-of-step pose)."""
    con, w, slot_of = d.contacts, d.tree, sensors.geom_sensor
    P, origin, arm = sensors.vec3[0], sensors.vec3[1], sensors.vec3[2]
    for c in range(con.count[0]):
        ka, kb = slot_of[con.geom_a[c]], slot_of[con.geom_b[c]]
        if ka < 0 and kb < 0:
            continue
        contact_impulse(d.rows, con, c, P)
        for side in range(2):
            k = ka if side == 0 else kb
            if k < 0:
                continue
            b = sensors.contact_body[k]
            R, p, off = w.rot[b], w.pos[b], sensors.contact_offset[k]
            for j in range(3):
                origin[j] = p[j] + R[j, 0] * off[0] + R[j, 1] * off[1] + R[j, 2] * off[2]
                arm[j] = con.point[c, j] - origin[j]
            _add_moment(sensors.contact_sum[k], arm, P, 1.0 if side == 0 else -1.0, 1.0)


@helper
def measure(m: Any, d: Any, s: Any, sensors: Any) -> None:
    """The sensors' share of a step just taken: h f_i for each F/T sensor, the impulses of
    each contact sensor."""
    h = m.options.dt
    nf = sensors.ft_body.shape[0]
    if nf > 0:
        transmitted_wrenches(m, d, s, sensors)
        f = sensors.work.pA
        for k in range(nf):
            b = sensors.ft_body[k]
            for j in range(6):
                sensors.ft_sum[k, j] += h * f[b, j]
            sensors.ft_time[k] += h
    if sensors.contact_body.shape[0] > 0:
        contact_wrenches(m, d, sensors)
        for k in range(sensors.contact_body.shape[0]):
            sensors.contact_time[k] += h
