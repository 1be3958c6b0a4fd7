"""The arguments `Simulation` accepts, checked before anything changes (SI units; the README's
"Physics and Python API" lists them): the step, gravity, and the bounds of joint states and
efforts. Bounds of positions, speeds and gravity are those of the world file
(`mb_sim.model.world`)."""

from __future__ import annotations

import logging
import math
import numbers
import reprlib

import numpy as np

from mb_sim.model.world import GRAVITY as GRAVITY_BOUND
from mb_sim.model.world import POSITION, SPEED, SPIN

log = logging.getLogger("mb_sim")

DT_RANGE = (1e-6, 0.05)  # s
DT_WARN = 0.01  # s: a warning above this step
LIMIT_TOLERANCE = 1e-3  # rad or m that set_state accepts beyond a joint limit
EFFORT = 1e6  # N m or N: the effort limit of a joint whose URDF gives none
# |q| <= POSITION (rad or m), |qd| <= SPIN rad/s (revolute) or SPEED m/s (prismatic),
# gravity components within +-GRAVITY_BOUND m/s^2: the bounds of the world file


def show(value: object) -> str:
    """A value for a message, never longer than about 80 characters."""
    text = reprlib.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_dt(dt: object) -> float:
    """dt as a float: a number of seconds within DT_RANGE (a warning above DT_WARN)."""
    if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, numbers.Real):
        raise TypeError(f"dt must be a number of seconds, got {show(dt)} "
                        f"({type(dt).__name__})")
    value = float(dt)
    lo, hi = DT_RANGE
    if not (math.isfinite(value) and lo <= value <= hi):
        raise ValueError(f"dt must be within [{lo:g}, {hi:g}] s, got {value!r}")
    if value > DT_WARN:
        log.warning("dt = %g s is above %g s: contacts and joint limits may jitter or "
                    "blow up (raising SimulationError); 0.001 s is the default",
                    value, DT_WARN)
    return value


def check_gravity(gravity: object, source: str = "gravity") -> np.ndarray:
    """gravity as an array of 3 finite numbers, each within +-GRAVITY_BOUND m/s^2."""
    allowed = f"3 numbers [x, y, z] in m/s^2, each within +-{GRAVITY_BOUND:g}"
    try:
        g = np.asarray(gravity)
    except (TypeError, ValueError):
        g = np.asarray(None)
    if g.dtype.kind not in "iuf":
        raise TypeError(f"{source} must be {allowed}, got {show(gravity)}")
    if g.shape != (3,):
        raise ValueError(f"{source} must be {allowed}, got {g.size} value(s): {show(gravity)}")
    g = g.astype(float)
    if not (np.all(np.isfinite(g)) and np.all(np.abs(g) <= GRAVITY_BOUND)):
        raise ValueError(f"{source} must be {allowed}, got {show(gravity)}")
    return g


__all__ = ["DT_RANGE", "DT_WARN", "EFFORT", "LIMIT_TOLERANCE", "POSITION", "SPEED", "SPIN",
           "check_dt", "check_gravity", "show"]
