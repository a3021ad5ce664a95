"""Two real bot processes (`matchday run --webhook --http`) on one Redis, fed the bundled
night's updates alternately through their webhooks, on one virtual clock shared through
MATCHDAY_CLOCK_FILE: every briefing and escalation tier fires once, INC numbers are
contiguous, and the per-chat limits hold across both (the fakes answer no 429)."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.adapters.telegram.webhook import SECRET_HEADER
from bot.domain.clock import FileClock, parse_iso
from bot.replay import read_script
from bot.store import Store
from bot.store.choices import Choices
from bot.store.deadline_keys import Deadlines
from bot.store.outbox import Outbox
from bot.store.plans import Plans
from rigs.botproc import ROOT
from rigs.fakes.slack_api import RESPONSE_HOSTS, FakeSlack
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from rigs.net import free_port

NIGHT = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"
SECRET = "two-replicas-secret"
FIRST_USER = 400000001
TG_COMMAND = "-1001000000002"
DEADLINE_S = 30.0  # for any one condition to come true (a slow shared CI box)


async def until(check: Any, what: str, timeout: float = DEADLINE_S) -> Any:
    """Poll an async condition until it returns something truthy (no fixed sleeps)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        got = await check()
        if got:
            return got
        if loop.time() > end:
            raise AssertionError(f"not within {timeout:.0f}s: {what}")
        await asyncio.sleep(0.02)


class Replica:
    """One `matchday run --webhook --http` child process."""

    def __init__(self, name: str, env: dict[str, str], tmp: Path) -> None:
        self.port = free_port()
        self.log = tmp / f"{name}.log"
        env = {**env, "PORT": str(self.port), "MATCHDAY_DATA_DIR": str(tmp / f"data-{name}")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "run", "--webhook", "--http"], cwd=ROOT,
            env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"

    async def healthy(self, http: aiohttp.ClientSession) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"replica exited; see {self.log}:\n{self.log.read_text()}")
        try:
            async with http.get(self.url + "/healthz") as resp:
                return resp.status == 200
        except aiohttp.ClientError:
            return False

    async def post_update(self, http: aiohttp.ClientSession, update: dict[str, Any]) -> None:
        async with http.post(self.url + "/telegram", json=update,
                             headers={SECRET_HEADER: SECRET}) as resp:
            assert resp.status == 200, await resp.text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def night_config(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """config/ with every person of the bundled night as a Telegram roster member."""
    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    people: dict[str, int] = {}
    with (cfg / "roster.toml").open("a") as f:
        for line in read_script(NIGHT):
            if line.user not in people:
                people[line.user] = FIRST_USER + len(people)
                f.write(f'\n[[user]]\nplatform = "telegram"\nid = "{people[line.user]}"\n'
                        f'name = "{line.user}"\nrole = "{line.role}"\n')
    return cfg, people


@pytest.mark.long  # ~4 min of real time at the fakes' limits: CI runs it once, not per topology
async def test_two_webhook_replicas_run_the_bundled_night_once(
        store: Store, redis_url: str, tmp_path: Path,
        night_config: tuple[Path, dict[str, int]]) -> None:
    cfg, people = night_config
    lines = read_script(NIGHT)
    clock_file = tmp_path / "clock"
    FileClock.write(clock_file, lines[0].at)
    tg, slack = FakeTelegram(enforce_limits=True), FakeSlack(enforce_limits=True)
    await tg.start()
    await slack.start()
    env = {**_clean_env(), "REDIS_URL": redis_url, "MATCHDAY_CONFIG_DIR": str(cfg),
           "MATCHDAY_CLOCK_FILE": str(clock_file), "TELEGRAM_BOT_TOKEN": TOKEN,
           "TELEGRAM_BASE_URL": tg.base_url, "TELEGRAM_WEBHOOK_SECRET": SECRET,
           "TELEGRAM_WEBHOOK_URL": "https://bot.example.test/telegram",
           "SLACK_BOT_TOKEN": "xoxb-two", "SLACK_SIGNING_SECRET": "two-secret",
           "SLACK_API_URL": slack.api_url, "SLACK_RESPONSE_HOSTS": RESPONSE_HOSTS,
           "PYTHONUNBUFFERED": "1"}
    replicas = [Replica("a", env, tmp_path), Replica("b", env, tmp_path)]
    try:
        async with aiohttp.ClientSession() as http:
            for r in replicas:
                await until(lambda r=r: r.healthy(http), f"replica on :{r.port} healthy",
                            timeout=60)
            await _run_night(store, tg, http, replicas, lines, people, clock_file)
            fx = await Choices(store.gateway).active_fixture_id()
            assert fx == "westham-chelsea-20261202"
            outbox = Outbox(store.gateway)

            async def delivered() -> bool:
                return (await outbox.backlog(fx))[0] == 0
            # ~70 messages to the Telegram control group at its 20 a minute: minutes.
            await until(delivered, "every queued message delivered", timeout=600)
            await _assert_once_each(store, tg, fx, people)
            for r in replicas:  # nothing left to deliver: no lag
                async with http.get(r.url + "/healthz") as resp:
                    assert (await resp.json())["outbox_lag_s"] == 0.0
        assert tg.too_many == 0 and slack.too_many == 0  # no limit broken, by either
        assert not [c for c in tg.calls if not c.ok]
    finally:
        for r in replicas:
            r.stop()
        await tg.stop()
        await slack.stop()


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items()
            if not k.startswith(("MATCHDAY_", "TELEGRAM_", "SLACK_", "REDIS_"))}


