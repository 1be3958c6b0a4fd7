"""Sensors that see: lidars, depth and colour cameras, and IMUs, read from a simulation's
state by casting rays into its collision geometry (no GPU). `SensorSpec` declares one,
`Simulation.add_sensor` mounts it, `Simulation.read_sensor` reads it (docs/sensors.md)."""

from mb_sim.model.sensors import KINDS, Noise, SensorSpec
from mb_sim.sensing.suite import ImuReading

__all__ = ["KINDS", "ImuReading", "Noise", "SensorSpec"]
