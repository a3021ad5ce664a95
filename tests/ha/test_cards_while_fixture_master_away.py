"""A fixture's cards reach control while the Cluster master of its slot is paused (#34): the
in-flight and delivered marks the slot cannot take meanwhile are kept in the fixture's away
journal on another master, and its live cards' ids in their second copy there, so a card
reported just before the pause is shown within seconds, not after the failover. Whoever holds
the fixture's lease next writes the journal home before it claims anything: no card is shown
twice, and every entry is acknowledged."""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path

import pytest
import redis
from redis.cluster import ClusterNode

import bot.delivery.durable as durable_module
import bot.store.outbox as outbox_module
from bot.app import build_core
from bot.delivery.chat_queue import Journaled
from bot.delivery.durable import OutboxReader
from bot.delivery.sink import SENDING
from bot.domain.messages import Reply
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from bot.store.base import fx_prefix
from bot.store.copies import copy_key
from bot.store.outbox import decode
from bot.tasks import cancel_and_wait
from rigs.topology import Topology, start_cluster
from tests.conftest import Chat
from tests.support.failover import until
from tests.support.held_control import HeldControl

KINDS = ["missile", "pyro", "disorder"]


class CountingControl(HeldControl):
    """A held control chat that also counts, per outbox entry, the posts and the edits that
    carried it (a digest's naming of an entry is not its card)."""

    def __init__(self, platform: str) -> None:
        super().__init__(platform)
        self.posts: Counter[str] = Counter()
        self.edits: Counter[str] = Counter()

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Count the entries a new message carries."""
        mid = await super().send(chat, reply, thread=thread, quote=quote)
        self.posts.update(t for t in SENDING.get() if not t.startswith("d:"))
        return mid

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """Count the entries an edit in place carries."""
        ok = await super().edit(chat, message_id, reply)
        self.edits.update(t for t in SENDING.get() if not t.startswith("d:"))
        return ok


class Replica:
    """One bot replica on the Cluster: control's chats on both platforms (held when asked)
    and its outbox reader."""

    def __init__(self, name: str, url: str, tmp: Path, clock) -> None:  # type: ignore[no-untyped-def]
        self.owner = f"replica-{name}"
        self.store = Store.from_url(url)
        settings = load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=str(tmp / name))
        self.core = build_core(self.store, settings, clock, cache_ttl=0, durable=True)
        self.control = {p: CountingControl(p) for p in ("telegram", "slack")}
        for sink in self.control.values():
            self.core.notifier.add_sink(sink)
        self.reader = OutboxReader(self.core.notifier, self.core.notifier.outbox,
                                   owner=self.owner, block_ms=100, rescan_s=0.2)
        self.say = Chat(self.core)

    def queued(self, platform: str) -> set[str]:
        """'fixture/entry' of every copy waiting for (or being sent to) a chat here."""
        return {d.tag for (p, _), q in self.core.notifier.desk.queues.items() if p == platform
                for i in q.items + q.sending for d in i.done if isinstance(d, Journaled)}

    def shown(self, platform: str) -> set[str]:
        """'fixture/entry' of every card control saw on a platform."""
        return self.control[platform].entries

    async def crash(self) -> None:
        """Stop as a killed process would: no lease handed over, nothing more sent."""
        for task in [self.reader._main, *self.reader._loops.values()]:
            if task is not None:
                task.cancel()
        await cancel_and_wait([t for t in self.reader._loops.values()])
        for sink in self.control.values():
            sink.hold()

    async def close(self) -> None:
        for sink in self.control.values():
            sink.release()
        await self.reader.stop()
        await self.store.close()


def _standby_of(topo: Topology, master: int) -> int:
    """The port of the replica of a master."""
    return next(p for p in topo.replica_ports
                if redis.Redis(port=p).info("replication").get("master_port") == master)


async def _logged(bot: Replica, fx: str, k: int) -> set[str]:
    """A steward reports an incident; the 'fixture/entry' of its control card(s)."""
    before = {e for e, _ in redis_rows(bot, fx)}
    res = await bot.say(f"/incident {KINDS[k % len(KINDS)]} @seg_ne s2 report {k}",
                        as_="steward")
    assert res is not None and res.reply.ok, res
    return {f"{fx}/{e}" for e, f in redis_rows(bot, fx)
            if e not in before and decode(f["m"]).audience == "control"}


def _cluster(url: str) -> redis.RedisCluster:
    """A plain client of the Cluster (the test's own look at it)."""
    nodes = [ClusterNode(h, int(p)) for h, p in (a.split(":") for a in
                                                   url.removeprefix("redis+cluster://").split(","))]
    return redis.RedisCluster(startup_nodes=nodes, decode_responses=True)


def redis_rows(bot: Replica, fx: str) -> list[tuple[str, dict[str, str]]]:
    """The fixture's outbox entries (asked of the Cluster like any client)."""
    r = _cluster(bot.store_url)
    try:
        return r.xrange(fx_prefix(fx) + "obx")
    finally:
        r.close()


async def _setup(tmp_path: Path, clock, names: str) -> tuple[Topology, list[Replica], str, int]:  # type: ignore[no-untyped-def]
    topo = start_cluster(tmp_path / "cluster", 3, 1)
    bots = [Replica(n, topo.url, tmp_path, clock) for n in names]
    for bot in bots:
        bot.store_url = topo.url  # type: ignore[attr-defined]
        await bot.store.gateway.configure_replication(timeout_ms=300)
    fx = (await ensure_sample_fixture(bots[0].core)).id
    home = topo.master_of(fx_prefix(fx) + "obx")
    assert topo.master_of(copy_key(fx_prefix(fx) + "obx")) != home
    return topo, bots, fx, home


async def _lease_held(topo: Topology, fx: str, owner: str) -> None:
    lease = fx_prefix(fx) + "obx:lease"
    r = _cluster(topo.url)
    try:
        await until(lambda: r.get(lease) == owner, f"{owner} holding the lease")
    finally:
        r.close()


@pytest.mark.long  # a Cluster and a paused master: started first
async def test_cards_reach_control_while_the_fixtures_master_is_paused(
        tmp_path: Path, clock, monkeypatch: pytest.MonkeyPatch) -> None:
    # the lease's grace at 15 s, in the store's scripts and the reader alike: the two sends
    # below (Telegram paces a group at one message every 3 s, each send first waits 0.5 s for
    # the paused slot) took longer on a loaded CI machine than the 6 s the real grace leaves
    # after the last renewal (the next test runs on the real grace)
    for module in (outbox_module, durable_module):
        monkeypatch.setattr(module, "LEASE_GRACE_MS", 15_000)
    topo, bots, fx, home = await _setup(tmp_path, clock, "a")
    a = bots[0]
    try:
        # the pause lasts as long as the test says: no failover meanwhile
        redis.Redis(port=_standby_of(topo, home)).config_set("cluster-replica-no-failover",
                                                             "yes")
        a.reader.start()
        await _lease_held(topo, fx, a.owner)
        first = await _logged(a, fx, 0)
        for p in a.control:
            await until(lambda p=p: first <= a.shown(p), f"the first card shown ({p})")
        # control is slow for a moment: another incident and an acknowledgement of the
        # first queue behind it, then the fixture's master pauses (two sends: Telegram
        # paces a group at one message every 3 s, and sends go on only while the lease is
        # surely still this replica's, about 6 s after it last renewed it)
        for sink in a.control.values():
            sink.hold()
        cards = await _logged(a, fx, 1)
        assert (await a.say("/ack 1", as_="control")).reply.ok
        rows = redis_rows(a, fx)
        ack = {f"{fx}/{e}" for e, f in rows
               if decode(f["m"]).audience == "control" and decode(f["m"]).ref == "INC-1"} - first
        assert ack and len(cards) == 1
        for p in a.control:
            await until(lambda p=p: cards | ack <= a.queued(p), f"every card queued ({p})")
        os.kill(topo.pid(home), signal.SIGSTOP)
        try:
            for sink in a.control.values():
                sink.release()
            for p in a.control:  # shown while the master is still paused
                await until(lambda p=p: cards | ack <= a.shown(p),
                            f"the cards shown with the master paused ({p})")
                assert set(a.control[p].edits) >= ack, "the card was not edited in place"
        finally:
            os.kill(topo.pid(home), signal.SIGCONT)
        # once back, the marks kept elsewhere are written home: every entry acknowledged,
        # none shown twice, the journal empty
        outbox = a.core.notifier.outbox
        await until(lambda: not redis_rows(a, fx), "every entry acknowledged", 60)
        r = _cluster(topo.url)
        try:
            assert r.llen(copy_key(fx_prefix(fx) + "obx:away")) == 0
        finally:
            r.close()
        for p, sink in a.control.items():
            assert max((sink.posts + sink.edits).values()) == 1, (p, sink.posts, sink.edits)
        assert (await outbox.backlog(fx))[0] == 0
    finally:
        for bot in bots:
            await bot.close()
        topo.stop()


@pytest.mark.long
async def test_a_new_lease_holder_writes_the_away_journal_home_before_it_claims(
        tmp_path: Path, clock) -> None:
    """The replica that sent with the master away crashes; its master fails over; the
    other replica takes the lease and sends what is left, and nothing a second time."""
    topo, bots, fx, home = await _setup(tmp_path, clock, "ab")
    a, b = bots
    try:
        standby = _standby_of(topo, home)
        redis.Redis(port=standby).config_set("cluster-replica-no-failover", "yes")
        a.reader.start()
        await _lease_held(topo, fx, a.owner)
        for sink in a.control.values():
            sink.hold()
        cards = await _logged(a, fx, 0) | await _logged(a, fx, 1)
        for p in a.control:
            await until(lambda p=p: cards <= a.queued(p), f"every card queued ({p})")
        os.kill(topo.pid(home), signal.SIGSTOP)
        try:
            for sink in a.control.values():
                sink.release()
            for p in a.control:
                await until(lambda p=p: cards <= a.shown(p), f"the cards shown ({p})")
            await a.crash()
            # the replica takes over the paused master's slots
            redis.Redis(port=standby).execute_command("CLUSTER", "FAILOVER", "TAKEOVER")
            await until(lambda: topo.master_of(fx_prefix(fx) + "obx") == standby,
                        "the replica promoted")
        finally:
            os.kill(topo.pid(home), signal.SIGCONT)
        b.reader.start()
        await _lease_held(topo, fx, b.owner)
        await until(lambda: not redis_rows(b, fx), "every entry acknowledged", 60)
        for p in a.control:
            assert not b.shown(p), f"b sent again what a had sent ({p}): {b.shown(p)}"
    finally:
        for bot in bots:
            await bot.close()
        topo.stop()
