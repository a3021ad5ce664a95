"""The replay transcript gives the ground's local time: a line said at 18:30 UTC in August
reads 19:30 (BST); the JSON lines keep the exact ISO instant."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from bot.replay import printer

SAID = {"kind": "said", "at": "2026-08-15T18:30:00+00:00", "from": "steward",
        "role": "steward", "text": "/r fight"}


def test_transcript_lines_are_in_local_time() -> None:
    out: list[str] = []
    printer(False, out=out.append, tz=ZoneInfo("Europe/London"))(SAID)
    assert out == ["19:30 steward (steward): /r fight"]


def test_json_lines_keep_the_instant() -> None:
    out: list[str] = []
    reply = {**SAID, "kind": "reply", "to": "steward"}
    printer(True, out=out.append, tz=ZoneInfo("Europe/London"))(reply)
    assert '"at": "2026-08-15T18:30:00+00:00"' in out[0]
