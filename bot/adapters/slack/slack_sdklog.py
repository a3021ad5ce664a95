"""The Slack SDK's own log lines, as the bot wants them: no tracebacks, and a failure that
repeats (Socket Mode "Failed to connect … Retrying…" every few seconds while Slack is
unreachable) logged once until `reset()` (connected again)."""

from __future__ import annotations

import logging


class OncePerOutage(logging.Filter):
    """Drops tracebacks; passes the first warning-or-worse line, then none until reset."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record (its traceback cut) unless it repeats a failure already told."""
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        if record.levelno < logging.WARNING:
            return True
        if self.failing:
            return False
        self.failing = True
        return True

    def reset(self) -> None:
        """Connected: the next failure is news again."""
        self.failing = False


def socket_mode_logger() -> tuple[logging.Logger, OncePerOutage]:
    """The logger handed to Socket Mode, and its filter."""
    logger = logging.getLogger("bot.adapters.slack.socket_mode")
    for f in list(logger.filters):
        if isinstance(f, OncePerOutage):
            logger.removeFilter(f)
    once = OncePerOutage()
    logger.addFilter(once)
    return logger, once
