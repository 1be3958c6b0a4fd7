"""Places robots move in (issue 28): shapes on static triangle meshes and heightfields against
closed forms, nothing falling through, concave objects made of convex pieces, and the
quadruped standing on the shipped rough terrain and stairs.

- A ball in a spherical bowl mesh (test/assets/bowl.obj, radius R = 0.5 m) rests at its
  lowest point, and released beside it rolls about it with the period of a ball rolling
  without slipping in a sphere, T = 2 pi sqrt(7 (R - r) / (5 g)) (1 %); with a convex hull
  it could only sit on the rim (z = 0.25 m + r), never below.
- A box on a tilted flat mesh of 2400 triangles slides with a = g (sin th - mu cos th) or
  sticks (mu >= tan th), as on a plane: within 2 % (measured: exact to 4 digits), with no
  lateral wander, no rocking and a steady normal force while its corners cross the
  triangles' edges; the same on a heightfield ramp.
- A ball released on the side of a heightfield basin rolls about its lowest point.
- Spheres, boxes, capsules, cylinders and hulls thrown at 1 m/s at a mesh and a heightfield
  (straight down on edges and corners, and slanted) at dt = 1 ms never sink 2 mm into it.
- A decomposed mug (CoACD pieces) shaken by a prismatic joint keeps a ball inside; a free
  decomposed mug sliding on the ground carries its ball; boxes stacked in a tray mesh rest.
- urdf/quadruped.urdf stands on config/worlds/terrain.yaml and stairs.yaml.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.control import StandSway, pd_effort, roll_joints, standing_pose
from mb_sim.model import decompose
from mb_sim.model.triangles import grid

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "test" / "assets"
WORLDS = ROOT / "config" / "worlds"
G = 9.81
DT = 0.001


def simulation(bodies: list[dict], **world: object) -> mb_sim.Simulation:
    return mb_sim.Simulation(world=mb_sim.load_world({"bodies": bodies, **world}), dt=DT)


def write_obj(path: Path, verts: np.ndarray, tris: np.ndarray) -> Path:
    with open(path, "w") as f:
        f.writelines(f"v {x:.17g} {y:.17g} {z:.17g}\n" for x, y, z in verts)
        f.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in tris)
    return path


# --- the bowl ------------------------------------------------------------------------------

BOWL_R, BALL_R = 0.5, 0.05


def bowl_sim(xyz: list[float]) -> mb_sim.Simulation:
    return simulation([
        {"name": "bowl", "shape": "mesh", "mesh": str(ASSETS / "bowl.obj"), "static": True,
         "friction": 0.8},
        {"name": "ball", "shape": "sphere", "size": [BALL_R], "mass": 0.2, "xyz": xyz,
         "friction": 0.8}])


def test_ball_rests_at_the_bottom_of_a_bowl_mesh() -> None:
    """Dropped 1 cm onto the lowest point (the apex of the bowl's central fan of 40 facets):
    over the second second it stays within 20 um of it."""
    sim = bowl_sim([0.0, 0.0, BALL_R + 0.01])
    sim.step(1000)
    path = []
    for _ in range(1000):
        sim.step()
        path.append(sim.body_pose("ball")[0])
    off = np.abs(np.array(path) - [0.0, 0.0, BALL_R]).max()
    speed = np.linalg.norm(sim.body_velocity("ball")[0])
    print(f"\nbowl: ball within {1e6 * off:.1f} um of the lowest point over 1 s, speed "
          f"{speed:.1e} m/s")
    assert off < 2e-5  # the lowest point, not the rim


def test_ball_rolls_about_the_bottom_of_a_bowl_mesh_with_the_rolling_period() -> None:
    """Released 0.08 rad from the bottom (a small swing: T barely depends on the amplitude),
    the ball's x crosses zero with the period of rolling without slipping in a sphere of
    radius R - r about the bowl's centre (R = 0.5 m, the bowl's facets 1.5 degrees wide)."""
    phi = 0.08
    sim = bowl_sim([(BOWL_R - BALL_R) * math.sin(phi), 0.0,
                    BOWL_R - (BOWL_R - BALL_R) * math.cos(phi) + 1e-4])
    xs, zs = [], []
    for _ in range(6000):
        sim.step()
        pos, _ = sim.body_pose("ball")
        xs.append(pos[0])
        zs.append(pos[2])
    xs = np.array(xs)
    t = DT * np.arange(1, len(xs) + 1)
    up = np.flatnonzero((xs[:-1] < 0) & (xs[1:] >= 0))  # upward zero crossings, interpolated
    crossings = t[up] + DT * (-xs[up] / (xs[up + 1] - xs[up]))
    period = float(np.mean(np.diff(crossings)))
    expected = 2 * math.pi * math.sqrt(7 * (BOWL_R - BALL_R) / (5 * G))
    print(f"\nbowl: rolling period {period:.4f} s, closed form {expected:.4f} s "
          f"({100 * (period / expected - 1):+.2f} %), {len(crossings)} crossings, highest "
          f"z after release {max(zs):.4f} m, lowest {min(zs):.5f} m")
    assert len(crossings) >= 3
    assert period == pytest.approx(expected, rel=0.01)
    assert max(zs) < zs[0] + 1e-4  # never above where it started: far below the rim
    assert min(zs) == pytest.approx(BALL_R, abs=3e-4)  # it passes over the lowest point


# --- slopes --------------------------------------------------------------------------------


def slide(plate: dict, theta: float, mu: float, steps: int = 1000) -> dict[str, float]:
    """A 0.1 m cube of 1 kg on the slope `plate` (down along -x after rotation by theta about
    y): its acceleration down the slope (a quadratic fit after 0.1 s), its sideways wander,
    its rotation, and the mean and spread of the normal force."""
    s = 0.1
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    down = np.array([-math.cos(theta), 0.0, -math.sin(theta)])
    start = n * (s / 2 + 2e-4) - 0.6 * down
    sim = simulation([plate, {"name": "box", "shape": "box", "size": [s, s, s], "mass": 1.0,
                              "xyz": start.tolist(), "rpy": [0, -theta, 0],
                              "friction": mu}])
    _, q0 = sim.body_pose("box")
    along, side, force, turn = [], [], [], []
    for _ in range(steps):
        sim.step()
        pos, quat = sim.body_pose("box")
        along.append(float(pos @ down))
        side.append(float(pos[1]))
        c = sim.contacts
        force.append(float(np.sum(np.einsum("ij,ij->i", c.impulses, c.normals))) / DT)
        turn.append(2 * math.acos(min(1.0, abs(float(np.dot(quat, q0))))))
    t = DT * np.arange(1, steps + 1)
    late = t > 0.1
    a = 2 * np.polyfit(t[late], np.array(along)[late], 2)[0]
    f = np.array(force)[late]
    return {"a": a, "moved": along[-1] - along[0], "wander": float(np.ptp(side)),
            "turn": max(turn), "force": float(f.mean()), "spread": float(f.std())}


def tilted_plate(path: Path, theta: float, mu: float) -> dict:
    v, t = grid(np.zeros((21, 61)), (3.0, 1.0, 0.0))  # 2400 triangles of 5 x 5 cm
    return {"name": "plate", "shape": "mesh", "mesh": str(write_obj(path / "plate.obj", v, t)),
            "static": True, "rpy": [0, -theta, 0], "friction": mu}


@pytest.mark.parametrize("deg, mu", [(30.0, 0.3), (20.0, 0.2), (10.0, 0.5)])
def test_box_on_a_tilted_mesh_slides_as_on_a_plane(tmp_path: Path, deg: float,
                                                    mu: float) -> None:
    theta = math.radians(deg)
    r = slide(tilted_plate(tmp_path, theta, mu), theta, mu)
    expected = max(0.0, G * (math.sin(theta) - mu * math.cos(theta)))
    print(f"\nmesh slope {deg:g} deg, mu {mu}: a = {r['a']:.5f} m/s^2 (closed form "
          f"{expected:.5f}), moved {r['moved']:.5f} m, sideways {1e6 * r['wander']:.3f} um, "
          f"rotation {r['turn']:.2e} rad, normal force {r['force']:.4f} N (m g cos th "
          f"{G * math.cos(theta):.4f}) +- {r['spread']:.2e}")
    if expected > 0:
        assert r["a"] == pytest.approx(expected, rel=0.02)
    else:
        assert abs(r["moved"]) < 1e-4  # sticks
    assert r["wander"] < 1e-6 and r["turn"] < 1e-4  # no snagging at the triangles' edges
    assert r["force"] == pytest.approx(G * math.cos(theta), rel=0.01)
    assert r["spread"] < 0.01 * G * math.cos(theta)  # no jitter


@pytest.mark.parametrize("deg, mu", [(20.0, 0.2), (10.0, 0.5)])
def test_box_on_a_heightfield_ramp_slides_as_on_a_plane(deg: float, mu: float) -> None:
    """A ramp heightfield rising towards +x (columns 0..1 from the -x edge): the slope is
    max height / x extent = tan th."""
    theta = math.radians(deg)
    cols = np.linspace(0.0, 1.0, 41)
    ramp = {"name": "ramp", "shape": "heightfield", "heights": np.tile(cols, (11, 1)).tolist(),
            "size": [2.0, 1.0, 2.0 * math.tan(theta)], "xyz": [0.0, 0.0, -math.tan(theta)],
            "friction": mu}
    r = slide(ramp, theta, mu)
    expected = max(0.0, G * (math.sin(theta) - mu * math.cos(theta)))
    print(f"\nheightfield slope {deg:g} deg, mu {mu}: a = {r['a']:.5f} (closed form "
          f"{expected:.5f}), moved {r['moved']:.5f} m, sideways {1e6 * r['wander']:.3f} um, "
          f"normal force {r['force']:.4f} +- {r['spread']:.2e} N")
    if expected > 0:
        assert r["a"] == pytest.approx(expected, rel=0.02)
    else:
        assert abs(r["moved"]) < 1e-4
    assert r["wander"] < 1e-6 and r["turn"] < 1e-4
    assert r["spread"] < 0.01 * G * math.cos(theta)


def test_ball_rolls_about_the_lowest_point_of_a_heightfield_basin() -> None:
    """A basin z = 0.2 ((x - 0.3)^2 + (y + 0.2)^2) / 1.2^2 (lowest at (0.3, -0.2)): a ball
    released 0.5 m from its lowest point rolls down, passes it and swings about it."""
    n = 61
    x = np.linspace(-1.5, 1.5, n)
    xx, yy = np.meshgrid(x, x[::-1])
    heights = np.minimum(((xx - 0.3) ** 2 + (yy + 0.2) ** 2) / 1.2 ** 2, 1.0)
    sim = simulation([
        {"name": "basin", "shape": "heightfield", "heights": heights.tolist(),
         "size": [3.0, 3.0, 0.2]},
        {"name": "ball", "shape": "sphere", "size": [0.05], "mass": 0.2,
         "xyz": [-0.2, -0.2, 0.2 * 0.25 + 0.06]}])
    path = []
    for _ in range(6000):
        sim.step()
        path.append(sim.body_pose("ball")[0])
    path = np.array(path)
    lowest = np.array([0.3, -0.2])
    nearest = np.linalg.norm(path[:, :2] - lowest, axis=1).min()
    x = path[1000:, 0]  # after rolling down: its swing about the lowest point
    middle = 0.5 * (x.max() + x.min())
    print(f"\nbasin: nearest {1e3 * nearest:.2f} mm from the lowest point, swinging in x "
          f"from {x.min():.4f} to {x.max():.4f} m (middle {middle:.4f}, lowest point at 0.3), y "
          f"within {1e3 * np.abs(path[:, 1] + 0.2).max():.3f} mm of -0.2, lowest ball z "
          f"{path[:, 2].min():.4f} m")
    assert nearest < 0.01
    assert middle == pytest.approx(0.3, abs=0.02)
    assert path[:, 2].min() > 0.05 - 1e-3  # on the surface, never through it


# --- nothing falls through -----------------------------------------------------------------

SHAPES = {
    "sphere": {"shape": "sphere", "size": [0.02]},
    "box": {"shape": "box", "size": [0.04, 0.04, 0.04]},
    "capsule": {"shape": "capsule", "size": [0.015, 0.04]},
    "cylinder": {"shape": "cylinder", "size": [0.02, 0.04]},
    "hull": {"shape": "mesh", "mesh": str(ASSETS / "pyramid.obj"), "scale": 0.04},
}


@pytest.mark.parametrize("surface", ["mesh", "heightfield"])
def test_nothing_falls_through_at_one_metre_per_second(tmp_path: Path, surface: str) -> None:
    """Shapes dropped at 1 m/s onto a bumpy surface of 4 cm triangles, straight down on a
    triangle's corner, on an edge and in a face, and slanted at 45 degrees: their lowest
    point never goes 2 mm below the surface under it."""
    rng = np.random.default_rng(5)
    heights = rng.uniform(0.0, 1.0, (51, 51))
    size = (2.0, 2.0, 0.02)
    if surface == "mesh":
        v, t = grid(heights, size)
        ground = {"name": "ground", "shape": "mesh", "static": True,
                  "mesh": str(write_obj(tmp_path / "bumps.obj", v, t))}
    else:
        ground = {"name": "ground", "shape": "heightfield", "heights": heights.tolist(),
                  "size": list(size)}
    spots = [(0.0, 0.0), (0.02, 0.0), (0.013, 0.007)]  # a corner, an edge, a face
    bodies = [ground]
    for k, (name, shape) in enumerate(SHAPES.items()):
        for i, (sx, sy) in enumerate(spots + [(0.1, 0.1)]):
            slant = i == 3
            bodies.append({**shape, "name": f"{name}{i}", "mass": 0.05,
                           "xyz": [-0.4 + 0.2 * (k % 5) + sx, -0.3 + 0.2 * (i % 4) + sy, 0.06],
                           "rpy": [0.3 * i, 0.2 * k, 0.0],
                           "linear_velocity": [0.7, 0.0, -0.7] if slant else [0, 0, -1.0]})
    sim = simulation(bodies)
    verts, _ = grid(heights, size)
    names = [b["name"] for b in bodies[1:]]
    worst = 0.0
    for _ in range(300):
        sim.step()
        for c_point, depth in zip(sim.contacts.points, sim.contacts.depths):
            worst = max(worst, float(depth))
    for name in names:
        assert sim.body_pose(name)[0][2] > verts[:, 2].min() - 0.002, name
    print(f"\n{surface}: deepest contact of {len(names)} shapes landing at 1 m/s: "
          f"{1e3 * worst:.3f} mm")
    assert worst < 0.002


# --- concave objects as convex pieces ------------------------------------------------------

needs_coacd = pytest.mark.skipif(not decompose.available(), reason="CoACD (mb_sim[decompose]) "
                                 "is not installed")

SHAKER = """<robot name="shaker">
  <link name="base"/>
  <joint name="slide" type="prismatic">
    <parent link="base"/><child link="cup"/><axis xyz="1 0 0"/>
    <limit lower="-0.2" upper="0.2" effort="200" velocity="2"/>
  </joint>
  <link name="cup">
    <inertial><origin xyz="0 0 0.05"/><mass value="0.3"/>
      <inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><mesh filename="{mug}"/></geometry></collision>
  </link>
