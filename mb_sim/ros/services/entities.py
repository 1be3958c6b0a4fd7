"""The entities of a running simulation as simulation_interfaces sees them: every robot and
URDF object (by its name: a `robot:` world's robot by its URDF name) and every world body (by
its name), their states, categories and bounds, and the bodies and robots spawned and deleted
at runtime. No rclpy: the services (`sim_interfaces`, `robot_spawn`) adapt it.

An entity's frame: a robot's or URDF object's is its root link; a world body's is the body
frame (centre of mass, axes of its shape); a spawned body's is the frame of its resource (the
URDF link, the YAML shape frame: `mb_sim.model.spawn.SpawnedBody.frame_xyz`), so that the pose
a body was spawned at is the pose it reports. States are in the world frame: pose, linear
velocity of the frame's origin, angular velocity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim.model.geometry import Geometry
from mb_sim.model.mesh import MeshError, convex_hull_vertices, load_mesh
from mb_sim.model.spawn import SpawnedBody, spawn_body
from mb_sim.rotations import matrix_from_quat, quat_from_matrix, rpy_matrix

ROBOT, OBJECT, STATIC = "robot", "object", "static"
"""Entity kinds (simulation_interfaces' CATEGORY_ROBOT, _OBJECT, _STATIC_OBJECT)."""


class EntityError(ValueError):
    """A request about an entity that cannot be served; `code` names the result code
    (NOT_FOUND, OPERATION_FAILED, INVALID_POSE)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class EntityState:
    """World pose (xyz, quaternion x, y, z, w) and twist of an entity's frame."""

    xyz: np.ndarray
    quat_xyzw: np.ndarray
    linear: np.ndarray
    angular: np.ndarray


def geometry_points(geometry: Geometry) -> np.ndarray:
    """Points whose convex hull holds the shape, in the frame that owns it."""
    kind, size = geometry.kind, geometry.size
    if kind == "box":
        half = np.asarray(size, dtype=float) / 2
        pts = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    elif kind == "sphere":
        pts = np.vstack([np.eye(3), -np.eye(3)]) * float(size[0])
    elif kind in ("cylinder", "capsule"):
        r, half_length = float(size[0]), float(size[1]) / 2
        top = half_length + (r if kind == "capsule" else 0.0)
        pts = np.array([[x * r, y * r, z * top] for x in (-1, 1) for y in (-1, 1)
                        for z in (-1, 1)])
    elif kind == "heightfield":
        x, y, top = (float(v) for v in geometry.size)
        pts = np.array([[sx * x / 2, sy * y / 2, z] for sx in (-1, 1) for sy in (-1, 1)
                        for z in (0.0, top)])
    else:
        try:
            pts = np.asarray(convex_hull_vertices(geometry.mesh, geometry.scale), dtype=float)
        except MeshError:  # a flat static mesh (a floor) has no hull: its own points
            pts = np.asarray(load_mesh(geometry.mesh, geometry.scale)[0], dtype=float)
    return pts @ rpy_matrix(geometry.rpy).T + np.asarray(geometry.xyz, dtype=float)


class Entities:
    """The robots, URDF objects and world bodies of `sim` (a `Simulation` whose `world` is
    kept current), with the frames of spawned bodies; `original`: the world file's body
    names; `original_trees`: the robots and objects the node started with (which cannot be
    deleted)."""

    def __init__(self, sim: object, original: Sequence[str],
                 original_trees: Sequence[str] = ()) -> None:
        self.sim = sim
        self.original = tuple(original)
        self.original_trees = tuple(original_trees) or (*sim.robot_names, *sim.object_names)
        self.frames: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        """A spawned body's entity frame in its body frame (position, rotation matrix)."""

    # --- what there is ---------------------------------------------------------------------
    def trees(self) -> list[str]:
        """The robots, then the URDF objects."""
        return [*self.sim.robot_names, *self.sim.object_names]

    def is_tree(self, name: str) -> bool:
        return name in self.sim.robot_names or name in self.sim.object_names

    def names(self) -> list[str]:
        return [*self.trees(), *self.sim.body_names]

    def spawned(self) -> list[str]:
        """Bodies and robots that were not there at the start, bodies first."""
        return ([n for n in self.sim.body_names if n not in self.original]
                + [n for n in self.trees() if n not in self.original_trees])

    def kind(self, name: str) -> str:
        if name in self.sim.robot_names:
            return ROBOT
        if name in self.sim.object_names:
            return OBJECT if self.sim.robot(name).floating_base else STATIC
        body = self._body(name)
        return STATIC if body.static else OBJECT

    def describe(self, name: str) -> str:
        how = "world" if name in self.original or name in self.original_trees else "spawned"
        if self.is_tree(name):
            view = self.sim.robot(name)
            model = view.model
            base = f"{'floating' if model.floating_base else 'fixed'} base {model.base_link!r}"
            if name in self.sim.robot_names:
                spawned = " (spawned)" if how == "spawned" else ""
                return f"robot {name!r}{spawned}: {model.n_joints} joints, {base}"
            return f"{how} URDF object {name!r}: {len(model.link_names)} links, {base}"
        body = self._body(name)
        mass = "static" if body.static else f"{body.mass:.6g} kg"
        return f"{how} body {name!r}: {body.geometry.kind}, {mass}"

    def _body(self, name: str) -> object:
        try:
            return self.sim.world.body(name)
        except (KeyError, AttributeError):
            raise EntityError("NOT_FOUND", f"no entity named {name!r} (entities: "
                              f"{', '.join(self.names())})") from None

    def _frame(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return self.frames.get(name, (np.zeros(3), np.eye(3)))

    # --- states ----------------------------------------------------------------------------
    def state(self, name: str) -> EntityState:
        sim = self.sim
        if self.is_tree(name):
            view = sim.robot(name)
            xyz, quat = view.base_pose()
            linear, angular = view.base_velocity()
            R = matrix_from_quat(quat)
            return EntityState(xyz, quat, R @ linear, R @ angular)
        self._body(name)
        xyz, quat = sim.body_pose(name)
        linear, angular = sim.body_velocity(name)
        if name not in self.frames:  # the body frame itself: its values as they are
            return EntityState(xyz, quat, linear, angular)
        p, r = self._frame(name)
        R = matrix_from_quat(quat)
        arm = R @ p
        return EntityState(xyz + arm, quat_from_matrix(R @ r), linear + np.cross(angular, arm),
                           angular)

    def set_state(self, name: str, pose: tuple[Sequence[float], Sequence[float]] | None,
                  twist: tuple[Sequence[float], Sequence[float]] | None) -> dict[str, Any]:
        """Pose (xyz, quaternion x, y, z, w) and/or twist (linear, angular), world frame, of a
        floating robot's (or URDF object's) root link or a free body; a fixed base or a static
        body is refused (OPERATION_FAILED), a bad pose is INVALID_POSE; nothing changes then.
        Returns the library call made, as `apply_event` takes it."""
        sim = self.sim
        if self.is_tree(name):
            if not sim.robot(name).floating_base:
                what = "robot" if name in sim.robot_names else "URDF object"
                raise EntityError("OPERATION_FAILED", f"{what} {name!r} has a fixed base: it "
                                  "stays where it was placed")
            return self._robot_state(name, pose, twist)
        if self._body(name).static:
            raise EntityError("OPERATION_FAILED", f"body {name!r} is static: it stays where "
                              "the world puts it")
        p, r = self._frame(name)
        xyz = quat = linear = angular = None
        if pose is not None:
            R = self._rotation(pose[1]) @ r.T
            xyz, quat = np.asarray(pose[0], dtype=float) - R @ p, quat_from_matrix(R)
            if name not in self.frames:  # the body frame itself: the pose as given
                xyz, quat = np.asarray(pose[0], dtype=float), np.asarray(pose[1], dtype=float)
            self._check_pose(xyz)
        if twist is not None:
            R = matrix_from_quat(quat if quat is not None else sim.body_pose(name)[1])
            angular = np.asarray(twist[1], dtype=float)
            linear = np.asarray(twist[0], dtype=float) - np.cross(angular, R @ p)
        try:
            sim.set_body_state(name, xyz, quat, linear, angular)
        except (TypeError, ValueError) as exc:
            raise EntityError("INVALID_POSE" if pose is not None else "OPERATION_FAILED",
                              str(exc)) from None
        return {"set_body": name, "args": [_listed(v) for v in (xyz, quat, linear, angular)]}

    def _robot_state(self, name: str, pose: tuple | None, twist: tuple | None
                     ) -> dict[str, Any]:
        sim = self.sim
        view = sim.robot(name)
        saved = sim.save_state()
        event: dict[str, Any] = {"set_base": name, "pose": None, "velocity": None}
        try:
            if pose is not None:
                self._rotation(pose[1])
                self._check_pose(np.asarray(pose[0], dtype=float))
                view.set_base_pose(pose[0], pose[1])
                event["pose"] = [_listed(pose[0]), _listed(pose[1])]
            if twist is not None:
                R = matrix_from_quat(view.base_pose()[1])
                velocity = (R.T @ np.asarray(twist[0], dtype=float),
                            R.T @ np.asarray(twist[1], dtype=float))
                view.set_base_velocity(*velocity)
                event["velocity"] = [_listed(v) for v in velocity]
        except (TypeError, ValueError) as exc:
            sim.restore_state(saved)
            raise EntityError("INVALID_POSE" if pose is not None else "OPERATION_FAILED",
                              str(exc)) from None
        return event

    @staticmethod
    def _rotation(quat: Sequence[float]) -> np.ndarray:
        q = np.asarray(quat, dtype=float)
        norm = float(np.linalg.norm(q)) if q.shape == (4,) else float("nan")
        if not abs(norm - 1.0) <= 1e-3:
            raise EntityError("INVALID_POSE", f"orientation (x, y, z, w) {q.tolist()} is not a "
                              f"unit quaternion (norm {norm:.6g})")
        return matrix_from_quat(q / norm)

    @staticmethod
    def _check_pose(xyz: np.ndarray) -> None:
        if xyz.shape != (3,) or not np.all(np.isfinite(xyz)):
            raise EntityError("INVALID_POSE", f"position {xyz.tolist()} must be 3 finite "
                              "numbers")

    # --- bounds ----------------------------------------------------------------------------
    def bounds(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Opposite corners of the box around the entity's collision shapes, in its frame
        (a robot's: every link at the current joint positions, in the root link's)."""
        points = self._points(name)
        return points.min(axis=0), points.max(axis=0)

    def world_box(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The axis-aligned world box around the entity's collision shapes."""
        xyz, quat = self._world_pose(name)
        points = self._points(name) @ matrix_from_quat(quat).T + xyz
        return points.min(axis=0), points.max(axis=0)

    def _world_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        state = self.state(name)
        return state.xyz, state.quat_xyzw

    def _points(self, name: str) -> np.ndarray:
        sim = self.sim
        if self.is_tree(name):
            view = sim.robot(name)
            model = view.model
            base_xyz, base_quat = view.base_pose()
            R0 = matrix_from_quat(base_quat)
            parts = [np.zeros((1, 3))]
            for link, (xyz, quat) in view.link_poses().items():
                for geometry in model.collision_geometries.get(link, ()):
                    world = geometry_points(geometry) @ matrix_from_quat(quat).T + xyz
                    parts.append((world - base_xyz) @ R0)
            return np.vstack(parts)
        body = self._body(name)
        p, r = self._frame(name)
        return (geometry_points(body.geometry) - p) @ r

    # --- spawning and deleting ---------------------------------------------------------------
    def spawn(self, spawned: SpawnedBody) -> None:
        """Add the body between two steps (ValueError: its name was taken meanwhile)."""
        self.sim.add_body(spawned.body)
        xyz, quat = spawned.frame_xyz, spawned.frame_quat_xyzw
        if np.any(xyz != 0.0) or np.any(quat != (0.0, 0.0, 0.0, 1.0)):
            self.frames[spawned.body.name] = (np.array(xyz, dtype=float),
                                              matrix_from_quat(np.asarray(quat, dtype=float)))

    def delete(self, name: str) -> None:
        """Remove a body or a spawned robot (or URDF object) between two steps; those the node
        started with cannot be deleted (OPERATION_FAILED)."""
        if self.is_tree(name):
            if name in self.original_trees:
                what = "robot" if name in self.sim.robot_names else "URDF object"
                raise EntityError("OPERATION_FAILED", f"{name!r} is a {what} of the world the "
                                  "node started with, which cannot be deleted (only bodies "
                                  "and spawned robots can)")
            self.sim.remove_robot(name)
            return
        self._body(name)
        try:
            self.sim.remove_body(name)
        except ValueError as exc:
            raise EntityError("OPERATION_FAILED", str(exc)) from None
        self.frames.pop(name, None)

    def delete_spawned(self) -> list[str]:
        """Remove every spawned body; their names."""
        gone = self.spawned()
        for name in gone:
            self.delete(name)
        return gone


def _listed(value: Any) -> list[float] | None:
    return None if value is None else [float(v) for v in np.asarray(value).reshape(-1)]


def spawn_event(name: str, uri: str, resource_string: str, xyz: Sequence[float],
                quat_xyzw: Sequence[float]) -> dict[str, Any]:
    """The record of a spawn: the request that made the body `name` (`apply_event` makes
    the same body again)."""
    return {"spawn": name, "uri": uri, "resource_string": resource_string,
            "xyz": _listed(xyz), "quat_xyzw": _listed(quat_xyzw)}


def spawn_robot_event(record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """The record of a robot's spawn: its description (`robot_ports.RobotPorts.describe`,
    with its URDF, servos and gains) and its placement as a world file's robot entry
    (`apply_event` makes the same robot again)."""
    return {"spawn_robot": record["name"], "entry": entry, **record}


def apply_event(sim: Any, event: dict[str, Any], package_dirs: Sequence[str] = ()) -> bool:
    """Do a recorded spawn, delete or set-state event (`Entities`' calls, as `sim_node`
    writes them into a bag) to `sim` again; False for an event of another kind."""
    if "spawn" in event:
        spawned = spawn_body(event["uri"], event["resource_string"], name=event["spawn"],
                             taken=sim.entity_names(), xyz=event["xyz"],
                             quat_xyzw=event["quat_xyzw"])
        sim.add_body(spawned.body)
    elif "spawn_robot" in event:
        from mb_sim.ros.services.robot_resource import robot_from_record

        name = event["spawn_robot"]
        model, placement = robot_from_record(event["urdf"], event["entry"], name, package_dirs)
        sim.add_robot(model, name, placement)
        view = sim.robot(name)
        if event.get("servos"):
            view.set_interfaces(event["servos"])
            view.set_gains({k: tuple(v) for k, v in event["gains"].items()})
    elif "delete" in event:
        name = event["delete"]
        if name in sim.robot_names or name in sim.object_names:
            sim.remove_robot(name)
        else:
            sim.remove_body(name)
    elif "set_body" in event:
        sim.set_body_state(event["set_body"], *event["args"])
    elif "set_base" in event:
        view = _tree(sim, event["set_base"])
        if event["pose"] is not None:
            view.set_base_pose(*event["pose"])
        if event["velocity"] is not None:
            view.set_base_velocity(*event["velocity"])
    else:
        return False
    return True


def _tree(sim: Any, name: str) -> Any:
    """The robot `name`; in a simulation of one tree, that tree whatever its name (bags of a
    `robot:` world named it by its URDF's name)."""
    trees = (*sim.robot_names, *sim.object_names)
    if name not in trees and len(trees) == 1:
        return sim.robot(trees[0])
    return sim.robot(name)
