"""World joints kept by impulses (Bender et al. n.d.) with Coulomb joint friction (Mikhailyuk &
Strashnov 2016).

Joint errors are measured here from the body poses and the `WorldJoint` data alone (points and
axes fixed in each body at load time), not with the solver's own functions.

- Mikhailyuk & Strashnov 2016 door (config/worlds/door.yaml, 20 N m hinge friction): the hinge's
angular velocity
  falls linearly at -20 / I_hinge, the door stops at 1.4 I_hinge / 20 s and stays at rest; the
  friction row's impulse is the bound times dt while sliding. A tilted hinge makes gravity
  torque the door about it: below the bound it holds (the friction impulse is the gravity
  torque's impulse), above it the door turns with (tau - 20) / I about the axis.
- Bender et al. n.d. chain (config/worlds/ball_chain.yaml): joint gaps within D_max after every
step, one
  pass per step keeps them below 1 mm over 10 s, the 5 cm apart chain reassembles within 1 s,
  a correction is I = K^-1 g / h with K of Holck 2005 eq. 2.16 and leaves momentum unchanged, and
  the energy does not grow.
- revolute axes stay parallel, prismatic orientation stays, fixed joints hold; limits hold;
  ball-joint friction stays in its ball |p| <= F h.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import mb_sim
from mb_sim.rotations import matrix_from_quat

WORLDS = Path(__file__).resolve().parents[1] / "config" / "worlds"
DT = 0.002
G = 9.81


def world_dict(name: str) -> dict[str, Any]:
    return yaml.safe_load((WORLDS / name).read_text())


def make_sim(world: Any, dt: float = DT) -> mb_sim.Simulation:
    if not isinstance(world, (str, Path)):
        world = copy.deepcopy(world)
    return mb_sim.Simulation(None, world=mb_sim.load_world(world), dt=dt)


def frames(sim: mb_sim.Simulation, body: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(position of the COM, rotation) of a body, the world frame for None."""
    if body is None:
        return np.zeros(3), np.eye(3)
    x, q = sim.body_pose(body)
    return x, matrix_from_quat(q)


def anchors(sim: mb_sim.Simulation, jt: Any) -> tuple[np.ndarray, np.ndarray]:
    """World positions of the parent's and the child's joint points."""
    xp, Rp = frames(sim, jt.parent)
    xc, Rc = frames(sim, jt.child)
    return xp + Rp @ jt.parent_anchor_local, xc + Rc @ jt.child_anchor_local


def gaps(sim: mb_sim.Simulation) -> np.ndarray:
    out = []
    for jt in sim.world.joints:
        pp, pc = anchors(sim, jt)
        out.append(np.linalg.norm(pc - pp))
    return np.array(out)


def axis_angle(sim: mb_sim.Simulation, jt: Any) -> float:
    """Angle between the parent's and the child's copies of the joint axis."""
    a = frames(sim, jt.parent)[1] @ jt.parent_axis_local
    b = frames(sim, jt.child)[1] @ jt.child_axis_local
    return float(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b))


def rotation_angle(R: np.ndarray) -> float:
    return float(np.arccos(np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0)))


def rotation_vector(R: np.ndarray) -> np.ndarray:
    v = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.linalg.norm(v)
    return v if s < 1e-15 else v * np.arctan2(s, 0.5 * (np.trace(R) - 1.0)) / s


