"""The simulation: state, stepping pipeline, free rigid bodies, and the scene they live in."""

from mb_sim.collision.contacts import Contacts
from mb_sim.sim.simulation import Simulation
from mb_sim.sim.state import State

__all__ = ["Contacts", "Simulation", "State"]
