"""Log output: plain lines for a terminal, one JSON object a line for a log shipper."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from bot.observe import redact

_PLAIN = "%(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message (and the traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        out = {"ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
               "level": record.levelname.lower(), "logger": record.name,
               "msg": record.getMessage()}
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:  # masked already when the record went through the redactor
            out["exc"] = record.exc_text
        return json.dumps(out, ensure_ascii=False)


def configure_logging(fmt: str = "text", level: int = logging.WARNING,
                      secrets: Iterable[Any] = ()) -> None:
    """Send logs to stderr as plain text or JSON lines (MATCHDAY_LOG_FORMAT), with every
    secret masked (bot.observe.redact: these secrets, and any add_secret() later)."""
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler())
    root.setLevel(level)
    for handler in root.handlers:
        handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_PLAIN))
    redact.install(secrets)
