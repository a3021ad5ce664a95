"""The voice tests follow the `voice` marker's rule: in a plain run when the extra is
installed, left out (and said to be) when it is not, and asked for with `-m voice` on a
machine without it each fails with one line instead of skipping."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

from bot.voice.model import unavailable

ROOT = Path(__file__).resolve().parents[2]
VOICE_TESTS = "tests/voice/test_voice_notes.py::"
NO_MODEL = "/nonexistent/whisper-model"  # as a machine without the extra: no model to load


def pytest_run(*args: str, model: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MATCHDAY_STT_MODEL")}
    if model is not None:
        env["MATCHDAY_STT_MODEL"] = model
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def collected(p: subprocess.CompletedProcess[str]) -> list[str]:
    assert p.returncode in (0, 5), p.stdout + p.stderr
    return [line for line in p.stdout.splitlines() if "::" in line]


def test_without_the_extra_a_plain_run_leaves_them_out_and_says_how_to_run_them() -> None:
    p = pytest_run("--collect-only", "tests/voice", model=NO_MODEL)
    ids = collected(p)
    assert ids and not [i for i in ids if i.startswith(VOICE_TESTS)]
    assert any("test_voice_without_extra.py::" in i for i in ids)  # those need no model
    left = re.search(r"(\d+) voice tests not run \(they need the voice extra\)", p.stdout)
    deselected = re.search(r"\((\d+) deselected\)", p.stdout)
    assert left and deselected and left.group(1) == deselected.group(1) != "0", p.stdout
    assert 'pip install -e ".[voice]"' in p.stdout and "python -m pytest -m voice" in p.stdout


def test_with_the_extra_a_plain_run_includes_them() -> None:
    ids = collected(pytest_run("--collect-only", "tests/voice"))
    voice = [i for i in ids if i.startswith(VOICE_TESTS)]
    assert len(voice) == (6 if not unavailable() else 0), ids


def test_dash_m_voice_without_the_extra_fails_with_one_line_not_skip() -> None:
    p = pytest_run("-m", "voice", "-rA", f"{VOICE_TESTS}test_a_note_over_the_limit_is_kept_"
                   "and_not_transcribed", model=NO_MODEL)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "skipped" not in out and "1 error" in out, out
    reasons = [line for line in out.splitlines()
               if "voice test needs the voice extra" in line and not line.startswith("ERROR ")]
    assert len(reasons) == 1, out
    # with faster-whisper installed the missing part is the model; without it, the package
    missing = ("faster-whisper is not installed" if importlib.util.find_spec("faster_whisper")
               is None else f"MATCHDAY_STT_MODEL={NO_MODEL} is not a CTranslate2 Whisper model")
    assert missing in reasons[0], reasons[0]
    assert "python -m pytest -m voice" in reasons[0] and "Traceback" not in out
