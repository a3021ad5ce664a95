"""Issue 31, item 10: a kill -9 of the bot leaves no transcription worker behind: each worker
ends when the process that started its pool dies. A real parent process starts the pool and
loads the model, is killed with SIGKILL, and its workers are gone within a bounded wait."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.voice
ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0  # the deadline for each step; each is waited for as it happens, never slept
# a bot as far as the pool goes: the pool started, its workers up with the model, then idle
BOT = """
import asyncio, sys
from pathlib import Path
from bot.voice.pool import transcriber_for

async def main():
    pool = transcriber_for(sys.argv[1], "", data_dir=Path(sys.argv[1]), workers=2, queue=0,
                           max_s=60)
    await pool.warm()
    print("warm", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent pid, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    state, ppid = raw.rpartition(")")[2].split()[:2]
    return state, int(ppid)


def workers_of(parent: int) -> list[int]:
    """The pool's worker processes (spawned by multiprocessing) whose parent is `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        st = stat(int(entry.name))
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if st is not None and st[1] == parent and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    st = stat(pid)
    return st is not None and st[0] not in ("Z", "X")  # a zombie has ended


def test_the_workers_end_when_the_bot_is_killed_9(whisper: Path) -> None:
    bot = subprocess.Popen([sys.executable, "-c", BOT, str(whisper)], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL)
    workers: list[int] = []
    ends: dict[int, int] = {}
    try:
        ready, _, _ = select.select([bot.stdout], [], [], WAIT_S * 4)  # loading the model
        assert ready and bot.stdout is not None, "the pool did not start"
        assert bot.stdout.readline() == b"warm\n", bot.stderr.read() if bot.stderr else ""
        workers = workers_of(bot.pid)
        assert len(workers) == 2 and all(alive(w) for w in workers), workers
        ends = {os.pidfd_open(w): w for w in workers}  # readable once that worker has ended
        bot.send_signal(signal.SIGKILL)
        bot.wait(WAIT_S)
        deadline = time.monotonic() + WAIT_S
        while ends and time.monotonic() < deadline:
            ended, _, _ = select.select(list(ends), [], [], deadline - time.monotonic())
            for fd in ended:
                os.close(fd)
                del ends[fd]
        left = sorted(ends.values())
        assert not left, f"workers {left} outlived the bot by {WAIT_S:.0f} s"
    finally:
        for fd in ends:
            os.close(fd)
        if bot.poll() is None:
            bot.kill()
            bot.wait(WAIT_S)
        for w in workers:  # orphans of a failed run are not left on the machine
            if alive(w):
                os.kill(w, signal.SIGKILL)
