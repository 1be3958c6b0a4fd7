"""mb_sim: articulated-body and impulse-based physics for robots, with a ROS 2 node on top.

The physics is a plain Python library: `load_urdf` compiles a robot, `aba`/`rnea`/`crba`/
`hybrid` are its dynamics, and `Simulation` steps robot, environment bodies and contacts.
"""

from mb_sim.dynamics import aba, crba, hybrid, rnea
from mb_sim.errors import ModelError, SimulationError, WorldError
from mb_sim.model import Geometry, Model, load_urdf
from mb_sim.model.world import World, load_world
from mb_sim.sim import Contacts, Simulation, State

__all__ = [
    "Contacts",
    "Geometry",
    "Model",
    "ModelError",
    "Simulation",
    "SimulationError",
    "State",
    "World",
    "WorldError",
    "aba",
    "crba",
    "hybrid",
    "load_urdf",
    "load_world",
    "rnea",
]
