"""On a 3-master Redis Cluster, the master holding the `{ops}` slot stops taking writes
(NOREPLICAS, as a promoted master with no replica left under `min-replicas-to-write 1`
answers): a steward's report for a fixture in another slot is still logged and its card
still reaches the Telegram control group. Shared keys are spread so losing one slot stops
only what lives there, and Telegram polling goes on under its lease in the bot's own slot
(#27 item 9)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path

import pytest
import redis
from pydantic import SecretStr

from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.fixture.fixture_model import Fixture
from bot.runtime import _keep_polling, start_outbox, telegram_for
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from bot.store.base import OPS
from bot.store.client import fx_prefix
from bot.store.lease import Lease, polling
from bot.tasks import cancel_and_wait
from handlers.fixtures import fixture_id
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from tests.conftest import Chat

STEWARD = 100000001
CONTROL = -1001000000001  # channels.toml: the Telegram control group


def _node_port(store: Store, key: str) -> int:
    return int(store.gateway.r.get_node_from_key(key).port)


async def _fixture_off(core: Core, store: Store, ops_port: int) -> Fixture:
    """The active fixture, made one whose slot is not on the `{ops}` master."""
    fx = await ensure_sample_fixture(core)
    day = 1
    while _node_port(store, fx_prefix(fx.id)) == ops_port:  # a fixture in another slot
        r = await Chat(core)(f"/fixture add Leyton Orient v Barnet 2026-12-{day:02d} 15:00",
                             as_="admin")
        assert r.reply.ok, r.reply.text
        got = await store.fixture(fixture_id("Leyton Orient", "Barnet",
                                             datetime(2026, 12, day)))
        assert got is not None
        fx, day = got, day + 1
    await store.set_active_fixture(fx.id)
    await core.changed("fixture", fx.id)
    return fx


async def test_a_report_is_logged_and_delivered_while_the_ops_slot_refuses_writes(
        cluster, clock, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store.from_url(cluster.url)
    await store.reset_for_tests()
    settings = load_settings(REDIS_URL=cluster.url, MATCHDAY_DATA_DIR=str(tmp_path))
    core = build_core(store, settings, clock, durable=True)
    ops_port = _node_port(store, OPS)
    fx = await _fixture_off(core, store, ops_port)

    reader = start_outbox(core)
    fake = FakeTelegram(enforce_limits=True)
    await fake.start()
    s = settings.model_copy(update={"telegram_bot_token": SecretStr(TOKEN),
                                    "telegram_base_url": fake.base_url})
    tg = telegram_for(core, s, poll_timeout=1)
    await tg.start()
    ops = redis.Redis(port=ops_port, decode_responses=True)

    def card_of(n: int):  # type: ignore[no-untyped-def]
        def found(calls):  # type: ignore[no-untyped-def]
            return [c for c in calls if c.ok and c.method == "sendMessage"
                    and c.params.get("chat_id") in (CONTROL, str(CONTROL))
                    and f"INC-{n}" in str(c.params.get("text"))]
        return found

    try:
        await fake.push(fake.message_update(STEWARD, "/incident pyro @away_upper s3 flare"))
        await fake.wait_for(card_of(1), timeout=20)

        ops.config_set("min-replicas-to-write", 1)  # the {ops} master refuses every write
        with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
            ops.set("md:{ops}:probe", "1")
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            await fake.push(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 "
                                                         "coin thrown"))
            await fake.wait_for(lambda calls: [
                c for c in calls if c.ok and c.method == "sendMessage"
                and str(c.params.get("chat_id")) == str(STEWARD)
                and "Logged INC-2" in str(c.params.get("text"))], timeout=20)
            await fake.wait_for(card_of(2), timeout=20)
            assert (await store.incident(fx.id, 2)).location == "stb_walkway"
            # delivered and marked so: nothing left to send twice after a restart
            await reader.drain(timeout=20)
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert not errors, [r.getMessage() for r in errors[:5]]
    finally:
        ops.config_set("min-replicas-to-write", 0)
        ops.close()
        await tg.stop()
        await reader.stop()
        await fake.stop()
        await store.close()


def answered(n: int):  # type: ignore[no-untyped-def]
    """Predicate: the steward was told 'Logged INC-n'."""
    def found(calls):  # type: ignore[no-untyped-def]
        return [c for c in calls if c.ok and c.method == "sendMessage"
                and str(c.params.get("chat_id")) == str(STEWARD)
                and f"Logged INC-{n}" in str(c.params.get("text"))]
    return found


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
    store = Store.from_url(cluster.url)
    await store.reset_for_tests()
    settings = load_settings(REDIS_URL=cluster.url, MATCHDAY_DATA_DIR=str(tmp_path))
    core = build_core(store, settings, clock, durable=True)
    ops_port = _node_port(store, OPS)
    fx = await _fixture_off(core, store, ops_port)
    reader = start_outbox(core)
    fake = FakeTelegram()
    await fake.start()
    s = settings.model_copy(update={"telegram_bot_token": SecretStr(TOKEN),
                                    "telegram_base_url": fake.base_url})
    tg = telegram_for(core, s, poll_timeout=1)
    await tg.start(poll=False)  # as run_bot starts it: polling once the lease is held
    lease = Ticks(polling(store.gateway, tg.bot_id, "replica-a", ttl_ms=1500))
    assert _node_port(store, lease.key) != ops_port  # the bot's slot is elsewhere
    keeper = asyncio.create_task(_keep_polling(lease, tg))
    ops = redis.Redis(port=ops_port, decode_responses=True)
    try:
        await fake.wait_for(lambda calls: [c for c in calls if c.method == "deleteWebhook"],
                            timeout=20)  # polling began (it drops any webhook first)
        await fake.push(fake.message_update(STEWARD, "/incident pyro @away_upper s3 flare"))
        await fake.wait_for(answered(1), timeout=20)  # the steward is known (and cached)
        ops.config_set("min-replicas-to-write", 1)  # the {ops} master refuses every write
        with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
            ops.set("md:{ops}:probe", "1")
        since = lease.ticks
        while lease.ticks < since + 6:  # twice the TTL: a lease under {ops} has lapsed
            lease.tick_event.clear()
            await asyncio.wait_for(lease.tick_event.wait(), 10)
        assert lease.held
        await fake.push(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 coin"))
        await fake.wait_for(answered(2), timeout=20)  # fetched, logged and answered
        assert (await store.incident(fx.id, 2)).location == "stb_walkway"
    finally:
        ops.config_set("min-replicas-to-write", 0)
        ops.close()
        await cancel_and_wait([keeper])
        await tg.stop()
        await reader.stop()
        await fake.stop()
        await store.close()
