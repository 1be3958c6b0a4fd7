"""Errors raised while loading robot and world descriptions."""


class ModelError(ValueError):
    """A URDF that cannot be turned into a model; the message names the file, element and value."""


class WorldError(ValueError):
    """A world file that cannot be loaded; the message names the file, key path and value."""


class SimulationError(RuntimeError):
    """A step produced a non-finite state; the message names the joint or body and the time.
    The simulation is left in the state of the step before."""


class SpawnError(ValueError):
    """A spawn request that cannot be served; `problem` names its kind as the result codes of
    simulation_interfaces do (`mb_sim.model.spawn.PROBLEMS`), the message the file, field or
    element and the value."""

    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem
