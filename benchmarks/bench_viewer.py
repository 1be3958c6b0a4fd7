"""What the browser view costs a stepping script: µs per `sim.step()` on the default scene (the
arm on the table, dt = 1 ms), without and with `mb_sim.viewer.show(sim)` attached.

    python benchmarks/bench_viewer.py [--seconds 3] [--browser]

The script steps one step per call, as a control loop does. Blocks of steps without and with the
view alternate (ROUNDS of each), and the median of each is printed with the difference. The
view sends at most 30 frames a second whatever the step rate, so its cost per step is one clock
read per step plus each frame's share (reading poses and contacts, queueing the messages).
`--browser` also keeps a headless Chromium on the page (test/viewer/browser.py), so the frames
are really sent and drawn; it shares the machine's cores with the stepping loop.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import time
from pathlib import Path

import mb_sim
from mb_sim.viewer import show

REPO = Path(__file__).resolve().parents[1]
ROUNDS = 5


def _block(sim: mb_sim.Simulation, seconds: float) -> float:
    """µs per step over about `seconds` of wall time."""
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(200):
            sim.step()
        steps += 200
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return 1e6 * elapsed / steps


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall seconds per block")
    parser.add_argument("--browser", action="store_true", help="a headless Chromium watches")
    args = parser.parse_args()
    model = mb_sim.load_urdf(str(REPO / "urdf" / "arm.urdf"))
    world = mb_sim.load_world(str(REPO / "config" / "worlds" / "table.yaml"))
    sim = mb_sim.Simulation(model, world=world, dt=0.001)
    sim.step(500)  # compiled and settled
    viewer = show(sim, port=_free_port())
    browser = None
    if args.browser:
        sys.path.insert(0, str(REPO / "test" / "viewer"))
        from browser import Browser

        browser = Browser()
        browser.open(viewer.url)
        time.sleep(10.0)  # the page has loaded and draws
    plain, viewed = [], []
    try:
        for _ in range(ROUNDS):
            viewer.detach()
            plain.append(_block(sim, args.seconds))
            viewer.attach()
            viewed.append(_block(sim, args.seconds))
    finally:
        viewer.close()
        if browser is not None:
            browser.close()
    a, b = statistics.median(plain), statistics.median(viewed)
    print(f"default scene (arm + table), dt 1 ms, one step per call, {ROUNDS} blocks of "
          f"{args.seconds:g} s each{', a browser on the page' if args.browser else ''}")
    print(f"  without the view: {a:8.1f} us/step  (blocks: {', '.join(f'{x:.1f}' for x in plain)})")
    print(f"  with show(sim):   {b:8.1f} us/step  (blocks: {', '.join(f'{x:.1f}' for x in viewed)})")
    print(f"  cost of the view: {b - a:+8.1f} us/step ({100 * (b - a) / a:+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
