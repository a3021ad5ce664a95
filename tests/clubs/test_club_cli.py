# ruff: noqa: F811  (pytest fixtures imported from tests.support)
"""`matchday club ...` and check-config as an operator runs them (#39): secrets are given and
shown as references only (a real-looking secret in the environment appears in no output),
bad input is one line and a non-zero exit, and check-config names a club whose secret is
missing."""

from __future__ import annotations

import shutil

import pytest

from tests.support.cli import (  # noqa: F401 (fixture)
    ROOT,
    assert_one_line_refusal,
    env,
    matchday,
)

TG_TOKEN = "7712345678:AAH9x-Kq2LwVtR8sQpZ0yN3mB5cD7eF1gH4"
TG_SECRET = "wh-5f0c9b2e8d7a4163b9e2c1d0a8f7e6b5"
SLACK_TOKEN = "xoxb-2741-9918273645-Zq8LmN3pR5tV7wX9yB1cD3eF"
SIGNING = "8f14e45fceea167a5a36dedd4bea2543"
SECRETS = (TG_TOKEN, TG_SECRET, SLACK_TOKEN, SIGNING)
REFS = ["--telegram-token", "env:WHU_TG_TOKEN", "--telegram-secret", "env:WHU_TG_SECRET",
        "--slack-token", "env:WHU_SLACK_TOKEN", "--slack-signing-secret"]


@pytest.fixture
def club_env(env, tmp_path):
    signing = tmp_path / "whu-signing"
    signing.write_text(SIGNING + "\n")
    return env | {"WHU_TG_TOKEN": TG_TOKEN, "WHU_TG_SECRET": TG_SECRET,
                  "WHU_SLACK_TOKEN": SLACK_TOKEN, "SIGNING_FILE": str(signing)}


def add_west_ham(club_env, *extra: str):
    return matchday("club", "add", "west-ham", "--name", "West Ham United", *REFS,
                    f"file:{club_env['SIGNING_FILE']}", "--ground", "london_stadium", *extra,
                    env=club_env)


def assert_no_secret(*outputs: str) -> None:
    for out in outputs:
        for secret in SECRETS:
            assert secret not in out
        assert "Traceback" not in out


def test_add_list_show_print_references_and_never_a_secret(club_env):
    added = add_west_ham(club_env)
    assert added.returncode == 0, added.stderr
    assert "Added club west-ham (West Ham United), enabled." in added.stdout
    listed = matchday("club", "list", env=club_env)
    shown = matchday("club", "show", "west-ham", env=club_env)
    for p in (listed, shown):
        assert p.returncode == 0, p.stderr
        assert "west-ham  enabled  West Ham United  grounds: london_stadium" in p.stdout
        assert "Telegram bot token       env:WHU_TG_TOKEN  ✓ set" in p.stdout
        assert f"Slack signing secret     file:{club_env['SIGNING_FILE']}  ✓ set" in p.stdout
    assert "club.add  by cli:club" in shown.stdout
    assert_no_secret(added.stdout, added.stderr, listed.stdout, listed.stderr, shown.stdout,
                     shown.stderr)


def test_a_secret_missing_here_shows_as_missing(club_env):
    env = {k: v for k, v in club_env.items() if k != "WHU_SLACK_TOKEN"}
    assert add_west_ham(env).returncode == 0
    shown = matchday("club", "show", "west-ham", env=env)
    assert "Slack bot token          env:WHU_SLACK_TOKEN  ✗ missing" in shown.stdout
    assert "Telegram bot token       env:WHU_TG_TOKEN  ✓ set" in shown.stdout


def test_a_literal_secret_on_the_command_line_is_refused_and_not_repeated(club_env):
    p = matchday("club", "add", "west-ham", "--name", "West Ham United",
                 "--telegram-token", TG_TOKEN, *REFS[2:], "env:X", env=club_env)
    assert_one_line_refusal(p, "--telegram-token", "env:VAR_NAME")
    assert_no_secret(p.stdout, p.stderr)
    assert "No clubs registered" in matchday("club", "list", env=club_env).stdout


