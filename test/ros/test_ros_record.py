"""Recording and replay: bags written by sim_node itself, read back whole after SIGINT and
SIGTERM (by `rosbags` and, independently, by `mcap` with `mcap-ros2-support`), and replayed
bit for bit by `mb_sim.replay`; a changed physics parameter names the first divergence."""

from __future__ import annotations

import json
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from ros_helpers import STARTUP_TIMEOUT, reach, wait_until
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from test_ros_node import arm_params

from mb_sim.replay import replay_bag as replay
from mb_sim.testing import replay_bag

pytestmark = pytest.mark.usefixtures("ros_context")
JOINTS = [f"joint{i}" for i in range(1, 8)]


def read_bag(path: Path) -> Counter:
    from rosbags.rosbag2 import Reader

    with Reader(path) as reader:
        return Counter(c.topic for c, _, _ in reader.messages())


def read_mcap(path: Path) -> Counter:
    """Decode every message with the mcap library (a reader independent of rosbags)."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    (file,) = path.glob("*.mcap")
    counts: Counter = Counter()
    with file.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _schema, channel, _message, decoded in reader.iter_decoded_messages():
            assert decoded is not None
            counts[channel.topic] += 1
    return counts


def drive(probe: Any, seconds: float, rate: float = 200.0) -> int:
    """Efforts on both command topics for `seconds`; how many messages were sent."""
    js_pub = probe.publisher(JointState, "joint_commands")
    arr_pub = probe.publisher(Float64MultiArray, "/effort_controller/commands")
    # the first message of each is acknowledged by the node before the others go out
    sent = reach(js_pub, JointState(name=["joint2", "joint4"], effort=[5.0, -2.0])) + \
        reach(arr_pub, Float64MultiArray(data=[0.0] * 7))
    k, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        k += 1
        if k % 2:
            js_pub.publish(JointState(name=["joint2", "joint4"], effort=[5.0 + 0.01 * k, -2.0]))
        else:
            arr_pub.publish(Float64MultiArray(data=[0.3 * ((k // 2) % 7)] * 7))
        sent += 1
        time.sleep(1.0 / rate)
    return sent


def stats(probe: Any) -> dict:
    return json.loads(probe.call(Trigger, "/sim_node/stats", Trigger.Request()).message)


def wait_applied(probe: Any, count: int, timeout: float = 30.0) -> None:
    """Until the node's ~/stats says `count` commands were applied since it started (on a
    loaded machine the last ones may take longer than a fixed wait)."""
    assert wait_until(lambda: stats(probe)["commands"]["applied"] >= count, timeout,
                      period=0.2), stats(probe)


@pytest.mark.parametrize(("sig", "storage"), [(signal.SIGINT, "mcap"), (signal.SIGTERM, "mcap"),
                                              (signal.SIGINT, "sqlite3")])
def test_record_until_killed_reads_back_whole_and_replays(
        start_sim: Any, probe: Any, tmp_path: Path, sig: int, storage: str) -> None:
    bag = tmp_path / "run"
    sim = start_sim(arm_params(record=str(bag), record_storage=storage, command_timeout=0.2,
                               world_file=str(Path(__file__).parents[2] / "config" / "worlds"
                                              / "table.yaml")))
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    sent = drive(probe, 2.0)
    wait_applied(probe, sent)
    s = stats(probe)
    assert s["commands"]["applied"] == sent == s["commands"]["received"], (s, read_bag(bag) if False else "")
    rc = sim.stop(sig)
    assert rc == 0 and "Traceback" not in sim.output, sim.output
    assert re.search(r"recording closed \(shutdown\): .*, \d+ messages", sim.output), sim.output

    counts = read_bag(bag)
    assert counts["/effort_controller/commands"] + counts["/joint_commands"] == sent
    sim_time = s["sim_time"]
    assert counts["/joint_states"] >= 250 * sim_time
    for topic in ("/tf", "/tf_static", "/clock", "/robot_description", "/sim_node/contacts"):
        assert counts[topic] > 0, counts
    assert counts["/imu"] == counts["/joint_states"]  # published with every joint_states
    if storage == "mcap":
        assert read_mcap(bag) == counts
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["message_count"] == sum(counts.values())
    assert "box" in meta["custom_data"]["mb_sim/world"]

    result = replay_bag(bag)  # bit for bit
    assert result.commands == sent and result.compared == counts["/joint_states"]


def test_replay_names_first_divergence(start_sim: Any, probe: Any, tmp_path: Path) -> None:
    bag = tmp_path / "run"
    sim = start_sim(arm_params(record=str(bag), command_timeout=0.0))
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    wait_applied(probe, drive(probe, 1.0))
    assert sim.stop(signal.SIGINT) == 0, sim.output
    changed = tmp_path / "changed"
    shutil.copytree(bag, changed)
    meta_file = changed / "metadata.yaml"
    meta = yaml.safe_load(meta_file.read_text())
    custom = meta["rosbag2_bagfile_information"]["custom_data"]
    urdf, n = re.subn(r'<mass value="([0-9.eE+-]+)"',
                      lambda m: f'<mass value="{float(m.group(1)) * 1.01!r}"', custom["mb_sim/urdf"],
                      count=3)
    assert n == 3
    custom["mb_sim/urdf"] = urdf
    meta_file.write_text(yaml.safe_dump(meta))

    assert replay(bag).ok
    result = replay(changed)
    assert result.divergence is not None and result.divergence.time > 0.0
    with pytest.raises(AssertionError, match=r"diverges at t = .* joint '.*' (position|velocity)"):
        replay_bag(changed)
    loose = replay(changed, tolerance=1e-6).divergence
    assert loose is not None and loose.time >= result.divergence.time

    cli = subprocess.run([sys.executable, "-m", "mb_sim.replay", str(changed)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert cli.returncode == 1 and "DIVERGES" in cli.stdout and "recorded" in cli.stdout, cli
    ok = subprocess.run([sys.executable, "-m", "mb_sim.replay", str(bag)],
                        capture_output=True, text=True, timeout=300, check=False)
    assert ok.returncode == 0 and "identical" in ok.stdout, ok


def test_record_start_stop_services_mid_run(start_sim: Any, probe: Any, tmp_path: Path) -> None:
    bag = tmp_path / "later"
    sim = start_sim(arm_params(record=str(bag), command_timeout=0.3))
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    stop = probe.call(Trigger, "/sim_node/record/stop", Trigger.Request())
    assert stop.success and str(bag) in stop.message
    first = read_bag(bag)
    assert first["/joint_states"] >= 1
    early = drive(probe, 0.5)  # the state moves on while nothing is recorded
    start = probe.call(Trigger, "/sim_node/record/start", Trigger.Request())
    assert start.success and "recording to" in start.message, start.message
    second = Path(start.message.split("recording to ")[1].split(" (")[0])
    assert second != bag
    sent = drive(probe, 1.0)
    wait_applied(probe, early + sent)
    stop = probe.call(Trigger, "/sim_node/record/stop", Trigger.Request())
    assert stop.success
    assert not probe.call(Trigger, "/sim_node/record/stop", Trigger.Request()).success
    counts = read_bag(second)
    assert counts["/effort_controller/commands"] + counts["/joint_commands"] == sent
    result = replay_bag(second)  # from the state the recording started in
    assert result.steps > 500
    shutil.rmtree(second)
    assert wait_until(lambda: sim.proc.poll() is None, 0.1)


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 1 MiB tmpfs (needs root, as on CI); skipped where mounting is not allowed."""
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {proc.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_full_disk_closes_the_bag_and_simulation_goes_on(start_sim: Any, probe: Any,
                                                          small_disk: Path) -> None:
    from mcap.exceptions import EndOfFile
    from mcap.records import Message as McapMessage
    from mcap.stream_reader import StreamReader

    bag = small_disk / "run"
    sim = start_sim(arm_params(record=str(bag)))
    js = probe.collect(JointState, "joint_states")
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    assert sim.wait_for_output("failed", 30.0), sim.output  # about 1 MiB of messages later
    assert re.search(r"\[ERROR\].*recording to .*run failed: .*No space left on device",
                     sim.output), sim.output
    n = len(js)
    assert wait_until(lambda: len(js) > n + 100, 5.0), "the simulation stopped"
    s = stats(probe)
    assert s["recording"] is None and s["rtf"] > 0.5
    # Readable up to the last flush: the complete chunks decode, with their CRCs checked; the
    # stream ends where the disk did (a cut record, or no footer).
    (file,) = bag.glob("*.mcap")
    messages = 0
    with file.open("rb") as f:
        try:
            for record in StreamReader(f, validate_crcs=True).records:
                messages += isinstance(record, McapMessage)
        except (EndOfFile, struct.error):  # the record the full disk cut
            pass
    assert messages > 100
    assert sim.stop() == 0 and "Traceback" not in sim.output


NO_ROS = ("rclpy", "rosidl_parser", "rpyutils", "builtin_interfaces", "std_msgs", "sensor_msgs",
          "geometry_msgs", "rcl_interfaces", "rosgraph_msgs", "tf2_msgs", "nav_msgs",
          "visualization_msgs", "std_srvs")
"""What a process without a ROS installation cannot import."""


def test_replay_runs_without_ros(start_sim: Any, probe: Any, tmp_path: Path) -> None:
    """A worker without rclpy and the message packages replays a bag as this process does."""
    bag = tmp_path / "run"
    sim = start_sim(arm_params(record=str(bag), command_timeout=0.1))
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    sent = drive(probe, 1.0)
    wait_applied(probe, sent)
    time.sleep(0.3)  # the watchdog runs out on the way: zero efforts replayed too
    assert sim.stop(signal.SIGINT) == 0, sim.output
    here = replay(bag)
    assert here.ok and here.commands == sent
    code = (f"import sys\nfor name in {NO_ROS!r}:\n    sys.modules[name] = None\n"
            "from mb_sim.replay import replay_bag\n"
            f"r = replay_bag({str(bag)!r})\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in "
            f"{NO_ROS!r} and sys.modules[m] is not None]\n"
            "print(r.ok, r.compared, r.steps, r.commands)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", str(here.compared), str(here.steps),
                                  str(here.commands)], out.stdout
