"""Sensors that see (mb_sim.sensing): lidars, depth and colour cameras and IMUs against the
geometry they look at, in closed form; their noise; their declarations refused when bad."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.errors import WorldError
from mb_sim.model.sensors import Noise, SensorSpec
from mb_sim.rotations import matrix_from_quat

LO, HI = np.array([-2.0, -1.5, 0.0]), np.array([3.0, 1.0, 2.5])
"""The room's inside: x, y, z from LO to HI (m)."""
WALL = 0.2


def _room() -> list[dict]:
    """Six static boxes closing the room LO..HI (walls WALL thick)."""
    c, e = (LO + HI) / 2, HI - LO
    out = []
    for k, name in enumerate(("x", "y", "z")):
        for side, at in (("lo", LO[k] - WALL / 2), ("hi", HI[k] + WALL / 2)):
            size = e + 2 * WALL
            size[k] = WALL
            xyz = c.copy()
            xyz[k] = at
            out.append({"name": f"wall_{name}_{side}", "shape": "box", "size": size.tolist(),
                        "xyz": xyz.tolist(), "static": True})
    return out


def _turntable(folder: Path) -> Path:
    """A robot whose base (no shape) turns a head (a small sphere) about z and tilts it."""
    path = folder / "turntable.urdf"
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" '
                'ixy="0" ixz="0" iyz="0"/></inertial>')
    path.write_text(
        f'<robot name="turntable"><link name="base"/><link name="yaw">{inertial}</link>'
        f'<link name="head">{inertial}<collision><geometry><sphere radius="0.05"/></geometry>'
        '</collision></link>'
        '<joint name="turn" type="continuous"><parent link="base"/><child link="yaw"/>'
        '<origin xyz="0 0 1.2"/><axis xyz="0 0 1"/></joint>'
        '<joint name="tilt" type="revolute"><parent link="yaw"/><child link="head"/>'
        '<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>'
        '</robot>')
    return path


def _expected(p: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Distance from p inside the room along each unit row of d to its walls: the nearest
    slab exit, min over axes of ((HI or LO) - p) / d."""
    with np.errstate(divide="ignore", invalid="ignore"):
        exits = np.where(d > 0, (HI - p) / d, np.where(d < 0, (LO - p) / d, np.inf))
    return exits.min(axis=1)


def _lidar_dirs(spec: SensorSpec) -> np.ndarray:
    """The lidar's ray directions in its frame, from its angles (Gazebo's spacing)."""
    a = spec.min_angle + (spec.max_angle - spec.min_angle) * np.arange(spec.samples) / (
        spec.samples - 1)
    b = np.linspace(spec.min_vertical_angle, spec.max_vertical_angle, spec.vertical_samples)
    cb = np.cos(b)[:, None]
    return np.stack([cb * np.cos(a), cb * np.sin(a), np.sin(b)[:, None] + 0 * a],
                    axis=-1).reshape(-1, 3)


def test_a_lidar_reads_the_room_in_closed_form_also_on_a_moving_link(tmp_path) -> None:
    """2-D and 3-D lidars (no noise) on a link that turns and tilts read, ray by ray, the
    distance to the walls the room's geometry gives (within 1e-9 m)."""
    world = mb_sim.load_world({"ground": None, "gravity": [0, 0, 0], "bodies": _room(),
                               "robots": [{"name": "tt", "urdf": str(_turntable(tmp_path)),
                                           "xyz": [0.4, -0.3, 0.0]}]})
    sim = mb_sim.Simulation(world=world)
    flat = SensorSpec("flat", "lidar", link="head", xyz=(0.1, 0.0, 0.05), samples=361,
                      min_range=0.01, max_range=20.0)
    solid = SensorSpec("solid", "lidar", link="tt/head", rpy=(0.0, 0.0, 0.3), samples=90,
                       vertical_samples=16, min_vertical_angle=-0.6, max_vertical_angle=0.7,
                       min_range=0.01, max_range=20.0)
    for spec in (flat, solid):
        sim.add_sensor(spec)
    robot = sim.robot("tt")
    robot.set_interfaces({"turn": "velocity", "tilt": "position"})
    robot.set_velocity_target({"turn": 1.0})
    robot.set_position_target({"tilt": 0.4})
    for _ in range(4):
        sim.step(250)
        for spec in (flat, solid):
            ranges = sim.read_sensor(spec.name).reshape(-1)
            xyz, quat = sim.sensor_pose(spec.name)
            d = _lidar_dirs(spec) @ matrix_from_quat(quat).T
            np.testing.assert_allclose(ranges, _expected(xyz, d), rtol=0, atol=1e-9)
    assert abs(robot.q[0]) > 0.5  # it turned


