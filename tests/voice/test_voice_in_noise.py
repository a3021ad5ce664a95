"""A real speaker's voice note in crowd noise, through the real worker path (issue #38): the
Montreal Forced Aligner author's note recorded with a cold (bench/voice_corpus_real/
mfa-cold), quiet and hoarse, mixed with the corpus's crowd babble at 10 dB under its active
speech level, is transcribed by a spawned worker with the real model and the ground's prompt.
What a steward would notice: most words right, and no place of the ground's vocabulary that
was never said (the model going round its prompt used to write "Stratford station" over it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.voice.outcome import Heard
from rigs.voice_corpus_real import SHIPPED, noisy
from rigs.voice_score import echoed, edits, words
from tests.voice.conftest import INSTALL, RUN, transcriber

pytestmark = pytest.mark.voice
NOTE = "mfa-cold"  # 57 words, 26 s, a speaker with a cold and a long pause


@pytest.fixture(scope="module")
def note_in_noise(whisper: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, bytes]:
    """The note's words and the note mixed with crowd babble at 10 dB (made here: espeak-ng
    talkers and sox's pink noise)."""
    missing = [p for p in ("espeak-ng", "sox", "soxi") if shutil.which(p) is None]
    if missing:
        pytest.fail(f"voice test needs {' and '.join(missing)}: {INSTALL}, then {RUN}",
                    pytrace=False)
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("noisy")
    [row] = [r for line in (SHIPPED / "manifest.jsonl").read_text().splitlines()
             if (r := json.loads(line))["id"] == NOTE]
    (src / "manifest.jsonl").write_text(json.dumps(row) + "\n")
    shutil.copy(SHIPPED / f"{NOTE}.ogg", src / f"{NOTE}.ogg")
    noisy(out, src)
    return row["text"], (out / f"{NOTE}-noise10db.ogg").read_bytes()


async def test_a_real_speaker_in_crowd_noise_is_mostly_heard_and_no_place_is_made_up(
        whisper: Path, note_in_noise: tuple[str, bytes]) -> None:
    said, audio = note_in_noise
    pool = transcriber(whisper)
    try:
        assert pool.admit(26) is None
        heard = await pool.transcribe(audio)
    finally:
        pool.close()
    assert isinstance(heard, Heard), heard
    wrong = edits(words(said), words(heard.text)) / len(words(said))
    assert wrong <= 0.3, f"{wrong:.2f} of the words wrong: {heard.text}"
    assert echoed([(said, heard.text)], pool.prompt) == 0, heard.text
