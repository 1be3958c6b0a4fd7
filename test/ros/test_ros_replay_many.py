"""A folder of recorded bags replayed as a regression suite, serially and on 2 Ray workers:
every bag gets its line, the changed one is named as diverging, and the exit status says so."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from ros_helpers import STARTUP_TIMEOUT
from test_ros_node import arm_params
from test_ros_record import drive, wait_applied


def test_a_folder_of_bags_replays_serially_and_on_workers(start_sim: Any, probe: Any,
                                                          tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    bag = suite / "run_a"
    sim = start_sim(arm_params(record=str(bag), command_timeout=0.0))
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    wait_applied(probe, drive(probe, 0.6))
    assert sim.stop(signal.SIGINT) == 0, sim.output
    shutil.copytree(bag, suite / "nested" / "run_b")
    changed = suite / "run_c"
    shutil.copytree(bag, changed)
    meta_file = changed / "metadata.yaml"
    meta = yaml.safe_load(meta_file.read_text())
    custom = meta["rosbag2_bagfile_information"]["custom_data"]
    custom["mb_sim/urdf"], n = re.subn(
        r'<mass value="([0-9.eE+-]+)"', lambda m: f'<mass value="{float(m.group(1)) * 1.01!r}"',
        custom["mb_sim/urdf"], count=3)
    assert n == 3
    meta_file.write_text(yaml.safe_dump(meta))

    outputs = []
    for extra in ([], ["--workers", "2"]):
        out = subprocess.run([sys.executable, "-m", "mb_sim.replay", str(suite), *extra],
                             capture_output=True, text=True, timeout=300, check=False)
        assert out.returncode == 1, out.stdout + out.stderr
        lines = [line for line in out.stdout.splitlines() if line.startswith("replay: /")]
        assert len(lines) == 3, out.stdout  # in path order: nested/run_b, run_a, run_c
        assert "nested/run_b: " in lines[0] and "identical" in lines[0]
        assert "run_a: " in lines[1] and "identical" in lines[1]
        assert "run_c: DIVERGES" in lines[2] and "recorded" in lines[2]
        assert "3 bags: 2 as recorded, 1 diverge, 0 cannot be replayed" in out.stdout
        assert "Traceback" not in out.stderr
        outputs.append(lines)
    assert outputs[0] == outputs[1]  # the same verdicts, the same first divergence
