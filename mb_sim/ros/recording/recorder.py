"""rosbag2 bags written by the simulator itself, with the `rosbags` library.

The node hands every message it publishes and every command it applies to `Recording.write`
at that moment, stamped with simulated time, so nothing is lost to DDS. Messages are CDR (the
very bytes published, or rclpy's serialization of a message, `cdr.serialized`); the
connections carry the message definitions, so `ros2 bag`, Foxglove, `rosbags` and `mcap` read
the bag. MCAP (Jazzy's default) or sqlite3.

Bounded loss: the MCAP chunk is closed and the file flushed at least every FLUSH_PERIOD of
wall time and every FLUSH_BYTES, sqlite3 commits as often. `close()` writes the index and
metadata.yaml; the node calls it (`Recording.close`) on ~/record/stop, ~/reset, shutdown
(SIGINT, SIGTERM), a physics error and a write error (a full disk: then the bag holds
everything up to the last flush).

The bag is self-contained for `mb_sim.replay`: its metadata (custom_data) holds the URDF, the
world file, the node's parameters, the initial positions and, when recording starts after
t = 0, the simulation state at the start.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.typesys import Stores, get_typestore

from mb_sim.ros.wire.cdr import serialized

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
__all__ = ["Recorder", "Recording", "WriterError", "msgtype_of"]

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

    def write(self, topic: str, msgtype: str, data: bytes, sim_time: float) -> None:
        """Append the serialized message `data` of type `msgtype` ('std_msgs/msg/String') on
        `topic` at simulated time `sim_time` (s). OSError when it cannot."""
        connection = self._connections.get(topic)
        if connection is None:
            connection = self._writer.add_connection(topic, msgtype, typestore=self._typestore)
            self._connections[topic] = connection
        self._writer.write(connection, round(sim_time * 1e9), data)
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


class Recording:
    """The bag the node writes, if any: opened, written and closed on the physics thread. A
    write that fails is logged and closes the bag; nothing else stops. At shutdown the main
    thread closes the bag when the physics thread does not end in time (busy in a compile):
    writing and closing take a lock, so a bag is never closed in the middle of a write."""

    def __init__(self, logger: Any) -> None:
        self._logger = logger
        self.recorder: Recorder | None = None
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self.recorder is not None

    def start(self, path: Path, storage: str, metadata: dict[str, str]) -> str:
        """Open a bag at `path`; a message for the caller ("recording to ..." when it did)."""
        if self.recorder is not None:
            return f"already recording to {self.recorder.path}"
        try:
            self.recorder = Recorder(path, storage, metadata)
        except (OSError, ValueError, WriterError) as e:
            message = f"cannot record to {str(path)!r}: {e}"
            self._logger.error(message)
            return message
        message = f"recording to {path} ({storage})"
        self._logger.info(message)
        return message

    def write(self, topic: str, msgtype: str, data: bytes, sim_time: float) -> None:
        """Append a serialized message, if recording."""
        if self.recorder is None:
            return
        with self._lock:
            recorder = self.recorder
            if recorder is None:  # closed meanwhile
                return
            try:
                recorder.write(topic, msgtype, data, sim_time)
                return
            except Exception as e:  # noqa: BLE001 - a full disk: keep what is written, go on
                error = e
        self._logger.error(f"recording to {recorder.path} failed: {error}; closing the bag "
                           "(readable up to the last flush)")
        self.close("write error")

    def write_message(self, topic: str, msg: Any, sim_time: float) -> None:
        """Append an rclpy message, if recording."""
        if self.recorder is not None:
            self.write(topic, msgtype_of(msg), serialized(msg), sim_time)

    def close(self, why: str) -> str:
        """Close the bag, if any; what was closed ("not recording" when nothing)."""
        with self._lock:
            recorder, self.recorder = self.recorder, None
            if recorder is None:
                return "not recording"
            try:
                recorder.close()
                error: Exception | None = None
            except Exception as e:  # noqa: BLE001 - a full disk, a broken file: report, go on
                error = e
        if error is not None:
            self._logger.error(f"closing the bag {recorder.path} failed ({why}): {error}; "
                               "it is readable up to the last flush")
        else:
            self._logger.info(f"recording closed ({why}): {recorder.path}, "
                              f"{recorder.count} messages")
        return f"stopped: {recorder.path} ({recorder.count} messages)"
