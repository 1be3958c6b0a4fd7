"""A sweep spec: which simulation, which parameters vary and how, what to record, where to.

```yaml
robot: ../urdf/arm.urdf              # optional; relative to this file (or the package's share)
floating_base: false                 # optional
world: ../config/worlds/table.yaml   # optional (the world may name its own robot)
dt: 0.001                            # s (default 0.001)
integrator: semi_implicit_euler      # or rk4
duration: 2.0                        # simulated seconds per scenario
controller:                          # optional; efforts applied every period
  period: 0.01                       # s between two controller calls (default: dt)
  pd: {kp: 60.0, kd: 6.0, target: {joint2: 0.6}, gravity_compensation: true}
  # or function: my_package.module:controller, called as f(sim, controller) -> efforts
parameters:
  grid:                              # every combination of the listed values
    world.ground.friction: [0.4, 0.8]
    world.bodies.box_red.mass: [0.1, 0.3, 0.5]
  random:                            # `count` draws for each grid point, seeded
    count: 8
    seed: 1
    values:
      initial.q.joint1: {uniform: [-0.3, 0.3]}
      controller.pd.kp: {loguniform: [20, 200]}
      robot.joint.joint2.damping: {normal: [0.5, 0.05]}
      world.bodies.ball.restitution: {choice: [0.0, 0.5, 0.9]}
metrics: [final_q, final_qd, final_poses, contacts, energy, my_package.metrics:peak]
output: results.parquet              # .parquet (pyarrow) or .csv; relative to this file
```

Parameter names (the first word says what they change):
- `world.<path>`: a value of the world file; list items by index or, where they have one, by
  `name` (`world.bodies.box_red.mass`, `world.gravity.2`, `world.robot.initial_positions.j1`);
- `robot.link.<link>.mass` (the link's inertia scales with it), `robot.joint.<joint>.<attr>`
  with attr damping or friction (`<dynamics>`) or effort (`<limit>`): the URDF;
- `initial.q.<joint>`, `initial.qd.<joint>`: the start state of a joint;
- `controller.<path>`: a value of the controller section (gains, targets, a user function's
  own settings).

Scenarios are numbered in order: the grid's combinations (the first parameter varies
slowest), each with its `count` random draws, all drawn here from one generator seeded with
`seed`, so the list depends on the spec alone.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

TOP_KEYS = {"robot", "floating_base", "world", "dt", "integrator", "duration", "controller",
            "parameters", "metrics", "output"}
DISTRIBUTIONS = ("uniform", "loguniform", "normal", "choice")
NAMESPACES = ("world", "robot", "initial", "controller")
BUILTIN_METRICS = ("final_q", "final_qd", "final_poses", "contacts", "energy")


class SpecError(ValueError):
    """A sweep spec that cannot be run: the message names the file, key and value."""


@dataclass
class Spec:
    """A checked spec with its files read (so that it runs anywhere: on this machine or on
    the workers of a cluster, which need mb_sim but not the files)."""

    source: str
    duration: float
    dt: float = 0.001
    integrator: str = "semi_implicit_euler"
    urdf: str | None = None
    """The robot's URDF text."""
    urdf_dir: str | None = None
    floating_base: bool = False
    world: dict | None = None
    world_dir: str | None = None
    controller: dict = field(default_factory=dict)
    grid: dict[str, list] = field(default_factory=dict)
    random: dict[str, dict] = field(default_factory=dict)
    count: int = 1
    seed: int = 0
    metrics: tuple[str, ...] = ("final_q", "energy")
    output: str | None = None

    def scenarios(self) -> list[dict[str, Any]]:
        """Every scenario's parameter values, in scenario order."""
        rng = np.random.default_rng(self.seed)
        names = list(self.grid)
        out = []
        for point in itertools.product(*(self.grid[n] for n in names)):
            for _ in range(self.count):
                values = dict(zip(names, point, strict=True))
                for name, dist in self.random.items():
                    values[name] = draw(rng, dist)
                out.append(values)
        return out


def draw(rng: np.random.Generator, dist: dict) -> Any:
    (kind, args), = dist.items()
    if kind == "uniform":
        return float(rng.uniform(args[0], args[1]))
    if kind == "loguniform":
        return float(math.exp(rng.uniform(math.log(args[0]), math.log(args[1]))))
    if kind == "normal":
        return float(rng.normal(args[0], args[1]))
    return args[int(rng.integers(len(args)))]


