"""URDF <mimic>: the follower joint is kept at multiplier * leader + offset by the solver."""

from __future__ import annotations

import logging

import numpy as np

import mb_sim

GRIPPER = """<robot name="gripper">
  <link name="base"/>
  <joint name="finger1" type="prismatic">
    <parent link="base"/><child link="f1"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.1" effort="50" velocity="1"/>
  </joint>
  <link name="f1"><inertial><mass value="0.2"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="finger2" type="prismatic">
    <parent link="base"/><child link="f2"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.1" effort="50" velocity="1"/>
    <mimic joint="finger1" multiplier="-1" offset="0.01"/>
  </joint>
  <link name="f2"><inertial><mass value="0.3"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""


def test_mimic_joint_follows_its_leader(caplog):
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(GRIPPER)
    assert any("mimics" in r.getMessage() for r in caplog.records)
    sim = mb_sim.Simulation(model, world=mb_sim.load_world({"gravity": [0, 0, 0]}), dt=0.001)
    sim.set_state(q=[0.0, 0.01])
    sim.set_effort({"finger1": 2.0})
    for _ in range(200):
        sim.step()
        q = sim.q
        assert abs(q[1] - (-q[0] + 0.01)) < 1e-6
    assert sim.q[0] > 0.01  # the leader moved, dragging the follower along
    # both fingers' masses resist the drive: a = F / (m1 + m2)
    np.testing.assert_allclose(sim.qd[0], 2.0 / 0.5 * sim.time, rtol=1e-3)
