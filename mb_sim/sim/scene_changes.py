"""Bodies and trees (robots, URDF objects) added, removed and moved between two steps of a
`Simulation`: the scene is compiled again and the state of everything that stays carried over
exactly (`mb_sim.sim.rebuild`), warm-start impulses included; `reset()` puts what was added
back where it was added."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from mb_sim.collision.contacts import Contacts
from mb_sim.model.collision_filter import reference_state
from mb_sim.model.compile import CompiledScene, Placed, compile_scene, scene_record
from mb_sim.model.model import BALL_X, Model
from mb_sim.model.world import Body, SolverSettings, World
from mb_sim.sim.arguments import StateArguments
from mb_sim.sim.data import Data, allocate_data
from mb_sim.sim.rebuild import TreeMap, carry_state, geom_identities, index_map
from mb_sim.sim.state import State


class SceneChanges:
    """The members of `Simulation` that change what it holds (module docstring)."""

    def entity_names(self) -> tuple[str, ...]:
        """Names a new body or robot may not take: the bodies', the trees' and their links'."""
        names = [*self.body_names]
        for p in self._placed:
            names += [p.name, *p.model.link_names]
        return tuple(names)

    def add_body(self, body: Body) -> None:
        """Add a world body (`mb_sim.model.world.Body`, e.g. `mb_sim.model.spawn.spawn_body`'s)
        between two steps, at its pose and velocity. Everything else carries over exactly,
        warm-start impulses included; `reset()` puts the body back where it was added. A
        body whose name is taken (`entity_names`) is refused (ValueError), nothing changed."""
        if not isinstance(body, Body):
            raise TypeError(f"add_body takes a mb_sim.model.world.Body, got "
                            f"{type(body).__name__}")
        if body.name in self.entity_names():
            raise ValueError(f"body name {body.name!r} is taken (bodies, the robots and their "
                             "links have unique names)")
        world = self._current_world()
        self._rebuild(dataclasses.replace(world, bodies=(*world.bodies, body)), self._placed)

    def remove_body(self, name: str) -> None:
        """Remove a world body between two steps; everything else carries over exactly. An
        unknown name (KeyError) or a body held by a world joint (ValueError) is refused,
        nothing changed."""
        self.scene.body_index(name)
        world = self._current_world()
        holding = [j.name for j in world.joints if name in (j.parent, j.child)]
        if holding:
            raise ValueError(f"body {name!r} is held by world joint(s) "
                             f"{', '.join(map(repr, holding))}; it cannot be removed alone")
        self._rebuild(dataclasses.replace(
            world, bodies=tuple(b for b in world.bodies if b.name != name)), self._placed)

    def add_robot(self, model: Model, name: str, placement: Any = None) -> None:
        """Add a robot or URDF object between two steps: `model` named `name` (unique among
        `entity_names`), placed by `placement` (a `mb_sim.model.world.RobotPlacement`; None:
        at the origin), at its initial positions. Everything else carries over exactly;
        `reset()` puts it back where it was added. On error nothing changes."""
        if not isinstance(model, Model):
            raise TypeError(f"add_robot takes a mb_sim.model.Model, got {type(model).__name__}")
        if not isinstance(name, str) or not name or name in self.entity_names():
            raise ValueError(f"robot name {name!r} is empty or taken (bodies, the robots and "
                             "their links have unique names)")
        placed = (*self._placed, Placed(model, name, placement, name))
        self._rebuild(self._current_world(), placed)

    def remove_robot(self, name: str) -> None:
        """Remove a robot or URDF object between two steps; everything else carries over
        exactly. An unknown name is refused (KeyError), nothing changed."""
        self.robot(name)
        self._rebuild(self._current_world(), tuple(p for p in self._placed if p.name != name))

    def set_body_state(self, name: str, xyz: object = None, quat_xyzw: object = None,
                       linear: object = None, angular: object = None) -> None:
        """Move a free body: position of its centre of mass (m) and/or orientation
        (x, y, z, w), linear (m/s) and/or angular (rad/s) velocity, world frame; what is not
        given stays. Its contacts start the next step without warm start; every other
        contact keeps its impulses. An unknown name (KeyError), a static body or a bad value
        (ValueError, TypeError) is refused, nothing changed."""
        i = self.scene.body_index(name)
        if not self.scene.arrays.bodies.dynamic[i]:
            raise ValueError(f"body {name!r} is static: it stays where the world puts it")
        args = StateArguments(None, self.body_names)
        p, r, v, w = args.body_state(name, xyz, quat_xyzw, linear, angular)
        st = self.state
        for target, value in ((st.body_pos[i], p), (st.body_quat[i], r),
                              (st.body_vel[i, :3], v), (st.body_vel[i, 3:], w)):
            if value is not None:
                target[:] = value
        ids = geom_identities(self.scene)
        geom_map = index_map(ids, [None if x == ("body", name) else x for x in ids])
        carry_state(st.copy(), st, np.arange(len(self.body_names)), geom_map, len(ids))
        self._contacts = None

    def _current_world(self) -> World:
        if self.world is not None:
            return self.world
        return World(gravity=self.gravity, ground=None, robots=(), bodies=(),
                     joints=(), solver=SolverSettings(), source="<no world>")

    def _rebuild(self, world: World, placed: Sequence[Placed]) -> None:
        """Compile the scene of `world` and the trees `placed` (the options as they are) and
        carry the state, the initial state and the state before the last step over by the
        names of the bodies and trees."""
        self._overlaps.key = self._trees_key(placed)
        scene = compile_scene(placed, world, self.dt, self.integrator, self.gravity,
                              self._overlaps)
        arrays = scene.arrays._replace(options=self.options)
        scene = dataclasses.replace(scene, arrays=arrays)
        geom_map = index_map(geom_identities(self.scene), geom_identities(scene))
        body_map = index_map(scene.body_names, self.scene.body_names)
        new_names = [p.name for p in placed]
        tree_map = np.array([new_names.index(p.name) if p.name in new_names else -1
                             for p in self._placed], dtype=np.int64)
        trees = TreeMap(self.scene.arrays.tree, arrays.tree, tree_map)
        old_data = self._data
        data = allocate_data(arrays, max(old_data.contacts.depth.shape[0],
                                         4 * len(scene.geom_names)))
        data.joints.stats[:] = old_data.joints.stats
        fresh = self._fresh_trees(placed, scene, data)

        def carried(old: State) -> State:
            new = fresh.copy()
            carry_state(old, new, body_map, geom_map, len(scene.geom_names), trees)
            return new

        state, initial = carried(self.state), carried(self._initial)
        before = carried(State(*old_data.before))
        for name, value in zip(before.arrays()._fields, before.arrays()):
            np.copyto(getattr(data.before, name), value)
        old_views = self._robots
        self._clamp_warned = set()  # joints are numbered anew
        self.world, self.scene, self._data, self._placed = world, scene, data, tuple(placed)
        self.state, self._initial = state, initial
        self._contacts = Contacts.empty()
        self._sensors.rescene(scene, [p.model for p in placed], tree_map)
        self._m = scene_record(arrays)
        self._make_views()
        self._sensing.rescene()
        for name, drive in list(self.drives.items()):  # the same drives, on the new views
            if name in self._robots:
                drive.attach(self._robots[name])
            else:
                del self.drives[name]
        for name in [n for n in self.gazebo if n not in self._robots]:
            del self.gazebo[name]
        self._gazebo_blocks([p for p in placed if p.name not in old_views])
        for name, view in self._robots.items():  # gains set and warnings given carry over
            if name in old_views:
                view._servos.custom = old_views[name]._servos.custom
                view._effort_warned = old_views[name]._effort_warned
        self._bind()

    def _fresh_trees(self, placed: Sequence[Placed], scene: CompiledScene,
                     data: Data) -> State:
        """The state of a new scene with the trees that are new at their initial positions
        (those that stay are carried over on top of it)."""
        fresh = self._new_state(scene, data)
        tree = scene.arrays.tree
        fresh.q[:] = reference_state(placed, tree)
        fresh.target[:, 0] = np.where(tree.joint_type < BALL_X, fresh.q[tree.qadr], 0.0)
        return fresh


__all__ = ["SceneChanges"]
