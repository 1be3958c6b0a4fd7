"""Robot and world descriptions, validated and compiled into read-only models."""

from mb_sim.model.geometry import Geometry
from mb_sim.model.model import Model
from mb_sim.model.urdf import load_urdf
from mb_sim.model.world import check_initial_positions

__all__ = ["Geometry", "Model", "check_initial_positions", "load_urdf"]
