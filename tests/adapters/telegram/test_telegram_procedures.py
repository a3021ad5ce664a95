"""Reaching every steward at once (issue 24 §4) through python-telegram-bot against the fake
Bot API: a procedure is confirmed first, goes through the durable outbox to every targeted
steward and to control with an "I have it" button, acknowledgements are counted in /status
(a tap answered on the button), and while its first posts go out nothing else is sent, on
this replica or another."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.app import build_core
from bot.core.dispatch import Core
from bot.delivery.durable import OutboxReader
from bot.delivery.lane import Lane
from bot.domain.messages import Outbound, Reply
from bot.settings import Settings
from bot.store.stewarding_keys import Stewarding
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.procedures import (  # noqa: F401 (fixtures)
    AWAY_GATE,
    COMMAND,
    EAST,
    SO,
    button,
    confirm,
    deployed,
    procedure_calls,
)
from tests.support.telegram import (  # noqa: F401 (fixtures)
    CONTROL,
    Feed,
    fake,
    polling,
    sends_to,
    sent_message,
    tg_settings,
)

# stewards by the club's rota name / tabard: two in the east stand (STB), one at the away gate


async def test_evacuate_is_confirmed_then_reaches_every_steward_and_control_and_acks_count(
        core: Core, fake: FakeTelegram, deployed: OutboxReader) -> None:  # noqa: F811
    feed = Feed(fake)
    await feed(fake.message_update(SO, "/evacuate all fire in the east stand"))
    ask = (await fake.wait_for(sends_to(SO, "Confirm EVACUATE")))[-1]
    assert "3 stewards" in ask.params["text"]
    assert procedure_calls(fake.calls, "🚨 EVACUATE") == []  # nothing before the confirm

    await feed(fake.callback_update(SO, sent_message(fake, SO, "Confirm"), button(ask, "now")))
    chats = {*EAST, AWAY_GATE, CONTROL, COMMAND}  # and the command chat (#32)
    sent = await fake.wait_for(lambda calls: len(procedure_calls(calls, "🚨 EVACUATE")) >= 5
                               and procedure_calls(calls, "🚨 EVACUATE"))
    assert {c.params["chat_id"] for c in sent} == chats
    assert len(sent) == 5  # once each
    to_steward = next(c for c in sent if c.params["chat_id"] == EAST[0])
    assert "fire in the east stand" in to_steward.params["text"]
    assert "nearest safe exit" in to_steward.params["text"]  # the standing instruction

    await feed(fake.callback_update(EAST[0], sent_message(fake, EAST[0], "EVACUATE"),
                                    button(to_steward, "I have it")))
    await fake.wait_for(lambda calls: [  # answered on the button: no message
        c for c in calls if c.method == "answerCallbackQuery"
        and "Control knows you have it" in str(c.params.get("text"))])
    await feed(fake.message_update(SO, "/status"))
    status = (await fake.wait_for(sends_to(SO, "have it")))[-1].params["text"]
    assert "EVACUATE" in status and "1/3 have it" in status
    assert "Tabard 312" in status and "Tabard 311" not in status

    # a second tap, and a tap by someone it was not sent to, change nothing
    await feed(fake.callback_update(EAST[0], sent_message(fake, EAST[0], "EVACUATE"),
                                    button(to_steward, "I have it")))
    await feed(fake.message_update(SO, "/status"))
    await fake.wait_for(lambda calls: len(sends_to(SO, "have it")(calls)) >= 2)
    assert "1/3 have it" in sends_to(SO, "have it")(fake.calls)[-1].params["text"]


async def test_a_zone_lockdown_reaches_only_that_zones_stewards(
        core: Core, fake: FakeTelegram, deployed: OutboxReader) -> None:  # noqa: F811
    feed = Feed(fake)
    await confirm(fake, feed, "/lockdown stb hold the doors")
    await fake.wait_for(lambda calls: len(procedure_calls(calls, "🚨 LOCKDOWN")) >= 4)
    await deployed.drain()
    chats = sorted(c.params["chat_id"] for c in procedure_calls(fake.calls, "🚨 LOCKDOWN"))
    assert chats == sorted([*EAST, CONTROL, COMMAND])  # and the command chat (#32)


async def test_a_procedures_first_posts_go_ahead_and_nothing_waits_for_its_dms(
        core: Core, fake: FakeTelegram, deployed: OutboxReader) -> None:  # noqa: F811
    feed = Feed(fake)
    await feed(fake.message_update(SO, "/invacuate all"))
    ask = (await fake.wait_for(sends_to(SO, "Confirm")))[-1]
    fake.fail("sendMessage", times=1)  # the first procedure message is held up a second
    await feed(fake.callback_update(SO, sent_message(fake, SO, "Confirm"), button(ask, "now")))
    # a report during the procedure: its card waits for control's copy of the procedure
    # (the lane), not for the stewards' direct messages
    await feed(fake.message_update(AWAY_GATE, "/incident missile @gate_away s3 coins"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"), timeout=15)
    await fake.wait_for(lambda calls: len(procedure_calls(calls, "🚨 INVACUATE")) >= 5)
    await deployed.drain()
    to_control = [c.params["text"] for c in fake.calls if c.ok and c.method == "sendMessage"
                  and c.params["chat_id"] == CONTROL]
    assert "INVACUATE" in to_control[0] and any("INC-1" in t for t in to_control[1:])
    # three stewards, control and command (#32)
    assert len(procedure_calls(fake.calls, "🚨 INVACUATE")) == 5
    assert await Stewarding(core.store.gateway).lane() is None  # given back once it was out


class Watched:
    """The lane's state, telling the test when a replica has found it held."""

    def __init__(self, state: Stewarding) -> None:
        self.state = state
        self.seen_held = asyncio.Event()

    async def hold_lane(self, bid: str, messages: int, ttl_s: float) -> None:
        await self.state.hold_lane(bid, messages, ttl_s)

    async def keep_lane(self, bid: str, messages: int, ttl_s: float, *,
                        recount: bool = False) -> bool:
        return await self.state.keep_lane(bid, messages, ttl_s, recount=recount)

    async def lane(self) -> tuple[str, int] | None:
        got = await self.state.lane()
        if got is not None:
            self.seen_held.set()
        return got

    async def release_lane(self, bid: str) -> bool:
        return await self.state.release_lane(bid)


