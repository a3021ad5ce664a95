"""Issue 22 item 3: one odd line never ends a drill. A lone UTF-16 surrogate ("\\ud800", legal
JSON) is logged as U+FFFD; a line that is not JSON, lacks a field or has a bad time is named
with its line number and skipped, and every other line still runs."""

from __future__ import annotations

import json

from tests.support.cli import (  # noqa: F401  (env is a fixture)
    env,
    matchday,
)

FX = "drill-arsenal-spurs-20261127"  # a replay adds its fixtures as drills


def line(at: str, user: str, role: str, text: str) -> str:
    return json.dumps({"at": at, "user": user, "role": role, "text": text})  # "\ud800" escaped


DRILL = [
    line("2026-11-27T12:00:00+00:00", "adm", "admin",
         "/fixture add Arsenal v Spurs 2026-11-27 19:45 cat=C-IRD"),
    line("2026-11-27T19:00:00+00:00", "stw-1", "steward",
         "/incident missile @seg_ne s5 coins \ud800 thrown"),
    '{"at": "2026-11-27T19:01:00+00:00", "user": "stw-2", "role": "steward", "text": "/inc',
    '{"at": "2026-11-27T19:02:00+00:00", "user": "stw-2", "role": "steward"}',
    line("half time", "stw-2", "steward", "/incident pyro @away_upper s3"),
    line("2026-11-27T19:03:00+00:00", "stw-3", "steward\udfff", "/incident pyro @seg_ne s3"),
    line("2026-11-27T19:04:00+00:00", "stw-4\udc80", "steward",
         "/incident disorder @stb_walkway s4 \udfff"),
]


async def test_good_lines_run_and_bad_lines_are_named(env, store, tmp_path):  # noqa: F811
    path = tmp_path / "drill.jsonl"
    path.write_text("\n".join(DRILL) + "\n")
    p = matchday("replay", str(path), "--json", env=env)
    assert "Traceback" not in p.stderr
    assert p.returncode == 1, p.stderr  # a drill with bad lines is not a clean run
    problems = p.stderr.strip().splitlines()
    assert problems[0].startswith("matchday: drill.jsonl:3: line skipped: not JSON (")
    assert problems[1:] == [
        "matchday: drill.jsonl:4: line skipped: needs at, user, role, text (missing text)",
        "matchday: drill.jsonl:5: line skipped: 'at' is not a time: 'half time'",
        "matchday: drill.jsonl:6: line skipped: unknown role 'steward\ufffd'",
        "matchday: drill.jsonl: 3 lines replayed, 4 bad lines skipped",
    ]
    replies = [json.loads(x) for x in p.stdout.splitlines()]
    logged = [r["text"] for r in replies if r["text"].startswith("Logged INC-")]
    assert [t.split("\n")[0] for t in logged] == ["Logged INC-1", "Logged INC-2"]
    reports = [e for e in await store.events(FX) if e.kind == "incident.reported"]
    assert [(e.data["description"], e.by) for e in reports] == [
        ("coins \ufffd thrown", "replay:stw-1"), ("\ufffd", "replay:stw-4\ufffd")]


async def test_a_file_of_only_bad_lines_says_so(env, tmp_path):  # noqa: F811
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"at": nope}\n\xff\xfe\n')
    p = matchday("replay", str(path), env=env)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "bad.jsonl:1: line skipped" in p.stderr and "bad.jsonl:2: line skipped" in p.stderr
    assert p.stderr.strip().splitlines()[-1] == "matchday: bad.jsonl: no lines that can run"
