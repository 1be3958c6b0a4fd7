"""One scenario of a sweep: the spec's simulation with its parameter values, run and measured.

`run_scenario(spec, index, values)` is a pure function of its arguments: it builds the robot
(URDF text with the `robot.*` values written in), the world (the world file with the `world.*`
values), the start state (`initial.*`) and the controller (`controller.*`), runs `duration`
seconds and returns one row, {column: value}. The same arguments give the same row, bit for
bit, in any process and on any machine with the same mb_sim and numpy.

Metrics (columns):
- final_q, final_qd: `q.<joint>`, `qd.<joint>` at the end;
- final_poses: `<body>.x|y|z|qx|qy|qz|qw` of every free body, and `base.*` of a floating base;
- contacts: `contacts.final`, `contacts.mean`, `contacts.max`, counted after each controller
  period;
- energy: `energy.initial`, `energy.final` (`Simulation.energy`);
- module:function: called as f(sim) at the end; a number gives the column `function`, a
  mapping {name: number} the columns `function.name`.
`error` is empty, or the message of a SimulationError that stopped the run (the metrics then
describe the state it stopped at).
"""

from __future__ import annotations

import copy
import importlib
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import numpy as np

import mb_sim
from mb_sim.sweep.spec import Spec, SpecError

POSE = ("x", "y", "z", "qx", "qy", "qz", "qw")


def run_scenario(spec: Spec, index: int, values: dict[str, Any]) -> dict[str, Any]:
    """The row of scenario `index` with parameter `values` (see the module docstring)."""
    sim, controller = build(spec, values)
    row: dict[str, Any] = {"scenario": index, **values}
    counts: list[int] = []
    energy0 = sim.energy() if "energy" in spec.metrics else math.nan
    period = max(1, round(controller.get("period", spec.dt) / spec.dt))
    total = round(spec.duration / spec.dt)
    law = control_law(sim, controller)
    error = ""
    done = 0
    try:
        while done < total:
            if law is not None:
                sim.set_effort(law(sim))
            n = min(period, total - done)
            sim.step(n)
            done += n
            counts.append(len(sim.contacts))
    except mb_sim.SimulationError as e:
        error = str(e)
    for name in spec.metrics:
        row.update(metric(name, sim, counts, energy0))
    row["error"] = error
    return row


def metric(name: str, sim: mb_sim.Simulation, counts: list[int], energy0: float,
           ) -> dict[str, Any]:
    if name == "final_q":
        return {f"q.{j}": float(v) for j, v in zip(sim.joint_names, sim.joint_positions,
                                                   strict=True)}
    if name == "final_qd":
        return {f"qd.{j}": float(v) for j, v in zip(sim.joint_names, sim.joint_velocities,
                                                    strict=True)}
    if name == "final_poses":
        out = {}
        poses = [(b, sim.body_pose(b)) for b in sim.body_names]
        if sim.floating_base:
            poses.append(("base", sim.base_pose()))
        for body, (pos, quat) in poses:
            out.update({f"{body}.{k}": float(v) for k, v in zip(POSE, [*pos, *quat],
                                                                strict=True)})
        return out
    if name == "contacts":
        return {"contacts.final": counts[-1] if counts else 0,
                "contacts.mean": float(np.mean(counts)) if counts else 0.0,
                "contacts.max": max(counts, default=0)}
    if name == "energy":
        return {"energy.initial": energy0, "energy.final": sim.energy()}
    function = load(name)
    value = function(sim)
    label = name.split(":")[1]
    if isinstance(value, dict):
        return {f"{label}.{k}": _plain(v) for k, v in value.items()}
    return {label: _plain(value)}


