"""Every config file is checked before the bot starts: a file broken in a typical way stops
`matchday run` with one line naming the file, the key and what is wrong (not a traceback at
the first report), and `matchday check-config` says the same without starting anything."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import (
    ROOT,
    matchday,
)

# (file, text to replace, replacement, the line expected: file and key first)
BREAKS = [
    ("inspections.toml", 'zone = "stb_walkway"', 'zone = "stb_walkwya"',
     "inspections.toml: grounds.london_stadium.item[0].zone: 'stb_walkwya' is not a zone of "
     "london_stadium"),
    ("escalation.toml", "{ after_s = 180,", '{ after_s = "3m",',
     "escalation.toml: severity.4.tiers[1].after_s: input should be a valid integer"),
    ("escalation.toml", 'tiers = [{ after_s = 300, to = ["control"] }]',
     'tiers = [{ after_s = 300, to = ["controll"] }]',
     "escalation.toml: severity.2.tiers[0].to[0]: audience 'controll' is not in channels.toml"),
    ("escalation.toml", "remind_every_s = 600\nremind_to = [\"control\", \"command\"]\n\n"
     "[severity.5]", "remind_every_s = -600\nremind_to = [\"control\", \"command\"]\n\n"
     "[severity.5]",
     "escalation.toml: severity.4.remind_every_s: input should be greater than or equal to 0"),
    ("briefings.toml", '"T-3h", "T-60m"]', '"T-3h", "T-60 mins"]',
     "briefings.toml: cadence.C-IRD[2]: bad offset 'T-60 mins'"),
    ("briefings.toml", 'timezone = "Europe/London"', 'timezone = "Europe/Londn"',
     "briefings.toml: timezone: unknown time zone 'Europe/Londn'"),
    ("briefings.toml", 'summary = ["summary"]', 'summary = ["sumary"]',
     "briefings.toml: audiences.summary[0]: audience 'sumary' is not in channels.toml"),
    ("briefings.toml", "summary_delay_minutes = 10", "summary_delay_minutes = 10.5",
     "briefings.toml: timing.summary_delay_minutes: input should be a valid integer"),
    ("channels.toml", 'readers = ["steward", "supervisor"]', 'readers = ["stewards"]',
     "channels.toml: audiences.stewards.readers[0]: unknown role 'stewards'"),
    ("channels.toml", 'telegram = ["-1001000000001"]', 'telegram = ["control room"]',
     "channels.toml: audiences.control.telegram[0]: a Telegram chat id is a number"),
    ("channels.toml", 'slack = ["C0POLICE"]', 'slak = ["C0POLICE"]',
     "channels.toml: audiences.police.slak: unknown key"),
    ("roster.toml", 'zone = "stb_upper"', 'zone = "stb_uper"',
     "roster.toml: user[0].zone: 'stb_uper' is not a zone of any ground"),
    ("roster.toml", 'role = "supervisor"', 'role = "superviser"',
     "roster.toml: user[1].role: unknown role 'superviser'"),
    ("retention.toml", "ref_days = 365 ", "ref_days = 0 ",
     "retention.toml: arrest.ref_days: input should be greater than or equal to 1"),
    ("roles.toml", '"arrest", "ban"', '"arest", "ban"',
     "roles.toml: unknown command 'arest' for police_liaison"),
    ("grounds/london_stadium.toml", '"stb_lower", "stb_upper", "stb_walkway"',
     '"stb_lower", "stb_uper", "stb_walkway"',
     "grounds/london_stadium.toml: zone[0].adjacent: 'stb_uper' is not a zone of this ground"),
    ("grounds/london_stadium.toml", '# [fixtures."westham-chelsea-20261202"]\n# drop = '
     '["gate_b_lane_2"]', '[fixtures."westham-chelsea-20261202"]\ndrop = ["gate_b_lane_9"]',
     "grounds/london_stadium.toml: fixtures.westham-chelsea-20261202: drop names no post of "
     "this ground: gate_b_lane_9"),
    ("escalation.toml", "[merge]", "[merge",
     "escalation.toml: (file): not valid TOML: "),
]


def broken_config(tmp_path: Path, file: str, old: str, new: str) -> Path:
    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    path = cfg / file
    text = path.read_text()
    assert old in text, f"{old!r} is no longer in {file}"
    path.write_text(text.replace(old, new, 1))
    return cfg


def test_the_shipped_config_is_ok(tmp_path: Path) -> None:
    p = matchday("check-config", env={"MATCHDAY_DATA_DIR": str(tmp_path)})
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("config OK: 9 files")


@pytest.mark.parametrize(("file", "old", "new", "line"), BREAKS,
                         ids=[f"{b[0]}:{b[3].split(': ')[1]}" for b in BREAKS])
def test_a_broken_file_is_one_line_naming_file_and_key(tmp_path: Path, file: str, old: str,
                                                         new: str, line: str) -> None:
    env = {"MATCHDAY_CONFIG_DIR": str(broken_config(tmp_path, file, old, new)),
           "MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    check = matchday("check-config", env=env)
    assert check.returncode == 1
    assert check.stdout.startswith(line) and check.stdout.count("\n") == 1, check.stdout
    start = matchday("run", "--as", "steward", env=env, stdin="/quit\n")
    assert start.returncode == 1, start.stdout + start.stderr
    assert start.stderr == f"matchday: {check.stdout}"  # the same line, before any output
    assert "Traceback" not in start.stderr and "Fixture:" not in start.stdout