def test_ranges_beyond_the_limits_are_infinite_as_rep_117_says() -> None:
    world = mb_sim.load_world({"ground": None, "bodies": _room()})
    sim = mb_sim.Simulation(world=world)
    sim.add_sensor(SensorSpec("short", "lidar", xyz=(0.0, 0.0, 1.0), samples=4,
                              min_angle=0.0, max_angle=1.5 * math.pi, min_range=1.2,
                              max_range=2.5))
    r = sim.read_sensor("short")  # walls at +x 3, +y 1, -x 2, -y 1.5 m
    assert r[0] == np.inf and r[1] == -np.inf and r[2] == pytest.approx(2.0, abs=1e-12)
    assert r[3] == pytest.approx(1.5, abs=1e-12)
    empty = mb_sim.Simulation(world=mb_sim.load_world({"ground": None}))
    empty.add_sensor(SensorSpec("open", "lidar", samples=3))
    assert np.all(empty.read_sensor("open") == np.inf)  # nothing to see


def test_a_depth_camera_reads_the_pinhole_depth_of_a_wall() -> None:
    """A camera in the room, turned and pitched: pixel (u, v) looks along the optical
    frame's r = ((u + 1/2 - w/2) / f, (v + 1/2 - h/2) / f, 1), and its depth along the optical
    axis is the s of the first wall p + s r meets (r's optical-axis component is 1)."""
    world = mb_sim.load_world({"ground": None, "bodies": _room()})
    sim = mb_sim.Simulation(world=world)
    yaw = math.radians(20.0)
    spec = SensorSpec("depth", "depth_camera", xyz=(0.5, -0.2, 1.3), rpy=(0.0, 0.1, yaw),
                      width=64, height=48, hfov=1.0, near=0.1, far=20.0)
    sim.add_sensor(spec)
    image = sim.read_sensor("depth")
    assert image.shape == (48, 64) and image.dtype == np.float32
    f = 32.0 / math.tan(0.5)
    u = (np.arange(64) + 0.5 - 32.0) / f
    v = (np.arange(48) + 0.5 - 24.0) / f
    # optical (x right, y down, z forward) -> sensor (x forward, y left, z up) -> world
    rays = np.stack([np.ones((48, 64)), -u[None, :] + 0 * v[:, None],
                     -v[:, None] + 0 * u[None, :]], axis=-1)
    xyz, quat = sim.sensor_pose("depth")
    world_rays = rays.reshape(-1, 3) @ matrix_from_quat(quat).T
    expected = _expected(xyz, world_rays).reshape(48, 64)
    np.testing.assert_allclose(image, expected, rtol=2e-7)  # float32


def test_a_red_box_fills_the_pixels_the_pinhole_model_predicts() -> None:
    """A red cube 2 m ahead of a colour camera: the pixels whose centres' rays meet its
    front face (|y|, |z| <= s at x = 2 - s) are red, the others not."""
    s = 0.3
    world = mb_sim.load_world({"ground": None, "bodies": [
        {"name": "red", "shape": "box", "size": [2 * s] * 3, "xyz": [2.0, 0.0, 0.0],
         "static": True, "color": [1.0, 0.0, 0.0]}]})
    sim = mb_sim.Simulation(world=world)
    sim.add_sensor(SensorSpec("eye", "camera", width=80, height=60, hfov=0.8))
    image = sim.read_sensor("eye").astype(int)
    assert image.shape == (60, 80, 3)
    f = 40.0 / math.tan(0.4)
    y = (np.arange(80) + 0.5 - 40.0) / f * (2.0 - s)
    z = (np.arange(60) + 0.5 - 30.0) / f * (2.0 - s)
    inside = (np.abs(y)[None, :] <= s) & (np.abs(z)[:, None] <= s)
    red = (image[..., 0] > 100) & (image[..., 1] < 20) & (image[..., 2] < 20)
    np.testing.assert_array_equal(red, inside)
    assert inside.sum() > 100


def test_noise_has_the_declared_mean_and_spread_and_replays() -> None:
    """An IMU at rest with gyro noise (bias 0.02, stddev 0.01 rad/s): the mean and standard
    deviation of 10,000 readings within 3 % of them; the same ticks give the same draws
    however often the sensor was read."""
    world = mb_sim.load_world({"ground": None, "gravity": [0, 0, -9.81]})
    runs = []
    for every in (1, 3):
        sim = mb_sim.Simulation(world=world, dt=0.001)
        sim.add_sensor(SensorSpec("imu", "imu", rate=1000.0, noise=Noise(0.01, 0.02), seed=7))
        gyro = []
        for k in range(3334 * every):
            sim.step()
            if k % every == 0:
                gyro.append(sim.read_sensor("imu").angular_velocity)
        runs.append(np.array(gyro))
    values = runs[0].reshape(-1)
    assert values.size >= 10000
    assert np.mean(values) == pytest.approx(0.02, rel=0.03)
    assert np.std(values) == pytest.approx(0.01, rel=0.03)
    np.testing.assert_array_equal(runs[0][::3], runs[1][:len(runs[0][::3])])
    lidar = SensorSpec("scan", "lidar", xyz=(0.0, 0.0, 1.0), samples=10000, min_angle=-0.1,
                       max_angle=0.1, noise=Noise(0.05), seed=1, max_range=100.0)
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None, "bodies": _room()}))
    sim.add_sensor(lidar)
    ranges = sim.read_sensor("scan")
    exact = _expected(np.array([0.0, 0.0, 1.0]), _lidar_dirs(lidar))
    assert np.std(ranges - exact) == pytest.approx(0.05, rel=0.03)


