"""The simulation_interfaces package that mb_sim speaks: every message, service and action with
the type hash, constants and defaults of the released package, so that a client built against
the real simulation_interfaces talks to mb_sim (DDS matches types by name and RIHS01 hash).

In the virtual environment the package is built by tools/build_interfaces.sh from the
definitions in tools/interfaces/simulation_interfaces; on a ROS 2 install it is the
distribution's. The expected values below were measured on simulation_interfaces 2.1.0 as
released (github.com/ros-simulation/simulation_interfaces, tag 2.1.0), built with the rosidl
generators of the ROS 2 Jazzy wheels: the hashes from its generated libraries, the constants
from its Python classes, the defaults from its type descriptions (share/<package>/*/*.json).
A type hash covers names, types and order of all fields, nested types included, but neither
constants nor default values, so those are checked on their own.
"""

from __future__ import annotations

import ctypes
import importlib
import json
from pathlib import Path

import pytest
import simulation_interfaces
from simulation_interfaces.msg import Result, SpawnResult

from mb_sim.model.spawn import PROBLEMS

EXPECTED_HASHES = {
    "msg/Bounds": "RIHS01_e8624fe51f0f5548197542697d924c5699ac7198f1e4c68e50c3ca2af73f5b3f",
    "msg/EntityCategory": "RIHS01_43bdf7933fddf75f6970f7a8fe7078524355d821d390b3954bb46ac36c03dfe1",
    "msg/EntityFilters": "RIHS01_8e7b12e8ea062f14c55de4877221fe1b7cd9749665a7ad8a4ab855fc4b148303",
    "msg/EntityInfo": "RIHS01_3b9a2e7fa00f9a59d325b6e47904044c421561a385682027c7fc06c359806319",
    "msg/EntityState": "RIHS01_2e0464a85eb80a939025075d6c20761eca6a4cb9d6baf2c0ba373467c8b598d0",
    "msg/NamedPose": "RIHS01_b32da2a039b1840f605ec025b7991a18efacac662fac272818d1ae6e2b12bc27",
    "msg/Resource": "RIHS01_2bb1939cf80f8d2f284afba53cbec60b5ff33759bd39b714128ea8867a34c51a",
    "msg/Result": "RIHS01_cf43a306adff3337a0a47143d8f5689933bc70a30478f13b077dc1fe3bc5ad17",
    "msg/SimulationState":
        "RIHS01_bb9f87ccdd98fba113052a512d9801e84ce732d0a2b3c2b0cb281828de36e415",
    "msg/SimulatorFeatures":
        "RIHS01_8b101c8529bc0ea3dcf056078254768f39832b9ef0adaf93bd5cea96c0de3305",
    "msg/SpawnEntity": "RIHS01_94a349a865ccf673c18c080520299c88c3d8d5f4842ecf1482d6c997ac4b69f9",
    "msg/SpawnResult": "RIHS01_dbc277304b6c24bfb2a631cea8f52e2b005d583ec0a6c86b11613f5ce6486da1",
    "msg/Spawnable": "RIHS01_8675aa686f0df1ed7874a6ec210fdce1ac1c07f4e49fc26ec7fb6fe729f6772e",
    "msg/TagsFilter": "RIHS01_5c3efc51e8ed04c266c09cb4691ec95b964cd410558e01d8c83646b038826b45",
    "msg/WorldResource": "RIHS01_e3b65ecf904b9b115673e4a343c6aa3d28c19e185a71228faa64b783afcf2403",
    "srv/DeleteEntity": "RIHS01_ff7e96a5b83dc8e2bb34b8b034480028b3a24d9f8376b2c0590bac3704be3e28",
    "srv/GetAvailableWorlds":
        "RIHS01_ce5589b5523f2732d1969a3c5a7e6b17a387091df8190c62f78d7fdd1109e3e3",
    "srv/GetCurrentWorld":
        "RIHS01_79ed4e910e1b7a1c9f7950ff758bfba3535bf0dec669054e8af115a099724ddd",
    "srv/GetEntities": "RIHS01_cb90004c48cd50f37732fb008e22c34c261dd680a723bf0f85d8437ea4498bf7",
    "srv/GetEntitiesStates":
        "RIHS01_0a76170d0c1c90e1eaf805cfab78ea801d1f82df309a28c1f0fae4b570f19754",
    "srv/GetEntityBounds":
        "RIHS01_17be8d36231178a5eed0de0344b55c19975581627a9aec30a4fee9926a35deed",
    "srv/GetEntityInfo": "RIHS01_953b7ab6bfc35063f5c9a72463c6ce489baa10249a7fa510926d342a34b0d29e",
    "srv/GetEntityState": "RIHS01_749c91f2a2353d98367b64f2995a0f5842ce92a08ec1ffb3e185540a91557fb5",
    "srv/GetNamedPoseBounds":
        "RIHS01_59fa8dd2c68ba6771160cc66a628ac99fa95e2748fa0a43c2cc62a2e5f3f6fdc",
    "srv/GetNamedPoses": "RIHS01_c3d12ab920115bfd4733f6d20516adc3968fb438538540997c37e200e02b04e3",
    "srv/GetSimulationState":
        "RIHS01_3362dcebee4b1afebbf9c4beee5c79c1455385aded62092a892d61fde8644f30",
    "srv/GetSimulatorFeatures":
        "RIHS01_abb9439c8cf196722a469fb6c68b44b484f198c2a1356ac38849a29c2a20a794",
    "srv/GetSpawnables": "RIHS01_3e25fd827d8bcbd9db5e36ccb190efa22d6f6313897861268ab923bf091a992a",
    "srv/LoadWorld": "RIHS01_87d0ded1bfddb40a74d0bedb963fdd592fbedb14d0057d597850404b73c338af",
    "srv/ResetSimulation":
        "RIHS01_4ce285d7ff9b8ac70dcc95161f32bf54c05a6f4b13427990e41ab40c36c39646",
    "srv/SetEntityInfo": "RIHS01_867fe2b6812f3e021859171f9b788560d66bb7079d640030baf6c0bb2dd2631e",
    "srv/SetEntityState": "RIHS01_fba636c91d38832dbd4f6896ffce54ff98fd9929962b0533546b56ce00f988ac",
    "srv/SetSimulationState":
        "RIHS01_a868b916dce49974f637ba252141258c4b07b0c06858b88af560e3eb6bfbcb30",
    "srv/SpawnEntities": "RIHS01_41703a359ee032bf4fc230f144f531705ba039a2e97edeae1f7997dd83b04857",
    "srv/SpawnEntity": "RIHS01_66860313e11009faddbfc8568e5d410d1a11607fe75eeb1308671dc0406fe3a7",
    "srv/StepSimulation": "RIHS01_913fe0653690ce6bf8f09f316e6a626747012e9fca31e26719910d417aa8565c",
    "srv/UnloadWorld": "RIHS01_ac7f9a73df1b5b15015d854c5ac552b7726506e22f886c6792804f0b7f88b30b",
    "action/SimulateSteps":
        "RIHS01_f0837c898e1219cd73bf4c041feab41e8c533e8e1057e982744dba7b093467eb",
}
EXPECTED_CONSTANTS = {
    "msg/Bounds": {"TYPE_EMPTY": 0, "TYPE_BOX": 1, "TYPE_CONVEX_HULL": 2, "TYPE_SPHERE": 3},
    "msg/EntityCategory": {
        "CATEGORY_OBJECT": 0, "CATEGORY_ROBOT": 1, "CATEGORY_HUMAN": 2,
        "CATEGORY_DYNAMIC_OBJECT": 4, "CATEGORY_STATIC_OBJECT": 5,
    },
    "msg/Result": {
        "RESULT_FEATURE_UNSUPPORTED": 0, "RESULT_OK": 1, "RESULT_NOT_FOUND": 2,
        "RESULT_INCORRECT_STATE": 3, "RESULT_OPERATION_FAILED": 4,
    },
    "msg/SimulationState": {
        "STATE_STOPPED": 0, "STATE_PLAYING": 1, "STATE_PAUSED": 2, "STATE_QUITTING": 3,
        "STATE_NO_WORLD": 4, "STATE_LOADING_WORLD": 5,
    },
    "msg/SimulatorFeatures": {
        "SPAWNING": 0, "DELETING": 1, "NAMED_POSES": 2, "POSE_BOUNDS": 3, "ENTITY_TAGS": 4,
        "ENTITY_BOUNDS": 5, "ENTITY_BOUNDS_BOX": 6, "ENTITY_BOUNDS_CONVEX": 7,
        "ENTITY_CATEGORIES": 8, "SPAWNING_RESOURCE_STRING": 9, "ENTITY_STATE_GETTING": 10,
        "ENTITY_STATE_SETTING": 11, "ENTITY_INFO_GETTING": 12, "ENTITY_INFO_SETTING": 13,
        "SPAWNABLES": 14, "SIMULATION_RESET": 20, "SIMULATION_RESET_TIME": 21,
        "SIMULATION_RESET_STATE": 22, "SIMULATION_RESET_SPAWNED": 23,
        "SIMULATION_STATE_GETTING": 24, "SIMULATION_STATE_SETTING": 25,
        "SIMULATION_STATE_PAUSE": 26, "STEP_SIMULATION_SINGLE": 31,
        "STEP_SIMULATION_MULTIPLE": 32, "STEP_SIMULATION_ACTION": 33, "WORLD_LOADING": 40,
        "WORLD_RESOURCE_STRING": 41, "WORLD_TAGS": 42, "WORLD_UNLOADING": 43,
        "WORLD_INFO_GETTING": 44, "AVAILABLE_WORLDS": 45, "SPAWNING_ENTITIES": 50,
    },
    "msg/SpawnResult": {
        "NAME_NOT_UNIQUE": 101, "NAME_INVALID": 102, "UNSUPPORTED_FORMAT": 103,
        "NO_RESOURCE": 104, "NAMESPACE_INVALID": 105, "RESOURCE_PARSE_ERROR": 106,
        "MISSING_ASSETS": 107, "UNSUPPORTED_ASSETS": 108, "INVALID_POSE": 109,
    },
    "msg/TagsFilter": {"FILTER_MODE_ANY": 0, "FILTER_MODE_ALL": 1},
    "srv/GetAvailableWorlds.Response": {"DEFAULT_SOURCES_FAILED": 101},
    "srv/GetCurrentWorld.Response": {"NO_WORLD_LOADED": 101},
    "srv/LoadWorld.Response": {
        "UNSUPPORTED_FORMAT": 101, "NO_RESOURCE": 102, "RESOURCE_PARSE_ERROR": 103,
        "MISSING_ASSETS": 104, "UNSUPPORTED_ASSETS": 105, "UNSUPPORTED_ELEMENTS": 106,
    },
    "srv/ResetSimulation.Request": {
        "SCOPE_DEFAULT": 0, "SCOPE_TIME": 1, "SCOPE_STATE": 2, "SCOPE_SPAWNED": 4,
        "SCOPE_ALL": 255,
    },
    "srv/SetEntityState.Response": {"INVALID_POSE": 101},
    "srv/SetSimulationState.Response": {
        "ALREADY_IN_TARGET_STATE": 101, "STATE_TRANSITION_ERROR": 102,
        "INCORRECT_TRANSITION": 103,
    },
    "srv/SpawnEntities.Response": {"ENTITIES_SPAWN_FAILED": 150},
    "srv/SpawnEntity.Response": {
        "NAME_NOT_UNIQUE": 101, "NAME_INVALID": 102, "UNSUPPORTED_FORMAT": 103,
        "NO_RESOURCE": 104, "NAMESPACE_INVALID": 105, "RESOURCE_PARSE_ERROR": 106,
        "MISSING_ASSETS": 107, "UNSUPPORTED_ASSETS": 108, "INVALID_POSE": 109,
    },
    "srv/UnloadWorld.Response": {"NO_WORLD_LOADED": 101},
}

