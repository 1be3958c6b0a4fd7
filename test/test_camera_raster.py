"""Cameras drawn by the rasteriser (mb_sim.sensing.raster, mb_sim.sensing.visuals): depth per
pixel against the pinhole model on analytic scenes and against the ray cast, coverage exact
to the pixel centre and watertight, the visual geometry seen (not the collision shapes) in
its colours, a frame written to PNG and read back, and the scene posed once per instant."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mb_sim
from mb_sim.collision.rays import cast_rays
from mb_sim.model.sensors import SensorSpec
from mb_sim.rotations import matrix_from_quat
from mb_sim.sensing import suite
from mb_sim.sensing.visuals import (
    TESSELLATION_TOLERANCE,
    capsule_mesh,
    cylinder_mesh,
    sphere_mesh,
)

OPTICAL = suite.OPTICAL


def _optical_rays(spec: SensorSpec, sim: mb_sim.Simulation) -> tuple[np.ndarray, np.ndarray]:
    """(camera position, (h, w, 3) world rays of unit optical-axis component): pixel (u, v)
    looks along ((u + 1/2 - w/2) / f, (v + 1/2 - h/2) / f, 1) in the optical frame."""
    f = 0.5 * spec.width / math.tan(0.5 * spec.hfov)
    u = (np.arange(spec.width) + 0.5 - 0.5 * spec.width) / f
    v = (np.arange(spec.height) + 0.5 - 0.5 * spec.height) / f
    r = np.stack([np.broadcast_to(u[None, :], (spec.height, spec.width)),
                  np.broadcast_to(v[:, None], (spec.height, spec.width)),
                  np.ones((spec.height, spec.width))], axis=-1)
    xyz, quat = sim.sensor_pose(spec.name)
    return np.asarray(xyz), r @ (matrix_from_quat(quat) @ OPTICAL).T


def test_the_ground_plane_reads_the_pinhole_depth() -> None:
    """A camera 1.3 m above the ground, pitched down and turned: depth (h - p_z) / d_z per
    pixel where the ray goes down, +inf where it does not reach the ground within far."""
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": {"height": 0.2}}))
    spec = SensorSpec("down", "depth_camera", xyz=(0.3, -0.4, 1.5), rpy=(0.1, 0.45, 0.7),
                      width=96, height=72, hfov=1.3, near=0.05, far=25.0)
    sim.add_sensor(spec)
    image = sim.read_sensor("down")
    p, d = _optical_rays(spec, sim)
    with np.errstate(divide="ignore"):
        expected = np.where(d[..., 2] < 0, (0.2 - p[2]) / d[..., 2], np.inf)
    expected[expected > spec.far] = np.inf
    assert np.isinf(expected).sum() > 100 and np.isfinite(expected).sum() > 3000
    np.testing.assert_array_equal(np.isinf(image), np.isinf(expected))
    seen = np.isfinite(expected)
    np.testing.assert_allclose(image[seen], expected[seen], rtol=1.2e-7, atol=0)


def _box_depth(p: np.ndarray, d: np.ndarray, centre: np.ndarray, R: np.ndarray,
               half: np.ndarray) -> np.ndarray:
    """Slab test of rays p + s d against the box (centre, R, half extents): entry s (inf)."""
    o = (p - centre) @ R
    dl = d @ R
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (-half - o) / dl, (half - o) / dl
    near = np.nanmax(np.minimum(t1, t2), axis=-1)
    far = np.nanmin(np.maximum(t1, t2), axis=-1)
    return np.where((near <= far) & (near > 0), near, np.inf)


def test_a_turned_box_reads_its_pinhole_depth_and_the_ray_cast_exactly() -> None:
    """A box turned about two axes: every pixel's depth is the slab test's (float32), and the
    ray cast of the same box (its collision shape) gives the same pixels and the same
    float32 depths."""
    centre, rpy, size = np.array([2.2, 0.3, 0.9]), (0.4, -0.3, 0.6), np.array([0.8, 0.5, 0.6])
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None, "bodies": [
        {"name": "block", "shape": "box", "size": size.tolist(), "xyz": centre.tolist(),
         "rpy": list(rpy), "static": True}]}))
    spec = SensorSpec("eye", "depth_camera", xyz=(0.0, 0.0, 1.0), rpy=(0.05, 0.02, 0.1),
                      width=120, height=90, hfov=1.0, far=20.0)
    sim.add_sensor(spec)
    image = sim.read_sensor("eye")
    p, d = _optical_rays(spec, sim)
    R = matrix_from_quat(sim.body_pose("block")[1])
    expected = _box_depth(p, d, centre, R, size / 2)
    assert np.isfinite(expected).sum() > 1000 and np.isinf(expected).sum() > 1000
    np.testing.assert_array_equal(np.isinf(image), np.isinf(expected))
    hit = np.isfinite(expected)
    np.testing.assert_allclose(image[hit], expected[hit], rtol=1.2e-7, atol=0)
    # the ray cast of the collision box, through the same pixel centres
    length = np.linalg.norm(d, axis=-1)
    dirs = (d / length[..., None]).reshape(-1, 3)
    t, geom, normal = np.empty(len(dirs)), np.empty(len(dirs), np.int64), np.empty((len(dirs), 3))
    sensing = sim._sensing
    sensing._pose_scene()
    cast_rays(sensing._geoms, sensing._cw, p, np.eye(3), dirs, 100.0, -2, t, geom, normal)
    cast = (t / length.reshape(-1)).reshape(image.shape).astype(np.float32)
    np.testing.assert_array_equal(np.isinf(cast), np.isinf(image))
    np.testing.assert_allclose(image[hit], cast[hit], rtol=1.2e-7, atol=0)


def test_a_sphere_is_drawn_within_the_tessellation_bound() -> None:
    """A sphere of 0.5 m at 3 m: each pixel's point lies within TESSELLATION_TOLERANCE inside
    the true surface; pixels the true sphere covers and the drawn one leaves are its rim
    (the ray passes within the tolerance of the surface)."""
    centre, radius = np.array([3.0, 0.2, 1.0]), 0.5
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None, "bodies": [
        {"name": "ball", "shape": "sphere", "size": [radius], "xyz": centre.tolist(),
         "static": True}]}))
    spec = SensorSpec("eye", "depth_camera", xyz=(0.0, 0.0, 1.0), width=160, height=120,
                      hfov=0.6, far=20.0)
    sim.add_sensor(spec)
    image = sim.read_sensor("eye").astype(float)
    p, d = _optical_rays(spec, sim)
    drawn = np.isfinite(image)
    points = p + image[..., None] * d
    radial = np.linalg.norm(points[drawn] - centre, axis=1)
    assert drawn.sum() > 2000
    assert radial.max() <= radius + 1e-6 and radial.min() >= radius - TESSELLATION_TOLERANCE
    unit = d / np.linalg.norm(d, axis=-1, keepdims=True)
    miss = np.linalg.norm(np.cross(centre - p, unit), axis=-1)  # the ray's distance to the centre
    true_hit = miss <= radius
    rim = true_hit & ~drawn
    assert np.all(miss[rim] >= radius - TESSELLATION_TOLERANCE)
    assert not np.any(drawn & ~true_hit)  # the drawn sphere lies inside the true one


@pytest.mark.parametrize("radius", [0.01, 0.08, 0.5, 3.0])
def test_tessellations_lie_within_a_millimetre_inside_the_surface(radius: float) -> None:
    """Every triangle of a sphere, cylinder and capsule lies inside the true surface and
    within TESSELLATION_TOLERANCE of it (its plane's distance from the axis or centre bounds
    the distance of its points); the faces wind outward."""
    length = 0.7
    for kind, (v, t) in (("sphere", sphere_mesh(radius)), ("cylinder",
                         cylinder_mesh(radius, length)), ("capsule", capsule_mesh(radius, length))):
        a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
        n = np.cross(b - a, c - a)
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        mid = (a + b + c) / 3
        if kind == "sphere":
            axis_point = np.zeros_like(mid)
        else:  # nearest point of the axis segment (the caps' planes are exact)
            axis_point = np.zeros_like(mid)
            limit = length / 2 if kind == "capsule" else length / 2 - 1e-12
            axis_point[:, 2] = np.clip(mid[:, 2], -limit, limit)
        side = np.abs(n[:, 2]) < 0.999 if kind == "cylinder" else np.ones(len(t), bool)
        gap = radius - np.einsum("ij,ij->i", a - axis_point, n)
        assert np.all(np.einsum("ij,ij->i", mid - axis_point, n) > 0), kind  # outward
        assert gap[side].max() <= TESSELLATION_TOLERANCE + 1e-12, (kind, gap[side].max())
        assert gap[side].min() >= -1e-12, kind


def _room_mesh(folder: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    trimesh = pytest.importorskip("trimesh")
    lo, hi = np.array([-2.0, -1.5, 0.0]), np.array([3.0, 1.0, 2.5])
    box = trimesh.creation.box(extents=hi - lo)
    for _ in range(3):
        box = box.subdivide()
    box.apply_translation((lo + hi) / 2)
    path = folder / "room.stl"
    box.export(path)
    return path, lo, hi


def test_a_mesh_room_seen_from_inside_has_no_crack(tmp_path: Path) -> None:
    """A closed room of 768 triangles seen from inside (a mesh is drawn from either side):
    every pixel is a wall's, at the depth of the nearest wall (float32), even along the
    triangles' shared edges."""
    path, lo, hi = _room_mesh(tmp_path)
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None, "bodies": [
        {"name": "room", "shape": "mesh", "mesh": str(path), "static": True}]}))
    spec = SensorSpec("eye", "depth_camera", xyz=(0.4, -0.3, 1.1), rpy=(0.2, 0.3, 0.5),
                      width=200, height=150, hfov=1.7, far=20.0)
    sim.add_sensor(spec)
    image = sim.read_sensor("eye")
    p, d = _optical_rays(spec, sim)
    with np.errstate(divide="ignore", invalid="ignore"):
        exits = np.where(d > 0, (hi - p) / d, np.where(d < 0, (lo - p) / d, np.inf))
    expected = exits.min(axis=-1)
    assert np.all(np.isfinite(image))
    np.testing.assert_allclose(image, expected, rtol=2e-7, atol=0)


