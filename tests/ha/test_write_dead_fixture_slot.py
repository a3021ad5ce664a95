"""Two bot replicas (webhooks) on a 3-master Redis Cluster whose master holding the fixture's
slot refuses writes (NOREPLICAS: a master with no replica left under `min-replicas-to-write
1`), with or without Telegram's bot-wide rate windows, while stewards keep reporting (#34
item 3):

- together the replicas stay within Telegram's 30 messages a second per bot (each used to
  pace itself at the whole 30/s once the shared windows refused: 440 × 429 in the field);
- the outage log says once that writes are refused, never "Redis not answering / back
  after 0 s" (each refused write used to flip it: ~1,000 lines per replica in 3.5 min);
- control is told once that reports are being refused, and once that they are logged
  again (it used to hear nothing)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from aiohttp import ClientSession

from bot.app import build_core
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Reply
from bot.settings import load_settings
from bot.store import Store
from bot.store.client import fx_prefix
from rigs.fakes.telegram_api import FakeTelegram
from rigs.telegram_rig import tabards_on_telegram
from tests.support.ops_slot import fixture_placed, node_port, refuse_writes
from tests.support.webhook_replica import WebhookReplica, webhook_replica

CONTROL = -1001000000001  # channels.toml: the Telegram control group
STEWARDS = 20
FIRST_STEWARD = 700000001
REFUSED = "Reports NOT being logged"
RECOVERED = "Reports logged again"


def to(chat: int | str, text: str = ""):  # type: ignore[no-untyped-def]
    """The messages that reached `chat` (with `text` in them)."""
    def found(calls):  # type: ignore[no-untyped-def]
        return [c for c in calls if c.ok and c.method == "sendMessage"
                and str(c.params.get("chat_id")) == str(chat)
                and text in str(c.params.get("text"))]
    return found


@dataclass
class Rig:
    fake: FakeTelegram
    replicas: tuple[WebhookReplica, WebhookReplica]
    fx: Fixture
    master: redis.Redis  # the fixture's slot's (and the bot-wide windows') master


@asynccontextmanager
async def two_replicas(cluster, clock, tmp_path: Path,  # type: ignore[no-untyped-def]
                       bot_wide_there: bool) -> AsyncIterator[Rig]:
    """Two replicas sharing a fixture whose slot's master holds Telegram's bot-wide windows
    too (or not), both counted as sending; after, that master takes writes again."""
    store = Store.from_url(cluster.url)
    await store.reset_for_tests()
    settings = load_settings(REDIS_URL=cluster.url, MATCHDAY_DATA_DIR=str(tmp_path))
    bot_wide = node_port(store, "md:{rl:telegram}:bot")
    fx = await fixture_placed(build_core(store, settings, clock), store,
                              lambda p: (p == bot_wide) == bot_wide_there)
    master = redis.Redis(port=node_port(store, fx_prefix(fx.id)), decode_responses=True)
    fake = FakeTelegram(enforce_limits=True)
    await fake.start()
    try:
        async with AsyncExitStack() as stack:
            a, b = [await stack.enter_async_context(webhook_replica(
                name, cluster.url, settings, clock, fake.base_url)) for name in "ab"]
            for r in (a, b):
                tabards_on_telegram(r.core, FIRST_STEWARD, 100,
                                    [("steward", "seg_ne")] * STEWARDS)
            # each has sent and heard of the other (before the fault, as in a night's run)
            for k in range(0, 200, 2):
                if all(r.limiter.replicas.get("telegram") == 2 for r in (a, b)):
                    break
                for i, r in enumerate((a, b)):
                    r.core.notifier.reply("telegram", str(600000001 + k + i), Reply("warm"))
                for i in range(2):
                    await fake.wait_for(to(600000001 + k + i), timeout=20)
            else:
                pytest.fail("the replicas never counted each other")
            yield Rig(fake, (a, b), fx, master)
    finally:
        master.config_set("min-replicas-to-write", 0)
        master.close()
        await fake.stop()
        await store.close()


@pytest.mark.parametrize("bot_wide_there", [True, False])
async def test_two_replicas_keep_the_bot_wide_rate_while_a_slot_refuses_writes(
        cluster, clock, tmp_path: Path, bot_wide_there: bool) -> None:
    async with two_replicas(cluster, clock, tmp_path, bot_wide_there) as rig:
        refuse_writes(rig.master, fx_prefix(rig.fx.id) + "probe")
        people = [str(500000001 + k) for k in range(80)]
        for k, person in enumerate(people):  # 40 answers each, at once
            rig.replicas[k % 2].core.notifier.reply("telegram", person, Reply(f"answer {k}"))

        def delivered(calls):  # type: ignore[no-untyped-def]
            return {str(c.params.get("chat_id")) for c in calls
                    if c.ok and c.method == "sendMessage"} >= set(people)
        await rig.fake.wait_for(delivered, timeout=60)
        assert rig.fake.too_many == 0, rig.fake.too_many_at[:5]


async def test_stewards_refused_a_report_break_no_limit_flip_no_outage_and_control_hears_once(
        cluster, clock, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async with two_replicas(cluster, clock, tmp_path, False) as rig, \
            ClientSession() as http:
        fake, (a, b) = rig.fake, rig.replicas
        refuse_writes(rig.master, fx_prefix(rig.fx.id) + "probe")
        caplog.set_level(logging.WARNING)
        caplog.clear()
        for attempt in range(3):  # every steward reports, and again once told NOT logged
            for s in range(STEWARDS):
                await (a, b)[(s + attempt) % 2].post(http, fake.message_update(
                    FIRST_STEWARD + s, f"/incident pyro @seg_ne s3 flare {attempt}"))
            await fake.wait_for(lambda calls, n=attempt + 1: len(
                to_stewards(calls, "NOT logged")) >= n * STEWARDS, timeout=60)
        await fake.wait_for(to(CONTROL, REFUSED), timeout=30)
        # each steward is told to radio it in, not to keep sending it
        assert len(to_stewards(fake.calls, "Radio control with it")) >= 3 * STEWARDS
        outage = [r.getMessage() for r in caplog.records if r.name == "bot.outage"]
        assert not [line for line in outage if "not answering" in line or "back after" in line]
        assert len(outage) <= 2, outage  # one line per replica when the refusals began

        rig.master.config_set("min-replicas-to-write", 0)  # the slot takes writes again
        for s, (r, report) in enumerate(zip((a, b), ("pyro @seg_ne s3 flare again",
                                                     "missile @away_upper s2 coin"),
                                                strict=True)):
            await r.post(http, fake.message_update(FIRST_STEWARD + s, f"/incident {report}"))
        await fake.wait_for(lambda calls: len(to_stewards(calls, "Logged INC-")) >= 2,
                            timeout=30)
        await fake.wait_for(to(CONTROL, RECOVERED), timeout=30)
        for r in (a, b):
            await r.core.notifier.drain()
        calls = fake.calls
        assert (len(to(CONTROL, REFUSED)(calls)), len(to(CONTROL, RECOVERED)(calls))) == (1, 1)
        assert fake.too_many == 0, fake.too_many_at[:5]


def to_stewards(calls, text: str):  # type: ignore[no-untyped-def]
    """Messages with `text` to any of the stewards."""
    ids = {str(FIRST_STEWARD + s) for s in range(STEWARDS)}
    return [c for c in calls if c.ok and c.method == "sendMessage"
            and str(c.params.get("chat_id")) in ids and text in str(c.params.get("text"))]
