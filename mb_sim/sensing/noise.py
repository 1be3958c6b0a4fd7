"""Sensor noise that replays: a reading's noise is a function of the sensor's seed, its name
and the reading's tick, never of how often or in which order sensors were read.

Tick k of a sensor of rate f is the reading of simulated time k / f (`tick`); its noise comes
from a PCG64 generator seeded with the entropy (seed, a 64-bit hash of the name, k)
(numpy's SeedSequence), so a recorded run, replayed, draws the same numbers, and two sensors
never share a stream.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from mb_sim.model.sensors import Noise


def tick(time: float, rate: float) -> int:
    """The tick of a reading at simulated time `time` (s) of a sensor of `rate` (Hz): the
    last k with k / rate <= time (to a nanosecond)."""
    return math.floor(time * rate + 1e-9 * rate)


def generator(seed: int, name: str, k: int) -> np.random.Generator:
    """The random stream of tick k of the sensor `name` seeded with `seed`."""
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed & (2**64 - 1),
                                                                       key, k])))


def add_noise(values: np.ndarray, noise: Noise, seed: int, name: str, k: int) -> None:
    """values += bias + N(0, stddev^2), in place, drawn for tick k (nothing when both are 0)."""
    if noise.stddev > 0.0:
        values += generator(seed, name, k).normal(noise.bias, noise.stddev, values.shape)
    elif noise.bias != 0.0:
        values += noise.bias


__all__ = ["add_noise", "generator", "tick"]
