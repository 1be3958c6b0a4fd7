"""The simulation: state, stepping pipeline, free rigid bodies, and the scene they live in."""

from mb_sim.sim.simulation import Contacts, Simulation
from mb_sim.sim.state import State

__all__ = ["Contacts", "Simulation", "State"]
