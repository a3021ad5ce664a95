# ruff: noqa: F811  (pytest fixtures imported from test_telegram_adapter)
"""Real-world Telegram behaviour (issue #14): group upgrades, every media kind, other bots'
commands, unreadable updates, forged callback data, anonymous admins, edits.

Every update below has the shape of the Bot API objects named in each docstring
(https://core.telegram.org/bots/api), sent through real python-telegram-bot over HTTP to the
fake Bot API in rigs/fakes/telegram_api.py.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from bot.adapters.telegram.polling import ALLOWED_UPDATES
from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.adapters.telegram.webhook import SECRET_HEADER
from bot.core.dispatch import Core
from bot.domain.messages import Command
from bot.store.chat_moves import ChatMoves
from rigs.fakes.telegram_api import BOT_USERNAME, FakeTelegram
from tests.support.telegram import (  # noqa: F401  (fixtures)
    CONTROL,
    SECRET,
    STEWARD,
    STRANGER,
    SUPERVISOR,
    Feed,
    fake,
    hook,
    incidents,
    join_supervisor,
    polling,
    pressed,
    sends_to,
    sent_message,
)

SUPERGROUP = -1002000000001  # the control group's id after Telegram upgraded it
ANON_ADMIN_BOT = {"id": 1087968824, "is_bot": True, "first_name": "Group",
                  "username": "GroupAnonymousBot"}  # what Telegram puts in `from`


def with_content(fake: FakeTelegram, user: int, chat: int | None = None,
                 **content: Any) -> dict[str, Any]:
    """An Update whose Message carries the given Bot API content fields."""
    update = fake.message_update(user, chat_id=chat)
    update["message"].update(content)
    return update


async def status_text(core: Core) -> str:
    r = await core.handle(Command("console", "c", "police_commander", "/status",
                                  f"k-{time.time_ns()}"))
    assert r is not None
    return r.reply.text


# ---------------------------------------------------------------- 1: group -> supergroup
async def test_upgraded_control_group_follows_the_new_id(polling: TelegramAdapter,
                                                         fake: FakeTelegram,
                                                         core: Core) -> None:
    """The old id answers 400 with ResponseParameters.migrate_to_chat_id (Bot API
    "ResponseParameters"; PTB raises telegram.error.ChatMigrated): the card goes to the
    supergroup, the live card is still edited in place there, control is told once, the
    override is in Redis and in /status."""
    feed = Feed(fake)
    await join_supervisor(core, fake, feed)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    card = sent_message(fake, CONTROL, "INC-1")
    await polling.drain()
    fake.migrate(CONTROL, SUPERGROUP)

    await feed(fake.message_update(STEWARD, "/incident pyro @stb_walkway s2 flare"))
    await fake.wait_for(sends_to(SUPERGROUP, "INC-2"))
    await fake.wait_for(sends_to(SUPERGROUP, "supergroup"))  # control told
    # later changes of INC-1 edit the same card, now in the supergroup
    await feed(fake.callback_update(SUPERVISOR, fake.message(SUPERGROUP, card["message_id"]),
                                    pressed(card, "/ack 1")))
    await fake.wait_for(lambda c: [x for x in c if x.ok and x.method == "editMessageText"
                                   and x.params["chat_id"] == SUPERGROUP
                                   and x.params["message_id"] == card["message_id"]])
    await feed(fake.message_update(STEWARD, "/incident drone @stb_walkway s2"))
    await fake.wait_for(sends_to(SUPERGROUP, "INC-3"))
    await polling.drain()
    await core.notifier.drain()
    failed = [c for c in fake.calls if not c.ok]
    assert len(failed) == 1, fake.describe()  # one refused send, then never the old id again
    assert len(sends_to(SUPERGROUP, "supergroup")(fake.calls)) == 1
    assert await ChatMoves(core.store.gateway).resolve("telegram", str(CONTROL)) == str(SUPERGROUP)
    assert f"moved to {SUPERGROUP}" in await status_text(core)


async def test_migration_service_messages_move_the_chat_before_any_send(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    """Bot API "Message".migrate_to_chat_id (in the old group) and migrate_from_chat_id (in
    the new supergroup) arrive before anything is sent: nothing goes to the old id."""
    feed = Feed(fake)
    fake.migrate(CONTROL, SUPERGROUP)
    for update in fake.migration_updates(CONTROL, SUPERGROUP, by=SUPERVISOR):
        await feed(update)
    await fake.wait_for(sends_to(SUPERGROUP, "supergroup"))
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(SUPERGROUP, "INC-1"))
    await polling.drain()
    assert [c for c in fake.calls if not c.ok] == []
    assert len(sends_to(SUPERGROUP, "supergroup")(fake.calls)) == 1  # told once for two


# ---------------------------------------------------------------- 2: every media kind
MEDIA = [
    # (Bot API Message field, its object, what the log line says)
    ("voice", {"file_id": "AwACAgQAAxkBvoice", "file_unique_id": "AgADvoice", "duration": 12,
               "mime_type": "audio/ogg", "file_size": 20480}, "🎤 voice note 0:12"),
    ("audio", {"file_id": "CQACAgQAAxkBaudio", "file_unique_id": "AgADaudio", "duration": 95,
               "performer": "Steward", "title": "chant", "mime_type": "audio/mpeg"},
     "🎵 audio 1:35"),
    ("video", {"file_id": "BAACAgQAAxkBvideo", "file_unique_id": "AgADvideo", "width": 1280,
               "height": 720, "duration": 7, "mime_type": "video/mp4"}, "🎥 video 0:07"),
    ("video_note", {"file_id": "DQACAgQAAxkBnote", "file_unique_id": "AgADnote", "length": 240,
                    "duration": 5}, "📹 video message 0:05"),
    ("sticker", {"file_id": "CAACAgIAAxkBsticker", "file_unique_id": "AgADsticker",
                 "type": "regular", "width": 512, "height": 512, "is_animated": False,
                 "is_video": False, "emoji": "🔥", "set_name": "fire"}, "🏷 sticker 🔥"),
    ("contact", {"phone_number": "+447700900123", "first_name": "Gate", "last_name": "Lead",
                 "user_id": 555}, "👤 contact +447700900123"),
]


@pytest.mark.parametrize("field,obj,line", MEDIA, ids=[m[0] for m in MEDIA])
async def test_every_media_kind_is_kept_and_shown_to_control(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core, field: str,
        obj: dict[str, Any], line: str) -> None:
    """A Bot API "Message" with voice/audio/video/video_note/sticker/contact after a report
    is evidence (file id, duration, MIME type), never an empty note; control gets a line
    saying what it is and the media itself again by file id."""
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await feed(with_content(fake, STEWARD, **{field: obj}))
    answer = (await fake.wait_for(sends_to(STEWARD, "Added to INC-1")))[0]
    assert line in answer.params["text"]
    await fake.wait_for(lambda c: [x for x in c if x.ok and x.params.get("chat_id") == CONTROL
                                   and line in str(x.params.get("text") or
                                                   x.params.get("caption"))])
    fx = await core.active_fixture()
    [ev] = [e for e in await core.store.events(fx.id) if e.kind == "incident.evidence"]
    kept = ev.data["evidence"][0]
    assert kept["what"] == line
    if "file_id" in obj:
        assert kept["file_id"] == obj["file_id"]
        assert kept.get("duration", 0) == obj.get("duration", 0)
        assert kept.get("mime_type", "") == obj.get("mime_type", "")
        method = {"video_note": "sendVideoNote"}.get(field, "send" + field.capitalize())
        [again] = await fake.wait_for(lambda c: [x for x in c if x.ok and x.method == method])
        assert again.params[field] == obj["file_id"] and again.params["chat_id"] == CONTROL


async def test_animation_and_venue_are_kept_once(polling: TelegramAdapter, fake: FakeTelegram,
                                                 core: Core) -> None:
    """An animation arrives with a document too, a venue with a location too (Bot API
    "Message".animation / .venue): each is one evidence item, described as itself (a venue
    is a location with its name)."""
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident pyro @stb_walkway s2 flare"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    gif = {"file_id": "CgACAgQAAxkBanim", "file_unique_id": "AgADanim", "width": 320,
           "height": 240, "duration": 3, "file_name": "flare.mp4", "mime_type": "video/mp4"}
    await feed(with_content(fake, STEWARD, animation=gif, document={
        "file_id": "CgACAgQAAxkBanim", "file_unique_id": "AgADanim",
        "file_name": "flare.mp4", "mime_type": "video/mp4"}))
    await fake.wait_for(sends_to(STEWARD, "🎞 animation 0:03"))
    point = {"latitude": 51.5383, "longitude": -0.0166}
    await feed(with_content(fake, STEWARD, location=point, venue={
        "location": point, "title": "Gate F", "address": "Stratford, London"}))
    await fake.wait_for(sends_to(STEWARD, "📍 location Gate F, Stratford"))
    fx = await core.active_fixture()
    kept = [e.data["evidence"] for e in await core.store.events(fx.id)
            if e.kind == "incident.evidence"]
    assert [[x["kind"] for x in ev] for ev in kept] == [["animation"], ["location"]]
    assert kept[1][0]["detail"] == "Gate F, Stratford, London"


@pytest.mark.parametrize("field,obj", [
    ("poll", {"id": "5420", "question": "Which gate?", "options": [
        {"persistent_id": "o1", "text": "A", "voter_count": 0},
        {"persistent_id": "o2", "text": "B", "voter_count": 0}],
        "total_voter_count": 0, "is_closed": False, "is_anonymous": True, "type": "regular",
        "allows_multiple_answers": False, "allows_revoting": False,
              "members_only": False}),
    ("dice", {"emoji": "🎲", "value": 4}),
], ids=["poll", "dice"])
async def test_what_cannot_be_kept_is_refused_politely(polling: TelegramAdapter,
                                                       fake: FakeTelegram, core: Core,
                                                       field: str, obj: dict) -> None:
    """Bot API "Poll" and "Dice" messages: a one-line refusal, nothing added to the log."""
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await feed(with_content(fake, STEWARD, **{field: obj}))
    await fake.wait_for(sends_to(STEWARD, "can't keep"))
    fx = await core.active_fixture()
    assert [e.kind for e in await core.store.events(fx.id)
            if e.kind.startswith("incident.") and e.kind != "incident.reported"] == []


# ---------------------------------------------------------------- 3: other bots' commands
async def test_commands_for_other_bots_are_ignored(polling: TelegramAdapter,
                                                   fake: FakeTelegram, core: Core) -> None:
    """A "Message" with a bot_command entity "/resolve@x 3" in a shared group: the suffix is
    compared with getMe's username; only our own suffix is run."""
    feed = Feed(fake)
    await join_supervisor(core, fake, feed)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    await feed(fake.message_update(SUPERVISOR, "/resolve@another_bot 1", chat_id=CONTROL))
    await feed(fake.message_update(SUPERVISOR, "/whoami@another_bot", chat_id=CONTROL))
    await feed(fake.message_update(SUPERVISOR, f"/whoami@{BOT_USERNAME.upper()}",
                                   chat_id=CONTROL))
    await fake.wait_for(sends_to(CONTROL, "Supervisor"))
    await polling.drain()
    assert len(sends_to(CONTROL, "Supervisor")(fake.calls)) == 1
    fx = await core.active_fixture()
    assert not [e for e in await core.store.events(fx.id) if e.kind == "incident.closed"]


