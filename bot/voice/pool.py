"""The transcription pool: worker processes (never the event loop), at most `workers + queue`
notes admitted at once, notes over `max_s` seconds refused before they are downloaded."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from bot.voice import worker
from bot.voice.outcome import Heard, NotHeard, Outcome

log = logging.getLogger(__name__)
GRACE_S = 2  # a note may decode a little longer than the duration Telegram declared


class Transcriber:
    """A bounded pool of Whisper worker processes shared by every voice note."""

    def __init__(self, model: Path, prompt: str, *, workers: int = 2, queue: int = 20,
                 max_s: int = 60, threads: int = 1, shared: bool = False) -> None:
        self.model = model
        # shared by many clubs' bots (a deployment): a bot stopping leaves it running for
        # the others; the deployment stops it (`shutdown`)
        self.shared = shared
        self.prompt = prompt
        self.workers = max(1, workers)
        self.capacity = self.workers + max(0, queue)
        self.max_s = max_s
        self.threads = max(1, threads)
        self.admitted = 0  # notes holding a place: being fetched, waiting or transcribing
        self.refused_busy = 0  # notes turned away because every place was taken
        self.waited = 0  # notes that had to wait for a worker (their senders told at once)
        self.proc_s = 0.0  # wall seconds the workers took over the notes, all told
        self.cpu_s = 0.0  # CPU seconds they spent on them: over proc_s, the share of a core
        # each worker got (1.0 on a machine with a core free per worker)
        self._pool: ProcessPoolExecutor | None = None

    def admit(self, duration_s: int) -> NotHeard | None:
        """Take a place for a note of the declared length, or say why not (too long, full).
        Every admitted note gives its place back through `transcribe` or `release`."""
        if duration_s > self.max_s:
            return NotHeard("too_long", self.max_s)
        if self.admitted >= self.capacity:
            self.refused_busy += 1
            return NotHeard("busy")
        self.admitted += 1
        return None

    def ahead(self) -> int:
        """How many notes hold a place before the one just admitted, when it has to wait for
        a worker (0 when one is free for it): what its sender is told at once."""
        before = self.admitted - 1
        if before < self.workers:
            return 0
        self.waited += 1
        return before

    def release(self) -> None:
        """Give back an admitted note's place without transcribing it (its download failed)."""
        self.admitted = max(0, self.admitted - 1)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn: a fork of a process with an event loop and threads is not safe
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=worker.init, initargs=(str(self.model), self.threads))
        return self._pool

    async def transcribe(self, audio: bytes) -> Outcome:
        """An admitted note's words (its place given back when done)."""
        try:
            loop = asyncio.get_running_loop()
            text, audio_s, proc_s, cpu_s, _echo = await loop.run_in_executor(
                self._executor(), worker.transcribe, audio, self.prompt,
                float(self.max_s + GRACE_S))
        except BrokenProcessPool:
            log.warning("voice: a transcription worker died; starting the pool again")
            self._pool = None
            return NotHeard("failed")
        except Exception as exc:  # undecodable audio and the like: the note stays evidence
            log.warning("voice: transcription failed: %s: %s", type(exc).__name__,
                        str(exc)[:200])
            return NotHeard("failed")
        finally:
            self.release()
        self.proc_s += proc_s
        self.cpu_s += cpu_s
        if audio_s > self.max_s + GRACE_S:
            return NotHeard("too_long", self.max_s)
        if not text:
            return NotHeard("silent")
        return Heard(text, audio_s, proc_s, cpu_s)

    async def warm(self) -> None:
        """Start the workers and load the model now (not on the first steward's note); a
        model that cannot load is logged, and each note then answers 'failed'."""
        loop = asyncio.get_running_loop()
        try:
            pool = self._executor()
            await asyncio.gather(*(loop.run_in_executor(pool, _ready)
                                   for _ in range(self.workers)))
        except Exception as exc:  # BrokenProcessPool: the initializer (model load) failed
            log.warning("voice: transcription workers did not start: %s: %s",
                        type(exc).__name__, str(exc)[:200])
            self._pool = None

    def close(self) -> None:
        """Stop the worker processes (notes still running are abandoned); a shared pool
        is left to its owner's `shutdown`."""
        if not self.shared:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop the worker processes, shared or not."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _ready() -> bool:
    return True


def transcriber_for(model: str, prompt: str, *, data_dir: Path, workers: int, queue: int,
                    max_s: int, shared: bool = False) -> Transcriber | None:
    """The pool for this machine, or None without the extra (logged once: voice notes are
    then kept as evidence and their senders told transcription is not installed). The model
    is made ready here, at start-up (Whisper base put together once into `data_dir`): a
    missing or corrupt part raises ModelError, one line, before any note is taken."""
    from bot.voice.model import engine_installed, model_dir

    if not engine_installed():
        log.warning("voice notes are kept without transcripts: faster-whisper is not "
                    'installed (pip install -e ".[voice]")')
        return None
    return Transcriber(model_dir(model, data_dir), prompt, workers=workers, queue=queue,
                       max_s=max_s, shared=shared)
