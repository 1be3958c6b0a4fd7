"""Contact rows: a normal row and a Coulomb friction pair per contact point (Holck 2005, ch. 2).

Normal row: u+ >= 0 when touching (resting contact, inelastic); a contact still a gap g apart
(inside the envelope) only asks for u+ >= -g / h: the bodies may close the gap this step but
not pass it (speculative contact). Between two parts of one robot (links, or a link and its
fixed base) such a contact gets rows only when, at the velocities after the free motion, its
surfaces close at least 1 / SPECULATIVE_REACH of the gap in this step, or another contact
pushes the robot (`drop_receding_contacts`): a row that cannot bind costs as much as one
that does, and a robot holding still among its own links' envelopes would otherwise pay for
all of them. Bounces (Newton's law with a threshold, Holck 2005 eq. 2.18)
are the restitution pass's (`mb_sim.solver.pgs.restitution_pass`): the row carries e, the gap
and the smooth acceleration a = (u_f - u_0) / h of its normal velocity over the free motion.
Friction pair: tangents t1, t2 with |lambda_t| <= mu lambda_n and target 0 (sticking when the
cone allows it, sliding against the motion otherwise); t1 points along the slip velocity
after the free motion when there is one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.dynamics.floating import slot_tree
from mb_sim.dynamics.kinematics import point_jacobian_row, shared_ancestor
from mb_sim.model.compile import BODY, ROBOT
from mb_sim.solver.response import add_robot_point_rows, body_point
from mb_sim.solver.rows import (
    FOLLOWER,
    NORMAL,
    SCALAR,
    TANGENT,
    clear_row,
    tree_slot,
    velocity,
)
from mb_sim.vec3 import frame_around

SPECULATIVE_REACH = 4.0
"""A contact between links of one robot a gap g apart keeps its rows when its surfaces approach
at least g / (4 h) after the free motion: the robot's joint rows (limits, friction, mimic
pairs) would have to speed that approach up fourfold within the step for the dropped row to
have mattered (and the next step has it again)."""


@inline
def tangent_basis(n: np.ndarray, dirs: np.ndarray) -> None:
    """dirs = [n, t1, t2], a right-handed orthonormal frame around the normal n."""
    t1, t2 = frame_around((n[0], n[1], n[2]))
    for k in range(3):
        dirs[0, k] = n[k]
        dirs[1, k] = t1[k]
        dirs[2, k] = t2[k]


@inline
def _turn(arr: np.ndarray, r: int, ca: float, sa: float, count0: int, count1: int) -> None:
    """Rotate rows r and r + 1 of a (rows, 2, k) column table by the angle (ca, sa) =
    (cos, sin), their first count0 entries of slot 0 and count1 of slot 1."""
    for slot in range(2):
        for k in range(count0 if slot == 0 else count1):
            a1, a2 = arr[r, slot, k], arr[r + 1, slot, k]
            arr[r, slot, k] = ca * a1 + sa * a2
            arr[r + 1, slot, k] = -sa * a1 + ca * a2


@inline
def _turn_directions(arr: np.ndarray, r: int, ca: float, sa: float) -> None:
    """Rotate rows r and r + 1 of a (3, 3) direction table by the angle (ca, sa)."""
    for k in range(3):
        a1, a2 = arr[r, k], arr[r + 1, k]
        arr[r, k] = ca * a1 + sa * a2
        arr[r + 1, k] = -sa * a1 + ca * a2


@inline
def _body_sides(m: Any, d: Any, s: Any, c: int, r: int, n_dirs: int,
                directions: np.ndarray) -> None:
    """Rows r .. r + n_dirs - 1 of contact c along its directions (normal, t1, t2), cleared,
    with J and W = M^-1 J^T of the point on the sides that are free bodies: +direction on a,
    -direction on b (Holck 2005 eq. 2.16)."""
    rows, con, g = d.rows, d.contacts, m.geoms
    for k in range(n_dirs):
        clear_row(rows, r + k, SCALAR, 0.0, -np.inf, np.inf)
    body, J_b, W_b = rows.body, rows.J_b, rows.W_b
    body_pos, inv_mass, Iw, point = s.body_pos, m.bodies.inv_mass, d.frames.inv_inertia, con.point
    for slot in range(2):
        geom = con.geom_a[c] if slot == 0 else con.geom_b[c]
        if g.what[geom] != BODY:
            continue
        i = g.index[geom]
        sign = 1.0 if slot == 0 else -1.0
        for k in range(n_dirs):
            body[r + k, slot] = i
            body_point(J_b, W_b, r + k, slot, sign, point, c, directions, k, body_pos, inv_mass,
                       Iw, i)


@inline
def _walk_ends(what: np.ndarray, index: np.ndarray, tree: Any, ga: int, gb: int
               ) -> tuple[int, bool]:
    """Where the walks up the tree of a contact's robot sides end (`kinematics.point_jacobian`'s
    `stop` and `with_base`): at the two links' shared ancestor, the floating base left out,
    when both are links of one tree; else at the root, the base included."""
    if what[ga] == ROBOT and what[gb] == ROBOT:
        a, b = index[ga], index[gb]
        if slot_tree(tree, a) == slot_tree(tree, b):
            return shared_ancestor(tree.parent, a, b), False
    return -1, True


@helper
def _robot_sides(m: Any, d: Any, c: int, r: int, n_dirs: int, directions: np.ndarray) -> None:
    """Add J and W of contact c's point on the sides that are tree links (or a floating
    base) to rows r .. r + n_dirs - 1 (the articulated response, Holck 2005 ch. 3): each
    side's tree gets a slot of the rows, two links of one tree share it; the point's rows are
    built together (`response.add_robot_point_rows`). Two links of one tree: each side's walk
    ends at their shared ancestor and leaves the floating base out, whose columns of
    J_a - J_b are zero (`kinematics.point_jacobian`)."""
    rows, con, g, tree, w = d.rows, d.contacts, m.geoms, m.tree, d.tree
    tree_v = tree.tree_v
    ga, gb = con.geom_a[c], con.geom_b[c]
    stop, with_base = _walk_ends(g.what, g.index, tree, ga, gb)
    for side in range(2):
        geom = con.geom_a[c] if side == 0 else con.geom_b[c]
        if g.what[geom] == ROBOT:
            body = g.index[geom]
            t = slot_tree(tree, body)
            slot = 0
            for k in range(n_dirs):
                slot = tree_slot(rows, r + k, t, tree_v[t], tree_v[t + 1] - tree_v[t])
            add_robot_point_rows(tree, w, rows.J_t, rows.W_t, r, n_dirs, slot, body,
                                 1.0 if side == 0 else -1.0, con.point[c], directions, stop,
                                 with_base)


@inline
def _normal_row(m: Any, d: Any, s: Any, c: int, r: int, n_dirs: int, e: float) -> None:
    """Row r as contact c's NORMAL row: speculative target -gap / h while apart, and what
    the restitution pass needs (e, the gap, the smooth acceleration of its velocity)."""
    rows, work = d.rows, d.work
    J_t, span, body, J_b = rows.J_t, rows.span, rows.body, rows.J_b
    h = m.options.dt
    un = velocity(J_t, span, body, J_b, r, work.qd_free, work.body_vel)
    u0 = velocity(J_t, span, body, J_b, r, s.qd, s.body_vel)
    gap = -d.contacts.depth[c]
    rows.kind[r] = NORMAL
    rows.target[r] = -gap / h if gap > 0.0 else 0.0
    rows.lo[r] = 0.0
    for k in range(n_dirs):  # only normal rows bounce
        rows.restitution[r + k] = e if k == 0 else 0.0
        rows.gap[r + k] = gap if k == 0 else 0.0
        rows.accel[r + k] = (un - u0) / h if k == 0 else 0.0
        rows.bounce[r + k] = 0.0
        rows.reflect[r + k] = 0.0


@inline
def _friction_pair(d: Any, r: int, friction: float, directions: np.ndarray) -> None:
    """Rows r + 1, r + 2 as the TANGENT pair of the NORMAL row r, turned so that t1 lies
    along the slip velocity after the free motion when there is one."""
    rows, work = d.rows, d.work
    J_t, W_t, span, body, J_b, W_b = rows.J_t, rows.W_t, rows.span, rows.body, rows.J_b, \
        rows.W_b
    ut1 = velocity(J_t, span, body, J_b, r + 1, work.qd_free, work.body_vel)
    ut2 = velocity(J_t, span, body, J_b, r + 2, work.qd_free, work.body_vel)
    slip = np.sqrt(ut1 * ut1 + ut2 * ut2)
    if slip > 1e-9:
        ca, sa = ut1 / slip, ut2 / slip
        t0, t1 = span[r + 1, 0, 1], span[r + 1, 1, 1]  # the trees' velocities in use
        _turn(J_t, r + 1, ca, sa, t0, t1)
        _turn(W_t, r + 1, ca, sa, t0, t1)
        b0 = 6 if body[r + 1, 0] >= 0 else 0
        b1 = 6 if body[r + 1, 1] >= 0 else 0
        _turn(J_b, r + 1, ca, sa, b0, b1)
        _turn(W_b, r + 1, ca, sa, b0, b1)
        _turn_directions(directions, 1, ca, sa)
    rows.kind[r + 1] = TANGENT
    rows.kind[r + 2] = FOLLOWER
    rows.mu[r + 1] = friction
    rows.link[r + 1] = r


@helper
def _body_contact(m: Any, d: Any, s: Any, c: int, r: int, n_dirs: int, e: float,
                  friction: float, directions: np.ndarray) -> None:
    """The rows of a contact between free (or fixed) bodies. It calls no other compiled
    function: a call in a loop keeps numba from pruning the reference counts of the arrays
    around it, which would cost several times the arithmetic."""
    _body_sides(m, d, s, c, r, n_dirs, directions)
    _normal_row(m, d, s, c, r, n_dirs, e)
    if n_dirs == 3:
        _friction_pair(d, r, friction, directions)


@helper
def _robot_contact(m: Any, d: Any, s: Any, c: int, r: int, n_dirs: int, e: float,
                   friction: float, directions: np.ndarray) -> None:
    """The rows of a contact with a robot link on one side or both."""
    _body_sides(m, d, s, c, r, n_dirs, directions)
    _robot_sides(m, d, c, r, n_dirs, directions)
    _normal_row(m, d, s, c, r, n_dirs, e)
    if n_dirs == 3:
        _friction_pair(d, r, friction, directions)


@inline
def _approach_speed(m: Any, d: Any, c: int) -> float:
    """-n . (v_a - v_b) at contact c's point, both sides parts of one robot (a link, or its
    fixed base's static shape: at rest), after the free motion (d.work.qd_free; link poses of
    this step in d.tree): how fast the surfaces close."""
    con, g, tree, w, qd = d.contacts, m.geoms, m.tree, d.tree, d.work.qd_free
    u = 0.0
    for side in range(2):
        geom = con.geom_a[c] if side == 0 else con.geom_b[c]
        if g.what[geom] != ROBOT:
            continue
        body = g.index[geom]
        nv = point_jacobian_row(tree, w.rot, w.pos, body, con.point[c], con.normal[c], w.row)
        v0 = tree.tree_v[slot_tree(tree, body)]
        sign = 1.0 if side == 0 else -1.0
        for j in range(nv):
            u += sign * w.row[j] * qd[v0 + j]
    return -u


@helper
def mark_contact_columns(m: Any, d: Any) -> None:
    """Flag in d.tree.column_due (and only those) the columns of H^-1 that this step's
    contacts' rows reach: on each side that is a robot link, the joints of its path as
    `_robot_sides` walks it (up to the two links' shared ancestor when both are of one tree,
    else to the root, then a floating base's six). A tree whose rows reach many columns is
    factorised before any is computed, by the free motion (`mb_sim.sim.servo.drive`) or the
    rows (`mb_sim.dynamics.impulse.joint_columns`): a hand's fingers touching each other
    reach a few columns each, which one by one would each cost a sweep over the whole
    tree."""
    con, g, tree, due = d.contacts, m.geoms, m.tree, d.tree.column_due
    what, index, parent = g.what, g.index, tree.parent
    n = parent.shape[0]
    due[:] = False
    for c in range(con.count[0]):
        ga, gb = con.geom_a[c], con.geom_b[c]
        stop, with_base = _walk_ends(what, index, tree, ga, gb)
        for side in range(2):
            geom = ga if side == 0 else gb
            if what[geom] != ROBOT:
                continue
            body = index[geom]
            k = slot_tree(tree, body)
            v0 = tree.tree_v[k] - tree.tree_body[k]  # joint i's column: v0 + i
            i = body if body < n else -1
            while i >= 0 and i != stop:
                due[v0 + i] = True
                i = parent[i]
            if with_base and tree.floating[k]:
                for x in range(tree.tree_v[k + 1] - 6, tree.tree_v[k + 1]):
                    due[x] = True


@helper
def drop_receding_contacts(m: Any, d: Any) -> None:
    """Remove from d.contacts (keeping their order) the contacts between parts of one robot
    (its links, and its fixed base's shapes) that are still apart and close less than
    1 / SPECULATIVE_REACH of their gap in this step, unless another contact of that tree
    keeps its rows: its impulse moves every link of the tree and may drive them together
    within the step."""
    con, g, tree, impelled, receding_tree = (d.contacts, m.geoms, m.tree, d.work.impelled,
                                             d.contacts.receding_tree)
    what, index, robot = g.what, g.index, g.robot
    reach = SPECULATIVE_REACH * m.options.dt
    count = con.count[0]
    dropped = 0
    for c in range(count):
        ga, gb = con.geom_a[c], con.geom_b[c]
        receding_tree[c] = -1
        gap = -con.depth[c]
        t = robot[ga]
        if gap > 0.0 and t >= 0 and robot[gb] == t and reach * _approach_speed(m, d, c) < gap:
            receding_tree[c] = t
            dropped += 1
    if dropped == 0:
        return
    impelled[:] = False
    for c in range(count):
        if receding_tree[c] < 0:
            for geom in (con.geom_a[c], con.geom_b[c]):
                if what[geom] == ROBOT:
                    impelled[slot_tree(tree, index[geom])] = True
    k = 0
    for c in range(count):
        if receding_tree[c] >= 0 and not impelled[receding_tree[c]]:
            continue
        if k != c:
            con.geom_a[k] = con.geom_a[c]
            con.geom_b[k] = con.geom_b[c]
            con.depth[k] = con.depth[c]
            con.feature[k] = con.feature[c]
            for x in range(3):
                con.point[k, x] = con.point[c, x]
                con.normal[k, x] = con.normal[c, x]
        k += 1
    con.count[0] = k


@helper
def contact_rows(m: Any, d: Any, s: Any) -> None:
    """Append the rows of every contact in d.contacts to d.rows: a NORMAL row, and a
    TANGENT pair when the surfaces have friction. The velocities after the free motion are
    d.work.qd_free, d.work.body_vel; those at the start of the step s.qd, s.body_vel. Each
    contact's normal row and friction directions go to d.contacts (normal_row, tangent1,
    tangent2)."""
    rows, con, g = d.rows, d.contacts, m.geoms
    directions = np.empty((3, 3))
    r = rows.count[0]
    for c in range(con.count[0]):
        ga, gb = con.geom_a[c], con.geom_b[c]
        friction = np.sqrt(g.friction[ga] * g.friction[gb])  # mb_sim.model.world
        e = max(g.restitution[ga], g.restitution[gb])  # combine_friction, combine_restitution
        tangent_basis(con.normal[c], directions)
        n_dirs = 3 if friction > 0.0 else 1
        if g.what[ga] == ROBOT or g.what[gb] == ROBOT:
            _robot_contact(m, d, s, c, r, n_dirs, e, friction, directions)
        else:
            _body_contact(m, d, s, c, r, n_dirs, e, friction, directions)
        con.normal_row[c] = r
        for k in range(3):
            con.tangent1[c, k] = directions[1, k]
            con.tangent2[c, k] = directions[2, k]
        r += n_dirs
    rows.count[0] = r