# ---------------------------------------------------------------- 4: unreadable updates
def promoted_to_admin(**rights: bool) -> dict[str, Any]:
    """A "ChatMemberUpdated": the bot made an administrator of the control room, with the
    usual rights and `rights` besides."""
    bot = {"id": 123456789, "is_bot": True, "first_name": "Matchday",
           "username": BOT_USERNAME}
    return {
        "chat": {"id": CONTROL, "type": "supergroup", "title": "Control room"},
        "from": {"id": SUPERVISOR, "is_bot": False, "first_name": "Sam"},
        "date": int(time.time()),
        "old_chat_member": {"user": bot, "status": "member"},
        "new_chat_member": {"user": bot, "status": "administrator", "can_be_edited": False,
                            "is_anonymous": False, "can_manage_chat": True,
                            "can_delete_messages": True, "can_manage_video_chats": True,
                            "can_restrict_members": True, "can_promote_members": False,
                            "can_change_info": True, "can_invite_users": True,
                            "can_pin_messages": True, **rights}}


async def test_unreadable_update_logged_once_and_answered_200(
        hook: tuple[TelegramAdapter, TestClient], fake: FakeTelegram,
        caplog: pytest.LogCaptureFixture) -> None:
    """A real "promoted to admin" update (Bot API "ChatMemberUpdated" with a
    "ChatMemberAdministrator" recorded before the story rights were sent, carrying a newer
    field) that this PTB cannot build: 200 (no redelivery loop) and one log line."""
    _, client = hook
    update = {"update_id": 880001,
              "my_chat_member": promoted_to_admin(can_manage_direct_messages=True)}
    caplog.set_level(logging.WARNING, logger="bot.adapters.telegram.telegram_adapter")
    for _ in range(2):  # had it been refused, Telegram would send it again
        resp = await client.post("/telegram", json=update, headers={SECRET_HEADER: SECRET})
        assert resp.status == 200
    lines = [r.getMessage() for r in caplog.records if "880001" in r.getMessage()]
    assert len(lines) == 1 and "my_chat_member" in lines[0], lines