def skew(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def rodrigues(w: np.ndarray, h: float) -> np.ndarray:
    angle = np.linalg.norm(w) * h
    if angle == 0.0:
        return np.eye(3)
    k = skew(w / np.linalg.norm(w))
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k


def door_inertia_about(world: Any, anchor: np.ndarray, axis: np.ndarray) -> float:
    """n^T (I_com + m (|r|^2 1 - r r^T)) n for the door about the line (anchor, axis)."""
    door = world.body("door")
    R = door.rotation
    r = door.xyz - anchor
    Ic = R @ door.inertia @ R.T + door.mass * (r @ r * np.eye(3) - np.outer(r, r))
    return float(axis @ Ic @ axis)


# --------------------------------------------------------------------------------------------
# Mikhailyuk & Strashnov 2016: Coulomb friction in the door hinge


def test_door_slows_linearly_and_stays_at_rest() -> None:
    sim = make_sim(WORLDS / "door.yaml")
    jt = sim.world.joints[0]
    bound = jt.friction
    assert bound == 20.0
    inertia = door_inertia_about(sim.world, jt.anchor, jt.axis)
    assert inertia == pytest.approx(7.699, abs=1e-3)
    joints = sim.world_joints
    times, omega, lam = [], [], []
    for _ in range(round(1.5 / DT)):
        sim.step()
        times.append(sim.time)
        omega.append(sim.body_velocity("door")[1] @ jt.axis)
        lam.append(sim.rows.lam[joints.friction_row[0]])
    t, w, p = np.array(times), np.array(omega), np.array(lam)
    assert w[0] > 1.3
    stop = int(np.argmax(w < 1e-9))  # first step ending at rest
    assert stop > 0
    sliding = np.arange(len(w)) < stop
    slope = np.polyfit(t[sliding], w[sliding], 1)[0]
    assert slope == pytest.approx(-bound / inertia, rel=0.02)
    # linear: no point of the sliding phase is off the line by more than 1e-4 rad/s
    fit = np.polyval(np.polyfit(t[sliding], w[sliding], 1), t[sliding])
    assert np.max(np.abs(fit - w[sliding])) < 1e-4
    assert t[stop] == pytest.approx(1.4 * inertia / bound, abs=2 * DT)
    assert np.max(np.abs(w[stop:])) < 1e-6
    v, wv = sim.body_velocity("door")
    assert np.linalg.norm(v) < 1e-6 and np.linalg.norm(wv) < 1e-6
    # sliding: the friction impulse sits on the bound, against the motion
    np.testing.assert_allclose(p[sliding], -bound * DT, rtol=1e-12)
    # at rest: well inside it
    assert np.max(np.abs(p[stop + 1 :])) < 1e-3 * bound * DT


def tilted_door(torque: float, friction: float = 20.0) -> tuple[dict[str, Any], np.ndarray]:
    """door.yaml at rest with its hinge axis tilted about x (the door's thin direction) so
    that gravity's torque about the hinge is `torque` (N m); no ground."""
    d = world_dict("door.yaml")
    door = d["bodies"][0]
    door["linear_velocity"] = [0.0, 0.0, 0.0]
    door["angular_velocity"] = [0.0, 0.0, 0.0]
    d["ground"] = None
    lever = 0.45 * door["mass"] * G  # |r x m g| with r = (0, -0.45, 0)
    beta = float(np.arcsin(torque / lever))
    axis = np.array([np.sin(beta), 0.0, np.cos(beta)])
    d["joints"][0]["axis"] = axis.tolist()
    d["joints"][0]["friction"] = friction
    return d, axis


def hinge_angle(sim: mb_sim.Simulation, R0: np.ndarray, axis: np.ndarray) -> float:
    return float(rotation_vector(frames(sim, "door")[1] @ R0.T) @ axis)


def test_static_friction_holds_below_the_bound() -> None:
    torque = 10.0
    d, axis = tilted_door(torque)
    sim = make_sim(d)
    R0 = frames(sim, "door")[1]
    x0 = sim.body_pose("door")[0]
    row = sim.world_joints.friction_row
    for _ in range(250):
        sim.step()
        lam = sim.rows.lam[row[0]]
        # the friction impulse cancels gravity's torque impulse about the hinge
        assert abs(lam) == pytest.approx(torque * DT, rel=1e-6)
        assert abs(lam) < 20.0 * DT
    assert abs(hinge_angle(sim, R0, axis)) < 1e-8
    assert np.linalg.norm(sim.body_pose("door")[0] - x0) < 1e-8


def test_friction_at_the_bound_slides_with_the_net_torque() -> None:
    torque, bound = 30.0, 20.0
    d, axis = tilted_door(torque, bound)
    sim = make_sim(d)
    world = sim.world
    inertia = door_inertia_about(world, world.joints[0].anchor, axis)
    R0 = frames(sim, "door")[1]
    row = sim.world_joints.friction_row
    n = 50
    for _ in range(n):
        sim.step()
        assert abs(sim.rows.lam[row[0]]) == pytest.approx(bound * DT, rel=1e-12)
    omega = sim.body_velocity("door")[1] @ axis
    # gravity's torque about the hinge falls as cos(angle); over 0.1 s that is < 1e-4
    assert omega / (n * DT) == pytest.approx((torque - bound) / inertia, rel=0.01)
    assert hinge_angle(sim, R0, axis) > 1e-3
    # without friction the same door turns faster, by torque / (torque - bound)
    sim_free = make_sim(tilted_door(torque, 0.0)[0])
    sim_free.step(n)
    omega_free = sim_free.body_velocity("door")[1] @ axis
    assert omega_free / omega == pytest.approx(torque / (torque - bound), rel=1e-3)


# --------------------------------------------------------------------------------------------
# Bender et al. n.d.: the ball chain


@pytest.fixture(scope="module")
def chain_run() -> dict[str, np.ndarray]:
    """ball_chain.yaml, fully iterated, 5 s at dt = 2 ms: after every step the largest gap,
    the energy, the passes of the keeping loop and the number of contacts (the links
    touch each other from about t = 2 s)."""
    sim = make_sim(WORLDS / "ball_chain.yaml")
    assert sim.world.solver.d_max == 1e-6 and sim.world.solver.max_passes >= 50
    energy = [sim.energy()]
    worst, passes, contacts = [], [], []
    for _ in range(round(5.0 / DT)):
        sim.step()
        worst.append(gaps(sim).max())
        energy.append(sim.energy())
        passes.append(sim.world_joints.last_passes)
        contacts.append(len(sim.contacts))
    masses = sum(b.mass for b in sim.world.bodies)
    return {"worst": np.array(worst), "energy": np.array(energy), "passes": np.array(passes),
            "contacts": np.array(contacts), "d_max": np.array(sim.world.solver.d_max),
            "mass": np.array(masses), "max_passes": np.array(sim.world.solver.max_passes)}


def test_chain_gaps_within_d_max_after_every_step(chain_run: dict[str, np.ndarray]) -> None:
    worst, touching = chain_run["worst"], chain_run["contacts"] > 0
    d_max = float(chain_run["d_max"])
    assert touching.any()  # links touch too: the contact push must not open the joints
    assert np.max(worst) <= d_max * (1.0 + 1e-6)
    assert np.max(chain_run["passes"]) < chain_run["max_passes"]  # it finished every step
    assert np.max(chain_run["passes"]) > 1  # and it had to iterate


def test_chain_energy_does_not_grow(chain_run: dict[str, np.ndarray]) -> None:
    e = chain_run["energy"]
    # the scale: the potential energy the chain can turn into motion (its COM hangs 0.5 m
    # below the start at the lowest)
    scale = float(chain_run["mass"]) * G * 0.5
    assert np.max(e - e[0]) <= 0.01 * scale
    assert np.max(np.abs(e[: int(0.5 / DT)] - e[0])) < 0.01 * scale  # and is not lost early


def test_one_pass_keeps_the_chain_together() -> None:
    d = world_dict("ball_chain.yaml")
    d["solver"] = {"max_passes": 1}
    sim = make_sim(d)
    worst = 0.0
    for _ in range(round(10.0 / DT)):
        sim.step()
        assert sim.world_joints.last_passes == 1
        worst = max(worst, gaps(sim).max())
    assert worst < 1e-3
    assert worst > sim.world.solver.d_max  # one pass does leave gaps (the test can fail)


@pytest.mark.parametrize("passes", [100, 1])
def test_apart_chain_reassembles(passes: int) -> None:
    d = world_dict("ball_chain_apart.yaml")
    d["solver"] = {"max_passes": passes}
    sim = make_sim(d)
    np.testing.assert_allclose(gaps(sim), 0.05, rtol=1e-9)
    together = None
    for _ in range(round(1.0 / DT)):
        sim.step()
        if together is None and gaps(sim).max() <= 1e-4:
            together = sim.time
    assert together is not None and together <= 1.0
    assert gaps(sim).max() <= 1e-4


def two_bodies(gap: float) -> dict[str, Any]:
    """Two boxes joined by a ball joint whose points start `gap` apart along x; no gravity."""
    return {
        "gravity": [0.0, 0.0, 0.0],
        "ground": None,
        "bodies": [
            {"name": "a", "shape": "box", "size": [0.3, 0.1, 0.05], "mass": 1.5,
             "xyz": [0.0, 0.0, 1.0], "rpy": [0.3, -0.2, 0.5]},
            {"name": "b", "shape": "box", "size": [0.2, 0.08, 0.12], "mass": 0.7,
             "xyz": [0.35 + gap, 0.05, 1.02], "rpy": [-0.4, 0.1, 0.2]},
        ],
        "joints": [{"name": "j", "type": "ball", "parent": "a", "child": "b",
                    "anchor": [0.18, 0.01, 1.0], "child_anchor": [0.18 + gap, 0.01, 1.0]}],
    }


def test_one_correction_is_k_inverse_gap_over_h_and_keeps_momentum() -> None:
    sim = make_sim(two_bodies(0.01))
    joints = sim.world_joints
    joints.max_passes = 1
    jt = sim.world.joints[0]
    rng = np.random.default_rng(7)
    vb = rng.normal(size=(2, 6))
    before = vb.copy()
    h = DT
    joints.keep(vb)
    assert joints.last_corrections == 1
    # the impulse on the child from Holck 2005 eq. 2.16 and the predicted gap (Bender et al. n.d.,
    # the step)
    ends = {}
    for name, local in (("a", jt.parent_anchor_local), ("b", jt.child_anchor_local)):
        x, R = frames(sim, name)
        i = sim.scene.body_index(name)
        body = sim.world.body(name)
        v, w = before[i, :3], before[i, 3:]
        r = R @ local
        ends[name] = (r, R @ np.linalg.inv(body.inertia) @ R.T, 1.0 / body.mass,
                      x + h * v + rodrigues(w, h) @ r)
    (ra, Ia, ma, pa), (rb, Ib, mb, pb) = ends["a"], ends["b"]
    K = (ma + mb) * np.eye(3) - skew(ra) @ Ia @ skew(ra) - skew(rb) @ Ib @ skew(rb)
    impulse = -np.linalg.solve(K, pb - pa) / h
    ib, ia = sim.scene.body_index("b"), sim.scene.body_index("a")
    np.testing.assert_allclose((vb[ib, :3] - before[ib, :3]) / mb, impulse, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(vb[ib, 3:] - before[ib, 3:], Ib @ np.cross(rb, impulse),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(vb[ia, 3:] - before[ia, 3:], -Ia @ np.cross(ra, impulse),
                               rtol=1e-10, atol=1e-12)
    # a correction pair leaves the linear momentum as it was (Bender et al. n.d. test 2)
    p_before = before[ia, :3] / ma + before[ib, :3] / mb
    p_after = vb[ia, :3] / ma + vb[ib, :3] / mb
    np.testing.assert_allclose(p_after, p_before, rtol=0, atol=1e-12)
    assert np.linalg.norm(impulse) > 1.0  # a real correction, not a no-op
    # and changes the angular momentum only by the couple of the pair, (p_b - p_a) x I
    def angular(u: np.ndarray) -> np.ndarray:
        L = np.zeros(3)
        for name, i in (("a", ia), ("b", ib)):
            x, R = frames(sim, name)
            body = sim.world.body(name)
            L += body.mass * np.cross(x, u[i, :3]) + R @ body.inertia @ R.T @ u[i, 3:]
        return L

    xa, xb = frames(sim, "a")[0], frames(sim, "b")[0]
    couple = np.cross((xb + rb) - (xa + ra), impulse)
    np.testing.assert_allclose(angular(vb) - angular(before), couple, rtol=1e-9, atol=1e-12)


def test_momentum_of_a_free_jointed_pair() -> None:
    """Over whole steps (rows and keeping loop) the free pair keeps its linear momentum, and
    with coincident joint points its angular momentum too."""
    d = two_bodies(0.0)
    d["bodies"][0]["linear_velocity"] = [0.3, -0.2, 0.1]
    d["bodies"][0]["angular_velocity"] = [2.0, -1.0, 3.0]
    d["bodies"][1]["angular_velocity"] = [-4.0, 1.0, 2.0]
    sim = make_sim(d)

    def momenta() -> tuple[np.ndarray, np.ndarray]:
        p = np.zeros(3)
        L = np.zeros(3)
        for body in sim.world.bodies:
            x, R = frames(sim, body.name)
            v, w = sim.body_velocity(body.name)
            p += body.mass * v
            L += body.mass * np.cross(x, v) + R @ body.inertia @ R.T @ w
        return p, L

    sim.step()  # the first step makes the given velocities consistent with the joint
    p0, L0 = momenta()
    for _ in range(200):
        sim.step()
        assert gaps(sim).max() <= 1e-6 * (1 + 1e-6)
    p1, L1 = momenta()
    np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-12)
    # the free rotation is integrated with an implicit gyroscopic step, which changes the
    # angular momentum by O(h^2) per step; the joint impulses add nothing beyond that
    assert np.linalg.norm(L1 - L0) < 1e-3 * np.linalg.norm(L0)


# --------------------------------------------------------------------------------------------
# revolute, prismatic, fixed


def test_revolute_keeps_the_axes_parallel() -> None:
    axis = np.array([1.0, 0.3, 0.0]) / np.linalg.norm([1.0, 0.3, 0.0])
    d = {
        "ground": None,
        "bodies": [{"name": "bar", "shape": "box", "size": [0.1, 0.6, 0.05], "mass": 2.0,
                    "xyz": [0.05, 0.3, 1.0], "rpy": [0.0, 0.0, 0.1],
                    "angular_velocity": [0.0, 3.0, 1.0]}],
        "joints": [{"name": "hinge", "type": "revolute", "child": "bar",
                    "anchor": [0.0, 0.0, 1.0], "axis": axis.tolist()}],
    }
    sim = make_sim(d)
    jt = sim.world.joints[0]
    R0 = frames(sim, "bar")[1]
    turned = 0.0
    for _ in range(500):
        sim.step()
        assert axis_angle(sim, jt) < 1e-6
        assert gaps(sim)[0] <= 1e-6 * (1 + 1e-6)
        turned = max(turned, rotation_angle(frames(sim, "bar")[1] @ R0.T))
    assert turned > 0.5  # it swung
    # the motion is a rotation about the hinge axis only
    w = sim.body_velocity("bar")[1]
    assert np.linalg.norm(w - (w @ axis) * axis) < 1e-6 * max(1.0, np.linalg.norm(w))


def slider(friction: float | None = None, limits: list[float] | None = None) -> dict[str, Any]:
    """A box on a prismatic joint sloping down at 45 degrees in x-z; the joint's point is
    0.1 m beside the COM, so gravity also loads the orientation constraints."""
    axis = [1.0, 0.0, -1.0]
    joint: dict[str, Any] = {"name": "slide", "type": "prismatic", "child": "box",
                             "anchor": [0.0, 0.1, 1.0], "axis": axis}
    if friction is not None:
        joint["friction"] = friction
    if limits is not None:
        joint["limits"] = limits
    return {
        "ground": None,
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.1, 0.1], "mass": 1.0,
                    "xyz": [0.0, 0.0, 1.0], "rpy": [0.2, 0.1, 0.0]}],
        "joints": [joint],
    }


