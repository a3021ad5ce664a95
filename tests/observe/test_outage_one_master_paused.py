"""On a Cluster with one master paused, the calls to that master fail between calls to the
others that answer. Each answer ended the outage and the next failure began another:
bench/saturday.py --fault pause logged "Redis not answering" / "Redis back after 0 s" several
times a second per replica for the whole pause. The outage is over once Redis has answered
for BACK_AFTER_S with no call failing: one line when it goes, one when it is back."""

from __future__ import annotations

import logging

import pytest

from bot.observe.outage import BACK_AFTER_S, OutageLog


def test_answers_between_failures_are_one_outage(caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    outage = OutageLog(wall=lambda: 0.0, monotonic=lambda: now[0])
    outage.observe(True)
    caplog.set_level(logging.WARNING, "bot.outage")
    for _ in range(80):  # 8 s: the paused master's calls fail, the others' answer
        outage.observe(True)
        outage.observe(False)
        outage.count()  # a report for the paused master's fixture answered NOT logged
        outage.observe(True)
        now[0] += 0.1
    assert outage.down
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [lines[0]] and "not answering" in lines[0], lines
    for _ in range(int(BACK_AFTER_S / 0.1) + 1):  # the master is back: every call answers
        outage.observe(True)
        now[0] += 0.1
    assert not outage.down
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[1].startswith("Redis back after 8 s; 80 commands answered NOT logged"), lines


def test_an_outage_that_ends_is_back_after_answers_for_a_while(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    outage = OutageLog(wall=lambda: 0.0, monotonic=lambda: now[0])
    outage.observe(True)
    caplog.set_level(logging.WARNING, "bot.outage")
    outage.observe(False)
    now[0] += 5.0
    outage.observe(True)  # the first answer: not yet over (another call may still fail)
    assert outage.down and len(caplog.records) == 1
    now[0] += BACK_AFTER_S
    outage.observe(True)
    assert not outage.down
    assert caplog.records[-1].getMessage().startswith("Redis back after 5 s"), caplog.text
