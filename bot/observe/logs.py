"""Log output: plain lines for a terminal, one JSON object a line for a log shipper."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

_PLAIN = "%(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message (and the traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        out = {"ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
               "level": record.levelname.lower(), "logger": record.name,
               "msg": record.getMessage()}
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure_logging(fmt: str = "text", level: int = logging.WARNING) -> None:
    """Send logs to stderr as plain text or JSON lines (MATCHDAY_LOG_FORMAT)."""
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler())
    root.setLevel(level)
    for handler in root.handlers:
        handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_PLAIN))