async def _run_night(store: Store, tg: FakeTelegram, http: aiohttp.ClientSession,
                     replicas: list[Replica], lines: list[Any], people: dict[str, int],
                     clock_file: Path) -> None:
    now = lines[0].at
    for i, line in enumerate(lines):
        now = await _step_through_due(store, now, line.at, clock_file)
        FileClock.write(clock_file, line.at)
        now = line.at
        user = people[line.user]
        answered = _answers(tg, user)
        await replicas[i % 2].post_update(http, tg.message_update(user, line.text))

        async def answer(user: int = user, answered: int = answered) -> bool:
            return _answers(tg, user) > answered
        await until(answer, f"an answer to {line.user}: {line.text}")
    end = lines[-1].at.replace(hour=23, minute=59)
    await _step_through_due(store, now, end, clock_file)


async def _due(store: Store, upto: datetime) -> list[datetime]:
    """Briefing slots not yet claimed and escalation deadlines, due by `upto`."""
    fx = await Choices(store.gateway).active_fixture_id()
    if not fx:
        return []
    out = [s.due for s in await Plans(store.gateway).load_plan(fx)
           if s.due <= upto and await Plans(store.gateway).slot_claim(s) is None]
    first = await Deadlines(store.gateway).first_deadline_of([fx])
    if first is not None and first <= upto.timestamp():
        out.append(datetime.fromtimestamp(first, upto.tzinfo))
    return sorted(out)


async def _step_through_due(store: Store, now: datetime, upto: datetime,
                            clock_file: Path) -> datetime:
    """Move the shared clock to each due time before `upto` in turn, waiting each time until
    the replicas have fired everything due by then."""
    while due := await _due(store, upto):
        now = max(now, due[0])
        FileClock.write(clock_file, now)

        async def fired(at: datetime = now) -> bool:
            return not await _due(store, at)
        await until(fired, f"everything due by {now} fired")
    return now


def _answers(tg: FakeTelegram, chat: int | str) -> int:
    """What the bot has answered in a chat: messages, edits, and reactions (a steward's "I
    have it" is answered with a 👍 on their message, not a message: #32)."""
    return sum(1 for c in tg.calls if c.ok and c.method in (
        "sendMessage", "editMessageText", "setMessageReaction")
        and str(c.params.get("chat_id")) == str(chat))


def _to_chat(tg: FakeTelegram, chat: int | str) -> list[str]:
    return [str(c.params.get("text", "")) for c in tg.calls
            if c.ok and c.method in ("sendMessage", "editMessageText")
            and str(c.params.get("chat_id")) == str(chat)]


async def _assert_once_each(store: Store, tg: FakeTelegram, fx: str,
                            people: dict[str, int]) -> None:
    events = await store.events(fx)
    # INC numbers: contiguous from 1, each told to exactly one report.
    numbers = sorted(int(e.data["id"].split("-")[1]) for e in events
                     if e.kind == "incident.reported")
    # 7 reports and the failed walkway-netting inspection (it raises INC-1)
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) == 8, numbers
    told = Counter(int(m) for u in people.values() for t in _to_chat(tg, u)
                   for m in re.findall(r"Logged INC-(\d+)", t))
    raised = Counter(int(m) for u in people.values() for t in _to_chat(tg, u)
                     for m in re.findall(r"Raised INC-(\d+)", t))
    # every report told its number once; the inspection's incident told to its inspector
    # once (the failed tick, its incident and that answer are one write)
    assert sorted(set(told) | set(raised)) == numbers and set(told.values()) == {1}, \
        (told, raised)
    assert raised == Counter({1: 1}) and 1 not in told, (told, raised)
    # Escalation tiers and reminders: each logged once, and each alert sent once per chat.
    tiers = Counter((e.data["id"], e.data["tier"]) for e in events
                    if e.kind == "incident.escalated" and e.data.get("auto"))
    assert tiers and set(tiers.values()) == {1}, tiers
    reminders = Counter((e.data["id"], e.data["n"]) for e in events
                        if e.kind == "incident.reminder")
    assert set(reminders.values()) <= {1}, reminders
    command = [t for t in _to_chat(tg, TG_COMMAND) if "unacknowledged" in t]
    assert command and max(Counter(command).values()) == 1, _to_chat(tg, TG_COMMAND)
    # Briefings: every planned one claimed once, and in the command chat once.
    plan = [s for s in await Plans(store.gateway).load_plan(fx) if s.kind == "briefing"]
    assert plan
    texts = _to_chat(tg, TG_COMMAND)
    for slot in plan:
        claim = await Plans(store.gateway).slot_claim(slot)
        assert claim is not None, slot
        sent = [t for t in texts if f"Briefing {slot.label} " in t]
        assert len(sent) == (0 if claim["state"] == "missed" else 1), (slot.label, claim)
    assert parse_iso(events[-1].at) <= parse_iso("2026-12-02T23:59:00+00:00")
