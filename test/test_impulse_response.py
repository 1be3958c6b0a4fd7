"""The articulated impulse response (Holck 2005, ch. 3) equals H^-1 J^T computed with the mass
matrix."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import mb_sim
from mb_sim.dynamics.aba import articulated_accelerations
from mb_sim.dynamics.impulse import impulse_response, joint_impulse_response, point_impulse
from mb_sim.dynamics.kinematics import body_poses, point_jacobian_row
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.model.compile import compile_tree, new_tree

ARM = Path(__file__).resolve().parents[1] / "urdf" / "arm.urdf"


def test_point_and_joint_impulse_responses_match_the_mass_matrix():
    model = mb_sim.load_urdf(ARM)
    n = model.nv
    rng = np.random.default_rng(7)
    for _ in range(10):
        q = rng.uniform(-1.5, 1.5, n)
        work = allocate_tree_work(n)
        tree, w = new_tree(compile_tree(model, None, np.zeros(3))), new_tree_work(work)
        articulated_accelerations(tree, w, q, np.zeros(n), np.zeros(n), np.zeros(n))
        H = mb_sim.crba(model, q)
        rot, pos = np.zeros((n, 3, 3)), np.zeros((n, 3))
        body_poses(*model.kinematic_arrays, q, np.eye(3), np.zeros(3), rot, pos)
        body = int(rng.integers(n))
        point = pos[body] + rng.normal(size=3) * 0.1
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        J = np.zeros(n)
        point_jacobian_row(model.parent, model.joint_type, rot, pos, model.axis, body, point,
                           direction, J)
        impulse, dqd = np.zeros(6), np.zeros(n)
        point_impulse(rot[body], pos[body], point, direction, impulse)
        impulse_response(tree, w, body, impulse, dqd)
        np.testing.assert_allclose(dqd, np.linalg.solve(H, J), rtol=1e-9, atol=1e-12)
        joint = int(rng.integers(n))
        joint_impulse_response(tree, w, joint, dqd)
        np.testing.assert_allclose(dqd, np.linalg.solve(H, np.eye(n)[joint]), rtol=1e-9,
                                   atol=1e-12)