def _sphere_on_a_box(folder: Path) -> Path:
    path = folder / "ball_on_box.urdf"
    path.write_text(
        '<robot name="post"><material name="green"><color rgba="0.1 0.8 0.2 1"/></material>'
        '<link name="base"><visual><origin xyz="2 0 1"/><geometry><sphere radius="0.3"/>'
        '</geometry><material name="green"/></visual>'
        '<collision><origin xyz="2 0 1"/><geometry><box size="0.6 0.6 0.6"/></geometry>'
        '</collision></link></robot>')
    return path


def test_cameras_see_the_visual_geometry_and_lidars_the_collision(tmp_path: Path) -> None:
    """A link whose visual is a green sphere and whose collision is a box: the camera sees
    a green disc (a box corner's pixels show the sky), a lidar meets the box's face."""
    world = mb_sim.load_world({"ground": None, "robots": [
        {"name": "post", "urdf": str(_sphere_on_a_box(tmp_path))}]})
    sim = mb_sim.Simulation(world=world)
    spec = SensorSpec("eye", "camera", xyz=(0.0, 0.0, 1.0), width=81, height=81, hfov=0.5)
    sim.add_sensor(spec)
    sim.add_sensor(SensorSpec("ring", "lidar", xyz=(0.0, 0.05, 1.25), samples=3,
                              min_angle=-0.01, max_angle=0.01, max_range=10.0))
    image = sim.read_sensor("eye").astype(int)
    f = 40.5 / math.tan(0.25)
    corner = (40 + round(0.27 / 1.7 * f), 40 - round(0.27 / 1.7 * f))  # inside the box's face
    green = (image[..., 1] > 60) & (image[..., 1] > 3 * image[..., 0]) & (
        image[..., 1] > 3 * image[..., 2])
    assert green[40, 40] and not green[corner[1], corner[0]]
    sky = np.array([round(255 * c) for c in suite_sky()])
    np.testing.assert_array_equal(image[corner[1], corner[0]], sky)
    # the disc: pixels whose rays pass within the radius of the centre (not the square)
    u = (np.arange(81) + 0.5 - 40.5) / f
    miss = np.sqrt(2.0 ** 2 * (u[None, :] ** 2 + u[:, None] ** 2) / (1 + u[None, :] ** 2
                   + u[:, None] ** 2))
    assert np.all(green[miss < 0.29]) and not np.any(green[miss > 0.3])
    assert sim.read_sensor("ring")[1] == pytest.approx(1.7, abs=1e-9)  # the box's face


