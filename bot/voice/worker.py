"""What runs inside a transcription worker process: the model is loaded once per process,
then each note is decoded (OGG/Opus via PyAV) and transcribed there, never on the bot's
event loop."""

from __future__ import annotations

import functools
import io
import multiprocessing
import os
import threading
import time
from multiprocessing.connection import wait
from typing import Any

from bot.voice.echo import Prompt, is_echo, prompt_of

SAMPLE_RATE = 16_000
_model: Any = None


def init(model_path: str, threads: int) -> None:
    """Load the model in this worker (ProcessPoolExecutor initializer), at a lower CPU
    priority: on a busy machine the bot's event loop is served first, transcripts wait."""
    global _model
    exit_with_parent()
    os.nice(10)
    from faster_whisper import WhisperModel

    _model = WhisperModel(model_path, device="cpu", compute_type="int8", cpu_threads=threads,
                          num_workers=1)


def exit_with_parent() -> None:
    """End this worker the moment the bot that started it dies, however it died (kill -9
    included), even mid-note: a thread waits on the pipe the worker was spawned through,
    whose other end only the bot holds, so it reads end-of-file when the bot is gone. (The
    pool's own queues never see that: each worker holds a writing end of them itself.)"""
    parent = multiprocessing.parent_process()
    if parent is None:  # not a spawned worker (called in the bot itself): nothing to watch
        return
    sentinel = parent.sentinel

    def watch() -> None:
        wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-bot", daemon=True).start()


def transcribe(audio: bytes, prompt: str, max_s: float) -> tuple[str, float, float, int]:
    """(text, audio seconds, processing seconds, words dropped as prompt echo); the text is
    '' past `max_s` seconds (a note longer than its declared duration is not transcribed)."""
    from faster_whisper import decode_audio

    started = time.perf_counter()
    samples = decode_audio(io.BytesIO(audio), sampling_rate=SAMPLE_RATE)
    seconds = len(samples) / SAMPLE_RATE
    if seconds > max_s:
        return "", seconds, time.perf_counter() - started, 0
    segments, _info = _model.transcribe(
        samples, language="en", beam_size=5, initial_prompt=prompt or None,
        condition_on_previous_text=False, vad_filter=False, without_timestamps=True)
    phrases = _prompt_of(prompt)
    kept, echoed = [], 0
    for s in segments:
        if is_echo(s.text, s.avg_logprob, phrases):
            echoed += len(s.text.split())
        else:
            kept.append(s.text.strip())
    return " ".join(kept).strip(), seconds, time.perf_counter() - started, echoed


@functools.lru_cache(maxsize=4)
def _prompt_of(prompt: str) -> Prompt:
    return prompt_of(prompt)