# ---------------------------------------------------------------- 5: forged callback data
async def test_callback_data_the_bot_did_not_issue_is_refused(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    """A "CallbackQuery" whose data is "some_data" or a bare command (the Bot API warns a
    client can send any data): a polite toast, nothing written."""
    feed = Feed(fake)
    await join_supervisor(core, fake, feed)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    card = sent_message(fake, CONTROL, "INC-1")
    for data in ("some_data", "/resolve 1", "AAAAAA/resolve 1"):
        await feed(fake.callback_update(SUPERVISOR, card, data))
    toasts = await fake.wait_for(lambda c: len([x for x in c if x.method ==
                                                "answerCallbackQuery"]) == 3 and
                                 [x for x in c if x.method == "answerCallbackQuery"])
    assert all("isn't one I can use" in t.params["text"] for t in toasts)
    fx = await core.active_fixture()
    assert [e.kind for e in await core.store.events(fx.id)] .count("incident.closed") == 0
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "reported"


# ---------------------------------------------------------------- 6: anonymous admins
async def test_anonymous_admin_is_told_why_nothing_happens(polling: TelegramAdapter,
                                                           fake: FakeTelegram) -> None:
    """A "Message" from an anonymous group admin: `from` is @GroupAnonymousBot and
    `sender_chat` is the group itself."""
    update = fake.message_update(STRANGER, "/status", chat_id=CONTROL)
    update["message"]["from"] = ANON_ADMIN_BOT
    update["message"]["sender_chat"] = fake.chat(CONTROL)
    await Feed(fake)(update)
    answer = (await fake.wait_for(sends_to(CONTROL, "can't tell who is asking")))[0]
    assert "Remain anonymous" in answer.params["text"]


# ---------------------------------------------------------------- 9: edits
async def test_edited_report_is_answered_with_how_to_correct(polling: TelegramAdapter,
                                                             fake: FakeTelegram,
                                                             core: Core) -> None:
    """Update.edited_message (now in allowed_updates) of a report: the log keeps what was
    first sent, and the steward is told how to correct it."""
    feed = Feed(fake)
    first = fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles")
    await feed(first)
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    assert "edited_message" in ALLOWED_UPDATES
    assert "edited_message" in fake.calls_of("getUpdates")[0].params["allowed_updates"]
    edited = dict(first["message"], text="/incident missile @stb_walkway s4 coins",
                  edit_date=int(time.time()))
    await feed({"update_id": fake.next_update_id(), "edited_message": edited})
    await fake.wait_for(sends_to(STEWARD, "Edits aren't taken"))
    [inc] = await incidents(core)
    assert inc["severity"] == 3 and inc["description"] == "bottles"


async def test_unreadable_update_does_not_stall_polling(polling: TelegramAdapter,
                                                       fake: FakeTelegram) -> None:
    """The same "ChatMemberUpdated" by getUpdates: python-telegram-bot fails the whole batch
    on it and would fetch it forever; it is skipped and the next update is answered."""
    await fake.push({"my_chat_member": promoted_to_admin()})
    await fake.push(fake.message_update(STEWARD, "/whoami"))
    await fake.wait_for(sends_to(STEWARD, "Steward"))


async def test_shared_venue_answers_the_where_step(polling: TelegramAdapter,
                                                   fake: FakeTelegram, core: Core) -> None:
    """A Bot API "Venue" (a location with a title) sent at the guided form's Where? step
    places the report, like a plain location."""
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident"))
    await fake.wait_for(sends_to(STEWARD, "What is happening?"))
    prompt = sent_message(fake, STEWARD, "What is happening?")
    tap = next(b["callback_data"] for row in prompt["reply_markup"]["inline_keyboard"]
               for b in row if b["callback_data"].endswith(" type medical"))
    await feed(fake.callback_update(STEWARD, prompt, tap))
    await fake.wait_for(lambda c: [x for x in c if x.method == "editMessageText"
                                   and "Where?" in str(x.params.get("text"))])
    point = {"latitude": 51.5383, "longitude": -0.0166}
    await feed(with_content(fake, STEWARD, location=point, venue={
        "location": point, "title": "Gate F", "address": "Stratford, London"}))
    await fake.wait_for(sends_to(STEWARD, "How serious?"))


async def test_live_location_moves_update_the_evidence_silently(polling: TelegramAdapter,
                                                                fake: FakeTelegram,
                                                                core: Core) -> None:
    """A live location shared after a report is evidence; each new position Telegram sends
    (an edited_message) updates its latest position and time and is appended to the
    incident's log, with no answer to the steward and nothing new for control."""
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    shared = fake.message_update(STEWARD, location=(51.5383, -0.0166), live_period=900)
    await feed(shared)
    await fake.wait_for(sends_to(STEWARD, "Added to INC-1"))
    await fake.wait_for(sends_to(CONTROL, "📍 location"))
    await polling.drain()
    before = len(fake.calls)
    t0 = int(time.time())
    for k in range(1, 4):
        await feed(fake.location_moved(shared, 51.5383 + k / 1000, -0.0166, at=t0 + 10 * k))
    await feed(fake.message_update(STEWARD, "/whoami"))  # after the moves, in order
    await fake.wait_for(sends_to(STEWARD, "Steward"))
    await polling.drain()
    said = [c for c in fake.calls[before:] if c.method != "getUpdates"]
    assert [c.method for c in said] == ["sendMessage"], fake.describe()
    assert "Edits aren't taken" not in fake.describe(100)
    fx = await core.active_fixture()
    key = f"telegram:{STEWARD}:{shared['message']['message_id']}"
    kept = await core.facades.reports.live_location(fx.id, key)
    assert kept is not None and kept["n"] == 1
    assert (kept["lat"], kept["lon"]) == (51.5413, -0.0166)
    assert kept["at"].startswith(time.strftime("%Y-%m-%dT", time.gmtime(t0 + 30)))
    events = await core.store.events(fx.id)
    moves = [e for e in events if e.kind == "incident.live_location"]
    assert [m.data["lat"] for m in moves] == [51.5393, 51.5403, 51.5413]
    assert all(m.data["id"] == "INC-1" and m.data["live"] == key for m in moves)
    [evidence] = [e for e in events if e.kind == "incident.evidence"]
    assert evidence.data["evidence"][0]["live"] == key
    inc = await core.store.incident(fx.id, 1)
    assert inc is not None and inc.evidence == 1  # a move is not new evidence
