"""The live board at a flashpoint: one pinned message per control chat, edited within the
chat's budget, ended and unpinned when the burst is over; quiet nights get no board."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
import pytest_asyncio
import yaml

from bot.core.dispatch import Core
from bot.delivery import board as boards
from bot.delivery.chat_health import status_lines
from bot.domain.messages import Command, Outbound, Reply, ReplyVia
from bot.settings import PROJECT_CONFIG, Settings
from bot.store import Store
from bot.store.message_refs import MessageRefs
from rigs.fakes.slack_api import FakeSlack
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.adapters import both_adapters
from tests.support.board import (  # noqa: F401 (fixtures)
    pinning_notifier,
)
from tests.support.cards import (
    card,
)
from tests.support.delivery import (
    GROUP,
)
from tests.support.fake_time import (
    FakeTime,
)

SLACK_CONTROL = "C0CONTROL"


async def until(cond, tries: int = 500) -> None:  # type: ignore[no-untyped-def]
    """Let the workers run (they talk to Redis) until `cond` holds."""
    for _ in range(tries):
        if cond():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


async def burst(n, time: FakeTime, first: int, count: int) -> None:  # type: ignore[no-untyped-def]
    await n.send([card(first + k, sev=4 if k == 3 else 5 if k == 7 else 2)
                  for k in range(count)])
    await n.drain()


async def flashpoint(store: Store, time: FakeTime):  # type: ignore[no-untyped-def]
    """A pin-capable notifier whose group has spent its minute, then 12 new incidents."""
    n, sink = pinning_notifier(store, time)
    for k in range(20):  # the group's minute is spent: anything new must wait
        await n.send([Outbound("control", Reply(f"earlier {k}"))])
    await n.drain()
    await burst(n, time, 100, 12)
    return n, sink


async def test_a_flashpoint_gets_one_pinned_board_naming_every_open_incident(store: Store):
    time = FakeTime()
    n, sink = await flashpoint(store, time)
    board = sink.board()
    assert board.startswith("📋 Live board")
    assert all(f"INC-{100 + k}" in board for k in range(12))
    rows = board.splitlines()[2:]
    assert "INC-107" in rows[0] and "INC-103" in rows[1]  # worst first, then oldest
    assert "12 open (s5: 1, s4: 1, s2: 10)" in board
    assert sum(op == "pin" for _, op, _, _ in sink.log) == 1
    # the digest naming each and the actionable cards stay
    assert any(x.startswith("12 new incidents") for x in sink.sent())
    assert {x.splitlines()[0] for x in sink.sent()} >= {"INC-107 Missile", "INC-103 Missile"}
    # its id is in the store: another replica (or a restart) edits the same board
    refs = MessageRefs(store.gateway)
    assert await refs.message_ref("fx", "telegram", GROUP, boards.REF) == sink.pinned[-1]
    await n.close()


async def test_a_busy_spell_is_digested_without_a_board(store: Store):
    # a few new incidents at a time while the group's minute is spent (a card every 2 s is
    # 30 a minute): small digests, each slot a card's; no board and no pin take slots
    time = FakeTime()
    n, sink = pinning_notifier(store, time)
    for k in range(20):
        await n.send([Outbound("control", Reply(f"earlier {k}"))])
    await n.drain()
    await burst(n, time, 100, boards.BURST_FROM - 1)
    assert any(x.startswith(f"{boards.BURST_FROM - 1} new incidents") for x in sink.sent())
    assert not sink.pinned and not any(x.startswith("📋") for x in sink.sent())
    await n.close()


async def test_a_restarted_replica_edits_the_same_board(store: Store):
    time = FakeTime()
    n, sink = await flashpoint(store, time)
    board_id = sink.pinned[-1]
    await n.close()  # the process dies; its board stays pinned in the chat
    again, sink2 = await flashpoint(store, time)  # a new process, the burst goes on
    boards_sent = [x for x in sink2.sent() if x.startswith("📋")]
    assert boards_sent == []  # no second board ...
    assert sink2.texts[board_id].startswith("📋 Live board")  # ... the same one, edited
    await again.close()


async def test_board_edits_stay_within_budget_and_show_only_the_latest_state(store: Store):
    time = FakeTime()
    n, sink = await flashpoint(store, time)
    start = time.now
    for status in ("Acknowledged", "Dispatched", "On scene"):  # three quick changes
        await n.send([card(101, status=status)])
    await burst(n, time, 200, 12)  # the burst goes on
    edits = [t for t, op, _, x in sink.log if op == "edit" and x.startswith("📋 Live board")]
    gap = boards.EDIT_EVERY_SLOTS * n.limiter.interval("telegram", GROUP)
    assert edits and all(b - a >= gap - 1e-6 for a, b in zip(edits, edits[1:], strict=False))
    assert edits[0] >= start
    board = sink.board()
    assert "INC-101 Missile · Gate 101 · s2 · On scene" in board  # only the latest state
    assert "Acknowledged" not in board and "INC-211" in board
    # every send, edit and pin to the group, counted together, keeps 20 per minute
    acts = sorted(t for t, op, _, _ in sink.log if op in ("send", "edit", "pin", "unpin"))
    assert all(sum(1 for u in acts if t <= u < t + 60 - 1e-6) <= 20 for t in acts)
    await n.close()


async def test_the_board_ends_and_is_unpinned_when_the_flashpoint_is_over(store: Store):
    time = FakeTime()
    n, sink = await flashpoint(store, time)
    n.wall = lambda: datetime(2026, 12, 2, 21, 47)
    board_id = sink.pinned[-1]
    await n.send([Outbound("control", Reply("later"))])  # quiet: a card at a time again
    await n.drain()
    await time.sleep(boards.QUIET_S - 1)
    n.poke()
    await n.drain()
    assert sink.pinned  # not yet: the burst may be back
    await time.sleep(1)
    n.poke()
    await until(lambda: not sink.pinned)
    assert sink.texts[board_id].startswith("📋 Board (no longer live)\n"
                                           "Flashpoint over at 21:47 — board no longer live")
    assert await MessageRefs(store.gateway).message_ref("fx", "telegram", GROUP, boards.REF) is None
    await n.close()


def test_a_long_board_lists_the_worst_and_counts_the_rest():
    b = boards.Board()
    for k in range(40):
        b.note(card(k, sev=5 if k == 39 else 2), float(k))
    closed = card(3, status="Closed")
    b.note(replace(closed, reply=replace(closed.reply, title="INC-3 Missile (closed)")), 99.0)
    text = b.render("21:47", just_in=["INC-39"]).text.splitlines()
    assert text[0] == "39 open (s5: 1, s2: 38) · updated 21:47"
    assert text[1] == "Just in: INC-39"
    assert text[2].startswith("INC-39 Missile") and text[3].startswith("INC-0 Missile")
    assert text[-1] == f"… {39 - boards.MAX_ROWS} more"
    assert "INC-3 " not in "\n".join(text)


async def test_a_quiet_night_has_no_board(store: Store):
    time = FakeTime()
    n, sink = pinning_notifier(store, time)
    for k in range(1, 6):
        await n.send([card(k)])
        await n.drain()
        await time.sleep(30)
    await n.send([card(1, status="Acknowledged")])
    await n.drain()
    assert [op for _, op, _, _ in sink.log] == ["send"] * 5 + ["edit"]
    assert not sink.pinned
    await n.close()


# ---------------------------------------------------------------- through PTB and Bolt
@pytest_asyncio.fixture
async def limited(core: Core, settings: Settings
                  ) -> AsyncIterator[tuple[FakeTelegram, FakeSlack]]:
    """Both real adapters on the core, against fakes that answer 429 when a limit breaks."""
    tg, slack = FakeTelegram(enforce_limits=True), FakeSlack(enforce_limits=True)
    async with both_adapters(core, settings, tg, slack):
        yield tg, slack


PLACES = ["stb_walkway", "north_stand", "east_stand", "south_stand", "west_stand"]
TYPES = ["missile", "pyro", "medical", "disorder"]


async def report(core: Core, k: int) -> str:
    core.clock.advance(timedelta(minutes=11))  # past the merge window: a new incident each
    r = await core.handle(Command(
        platform="console", chat="steward", user="steward", dedupe_key=f"board:{k}",
        text=f"/incident {TYPES[k % 4]} @{PLACES[k % 5]} s{4 if k == 3 else 2} board {k}",
        reply_via=ReplyVia()))
    assert r is not None and r.reply.ok, r.reply.text if r else None
    m = re.search(r"INC-\d+", r.reply.title + r.reply.text)
    assert m, r.reply.text
    return m.group(0)


async def test_a_burst_pins_a_board_on_both_platforms_inside_the_limits(core: Core, limited):
    tg, slack = limited
    ids = [await report(core, k) for k in range(12)]

    def tg_board() -> str:
        pins = tg.pinned.get(int(GROUP), [])
        return tg.messages[(int(GROUP), pins[-1])]["text"] if pins else ""

    def slack_board() -> str:
        pins = slack.pins.get(SLACK_CONTROL, [])
        return json.dumps(slack.messages[(SLACK_CONTROL, pins[-1])]) if pins else ""

    await tg.wait_for(lambda _: all(i in tg_board() for i in ids), timeout=30)
    await slack.wait_for(lambda: all(i in slack_board() for i in ids), timeout=30)
    await core.notifier.drain()
    assert "Live board" in tg_board() and "Live board" in slack_board()
    assert len(tg.calls_of("pinChatMessage")) == 1 and len(slack.of("pins.add")) == 1
    assert any("12 new incidents" in str(c.params.get("text")) or
               "new incidents" in str(c.params.get("text"))
               for c in tg.calls_of("sendMessage"))
    assert tg.too_many == 0 and slack.too_many == 0


async def test_a_quiet_night_pins_nothing_through_the_adapters(core: Core, limited):
    tg, slack = limited
    first = await report(core, 0)
    await core.notifier.drain()
    await report(core, 1)
    await core.notifier.drain()
    assert not tg.calls_of("pinChatMessage") and not slack.of("pins.add")
    cards = [c for c in tg.calls_of("sendMessage") if c.params.get("chat_id") == int(GROUP)]
    assert len(cards) == 2 and first in str(cards[0].params["text"])
    assert not any("new incidents" in str(c.params.get("text")) for c in cards)
    assert tg.too_many == 0 and slack.too_many == 0


async def test_the_final_board_says_which_incidents_have_cards_and_where_the_rest_are(
        store: Store):
    time = FakeTime()
    n, sink = await flashpoint(store, time)
    n.wall = lambda: datetime(2026, 12, 2, 21, 47)
    board_id = sink.pinned[-1]
    await time.sleep(boards.QUIET_S)
    n.poke()
    await until(lambda: not sink.pinned)
    final = sink.texts[board_id]
    # severity 4+ got a card each; the ten below severity 4 were only ever in the digest
    assert "see their cards" not in final
    assert "12 incidents still open." in final
    assert "With a card of their own above: INC-107, INC-103." in final
    assert "The other 10 got no card of their own (below severity 4): they are named in the " \
           "digests above and listed in the web view (/web)." in final
    cards = {x.splitlines()[0] for x in sink.sent()}
    assert "INC-107 Missile" in cards and "INC-100 Missile" not in cards
    await n.close()


MANIFEST = yaml.safe_load((PROJECT_CONFIG / "slack_manifest.yaml").read_text())
APP_SCOPES = set(MANIFEST["oauth_config"]["scopes"]["bot"])


async def test_the_manifest_scopes_let_the_board_be_pinned(core: Core, settings: Settings):
    """A Slack token with exactly the manifest's scopes pins the board (pins:write)."""
    tg, slack = FakeTelegram(enforce_limits=True), FakeSlack(enforce_limits=True,
                                                             scopes=APP_SCOPES)
    async with both_adapters(core, settings, tg, slack):
        ids = [await report(core, k) for k in range(12)]
        await slack.wait_for(lambda: slack.pins.get(SLACK_CONTROL), timeout=30)
        await core.notifier.drain()
    assert ids and not [c for c in slack.calls if not c.ok]


