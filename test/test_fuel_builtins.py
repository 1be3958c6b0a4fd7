"""Fuel's Ground Plane and Sun: worlds written for gz-sim (its examples, TurtleBot3's) include
https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane and .../Sun; with no Fuel
cache (a fresh install) they are the built-in ground plane and sun, as model://ground_plane and
model://sun are; other Fuel models still come from the cache only."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

import mb_sim
from mb_sim.model.world.parts import Light
from mb_sim.model.world.sdf import files
from mb_sim.model.world.sdf.elements import MissingFileError
from mb_sim.model.world.sdf.files import fuel_builtin

DATA = Path(__file__).parent / "data" / "sdf"
FUEL = "https://fuel.gazebosim.org/1.0/OpenRobotics/models"


@pytest.fixture
def empty_fuel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Fuel cache: GZ_FUEL_CACHE_PATH, and no other (the user's ~/.gz/fuel and
    ~/.ignition/fuel left out: HOME stays, it holds the compiled kernels)."""
    cache = tmp_path / "fuel"
    cache.mkdir()
    monkeypatch.setenv("GZ_FUEL_CACHE_PATH", str(cache))
    monkeypatch.delenv("IGN_FUEL_CACHE_PATH", raising=False)
    monkeypatch.setattr(files, "fuel_cache_roots", lambda: [cache])
    return cache


def _world(*uris: str, extra: str = "") -> str:
    includes = "".join(f"<include><uri>{u}</uri></include>" for u in uris)
    return f'<sdf version="1.8"><world name="w">{includes}{extra}</world></sdf>'


@pytest.mark.parametrize("url", [
    f"{FUEL}/Ground Plane", f"{FUEL}/Ground%20Plane", f"{FUEL}/ground plane",
    f"{FUEL}/GROUND%20PLANE/", f"{FUEL}/Ground Plane/1", f"{FUEL}/Ground Plane/tip/",
    "https://fuel.ignitionrobotics.org/1.0/OpenRobotics/models/Ground Plane",
    "https://FUEL.gazebosim.org/1.0/openrobotics/models/Ground  Plane",
    "  https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane\n",
])
def test_the_ground_plane_urls(url: str) -> None:
    assert fuel_builtin(url) == "ground_plane"


@pytest.mark.parametrize("url", [f"{FUEL}/Sun", f"{FUEL}/sun/", f"{FUEL}/SUN/2",
                                 "http://fuel.ignitionrobotics.org/1.0/OpenRobotics/models/Sun"])
def test_the_sun_urls(url: str) -> None:
    assert fuel_builtin(url) == "sun"


@pytest.mark.parametrize("url", [
    f"{FUEL}/Ground Plane/1/files/model.sdf",  # a file of the model
    f"{FUEL}/Sun/latest",
    "https://fuel.gazebosim.org/1.0/someone/models/Ground Plane",  # another owner's
    f"{FUEL}/Ground Plane 2", f"{FUEL}/Construction Cone",
    "https://example.com/1.0/OpenRobotics/models/Sun",
    "model://sun", "ground_plane",
])
def test_what_is_not_a_builtin(url: str) -> None:
    assert fuel_builtin(url) is None


def test_a_world_of_fuel_ground_and_sun_loads_with_an_empty_cache(
        empty_fuel: Path, caplog: pytest.LogCaptureFixture) -> None:
    """As TurtleBot3's worlds include them: the ground is the built-in one (friction 1.0,
    at 0), the sun the light cameras draw with (the built-in sun's), and the info line says
    the built-ins stood in."""
    text = _world(f"{FUEL}/Ground Plane", f"{FUEL}/Sun", extra=(
        '<model name="box"><pose>0 0 0.3 0 0 0</pose><link name="l"><collision name="c">'
        "<geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision></link></model>"))
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        world = mb_sim.load_world(text)
    twin = mb_sim.load_world(_world("model://ground_plane", "model://sun"))
    assert world.ground is not None and twin.ground is not None
    assert (world.ground.height, world.ground.friction, world.ground.restitution) == \
        (twin.ground.height, twin.ground.friction, twin.ground.restitution) == (0.0, 1.0, 0.0)
    assert world.body_names == ("box",)
    assert world.light == twin.light and world.light != Light()
    line = " ".join(r.getMessage() for r in caplog.records if "Gazebo reads it" in r.getMessage())
    assert "Fuel's Ground Plane or Sun, not in the Fuel cache x2" in line, line
    sim = mb_sim.Simulation(world=world, dt=0.001)
    sim.step(n=800)
    assert sim.body_pose("box")[0][2] == pytest.approx(0.1, abs=1e-3)


def test_a_cached_ground_plane_is_read_from_the_cache(empty_fuel: Path) -> None:
    """When the Fuel cache holds the model, the cache's files are what is read (here a plane
    0.5 m up, to tell them apart)."""
    folder = empty_fuel / "fuel.gazebosim.org" / "openrobotics" / "models" / "ground plane" / "1"
    folder.mkdir(parents=True)
    (folder / "model.sdf").write_text(
        '<sdf version="1.6"><model name="ground_plane"><static>true</static><pose>0 0 0.5 0 0 0'
        '</pose><link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal>'
        "<size>100 100</size></plane></geometry></collision></link></model></sdf>")
    world = mb_sim.load_world(_world(f"{FUEL}/Ground Plane"))
    assert world.ground is not None and world.ground.height == 0.5


def test_another_fuel_model_missing_is_still_an_error(empty_fuel: Path) -> None:
    url = f"{FUEL}/Construction Cone"
    with pytest.raises(MissingFileError) as err:
        mb_sim.load_world(_world(f"{FUEL}/Ground Plane", f"{FUEL}/Sun", url))
    text = str(err.value)
    assert f"cannot find {url!r}" in text and f"gz fuel download -u {url!r}" in text, text
    assert str(empty_fuel) in text and "include[" not in text.split(":")[0]


def test_a_fuel_file_of_the_ground_plane_is_not_the_builtin(empty_fuel: Path) -> None:
    """A mesh of the Fuel model (.../files/...) is a file: not found without the cache."""
    text = _world(extra=(
        '<model name="m"><static>true</static><link name="l"><collision name="c"><geometry>'
        f"<mesh><uri>{FUEL}/Ground Plane/1/files/meshes/plane.dae</uri></mesh></geometry>"
        "</collision></link></model>"))
    with pytest.raises(mb_sim.WorldError, match="not in the local Fuel cache"):
        mb_sim.load_world(text)


def test_the_crate_of_the_cache_and_the_builtins_together(empty_fuel: Path) -> None:
    """Cached models and the built-ins in one world: each from where it is."""
    folder = empty_fuel / "fuel.gazebosim.org" / "openrobotics" / "models" / "small crate" / "2"
    folder.mkdir(parents=True)
    for name in ("model.config", "model.sdf", "model-1_6.sdf"):
        shutil.copy(DATA / "models" / "crate" / name, folder)
    world = mb_sim.load_world(_world(f"{FUEL}/Ground%20Plane", f"{FUEL}/Small Crate",
                                     f"{FUEL}/Sun"))
    assert world.ground is not None and world.body_names == ("crate",)
