"""Whisper base, the default model: put together once from its two wheels into the data dir
(checked against its sha256 on a temporary file, then renamed), and a missing or corrupt part
is one line at start-up, never a failed note (issue #38)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.evidence.export import file_sha
from bot.voice.model import WHISPER_BASE, ModelError, assemble, installed_parts, model_dir

pytestmark = pytest.mark.voice


def test_base_is_the_default_put_together_once_in_the_data_dir(whisper: Path,
                                                               tmp_path: Path) -> None:
    """No setting: Whisper base, its model.bin the two parts in order with the published
    hash, the tokenizer beside it, nothing left half-written; a second start reuses it."""
    path = model_dir("", tmp_path)
    assert path == tmp_path / "whisper-base"
    model = path / "model.bin"
    assert model.stat().st_size == 145_217_607
    assert file_sha(model) == "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"
    assert {p.name for p in path.iterdir()} == {
        "model.bin", "model.bin.sha256", "config.json", "tokenizer.json", "vocabulary.json"}
    made = model.stat().st_mtime_ns
    assert model_dir("base", tmp_path) == path and model.stat().st_mtime_ns == made
    assert model_dir("tiny.en", tmp_path) != path  # the light option is still there


def test_a_corrupt_part_is_one_line_and_leaves_nothing_behind(whisper: Path,
                                                              tmp_path: Path) -> None:
    """A part with one byte changed: the assembled file's hash is wrong, so it is refused
    with one line naming the fix, and no model.bin (nor a temporary file) is left."""
    first, second = installed_parts()
    bad = tmp_path / "model.bin.part1"
    data = bytearray(first.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    target = tmp_path / "whisper-base"
    with pytest.raises(ModelError) as exc:
        assemble([bad, second], target)
    assert "corrupt" in str(exc.value) and "\n" not in str(exc.value)
    assert list(target.iterdir()) == []


def test_a_short_part_is_refused_before_anything_is_written(whisper: Path,
                                                            tmp_path: Path) -> None:
    """A part cut short (an interrupted install) is named by its size, at once."""
    first, second = installed_parts()
    short = tmp_path / "model.bin.part2"
    short.write_bytes(second.read_bytes()[:1000])
    with pytest.raises(ModelError) as exc:
        assemble([first, short], tmp_path / "whisper-base")
    assert f"{WHISPER_BASE.parts[1].size}" in str(exc.value) and "\n" not in str(exc.value)
    assert not (tmp_path / "whisper-base").exists()


def test_a_model_setting_that_is_no_model_stops_the_start_with_one_line(
        tmp_path: Path) -> None:
    """MATCHDAY_STT_MODEL naming neither base, tiny.en nor a model directory is refused
    when the bot starts, in one line saying what it may be."""
    with pytest.raises(ModelError) as exc:
        model_dir(str(tmp_path), tmp_path)
    assert "base, tiny.en or a directory" in str(exc.value) and "\n" not in str(exc.value)


async def test_the_bot_does_not_start_on_a_model_it_cannot_load(redis_url: str,
                                                                tmp_path: Path) -> None:
    """`matchday run` with MATCHDAY_STT_MODEL naming no model stops before taking a note,
    with one line for the operator (not a failed transcript on the first steward's note)."""
    import asyncio
    import os
    import sys

    from rigs.fakes.telegram_api import TOKEN, FakeTelegram

    tg = FakeTelegram()
    base = await tg.start()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "SLACK_", "REDIS_URL", "MATCHDAY_"))}
    env |= {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path / "data"),
            "TELEGRAM_BASE_URL": base, "TELEGRAM_BOT_TOKEN": TOKEN,
            "MATCHDAY_STT_MODEL": str(tmp_path)}
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", env=env,
            cwd=Path(__file__).resolve().parents[2], stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        await tg.stop()
    output = (out + err).decode()
    assert proc.returncode == 1, output
    [line] = [x for x in output.splitlines() if "MATCHDAY_STT_MODEL" in x]
    assert "voice notes:" in line and "base, tiny.en or a directory" in line, output
    assert "Traceback" not in output, output
