"""mb_sim: articulated-body and impulse-based physics for robots, with a ROS 2 node on top.

The physics is a plain Python library: `load_urdf` compiles a robot, `aba`/`rnea`/`crba`/
`hybrid` are its dynamics, and `Simulation` steps robot, environment bodies and contacts.

Names are imported when first used (PEP 562), so `import mb_sim.ros...` costs nothing until
the physics is needed: the ROS executables take over SIGINT and SIGTERM before the heavy
imports (`mb_sim.ros.process.signals`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mb_sim.dynamics import aba, crba, hybrid, rnea
    from mb_sim.errors import ModelError, SimulationError, WorldError
    from mb_sim.model import Geometry, Model, load_urdf
    from mb_sim.model.world import World, load_world
    from mb_sim.sim import Contacts, Simulation, State

_HOME = {
    "aba": "mb_sim.dynamics", "crba": "mb_sim.dynamics", "hybrid": "mb_sim.dynamics",
    "rnea": "mb_sim.dynamics", "ModelError": "mb_sim.errors", "SimulationError": "mb_sim.errors",
    "WorldError": "mb_sim.errors", "Geometry": "mb_sim.model", "Model": "mb_sim.model",
    "load_urdf": "mb_sim.model", "World": "mb_sim.model.world",
    "load_world": "mb_sim.model.world", "Contacts": "mb_sim.sim", "Simulation": "mb_sim.sim",
    "State": "mb_sim.sim",
}

__all__ = [
    "Contacts", "Geometry", "Model", "ModelError", "Simulation", "SimulationError", "State",
    "World", "WorldError", "aba", "crba", "hybrid", "load_urdf", "load_world", "rnea",
]


def __getattr__(name: str) -> Any:
    """A public name from its module, or a subpackage (`mb_sim.sim`), imported on first use."""
    if name in _HOME:
        value = getattr(import_module(_HOME[name]), name)
    elif not name.startswith("__"):
        try:
            value = import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'mb_sim' has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module 'mb_sim' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