async def test_the_lane_holds_another_replicas_messages(
        core: Core, settings: Settings, fake: FakeTelegram,  # noqa: F811
        polling: TelegramAdapter) -> None:  # noqa: F811
    state = Stewarding(core.store.gateway)
    await state.hold_lane("P-test", 1, 60)
    other = build_core(core.store, settings, core.clock, cache_ttl=0)  # another replica
    watched = Watched(Stewarding(core.store.gateway))
    other.notifier.lane = Lane(watched, poll_s=0.05)
    other.notifier.add_sink(polling.sink)
    await other.notifier.send([Outbound("control", Reply("a digest that can wait"))])
    await asyncio.wait_for(watched.seen_held.wait(), 5)
    await asyncio.wait_for(watched.seen_held.wait(), 5)
    assert sends_to(CONTROL, "can wait")(fake.calls) == []
    await other.notifier.send([Outbound("control", Reply("🚨 LOCKDOWN"), urgent="P-test")])
    await fake.wait_for(sends_to(CONTROL, "LOCKDOWN"))
    await fake.wait_for(sends_to(CONTROL, "can wait"))  # the lane is free once it is out
    order: list[Any] = [c.params["text"] for c in fake.calls
                        if c.ok and c.method == "sendMessage" and c.params["chat_id"] == CONTROL]
    assert order.index("🚨 LOCKDOWN") < order.index("a digest that can wait")
    assert await state.lane() is None
    await other.notifier.close()


async def test_a_missing_child_goes_to_exit_posts_without_a_name_and_found_closes_it(
        core: Core, fake: FakeTelegram, deployed: OutboxReader) -> None:  # noqa: F811
    feed = Feed(fake)
    await feed(fake.message_update(SO, "/missing name=Sam age=7 desc=red coat seen=gate c "
                                       "at=19:20"))
    await fake.wait_for(sends_to(SO, "No name"))
    await feed(fake.message_update(SO, "/missing age=7 desc=red coat, blue cap, about 120cm "
                                       "seen=gate c at=19:20"))
    alert = (await fake.wait_for(sends_to(AWAY_GATE, "MISSING CHILD")))[-1]
    assert "red coat, blue cap" in alert.params["text"]
    assert "Gate C turnstiles at 19:20" in alert.params["text"]
    assert "Sam" not in json.dumps([c.params for c in fake.calls])
    # exit posts and supervisors only: the STB stewards are not told
    assert sends_to(EAST[0], "MISSING")(fake.calls) == []
    await fake.wait_for(sends_to(CONTROL, "MISSING CHILD"))
    mid = alert.params["text"].split("MISSING CHILD ")[1].split(" ")[0]
    await feed(fake.message_update(SO, f"/found {mid} reunited with mum at Gate C"))
    done = (await fake.wait_for(sends_to(AWAY_GATE, "FOUND")))[-1]
    assert mid in done.params["text"] and "reunited with mum at Gate C" in done.params["text"]