</robot>"""


@needs_coacd
def test_decomposed_mug_keeps_a_ball_it_is_shaken_with(tmp_path: Path) -> None:
    """The mug (its convex hull would be a solid cylinder) on a prismatic joint, moved to and
    fro 3 cm at 1.5 Hz by its position servo: the ball (r 2 cm) dropped in stays inside."""
    urdf = tmp_path / "shaker.urdf"
    urdf.write_text(SHAKER.format(mug=ASSETS / "mug.stl"))
    world = mb_sim.load_world({
        "ground": True,
        "robots": [{"name": "shaker", "urdf": str(urdf), "xyz": [0, 0, 0.0], "decompose": True}],
        "bodies": [{"name": "ball", "shape": "sphere", "size": [0.02], "mass": 0.05,
                    "xyz": [0.0, 0.0, 0.06], "friction": 0.5}]})
    sim = mb_sim.Simulation(world=world, dt=DT)
    sim.set_interfaces({"slide": "position"})
    pieces = sum(1 for e in sim.scene.geom_entity if e == "shaker")
    inside, lowest = [], []
    for k in range(4000):
        sim.set_position_target([0.03 * math.sin(2 * math.pi * 1.5 * sim.time)])
        sim.step()
        pos, _ = sim.body_pose("ball")
        cup = sim.q[0]
        inside.append(math.hypot(pos[0] - cup, pos[1]))
        lowest.append(pos[2])
    print(f"\nmug of {pieces} convex pieces: ball at most {1e3 * max(inside):.1f} mm from its "
          f"axis (inner radius 50 mm), z {min(lowest):.4f}..{max(lowest):.4f} m")
    assert pieces > 4
    assert max(inside) < 0.05 - 0.02 + 1e-3  # within the inner wall
    assert 0.03 - 1e-3 < min(lowest) and max(lowest) < 0.12  # on the floor, never out


@needs_coacd
def test_free_decomposed_mug_carries_its_ball() -> None:
    sim = simulation([
        {"name": "mug", "shape": "mesh", "mesh": str(ASSETS / "mug.stl"), "decompose": True,
         "mass": 0.3, "xyz": [0, 0, 0.0005], "linear_velocity": [0.5, 0, 0], "friction": 0.3},
        {"name": "ball", "shape": "sphere", "size": [0.02], "mass": 0.05,
         "xyz": [0.0, 0.0, 0.035], "linear_velocity": [0.5, 0, 0]}], ground=True)
    for _ in range(1500):
        sim.step()
    mug, _ = sim.body_pose("mug")
    ball, _ = sim.body_pose("ball")
    print(f"\nsliding mug moved {mug[0]:.3f} m, ball {ball[0]:.3f} m, "
          f"{1e3 * math.hypot(*(ball - mug)[:2]):.1f} mm from the mug's axis")
    assert mug[0] > 0.02  # it slid
    assert math.hypot(*(ball - mug)[:2]) < 0.031 and ball[2] < 0.12


def test_boxes_stacked_in_a_tray_rest() -> None:
    """Three 6 cm boxes stacked on the floor of a tray mesh (floor 1 cm thick, walls 6 cm):
    after landing they stay put (1e-4 m over 2 s)."""
    boxes = [{"name": f"box{i}", "shape": "box", "size": [0.06, 0.06, 0.06], "mass": 0.2,
              "xyz": [0.005 * (i - 1), 0.0, 0.01 + 0.03 + 0.061 * i + 1e-3]} for i in range(3)]
    sim = simulation([{"name": "tray", "shape": "mesh", "mesh": str(ASSETS / "tray.stl"),
                       "static": True}, *boxes])
    sim.step(1000)
    before = [sim.body_pose(b["name"])[0] for b in boxes]
    sim.step(2000)
    drift = max(np.linalg.norm(sim.body_pose(b["name"])[0] - p) for b, p in zip(boxes, before))
    print(f"\ntray: stack drift over 2 s {1e6 * drift:.2f} um; heights "
          f"{[round(float(p[2]), 5) for p in before]}")
    assert drift < 1e-4
    for i, p in enumerate(before):  # stacked: each 6 cm above the one below
        assert p[2] == pytest.approx(0.01 + 0.03 + 0.06 * i, abs=1.5e-3)


# --- the quadruped -------------------------------------------------------------------------

FEET = ("fl_foot", "fr_foot", "rl_foot", "rr_foot")


@pytest.mark.parametrize("world", ["terrain", "stairs"])
def test_quadruped_stands_on_terrain(world: str) -> None:
    """Dropped from a few centimetres in its standing pose under the demo's joint PD: 6 s
    later the trunk holds its height (within 1 mm over the last 2 s), the feet do not slip
    (1 mm), every foot touches the terrain and no link but a foot does."""
    model = mb_sim.load_urdf(ROOT / "urdf" / "quadruped.urdf", floating_base=True)
    sim = mb_sim.Simulation(model, world=mb_sim.load_world(WORLDS / f"{world}.yaml"), dt=DT)
    names = model.joint_names
    law = StandSway(standing_pose(names), roll_joints(names), amplitude=0.0)
    heights, feet = [], {}
    for k in range(6000):
        q_ref, qd_ref = law.reference(sim.time)
        sim.set_effort(pd_effort(sim.joint_positions, sim.joint_velocities, q_ref, qd_ref, 80.0,
                                 1.0, model.effort_limit))
        sim.step()
        heights.append(sim.base_pose()[0][2])
        if k in (3999, 5999):
            feet[k] = np.array([sim.link_pose(f)[0] for f in FEET])
    c = sim.contacts
    touching = {a for a, b in zip(c.body_a, c.body_b) if b in ("terrain", "stairs")}
    last = np.array(heights[4000:])
    slip = np.linalg.norm(feet[5999] - feet[3999], axis=1)
    print(f"\nquadruped on {world}: trunk {last.mean():.4f} m (+- {1e3 * np.ptp(last):.3f} mm "
          f"over the last 2 s), feet slip {np.round(1e3 * slip, 4)} mm, feet z "
          f"{np.round(feet[5999][:, 2], 4)}, touching {sorted(touching)}")
    assert np.isfinite(sim.q).all()
    assert np.ptp(last) < 1e-3 and np.all(slip < 1e-3)
    assert touching == set(FEET)
    assert 0.2 < last.mean() < 0.5


# --- bad inputs ----------------------------------------------------------------------------


def heightfield_world(heights: object, size: object = (1.0, 1.0, 0.1)) -> dict:
    return {"bodies": [{"name": "hills", "shape": "heightfield", "heights": heights,
                        "size": list(size)}]}


def test_bad_heightfields_name_the_file_key_and_value(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    nan = np.full((4, 5), 0.5)
    nan[2, 3] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really a picture")
    np.save(tmp_path / "cube.npy", np.zeros((3, 3, 3)))
    cases = [
        ("heights: nan.npy", "bodies[0].heights", "row 2, column 3 is nan", "nan.npy"),
        ("heights: broken.png", "bodies[0].heights", "cannot read the PNG", "broken.png"),
        ("heights: cube.npy", "bodies[0].heights", "2D grid", "cube.npy"),
        ("heights: missing.png", "bodies[0].heights", "missing.png", "missing.png"),
        ("heights: [[0, 0.5, 1], [1, 0]]", "bodies[0].heights", "same length",
         "[[0, 0.5, 1], [1, 0]]"),
        ("heights: [[0, 0.5], [1]]", "bodies[0].heights[1]", "must be a row of heights",
         "[1]"),
        ("heights: [[0, 0.5], [1, 2]]", "bodies[0].heights[1][1]", "must be >= 0 and <= 1",
         "2"),
        ("heights: [[0, 0.5], [1, 0]]\n    size: [1, 1]", "bodies[0].size",
         "must have 3 elements", "[1, 1]"),
        ("heights: [[0, 0.5], [1, 0]]\n    size: [1, 1, 0.1]\n    static: false",
         "bodies[0].static", "always static", "False"),
    ]
    for keys, path, why, value in cases:
        body = keys if "size" in keys else keys + "\n    size: [1, 1, 0.1]"
        world.write_text(f"bodies:\n  - name: hills\n    shape: heightfield\n    {body}\n")
        with pytest.raises(mb_sim.WorldError) as err:
            mb_sim.load_world(world)
        text = str(err.value)
        assert str(world) in text and f"{path}:" in text and why in text and value in text, text


def test_decompose_without_coacd_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    monkeypatch.setattr(decompose, "available", lambda: False)
    world = tmp_path / "world.yaml"
    world.write_text(f"bodies:\n  - {{name: mug, shape: mesh, mesh: {ASSETS / 'mug.stl'}, "
                     "decompose: true, mass: 0.3}\n")
    with pytest.raises(mb_sim.WorldError, match=r"bodies\[0\]\.decompose: .*mb_sim\[decompose\]"
                       r".*\(got True\)"):
        mb_sim.load_world(world)
    world.write_text(f"robots:\n  - {{name: cup, urdf: {ASSETS / 'floating_box.urdf'}, "
                     "decompose: true}\n")
    with pytest.raises(mb_sim.WorldError, match=r"robots\[0\]\.decompose: .*pip install coacd"):
        mb_sim.load_world(world)


def test_shapes_that_take_no_triangles_refuse_the_mesh_keys() -> None:
    with pytest.raises(mb_sim.WorldError, match=r"bodies\[0\]\.decompose: is only used by shape "
                       "mesh, not box"):
        mb_sim.load_world({"bodies": [{"name": "b", "shape": "box", "size": [1, 1, 1],
                                       "decompose": True}]})
    with pytest.raises(mb_sim.WorldError, match=r"bodies\[0\]\.mass: is not used by a "
                       "heightfield"):
        mb_sim.load_world(heightfield_world([[0, 1], [1, 0]]) | {"bodies": [{
            "name": "h", "shape": "heightfield", "heights": [[0, 1], [1, 0]],
            "size": [1, 1, 1], "mass": 2.0}]})
