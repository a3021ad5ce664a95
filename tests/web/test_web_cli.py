"""`matchday run --web` and `matchday web-link` as an operator runs them, beside each other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from rigs.net import free_port
from tests.support.web import BROWSER
from tests.support.web_cli import (  # noqa: F401 (fixtures)
    status_of,
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"


def test_headless_web_run_and_a_link_from_the_cli(tmp_path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "MATCHDAY_DATA_DIR": str(tmp_path), "PORT": str(port), "MATCHDAY_APPENDFSYNC": "no"}
    replay = subprocess.run([sys.executable, "-m", "bot.cli", "replay", str(SCENARIO)], env=env,
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert replay.returncode == 0, replay.stderr
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run", "--web"], env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # the "running: ..." line once it listens
        while line and "running:" not in line:  # after e.g. the appendfsync-no warning
            line = proc.stderr.readline()
        assert f"control room http://127.0.0.1:{port}/control/" in line, line
        assert status_of(f"http://127.0.0.1:{port}/control/")[0] == 401
        bad = subprocess.run([sys.executable, "-m", "bot.cli", "web-link", "--by", "nobody"],
                             env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and "is not a member" in bad.stderr
        assert "Traceback" not in bad.stderr
        # a second shell, its own PORT unset or different: the link is the running server's
        link = subprocess.run([sys.executable, "-m", "bot.cli", "web-link", "--by",
                               "console:control"], env=env | {"PORT": str(free_port())},
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert link.returncode == 0, link.stderr
        url = link.stdout.strip()
        assert url.startswith(f"http://127.0.0.1:{port}/control/login/")
        # the CLI borrowed the bot's embedded Redis and left it running
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with browser.open(urllib.request.Request(url, data=b"", headers=BROWSER),
                          timeout=5) as r:
            assert r.status == 200 and "Signed in" in r.read().decode()
        assert status_of(url, data=b"")[0] == 403  # used
        # no fixture is active after a replay: the screen shows the replayed night
        with browser.open(f"http://127.0.0.1:{port}/control/", timeout=10) as r:
            page = r.read().decode()
        assert "West Ham United v Chelsea" in page and "London Stadium" in page
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
