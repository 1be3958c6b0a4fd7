"""The articulated impulse response (Holck 2005, ch. 3) equals H^-1 J^T computed with the mass
matrix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import njit

import mb_sim
from mb_sim.dynamics.aba import articulated_accelerations
from mb_sim.dynamics.impulse import (
    impulse_response,
    joint_columns,
    joint_impulse_response,
    point_impulse,
    unit_response,
)
from mb_sim.dynamics.joint_space import factor_tree, factored_accelerations, tree_column
from mb_sim.dynamics.kinematics import body_poses, point_jacobian_row
from mb_sim.dynamics.spatial import congruence_add, rigid_congruence_add
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.inertia import skew, spatial_inertia
from mb_sim.model.forest import compile_forest, new_tree
from mb_sim.solver.response import add_robot_point, add_robot_point_rows

ARM = Path(__file__).resolve().parents[1] / "urdf" / "arm.urdf"


def test_point_and_joint_impulse_responses_match_the_mass_matrix():
    """In a forest of two arms (the second floating), a unit impulse on a link of either
    moves its own tree by H_k^-1 J^T (each tree's own mass matrix) and the other not at
    all."""
    fixed = mb_sim.load_urdf(ARM)
    floating = mb_sim.load_urdf(ARM, floating_base=True, inertia_from_geometry=500.0)
    place = type("Placement", (), {"xyz": (1.0, 0.0, 0.0), "quat_xyzw": (0, 0, 0, 1),
                                   "joint_limit_restitution": 0.0})
    arrays = compile_forest([(fixed, None), (floating, place)], np.zeros(3))
    n, nv = arrays.parent.shape[0], int(arrays.tree_v[-1])
    rng = np.random.default_rng(7)
    for _ in range(10):
        q = np.zeros(int(arrays.tree_q[-1]))
        q[arrays.qadr] = rng.uniform(-1.5, 1.5, n)
        q[-7:-4], q[-4:] = rng.normal(size=3), [0.0, 0.0, np.sin(0.3), np.cos(0.3)]
        tree, w = new_tree(arrays), new_tree_work(allocate_tree_work(arrays))
        for k in range(2):
            articulated_accelerations(tree, w, k, q, np.zeros(nv), np.zeros(n), np.zeros(nv))
        rot, pos = np.zeros((n + 2, 3, 3)), np.zeros((n + 2, 3))
        body_poses(tree, q, rot, pos)
        for k, model in enumerate((fixed, floating)):
            segment = q[arrays.tree_q[k]:arrays.tree_q[k + 1]]
            pq = np.concatenate([segment[-7:], segment[:-7]]) if model.floating_base else segment
            order = (np.r_[model.nv - 3:model.nv, model.nv - 6:model.nv - 3, 0:model.nv - 6]
                     if model.floating_base else np.arange(model.nv))
            H = np.empty((model.nv, model.nv))
            H[np.ix_(order, order)] = mb_sim.crba(model, pq)
            b0 = int(arrays.tree_body[k])
            body = b0 + int(rng.integers(model.n_joints))
            point = pos[body] + rng.normal(size=3) * 0.1
            direction = rng.normal(size=3)
            direction /= np.linalg.norm(direction)
            J = np.zeros(model.nv)
            assert point_jacobian_row(tree, rot, pos, body, point, direction, J) == model.nv
            impulse, dqd = np.zeros(6), np.zeros(model.nv)
            point_impulse(rot[body], pos[body], point, direction, impulse)
            impulse_response(tree, w, body, impulse, dqd)
            np.testing.assert_allclose(dqd, np.linalg.solve(H, J), rtol=1e-9, atol=1e-12)
            joint = int(rng.integers(model.n_joints))
            joint_impulse_response(tree, w, b0 + joint, dqd)
            np.testing.assert_allclose(dqd, np.linalg.solve(H, np.eye(model.nv)[joint]),
                                       rtol=1e-9, atol=1e-12)


def _both_ways(m: object, d: object, body: int, point: np.ndarray, direction: np.ndarray,
               J_cols: np.ndarray, W_cols: np.ndarray, J_own: np.ndarray,
               W_own: np.ndarray) -> None:
    """Row 0 of (J_cols, W_cols) from the shared columns of H^-1, of (J_own, W_own) from the
    row's own impulse sweep (`add_robot_point` with no column allowed to be new)."""
    tree, w = m.tree, d.tree
    w.response_ready[:] = False
    add_robot_point(tree, w, J_cols, W_cols, 0, 0, body, 1.0, point, direction, 1 << 30)
    add_robot_point(tree, w, J_own, W_own, 0, 0, body, 1.0, point, direction, -1)


_both_ways = njit(_both_ways)


def test_contact_rows_from_shared_columns_equal_their_own_impulse_response() -> None:
    """A robot contact row's W summed from the columns H^-1 e_j (fixed and floating base,
    the base body included) equals its own articulated impulse response (which the test
    above ties to CRBA's H)."""
    rng = np.random.default_rng(3)
    for floating in (False, True):
        model = mb_sim.load_urdf(ARM, floating_base=floating, inertia_from_geometry=500.0)
        sim = mb_sim.Simulation(model, world=mb_sim.load_world({}))
        sim.set_effort(rng.uniform(-2.0, 2.0, len(sim.effort)))
        sim.step(20)  # the step leaves poses and articulated inertias of q in the workspace
        nv, bodies = model.nv, sim._data.tree.rot.shape[0] - (0 if floating else 1)
        for body in range(bodies):
            point = sim._data.tree.pos[body] + rng.normal(size=3) * 0.1
            direction = rng.normal(size=3)
            direction /= np.linalg.norm(direction)
            rows = [np.zeros((1, 2, nv)) for _ in range(4)]
            _both_ways(sim._m, sim._d, body, point, direction, *rows)
            J_cols, W_cols, J_own, W_own = (r[0, 0] for r in rows)
            np.testing.assert_array_equal(J_cols, J_own)
            np.testing.assert_allclose(W_cols, W_own, rtol=1e-12,
                                       atol=1e-12 * np.abs(W_own).max())


def _rows_together(m: object, d: object, body: int, point: np.ndarray, directions: np.ndarray,
                   columns: bool, J_rows: np.ndarray, W_rows: np.ndarray, J_one: np.ndarray,
                   W_one: np.ndarray) -> None:
    """The three rows of a point along `directions` built together (`add_robot_point_rows`)
    into (J_rows, W_rows), and one by one (`add_robot_point`) into (J_one, W_one); with
    `columns` the columns of H^-1 are computed first, else each row takes its own sweep."""
    tree, w = m.tree, d.tree
    w.response_ready[:] = False
    if columns:
        for v in range(tree.tree_v[1]):
            unit_response(tree, w, 0, v)
    add_robot_point_rows(tree, w, J_rows, W_rows, 0, 3, 0, body, -1.0, point, directions, -1,
                         True)
    w.response_ready[:] = False
    if columns:
        for v in range(tree.tree_v[1]):
            unit_response(tree, w, 0, v)
    for k in range(3):
        add_robot_point(tree, w, J_one, W_one, k, 0, body, -1.0, point, directions[k],
                        1 << 30 if columns else -1)


_rows_together = njit(_rows_together)


def test_a_points_three_rows_built_together_equal_each_built_alone() -> None:
    """A contact point's normal and tangent rows from one walk up the tree and shared
    columns (`add_robot_point_rows`) equal the rows built one at a time, from H^-1's columns
    and from each row's own impulse sweep, fixed and floating base."""
    rng = np.random.default_rng(9)
    for floating in (False, True):
        model = mb_sim.load_urdf(ARM, floating_base=floating, inertia_from_geometry=500.0)
        sim = mb_sim.Simulation(model, world=mb_sim.load_world({}))
        sim.set_effort(rng.uniform(-2.0, 2.0, len(sim.effort)))
        sim.step(20)
        nv, bodies = model.nv, sim._data.tree.rot.shape[0] - (0 if floating else 1)
        for body in range(bodies):
            point = sim._data.tree.pos[body] + rng.normal(size=3) * 0.1
            directions = np.linalg.qr(rng.normal(size=(3, 3)))[0].T.copy()
            for columns in (True, False):
                rows = [np.zeros((3, 2, nv)) for _ in range(4)]
                _rows_together(sim._m, sim._d, body, point, directions, columns, *rows)
                J_rows, W_rows, J_one, W_one = (r[:, 0] for r in rows)
                np.testing.assert_allclose(J_rows, J_one, rtol=1e-12, atol=1e-15)
                np.testing.assert_allclose(W_rows, W_one, rtol=1e-10,
                                           atol=1e-12 * np.abs(W_one).max())


def _columns_both_ways(m: object, d: object, wanted: np.ndarray, together: np.ndarray,
                       alone: np.ndarray) -> None:
    """The wanted joints' columns of H^-1 from `joint_columns` (one pass) into `together`,
    and each from `joint_impulse_response` (its own call) into `alone`."""
    tree, w = m.tree, d.tree
    w.response_ready[:] = False
    w.factored[:] = False
    for i in range(wanted.shape[0]):
        w.response_wanted[i] = wanted[i]
    joint_columns(tree, w)
    for i in range(wanted.shape[0]):
        if wanted[i]:
            together[i] = w.response[i]
            joint_impulse_response(tree, w, i, alone[i])


_columns_both_ways = njit(_columns_both_ways)


def test_joint_columns_in_one_pass_equal_one_sweep_each() -> None:
    """`joint_columns` (a running impulse up the path, columns in one pass) gives the same
    H^-1 e_i as `joint_impulse_response` for every joint asked for, fixed and floating base,
    and leaves the others alone and no flag set."""
    rng = np.random.default_rng(5)
    for floating in (False, True):
        model = mb_sim.load_urdf(ARM, floating_base=floating, inertia_from_geometry=500.0)
        sim = mb_sim.Simulation(model, world=mb_sim.load_world({}))
        sim.set_effort(rng.uniform(-2.0, 2.0, len(sim.effort)))
        sim.step(20)
        n, nv = model.n_joints, model.nv
        wanted = np.zeros(nv, dtype=np.bool_)
        wanted[:n] = rng.random(n) < 0.6
        wanted[0] = wanted[n - 1] = True
        together, alone = np.zeros((nv, nv)), np.zeros((nv, nv))
        _columns_both_ways(sim._m, sim._d, wanted, together, alone)
        np.testing.assert_allclose(together, alone, rtol=1e-12, atol=1e-12 * np.abs(alone).max())
        assert np.abs(together[wanted]).max() > 0.0
        w = sim._data.tree
        assert not w.response_wanted.any()
        np.testing.assert_array_equal(w.response_ready, wanted)


@pytest.mark.parametrize("urdf", ["talos_data/robots/talos_reduced.urdf",
                                  "pr2_description/urdf/pr2.urdf"])
def test_factorised_columns_of_a_branched_tree_equal_one_sweep_each(urdf: str) -> None:
    """A fixed humanoid (talos: legs, arms, head and grippers branching from one root) and
    pr2 (its torso joint prismatic), every column wanted, so `joint_columns` takes
    them from the L^T D L factors of H (`mb_sim.dynamics.joint_space`): the same H^-1 e_i as
    each joint's own impulse sweep, and the same as H^-1 from `mb_sim.crba`."""
    from robot_walk import hold_pose, load_fixed

    model = load_fixed(urdf)
    assert urdf.startswith("talos") or 1 in model.joint_type, "a prismatic joint"
    sim = mb_sim.Simulation(model, world=mb_sim.load_world({"ground": None, "robot": {
        "self_collision": False,
        "initial_positions": dict(zip(model.joint_names, hold_pose(model).tolist()))}}))
    sim.step()
    q = sim.q.copy()
    _articulated(sim._m, sim._d, sim._s)  # the transforms and inertias of q in the workspace
    nv = model.nv
    wanted = np.ones(nv, dtype=np.bool_)
    together, alone = np.zeros((nv, nv)), np.zeros((nv, nv))
    _columns_both_ways(sim._m, sim._d, wanted, together, alone)
    scale = np.abs(alone).max()
    np.testing.assert_allclose(together, alone, rtol=1e-9, atol=1e-12 * scale)
    np.testing.assert_allclose(together, np.linalg.inv(mb_sim.crba(model, q)), rtol=1e-7,
                               atol=1e-10 * scale)


@njit
def _both_congruences(X: np.ndarray, inertia: np.ndarray, out: np.ndarray) -> None:
    """out[0] += X^T I X by the ten numbers of the rigid body, out[1] by the 6x6 blocks."""
    rigid_congruence_add(X, 0, inertia, 0, out, 0)
    congruence_add(X, 0, inertia[0], out, 1, np.zeros((6, 6)))


def test_a_rigid_bodys_inertia_carries_to_its_parent_as_any_inertia_does() -> None:
    """`rigid_congruence_add` (mass, first moment and inertia about the origin, carried by the
    parallel-axis theorem) gives `congruence_add`'s X^T I X for rigid-body inertias of random
    mass, centre and principal axes, through random joint transforms (rotation and
    offset), added onto what the parent holds already."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(17)
    for _ in range(50):
        mass = rng.uniform(0.1, 10.0)
        axes = Rotation.random(random_state=rng).as_matrix()
        inertia_com = axes @ np.diag(rng.uniform(0.01, 1.0, 3)) @ axes.T
        inertia = spatial_inertia(mass, rng.normal(size=3) * 0.3, inertia_com)[None]
        E = Rotation.random(random_state=rng).as_matrix()
        X = np.zeros((1, 6, 6))
        X[0, :3, :3] = X[0, 3:, 3:] = E
        X[0, 3:, :3] = -E @ skew(rng.normal(size=3) * 0.5)
        out = np.repeat(spatial_inertia(1.0, np.zeros(3), np.eye(3))[None], 2, axis=0)
        _both_congruences(X, inertia, out)
        np.testing.assert_allclose(out[0], out[1], rtol=1e-12, atol=1e-12 * np.abs(out).max())
        np.testing.assert_allclose(out[0], out[0].T, atol=1e-12 * np.abs(out).max())


@njit
def _articulated(m: object, d: object, s: object) -> None:
    """ABA over every tree at the state, which leaves its transforms and articulated
    inertias in the workspace (a step may have taken its free motion from the factors)."""
    for k in range(m.tree.tree_body.shape[0] - 1):
        articulated_accelerations(m.tree, d.tree, k, s.q, s.qd, d.work.tau, d.tree.qdd)


@njit
def _both_forward_dynamics(m: object, d: object, s: object, k: int, armature: np.ndarray,
                           by_aba: np.ndarray, by_factors: np.ndarray) -> bool:
    """Tree k's qdd at the state with this armature, by ABA and from H factorised; whether
    the second left the factors marked."""
    tree, w = m.tree, d.tree
    for i in range(armature.shape[0]):
        w.armature[i] = armature[i]
    articulated_accelerations(tree, w, k, s.q, s.qd, d.work.tau, by_aba)
    factored_accelerations(tree, w, k, s.q, s.qd, d.work.tau, by_factors)
    return w.factored[k]


@pytest.mark.parametrize("source", ["arm", "pr2", "quadruped", "humanoid"])
def test_free_motion_from_the_factors_equals_aba(source: str) -> None:
    """`factored_accelerations` (RNEA's bias, then H + diag(armature) factorised and solved)
    gives ABA's qdd at a moving state: a fixed arm with joint damping, pr2 (a prismatic
    torso, branches), the quadruped floating, PyBullet's humanoid floating (ball joints),
    each the second tree of a forest, with efforts and some joints' armature (a servo's
    implicit part)."""
    from robot_walk import package_dirs, robots_dir

    rng = np.random.default_rng(21)
    path, floating = {
        "arm": (ARM, False),
        "pr2": (robots_dir() / "pr2_description/urdf/pr2.urdf", False),
        "quadruped": (Path(__file__).resolve().parents[1] / "urdf" / "quadruped.urdf", True),
        "humanoid": (None, True)}[source]
    world = mb_sim.load_world({"robots": [
        {"name": "first", "urdf": str(ARM), "inertia_from_geometry": 500.0},
        {"name": "second", "urdf": str(path or _humanoid()), "floating": floating,
         "xyz": [2.0, 0.0, 1.0], "inertia_from_geometry": 500.0}]},
        package_dirs=package_dirs())
    sim = mb_sim.Simulation(world=world)
    robot = sim.robot("second")
    for _ in range(3):
        robot.set_effort(rng.uniform(-2.0, 2.0, robot.n_joints))
        sim.step(10)  # a moving, turned state, and efforts in the step's workspace
    n = sim._data.tree.armature.shape[0]
    armature = np.where(rng.random(n) < 0.5, rng.uniform(0.01, 0.5, n), 0.0)
    nv = sim.state.qd.shape[0]
    by_aba, by_factors = np.zeros(nv), np.zeros(nv)
    assert _both_forward_dynamics(sim._m, sim._d, sim._s, 1, armature, by_aba, by_factors)
    v0, v1 = sim.scene.arrays.tree.tree_v[1:3]
    assert np.abs(by_aba[v0:v1]).max() > 0.1
    np.testing.assert_allclose(by_factors[v0:v1], by_aba[v0:v1], rtol=1e-9,
                               atol=1e-10 * np.abs(by_aba[v0:v1]).max())


@njit
def _factorised_and_swept(m: object, d: object, k: int, factorised: np.ndarray,
                          swept: np.ndarray) -> None:
    """Every column of tree k's H^-1 from its factors (`factor_tree`, `tree_column`) and from
    impulse sweeps (`unit_response` with no factors), local to the tree."""
    tree, w = m.tree, d.tree
    w.response_ready[:] = False
    w.factored[:] = False
    nv = tree.tree_v[k + 1] - tree.tree_v[k]
    for c in range(nv):
        unit_response(tree, w, k, c)
        swept[c] = w.response[tree.tree_v[k] + c, :nv]
    factor_tree(tree, w, k)
    for c in range(nv):
        tree_column(tree, w, k, c, factorised[c])


def _humanoid() -> str:
    pybullet_data = pytest.importorskip("pybullet_data")
    return f"{pybullet_data.getDataPath()}/humanoid/humanoid.urdf"


@pytest.mark.parametrize("source", ["quadruped", "humanoid", "arm"])
def test_factorised_columns_of_a_floating_tree_equal_its_sweeps_and_crba(source: str) -> None:
    """A floating base's six coordinates factorised above the root joints: for the
    quadruped, PyBullet's humanoid (ball joints: three coordinates under one quaternion) and
    a floating arm, each the second tree of a forest behind a fixed arm (its rows of the
    factors after the first tree's), at a moving state: every column of H^-1 from the
    factors equals the impulse sweep's and inv(crba) of the robot alone."""
    rng = np.random.default_rng(11)
    path = {"quadruped": Path(__file__).resolve().parents[1] / "urdf" / "quadruped.urdf",
            "humanoid": None, "arm": ARM}[source] or _humanoid()
    world = mb_sim.load_world({"ground": None, "robots": [
        {"name": "fixed", "urdf": str(ARM), "inertia_from_geometry": 500.0},
        {"name": "free", "urdf": str(path), "floating": True, "xyz": [2.0, 0.0, 1.0],
         "inertia_from_geometry": 500.0}]})
    sim = mb_sim.Simulation(world=world)
    for name in ("fixed", "free"):
        robot = sim.robot(name)
        robot.set_effort(rng.uniform(-1.0, 1.0, robot.n_joints))
    sim.step(29)  # a moving, turned state
    arrays, model = sim.scene.arrays.tree, sim.robot("free").model
    k, nv = 1, model.nv
    segment = sim.state.q[arrays.tree_q[k]:arrays.tree_q[k + 1]].copy()
    _articulated(sim._m, sim._d, sim._s)  # the transforms and inertias of that state
    factorised, swept = np.zeros((nv, nv)), np.zeros((nv, nv))
    _factorised_and_swept(sim._m, sim._d, k, factorised, swept)
    scale = np.abs(swept).max()
    np.testing.assert_allclose(factorised, swept, rtol=1e-9, atol=1e-12 * scale)
    order = np.r_[nv - 3:nv, nv - 6:nv - 3, 0:nv - 6]  # the model's base first, v then w
    H = np.empty((nv, nv))
    H[np.ix_(order, order)] = mb_sim.crba(model, np.concatenate([segment[-7:], segment[:-7]]))
    np.testing.assert_allclose(factorised, np.linalg.inv(H), rtol=1e-7, atol=1e-10 * scale)
