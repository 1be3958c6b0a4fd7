"""Ball joints in robot trees (URDF `spherical`): ABA, RNEA and CRBA against Pinocchio's
`JointModelSpherical`, a conical pendulum against its closed form, and the joint's place in
the state and the API (docs/architecture.md, "Ball joints in the tree").

Pinocchio's URDF reader knows no spherical joints (urdfdom has none), so its model is built
here from the same URDF text with its own joint models (`JointModelSpherical`, revolute about
any axis, the free-flyer), placements and inertias: nothing of mb_sim's loader is shared.
q of a ball joint is its unit quaternion (x, y, z, w) in both, qd the child's angular velocity
in its own frame.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

import mb_sim

TOL = 1e-9

CHAIN = """<robot name="chain">
  <link name="base">
    <inertial><origin xyz="0.01 0.02 0.05"/><mass value="4"/>
      <inertia ixx="0.05" iyy="0.06" izz="0.07" ixy="0.001" ixz="0" iyz="0.002"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0.1 -0.05 0.3" rpy="0.2 -0.1 0.4"/><axis xyz="0.3 1 0.2"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/>
  </joint>
  <link name="upper">
    <inertial><origin xyz="0.02 0.05 -0.2" rpy="0.1 0.2 -0.3"/><mass value="2.5"/>
      <inertia ixx="0.06" iyy="0.05" izz="0.02" ixy="0.004" ixz="-0.003" iyz="0.002"/>
    </inertial>
  </link>
  <joint name="elbow" type="spherical">
    <parent link="upper"/><child link="fore"/>
    <origin xyz="0.03 0.01 -0.4" rpy="-0.3 0.5 0.1"/>
  </joint>
  <link name="fore">
    <inertial><origin xyz="0.01 -0.02 -0.15" rpy="0.3 0 0.2"/><mass value="1.2"/>
      <inertia ixx="0.03" iyy="0.025" izz="0.01" ixy="-0.002" ixz="0.001" iyz="0.003"/>
    </inertial>
  </link>
  <joint name="wrist" type="continuous">
    <parent link="fore"/><child link="hand"/>
    <origin xyz="0 0.02 -0.3" rpy="0.1 0.1 0"/><axis xyz="1 0 0"/>
  </joint>
  <link name="hand">
    <inertial><origin xyz="0.05 0 -0.03"/><mass value="0.6"/>
      <inertia ixx="0.004" iyy="0.005" izz="0.003" ixy="0" ixz="0.0005" iyz="0"/>
    </inertial>
  </link>
  <joint name="finger" type="spherical">
    <parent link="hand"/><child link="tip"/>
    <origin xyz="0.1 0 -0.05" rpy="0 0.3 0"/>
  </joint>
  <link name="tip">
    <inertial><origin xyz="0 0.01 -0.04" rpy="0.2 0.1 0.3"/><mass value="0.2"/>
      <inertia ixx="0.0004" iyy="0.0005" izz="0.0002" ixy="0.00001" ixz="0" iyz="0.00002"/>
    </inertial>
  </link>
