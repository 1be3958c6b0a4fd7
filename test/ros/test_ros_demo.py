"""The main job of `make run`: sim_node with the default arm and table world plus the demo
controller, which holds the arm, moves above a box and touches it; Ctrl-C stops both."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from ros_helpers import STARTUP_TIMEOUT, wait_until


def test_run_demo_touches_the_box(warm_jit: None, tmp_path: Path) -> None:
    log = tmp_path / "run_demo.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mb_sim.ros.launching.run_demo"], stdout=sink, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env={k: v for k, v in os.environ.items() if k != "DURATION"},
        )
        try:
            # About 7 s of simulated time after the controller has started the simulation.
            touched = wait_until(
                lambda: "waypoint 2/4: touch target" in log.read_text() or proc.poll() is not None,
                STARTUP_TIMEOUT + 30.0, 0.2,
            )
        finally:
            proc.send_signal(signal.SIGINT)  # what Ctrl-C in `make run` does
            rc = proc.wait(timeout=20)
    out = log.read_text()
    assert touched and "waypoint 2/4: touch target" in out, out
    assert rc == 0, out
    assert "Traceback" not in out, out
    assert "controller ready: starting the simulation" in out, out
    assert "waypoint 1/4: above target" in out, out
    status = re.findall(r"sim time ([0-9.]+) s \| RTF ([0-9.]+) .*\| contacts (\d+)", out)
    assert status, out
    # a status line every 5 s of wall time; the first comes about 5 s of simulated time in
    # (a little less when the node starts slowly)
    assert max(float(t) for t, _, _ in status) > 4.0
    # The three boxes and the ball rest on the table throughout: contacts are always there.
    assert all(int(c) >= 4 for _, _, c in status)
