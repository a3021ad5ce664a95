"""Not only reports wait in a paused master's sockets: the seen mark of an inbound update,
a send's slot in the shared rate-limit windows and a polling batch recorded in the Telegram
inbox do too. When the old master resumes after the sentinels promoted a replica, it runs
them before it learns it was replaced, and whatever it writes is thrown away when it rejoins
as a replica. Each of these writes is fenced like a report: refused there, sent again to the
new master, so what the bot was told is what the new master holds."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from bot.store import Store
from bot.store.base import fx_prefix
from bot.store.inbox import Inbox, Seen
from bot.store.outbox import KEPT, TAKEN_OVER, Outbox
from bot.store.windows import Windows
from rigs.topology import start_sentinel
from tests.support.failover import KeyspaceWatch, promote_a_replica

BOT = "4242"
WINDOWS = [("md:{rl:telegram}:bot:30/1", 30, 1.0)]


def _update(uid: int) -> dict[str, object]:
    return {"update_id": uid, "message": {"message_id": uid, "text": f"/incident pyro {uid}",
                                          "chat": {"id": -1005000000010, "type": "group"},
                                          "from": {"id": 900 + uid, "is_bot": False}}}


async def test_late_seen_marks_windows_and_inbox_batches_land_on_the_new_master(
        tmp_path: Path):
    topo = start_sentinel(tmp_path / "redis", replicas=2, down_after_ms=60_000)
    store = Store.from_url(topo.url)
    other = Store.from_url(topo.url)  # a second bot replica, asking after the failover
    watch = KeyspaceWatch(topo.master_port)
    old = topo.master_port
    try:
        await store.gateway.configure_replication(timeout_ms=300)
        gw = store.gateway
        seen, inbox, windows = Seen(gw), Inbox(gw, BOT), Windows(gw)
        await inbox.record([_update(100)])  # the bot has confirmed update 100 to Telegram
        assert await Outbox(gw).lease("fx-1", "bot-a") == KEPT  # a delivers fixture fx-1
        lease = fx_prefix("fx-1") + "obx:lease"
        # ... and its lease and grace are about to lapse: the pause outlasts them
        await gw.r.pexpire(lease, 30)
        await gw.r.pexpire(lease + ":grace", 30)
        await watch.start()
        # pooled connections to the first master, as a busy bot has
        await asyncio.gather(*(gw.r.get(f"warm:{i}") for i in range(8)))

        os.kill(topo.pid(old), signal.SIGSTOP)  # the master pauses with writes on the way
        try:
            writes = asyncio.gather(
                seen.first("slack:Ev0123"),  # a Slack event, first seen here
                windows.take(WINDOWS, 1_800_000_000.0, "send-1"),  # a send's slot
                inbox.record([_update(101), _update(102)]),  # a getUpdates batch
                Outbox(gw).lease("fx-1", "bot-b"))  # another replica's poll, waiting too
            new = await promote_a_replica(topo, old)  # ... the sentinels promote a replica
        finally:
            os.kill(topo.pid(old), signal.SIGCONT)  # ... and the old master resumes
        first, wait, _, took = await writes

        written = await watch.written()
        assert not {k for k in written if "seen:" in k or "rl:" in k or "inbox" in k
                    # (the lease and its grace expire there too; only a take names a holder)
                    or k.endswith("offset") or k.endswith("obx:lease:last")}, \
            f"applied on the replaced master: {written}"
        # b was told it took fx-1 over (a's lease and grace had run out): the new master
        # says so too, so a starts no second delivery of it
        assert took == TAKEN_OVER
        assert await other.gateway.call(lambda r: r.get(lease)) == "bot-b"
        assert await Outbox(other.gateway).lease("fx-1", "bot-a") == 0
        assert first is True and wait == 0.0
        assert (await other.gateway.call(lambda r: r.info("server")))["tcp_port"] == new
        # Slack retries the event to another replica: it is not handled a second time
        assert await Seen(other.gateway).first("slack:Ev0123") is False
        # the send counts against the bot-wide limit for every replica
        assert await Windows(other.gateway).used(WINDOWS, 1_800_000_000.0) == [1]
        # the batch the bot confirmed to Telegram (next offset 103) is on record there
        again = Inbox(other.gateway, BOT)
        assert await again.offset() == 103
        assert [u["update_id"] for u in await again.pending()] == [100, 101, 102]
    finally:
        await watch.close()
        await store.close()
        await other.close()
        topo.stop()


async def test_an_older_batch_recorded_late_leaves_the_offset_where_it_is(tmp_path: Path):
    """A getUpdates batch whose record arrives after a later one's (two pollers across a
    lease handover): the offset stays at the later batch's, so Telegram is not asked for
    updates already confirmed and handled."""
    topo = start_sentinel(tmp_path / "redis", replicas=1, down_after_ms=60_000)
    store = Store.from_url(topo.url)
    try:
        inbox = Inbox(store.gateway, BOT)
        await inbox.record([_update(110)])
        await inbox.record([_update(105)])
        assert await inbox.offset() == 111
        assert [u["update_id"] for u in await inbox.pending()] == [105, 110]
    finally:
        await store.close()
        topo.stop()
