"""The parameter table: ranges, cross checks, documentation and the shipped params file."""

from __future__ import annotations

import pytest
import yaml
from rcl_interfaces.msg import ParameterType
from ros_helpers import REPO

from mb_sim.ros.setup.params import (
    BY_NAME,
    INITIAL_POSITIONS,
    MAX_STEP_COUNT,
    SPECS,
    ParamError,
    check_cross,
    command_joint_list,
    xacro_mappings,
)

DEFAULTS = {s.name: s.default for s in SPECS}


@pytest.mark.parametrize(
    ("name", "value"),
    [("physics_rate", 0.0), ("physics_rate", -5.0), ("real_time_factor", -0.1),
     ("command_timeout", -1.0), ("step_count", 0), ("integrator", "euler"),
     ("world_frame", ""), ("world_frame", "/world"), ("command_topic", "a b"),
     ("odom_frame", ""), ("odom_frame", " odom"), ("base_frame", "/base"),
     ("imu_link", "trunk "), ("xacro_args", ["arm"]), ("xacro_args", ["a:=1", "a:=2"]),
     ("xacro_args", [" a:=1"])],
)
def test_invalid_values_are_rejected_with_name_and_value(name: str, value: object) -> None:
    with pytest.raises(ParamError) as err:
        BY_NAME[name].validate(value)
    assert repr(name) in str(err.value) and repr(value) in str(err.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("physics_rate", 1.0), ("physics_rate", 100000.0), ("real_time_factor", 0.0),
     ("integrator", "rk4"), ("command_timeout", 0.0), ("step_count", 1000),
     ("base_frame", ""), ("base_frame", "base_footprint"), ("imu_link", ""),
     ("xacro_args", []), ("xacro_args", [""]), ("xacro_args", ["arm:=left", "x:=a:=b"])],
)
def test_valid_values_pass(name: str, value: object) -> None:
    BY_NAME[name].validate(value)


def test_descriptors_carry_types_and_ranges() -> None:
    d = BY_NAME["physics_rate"].descriptor()
    assert d.type == ParameterType.PARAMETER_DOUBLE and d.read_only
    assert (d.floating_point_range[0].from_value, d.floating_point_range[0].to_value) == (
        1.0, 100000.0)
    d = BY_NAME["step_count"].descriptor()
    assert d.type == ParameterType.PARAMETER_INTEGER and not d.read_only
    assert (d.integer_range[0].from_value, d.integer_range[0].to_value) == (1, MAX_STEP_COUNT)
    assert BY_NAME["start_paused"].descriptor().type == ParameterType.PARAMETER_BOOL
    assert BY_NAME["command_joints"].descriptor().type == ParameterType.PARAMETER_STRING_ARRAY
    for spec in SPECS:
        assert spec.description, spec.name


def test_rates_may_not_exceed_physics_rate() -> None:
    check_cross(DEFAULTS)
    with pytest.raises(ParamError, match="publish_rate.*exceeds physics_rate"):
        check_cross({**DEFAULTS, "physics_rate": 200.0})
    with pytest.raises(ParamError, match="tf_rate"):
        check_cross({**DEFAULTS, "physics_rate": 300.0, "tf_rate": 400.0})


def test_command_joint_list() -> None:
    joints = ("j1", "j2", "j3")
    assert command_joint_list(None, joints) == list(joints)
    assert command_joint_list([""], joints) == list(joints)
    assert command_joint_list(["j3", "j1"], joints) == ["j3", "j1"]
    with pytest.raises(ParamError, match="'wrist'"):
        command_joint_list(["j1", "wrist"], joints)
    with pytest.raises(ParamError, match="twice"):
        command_joint_list(["j1", "j1"], joints)


def test_xacro_mappings() -> None:
    assert xacro_mappings(None) == {} and xacro_mappings([""]) == {}
    assert xacro_mappings(["arm:=left", "prefix:=", "url:=a:=b"]) == {
        "arm": "left", "prefix": "", "url": "a:=b"}
    with pytest.raises(ParamError, match="'xacro_args'.*'arm=left'.*name:=value"):
        xacro_mappings(["arm=left"])


def test_floating_and_imu_parameters_are_declared_with_types() -> None:
    assert BY_NAME["floating_base"].descriptor().type == ParameterType.PARAMETER_BOOL
    assert BY_NAME["strict"].descriptor().type == ParameterType.PARAMETER_BOOL
    assert BY_NAME["imu_enabled"].descriptor().type == ParameterType.PARAMETER_BOOL
    assert BY_NAME["xacro_args"].descriptor().type == ParameterType.PARAMETER_STRING_ARRAY
    assert (DEFAULTS["floating_base"], DEFAULTS["strict"], DEFAULTS["imu_enabled"]) == (
        False, False, True)
    assert (DEFAULTS["odom_frame"], DEFAULTS["base_frame"], DEFAULTS["imu_link"]) == (
        "odom", "", "")


def test_shipped_params_file_is_valid() -> None:
    data = yaml.safe_load((REPO / "config" / "arm.yaml").read_text())
    params = data["/**/sim_node"]["ros__parameters"]
    for name, value in params.items():
        if name == INITIAL_POSITIONS:
            assert all(isinstance(v, float) for v in value.values())
            continue
        assert name in BY_NAME, f"config/arm.yaml sets undeclared parameter {name!r}"
        spec = BY_NAME[name]
        if isinstance(spec.default, float):
            assert isinstance(value, (int, float)) and not isinstance(value, bool), name
        else:
            assert type(value) is type(spec.default), name
        spec.validate(value)
    check_cross({**DEFAULTS, **{k: v for k, v in params.items() if k in BY_NAME}})
