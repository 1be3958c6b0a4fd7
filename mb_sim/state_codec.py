"""A `Simulation` state as JSON text and back, bit for bit and without pickle (a bag from
someone else must not run code when it is replayed).

Arrays keep dtype, shape and bytes; floats go through `float.hex`; dicts keep their keys,
tuples and lists their kind. Used for the state at the start of a recording.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import numpy as np


def _encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return {"nd": data.dtype.str, "shape": list(data.shape),
                "b64": base64.b64encode(data.tobytes()).decode()}
    if isinstance(value, (bool, np.bool_)):
        return {"bool": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"int": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"float": float(value).hex()}
    if value is None or isinstance(value, str):
        return {"str": value}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, list):
        return {"list": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot encode a {type(value).__name__} of the simulation state")


def _decode(value: Any) -> Any:
    if "nd" in value:
        raw = base64.b64decode(value["b64"])
        return np.frombuffer(raw, dtype=np.dtype(value["nd"])).reshape(value["shape"]).copy()
    (kind, body), = value.items()
    if kind == "bool":
        return bool(body)
    if kind == "int":
        return int(body)
    if kind == "float":
        return float.fromhex(body)
    if kind == "str":
        return body
    if kind == "tuple":
        return tuple(_decode(v) for v in body)
    if kind == "list":
        return [_decode(v) for v in body]
    if kind == "dict":
        return {_decode(k): _decode(v) for k, v in body}
    raise ValueError(f"unknown kind {kind!r} in an encoded state")


def state_to_json(state: Any) -> str:
    """JSON text of a state returned by `Simulation.save_state()` (a dataclass)."""
    fields = {f.name: _encode(getattr(state, f.name)) for f in dataclasses.fields(state)}
    return json.dumps({"type": f"{type(state).__module__}.{type(state).__qualname__}",
                       "fields": fields})


def state_from_json(text: str, like: Any) -> Any:
    """The state encoded by `state_to_json`, as the same dataclass as `like`
    (e.g. `sim.save_state()` of the simulation that will restore it). Fields the text lacks
    (a state written before they existed) take like's values."""
    data = json.loads(text)
    values = {name: _decode(v) for name, v in data["fields"].items()}
    for f in dataclasses.fields(like):
        if f.name not in values:
            values[f.name] = getattr(like, f.name).copy()
    return type(like)(**values)