async def test_a_missing_slack_scope_is_one_warning_shown_in_delivery_health(
        core: Core, settings: Settings, caplog: pytest.LogCaptureFixture):
    """Without pins:write the board works unpinned: one warning line (no traceback), and
    the delivery health on /status and the Slack Home tab says what is off and why."""
    gc.collect()  # what earlier tests left pending is destroyed now, not during this one
    caplog.clear()
    caplog.set_level(logging.INFO)
    tg = FakeTelegram(enforce_limits=True)
    slack = FakeSlack(enforce_limits=True, scopes=APP_SCOPES - {"pins:write"})

    async def delivery_lines(_fx: object) -> list[str]:  # as bot.runtime wires it
        return status_lines(core.notifier)
    core.status_lines.append(delivery_lines)
    async with both_adapters(core, settings, tg, slack) as slack_adapter:
        ids = [await report(core, k) for k in range(12)]

        def slack_board() -> str:
            return " ".join(json.dumps(m) for (c, _), m in slack.messages.items()
                            if c == SLACK_CONTROL and "Live board" in json.dumps(m))

        await slack.wait_for(lambda: all(i in slack_board() for i in ids), timeout=30)
        await slack.wait_for(lambda: slack.of("pins.add"), timeout=30)
        await tg.wait_for(lambda _: tg.pinned.get(int(GROUP)), timeout=30)
        await core.notifier.drain()
        assert slack.of("pins.add")[0].ok is False and not slack.pins.get(SLACK_CONTROL)
        line = (f"Delivery slack {SLACK_CONTROL}: the flashpoint board is not pinned: "
                "the Slack app lacks the pins:write scope")
        status = await core.handle(Command("console", "c", "police_commander", "/status",
                                           "scope-status"))
        assert status is not None and line in status.reply.text
        await slack_adapter.home.publish("U0CONTROL1")
        [home] = slack.of("views.publish")
        assert line in json.dumps(home.params["view"], ensure_ascii=False)
    records = [r for r in caplog.records if r.levelno >= logging.WARNING
               and "pins:write" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    assert not any(r.exc_info for r in records)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
