"""Occupancy maps of a world (mb_sim.maps), as Nav2's map_server reads them."""

from __future__ import annotations

import numpy as np
import yaml

import mb_sim
from mb_sim.maps import FREE, OCCUPIED, occupancy, write_map


def test_the_cells_over_a_box_are_occupied_and_the_rest_free(tmp_path) -> None:
    """A static box 1.0 x 0.6 m at (0.3, -0.2) and a free crate (not mapped): exactly the
    cells whose centres lie over the box are occupied; the files hold the image and its
    origin as map_server reads them (first row the +y edge)."""
    world = mb_sim.load_world({"bodies": [
        {"name": "box", "shape": "box", "size": [1.0, 0.6, 0.5], "xyz": [0.3, -0.2, 0.25],
         "static": True},
        {"name": "crate", "shape": "box", "size": [0.3, 0.3, 0.3], "mass": 1.0,
         "xyz": [2.0, 2.0, 0.15]}]})
    image, origin = occupancy(world, resolution=0.05, margin=0.25)
    rows, cols = image.shape
    x = origin[0] + (np.arange(cols) + 0.5) * 0.05
    y = origin[1] + (np.arange(rows) + 0.5) * 0.05
    over = (np.abs(x - 0.3)[None, :] < 0.5) & (np.abs(y + 0.2)[:, None] < 0.3)
    np.testing.assert_array_equal(image[::-1] == OCCUPIED, over)
    assert set(np.unique(image)) == {FREE, OCCUPIED}
    write_map(image, origin, 0.05, tmp_path / "room")
    meta = yaml.safe_load((tmp_path / "room.yaml").read_text())
    assert meta["image"] == "room.pgm" and meta["resolution"] == 0.05
    np.testing.assert_allclose(meta["origin"][:2], origin, atol=1e-6)
    data = (tmp_path / "room.pgm").read_bytes()
    header, pixels = data[:data.index(b"255\n") + 4], data[data.index(b"255\n") + 4:]
    assert header.split()[:3] == [b"P5", str(cols).encode(), str(rows).encode()]
    np.testing.assert_array_equal(np.frombuffer(pixels, np.uint8).reshape(rows, cols), image)
