# ruff: noqa: F811  (pytest fixtures imported from tests.support)
"""The Telegram adapter through real python-telegram-bot over real HTTP against a fake Bot API."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.adapters.telegram.webhook import SECRET_HEADER
from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.messages import Reply
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.web.host import application
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401 (fixtures)
    CONTROL,
    SECRET,
    STEWARD,
    STRANGER,
    SUPERVISOR,
    Feed,
    buttons,
    edits_of,
    fake,
    hook,
    incidents,
    join_supervisor,
    polling,
    pressed,
    sends_to,
    sent_message,
    tg_settings,
)

# ---------------------------------------------------------------- helpers


async def three_tap_report(fake: FakeTelegram, feed: Feed) -> dict[str, Any]:
    """/incident, then tap type, location and severity; returns the final form message."""
    await feed(fake.message_update(STEWARD, "/incident"))
    first = (await fake.wait_for(lambda c: [x for x in sends_to(STEWARD)(c) if buttons(x)]))[0]
    types = buttons(first)
    assert any(b.endswith(" type missile") for b in types), types
    prompt = sent_message(fake, STEWARD, "What is happening?")
    mid = prompt["message_id"]
    tap = next(b for b in types if b.endswith(" type missile"))

    await feed(fake.callback_update(STEWARD, prompt, tap))
    step2 = (await fake.wait_for(edits_of(STEWARD, mid, "Where?")))[-1]
    locs = buttons(step2)
    assert locs[0].endswith(" loc gate_away"), locs  # the steward's own zone first
    assert "send your location" in step2.params["text"]  # from the attachment menu

    await feed(fake.callback_update(STEWARD, fake.message(STEWARD, mid), locs[0]))
    step3 = (await fake.wait_for(edits_of(STEWARD, mid, "How serious?")))[-1]
    sev3 = next(b for b in buttons(step3) if b.endswith(" sev 3"))

    await feed(fake.callback_update(STEWARD, fake.message(STEWARD, mid), sev3))
    await fake.wait_for(edits_of(STEWARD, mid, "Logged INC-1"))
    return fake.message(STEWARD, mid)


# ---------------------------------------------------------------- tests
async def test_menus_per_role(polling: TelegramAdapter, fake: FakeTelegram) -> None:
    assert polling.menus_task is not None
    await polling.menus_task  # members' menus are set beside the loop
    calls = fake.calls_of("setMyCommands")
    default = next(c for c in calls if c.params.get("scope", {}).get("type") == "default")
    assert {c["command"] for c in default.params["commands"]} == {"help", "join"}
    mine = next(c for c in calls if c.params.get("scope", {}).get("chat_id") == STEWARD)
    names = {c["command"] for c in mine.params["commands"]}
    assert "incident" in names and "arrest" not in names and "form" not in names


async def test_three_tap_report_by_polling(polling: TelegramAdapter, fake: FakeTelegram,
                                           core: Core) -> None:
    final = await three_tap_report(fake, Feed(fake))
    assert "reply_markup" not in final  # the form's buttons are gone once logged
    card = (await fake.wait_for(sends_to(CONTROL, "INC-1")))[0]
    assert "Acknowledge" in json.dumps(card.params["reply_markup"])
    assert card.params["parse_mode"] == "HTML"
    [inc] = await incidents(core)
    assert (inc["type"], inc["location"], inc["severity"]) == ("missile", "gate_away", 3)
    answered = fake.calls_of("answerCallbackQuery")
    assert len(answered) == 3


async def test_three_tap_report_by_webhook(hook: tuple[TelegramAdapter, TestClient],
                                           fake: FakeTelegram, core: Core) -> None:
    _, client = hook
    assert fake.webhook["url"] == "https://bot.example.test/telegram"
    assert fake.webhook["secret_token"] == SECRET
    await three_tap_report(fake, Feed(fake, client))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    assert len(await incidents(core)) == 1


async def test_webhook_refuses_wrong_or_missing_secret(
        hook: tuple[TelegramAdapter, TestClient], fake: FakeTelegram, core: Core) -> None:
    _, client = hook
    update = fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles")
    for headers in ({SECRET_HEADER: "wrong"}, {}):
        resp = await client.post("/telegram", json=update, headers=headers)
        assert resp.status == 403
    assert await incidents(core) == []
    assert fake.calls_of("sendMessage") == []


async def test_photo_reply_attaches_evidence(polling: TelegramAdapter, fake: FakeTelegram,
                                             core: Core) -> None:
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    card = sent_message(fake, CONTROL, "INC-1")
    confirmation = sent_message(fake, STEWARD, "Logged INC-1")
    await feed(fake.message_update(STEWARD, photo="AgACphoto1", caption="thrower, red coat",
                                   reply_to=confirmation))
    await fake.wait_for(sends_to(STEWARD, "Added to INC-1"))
    fx = await core.active_fixture()
    ev = [e for e in await core.store.events(fx.id) if e.kind == "incident.evidence"]
    assert ev and ev[0].data["evidence"][0]["file_id"] == "AgACphoto1"
    # the control card is edited in place to count the evidence; the photo goes under it,
    # one message with its evidence line as the caption
    await fake.wait_for(edits_of(CONTROL, card["message_id"], "1 evidence item"))
    [note] = await fake.wait_for(lambda c: [x for x in c if x.ok and x.method == "sendPhoto"
                                            and x.params.get("chat_id") == CONTROL])
    assert note.params["photo"] == "AgACphoto1"
    assert "Evidence on INC-1" in note.params["caption"] and "red coat" in note.params["caption"]
    assert note.params["reply_parameters"]["message_id"] == card["message_id"]
    assert not sends_to(CONTROL, "Evidence on INC-1")(fake.calls)


async def test_group_photo_reply_to_card(polling: TelegramAdapter, fake: FakeTelegram,
                                         core: Core) -> None:
    feed = Feed(fake)
    await join_supervisor(core, fake, feed)
    await feed(fake.message_update(STEWARD, "/incident pyro @stb_walkway s2 flare"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    card = sent_message(fake, CONTROL, "INC-1")
    # chatter in the group is ignored; a photo replying to the card is evidence
    await feed(fake.message_update(SUPERVISOR, "nice weather", chat_id=CONTROL))
    await feed(fake.message_update(SUPERVISOR, photo="AgACgroup", chat_id=CONTROL,
                                   reply_to=card))
    # the group's 1 message/s: the photo again (its line the caption), the card's edit, this
    await fake.wait_for(sends_to(CONTROL, "Added to INC-1"), timeout=10)
    assert not sends_to(CONTROL, "register")(fake.calls)


async def test_control_card_edited_on_ack_and_resolve(polling: TelegramAdapter,
                                                      fake: FakeTelegram, core: Core) -> None:
    feed = Feed(fake)
    await join_supervisor(core, fake, feed)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    card = sent_message(fake, CONTROL, "INC-1")
    mid = card["message_id"]

    await feed(fake.callback_update(SUPERVISOR, card, pressed(card, "/ack 1")))
    await fake.wait_for(edits_of(CONTROL, mid, "Acknowledged"))
    await fake.wait_for(sends_to(STEWARD, "acknowledged"))
    toast = (await fake.wait_for(lambda c: [x for x in c if x.method == "answerCallbackQuery"
                                            and x.params.get("text")]))[0]
    assert "INC-1" in toast.params["text"]

    await feed(fake.callback_update(SUPERVISOR, fake.message(CONTROL, mid),
                                    pressed(fake.message(CONTROL, mid), "/resolve 1")))
    await fake.wait_for(edits_of(CONTROL, mid, "(closed)"))
    await fake.wait_for(sends_to(STEWARD, "closed"))
    assert len(sends_to(CONTROL, "INC-1")(fake.calls)) == 1  # never a new card per change
    assert "reply_markup" not in fake.message(CONTROL, mid)  # no buttons on a closed card


async def test_stranger_refused(polling: TelegramAdapter, fake: FakeTelegram,
                                core: Core) -> None:
    feed = Feed(fake)
    await feed(fake.message_update(STRANGER, "/incident missile @stb_walkway s3"))
    await fake.wait_for(sends_to(STRANGER, "not registered"))
    await feed(fake.message_update(STRANGER, "/start"))  # first contact: help, with /join
    replies = await fake.wait_for(lambda c: len(sends_to(STRANGER)(c)) == 2
                                  and sends_to(STRANGER)(c))
    assert "/join" in replies[1].params["text"]
    assert await incidents(core) == []
    assert sends_to(CONTROL)(fake.calls) == []


async def test_same_update_twice_logged_once(polling: TelegramAdapter, fake: FakeTelegram,
                                             core: Core) -> None:
    update = fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles")
    await fake.push(update)
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await fake.push(update, redeliver=True)  # Telegram redelivers after a lost confirmation
    await fake.push(fake.message_update(STEWARD, "/whoami"))  # processed after the duplicate
    await fake.wait_for(sends_to(STEWARD, "Steward"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    assert len(await incidents(core)) == 1
    assert len(sends_to(STEWARD, "INC-1")(fake.calls)) == 1
    assert len(sends_to(CONTROL, "INC-1")(fake.calls)) == 1


async def test_two_replicas_same_webhook_update_logged_once(
        hook: tuple[TelegramAdapter, TestClient], fake: FakeTelegram, core: Core,
        settings: Settings) -> None:
    _, client = hook
    other_core = build_core(core.store, settings, core.clock, cache_ttl=0)
    other = telegram_for(other_core, tg_settings(settings, fake), webhook=True)
    await other.start()
    other_client = TestClient(TestServer(application(other.routes())))
    await other_client.start_server()
    try:
        update = fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles")
        await Feed(fake, client)(update)
        await Feed(fake, other_client)(update)  # the retry reaches the other replica
        await Feed(fake, other_client)(fake.message_update(STEWARD, "/whoami"))
        await fake.wait_for(sends_to(STEWARD, "Steward"))  # handled after the retry
        await fake.wait_for(sends_to(CONTROL, "INC-1"))
        await other.drain()
        assert len(await incidents(core)) == 1
        # Dropped by the shared (Redis) dedupe: not even an "Already logged" answer.
        assert len(sends_to(STEWARD, "INC-1")(fake.calls)) == 1  # "Logged INC-1" only
        assert len(sends_to(CONTROL, "INC-1")(fake.calls)) == 1
    finally:
        await other_client.close()
        await other.stop()
        await other_core.notifier.close()


async def test_429_mid_send_no_duplicate(polling: TelegramAdapter, fake: FakeTelegram,
                                         core: Core) -> None:
    await fake.push(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    card = sent_message(fake, CONTROL, "INC-1")
    fake.fail("sendMessage", times=1, retry_after=1)
    await fake.push(fake.message_update(STEWARD, "/incident pyro @stb_walkway s2 flare"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-2"))
    await fake.wait_for(sends_to(CONTROL, "INC-2"))
    await polling.drain()
    failed = [c for c in fake.calls if not c.ok]
    assert [c.method for c in failed] == ["sendMessage"]
    assert len(sends_to(STEWARD, "Logged INC-2")(fake.calls)) == 1
    assert len(sends_to(CONTROL, "INC-2")(fake.calls)) == 1
    assert len(await incidents(core)) == 2
    assert fake.message(CONTROL, card["message_id"])["text"].count("INC-1") == 1


async def test_expired_form_button(polling: TelegramAdapter, fake: FakeTelegram,
                                   core: Core) -> None:
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident"))
    await fake.wait_for(sends_to(STEWARD, "What is happening?"))
    old = sent_message(fake, STEWARD, "What is happening?")
    old_tap = buttons(fake.calls_of("sendMessage")[-1])[0]
    fx = await core.active_fixture()
    await core.facades.forms.drop_form(fx.id, f"telegram:{STEWARD}")  # as if the TTL ran out
    await feed(fake.callback_update(STEWARD, old, old_tap))
    await fake.wait_for(edits_of(STEWARD, old["message_id"], "expired"))
    answer = (await fake.wait_for(lambda c: [x for x in c if x.method == "answerCallbackQuery"
                                             and "expired" in str(x.params.get("text"))]))[0]
    assert answer.params["text"].startswith("This form has expired")
    assert await incidents(core) == []


async def test_free_text_escaped(polling: TelegramAdapter, fake: FakeTelegram,
                                 core: Core) -> None:
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 <b>& co"))
    card = (await fake.wait_for(sends_to(CONTROL, "INC-1")))[0]
    assert "&lt;b&gt;&amp; co" in card.params["text"]
    assert "<b>&" not in card.params["text"]
    await feed(fake.message_update(STEWARD, "more: <i>x</i> & <script>"))  # a /note
    await fake.wait_for(sends_to(STEWARD, "Added to INC-1"))
    line = (await fake.wait_for(sends_to(CONTROL, "&lt;script&gt;")))[0]
    assert "<i>" not in line.params["text"]


async def test_group_chatter_and_unknown_commands_ignored(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    feed = Feed(fake)
    await feed(fake.message_update(STRANGER, "anyone seen the coach?", chat_id=CONTROL))
    await feed(fake.message_update(STRANGER, "/weather", chat_id=CONTROL))
    await feed(fake.message_update(STEWARD, "/whoami"))
    await fake.wait_for(sends_to(STEWARD, "Steward"))
    assert sends_to(CONTROL)(fake.calls) == []


async def test_shared_location_answers_the_where_step(polling: TelegramAdapter,
                                                      fake: FakeTelegram, core: Core) -> None:
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident"))
    await fake.wait_for(sends_to(STEWARD, "What is happening?"))
    prompt = sent_message(fake, STEWARD, "What is happening?")
    tap = next(b for b in buttons(fake.sent_to(STEWARD)[0]) if b.endswith(" type medical"))
    await feed(fake.callback_update(STEWARD, prompt, tap))
    await fake.wait_for(edits_of(STEWARD, prompt["message_id"], "Where?"))
    await feed(fake.message_update(STEWARD, location=(51.5383, -0.0166)))  # the 📍 key
    step3 = (await fake.wait_for(sends_to(STEWARD, "How serious?")))[-1]
    sev = next(b for b in buttons(step3) if b.endswith(" sev 2"))
    await feed(fake.callback_update(STEWARD, sent_message(fake, STEWARD, "How serious?"), sev))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    fx = await core.active_fixture()
    [ev] = [e for e in await core.store.events(fx.id) if e.kind == "incident.reported"]
    assert ev.data["evidence"][0]["lat"] == 51.5383


async def test_only_the_lease_holder_polls_the_inbox(core: Core, settings: Settings,
                                                     fake: FakeTelegram) -> None:
    """A standby replica (start(poll=False)) fetches nothing; gaining the lease starts the
    inbox's getUpdates loop, losing it stops the loop while sending goes on."""
    a = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await a.start(poll=False)
    try:
        await fake.push(fake.message_update(STEWARD, "/help"))
        assert not [c for c in fake.calls if c.method == "getUpdates"]
        await a.start_polling()
        await fake.wait_for(sends_to(STEWARD))  # the queued update is fetched and answered
        await a.stop_polling()
        fetched = len([c for c in fake.calls if c.method == "getUpdates"])
        await fake.push(fake.message_update(STEWARD, "/help"))
        await a.sink.send(str(STEWARD), Reply("still sending"))
        assert sends_to(STEWARD, "still sending")(fake.calls)
        assert len([c for c in fake.calls if c.method == "getUpdates"]) == fetched
    finally:
        await a.stop()
