"""An outbox entry this version cannot fully read never holds a fixture's delivery up: an
entry from a newer replica (a field this version does not know) is delivered; one it cannot
read at all (corrupt, or a future format) is logged and left pending in the stream, never
dropped, while every message after it goes out in order."""

from __future__ import annotations

import asyncio
import json

from bot.delivery.durable import OutboxReader
from bot.domain.incident.incident_card import IncidentCard
from bot.domain.messages import Outbound, Reply
from bot.store import Store
from bot.store.base import OPS, fx_prefix
from bot.store.outbox import GROUP, Outbox, encode
from tests.support.delivery import (
    notifier,
)
from tests.support.fake_time import (
    FakeTime,
)

FX = "rolling-upgrade-fx"


def newer(out: Outbound) -> str:
    """The entry as a later version might write it: extra fields at every level."""
    d = json.loads(encode(out))
    d["priority"] = 3
    d["r"]["b"] = [[[*b, "tooltip"] for b in row] for row in d["r"]["b"]]
    d["r"]["card"]["wind"] = "NE 20 mph"
    return json.dumps(d)


async def test_unreadable_entries_stay_pending_and_the_rest_go_out(store: Store,
                                                                   caplog) -> None:
    time = FakeTime()
    n, sink = notifier(store, time)
    outbox = Outbox(store.gateway)
    key = fx_prefix(FX) + "obx"
    await store.gateway.r.sadd(OPS + "fixtures", FX)
    await outbox.ensure_group(FX)
    card = IncidentCard(id="INC-4", n=4, severity=4, kind="missile", what="Throwing missiles",
                        place="Block 112", status="reported", status_label="Reported")
    await outbox.add(FX, [Outbound("control", Reply("message 1"), fixture=FX)])
    await store.gateway.r.xadd(key, {"m": "{not json"})
    await store.gateway.r.xadd(key, {"m": newer(Outbound(
        "control", Reply("message 2", card=card), fixture=FX))})
    await store.gateway.r.xadd(key, {"m": json.dumps({"v": 9, "payload": "future"})})
    await outbox.add(FX, [Outbound("control", Reply("message 3"), fixture=FX)])
    n.outbox = outbox
    reader = OutboxReader(n, outbox, owner="replica-a", block_ms=100, rescan_s=0.1)
    reader.start()
    try:
        for _ in range(1000):  # real Redis time: the reader blocks 100 ms per read
            if len(sink.sent()) >= 3:
                break
            await asyncio.sleep(0.01)
        await n.drain()
        assert [x.strip() for x in sink.sent()] == ["message 1", "message 2", "message 3"]
        pending = await store.gateway.r.xpending(key, GROUP)
        assert pending["pending"] == 2  # the two it cannot read: kept, not acknowledged
        kept = [f["m"] for _, f in await store.gateway.r.xrange(key)]  # delivered ones go
        assert kept == ["{not json", json.dumps({"v": 9, "payload": "future"})]
        assert (await outbox.backlog(FX))[0] == 2  # and they show as not yet delivered
        assert sum("cannot be read by this version" in r.message for r in caplog.records) == 2
    finally:
        await reader.stop()
        await n.close()