def _plain(value: Any) -> Any:
    """Numbers as Python floats/ints (numpy scalars are not written alike by every format)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def load(path: str) -> Callable[..., Any]:
    """The function of an import path `module:function`."""
    module, name = path.split(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise SpecError(f"cannot import {path!r}: {e} (the module must be importable where "
                        "the scenarios run: on a cluster, on every worker)") from e


# --- building the simulation ---------------------------------------------------------------

def build(spec: Spec, values: dict[str, Any]) -> tuple[mb_sim.Simulation, dict]:
    """The simulation and the controller settings of one scenario."""
    world = copy.deepcopy(spec.world) if spec.world is not None else None
    urdf = ET.fromstring(spec.urdf) if spec.urdf is not None else None
    controller = copy.deepcopy(spec.controller)
    initial: dict[str, dict[str, float]] = {"q": {}, "qd": {}}
    for name, value in values.items():
        head, _, rest = name.partition(".")
        if head == "world":
            if world is None:
                raise SpecError(f"parameter {name}: the spec has no world")
            set_path(world, rest.split("."), value, name)
        elif head == "controller":
            set_path(controller, rest.split("."), value, name)
        elif head == "robot":
            if urdf is None:
                raise SpecError(f"parameter {name}: the spec has no robot")
            set_urdf(urdf, rest.split("."), value, name)
        elif head == "initial":
            kind, _, joint = rest.partition(".")
            if kind not in initial or not joint:
                raise SpecError(f"parameter {name}: initial.q.<joint> or initial.qd.<joint>")
            initial[kind][joint] = float(value)
    model = None
    if urdf is not None:
        model = mb_sim.load_urdf(ET.tostring(urdf, encoding="unicode"),
                                 floating_base=spec.floating_base,
                                 package_dirs=[spec.urdf_dir] if spec.urdf_dir else ())
    loaded = mb_sim.load_world(world, base_dir=spec.world_dir) if world is not None else None
    sim = mb_sim.Simulation(model, world=loaded, dt=spec.dt, integrator=spec.integrator)
    if initial["q"] or initial["qd"]:
        sim.set_initial_state(q=initial["q"] or None, qd=initial["qd"] or None)
    return sim, controller


def set_path(data: Any, path: list[str], value: Any, name: str) -> None:
    """data[path] = value; list items by index or by their `name`."""
    for i, key in enumerate(path):
        last = i == len(path) - 1
        if isinstance(data, list):
            k = _item(data, key, name)
            if last:
                data[k] = value
            else:
                data = data[k]
        elif isinstance(data, dict):
            if last:
                data[key] = value
            else:
                if data.get(key) is None:
                    data[key] = {}
                data = data[key]
        else:
            raise SpecError(f"parameter {name}: {'.'.join(path[:i])} is not a mapping or list")


def _item(items: list, key: str, name: str) -> int:
    if key.lstrip("-").isdigit() and -len(items) <= int(key) < len(items):
        return int(key)
    for k, item in enumerate(items):
        if isinstance(item, dict) and item.get("name") == key:
            return k
    raise SpecError(f"parameter {name}: no item {key!r} (an index or the name of one)")


def set_urdf(robot: ET.Element, path: list[str], value: Any, name: str) -> None:
    """robot.link.<link>.mass (inertia scaled alike), robot.joint.<joint>.damping|friction|
    effort."""
    if len(path) != 3 or path[0] not in ("link", "joint"):
        raise SpecError(f"parameter {name}: robot.link.<link>.mass or "
                        "robot.joint.<joint>.damping|friction|effort")
    kind, element_name, attr = path
    element = next((e for e in robot.findall(kind) if e.get("name") == element_name), None)
    if element is None:
        raise SpecError(f"parameter {name}: the robot has no {kind} {element_name!r}")
    value = float(value)
    if kind == "link":
        mass = element.find("inertial/mass")
        if attr != "mass" or mass is None:
            raise SpecError(f"parameter {name}: a link's parameter is its mass (it needs an "
                            "<inertial>)")
        factor = value / float(mass.get("value"))
        mass.set("value", repr(value))
        inertia = element.find("inertial/inertia")
        if inertia is not None:
            for key, v in inertia.attrib.items():
                inertia.set(key, repr(float(v) * factor))
        return
    tag = {"damping": "dynamics", "friction": "dynamics", "effort": "limit"}.get(attr)
    if tag is None:
        raise SpecError(f"parameter {name}: a joint's parameters are damping, friction, effort")
    child = element.find(tag)
    if child is None:
        child = ET.SubElement(element, tag)
    child.set(attr, repr(value))


# --- control -------------------------------------------------------------------------------

def control_law(sim: mb_sim.Simulation, controller: dict) -> Callable | None:
    """The efforts law of the controller section: a joint PD, a user function, or none."""
    if "function" in controller:
        function = load(controller["function"])
        return lambda s: function(s, controller)
    if "pd" not in controller:
        return None
    pd = controller["pd"]
    model = sim.model
    names = sim.joint_names
    target = sim.joint_positions
    for joint, value in (pd.get("target") or {}).items():
        target[model.joint_index(joint)] = float(value)
    kp, kd = _per_joint(pd.get("kp", 0.0), names), _per_joint(pd.get("kd", 0.0), names)
    compensate = pd.get("gravity_compensation", True) and not model.floating_base
    limit = np.minimum(model.effort_limit, 1e6)
    zero = np.zeros(sim.nv)

    def law(s: mb_sim.Simulation) -> np.ndarray:
        q, qd = s.joint_positions, s.joint_velocities
        tau = kp * (target - q) - kd * qd
        if compensate:
            tau += mb_sim.rnea(model, q, zero, zero, gravity=s.gravity)
        return np.clip(tau, -limit, limit)

    return law


def _per_joint(value: Any, names: tuple[str, ...]) -> np.ndarray:
    if isinstance(value, dict):
        return np.array([float(value.get(n, 0.0)) for n in names])
    return np.full(len(names), float(value))
