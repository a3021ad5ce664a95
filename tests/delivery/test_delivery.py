"""The one delivery layer: coalescing, digests at a flashpoint, 429s, the durable outbox, the
shared limiter, and the fakes that enforce the platforms' limits (time injected throughout)."""

from __future__ import annotations

import asyncio
import itertools

from bot.app import build_core
from bot.core.dispatch import Core
from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import SharedRateLimiter
from bot.delivery.sink import BOT_WIDE
from bot.domain.messages import Outbound, Reply
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.store import Store
from bot.store.inbox import Inbox
from bot.store.outbox import Outbox
from bot.store.windows import Windows
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from tests.support.cards import card
from tests.support.delivery import (  # noqa: F401 (fixtures)
    GROUP,
    STEWARD,
    Recorder,
    durable,
    notifier,
    tg_settings,
)
from tests.support.fake_time import FakeTime


async def test_quiet_night_one_card_per_incident_edited_in_place(store: Store):
    time = FakeTime()
    n, sink = notifier(store, time)
    await n.send([card(1)])
    await n.drain()
    await n.send([card(1, status="Acknowledged")])
    await n.drain()
    assert [op for _, op, _, _ in sink.log] == ["send", "edit"]
    assert "Acknowledged" in sink.sent("edit")[0]
    await n.close()


async def test_flashpoint_becomes_a_digest_worst_first_then_actionable_cards(store: Store):
    time = FakeTime()
    n, sink = notifier(store, time)
    for k in range(20):  # the group's minute is spent: anything new must wait
        await n.send([Outbound("control", Reply(f"earlier {k}"))])
    await n.drain()
    outs = [card(100 + k, sev=4 if k == 3 else 5 if k == 7 else 2) for k in range(12)]
    await n.send(outs)
    await n.drain()
    later = [x for x in sink.sent() if "earlier" not in x]
    digest = later[0]
    assert digest.startswith("12 new incidents")
    lines = digest.splitlines()[1:]
    assert all(f"INC-{100 + k}" in digest for k in range(12))  # every one named at once
    assert "INC-107" in lines[0] and "INC-103" in lines[1]  # severity 5, then 4, first
    assert "Gate 107" in lines[0] and "severity 5" in lines[0]
    # then the actionable ones get their own card (buttons), worst first; no others
    assert [x.splitlines()[0] for x in later[1:]] == ["INC-107 Missile", "INC-103 Missile"]
    await n.close()


async def test_superseded_card_versions_are_coalesced(store: Store):
    time = FakeTime()
    n, sink = notifier(store, time)
    await n.send([card(1)])
    await n.drain()
    for status in ("Acknowledged", "Dispatched", "On scene", "Contained"):
        await n.send([Outbound("control", Reply("other"))])  # keeps the worker busy
        await n.send([card(1, status=status)])
    await n.drain()
    edits = sink.sent("edit")
    assert len(edits) < 4 and "Contained" in edits[-1]  # only the latest state matters
    await n.close()


async def test_a_message_held_up_on_the_way_does_not_crowd_the_next_one(store: Store):
    time = FakeTime()
    n, sink = notifier(store, time)

    class SlowFirst(Recorder):
        """The first send reaches the platform (and is answered) 0.6 s after it left."""

        async def send(self, chat: str, reply: Reply, *, thread: str = "",
                       quote: str = "") -> str:
            if not self.log:
                await self.time.sleep(0.6)
            return await super().send(chat, reply, thread=thread, quote=quote)

    slow = SlowFirst(time)
    n.add_sink(slow)
    for k in range(3):
        n.reply("telegram", "42", Reply(f"answer {k}"))
    await n.drain()
    arrived = [t for t, op, chat, _ in slow.log if op == "send" and chat == "42"]
    assert len(arrived) == 3
    # the platform counts arrivals: at most one a second in a chat, however late one came
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(arrived))
    await n.close()


async def test_a_20s_429_window_loses_nothing(store: Store):
    time = FakeTime()
    n, sink = notifier(store, time)
    sink.busy_until = time.now + 20  # Telegram says "retry after 5" for 20 s
    await n.send([card(k) for k in range(1, 31)])
    await n.send([Outbound(f"user:telegram:{100 + k}", Reply(f"Logged INC-{k}"))
                  for k in range(1, 31)])
    await n.drain()
    text = "\n".join(sink.sent())
    assert all(f"INC-{k}" in text for k in range(1, 31))  # every card named
    assert all(f"Logged INC-{k}" in sink.sent() or f"\nLogged INC-{k}" in text
               for k in range(1, 31))
    assert any(op == "429" for _, op, _, _ in sink.log)
    health = {(h.platform, h.chat): h for h in n.pending()}
    assert health[("telegram", GROUP)].last_429_at is not None
    await n.close()