def slide_distance(sim: mb_sim.Simulation, x0: np.ndarray, axis: np.ndarray) -> float:
    return float((sim.body_pose("box")[0] - x0) @ axis)


def test_prismatic_keeps_orientation_and_slides_along_its_axis() -> None:
    sim = make_sim(slider())
    jt = sim.world.joints[0]
    axis = jt.axis
    x0 = sim.body_pose("box")[0].copy()
    R0 = frames(sim, "box")[1]
    n = 250
    for _ in range(n):
        sim.step()
        assert rotation_angle(frames(sim, "box")[1] @ R0.T) < 1e-6
        pp, pc = anchors(sim, jt)
        off = pc - pp
        assert np.linalg.norm(off - (off @ axis) * axis) <= 1e-6 * (1 + 1e-6)
    # frictionless: g . axis along the axis; semi-implicit Euler: s_n = a h^2 n (n + 1) / 2
    a = -G * axis[2]
    assert slide_distance(sim, x0, axis) == pytest.approx(a * DT**2 * n * (n + 1) / 2, rel=1e-6)


def test_prismatic_friction_brakes_with_the_bound() -> None:
    bound = 3.0
    sim = make_sim(slider(friction=bound))
    axis = sim.world.joints[0].axis
    x0 = sim.body_pose("box")[0].copy()
    row = sim.world_joints.friction_row
    n = 250
    for _ in range(n):
        sim.step()
        assert abs(sim.rows.lam[row[0]]) == pytest.approx(bound * DT, rel=1e-9)
    a = -G * axis[2] - bound / 1.0  # (m g . axis - F) / m
    assert slide_distance(sim, x0, axis) == pytest.approx(a * DT**2 * n * (n + 1) / 2, rel=1e-6)
    held = make_sim(slider(friction=10.0))  # m g . axis = 6.94 N < 10 N
    x0 = held.body_pose("box")[0].copy()
    held.step(100)
    assert abs(slide_distance(held, x0, axis)) < 1e-9