EXPECTED_DEFAULTS = {("simulation_interfaces/srv/StepSimulation_Request", "steps"): "1"}
"""Every field with a default value (all others start at zero, empty or their type's default)."""


class _TypeHash(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint8), ("value", ctypes.c_uint8 * 32)]


def _prefix() -> Path:
    """The install prefix: <prefix>/lib/pythonX.Y/site-packages/simulation_interfaces."""
    return Path(simulation_interfaces.__file__).resolve().parents[4]


def _interface(name: str) -> type:
    kind, short = name.split("/")
    return getattr(importlib.import_module(f"simulation_interfaces.{kind}"), short)


def test_package_holds_exactly_the_released_interfaces() -> None:
    index = _prefix() / "share/ament_index/resource_index/rosidl_interfaces"
    listed = (index / "simulation_interfaces").read_text().split()
    found = {entry.removesuffix(".idl") for entry in listed if entry.endswith(".idl")}
    assert found == set(EXPECTED_HASHES)


@pytest.mark.parametrize("name", sorted(EXPECTED_HASHES))
def test_type_hash_matches_the_release(name: str) -> None:
    """The hash the middleware announces, from the package's generated C library."""
    _interface(name)  # the Python bindings load
    lib = ctypes.CDLL("libsimulation_interfaces__rosidl_generator_c.so")
    kind, short = name.split("/")
    get_hash = getattr(lib, f"simulation_interfaces__{kind}__{short}__get_type_hash")
    get_hash.restype = ctypes.POINTER(_TypeHash)
    get_hash.argtypes = [ctypes.c_void_p]
    h = get_hash(None).contents
    assert f"RIHS{h.version:02d}_{bytes(h.value).hex()}" == EXPECTED_HASHES[name]