async def test_two_replicas_share_one_limit_in_redis(store: Store):
    """Three replicas send 10 messages each to one group: the slots Redis grants (at the
    time each was asked for) keep every window, so the group never sees more."""
    time = FakeTime()
    granted: list[float] = []
    sent: list[str] = []

    class Counted(Windows):
        async def take(self, windows, now, member="", hold=None):  # type: ignore[no-untyped-def]
            wait = await super().take(windows, now, member, hold)
            if wait <= 0:
                granted.append(now)
            return wait

    class Sink(Recorder):
        async def send(self, chat: str, reply: Reply, *, thread: str = "",
                       quote: str = "") -> str:
            sent.append(reply.text)
            return "1"

    r = store.gateway.r
    await r.delete(*[k async for k in r.scan_iter("md:{rl:telegram}:*")] or ["x"])
    replicas = []
    for _ in range(3):
        n = Notifier({"control": {"telegram": [GROUP]}}, clock=time.clock,
                     limiter=SharedRateLimiter(Counted(store.gateway), clock=time.clock,
                                               sleep=time.sleep))
        n.add_sink(Sink(time))
        replicas.append(n)
    for i, n in enumerate(replicas):
        await n.send([Outbound("control", Reply(f"r{i} m{k}")) for k in range(10)])
    await asyncio.gather(*(n.drain() for n in replicas))
    assert len(sent) == 30 and len(granted) == 30
    granted.sort()
    for per, count in ((1.0, 1), (60.0, 20), (9.0, 3)):
        assert all(sum(1 for u in granted if t <= u < t + per - 1e-6) <= count
                   for t in granted), (per, count)
    for n in replicas:
        await n.close()


async def test_a_bot_wide_slot_counts_towards_30_a_second_but_no_chat(store: Store):
    """Telegram's lookup forwards take a slot of the bot's 30/s only: 40 of them while
    replies go out spread over two seconds (not 40 seconds of one chat's 1/s), and every
    second still holds at most 30 calls in all."""
    time = FakeTime()
    r = store.gateway.r
    await r.delete(*[k async for k in r.scan_iter("md:{rl:telegram}:*")] or ["x"])
    limiter = SharedRateLimiter(Windows(store.gateway), clock=time.clock, sleep=time.sleep)
    at: list[float] = []
    for k in range(40):
        await limiter.acquire("telegram", BOT_WIDE)
        at.append(time.now)
        await limiter.acquire("telegram", str(STEWARD + k))  # a reply to another steward
        at.append(time.now)
        await limiter.answered("telegram", str(STEWARD + k))  # ... which Telegram took
    assert at[-1] - at[0] < 3.0  # no chat's 1/s applied to the forwards
    assert all(sum(1 for u in at if t <= u < t + 1.0 - 1e-6) <= 30 for t in at)


# ---------------------------------------------------------------- outbox and inbox


