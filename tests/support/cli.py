"""The `matchday` command as a subprocess, run from the repo root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"


@pytest.fixture
def env(store, redis_url, tmp_path):  # `store` empties the database first
    """REDIS_URL of the test's Redis and a data folder of its own."""
    return {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path)}


def matchday(*args: str, env: dict[str, str], stdin: str = "",
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `matchday ARGS` to the end: this environment without REDIS_URL, plus `env`."""
    full_env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | env
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], input=stdin, env=full_env,
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def assert_one_line_refusal(p: subprocess.CompletedProcess[str], *words: str) -> None:
    """The command refused in one line on stderr naming `words`: nothing on stdout, no
    traceback."""
    assert p.returncode != 0 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr
    for word in words:
        assert word in p.stderr, p.stderr