def test_fixed_joint_holds_a_body_under_gravity() -> None:
    d = {
        "ground": None,
        "bodies": [{"name": "shelf", "shape": "box", "size": [0.6, 0.3, 0.02], "mass": 3.0,
                    "xyz": [0.3, 0.0, 1.0], "rpy": [0.1, 0.0, 0.0]}],
        "joints": [{"name": "bracket", "type": "fixed", "child": "shelf",
                    "anchor": [0.0, 0.0, 1.0]}],
    }
    sim = make_sim(d)
    x0, R0 = frames(sim, "shelf")
    for _ in range(500):
        sim.step()
        x, R = frames(sim, "shelf")
        assert np.linalg.norm(x - x0) < 1e-5
        assert rotation_angle(R @ R0.T) < 1e-5
    # and not because nothing happens: without the joint it falls 1.2 m in 0.5 s
    d["joints"] = []
    free = make_sim(d)
    free.step(250)
    assert x0[2] - free.body_pose("shelf")[0][2] > 1.0


def test_fixed_joint_holds_a_spinning_pair_together() -> None:
    d = two_bodies(0.0)
    d["joints"][0]["type"] = "fixed"
    d["bodies"][0]["angular_velocity"] = [1.0, -2.0, 3.0]
    d["bodies"][1]["angular_velocity"] = [1.0, -2.0, 3.0]
    sim = make_sim(d)

    def relative() -> tuple[np.ndarray, np.ndarray]:
        xa, Ra = frames(sim, "a")
        xb, Rb = frames(sim, "b")
        return Ra.T @ (xb - xa), Ra.T @ Rb

    r0, Q0 = relative()
    for _ in range(500):
        sim.step()
        r, Q = relative()
        assert np.linalg.norm(r - r0) < 1e-5
        assert rotation_angle(Q @ Q0.T) < 1e-5
    assert rotation_angle(frames(sim, "a")[1] @ sim.world.body("a").rotation.T) > 1.0