def load_spec(source: str | os.PathLike[str] | dict, base_dir: str | None = None) -> Spec:
    """A Spec from a YAML file or a dict (paths relative to base_dir, default: the file's
    folder or the current one); SpecError naming the file, key and value."""
    if isinstance(source, dict):
        data, label = source, "<dict>"
        folder = Path(base_dir or os.getcwd())
    else:
        path = Path(source)
        if not path.is_file():
            raise SpecError(f"sweep spec {str(path)!r} not found")
        label = str(path)
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            raise SpecError(f"{label}: not valid YAML: {e}") from e
        folder = Path(base_dir) if base_dir else path.resolve().parent
    return _Checker(label, folder).spec(data)


class _Checker:
    def __init__(self, label: str, folder: Path):
        self.label = label
        self.folder = folder

    def fail(self, key: str, message: str, value: Any = None) -> None:
        shown = "" if value is None else f" (got {str(value)[:80]!r})"
        raise SpecError(f"{self.label}: {key}: {message}{shown}")

    def number(self, key: str, value: Any, low: float, high: float) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not low <= value <= high:
            self.fail(key, f"must be a number in [{low:g}, {high:g}]", value)
        return float(value)

    def file(self, key: str, value: Any) -> Path:
        if not isinstance(value, str) or not value:
            self.fail(key, "must be a file path", value)
        path = Path(value)
        if not path.is_absolute():
            path = self.folder / path
        if not path.is_file():
            from mb_sim.ros.process.paths import share_dir

            shared = share_dir() / value
            if not shared.is_file():
                self.fail(key, f"no such file (looked in {self.folder} and {share_dir()})",
                          value)
            path = shared
        return path

    def spec(self, data: Any) -> Spec:
        if not isinstance(data, dict):
            self.fail("", "a sweep spec is a mapping of keys " + ", ".join(sorted(TOP_KEYS)),
                      data)
        for key in data:
            if key not in TOP_KEYS:
                self.fail(str(key), f"unknown key; known: {', '.join(sorted(TOP_KEYS))}")
        if "duration" not in data:
            self.fail("duration", "missing: simulated seconds per scenario")
        spec = Spec(source=self.label,
                    duration=self.number("duration", data["duration"], 0.0, 1e6),
                    dt=self.number("dt", data.get("dt", 0.001), 1e-6, 0.05))
        integrator = data.get("integrator", spec.integrator)
        if integrator not in ("semi_implicit_euler", "rk4"):
            self.fail("integrator", "must be semi_implicit_euler or rk4", integrator)
        spec.integrator = integrator
        if "robot" in data:
            path = self.file("robot", data["robot"])
            spec.urdf, spec.urdf_dir = path.read_text(), str(path.parent)
        spec.floating_base = bool(data.get("floating_base", False))
        if "world" in data:
            path = self.file("world", data["world"])
            world = yaml.safe_load(path.read_text())
            if not isinstance(world, dict):
                self.fail("world", "the world file is not a mapping", data["world"])
            spec.world_dir = str(path.parent)
            robot = world.get("robot") or {}
            if spec.urdf is None and isinstance(robot, dict) and robot.get("urdf"):
                urdf = Path(robot["urdf"])
                urdf = urdf if urdf.is_absolute() else path.parent / urdf
                spec.urdf, spec.urdf_dir = urdf.read_text(), str(urdf.parent)
                spec.floating_base = spec.floating_base or bool(robot.get("floating"))
            if isinstance(robot, dict):
                robot.pop("urdf", None)
            spec.world = world
        if spec.urdf is None and spec.world is None:
            self.fail("robot", "a spec needs a robot, a world or both")
        spec.controller = self.controller(data.get("controller") or {})
        self.parameters(spec, data.get("parameters") or {})
        spec.metrics = self.metrics(data.get("metrics", list(spec.metrics)))
        if data.get("output") is not None:
            out = data["output"]
            if not isinstance(out, str) or not out.endswith((".parquet", ".csv")):
                self.fail("output", "must be a path ending in .parquet or .csv", out)
            spec.output = str(Path(out) if Path(out).is_absolute() else self.folder / out)
        return spec

    def controller(self, c: Any) -> dict:
        if not isinstance(c, dict):
            self.fail("controller", "must be a mapping", c)
        unknown = set(c) - {"period", "pd", "function"}
        if unknown:
            self.fail(f"controller.{min(unknown)}", "unknown key; known: period, pd, "
                      "function")
        if "pd" in c and "function" in c:
            self.fail("controller", "give either pd or function, not both")
        if "period" in c:
            self.number("controller.period", c["period"], 1e-6, 1e6)
        if "pd" in c:
            pd = c["pd"]
            if not isinstance(pd, dict):
                self.fail("controller.pd", "must be a mapping of kp, kd, target, "
                          "gravity_compensation", pd)
            unknown = set(pd) - {"kp", "kd", "target", "gravity_compensation"}
            if unknown:
                self.fail(f"controller.pd.{min(unknown)}", "unknown key; known: kp, kd, "
                          "target, gravity_compensation")
        if "function" in c:
            self.import_path("controller.function", c["function"])
        return copy.deepcopy(c)

    def import_path(self, key: str, value: Any) -> None:
        if not isinstance(value, str) or value.count(":") != 1 or not all(value.split(":")):
            self.fail(key, "must be an import path module:function", value)

    def parameters(self, spec: Spec, p: Any) -> None:
        if not isinstance(p, dict) or set(p) - {"grid", "random"}:
            self.fail("parameters", "must be a mapping with grid and/or random", p)
        grid = p.get("grid") or {}
        if not isinstance(grid, dict):
            self.fail("parameters.grid", "must map parameter names to lists of values", grid)
        for name, values in grid.items():
            self.name(f"parameters.grid.{name}", name)
            if not isinstance(values, list) or not values:
                self.fail(f"parameters.grid.{name}", "must be a non-empty list of values",
                          values)
        spec.grid = {str(k): list(v) for k, v in grid.items()}
        r = p.get("random") or {}
        if not isinstance(r, dict) or set(r) - {"count", "seed", "values"}:
            self.fail("parameters.random", "must be a mapping of count, seed, values", r)
        if r:
            spec.count = int(self.number("parameters.random.count", r.get("count", 1), 1, 1e7))
            spec.seed = int(self.number("parameters.random.seed", r.get("seed", 0), 0, 2**63))
            values = r.get("values") or {}
            if not isinstance(values, dict):
                self.fail("parameters.random.values", "must map names to distributions",
                          values)
            for name, dist in values.items():
                key = f"parameters.random.values.{name}"
                self.name(key, name)
                if name in spec.grid:
                    self.fail(key, "is also in the grid")
                self.distribution(key, dist)
            spec.random = {str(k): dict(v) for k, v in values.items()}

    def name(self, key: str, name: Any) -> None:
        if not isinstance(name, str) or name.split(".")[0] not in NAMESPACES \
                or len(name.split(".")) < 2:
            self.fail(key, "a parameter name starts with " + ", ".join(NAMESPACES) +
                      " and a dot (see mb_sim.sweep.spec)", name)

    def distribution(self, key: str, dist: Any) -> None:
        if not isinstance(dist, dict) or len(dist) != 1 or next(iter(dist)) not in DISTRIBUTIONS:
            self.fail(key, "must be one of {uniform: [low, high]}, {loguniform: [low, high]}, "
                      "{normal: [mean, std]}, {choice: [values]}", dist)
        (kind, args), = dist.items()
        if not isinstance(args, list) or not args:
            self.fail(f"{key}.{kind}", "must be a list", args)
        if kind != "choice":
            ok = len(args) == 2 and all(isinstance(a, (int, float)) and not isinstance(a, bool)
                                        and math.isfinite(a) for a in args)
            if not ok or (kind == "loguniform" and min(args) <= 0) or \
                    (kind == "normal" and args[1] < 0) or (kind != "normal" and args[0] > args[1]):
                self.fail(f"{key}.{kind}", "needs two finite numbers (low <= high; loguniform "
                          "> 0; normal: mean, std >= 0)", args)

    def metrics(self, metrics: Any) -> tuple[str, ...]:
        if not isinstance(metrics, list) or not metrics:
            self.fail("metrics", "must be a list of " + ", ".join(BUILTIN_METRICS) +
                      " or module:function", metrics)
        for m in metrics:
            if m not in BUILTIN_METRICS:
                self.import_path("metrics", m)
        return tuple(metrics)
