"""After a SIGSTOP failover the fixture's delivery lease moves away from its holder and comes
back (a new term): the holder claims every pending entry again, and each card's new copy
folds into its old copy still waiting behind control's slow chat. Every incident a steward
was told "Logged" must still reach control on both platforms, with one bot replica and with
two (it used to lose every card of such a send: ~35 incidents never shown)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from pathlib import Path

import pytest
import redis

from bot.app import build_core
from bot.delivery.chat_queue import Journaled
from bot.delivery.durable import IDLE_S, SWEEP_S, OutboxReader
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from bot.store.base import fx_prefix
from bot.store.outbox import decode
from bot.tasks import cancel_and_wait
from rigs.topology import start_sentinel
from tests.conftest import Chat
from tests.support.failover import promote_a_replica
from tests.support.held_control import HeldControl

REPORTS = 12
DEADLINE_S = 60.0  # a slow shared box; each wait is for a condition, not a time
KINDS = ["missile", "pyro", "disorder", "antisocial", "alcohol", "criminal_damage"]


async def _until(check, what: str, timeout: float = DEADLINE_S) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        assert loop.time() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


class Replica:
    """One bot replica: its core on the Sentinel topology, control's chats on both
    platforms (held: a slow chat with a queue), and its outbox reader."""

    def __init__(self, name: str, url: str, tmp: Path, clock) -> None:  # type: ignore[no-untyped-def]
        self.owner = f"replica-{name}"
        self.store = Store.from_url(url)
        settings = load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=str(tmp / name))
        self.core = build_core(self.store, settings, clock, cache_ttl=0, durable=True)
        self.control = {p: HeldControl(p) for p in ("telegram", "slack")}
        for sink in self.control.values():
            sink.hold()
            self.core.notifier.add_sink(sink)
        self.reader = OutboxReader(self.core.notifier, self.core.notifier.outbox,
                                   owner=self.owner, block_ms=100, rescan_s=0.2)
        self.say = Chat(self.core)
        self.follow = asyncio.create_task(self.store.gateway.follow_failovers())  # as the app

    def queued(self, platform: str, term: int = 0) -> set[str]:
        """'fixture/entry' of every copy of a lease term waiting for (or being sent to) a
        chat of a platform here."""
        return {d.tag for (p, _), q in self.core.notifier.desk.queues.items() if p == platform
                for i in q.items + q.sending for d in i.done
                if isinstance(d, Journaled) and d.term == term}

    async def close(self) -> None:
        for sink in self.control.values():
            sink.release()
        await self.reader.stop()
        await cancel_and_wait([self.follow])
        await self.store.close()


@pytest.mark.long  # a minute or more of subprocesses: started first
@pytest.mark.parametrize("replicas", [1, 2])
async def test_control_sees_every_incident_after_a_lease_moved_in_a_failover(
        tmp_path: Path, clock, caplog: pytest.LogCaptureFixture, replicas: int) -> None:
    caplog.set_level(logging.WARNING, "bot")
    topo = start_sentinel(tmp_path / "redis", replicas=2, down_after_ms=60_000)
    bots: list[Replica] = []
    try:
        old = topo.master_port
        redis.Redis(port=old).config_set("min-replicas-to-write", 1)
        bots = [Replica(n, topo.url, tmp_path, clock) for n in "ab"[:replicas]]
        for bot in bots:
            await bot.store.gateway.configure_replication(timeout_ms=300)
        a = bots[0]
        fx = (await ensure_sample_fixture(a.core)).id
        a.reader.start()
        lease = fx_prefix(fx) + "obx:lease"
        master = redis.Redis(port=old, decode_responses=True)
        await _until(lambda: master.get(lease) == a.owner, "replica a holding the lease")
        for bot in bots[1:]:
            bot.reader.start()
        # stewards report through every replica; control's chats are slow: cards queue
        for k in range(REPORTS):
            bot = bots[k % len(bots)]
            res = await bot.say(f"/incident {KINDS[k % len(KINDS)]} @seg_ne s2 report {k}",
                                as_="steward")
            assert res is not None and res.reply.ok
        rows = master.xrange(fx_prefix(fx) + "obx")
        cards = {f"{fx}/{e}" for e, f in rows if decode(f["m"]).audience == "control"}
        assert len(cards) >= REPORTS
        for platform in a.control:
            await _until(lambda p=platform: cards <= a.queued(p), f"every card queued ({platform})")

        os.kill(topo.pid(old), signal.SIGSTOP)  # the master pauses ...
        try:
            new = await promote_a_replica(topo, old)  # ... a replica is promoted ...
        finally:
            os.kill(topo.pid(old), signal.SIGCONT)  # ... and the old one comes back, alone
        promoted = redis.Redis(port=new, decode_responses=True)
        # a renews its lease on the promoted master first (it keeps renewing: the lease's
        # time to live goes back up) ...
        promoted.set(lease, a.owner, px=3000)
        await _until(lambda: promoted.pttl(lease) > 3500, "a renewing on the promoted master")
        # ... then another replica takes it (b, when there are two; else one since stopped)
        other = bots[1] if len(bots) > 1 else None
        promoted.set(lease, other.owner if other else "replica-gone", px=5000)
        await _until(lambda: "delivery lease lost" in caplog.text, "a to see the lease move")
        if other is not None:  # b is restarted: it hands the lease over
            await other.reader.stop()
        else:
            promoted.delete(lease)  # the other replica is gone: its lease lapses
        # a takes the lease again (a new term) and queues every pending card again, each
        # copy folding into the old one still waiting
        for platform in a.control:
            await _until(lambda p=platform: cards <= a.queued(p, term=1),
                         f"the new term's copies ({platform})")
        for bot in bots:
            for sink in bot.control.values():
                sink.release()
        shown = {p: set[str]() for p in a.control}

        def everything_shown() -> bool:
            for p in shown:
                shown[p] = set().union(*(bot.control[p].entries for bot in bots))
            return all(cards <= s for s in shown.values())
        try:  # a copy dropped in a race is taken again by the lease holder's sweep (an
            # entry held by nothing for IDLE_S, looked for every SWEEP_S): late, never lost
            await _until(everything_shown, "every card shown to control",
                         DEADLINE_S + IDLE_S + SWEEP_S)
        except AssertionError:
            pass
        missing = {p: len(cards - s) for p, s in shown.items()}
        assert missing == {"telegram": 0, "slack": 0}, missing
    finally:
        for bot in bots:
            await bot.close()
        topo.stop()
