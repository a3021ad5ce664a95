"""python-telegram-bot's log lines in the delivery layer's terms."""

from __future__ import annotations

import logging

from telegram.error import RetryAfter


class RetryAfterIsWaitedOut(logging.Filter):
    """PTB's AIORateLimiter logs a 429 it does not retry (max_retries=0) as an ERROR with a
    traceback; the delivery layer waits retry_after and sends again, so it is a warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR and record.exc_info and \
                isinstance(record.exc_info[1], RetryAfter):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.msg = f"{record.getMessage()}: {record.exc_info[1]} (waited out by delivery)"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


def quiet_waited_out_429s() -> None:
    """Install the filter on PTB's rate limiter's logger (once)."""
    limiter_log = logging.getLogger("telegram.ext.AIORateLimiter")
    if not any(isinstance(f, RetryAfterIsWaitedOut) for f in limiter_log.filters):
        limiter_log.addFilter(RetryAfterIsWaitedOut())
