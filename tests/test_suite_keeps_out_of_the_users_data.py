"""The README's two commands in order: the console (first command) makes this installation's
signing key in the user's data dir; the test suite (second command) must not pick it up, or
every `matchday verify` a test runs refuses the test's own export as another installation's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY = re.compile(r"\b[0-9a-f]{64}\b")


def public_key(env: dict[str, str]) -> str:
    """The export signing key `matchday keys` reports (made on first use) under `env`."""
    p = subprocess.run([sys.executable, "-m", "bot.cli", "keys"], capture_output=True,
                       text=True, timeout=120, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr
    [key] = KEY.findall(p.stdout)
    return key


def test_a_key_in_the_users_data_dir_is_not_the_one_the_tests_see(tmp_path):
    home = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "share")}
    as_a_user = {k: v for k, v in os.environ.items() if k != "MATCHDAY_DATA_DIR"} | home
    users_key = public_key(as_a_user)  # what the Quick start's console made
    assert (tmp_path / "share" / "matchday" / "keys").is_dir()
    assert public_key(os.environ | home) != users_key
