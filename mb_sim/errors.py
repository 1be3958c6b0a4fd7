"""Errors raised while loading robot and world descriptions."""


class ModelError(ValueError):
    """A URDF that cannot be turned into a model; the message names the file, element and value."""


class WorldError(ValueError):
    """A world file that cannot be loaded; the message names the file, key path and value."""
