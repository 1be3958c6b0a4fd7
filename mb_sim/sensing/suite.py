"""The sensors of one simulation: where each is mounted, and its readings.

`Sensing` holds the checked `SensorSpec`s of a `Simulation` (`Simulation.add_sensor`,
`read_sensor`), resolves what each is fixed to (a robot link, `<robot>/<link>` with several
robots, a body, or the world), and reads one on demand from the simulation's current state:
the sensor's pose from its mount's, the scene posed in a workspace of its own
(`mb_sim.sensing.cast`; once per instant, however many sensors read then), a lidar's rays
cast into the collision geometry, a camera's image drawn from the visual geometry
(`mb_sim.sensing.visuals`, `mb_sim.sensing.raster`), its noise added for the reading's tick
(`mb_sim.sensing.noise`). Nothing runs for a sensor nobody reads; the visual scene is made
at the first camera reading.

Readings (REP 117 and 118: +inf beyond the far limit, -inf below the near one, NaN only for
a reading that is not valid):
- lidar: ranges, m, float64: (samples,) for one row, (vertical_samples, samples) else;
- depth camera: (height, width) float32, m along the optical axis;
- camera: (height, width, 3) uint8, RGB;
- imu: `ImuReading` (orientation of the sensor in the world, x y z w; angular velocity,
  rad/s, and specific force (linear acceleration minus gravity), m/s^2, in the sensor's
  axes).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from mb_sim.collision.work import allocate_collision_work, new_collision_work
from mb_sim.dynamics.work import allocate_tree_work, new_tree_work
from mb_sim.errors import WorldError
from mb_sim.model.compile import new_geoms
from mb_sim.model.sensors import SensorSpec
from mb_sim.rotations import matrix_from_quat, quat_from_matrix, rpy_matrix
from mb_sim.sensing.cast import cast_rays, pose_scene
from mb_sim.sensing.noise import add_noise, tick
from mb_sim.sensing.patterns import focal_length, lidar_rays
from mb_sim.sensing.raster import Rasteriser
from mb_sim.sensing.visuals import new_visual_scene, scene_visuals

OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
"""The optical frame's axes (x right, y down, z forward) in the sensor's (x forward, y left,
z up), as columns."""

log = logging.getLogger("mb_sim")


class ImuReading(NamedTuple):
    """An IMU's reading (module docstring)."""

    orientation: np.ndarray
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray


@dataclass
class Mount:
    """What a sensor is fixed to: a tree's link (`robot`, `link`), a free body (`body`), or
    the world; its pose there (`rot`, `pos`), and the collision owner its rays do not see."""

    robot: Any = None
    link: str = ""
    body: int = -1
    rot: Any = None
    pos: Any = None
    skip_owner: int = -2


class Sensing:
    """The sensors of a simulation (module docstring)."""

    def __init__(self, sim: Any) -> None:
        self._sim = sim
        self._scene_lock = threading.Lock()
        """Held while the visual scene and the rasterisers are made or dropped (`prepare`
        may make them on another thread)."""
        self.specs: dict[str, SensorSpec] = {}
        self._mounts: dict[str, Mount] = {}
        self._rays: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        self.rescene()

    def rescene(self) -> None:
        """The simulation's scene changed (or is new): workspaces and colours anew, every
        sensor mounted again; a sensor whose robot or body left the scene leaves with it (an
        info line says so)."""
        sim = self._sim
        arrays = sim.scene.arrays
        n, t = arrays.tree.parent.shape[0], arrays.tree.tree_body.shape[0] - 1
        owners = n + len(sim.body_names) + t
        self._tree_work = new_tree_work(allocate_tree_work(arrays.tree))
        self._cw_arrays = allocate_collision_work(arrays.geoms, owners, 1)
        self._cw = new_collision_work(self._cw_arrays)
        self._geoms = new_geoms(arrays.geoms)
        with self._scene_lock:
            self._visuals: Any = None
            self._visual_record: Any = None
            self._rasters: dict[str, Rasteriser] = {}
        self._posed: tuple[np.ndarray, ...] | None = None
        for name, spec in list(self.specs.items()):
            try:
                self._mounts[name] = self._mount(spec)
            except WorldError:
                self.remove(name)
                log.info("sensor %r removed with what it was mounted on (%r)", name, spec.link)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.specs)

    def add(self, spec: SensorSpec) -> None:
        """Add (or replace) a sensor; WorldError naming it, the field and the value when its
        declaration or its mount is bad (nothing changes then)."""
        if not isinstance(spec, SensorSpec):
            raise TypeError(f"add_sensor takes a mb_sim.sensing.SensorSpec, got "
                            f"{type(spec).__name__}")
        spec.check()
        mount = self._mount(spec)
        rays: tuple[np.ndarray, np.ndarray | None] = (
            lidar_rays(spec) if spec.type == "lidar" else np.zeros((0, 3)), None)
        self.specs[spec.name] = spec
        self._mounts[spec.name] = mount
        self._rays[spec.name] = rays

    def remove(self, name: str) -> None:
        self.spec(name)
        for table in (self.specs, self._mounts, self._rays):
            del table[name]
        self._rasters.pop(name, None)

    def spec(self, name: str) -> SensorSpec:
        try:
            return self.specs[name]
        except KeyError:
            raise KeyError(f"no sensor named {name!r}; sensors: {list(self.specs)}") from None

    # --- mounts ---------------------------------------------------------------------------------
    def _mount(self, spec: SensorSpec) -> Mount:
        """What `spec.link` names, with the sensor's offset; WorldError naming the sensor."""
        sim = self._sim
        offset_rot = rpy_matrix(np.asarray(spec.rpy, dtype=float))
        offset_pos = np.asarray(spec.xyz, dtype=float)
        mount = Mount(rot=offset_rot, pos=offset_pos)
        if spec.link == "world":
            return mount
        if spec.link in sim.body_names:
            i = sim.body_names.index(spec.link)
            mount.body = i
            mount.skip_owner = sim.scene.arrays.tree.parent.shape[0] + i
            return mount
        robot, link = self._robot_link(spec)
        mount.robot, mount.link = robot, link
        slot = robot._queries.link_body(link)
        n = sim.scene.arrays.tree.parent.shape[0]
        mount.skip_owner = slot if slot < n else n + len(sim.body_names) + robot.tree
        return mount

    def _robot_link(self, spec: SensorSpec) -> tuple[Any, str]:
        """(robot view, link) of `robot/link`, or of a link only one tree has."""
        sim = self._sim
        where = f"{spec.source}: sensor {spec.name!r}: link"
        names = tuple(p.name for p in sim._placed)
        if "/" in spec.link:
            robot, link = spec.link.split("/", 1)
            if robot not in names:
                raise WorldError(f"{where} {spec.link!r}: no robot {robot!r}; robots: "
                                 f"{list(names)}")
            view = sim.robot(robot)
            if link not in view.model.link_names:
                raise WorldError(f"{where} {spec.link!r}: robot {robot!r} has no link {link!r}")
            return view, link
        owners = [n for n in names if spec.link in sim.robot(n).model.link_names]
        if len(owners) == 1:
            return sim.robot(owners[0]), spec.link
        if not owners:
            raise WorldError(f"{where} {spec.link!r}: no robot link, body or 'world' has this "
                             f"name (bodies: {list(sim.body_names)[:10]})")
        raise WorldError(f"{where} {spec.link!r}: robots {owners} all have this link; name it "
                         f"<robot>/<link>")

    def pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(rotation, position) of a sensor's frame in the world now."""
        mount = self._mounts[name]
        R, p = self._mount_pose(mount)
        return R @ mount.rot, R @ mount.pos + p

    def _mount_pose(self, mount: Mount) -> tuple[np.ndarray, np.ndarray]:
        state = self._sim.state
        if mount.robot is not None:
            xyz, quat = mount.robot.link_pose(mount.link)
            return matrix_from_quat(quat), np.asarray(xyz)
        if mount.body >= 0:
            return (matrix_from_quat(state.body_quat[mount.body]),
                    state.body_pos[mount.body].copy())
        return np.eye(3), np.zeros(3)

    # --- readings -----------------------------------------------------------------------------
    def read(self, name: str) -> Any:
        """A reading of sensor `name` from the current state (module docstring)."""
        spec = self.spec(name)
        k = tick(self._sim.time, spec.rate)
        if spec.type == "imu":
            return self._imu(spec, k)
        R, p = self.pose(name)
        self._pose_scene()
        if spec.type in ("camera", "depth_camera"):
            return self._camera(spec, R, p, k)
        dirs, _ = self._rays[name]
        count = dirs.shape[0]
        t, geom, normal = np.empty(count), np.empty(count, dtype=np.int64), np.empty((count, 3))
        cast_rays(self._geoms, self._cw, p, R, dirs, spec.max_range,
                  self._mounts[name].skip_owner, t, geom, normal)
        add_noise(t, spec.noise, spec.seed, name, k)
        ranges = _limits(t, spec.min_range, spec.max_range, t)
        return ranges if spec.vertical_samples == 1 else ranges.reshape(
            spec.vertical_samples, spec.samples)

    def _pose_scene(self) -> None:
        """The scene posed at the current state, once per instant: a state already posed (every
        sensor read after the same step) is not posed again."""
        state = self._sim.state
        now = (state.q, state.body_pos, state.body_quat)
        if self._posed is not None and all(np.array_equal(a, b) for a, b in
                                           zip(self._posed, now)):
            return
        pose_scene(self._sim._m, self._tree_work, self._cw, *now)
        self._posed = tuple(a.copy() for a in now)

    def _raster(self, spec: SensorSpec) -> Rasteriser:
        """The sensor's rasteriser (made at its first reading, with the visual scene, unless
        `prepare` made them)."""
        with self._scene_lock:
            if self._visuals is None:
                self._visuals = scene_visuals(self._sim)
                self._visual_record = new_visual_scene(self._visuals)
            raster = self._rasters.get(spec.name)
            if raster is None:
                raster = Rasteriser(self._visuals, spec.width, spec.height,
                                    scene=self._visual_record)
                self._rasters[spec.name] = raster
            return raster

    def prepare(self) -> None:
        """Make the visual scene and every camera's rasteriser now, ahead of their first
        reading (a world of many meshes takes seconds: their files, their colours and
        textures read); it may run on another thread while the simulation steps (the
        scene's model and world are not changed by stepping), and a reading made meanwhile
        waits for it."""
        for name, spec in list(self.specs.items()):
            if spec.type in ("camera", "depth_camera"):
                self._raster(spec)

    def capture(self, name: str) -> Callable[..., Any]:
        """A reading of sensor `name` at the current state, made when the returned function is
        called: a camera's scene is posed and its pose taken now (copies), its image drawn
        then, from any thread, while the simulation goes on, into the array the function is
        given (`out`: the reading's shape and dtype, C-contiguous; a message's bytes, say) or
        a new one; other sensors are read now. A camera's captures must be drawn one at a
        time (they share its workspace)."""
        spec = self.spec(name)
        if spec.type not in ("camera", "depth_camera"):
            reading = self.read(name)
            return lambda out=None: reading
        k = tick(self._sim.time, spec.rate)
        R, p = self.pose(name)
        self._pose_scene()
        owners = (self._cw_arrays.owner_pos.copy(), self._cw_arrays.owner_rot.copy())
        raster = self._raster(spec)
        skip = self._mounts[name].skip_owner
        return lambda out=None: self._camera(spec, R, p, k, owners, raster, skip, out)

    def _camera(self, spec: SensorSpec, R: np.ndarray, p: np.ndarray, k: int,
                owners: tuple[np.ndarray, np.ndarray] | None = None,
                raster: Rasteriser | None = None, skip: int | None = None,
                out: np.ndarray | None = None) -> np.ndarray:
        """A camera's image drawn from the visual geometry (`mb_sim.sensing.raster`) into
        `out` (None: a new array), with the collision owners' poses `owners` (None: the
        posed scene's)."""
        colour = spec.type == "camera"
        intrinsics = (focal_length(spec), 0.5 * spec.width, 0.5 * spec.height, spec.near,
                      spec.far)
        owner_pos, owner_rot = owners or (self._cw_arrays.owner_pos, self._cw_arrays.owner_rot)
        noisy = spec.noise.stddev > 0.0 or spec.noise.bias != 0.0
        depth, rgb = (raster or self._raster(spec)).render(
            R @ OPTICAL, p, intrinsics, owner_pos, owner_rot,
            self._mounts[spec.name].skip_owner if skip is None else skip, colour,
            depth=None if colour or noisy else out, rgb=out if colour and not noisy else None,
            want_depth=not colour)
        image = rgb if colour else depth
        assert image is not None
        if not noisy:
            return image
        values = image.astype(float)
        add_noise(values, spec.noise, spec.seed, spec.name, k)
        if colour:
            image = np.clip(np.rint(values), 0, 255).astype(np.uint8)
        else:
            image = np.where(np.isfinite(image), _limits(values, spec.near, spec.far, values),
                             image).astype(np.float32)
        if out is None:
            return image
        out[...] = image
        return out

    def _imu(self, spec: SensorSpec, k: int) -> ImuReading:
        """Orientation, angular velocity and specific force of an IMU, at its offset on its
        link (a rigid body: a = a_o + alpha x r + omega x (omega x r))."""
        sim, mount = self._sim, self._mounts[spec.name]
        R_link, _ = self._mount_pose(mount)
        omega, alpha, acc = np.zeros(3), np.zeros(3), np.zeros(3)
        if mount.robot is not None:
            _, omega = mount.robot.link_velocity(mount.link)
            acc, alpha = mount.robot.link_acceleration(mount.link)
        elif mount.body >= 0:
            b, state = mount.body, sim.state
            omega = R_link.T @ state.body_vel[b, 3:]
            if sim._stepped:
                before = sim._data.before
                acc = R_link.T @ (state.body_vel[b, :3] - before.body_vel[b, :3]) / sim.dt
                alpha = R_link.T @ (state.body_vel[b, 3:] - before.body_vel[b, 3:]) / sim.dt
        r = mount.pos
        acc = acc + np.cross(alpha, r) + np.cross(omega, np.cross(omega, r))
        R = R_link @ mount.rot
        force = mount.rot.T @ (acc - R_link.T @ np.asarray(sim.gravity))
        gyro = mount.rot.T @ omega
        add_noise(gyro, spec.noise, spec.seed, spec.name + "/gyro", k)
        add_noise(force, spec.noise, spec.seed, spec.name + "/accel", k)
        return ImuReading(quat_from_matrix(R), gyro, force)


def _limits(values: np.ndarray, near: float, far: float, hit: np.ndarray) -> np.ndarray:
    """REP 117 / 118: -inf below `near`, +inf beyond `far` or where nothing was hit."""
    out = np.where(values < near, -np.inf, values)
    return np.where((values > far) | ~np.isfinite(hit), np.inf, out)


def load_sensors(entries: Sequence[SensorSpec], sensing: Sensing) -> None:
    """Add each of `entries` (checked in turn; the first bad one raises)."""
    for spec in entries:
        sensing.add(spec)


__all__ = ["ImuReading", "Mount", "Sensing", "load_sensors"]
