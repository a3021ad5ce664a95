"""A Telegram send a crash left in doubt (in-flight mark, no delivered mark) is looked up on
recovery by forwarding the ids above its recorded floor into the archive chat: found, it is
not sent again (and a card is still edited in place); not found, it is sent."""

from __future__ import annotations

from bot.core.dispatch import Core
from bot.delivery.durable import OutboxReader
from bot.domain.messages import Outbound, Reply
from bot.settings import Settings
from bot.store.outbox import Outbox
from rigs.fakes.telegram_api import BOT_ID, FakeTelegram
from tests.support.cards import card
from tests.support.control_group import ARCHIVE, GROUP, control_group
from tests.support.delivery import (
    durable,
)

STEWARD = 100000001
OTHER = 100000002


def logged(fx: str, n: int) -> Outbound:
    return Outbound(f"user:telegram:{STEWARD}", Reply(f"Logged INC-{n} <pyro> & smoke"),
                    fixture=fx)


async def test_a_telegram_send_in_doubt_is_found_by_forwarding_not_sent_twice(
        core: Core, settings: Settings, fake: FakeTelegram):
    async with control_group(core, settings, fake, ARCHIVE) as (adapter, fx, outbox):
        await outbox.add(fx, [card(51, fixture=fx), card(52, fixture=fx), logged(fx, 51)])
        (e51, o51), (e52, _), (er, reply) = await outbox.read(fx, "dead-replica", 10)
        # What the dead process knew: the last message in the group and in its private chats.
        group_floor = fake.message_update(STEWARD, "/status", chat_id=int(GROUP))["message"]
        dm_floor = fake.message_update(STEWARD, "/incident")["message"]
        await outbox.flying([(fx, e51), (fx, e52)], f"telegram:{GROUP}", group_floor["message_id"])
        await outbox.flying([(fx, er)], f"telegram:{STEWARD}", dm_floor["message_id"])
        # Others' messages take ids from the same sequence as the steward's private chat: at a
        # flashpoint dozens land between what the bot knew and its reply.
        for k in range(25):
            fake.message_update(OTHER + k, f"hello {k}")
        # Telegram took INC-51's card and the steward's reply, then the process died before
        # their answers were recorded; INC-52's card never reached Telegram.
        posted = await adapter.sink.send(GROUP, o51.reply)
        fake.message_update(OTHER, "hello again")
        await adapter.sink.send(str(STEWARD), reply.reply)

        reader = await durable(core)
        try:
            await found_once_and_edited_in_place(core, fake, reader, outbox, fx, posted)
        finally:
            await reader.stop()


async def found_once_and_edited_in_place(core: Core, fake: FakeTelegram, reader: OutboxReader,
                                         outbox: Outbox, fx: str, posted: str) -> None:
    await reader.drain()
    cards = [c.params["text"] for c in fake.sent_to(GROUP)]
    assert sum("INC-51" in t for t in cards) == 1  # found: not sent again
    assert sum("INC-52" in t for t in cards) == 1  # never arrived: sent now
    assert len(fake.sent_to(STEWARD)) == 1  # the steward is told once
    assert (await outbox.backlog(fx))[0] == 0
    forwards = fake.calls_of("forwardMessage")
    assert forwards and all(str(c.params["chat_id"]) == ARCHIVE for c in forwards)
    assert all(c.params["disable_notification"] for c in forwards)
    # The found card is the live message: its next state edits it in place.
    assert await core.facades.delivery.refs.message_ref(fx, "telegram", GROUP, "INC-51") == posted
    await core.notifier.send([card(51, fixture=fx, status="Acknowledged")])
    await reader.drain()
    [edit] = [c for c in fake.calls_of("editMessageText") if "INC-51" in c.params["text"]]
    assert str(edit.params["message_id"]) == posted and "Acknowledged" in edit.params["text"]
    assert sum("INC-51" in c.params["text"] for c in fake.sent_to(GROUP)) == 1