def _classes() -> dict[str, type]:
    """Every generated class with constants of its own, by EXPECTED_CONSTANTS' names."""
    out: dict[str, type] = {}
    for name in EXPECTED_HASHES:
        top = _interface(name)
        parts = {"msg": [""], "srv": ["Request", "Response"],
                 "action": ["Goal", "Result", "Feedback"]}[name.split("/")[0]]
        for part in parts:
            out[f"{name}.{part}" if part else name] = getattr(top, part) if part else top
    return out


def test_constants_match_the_release() -> None:
    found = {}
    for label, cls in _classes().items():
        meta = type(cls)
        constants = dict(getattr(meta, f"_{meta.__name__}__constants"))
        if constants:
            found[label] = constants
    assert found == EXPECTED_CONSTANTS


def test_default_values_match_the_release() -> None:
    found = {}
    for path in sorted((_prefix() / "share/simulation_interfaces").glob("*/*.json")):
        description = json.loads(path.read_text())["type_description_msg"]
        for td in (description["type_description"], *description["referenced_type_descriptions"]):
            if not td["type_name"].startswith("simulation_interfaces/"):
                continue
            for field in td["fields"]:
                if field["default_value"]:
                    found[(td["type_name"], field["name"])] = field["default_value"]
    assert found == EXPECTED_DEFAULTS
    assert _interface("srv/StepSimulation").Request().steps == 1


def test_spawn_problems_name_result_codes() -> None:
    """Every kind of SpawnError maps by name onto a SpawnEntity code or a Result code."""
    for problem in PROBLEMS:
        assert hasattr(SpawnResult, problem) or hasattr(Result, f"RESULT_{problem}"), problem