@pytest.mark.parametrize("change, field", [
    ({"samples": 0}, "samples"), ({"hfov": 3.5, "type": "camera"}, "hfov"),
    ({"xyz": (0.0, math.nan, 0.0)}, "xyz"), ({"min_angle": 1.0, "max_angle": -1.0}, "min_angle"),
    ({"rate": 0.0}, "rate"), ({"type": "radar"}, "type"), ({"link": "nowhere"}, "link")])
def test_a_bad_declaration_is_refused_naming_the_sensor_and_field(change, field) -> None:
    import dataclasses

    sim = mb_sim.Simulation(mb_sim.load_urdf(Path(__file__).parents[1] / "urdf" / "arm.urdf"))
    spec = dataclasses.replace(SensorSpec("bad_one", "lidar"), **change)
    with pytest.raises(WorldError, match=rf"sensor 'bad_one'.*{field}"):
        sim.add_sensor(spec)
    assert sim.sensor_names == ()


def test_rays_meet_triangle_meshes_through_their_bvh(tmp_path: Path) -> None:
    """The room as one static triangle mesh (its box subdivided into 3,072 triangles, seen
    from inside) reads as the six boxes do; a lidar looking down at a heightfield ramp
    z = x tan(th) reads the plane's distance t = (tan(th) p_x - p_z) / (d_z - tan(th) d_x)."""
    trimesh = pytest.importorskip("trimesh")
    c, e = (LO + HI) / 2, HI - LO
    box = trimesh.creation.box(extents=e)
    for _ in range(4):
        box = box.subdivide()
    assert len(box.faces) == 3072
    box.apply_translation(c)
    box.export(tmp_path / "room.stl")
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None, "bodies": [
        {"name": "room", "shape": "mesh", "mesh": str(tmp_path / "room.stl"), "static": True}]}))
    spec = SensorSpec("solid", "lidar", xyz=(0.4, -0.3, 1.1), rpy=(0.1, 0.2, 0.3), samples=90,
                      vertical_samples=16, min_vertical_angle=-1.2, max_vertical_angle=1.2,
                      max_range=20.0)
    sim.add_sensor(spec)
    xyz, quat = sim.sensor_pose("solid")
    d = _lidar_dirs(spec) @ matrix_from_quat(quat).T
    np.testing.assert_allclose(sim.read_sensor("solid").reshape(-1), _expected(xyz, d),
                               rtol=0, atol=1e-9)

    slope = math.tan(math.radians(15.0))
    ramp = {"name": "ramp", "shape": "heightfield", "size": [4.0, 4.0, 4.0 * slope],
            "heights": np.tile(np.linspace(0.0, 1.0, 33), (33, 1)).tolist(),
            "xyz": [0.0, 0.0, -2.0 * slope]}
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None, "bodies": [ramp]}))
    down = SensorSpec("down", "lidar", xyz=(0.3, 0.2, 1.5), rpy=(0.0, 1.2, 0.4), samples=50,
                      min_angle=-0.6, max_angle=0.6, vertical_samples=5,
                      min_vertical_angle=-0.3, max_vertical_angle=0.3, max_range=20.0)
    sim.add_sensor(down)
    p, quat = sim.sensor_pose("down")
    d = _lidar_dirs(down) @ matrix_from_quat(quat).T
    expected = (slope * p[0] - p[2]) / (d[:, 2] - slope * d[:, 0])
    hits = p + expected[:, None] * d
    assert np.all(expected > 0) and np.all(np.abs(hits[:, :2]) < 2.0)  # on the grid
    np.testing.assert_allclose(sim.read_sensor("down").reshape(-1), expected, rtol=0,
                               atol=1e-9)


def test_a_sensor_leaves_with_the_robot_it_rides(tmp_path: Path, caplog) -> None:
    """remove_robot takes the robot's sensors with it (an info line names them); a world
    sensor stays and now sees through where the robot's head was."""
    world = mb_sim.load_world({"ground": None, "gravity": [0, 0, 0], "bodies": _room(),
                               "robots": [{"name": "tt", "urdf": str(_turntable(tmp_path))}]})
    sim = mb_sim.Simulation(world=world)
    sim.add_sensor(SensorSpec("head_scan", "lidar", link="tt/head", samples=8))
    sim.add_sensor(SensorSpec("wall_eye", "lidar", xyz=(-1.0, 0.0, 1.2), samples=3,
                              min_angle=-0.01, max_angle=0.01, max_range=20.0))
    before = sim.read_sensor("wall_eye")
    assert before[1] == pytest.approx(1.0 - 0.05, abs=1e-9)  # the head: a 5 cm sphere at x 0
    with caplog.at_level("INFO", logger="mb_sim"):
        sim.remove_robot("tt")
    assert sim.sensor_names == ("wall_eye",)
    assert "sensor 'head_scan' removed" in caplog.text
    assert sim.read_sensor("wall_eye")[1] == pytest.approx(HI[0] + 1.0, abs=1e-9)
    sim.step(10)