async def test_without_an_archive_chat_a_send_in_doubt_is_sent_again(
        core: Core, settings: Settings, fake: FakeTelegram):
    async with control_group(core, settings, fake) as (adapter, fx, outbox):
        await outbox.add(fx, [card(53, fixture=fx)])
        [(entry, out)] = await outbox.read(fx, "dead-replica", 10)
        await outbox.flying([(fx, entry)], f"telegram:{GROUP}", 1)
        await adapter.sink.send(GROUP, out.reply)
        reader = await durable(core)
        try:
            await reader.drain()
            # sent again: at least once
            assert sum("INC-53" in c.params["text"] for c in fake.sent_to(GROUP)) == 2
            assert fake.calls_of("forwardMessage", ok_only=False) == []
        finally:
            await reader.stop()


async def test_fake_forward_message_behaves_like_telegram():
    """Per-chat sequential ids in supergroups, 'not found' for unknown ids, the bot as the
    origin, and a forward counts towards the target chat's limits."""
    import httpx

    now = [1000.0]
    tg = FakeTelegram(enforce_limits=True, clock=lambda: now[0])
    await tg.start()
    base = f"{tg.base_url}/bot{tg.token}"
    async with httpx.AsyncClient() as http:
        async def call(method: str, **params: object) -> dict:
            now[0] += 1.0  # one a second: within every limit
            return (await http.post(f"{base}/{method}", json=params)).json()

        a = await call("sendMessage", chat_id=int(GROUP), text="<b>one</b>", parse_mode="HTML")
        b = await call("sendMessage", chat_id=int(GROUP), text="two")
        assert b["result"]["message_id"] == a["result"]["message_id"] + 1
        fwd = await call("forwardMessage", chat_id=int(ARCHIVE), from_chat_id=int(GROUP),
                         message_id=a["result"]["message_id"])
        assert fwd["result"]["text"] == "one"
        origin = fwd["result"]["forward_origin"]
        assert origin["type"] == "user" and origin["sender_user"]["id"] == BOT_ID
        miss = await call("forwardMessage", chat_id=int(ARCHIVE), from_chat_id=int(GROUP),
                          message_id=99)
        assert miss == {"ok": False, "error_code": 400,
                        "description": "Bad Request: message to forward not found"}
        now[0] -= 1.0  # the same instant as the last forward that landed
        again = await http.post(f"{base}/forwardMessage", json={
            "chat_id": int(ARCHIVE), "from_chat_id": int(GROUP), "message_id": 1})
        assert again.json()["error_code"] == 429
    await tg.stop()


async def test_a_lookup_in_progress_does_not_hold_back_control_cards(
        core: Core, settings: Settings, fake: FakeTelegram):
    """A steward's reply left in doubt is looked up beside the fixture's other sends: the
    card that was queued after it reaches control while the lookup is still forwarding."""
    async with control_group(core, settings, fake, ARCHIVE) as (_adapter, fx, outbox):
        await outbox.add(fx, [logged(fx, 71), card(72, fixture=fx)])
        [(er, _), (ec, _)] = await outbox.read(fx, "dead-replica", 10)
        dm_floor = fake.message_update(STEWARD, "/incident")["message"]
        await outbox.flying([(fx, er)], f"telegram:{STEWARD}", dm_floor["message_id"])
        reader = await durable(core)
        try:
            await reader.drain()
            calls = fake.calls  # in the order they came, a lookup's misses included
            forwards = [i for i, c in enumerate(calls) if c.method == "forwardMessage"]
            [card_at] = [i for i, c in enumerate(calls) if c.ok and c.method == "sendMessage"
                         and "INC-72" in c.params["text"]]
            assert forwards and card_at < forwards[-1]  # not behind the lookup
            # the reply was not there (the crash came before Telegram took it): sent once
            assert ["INC-71" in c.params["text"] for c in fake.sent_to(STEWARD)] == [True]
            assert (await outbox.backlog(fx))[0] == 0
        finally:
            await reader.stop()
