"""On a 3-master Redis Cluster, the master holding the `{ops}` slot stops taking writes
(NOREPLICAS, as a promoted master with no replica left under `min-replicas-to-write 1`
answers): a steward's report for a fixture in another slot is still logged and its card
still reaches the Telegram control group. Shared keys are spread so losing one slot stops
only what lives there, and Telegram polling goes on under its lease in the bot's own slot
(#27 item 9)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.app import build_core
from bot.delivery.durable import OutboxReader
from bot.domain.fixture.fixture_model import Fixture
from bot.runtime import _keep_polling, start_outbox
from bot.settings import load_settings
from bot.store import Store
from bot.store.base import OPS
from bot.store.lease import Lease, polling
from bot.tasks import cancel_and_wait
from rigs.fakes.telegram_api import FakeTelegram
from rigs.telegram_rig import telegram_on
from tests.support.ops_slot import fixture_off, node_port, refuse_writes

STEWARD = 100000001
CONTROL = -1001000000001  # channels.toml: the Telegram control group


@dataclass
class Rig:
    """A durable core on the cluster with its fixture off the `{ops}` master, its outbox
    reader, the fake Telegram and the core's (not started) adapter on it, and a client of
    the `{ops}` master to make it refuse writes."""

    store: Store
    fx: Fixture
    reader: OutboxReader
    fake: FakeTelegram
    tg: TelegramAdapter
    ops: redis.Redis
    ops_port: int


@asynccontextmanager
async def ops_slot_rig(cluster, clock, tmp_path: Path,  # type: ignore[no-untyped-def]
                       **fake_options: Any) -> AsyncIterator[Rig]:
    """Start the rig; after, the `{ops}` master takes writes again and all is stopped."""
    store = Store.from_url(cluster.url)
    await store.reset_for_tests()
    settings = load_settings(REDIS_URL=cluster.url, MATCHDAY_DATA_DIR=str(tmp_path))
    core = build_core(store, settings, clock, durable=True)
    ops_port = node_port(store, OPS)
    fx = await fixture_off(core, store, ops_port)
    reader = start_outbox(core)
    fake = FakeTelegram(**fake_options)
    await fake.start()
    tg = telegram_on(core, settings, fake, poll_timeout=1)
    ops = redis.Redis(port=ops_port, decode_responses=True)
    try:
        yield Rig(store, fx, reader, fake, tg, ops, ops_port)
    finally:
        ops.config_set("min-replicas-to-write", 0)
        ops.close()
        await tg.stop()
        await reader.stop()
        await fake.stop()
        await store.close()


def sent(chat: int, text: str):  # type: ignore[no-untyped-def]
    """Predicate: a message with `text` in it reached `chat`."""
    def found(calls):  # type: ignore[no-untyped-def]
        return [c for c in calls if c.ok and c.method == "sendMessage"
                and str(c.params.get("chat_id")) == str(chat)
                and text in str(c.params.get("text"))]
    return found


async def test_a_report_is_logged_and_delivered_while_the_ops_slot_refuses_writes(
        cluster, clock, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async with ops_slot_rig(cluster, clock, tmp_path, enforce_limits=True) as rig:
        fake = rig.fake
        await rig.tg.start()
        await fake.push(fake.message_update(STEWARD, "/incident pyro @away_upper s3 flare"))
        await fake.wait_for(sent(CONTROL, "INC-1"), timeout=20)

        refuse_writes(rig.ops)
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            await fake.push(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 "
                                                         "coin thrown"))
            await fake.wait_for(sent(STEWARD, "Logged INC-2"), timeout=20)
            await fake.wait_for(sent(CONTROL, "INC-2"), timeout=20)
            assert (await rig.store.incident(rig.fx.id, 2)).location == "stb_walkway"
            # delivered and marked so: nothing left to send twice after a restart
            await rig.reader.drain(timeout=20)
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert not errors, [r.getMessage() for r in errors[:5]]


class Ticks(Lease):
    """A lease that counts its ticks (each a round trip to its slot's master)."""

    def __init__(self, lease: Lease) -> None:
        super().__init__(lease.gateway, "polling", lease.owner, lease.ttl_ms,
                         prefix=lease.key.removesuffix("lease:polling"))
        self.ticks = 0
        self.tick_event = asyncio.Event()

    async def tick(self) -> bool:
        held = await super().tick()
        self.ticks += 1
        self.tick_event.set()
        return held


async def test_telegram_polling_goes_on_while_the_ops_slot_refuses_writes(
        cluster, clock, tmp_path: Path) -> None:
    """The polling lease lives with the bot's inbox (its own slot), not under `{ops}`: while
    the `{ops}` master refuses writes for longer than the lease's TTL, the replica keeps
    polling and a steward's report is answered."""
    async with ops_slot_rig(cluster, clock, tmp_path) as rig:
        fake, tg = rig.fake, rig.tg
        await tg.start(poll=False)  # as run_bot starts it: polling once the lease is held
        lease = Ticks(polling(rig.store.gateway, tg.bot_id, "replica-a", ttl_ms=1500))
        assert node_port(rig.store, lease.key) != rig.ops_port  # the bot's slot is elsewhere
        keeper = asyncio.create_task(_keep_polling(lease, tg))
        try:
            await fake.wait_for(lambda calls: [c for c in calls
                                               if c.method == "deleteWebhook"],
                                timeout=20)  # polling began (it drops any webhook first)
            await fake.push(fake.message_update(STEWARD, "/incident pyro @away_upper s3 flare"))
            await fake.wait_for(sent(STEWARD, "Logged INC-1"), timeout=20)  # known, cached
            refuse_writes(rig.ops)
            since = lease.ticks
            while lease.ticks < since + 6:  # twice the TTL: a lease under {ops} has lapsed
                lease.tick_event.clear()
                await asyncio.wait_for(lease.tick_event.wait(), 10)
            assert lease.held
            await fake.push(fake.message_update(STEWARD,
                                                "/incident missile @stb_walkway s3 coin"))
            await fake.wait_for(sent(STEWARD, "Logged INC-2"), timeout=20)  # logged, answered
            assert (await rig.store.incident(rig.fx.id, 2)).location == "stb_walkway"
        finally:
            await cancel_and_wait([keeper])
