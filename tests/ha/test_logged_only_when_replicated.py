"""An outbox entry (a "Logged INC-n" answer, a card) is handed to delivery only once the
write that made it is on the replicas: a failover can then never take back a report a
steward was told is logged."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bot.app import build_core
from bot.core.dispatch import HELD
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store, Unconfirmed
from bot.store.outbox import Outbox
from tests.conftest import Chat


async def test_entries_of_an_unreplicated_write_wait_until_the_replica_has_it(
        replicated, clock, tmp_path: Path):
    store = Store.from_url(replicated.url)
    await store.reset_for_tests()
    assert await store.gateway.configure_replication(timeout_ms=200) == 1
    settings = load_settings(REDIS_URL=replicated.url, MATCHDAY_DATA_DIR=str(tmp_path))
    core = build_core(store, settings, clock, cache_ttl=0)
    fx = await ensure_sample_fixture(core)
    outbox = Outbox(store.gateway)
    core.notifier.outbox = outbox  # durable delivery, as the app wires it
    await outbox.ensure_group(fx.id)
    say = Chat(core)
    await say("/incident missile @seg_ne s4", as_="steward")
    assert (await outbox.read(fx.id, "reader", 100))  # replicated: handed out at once

    replica = replicated.pid(replicated.replica_ports[0])
    os.kill(replica, signal.SIGSTOP)  # the replication link stalls
    try:
        r = await say("/incident pyro @away_upper s5 flare thrown", as_="steward")
        assert r.reply.text == HELD
        with pytest.raises(Unconfirmed):  # written on the master, not yet replicated
            await outbox.read(fx.id, "reader", 100)
        with pytest.raises(Unconfirmed):  # and a new reader cannot take it either
            await outbox.claim_all(fx.id, "another reader")
    finally:
        os.kill(replica, signal.SIGCONT)
    held = await outbox.claim_all(fx.id, "another reader")  # the replica caught up
    assert [out.ref for _, out in held].count("INC-2") >= 1  # control's card for the report
    await store.close()
