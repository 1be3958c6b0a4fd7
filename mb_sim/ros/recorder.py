"""rosbag2 bags written by the simulator itself, with the `rosbags` library.

The node hands every message it publishes and every command it applies to `Recorder.write`
at that moment, stamped with simulated time, so nothing is lost to DDS. Messages are CDR
(rclpy's own serialization); the connections carry the message definitions, so `ros2 bag`,
Foxglove, `rosbags` and `mcap` read the bag. MCAP (Jazzy's default) or sqlite3.

Bounded loss: the MCAP chunk is closed and the file flushed at least every FLUSH_PERIOD of
wall time and every FLUSH_BYTES, sqlite3 commits as often. `close()` writes the index and
metadata.yaml; the node calls it on ~/record/stop, shutdown (SIGINT, SIGTERM), a physics error
and a write error (a full disk: then the bag holds everything up to the last flush).

The bag is self-contained for `mb_sim.replay`: its metadata (custom_data) holds the URDF, the
world file, the node's parameters, the initial positions and, when recording starts after
t = 0, the simulation state at the start.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rclpy.serialization import serialize_message
from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.typesys import Stores, get_typestore

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
__all__ = ["Recorder", "WriterError", "msgtype_of"]

FLUSH_PERIOD = 0.5
"""Most wall seconds between two flushes to disk."""
FLUSH_BYTES = 256 * 1024
"""Most bytes of an MCAP chunk held in memory before it is written."""
BAG_VERSION = 8
"""rosbag2 metadata version written (Humble and newer read it)."""


def msgtype_of(msg: Any) -> str:
    """'sensor_msgs/msg/JointState' for an rclpy message instance."""
    package = type(msg).__module__.split(".")[0]
    return f"{package}/msg/{type(msg).__name__}"


class Recorder:
    """An open bag. `write` from one thread only (the physics thread)."""

    def __init__(self, path: Path, storage: str = "mcap",
                 metadata: dict[str, str] | None = None) -> None:
        if storage not in STORAGES:
            raise ValueError(f"storage {storage!r}: must be one of {sorted(STORAGES)}")
        self.path = Path(path)
        self.storage = storage
        self._typestore = get_typestore(Stores.ROS2_JAZZY)
        self._writer = Writer(self.path, version=BAG_VERSION, storage_plugin=STORAGES[storage])
        for key, value in (metadata or {}).items():
            self._writer.set_custom_data(key, value)
        self._writer.open()
        self._connections: dict[str, Any] = {}
        self._last_flush = time.monotonic()
        self._closed = False
        self.count = 0

    def write(self, topic: str, msg: Any, sim_time: float) -> None:
        """Append `msg` on `topic` at simulated time `sim_time` (s). OSError when it cannot."""
        connection = self._connections.get(topic)
        if connection is None:
            connection = self._writer.add_connection(topic, msgtype_of(msg),
                                                     typestore=self._typestore)
            self._connections[topic] = connection
        self._writer.write(connection, round(sim_time * 1e9), serialize_message(msg))
        self.count += 1
        now = time.monotonic()
        storage = self._writer.storage
        big = self.storage == "mcap" and storage is not None and \
            storage.chunk.bio.tell() >= FLUSH_BYTES
        if big or now - self._last_flush >= FLUSH_PERIOD:
            self.flush()
            self._last_flush = now

    def flush(self) -> None:
        """Everything written so far to disk (an MCAP chunk, or an sqlite3 commit)."""
        storage = self._writer.storage
        if storage is None:
            return
        if self.storage == "mcap":
            if storage.chunk.bio.tell():
                storage.close_chunk()
            storage.bio.flush()
        else:
            storage.conn.commit()

    def close(self) -> None:
        """Index, metadata and close. Idempotent; OSError when the disk refuses the end."""
        if self._closed:
            return
        self._closed = True
        self._writer.close()
