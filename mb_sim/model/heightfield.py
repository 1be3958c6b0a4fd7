"""A heightfield's grid of heights: from a grayscale PNG, a `.npy` array or inline rows.

The grid is seen from above as an image, whatever it comes from: row 0 is the +y edge, column
0 the -x edge; every value lies in 0..1 (a PNG's gray levels divided by their largest, 255 or
65535) and is multiplied by the heightfield's max height. `mb_sim.model.triangles.grid` turns
it into triangles.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

MIN_POINTS = 2
"""Rows and columns a grid needs at least."""
MAX_POINTS = 4096
"""Rows and columns a grid may have at most (about 33 million triangles)."""


class HeightfieldError(ValueError):
    """Heights that cannot be read or are not a grid of values 0..1."""


def _png(path: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            mode = image.mode
            if mode in ("L", "LA"):
                return np.asarray(image.getchannel(0), dtype=float) / 255.0
            if mode.startswith("I;16") or mode == "I":
                data = np.asarray(image, dtype=float)
                return data / (65535.0 if data.max() <= 65535 else data.max())
    except (OSError, UnidentifiedImageError, SyntaxError) as exc:
        raise HeightfieldError(f"{path}: cannot read the PNG: {exc}") from None
    raise HeightfieldError(f"{path}: must be a grayscale PNG (8 or 16 bits), got image mode "
                           f"{mode!r}")


def _npy(path: str) -> np.ndarray:
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise HeightfieldError(f"{path}: cannot read the .npy array: {exc}") from None
    if not np.issubdtype(data.dtype, np.number) or np.issubdtype(data.dtype, np.complexfloating):
        raise HeightfieldError(f"{path}: must hold real numbers, got dtype {data.dtype}")
    return np.asarray(data, dtype=float)


def _inline(rows: list[Any]) -> np.ndarray:
    lengths = {len(r) for r in rows}
    if len(lengths) != 1:
        raise HeightfieldError(f"rows must all have the same length, got lengths "
                               f"{sorted(lengths)[:5]}")
    return np.array(rows, dtype=float)


def check_grid(grid: np.ndarray, where: str) -> np.ndarray:
    """The grid as a read-only 2D float array; HeightfieldError when it is not one of at
    least MIN_POINTS x MIN_POINTS finite values in 0..1."""
    if grid.ndim != 2:
        raise HeightfieldError(f"{where}must be a 2D grid of heights, got shape {grid.shape}")
    if min(grid.shape) < MIN_POINTS or max(grid.shape) > MAX_POINTS:
        raise HeightfieldError(f"{where}needs {MIN_POINTS} to {MAX_POINTS} rows and columns, "
                               f"got {grid.shape[0]} x {grid.shape[1]}")
    bad = ~np.isfinite(grid)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise HeightfieldError(f"{where}row {r}, column {c} is {grid[r, c]} (every height must "
                               "be a finite number in 0..1)")
    out_of_range = (grid < 0.0) | (grid > 1.0)
    if out_of_range.any():
        r, c = np.argwhere(out_of_range)[0]
        raise HeightfieldError(f"{where}row {r}, column {c} is {grid[r, c]:g} (heights are "
                               "values 0..1, multiplied by the max height of size)")
    out = np.ascontiguousarray(grid, dtype=float)
    out.setflags(write=False)
    return out


def read_heights(value: str | list[Any], path: str | None) -> np.ndarray:
    """The grid of `heights:`: inline rows, or the file `path` (a PNG or `.npy`) that the
    string value names. HeightfieldError says what is wrong (a file's errors name it)."""
    if path is None:
        return check_grid(_inline(value), "")  # type: ignore[arg-type]
    ext = os.path.splitext(path)[1].lower()
    if ext == ".png":
        grid = _png(path)
    elif ext == ".npy":
        grid = _npy(path)
    else:
        raise HeightfieldError(f"{path}: heights must be a .png or .npy file, got "
                               f"{ext or 'no extension'}")
    return check_grid(grid, f"{path}: ")
