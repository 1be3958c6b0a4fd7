"""Messages serialized once and then changed in place.

Building a ROS message in Python goes through a checking setter for every field, and publishing
walks the Python objects once more to serialize them: a TF message of ten transforms costs
about a millisecond that way. A `Template` holds the serialized bytes of one message instead,
serialized once by rclpy; the numbers that change (stamps, positions, velocities) are written
into those bytes through numpy views, and the bytes are published as they are (rclpy publishes
a serialized message when given `bytes`) and written to the bag unchanged.

Where each field sits is read from the message type's own description (the rosidl `SLOT_TYPES`
of the installed message package), so the layout follows the ROS distribution's definitions.
The encoding is CDR as ROS 2 uses it (OMG XCDR1, little endian): a 4-byte encapsulation header,
then the fields in order; a primitive of s bytes is aligned to a multiple of s counted from the
end of the header; a string is a uint32 length (with its NUL) and the bytes; a sequence a
uint32 count and its elements; a fixed-size array only its elements.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from rclpy.serialization import serialize_message
from rosidl_parser.definition import (
    AbstractSequence,
    AbstractString,
    AbstractWString,
    Array,
    BasicType,
    NamespacedType,
)

HEADER = 4
"""Bytes of the encapsulation header before the data."""
LITTLE_ENDIAN_CDR = b"\x00\x01"
TIME = ("builtin_interfaces", "msg", "Time")
SIZES = {
    "boolean": 1, "octet": 1, "char": 1, "wchar": 2, "uint8": 1, "int8": 1, "int16": 2,
    "uint16": 2, "int32": 4, "uint32": 4, "float": 4, "int64": 8, "uint64": 8, "double": 8,
    "long double": 16,
}


class Template:
    """The CDR bytes of one message, with the byte offset of every primitive field by path
    ('header.stamp.sec', 'transforms.3.transform.rotation.w', 'position.2'), and of the
    first element of each sequence named a blob (an image's 'data')."""

    def __init__(self, msg: Any, stamps: Sequence[str] = ("header.stamp",),
                 blobs: Sequence[str] = ()) -> None:
        """`stamps`: the paths of the builtin_interfaces/Time fields that `set_stamp` sets;
        `blobs`: the paths of sequences of a primitive type whose elements are written as
        one array (`blob`) rather than field by field."""
        data = serialize_message(msg)
        if data[:2] != LITTLE_ENDIAN_CDR:
            raise ValueError(f"{type(msg).__name__}: not little-endian CDR ({data[:4]!r})")
        self.msg_type = type(msg)
        self.offsets: dict[str, int] = {}
        self._blobs: dict[str, int] = dict.fromkeys(blobs, -1)
        times: dict[str, int] = {}
        end = _walk_message(type(msg), data, HEADER, "", self.offsets, times, self._blobs)
        if end > len(data):
            raise ValueError(f"{type(msg).__name__}: layout ends at byte {end}, the message "
                             f"has {len(data)}")
        data = data[:end]  # as `serialized`
        # Four bytes in front: the data (byte HEADER of the message) starts 8-aligned in memory.
        self._buffer = np.zeros(HEADER + len(data), dtype=np.uint8)
        self._buffer[HEADER:] = np.frombuffer(data, dtype=np.uint8)
        body = self._buffer[2 * HEADER:]
        self.doubles_view = body[:body.size // 8 * 8].view("<f8")
        """The message's bytes from the end of its header as float64 (see `doubles`)."""
        self.words_view = self._buffer[HEADER:HEADER + len(data) // 4 * 4].view("<u4")
        """The message's bytes as uint32 (see `words`)."""
        self.stamps = np.array([times[path] // 4 for path in stamps], dtype=np.intp)
        """Word index of the `sec` of each stamp (its `nanosec` follows)."""

    def doubles(self, paths: Sequence[str]) -> np.ndarray:
        """Indices into `doubles_view` of the float64 fields `paths`."""
        return np.array([(self.offsets[p] - HEADER) // 8 for p in paths], dtype=np.intp)

    def words(self, paths: Sequence[str]) -> np.ndarray:
        """Indices into `words_view` of the 4-byte fields `paths`."""
        return np.array([self.offsets[p] // 4 for p in paths], dtype=np.intp)

    def blob(self, path: str, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
        """The elements of the blob `path` as a writable array of `dtype` and `shape` into
        the message's bytes (filling it changes the message in place)."""
        start = self._blobs[path]
        count = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if start < 0 or start + count > self._buffer.size - HEADER:
            raise ValueError(f"{self.msg_type.__name__}.{path}: no {count} bytes there")
        return self._buffer[HEADER + start:HEADER + start + count].view(dtype).reshape(shape)

    def set_stamp(self, ns: int) -> None:
        """The stamps to `ns` nanoseconds."""
        sec, nanosec = divmod(ns, 1_000_000_000)
        words = self.words_view
        words[self.stamps] = sec
        words[self.stamps + 1] = nanosec

    def bytes(self) -> bytes:
        """The message as it is now, serialized."""
        return self._buffer[HEADER:].tobytes()


def serialized(msg: Any) -> bytes:
    """rclpy's serialization of `msg` without what follows its end: rclpy hands out the
    buffer as long as its estimate of the size, and strict readers (rosbags) refuse the rest."""
    data = serialize_message(msg)
    end = _walk_message(type(msg), data, HEADER, "", None, {}, {})
    return data[:end]


def _align(pos: int, size: int) -> int:
    return HEADER + -(-(pos - HEADER) // size) * size


def _uint32(data: bytes, pos: int) -> int:
    return int.from_bytes(data[pos:pos + 4], "little")


def _message_class(t: NamespacedType) -> Any:
    return getattr(importlib.import_module(".".join(t.namespaces)), t.name)


def _walk_message(cls: Any, data: bytes, pos: int, prefix: str, out: dict[str, int] | None,
                  times: dict[str, int], blobs: dict[str, int]) -> int:
    """Record the offsets of a message's primitive fields from byte `pos` in `out` (None:
    only find the end, stepping over sequences of primitives at once: an image's bytes),
    those of its builtin_interfaces/Time fields in `times`, those of the first elements of
    the sequences `blobs` names in `blobs` (stepped over at once); returns where the message
    ends."""
    for name, slot in zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES, strict=True):
        pos = _walk_member(slot, data, pos, prefix + name, out, times, blobs)
    return pos


def _walk_member(t: Any, data: bytes, pos: int, path: str, out: dict[str, int] | None,
                 times: dict[str, int], blobs: dict[str, int]) -> int:
    if isinstance(t, BasicType):
        size = SIZES[t.typename]
        pos = _align(pos, size)
        if out is not None:
            out[path] = pos
        return pos + size
    if isinstance(t, AbstractWString):
        raise TypeError(f"{path}: wide strings are not supported")
    if isinstance(t, AbstractString):
        pos = _align(pos, 4)
        return pos + 4 + _uint32(data, pos)
    if isinstance(t, NamespacedType):
        if (*t.namespaces, t.name) == TIME:
            times[path] = _align(pos, 4)
        return _walk_message(_message_class(t), data, pos, path + ".", out, times, blobs)
    if isinstance(t, Array):
        count = t.size
    elif isinstance(t, AbstractSequence):
        pos = _align(pos, 4)
        count = _uint32(data, pos)
        pos += 4
    else:
        raise TypeError(f"{path}: unknown field type {t!r}")
    if (out is None or path in blobs) and isinstance(t.value_type, BasicType) and count:
        size = SIZES[t.value_type.typename]
        first = _align(pos, size)
        if path in blobs:
            blobs[path] = first
        return first + count * size
    for i in range(count):
        pos = _walk_member(t.value_type, data, pos, f"{path}.{i}", out, times, blobs)
    return pos
