"""Writes the meshes and heightfields the shipped worlds and the tests use, from closed forms
(run again after changing one; the files are committed):

- config/worlds/meshes/rough_terrain.png: 16-bit grayscale, 129 x 129: a sum of sines of
  wavelengths 2.2 to 4 m plus a fixed-seed roughness of a few percent of the range (the
  terrain world gives it 8 x 8 m and a max height of 0.1 m: slopes up to about 8 degrees,
  bumps of a few millimetres);
- config/worlds/meshes/stairs.stl: six steps 0.05 m high and 0.30 m deep, 1.2 m wide, as one
  closed, consistently wound solid;
- test/assets/bowl.obj: a spherical cap (radius 0.5 m, 60 degrees, 40 rings of 40 sectors:
  3160 triangles), an open surface;
- test/assets/mug.stl: a closed cup (outer radius 0.06 m, inner 0.05 m, 0.12 m high, a
  0.01 m bottom), 24 sides;
- test/assets/tray.stl: a closed square tray 0.4 x 0.4 x 0.06 m with 0.01 m walls and floor.

    .venv/bin/python tools/make_meshes.py
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]


def write_stl(path: Path, verts: np.ndarray, tris: np.ndarray) -> None:
    """A binary STL of the triangles (outward winding as given)."""
    p = verts[tris]
    normals = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    with open(path, "wb") as f:
        f.write(b"binary STL".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        f.writelines(struct.pack("<12fH", *n, *c.reshape(-1), 0) for n, c in zip(normals, p))


class Builder:
    """Vertices shared by position, faces as counter-clockwise quads seen from outside."""

    def __init__(self) -> None:
        self.index: dict[tuple[float, ...], int] = {}
        self.verts: list[tuple[float, ...]] = []
        self.tris: list[tuple[int, int, int]] = []

    def vertex(self, p: tuple[float, ...]) -> int:
        key = tuple(round(float(x), 9) for x in p)
        if key not in self.index:
            self.index[key] = len(self.verts)
            self.verts.append(key)
        return self.index[key]

    def polygon(self, *points: tuple[float, ...]) -> None:
        """A convex polygon, counter-clockwise seen from outside, as a fan."""
        ids = [self.vertex(p) for p in points]
        for k in range(1, len(ids) - 1):
            self.tris.append((ids[0], ids[k], ids[k + 1]))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.verts), np.array(self.tris)


def stairs(steps: int = 6, rise: float = 0.05, run: float = 0.30, width: float = 1.2
           ) -> Builder:
    """Steps rising along +x from x = 0, each `rise` up and `run` deep, the top step to the
    end; side faces as horizontal strips so that every edge is shared by two triangles."""
    b = Builder()
    y0, y1 = -width / 2, width / 2
    end = steps * run
    b.polygon((0, y0, 0), (0, y1, 0), (end, y1, 0), (end, y0, 0))  # bottom, facing -z
    for j in range(steps):
        z0, z1, x0, x1 = j * rise, (j + 1) * rise, j * run, (j + 1) * run
        b.polygon((x0, y0, z0), (x0, y0, z1), (x0, y1, z1), (x0, y1, z0))  # riser, facing -x
        b.polygon((x0, y0, z1), (x1 if j < steps - 1 else end, y0, z1),
                  (x1 if j < steps - 1 else end, y1, z1), (x0, y1, z1))  # tread, facing +z
        b.polygon((end, y0, z0), (end, y1, z0), (end, y1, z1), (end, y0, z1))  # back, +x
        right = (x1, z1) if j < steps - 1 else None
        side = [(x0, z0), (end, z0), (end, z1)] + ([right] if right else []) + [(x0, z1)]
        b.polygon(*[(x, y0, z) for x, z in side])  # the -y side, counter-clockwise from -y
        back = [side[0], *reversed(side[1:])]  # clockwise, from the same corner
        b.polygon(*[(x, y1, z) for x, z in back])
    return b


def cup(outer: float, inner: float, height: float, floor: float, sides: int,
        phase: float = 0.0) -> Builder:
    """A closed cup of `sides` sides: outer wall, bottom, rim, inner wall and floor."""
    b = Builder()

    def ring(r: float, z: float) -> list[tuple[float, float, float]]:
        return [(r * math.cos(phase + 2 * math.pi * k / sides),
                 r * math.sin(phase + 2 * math.pi * k / sides), z) for k in range(sides)]

    ob, ot, it, ib = ring(outer, 0.0), ring(outer, height), ring(inner, height), ring(inner,
                                                                                         floor)
    b.polygon(*reversed(ob))  # bottom, facing -z
    b.polygon(*ib)  # floor inside, facing +z
    for k in range(sides):
        n = (k + 1) % sides
        b.polygon(ob[k], ob[n], ot[n], ot[k])  # outer wall
        b.polygon(ot[k], ot[n], it[n], it[k])  # rim
        b.polygon(it[k], it[n], ib[n], ib[k])  # inner wall, facing the axis
    return b


def bowl(radius: float = 0.5, angle: float = math.radians(60.0), rings: int = 40,
         sectors: int = 40) -> Builder:
    """A spherical cap of the sphere of `radius` centred `radius` above its lowest point,
    open, its triangles facing up (into the bowl)."""
    b = Builder()

    def point(i: int, j: int) -> tuple[float, float, float]:
        th = angle * i / rings
        ph = 2 * math.pi * j / sectors
        return (radius * math.sin(th) * math.cos(ph), radius * math.sin(th) * math.sin(ph),
                radius - radius * math.cos(th))

    for j in range(sectors):
        b.polygon((0.0, 0.0, 0.0), point(1, j), point(1, j + 1))
    for i in range(1, rings):
        for j in range(sectors):
            b.polygon(point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1))
    return b


def write_obj(path: Path, verts: np.ndarray, tris: np.ndarray) -> None:
    with open(path, "w") as f:
        f.writelines(f"v {x:.9f} {y:.9f} {z:.9f}\n" for x, y, z in verts)
        f.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in tris)


def rough_terrain(points: int = 129, size: float = 8.0) -> np.ndarray:
    """Heights 0..1 of rolling ground (wavelengths 2.2 to 4 m) with a roughness of a few
    percent of the range (fixed seed)."""
    x = np.linspace(-size / 2, size / 2, points)
    xx, yy = np.meshgrid(x, -x)
    z = (0.5 * np.sin(2 * math.pi * xx / 4.0) * np.cos(2 * math.pi * yy / 3.5)
         + 0.3 * np.sin(2 * math.pi * (xx + yy) / 2.2))
    z += np.random.default_rng(28).uniform(-0.03, 0.03, z.shape)
    return (z - z.min()) / (z.max() - z.min())


def main() -> None:
    meshes = ROOT / "config" / "worlds" / "meshes"
    meshes.mkdir(parents=True, exist_ok=True)
    heights = np.round(rough_terrain() * 65535).astype(np.uint16)
    Image.fromarray(heights).save(meshes / "rough_terrain.png")
    write_stl(meshes / "stairs.stl", *stairs().arrays())
    assets = ROOT / "test" / "assets"
    write_obj(assets / "bowl.obj", *bowl().arrays())
    write_stl(assets / "mug.stl", *cup(0.06, 0.05, 0.12, 0.01, 24).arrays())
    write_stl(assets / "tray.stl", *cup(0.2 * math.sqrt(2), 0.19 * math.sqrt(2), 0.06, 0.01, 4,
                                        math.pi / 4).arrays())


if __name__ == "__main__":
    main()