def suite_sky() -> tuple[float, float, float]:
    from mb_sim.sensing.visuals import SKY

    return SKY


def test_a_mesh_is_drawn_in_its_own_material_colour(tmp_path: Path) -> None:
    """An OBJ whose MTL gives Kd 0.9 0.1 0.1, as a static body without a colour of its own in
    the URDF sense (a body's colour is the world file's): a URDF link's visual of that mesh
    without <material> shows the file's red."""
    pytest.importorskip("trimesh")
    (tmp_path / "red.mtl").write_text("newmtl red\nKd 0.9 0.1 0.1\n")
    (tmp_path / "cube.obj").write_text(
        "mtllib red.mtl\nusemtl red\n" + "".join(
            f"v {x} {y} {z}\n" for x in (-0.2, 0.2) for y in (-0.2, 0.2) for z in (-0.2, 0.2))
        + "f 1 2 4 3\nf 5 7 8 6\nf 1 5 6 2\nf 3 4 8 7\nf 1 3 7 5\nf 2 6 8 4\n")
    urdf = tmp_path / "crate.urdf"
    urdf.write_text(f'<robot name="crate"><link name="base"><visual><origin xyz="2 0 1"/>'
                    f'<geometry><mesh filename="{tmp_path / "cube.obj"}"/></geometry></visual>'
                    '</link></robot>')
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None, "robots": [
        {"name": "crate", "urdf": str(urdf)}]}))
    sim.add_sensor(SensorSpec("eye", "camera", xyz=(0.0, 0.0, 1.0), width=40, height=30,
                              hfov=0.5))
    centre = sim.read_sensor("eye")[15, 20].astype(int)
    assert centre[0] > 100 and centre[1] < 30 and centre[2] < 30, centre


