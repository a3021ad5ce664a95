"""The README's test command passes on a machine with only Python: the browser tests are left
out of a plain run (and said to be), `-m browser` runs them, and asked for without a browser
they fail with one line instead of skipping."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROWSER_TESTS = ("tests/web/test_web_browser.py::", "tests/web/test_web_wall.py::",
                 "tests/web/test_web_a11y.py::", "tests/web/test_web_stewarding_browser.py::",
                 "tests/web/test_web_wall_round2.py::")
BROWSER_COUNT = 42  # 21 tests, each in Chromium and Firefox


def pytest_run(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def collected(*args: str) -> list[str]:
    p = pytest_run("--collect-only", "tests/web", *args)
    assert p.returncode in (0, 5), p.stdout + p.stderr
    return [line for line in p.stdout.splitlines() if "::" in line]


def test_a_plain_run_leaves_the_browser_tests_out_and_says_how_to_run_them() -> None:
    p = pytest_run("--collect-only", "tests/web")
    ids = [line for line in p.stdout.splitlines() if "::" in line]
    assert ids and not [i for i in ids if i.startswith(BROWSER_TESTS)]
    assert f"{BROWSER_COUNT} browser tests not run" in p.stdout
    assert "apt-get install chromium chromium-driver firefox-esr" in p.stdout
    assert "python -m pytest -m browser" in p.stdout


def test_dash_m_browser_selects_exactly_the_browser_tests() -> None:
    ids = collected("-m", "browser")
    assert len(ids) == BROWSER_COUNT and all(i.startswith(BROWSER_TESTS) for i in ids)


def test_the_ci_redis_run_keeps_the_redis_tests_without_browsers() -> None:
    ids = collected("-m", "redis and not long")
    assert any(i.startswith("tests/web/test_web.py::") for i in ids)
    assert not [i for i in ids if i.startswith(BROWSER_TESTS)]


def test_browser_tests_without_browsers_fail_with_one_line_not_skip() -> None:
    # PATH with only this Python's directory: no chromium, chromedriver or firefox-esr on it
    # the one test in each browser: [chromium] and [firefox]
    p = pytest_run("-m", "browser", "-rA",
                   "tests/web/test_web_browser.py::test_viewer_sees_no_restricted_data",
                   path=str(Path(sys.executable).parent))
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "skipped" not in out and "2 error" in out, out
    # the error bodies; the summary repeats them (untruncated when CI is set), prefixed "ERROR "
    reasons = sorted(line for line in out.splitlines()
                     if "not found on PATH" in line and not line.startswith("ERROR "))
    assert len(reasons) == 2, out  # one line each, no traceback
    assert reasons[0].startswith("Chromium and its driver not found on PATH")
    assert reasons[1].startswith("Firefox not found on PATH (none of firefox-esr, firefox)")
    assert all("apt-get install chromium chromium-driver firefox-esr" in r for r in reasons)
    assert "Traceback" not in out