</robot>"""


def _floats(text: str | None, default: str) -> np.ndarray:
    return np.array([float(v) for v in (text or default).split()])


def _placement(element: ET.Element | None) -> pin.SE3:
    xyz = _floats(element.get("xyz") if element is not None else None, "0 0 0")
    rpy = _floats(element.get("rpy") if element is not None else None, "0 0 0")
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz)


def pinocchio_model(urdf: str, floating: bool) -> pin.Model:
    """Pinocchio's model of a URDF of revolute, continuous and spherical joints in a chain
    or tree, built from the text (module docstring)."""
    root = ET.fromstring(urdf)
    model = pin.Model()
    parent_of = {j.find("child").get("link"): j for j in root.findall("joint")}
    links = {link.get("name"): link for link in root.findall("link")}
    base = next(name for name in links if name not in parent_of)
    joint_id = {base: 0}
    if floating:
        joint_id[base] = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
    order, stack = [], [base]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(j.find("child").get("link") for j in root.findall("joint")
                     if j.find("parent").get("link") == name)
    for name in order[1:]:
        joint = parent_of[name]
        parent = joint_id[joint.find("parent").get("link")]
        if joint.get("type") == "spherical":
            jm = pin.JointModelSpherical()
        else:
            axis = _floats(joint.find("axis").get("xyz"), "1 0 0")
            jm = pin.JointModelRevoluteUnaligned(axis / np.linalg.norm(axis))
        joint_id[name] = model.addJoint(parent, jm, _placement(joint.find("origin")),
                                        joint.get("name"))
    for name, link in links.items():
        inertial = link.find("inertial")
        if inertial is None:
            continue
        m = float(inertial.find("mass").get("value"))
        i = {k: float(v) for k, v in inertial.find("inertia").attrib.items()}
        frame = _placement(inertial.find("origin"))
        I_frame = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]],
                            [i["ixz"], i["iyz"], i["izz"]]])
        inertia = pin.Inertia(m, frame.translation, frame.rotation @ I_frame @ frame.rotation.T)
        model.appendBodyToJoint(joint_id[name], inertia, pin.SE3.Identity())
    return model


def random_states(model: mb_sim.Model, p: pin.Model, seed: int, count: int = 20
                  ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        q = pin.randomConfiguration(p, -np.pi * np.ones(p.nq), np.pi * np.ones(p.nq))
        if model.floating_base:
            q[:3] = rng.uniform(-1.0, 1.0, 3)
        out.append((q, rng.uniform(-2.0, 2.0, p.nv), rng.uniform(-1.0, 1.0, p.nv)))
    return out


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@pytest.fixture(scope="module", params=["fixed", "floating"])
def pair(request: pytest.FixtureRequest) -> tuple[mb_sim.Model, pin.Model]:
    floating = request.param == "floating"
    return mb_sim.load_urdf(CHAIN, floating_base=floating), pinocchio_model(CHAIN, floating)


def test_the_model_has_the_layout_of_pinocchios(pair: tuple[mb_sim.Model, pin.Model]) -> None:
    model, p = pair
    assert (model.nq, model.nv) == (p.nq, p.nv)
    assert model.joint_names[:4] == ("shoulder", "elbow_x", "elbow_y", "elbow_z")
    assert model.ball_joints == {"elbow": 1, "finger": 5}
    assert list(model.qadr) == [0, 1, 1, 1, 5, 6, 6, 6]
    assert float(np.sum(model.mass)) == pytest.approx(4.5)  # the chain, not the base


def test_aba_against_pinocchio(pair: tuple[mb_sim.Model, pin.Model]) -> None:
    model, p = pair
    data = p.createData()
    for k, (q, qd, x) in enumerate(random_states(model, p, seed=1)):
        tau = 10.0 * x
        ours = mb_sim.aba(model, q, qd, tau)
        ref = pin.aba(p, data, q, qd, tau)
        assert rel_err(ours, ref) <= TOL, f"state {k}:\n{ours}\n{ref}"


def test_rnea_against_pinocchio(pair: tuple[mb_sim.Model, pin.Model]) -> None:
    model, p = pair
    data = p.createData()
    for k, (q, qd, x) in enumerate(random_states(model, p, seed=2)):
        qdd = 5.0 * x
        ours = mb_sim.rnea(model, q, qd, qdd)
        ref = pin.rnea(p, data, q, qd, qdd)
        assert rel_err(ours, ref) <= TOL, f"state {k}:\n{ours}\n{ref}"


def test_crba_against_pinocchio(pair: tuple[mb_sim.Model, pin.Model]) -> None:
    model, p = pair
    data = p.createData()
    for k, (q, _, _) in enumerate(random_states(model, p, seed=3)):
        ours = mb_sim.crba(model, q)
        upper = np.triu(pin.crba(p, data, q))
        ref = upper + np.triu(upper, 1).T
        assert rel_err(ours, ref) <= TOL, f"state {k}:\n{ours}\n{ref}"


PENDULUM = """<robot name="conical">
  <link name="pivot"/>
  <joint name="ball" type="spherical">
    <parent link="pivot"/><child link="bob"/><origin xyz="0 0 2"/>
  </joint>
  <link name="bob">
    <inertial><origin xyz="0 0 -{length}"/><mass value="1"/>
      <inertia ixx="1e-9" iyy="1e-9" izz="1e-9" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