# --------------------------------------------------------------------------------------------
# limits and ball-joint friction


def test_revolute_limit_stops_the_door() -> None:
    d = world_dict("door.yaml")
    d["joints"][0].pop("friction")
    d["joints"][0]["limits"] = [-0.1, 0.2]
    sim = make_sim(d)
    jt = sim.world.joints[0]
    R0 = frames(sim, "door")[1]
    angles = []
    for _ in range(250):
        sim.step()
        angles.append(hinge_angle(sim, R0, jt.axis))
    angles_arr = np.array(angles)
    assert np.max(angles_arr) <= 0.2 + 1e-6
    assert angles_arr[-1] == pytest.approx(0.2, abs=1e-6)  # reached it, no bounce (e = 0)
    assert sim.world_joints.coordinates()[0] == pytest.approx(angles[-1], abs=1e-9)
    assert abs(sim.body_velocity("door")[1] @ jt.axis) < 1e-6


def test_prismatic_limit_stops_the_slider() -> None:
    sim = make_sim(slider(limits=[-0.05, 0.1]))
    axis = sim.world.joints[0].axis
    x0 = sim.body_pose("box")[0].copy()
    s = []
    for _ in range(250):
        sim.step()
        s.append(slide_distance(sim, x0, axis))
    assert max(s) <= 0.1 + 1e-6
    assert s[-1] == pytest.approx(0.1, abs=1e-6)
    # the joint's own coordinate: the child's point moves with the COM (orientation is held)
    assert sim.world_joints.coordinates()[0] == pytest.approx(s[-1], abs=1e-9)


