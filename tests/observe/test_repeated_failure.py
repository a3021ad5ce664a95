"""A background loop that fails the same way every second (the web view's live feed on a
Cluster did, for good, with a traceback each time) logs the failure once with its
traceback, counts the repeats, logs a new kind of failure again, and says in one line when
it works again."""

from __future__ import annotations

import logging

import pytest

from bot.observe.repeats import RepeatedFailure

log = logging.getLogger("tests.loop")


def test_the_same_failure_is_one_traceback_and_recovery_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "tests.loop")
    failures = RepeatedFailure(log, "live feed of fx-1")
    for _ in range(60):  # a minute of one failure a second
        failures.failed(LookupError('Slot "4828" is not covered by the cluster.'))
    failures.failed(ValueError("bad event"))
    failures.failed(ValueError("bad event"))
    failures.ok()
    failures.ok()
    records = caplog.records
    assert [r.levelno for r in records] == [logging.ERROR, logging.ERROR, logging.WARNING]
    assert "LookupError" in _traceback(records[0]) and "ValueError" in _traceback(records[1])
    assert records[0].getMessage().startswith("live feed of fx-1 failed; retrying")
    assert records[2].getMessage() == ("live feed of fx-1 works again after 2 failure(s) "
                                       "(ValueError: bad event)")


def _traceback(record: logging.LogRecord) -> str:
    """The exception a record carries, as logged (the bot's redactor keeps it as text)."""
    if record.exc_text:
        return record.exc_text
    return logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