</robot>"""


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_a_conical_pendulum_keeps_its_cone(integrator: str) -> None:
    """A bob on a ball joint, tilted by theta and turning about the vertical at
    Omega = sqrt(g / (L cos theta)), stays on its cone (closed form of the conical
    pendulum): after 2 s its tilt is theta and it has gone round Omega t."""
    length, theta, g = 0.8, 0.5, 9.81
    omega = np.sqrt(g / (length * np.cos(theta)))
    model = mb_sim.load_urdf(PENDULUM.format(length=length))
    sim = mb_sim.Simulation(model, dt=0.0005, integrator=integrator)
    tilt = np.array([np.sin(theta / 2), 0.0, 0.0, np.cos(theta / 2)])  # about x
    R = pin.Quaternion(tilt[3], *tilt[:3]).toRotationMatrix()
    sim.set_state(q={"ball": tilt}, qd=dict(zip(model.joint_names, R.T @ [0, 0, omega],
                                                strict=True)))
    seconds = 2.0
    sim.step(round(seconds / sim.dt))
    rot = pin.Quaternion(*np.roll(sim.q, 1)).toRotationMatrix()
    down = rot @ [0.0, 0.0, -1.0]
    assert np.degrees(np.arccos(-down[2])) == pytest.approx(np.degrees(theta), abs=0.05)
    start = R @ [0.0, 0.0, -1.0]
    turned = np.arctan2(down[1], down[0]) - np.arctan2(start[1], start[0])
    lag = np.angle(np.exp(1j * (turned - omega * seconds)))  # wrapped to (-pi, pi]
    assert np.degrees(lag) == pytest.approx(0.0, abs=0.5)
    assert np.linalg.norm(sim.q) == pytest.approx(1.0, abs=1e-12)


def test_point_jacobian_and_impulse_response_against_pinocchio() -> None:
    """A contact point's Jacobian row on a link behind a ball joint is Pinocchio's frame
    Jacobian there, and the articulated impulse response of a unit impulse along it is
    H^-1 J^T with Pinocchio's H (Holck 2005, ch. 3)."""
    from mb_sim.dynamics.aba import articulated_accelerations
    from mb_sim.dynamics.impulse import impulse_response, point_impulse
    from mb_sim.dynamics.kinematics import body_poses, point_jacobian_row
    from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
    from mb_sim.model.forest import compile_forest, new_tree

    model, p = mb_sim.load_urdf(CHAIN), pinocchio_model(CHAIN, floating=False)
    data = p.createData()
    arrays = compile_forest([(model, None)], np.zeros(3))
    tree, w = new_tree(arrays), new_tree_work(allocate_tree_work(arrays))
    n, nv = model.n_joints, model.nv
    rng = np.random.default_rng(4)
    for k, (q, _, _) in enumerate(random_states(model, p, seed=4, count=8)):
        articulated_accelerations(tree, w, 0, q, np.zeros(nv), np.zeros(n), np.zeros(nv))
        rot, pos = np.zeros((n + 1, 3, 3)), np.zeros((n + 1, 3))
        body_poses(tree, q, rot, pos)
        pin.forwardKinematics(p, data, q)
        for link, joint in (("fore", "elbow"), ("tip", "finger")):
            body = model.link_body[link]
            point = pos[body] + rng.normal(size=3) * 0.1
            direction = rng.normal(size=3)
            direction /= np.linalg.norm(direction)
            J = np.zeros(nv)
            point_jacobian_row(tree, rot, pos, body, point, direction, J)
            frame = pin.SE3(np.eye(3), data.oMi[p.getJointId(joint)].actInv(point))
            fid = p.addFrame(pin.Frame(f"{link}_point_{k}", p.getJointId(joint), 0, frame,
                                       pin.FrameType.OP_FRAME))  # a name of its own
            d2 = p.createData()
            pin.computeJointJacobians(p, d2, q)
            pin.updateFramePlacements(p, d2)
            ref = direction @ pin.getFrameJacobian(p, d2, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
            np.testing.assert_allclose(J, ref, rtol=1e-10, atol=1e-12)
            impulse, dqd = np.zeros(6), np.zeros(nv)
            point_impulse(rot[body], pos[body], point, direction, impulse)
            impulse_response(tree, w, body, impulse, dqd)
            upper = np.triu(pin.crba(p, data, q))
            H = upper + np.triu(upper, 1).T
            np.testing.assert_allclose(dqd, np.linalg.solve(H, ref), rtol=1e-9, atol=1e-12)


CART = """<robot name="cart">
  <link name="base">
    <inertial><origin xyz="0 0 0.1"/><mass value="3"/>
      <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.1"/><geometry><box size="0.4 0.3 0.08"/></geometry></collision>
  </link>
  {wheels}
  {casters}
</robot>"""
WHEEL = """<joint name="{side}_wheel" type="continuous">
    <parent link="base"/><child link="{side}_wheel"/>
    <origin xyz="0.1 {y} 0.06" rpy="-1.5708 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <link name="{side}_wheel">
    <inertial><mass value="0.3"/>
      <inertia ixx="3e-4" iyy="3e-4" izz="5e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><cylinder radius="0.06" length="0.03"/></geometry></collision>
  </link>"""
CASTER = """<joint name="{side}_caster" type="spherical">
    <parent link="base"/><child link="{side}_caster"/><origin xyz="-0.12 {y} 0.02"/>
  </joint>
  <link name="{side}_caster">
    <inertial><mass value="0.05"/>
      <inertia ixx="8e-6" iyy="8e-6" izz="8e-6" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.02"/></geometry></collision>
  </link>"""


def test_a_cart_on_ball_jointed_casters_drives_straight() -> None:
    """Two wheels turned at 0.2 m/s for 2 s drive a cart on two ball-jointed sphere casters
    0.4 m straight on: the casters roll with it (contacts on links behind ball joints), it
    neither tips nor turns."""
    wheels = "".join(WHEEL.format(side=s, y=y) for s, y in (("left", 0.17), ("right", -0.17)))
    casters = "".join(CASTER.format(side=s, y=y) for s, y in (("left", 0.1), ("right", -0.1)))
    model = mb_sim.load_urdf(CART.format(wheels=wheels, casters=casters), floating_base=True)
    assert sorted(model.ball_joints) == ["left_caster", "right_caster"]
    sim = mb_sim.Simulation(model, world=mb_sim.load_world({"ground": True}), dt=0.001)
    sim.set_base_pose([0.0, 0.0, 0.0005], [0, 0, 0, 1])
    sim.step(300)  # settle
    start = sim.link_pose("base")[0].copy()
    sim.set_interfaces({"left_wheel": "velocity", "right_wheel": "velocity"})
    speed = 0.2 / 0.06
    sim.set_velocity_target({"left_wheel": speed, "right_wheel": speed})
    sim.step(2000)
    xyz, quat = sim.link_pose("base")
    moved = xyz - start
    assert 0.37 <= moved[0] <= 0.41, moved
    assert abs(moved[1]) < 0.01, moved
    up = pin.Quaternion(quat[3], *quat[:3]).toRotationMatrix()[:, 2]
    assert up[2] > np.cos(np.radians(2.0)), up
    spin = sim.robot("cart").qd[model.joint_index("left_caster_x") + 6:][:3]
    assert np.linalg.norm(spin) > 0.5 * 0.2 / 0.02, spin  # the caster rolls at about v / r


def test_pybullets_humanoid_loads_and_stands_its_ground() -> None:
    """pybullet_data's humanoid (spherical chest, neck, shoulders, hips and ankles) loads
    with its 15 ball joints and falls onto the ground without a body escaping."""
    import pybullet_data

    path = f"{pybullet_data.getDataPath()}/humanoid/humanoid.urdf"
    model = mb_sim.load_urdf(path, floating_base=True)
    assert len(model.ball_joints) >= 8, model.ball_joints
    sim = mb_sim.Simulation(model, world=mb_sim.load_world({"ground": True}), dt=0.001)
    sim.set_base_pose([0.0, 0.0, 4.0], [np.sqrt(0.5), 0, 0, np.sqrt(0.5)])  # upright (y-up file)
    sim.step(2000)
    assert np.all(np.isfinite(sim.q))
    assert -0.5 < sim.link_pose(model.base_link)[0][2] < 6.0


def test_an_sdf_ball_joint_inside_a_model_is_a_spherical_joint_of_its_robot() -> None:
    """Two links of an SDF model joined by a `ball` joint make a robot whose URDF holds a
    `spherical` joint at the joint's frame (a ball joint to the world stays a world joint)."""
    sdf = """<sdf version="1.9"><world name="w"><model name="rig"><pose>0 0 1 0 0 0</pose>
      <link name="base"><inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy>
        <izz>0.1</izz></inertia></inertial><collision name="c"><geometry><box>
        <size>0.2 0.2 0.2</size></box></geometry></collision></link>
      <link name="caster"><pose>0.3 0 -0.1 0 0 0</pose><inertial><mass>0.1</mass><inertia>
        <ixx>1e-4</ixx><iyy>1e-4</iyy><izz>1e-4</izz></inertia></inertial>
        <collision name="c"><geometry><sphere><radius>0.05</radius></sphere></geometry>
        </collision></link>
      <joint name="swivel" type="ball"><parent>base</parent><child>caster</child></joint>
    </model></world></sdf>"""
    world = mb_sim.load_world(sdf)
    assert [r.name for r in world.robots] == ["rig"] and not world.joints
    model = mb_sim.load_urdf(world.robots[0].urdf, floating_base=True)
    assert model.ball_joints == {"swivel": 0}
    sim = mb_sim.Simulation(model, dt=0.001)
    np.testing.assert_allclose(sim.link_pose("caster")[0] - sim.link_pose("base")[0],
                               [0.3, 0.0, -0.1], atol=1e-12)
