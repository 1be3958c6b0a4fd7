"""How the node reports: warnings rate-limited per kind (with a count of those held back), the
library's log records forwarded to the node's logger, names and exceptions written for a log
line. No rclpy: the logger is any object with debug/info/warning/error (an rclpy logger)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

WARN_PERIOD = 2.0
"""Seconds between two warnings of the same kind."""
NAMES_SHOWN = 10
"""Names a log line lists before it says how many more there are."""


def name_list(names: Sequence[str], shown: int = NAMES_SHOWN) -> str:
    """`['a', 'b', ...]`, cut after `shown` names with the count of the rest."""
    names = list(names)
    if len(names) <= shown:
        return str(names)
    return f"{names[:shown]} and {len(names) - shown} more"


def error_text(e: BaseException) -> str:
    """An exception as a message: a KeyError's text without its quotes, the type if empty."""
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    return text or type(e).__name__


class Throttle:
    """Warnings rate-limited per kind, counting what was held back."""

    def __init__(self, logger: Any, period: float = WARN_PERIOD) -> None:
        self._logger = logger
        self._period = period
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warn(self, kind: str, message: str) -> None:
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self._period:
            self._held[kind] = self._held.get(kind, 0) + 1
            return
        held = self._held.pop(kind, 0)
        suffix = f" [{held} similar message(s) suppressed]" if held else ""
        self._logger.warning(message + suffix)
        self._last[kind] = now


class ForwardToRos(logging.Handler):
    """Sends records of the library's "mb_sim" logger to the node's logger (warnings through
    the throttle) while attached (`attach`, `detach`)."""

    def __init__(self, logger: Any, throttle: Throttle) -> None:
        super().__init__()
        self._logger = logger
        self._throttle = throttle

    def attach(self) -> None:
        library = logging.getLogger("mb_sim")
        library.addHandler(self)
        library.setLevel(logging.INFO)

    def detach(self) -> None:
        logging.getLogger("mb_sim").removeHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.levelno >= logging.ERROR:
                self._logger.error(text)
            elif record.levelno >= logging.WARNING:
                self._throttle.warn("lib:" + str(record.msg), text)
            elif record.levelno >= logging.INFO:
                self._logger.info(text)
            else:
                self._logger.debug(text)
        except (TypeError, ValueError, RuntimeError):  # a log line never stops the simulation
            self.handleError(record)