def test_ball_friction_impulse_stays_in_its_ball() -> None:
    """A cube held at its centre by a ball joint with friction F, spinning about a skew axis:
    the friction impulse vector stays in |p| <= F h, sits on the sphere while it slides, and
    (the cube's inertia being isotropic) brakes the spin along its own axis to rest after
    I |w0| / F."""
    bound = 0.05
    w0 = np.array([1.0, -2.0, 3.0])
    d = {
        "ground": None,
        "bodies": [{"name": "cube", "shape": "box", "size": [0.2, 0.2, 0.2], "mass": 2.0,
                    "xyz": [0.0, 0.0, 1.0], "rpy": [0.3, 0.2, 0.1],
                    "angular_velocity": w0.tolist()}],
        "joints": [{"name": "ball", "type": "ball", "child": "cube", "anchor": [0.0, 0.0, 1.0],
                    "friction": bound}],
    }
    sim = make_sim(d)
    inertia = 2.0 * (0.04 + 0.04) / 12.0
    stop = inertia * np.linalg.norm(w0) / bound
    row = sim.world_joints.friction_row
    n = round(1.2 * stop / DT)
    sliding_steps = 0
    for _ in range(n):
        w_before = sim.body_velocity("cube")[1]
        sim.step()
        p = sim.rows.lam[row[0] : row[0] + 3]
        assert np.linalg.norm(p) <= bound * DT + 1e-12
        if np.linalg.norm(w_before) > 0.1:
            sliding_steps += 1
            assert np.linalg.norm(p) == pytest.approx(bound * DT, rel=1e-9)
            np.testing.assert_allclose(p / np.linalg.norm(p), -w0 / np.linalg.norm(w0),
                                       atol=1e-9)
    assert sliding_steps > 100
    assert np.linalg.norm(sim.body_velocity("cube")[1]) < 1e-9


# --------------------------------------------------------------------------------------------
# state


def test_save_and_restore_give_the_same_bits() -> None:
    sim = make_sim(WORLDS / "ball_chain_apart.yaml")
    sim.step(20)
    saved = sim.save_state()
    sim.step(30)
    first = (sim.state.body_pos.copy(), sim.state.body_quat.copy(), sim.state.body_vel.copy())
    sim.restore_state(saved)
    sim.step(30)
    for a, b in zip(first, (sim.state.body_pos, sim.state.body_quat, sim.state.body_vel)):
        assert np.array_equal(a, b)