def test_adding_an_id_twice_is_refused_in_one_line(club_env):
    assert add_west_ham(club_env).returncode == 0
    again = matchday("club", "add", "west-ham", "--name", "Impostor", *REFS, "env:X",
                     env=club_env)
    assert_one_line_refusal(again, "'west-ham' exists already")
    assert "West Ham United" in matchday("club", "show", "west-ham", env=club_env).stdout


def test_bad_slug_and_unknown_club_are_one_line_errors(club_env):
    bad = matchday("club", "add", "West_Ham", "--name", "x", *REFS, "env:X", env=club_env)
    assert_one_line_refusal(bad, "'West_Ham' is not a club id")
    for cmd in ("show", "enable", "disable"):
        assert_one_line_refusal(matchday("club", cmd, "nope", env=club_env), "no club 'nope'")
    ground = matchday("club", "add", "ars", "--name", "Arsenal", *REFS, "env:X", "--ground",
                      "highbury", env=club_env)
    assert_one_line_refusal(ground, "no ground 'highbury'")


def test_disable_then_enable_is_recorded(club_env):
    assert add_west_ham(club_env).returncode == 0
    off = matchday("club", "disable", "west-ham", env=club_env)
    assert off.returncode == 0 and "Club west-ham disabled" in off.stdout
    assert "west-ham  DISABLED" in matchday("club", "list", env=club_env).stdout
    assert matchday("club", "enable", "west-ham", env=club_env).returncode == 0
    shown = matchday("club", "show", "west-ham", env=club_env).stdout
    assert [line.split()[1] for line in shown.split("history:\n")[1].splitlines()] == [
        "club.add", "club.disable", "club.enable"]


def test_redis_down_is_one_line(tmp_path):
    down = {"REDIS_URL": "redis://127.0.0.1:1/0", "MATCHDAY_DATA_DIR": str(tmp_path)}
    assert_one_line_refusal(matchday("club", "list", env=down), "not answering")
    check = matchday("check-config", env=down)
    assert check.returncode == 1 and "Traceback" not in check.stdout + check.stderr
    assert check.stdout.splitlines()[-1].startswith("clubs not checked: Redis at ")


def test_check_config_names_the_club_whose_secret_is_missing(club_env):
    assert add_west_ham(club_env).returncode == 0
    ok = matchday("check-config", env=club_env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "club west-ham: OK (4 secrets set)" in ok.stdout
    env = {k: v for k, v in club_env.items() if k != "WHU_TG_SECRET"}
    bad = matchday("check-config", env=env)
    assert bad.returncode == 1
    assert "club west-ham: secret missing: Telegram webhook secret env:WHU_TG_SECRET" \
        in bad.stdout
    assert_no_secret(ok.stdout, ok.stderr, bad.stdout, bad.stderr)
    assert matchday("club", "disable", "west-ham", env=env).returncode == 0
    off = matchday("check-config", env=env)
    assert off.returncode == 0 and "club west-ham: disabled, not checked" in off.stdout


def test_check_config_checks_a_clubs_own_config_directory(club_env, tmp_path):
    config = tmp_path / "config"
    shutil.copytree(ROOT / "config", config)
    own = config / "clubs" / "west-ham"
    shutil.copytree(ROOT / "config", own, ignore=shutil.ignore_patterns("clubs"))
    env = club_env | {"MATCHDAY_CONFIG_DIR": str(config)}
    assert add_west_ham(env).returncode == 0
    ok = matchday("check-config", env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "club west-ham: config OK: " in ok.stdout and str(own) in ok.stdout
    (own / "channels.toml").write_text("[audiences.control\ntelegram = [")
    bad = matchday("check-config", env=env)
    assert bad.returncode == 1 and "Traceback" not in bad.stdout + bad.stderr
    assert [line for line in bad.stdout.splitlines()
            if line.startswith(f"club west-ham: {own}") and "channels.toml" in line], bad.stdout
