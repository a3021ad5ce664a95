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

from bot.voice.echo import (
    NO_SPEECH,
    Prompt,
    Word,
    guessed,
    no_speech,
    prompt_of,
    without_echo,
)

SAMPLE_RATE = 16_000
WINDOW = 30 * SAMPLE_RATE  # Whisper hears 30 s at a time: a longer note is cut into windows
MIN_WINDOW = SAMPLE_RATE // 2  # a last window shorter than this holds no word to hear
# how every note is decoded: word_timestamps for each word's probability (the echo filter
# drops words, not segments); the rest as Whisper's defaults but English only, one window per
# note without timestamp tokens (measured best on real speech), no text carried from one
# window to the next (an echo would be carried on), and at temperature 0 only: no decoding
# again at higher temperatures when the first try is unsure or repeats itself (in crowd noise
# that was up to five more decodes of a window, at random, each slower than the first and
# as likely to be invented words; the echo filter treats such a segment as a guess)
DECODING: dict[str, Any] = {
    "language": "en", "beam_size": 5, "temperature": 0.0,
    "condition_on_previous_text": False, "vad_filter": False, "without_timestamps": True,
    "word_timestamps": True, "no_speech_threshold": NO_SPEECH,
}
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


def transcribe(audio: bytes, prompt: str,
               max_s: float) -> tuple[str, float, float, float, int]:
    """(text, audio seconds, processing seconds, CPU seconds, words dropped as prompt echo);
    the text is '' past `max_s` seconds (a note longer than its declared duration is not
    transcribed)."""
    from faster_whisper import decode_audio

    started, cpu = time.perf_counter(), time.process_time()
    samples = decode_audio(io.BytesIO(audio), sampling_rate=SAMPLE_RATE)
    seconds = len(samples) / SAMPLE_RATE
    if seconds > max_s:
        return "", seconds, time.perf_counter() - started, time.process_time() - cpu, 0
    phrases = _prompt_of(prompt)
    kept, echoed = [], 0
    for start in range(0, len(samples), WINDOW):
        window = samples[start:start + WINDOW]
        if len(window) < MIN_WINDOW:
            continue
        # only the window's own segment: with word timestamps faster-whisper would go on to
        # decode the silence after the last word, where base writes "you", "Thanks for
        # watching"
        segments, _info = _model.transcribe(window, **DECODING, initial_prompt=prompt or None)
        s = next(iter(segments), None)
        if s is None or no_speech(s.no_speech_prob, s.avg_logprob):
            continue
        text, dropped = without_echo([Word(w.word, w.probability) for w in s.words or ()],
                                     phrases,
                                     guessed(s.avg_logprob, s.compression_ratio))
        kept.append(text)
        echoed += dropped
    return (" ".join(t for t in kept if t), seconds, time.perf_counter() - started,
            time.process_time() - cpu, echoed)


@functools.lru_cache(maxsize=4)
def _prompt_of(prompt: str) -> Prompt:
    return prompt_of(prompt)