async def test_report_card_and_reply_are_in_the_outbox_until_delivered(
        core: Core, settings: Settings, fake: FakeTelegram):
    outbox = Outbox(core.store.gateway)
    core.notifier.outbox = outbox  # durable, but no reader yet: as if the bot died now
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    adapter = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    await fake.push(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 coins"))
    for _ in range(200):
        if (await outbox.backlog(fx))[0] >= 2:
            break
        await asyncio.sleep(0.02)
    # the card (one entry for control and command) and the reporter's answer: written with
    # the report, in its script
    assert (await outbox.backlog(fx))[0] == 2
    assert fake.sent_to(STEWARD) == []
    other = build_core(core.store, settings, core.clock, cache_ttl=0)  # a fresh process
    other.notifier.add_sink(adapter.sink)
    other.notifier.store = other.facades.delivery.refs
    reader = await durable(other)
    await fake.wait_for(lambda calls: fake.sent_to(STEWARD) and fake.sent_to(GROUP))
    await reader.drain()
    assert "Logged INC-1" in fake.sent_to(STEWARD)[0].params["text"]
    assert len(fake.sent_to(GROUP)) == 1 and len(fake.sent_to(-1001000000002)) == 1
    assert (await outbox.backlog(fx))[0] == 0
    await reader.stop()
    await adapter.stop()


async def test_a_taken_over_outbox_sends_only_what_is_missing(core: Core, settings: Settings,
                                                              fake: FakeTelegram):
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    outbox = Outbox(core.store.gateway)
    await outbox.ensure_group(fx)
    await outbox.add(fx, [Outbound("control", Reply("to both"), fixture=fx)])
    [(entry, _)] = await outbox.read(fx, "dead-replica", 10)  # read, then it died
    await outbox.mark(fx, entry, f"telegram:{GROUP}", last=False)  # reached one chat only
    core.notifier.channels = {"control": {"telegram": [GROUP, "-1001000000009"]}}
    adapter = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    reader = await durable(core)
    await reader.drain()
    assert fake.sent_to(GROUP) == [] and len(fake.sent_to(-1001000000009)) == 1
    await reader.stop()
    await adapter.stop()


async def test_recorded_updates_are_processed_after_a_restart(core: Core, settings: Settings,
                                                              fake: FakeTelegram):
    # A crashed run fetched and recorded this update; Telegram will not send it again.
    upd = fake.message_update(STEWARD, "/incident pyro @stb_walkway s2 flare")
    await Inbox(core.store.gateway, TOKEN.split(":")[0]).record([upd])
    adapter = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    await fake.wait_for(lambda calls: [c for c in fake.sent_to(STEWARD)
                                       if "Logged INC-1" in c.params["text"]])
    assert await Inbox(core.store.gateway, TOKEN.split(":")[0]).pending() == []
    await adapter.stop()


async def test_fake_telegram_answers_429_exactly_when_a_limit_breaks(fake: FakeTelegram):
    time = FakeTime()
    fake.clock = time.clock
    assert fake._over_limit("42") == 0
    assert fake._over_limit("42") == 1  # a second message to one chat within a second
    time.now += 1.0
    assert fake._over_limit("42") == 0
    for k in range(20):
        time.now += 1.0
        wait = fake._over_limit("-100777")
        assert wait == 0 if k < 20 else wait > 0
    time.now += 1.0
    assert fake._over_limit("-100777") >= 30  # the 21st group message within a minute


async def test_status_shows_delivery_health_and_the_other_platform_is_warned(store: Store):
    from bot.delivery.chat_health import status_lines, watch

    time = FakeTime()
    n, sink = notifier(store, time)

    class SlackRecorder(Recorder):
        platform = "slack"

    slack = SlackRecorder(time)
    n.add_sink(slack)
    n.channels["control"]["slack"] = ["C0CONTROL"]
    assert status_lines(n) == ["Delivery: all messages delivered."]
    sink.busy_until = time.now + 10_000  # Telegram refuses everything for a long while
    await n.send([Outbound("user:telegram:" + GROUP, Reply("card"))])
    for _ in range(50):
        await asyncio.sleep(0)
    warner = asyncio.create_task(watch(n, warn_after=60, every=5))
    while not slack.sent():
        await asyncio.sleep(0)
    warner.cancel()
    [line] = [x for x in status_lines(n) if "telegram" in x]
    assert "1 queued" in line and "last 429" in line
    assert "not getting through" in slack.sent()[0] and GROUP in slack.sent()[0]
    assert len(slack.sent()) == 1  # once per stuck spell
    sink.busy_until = 0
    await n.close()


def test_a_chat_sending_at_its_limit_is_late_not_stuck() -> None:
    # a flashpoint's control chat sends a digest every 3 s while a lower message waits
    # behind them over a minute: the other platform's control is not told it is "not getting
    # through" (the 40-club Saturday warned 12 times in its busiest minutes); a chat that
    # sent nothing for as long is
    from bot.delivery.chat_queue import Health

    h = Health("telegram", GROUP, queued=3, oldest_at=100.0)
    assert h.stuck(now=170.0, after=60.0)  # never sent
    h.sent(1, at=167.0)
    assert not h.stuck(now=170.0, after=60.0)  # sending: late, not stuck
    assert h.stuck(now=230.0, after=60.0)  # nothing went out for a minute
    assert not Health("telegram", GROUP).stuck(now=1e6, after=60.0)  # nothing waits