def test_a_frame_written_to_png_shows_the_room(tmp_path: Path) -> None:
    """nav_bot's colour camera in nav_room, written to PNG and read back: the sky above the
    0.8 m walls in the top row, the ground's grey (lit by the sun: one factor for r, g, b) in
    the bottom rows, more colours between; the depth camera reads +inf exactly where the
    colour camera sees the sky (both 320 x 240 at the same pose)."""
    image_module = pytest.importorskip("PIL.Image")
    root = Path(__file__).resolve().parents[1]
    sim = mb_sim.Simulation(world=mb_sim.load_world(root / "config" / "worlds" / "nav_room.yaml"))
    sim.step(10)
    colour = sim.read_sensor("camera")
    path = tmp_path / "camera.png"
    image_module.fromarray(colour).save(path)
    back = np.asarray(image_module.open(path))
    np.testing.assert_array_equal(back, colour)
    h, w, _ = back.shape
    from mb_sim.sensing.visuals import GROUND, SKY

    sky = np.array([round(255 * c) for c in SKY])
    is_sky = np.all(back == sky, axis=-1)
    assert is_sky[0].all() and not is_sky[h // 2:].any()
    bottom = back[-3:, w // 3: 2 * w // 3].reshape(-1, 3).astype(float)
    grey = np.array(GROUND) * 255
    ratio = bottom / grey  # the ground lit by the sun: grey times one factor
    assert np.allclose(ratio, ratio[:, :1], atol=0.03)
    assert len(np.unique(back.reshape(-1, 3), axis=0)) >= 3  # ground, walls, more
    depth = sim.read_sensor("depth_camera")
    np.testing.assert_array_equal(np.isposinf(depth), is_sky)


def test_the_scene_is_posed_once_for_every_sensor_read_at_one_instant(monkeypatch) -> None:
    """Three sensors read after one step pose the scene once; after the next step once more."""
    root = Path(__file__).resolve().parents[1]
    sim = mb_sim.Simulation(world=mb_sim.load_world(root / "config" / "worlds" / "nav_room.yaml"))
    calls = []
    real = suite.pose_scene
    monkeypatch.setattr(suite, "pose_scene", lambda *a: calls.append(1) or real(*a))
    sim.step(5)
    for name in ("lidar", "camera", "depth_camera"):
        sim.read_sensor(name)
    assert len(calls) == 1
    sim.step(1)
    sim.read_sensor("camera")
    sim.read_sensor("lidar")
    assert len(calls) == 2


def _clusters_off(values: Any) -> Any:
    """The same scene with one cluster per visual that no view ever skips."""
    from mb_sim.sensing.clusters import NEVER

    s = values.visual_owner.shape[0]
    return values._replace(
        visual_cluster=np.arange(s + 1, dtype=np.int64),
        cluster_tri=values.visual_tri.copy(),
        cluster_sphere=np.tile([0.0, 0.0, 0.0, 1e9], (s, 1)),
        cluster_cone=np.tile([0.0, 0.0, 1.0, NEVER, 0.0], (s, 1)))


def test_clusters_skip_only_what_shows_nothing(tmp_path: Path) -> None:
    """Spheres, a mesh ball and boxes seen from outside, from inside the ball, grazing its
    silhouette, half behind the camera and from far: the images drawn with the clusters'
    view and back-face tests are those drawn testing every triangle, pixel for pixel; every
    triangle of a cluster lies in its sphere and faces within its cone."""
    pytest.importorskip("trimesh")
    import trimesh

    from mb_sim.sensing import raster as raster_module
    from mb_sim.sensing.raster import Rasteriser
    from mb_sim.sensing.visuals import scene_visuals

    trimesh.creation.icosphere(subdivisions=4, radius=0.5).export(tmp_path / "ball.stl")
    world = mb_sim.load_world({"ground": {}, "bodies": [
        {"name": "ball", "shape": "mesh", "mesh": str(tmp_path / "ball.stl"), "static": True,
         "xyz": [2.0, 0.0, 1.0]},
        {"name": "orb", "shape": "sphere", "size": [0.3], "static": True, "xyz": [3.0, 1.0, 0.5]},
        {"name": "crate", "shape": "box", "size": [0.4, 0.6, 0.5], "static": True,
         "xyz": [1.0, -1.0, 0.3], "rpy": [0.2, 0.1, 0.5]}]})
    sim = mb_sim.Simulation(world=world)
    values = scene_visuals(sim)
    for name in ("cluster_tri", "cluster_sphere", "cluster_cone"):
        assert len(getattr(values, name)) > len(values.visual_owner)  # clusters, not visuals
    owner = np.repeat(np.arange(len(values.cluster_tri) - 1), np.diff(values.cluster_tri))
    p = values.vert[values.tri]
    sphere = values.cluster_sphere[owner]
    assert np.all(np.linalg.norm(p - sphere[:, None, :3], axis=2) <= sphere[:, 3:4])
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    cone = values.cluster_cone[owner]
    assert np.all(np.einsum("ij,ij->i", n, cone[:, :3]) >= cone[:, 3])
    plain = _clusters_off(values)
    eyes = [((0.0, 0.0, 1.0), (0.0, 0.0, 0.0)), ((2.0, 0.1, 1.05), (0.3, 0.2, 2.0)),
            ((2.0, -0.62, 1.0), (0.0, 0.0, 1.2)), ((2.0, -0.5, 1.0), (0.0, 0.0, 0.0)),
            ((-12.0, 0.5, 2.0), (0.0, 0.1, 0.0)), ((1.5, 0.0, 1.2), (0.0, 0.6, 0.3))]
    R, owners = suite.OPTICAL, (np.zeros((1, 3)), np.eye(3)[None])
    skipped = 0
    for xyz, rpy in eyes:
        rot = mb_sim.rotations.rpy_matrix(np.array(rpy)) @ R
        intrinsics = (150.0, 80.0, 60.0, 0.01, 40.0)
        rasters = [Rasteriser(v, 160, 120, threads=1) for v in (values, plain)]
        images = [r.render(rot, np.array(xyz), intrinsics, *owners, -2, True) for r in rasters]
        np.testing.assert_array_equal(images[0][0], images[1][0])
        np.testing.assert_array_equal(images[0][1], images[1][1])
        frame = rasters[0].arrays
        hidden = getattr(raster_module._cluster_hidden, "py_func", raster_module._cluster_hidden)
        skipped += sum(bool(hidden(values, frame, s, c, bool(frame.cull[s]), 160, 120))
                       for s in np.flatnonzero(frame.seen)
                       for c in range(values.visual_cluster[s], values.visual_cluster[s + 1]))
    assert skipped > 100  # the tests did skip clusters


def test_the_visual_scene_made_ahead_on_another_thread_draws_the_same() -> None:
    """`prepare_sensors` on a thread of its own while the simulation steps: the readings
    after it are those of a simulation that made its scene at its first reading."""
    import threading

    root = Path(__file__).resolve().parents[1]
    sims = [mb_sim.Simulation(world=mb_sim.load_world(root / "config" / "worlds" /
                                                      "nav_room.yaml")) for _ in range(2)]
    worker = threading.Thread(target=sims[0].prepare_sensors)
    worker.start()
    for sim in sims:
        sim.step(20)
    worker.join()
    assert set(sims[0]._sensing._rasters) == {"camera", "depth_camera"}
    assert not sims[1]._sensing._rasters
    for name in ("camera", "depth_camera"):
        np.testing.assert_array_equal(sims[0].read_sensor(name), sims[1].read_sensor(name))
