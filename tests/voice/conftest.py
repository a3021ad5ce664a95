"""Fixtures of the voice-note tests, and the `voice` marker's rule: with the `.[voice]` extra
installed they run in a plain `python -m pytest`; without it they are left out (and said to
be); asked for with `-m voice` on a machine without it, each fails with one line."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from bot.core.dispatch import Core
from bot.domain.grounds import load_grounds
from bot.settings import PROJECT_CONFIG
from bot.tasks import cancel_and_wait
from bot.voice.model import model_dir, unavailable
from bot.voice.pool import Transcriber
from bot.voice.suggest import prompt_for
from tests.support.optional_marker import OptionalMarker

INSTALL = 'pip install -e ".[voice]" && sudo apt-get install -y espeak-ng sox libsox-fmt-all'


def _model_setting() -> str:
    """MATCHDAY_STT_MODEL as the bot reads it ('' for the bundled model)."""
    return os.environ.get("MATCHDAY_STT_MODEL", "")


# with the extra installed they run in a plain run too; without it only under -m voice
MARKER = OptionalMarker("voice", "the voice extra", INSTALL,
                        ready=lambda: not unavailable(_model_setting()))
RUN = MARKER.run


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Voice tests need the extra (faster-whisper and its model): without it they run only
    when the -m expression names `voice`, where they fail saying what is missing."""
    MARKER.leave_out(config, items)



@pytest.fixture(scope="session")
def whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The model directory (Whisper base put together in this session's data dir, unless
    MATCHDAY_STT_MODEL names another); a voice test on a machine without the extra fails
    with one line."""
    why = unavailable(_model_setting())
    if why:
        pytest.fail(f"voice test needs the voice extra: {why}; {INSTALL}, then {RUN}",
                    pytrace=False)
    return model_dir(_model_setting(), tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def say(whisper: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], bytes]:
    """Words spoken by espeak-ng as a Telegram voice note (OGG/Opus), made here: no files
    are downloaded."""
    missing = [p for p in ("espeak-ng", "sox") if shutil.which(p) is None]
    if missing:
        pytest.fail(f"voice test needs {' and '.join(missing)}: {INSTALL}, then {RUN}",
                    pytrace=False)
    from rigs.voice_corpus import speak, to_voice_note

    work = tmp_path_factory.mktemp("voice")
    made: dict[str, bytes] = {}

    def voice_note(text: str) -> bytes:
        if text not in made:
            wav, ogg = work / f"{len(made)}.wav", work / f"{len(made)}.ogg"
            speak(text, "en-gb", 160, 50, wav)
            to_voice_note(wav, ogg)
            made[text] = ogg.read_bytes()
        return made[text]

    return voice_note


def transcriber(model: Path, *, workers: int = 1, queue: int = 4,
                max_s: int = 60) -> Transcriber:
    """A pool with the London Stadium's vocabulary as its prompt."""
    grounds = list(load_grounds(PROJECT_CONFIG).values())
    return Transcriber(model, prompt_for(grounds), workers=workers, queue=queue, max_s=max_s)


@pytest_asyncio.fixture
async def core(core: Core) -> AsyncIterator[Core]:
    """The shared core, its delivery workers stopped at the end (after the adapters)."""
    yield core
    try:
        await asyncio.wait_for(core.notifier.drain(), 2)
    except TimeoutError:
        pass
    await cancel_and_wait(core.notifier._workers.values())
