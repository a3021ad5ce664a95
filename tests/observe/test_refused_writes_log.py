"""Writes refused by a slot's master that still answers (NOREPLICAS) are not "Redis down":
stewards retrying while reads and other slots go on make one line when the refusals begin
and one once none has been refused for a while, never a "not answering / back after 0 s"
pair per refused write (#34 item 3: ~1,000 such lines per replica in 3.5 min)."""

from __future__ import annotations

import logging

import pytest

from bot.observe.outage import REFUSALS_QUIET_S, OutageLog


def test_refused_writes_between_answers_are_one_line_when_they_begin_and_one_when_over(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    outage = OutageLog(wall=lambda: 0.0, monotonic=lambda: now[0])
    outage.observe(True)
    caplog.set_level(logging.WARNING, "bot.outage")
    for _ in range(500):  # a refused report, then reads and other slots' writes answered
        outage.observe(True)
        outage.count(refused=True)
        outage.observe(True)
        now[0] += 0.4
    assert not outage.down
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "refusing writes" in lines[0], lines
    now[0] += REFUSALS_QUIET_S
    outage.observe(True)
    outage.observe(True)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "500 commands answered NOT logged" in lines[1], lines
    assert not [line for line in lines if "not answering" in line or "back after" in line]
