"""The life-safety lane when the replica delivering a procedure dies (issue 24 §4), with two
cores on one Redis through python-telegram-bot against the fake Bot API: the dead replica's
hold lapses with its heartbeat (not at the lane's cap), so the survivor's other messages go
again within seconds; the survivor takes the fixture's outbox over when the dead replica's
delivery lease lapses, holds the lane afresh for what it claimed, finishes the procedure
(every message once) and gives the lane back itself. The lane holds a procedure's first
posts (the stewards' alert channel, control), never the direct messages that chase it."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.app import build_core
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.delivery.durable import OutboxReader
from bot.delivery.lane import Lane, lane_cap
from bot.domain.messages import Outbound, Reply
from bot.settings import Settings
from bot.store.base import fx_prefix
from bot.store.outbox import LEASE_MS, Outbox
from bot.store.stewarding_keys import Stewarding
from bot.tasks import cancel_and_wait
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.procedures import (
    button,
    procedure_calls,
)
from tests.support.telegram import (  # noqa: F401 (fixtures)
    CONTROL,
    Feed,
    fake,
    polling,
    sends_to,
    sent_message,
)

SO = 300000001
STEWARDS = [300000011, 300000012, 300000013]
ALERT = "-1001000000077"  # the stewards' alert channel; every steward is in it
BEAT_S = 1.0  # the heartbeat's hold in this test (production: the delivery lease, 5 s)


async def set_lease_ms(core: Core, keys: list[str], ms: int) -> None:
    """Let the dead replica's delivery leases lapse `ms` from now."""
    for key in keys:
        await core.store.gateway.call(lambda r, key=key: r.pexpire(key, ms))


class Dying(Lane):
    """Replica A's lane: after `sends` procedure messages its chat workers never get another
    slot (as if the process froze there), and its heartbeat stops when the test kills it."""

    def __init__(self, state: Stewarding, sends: int) -> None:
        super().__init__(state, poll_s=0.05, beat_s=BEAT_S)
        self.sends = sends
        self.revived = asyncio.Event()

    async def admit(self, take: Callable[[], Awaitable[None]], gap: float) -> None:
        if self.sends <= 0:
            await self.revived.wait()  # dead: only the test's clean-up lets it go on
        self.sends -= 1
        await super().admit(take, gap)

    async def kill(self) -> None:
        """No more heartbeats: the process is gone."""
        await self.close()
        self.queued = lambda bid: None  # type: ignore[method-assign]


class Releases(Stewarding):
    """Replica B's lane state, counting who gave the lane back."""

    released: list[str]

    async def release_lane(self, bid: str) -> bool:
        got = await super().release_lane(bid)
        if got:
            self.released.append(bid)
        return got


async def test_a_dead_replicas_hold_lapses_and_the_survivor_finishes_the_procedure(
        core: Core, settings: Settings, fake: FakeTelegram,  # noqa: F811
        polling: TelegramAdapter) -> None:  # noqa: F811
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer", "SO")
    for who in ("console:steward", "console:supervisor", "telegram:100000001"):
        core.roster.pop(who)
    for k, uid in enumerate(STEWARDS):
        core.roster[f"telegram:{uid}"] = Member("telegram", str(uid), "steward",
                                                f"Tabard 31{k}", "stb_upper")
        await core.chat_member("telegram", ALERT, str(uid), True)
    core.notifier.channels = {**core.notifier.channels, "alert": {"telegram": [ALERT]}}
    # replica A: takes the command, holds the fixture's outbox, delivers one message, dies
    dying = Dying(Stewarding(core.store.gateway), sends=1)
    core.notifier.lane = dying
    core.notifier.outbox = Outbox(core.store.gateway)
    reader_a = OutboxReader(core.notifier, core.notifier.outbox, owner="replica-a",
                            block_ms=100, rescan_s=0.1)
    reader_a.start()
    # replica B: the survivor, delivering through the same Bot API
    state_b = Releases(core.store.gateway)
    state_b.released = []
    other = build_core(core.store, settings, core.clock, cache_ttl=0)
    other.notifier.channels = core.notifier.channels
    other.notifier.lane = Lane(state_b, poll_s=0.05, beat_s=BEAT_S)
    other.notifier.add_sink(polling.sink)
    other.notifier.outbox = Outbox(core.store.gateway)
    reader_b = OutboxReader(other.notifier, other.notifier.outbox, owner="replica-b",
                            block_ms=100, rescan_s=0.1)
    lanes = Stewarding(core.store.gateway)
    try:
        feed = Feed(fake)
        await feed(fake.message_update(SO, "/evacuate all smoke in the east stand"))
        ask = (await fake.wait_for(sends_to(SO, "Confirm EVACUATE")))[-1]
        await feed(fake.callback_update(SO, sent_message(fake, SO, "Confirm"),
                                        button(ask, "now")))
        await fake.wait_for(lambda calls: procedure_calls(calls, "🚨 EVACUATE"))
        held = await lanes.lane()
        assert held is not None and held[1] == 3  # the channel post, control and command
        bid = held[0]
        reader_b.start()  # B runs meanwhile; A holds the fixture's delivery lease

        # A dies: no shutdown code (its lease and its hold are left to lapse)
        leases = [fx_prefix(fx) + "obx:lease" for fx in reader_a._loops]
        await cancel_and_wait([reader_a._main, *reader_a._loops.values()])
        await dying.kill()
        loop = asyncio.get_running_loop()
        died = loop.time()
        # On a loaded machine the digest can take longer than the 5 s lease, and then B
        # rightly finishes the procedure first; the hold's lapse is what is tested here, so
        # A's lease is held past the digest and then left to lapse in its usual 5 s.
        await set_lease_ms(core, leases, 60_000)

        # B's other messages go again once the dead hold lapses, long before the cap
        await other.notifier.send([Outbound("control", Reply("a digest after the crash"))])
        await fake.wait_for(sends_to(CONTROL, "after the crash"), timeout=10)
        assert loop.time() - died < lane_cap(2) / 3
        assert len(procedure_calls(fake.calls, "🚨 EVACUATE")) == 1  # before the takeover
        await set_lease_ms(core, leases, LEASE_MS)

        # A's delivery lease lapses (5 s): B claims the rest, holds the lane, finishes
        await fake.wait_for(lambda calls: len(procedure_calls(calls, "🚨 EVACUATE")) >= 3,
                            timeout=20)
        await other.notifier.drain()
        chats = Counter(c.params["chat_id"] for c in procedure_calls(fake.calls,
                                                                     "🚨 EVACUATE"))
        assert chats == Counter({int(ALERT): 1, CONTROL: 1, -1001000000002: 1}), chats
        for _ in range(200):  # its last delivery's bookkeeping
            if state_b.released:
                break
            await asyncio.sleep(0.01)
        assert state_b.released == [bid]  # given back by the survivor, not lapsed
        assert await lanes.lane() is None
    finally:
        await reader_b.stop()
        await other.notifier.close()
        dying.revived.set()  # let A's frozen workers end so the fixtures can close
        with contextlib.suppress(Exception):
            await reader_a.stop()
