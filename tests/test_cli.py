# ruff: noqa: F811  (pytest fixtures imported from tests.support)
"""The `matchday` command as a user runs it: console chat, replay, demo, summaries, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.cli import ROOT, SCENARIO, env, matchday  # noqa: F401 (fixture)


def test_console_chat_report_then_status(env):
    lines = ["/incident missile @stb_walkway s4 coins from the away end",
             ":as police_commander", "/status", "/quit"]
    p = matchday("run", "--as", "steward", env=env, stdin="\n".join(lines) + "\n")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "Fixture: West Ham United v Chelsea" in out
    assert "Logged INC-1" in out
    assert "→ control: 🟠 INC-1 Throwing missiles" in out  # what the control room sees
    assert "Open: 1 (unacknowledged 1)" in out
    assert "Traceback" not in out + p.stderr


def test_the_sample_fixture_has_a_small_deployment_plan(env):
    """The Quick start's sample fixture comes with six of the ground's eight posts filled from
    a small rota (issue 24: the console shows the plan); a second start adds nothing."""
    for _ in range(2):
        p = matchday("run", "--as", "control", env=env, stdin="/deploy\n/status\n/quit\n")
        assert p.returncode == 0, p.stderr
        plan, status = p.stdout.split("Deployment · ")[1].split("Status · ")
        assert "Posts: 6/8 filled · unfilled: STB (north stand): 1, Gate A: 1" in plan
        assert "✓ Block 250 gangway (static): Steward 14 [14]" in plan
        assert "✗ UNFILLED Gate A fire point (fire, qualified)" in plan
        assert "Posts: 6/8 filled" in status


def test_console_buttons_are_pressed_by_number(env):
    # type, place (own zone first), severity 5 (button 5), then confirm it (button 1)
    lines = ["/incident", "2", "1", "5", "1"]
    p = matchday("run", "--as", "steward", env=env, stdin="\n".join(lines) + "\n")
    assert p.returncode == 0, p.stderr
    assert "Logged INC-1" in p.stdout
    assert "severity 5 major incident" in p.stdout


def test_embedded_default_keeps_data_between_starts(tmp_path):
    env = {"MATCHDAY_DATA_DIR": str(tmp_path)}
    p = matchday("run", "--as", "steward", env=env, stdin="/incident pyro @away_upper s3\n")
    assert p.returncode == 0, p.stderr
    assert "Logged INC-1" in p.stdout
    p = matchday("run", "--as", "control", env=env, stdin="/status\n")
    assert "Open: 1" in p.stdout, p.stdout + p.stderr
    assert (tmp_path / "redis" / "appendonlydir").exists() or any(
        f.name.startswith("appendonly") for f in (tmp_path / "redis").rglob("*"))


def test_replay_json_then_summary_and_fixtures(env):
    p = matchday("replay", str(SCENARIO), "--json", env=env)
    assert p.returncode == 0, p.stderr
    records = [json.loads(line) for line in p.stdout.splitlines()]
    assert records and all(set(r) == {"at", "to", "text"} for r in records)
    assert any(r["to"] == "control" and "INC-7" in r["text"] for r in records)
    fixtures = json.loads(matchday("fixtures", "--json", env=env).stdout)
    assert [f["id"] for f in fixtures] == ["drill-westham-chelsea-20261202"]
    s = matchday("summary", "--fixture", "drill-westham-chelsea-20261202", "--json", env=env)
    fig = json.loads(s.stdout)
    assert fig["arrests"]["total"] == 7
    assert fig["arrests"]["by_offence"] == {"violent_disorder": 4, "throwing_missiles": 2,
                                            "possession_pyrotechnics": 1}
    assert fig["arrests"]["inside_outside"] == {"inside": 7}
    # seven on the night, and the walkway netting that failed its inspection before the gates
    assert fig["bans"]["total"] == 9 and fig["incidents"]["total"] == 8
    assert fig["incidents"]["by_location"]["stb_walkway"] == 4
    # replaying the same drill again logs nothing twice
    matchday("replay", str(SCENARIO), "--json", env=env)
    again = json.loads(matchday("summary", "--fixture", "drill-westham-chelsea-20261202", "--json",
                                env=env).stdout)
    assert again["arrests"] == fig["arrests"] and again["incidents"] == fig["incidents"]


def test_demo_prints_the_conversation_and_final_summary(tmp_path):
    p = matchday("demo", env={"MATCHDAY_DATA_DIR": str(tmp_path / "unused")}, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "/incident disorder @stb_walkway s5" in p.stdout
    tail = p.stdout.split("=== Final summary")[1]
    assert "Arrests: 7 (inside 7, outside 0; home 1, away 6)" in tail
    assert "not for your role" not in p.stdout  # the drill follows config/roles.toml
    assert not (tmp_path / "unused").exists()  # a throwaway store
    # so it points nobody at fixtures that are gone, only at how to keep the night
    assert "Replayed into" not in p.stdout and "matchday replay " in tail


def test_unreachable_redis_is_one_line(tmp_path):
    p = matchday("fixtures", env={"REDIS_URL": "redis://127.0.0.1:1/0",
                                  "MATCHDAY_DATA_DIR": str(tmp_path)})
    assert p.returncode == 1
    assert p.stderr.strip().count("\n") == 0 and "not answering" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(("var", "value", "expect"), [
    ("MATCHDAY_TZ", "Mars/Olympus", "unknown time zone"),
    ("REDIS_URL", "http://x", "must start with redis://"),
    ("MATCHDAY_APPENDFSYNC", "sometimes", "always, everysec or no"),
])
def test_bad_settings_are_one_line(tmp_path, var, value, expect):
    p = matchday("fixtures", env={var: value, "MATCHDAY_DATA_DIR": str(tmp_path)})
    assert p.returncode == 2 and expect in p.stderr
    assert p.stderr.strip().count("\n") == 0


def test_a_bad_role_matrix_is_one_line(env, tmp_path):
    import shutil

    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    roles = cfg / "roles.toml"
    roles.write_text(roles.read_text().replace('"arrest", "ban"', '"arest", "ban"'))
    p = matchday("fixtures", env={**env, "MATCHDAY_CONFIG_DIR": str(cfg)})
    assert p.returncode == 1 and p.stderr.strip().count("\n") == 0, p.stderr
    assert "roles.toml: unknown command 'arest' for police_liaison" in p.stderr
    assert "Traceback" not in p.stderr


def test_bad_replay_file_names_the_line(env, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"at": "2026-12-02T19:00:00+00:00", "user": "a", "role": "steward", '
                   '"text": "/help"}\n{"at": "nope"}\n')
    p = matchday("replay", str(bad), env=env)
    assert p.returncode == 1 and "bad.jsonl:2" in p.stderr


def test_sigterm_stops_the_bot_and_its_embedded_server(tmp_path):
    import json as _json
    import signal

    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["MATCHDAY_DATA_DIR"] = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)
    try:
        first = proc.stdout.readline()  # printed once the store and fixture are ready
        assert "Fixture:" in first, first + proc.stderr.read()
        pid = _json.loads((tmp_path / "redis" / "server.json").read_text())["pid"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    assert not (tmp_path / "redis" / "server.json").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_export_verify_and_restricted_refs(env, tmp_path):
    assert matchday("replay", str(SCENARIO), "--json", env=env).returncode == 0
    fx = "drill-westham-chelsea-20261202"
    out = tmp_path / "export"
    p = matchday("export", "--fixture", fx, "--out", str(out), env=env)
    assert p.returncode == 0, p.stderr
    assert "MPS/CU" not in "".join(f.read_text() for f in out.iterdir())  # no custody refs
    assert matchday("verify", str(out), env=env).returncode == 0
    lines = (out / "events.jsonl").read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if "coins and bottles" in line)
    lines[k] = lines[k].replace("coins and bottles", "a coin")  # someone softens the record
    (out / "events.jsonl").write_text("\n".join(lines) + "\n")
    p = matchday("verify", str(out), env=env)
    assert p.returncode == 1 and "altered" in p.stdout, p.stdout
    p = matchday("export", "--fixture", fx, "--out", str(tmp_path / "r"), "--restricted",
                 env=env)
    assert p.returncode == 1 and "police or admin" in p.stderr
    assert "Traceback" not in p.stderr
    p = matchday("export", "--fixture", fx, "--out", str(tmp_path / "r"), "--restricted",
                 "--by", "console:police_commander", env=env)
    assert p.returncode == 0
    assert "MPS/CU/1101" in "".join(f.read_text() for f in (tmp_path / "r").iterdir())
