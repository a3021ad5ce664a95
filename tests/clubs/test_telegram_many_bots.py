"""One fake Bot API serves every club's bot, each by its own token, as Telegram does: each
bot is itself, sees only its own messages and updates, has its own limits, and a revoked
token stops only that club (issue 39)."""

from __future__ import annotations

import aiohttp
import pytest
from telegram.error import InvalidToken, RetryAfter

from rigs.fakes.telegram_api import FakeTelegram
from tests.support.clubs import CLUB_A_BOT, CLUB_B_BOT, club_bot

STEWARD = 100000001
FANS = 300000000  # private chats FANS+1, FANS+2, … (one message each keeps within 1/s a chat)
GROUP = -1001000000077


async def test_each_club_bot_is_itself_and_sees_only_its_own(telegram_clubs: FakeTelegram):
    fake = telegram_clubs
    async with club_bot(fake, CLUB_A_BOT) as a, club_bot(fake, CLUB_B_BOT) as b:
        assert (a.id, a.username) == (700000001, fake.bot(CLUB_A_BOT).username)
        assert (b.id, b.username) == (700000002, fake.bot(CLUB_B_BOT).username)
        assert a.username != b.username
        from_a = await a.send_message(STEWARD, "Club A: gate 4 open")
        from_b = await b.send_message(STEWARD, "Club B: turnstiles closed")
        assert from_a.from_user is not None and from_a.from_user.id == a.id
        assert from_b.from_user is not None and from_b.from_user.id == b.id
        update = await fake.bot(CLUB_A_BOT).push(
            fake.bot(CLUB_A_BOT).message_update(STEWARD, "/report"))
        assert [u.update_id for u in await a.get_updates(timeout=0)] == [update["update_id"]]
        assert await b.get_updates(timeout=0) == ()
        assert await a.get_updates(offset=update["update_id"] + 1, timeout=0) == ()
    assert [c.params["text"] for c in fake.sent_by(CLUB_A_BOT)] == ["Club A: gate 4 open"]
    assert [c.params["text"] for c in fake.sent_by(CLUB_B_BOT)] == ["Club B: turnstiles closed"]
    assert fake.bot(CLUB_A_BOT).confirmed == update["update_id"] + 1
    assert fake.bot(CLUB_B_BOT).confirmed == 0


async def test_one_club_bots_burst_never_holds_another_back(telegram_clubs: FakeTelegram):
    fake = telegram_clubs
    async with club_bot(fake, CLUB_A_BOT) as a, club_bot(fake, CLUB_B_BOT) as b:
        await a.send_message(GROUP, "Club A: control room")
        with pytest.raises(RetryAfter):
            await a.send_message(GROUP, "Club A: again")  # ~1 a second in one chat
        await b.send_message(GROUP, "Club B: control room")  # B's own pace in that chat
        for n in range(1, 30):  # 30 in one second with the first: the most a bot may send
            await a.send_message(FANS + n, f"kick-off delayed {n}")
        with pytest.raises(RetryAfter, match="Retry in 1 second"):
            await a.send_message(FANS + 30, "kick-off delayed 30")
        await b.send_message(FANS + 29, "Club B: all quiet")  # the same second, B's own 30
    assert fake.bot(CLUB_A_BOT).too_many == 2 and fake.bot(CLUB_B_BOT).too_many == 0
    assert fake.bot(CLUB_A_BOT).too_many_at[-1].startswith(f"sendMessage {FANS + 30} bot 30/")
    assert len(fake.sent_by(CLUB_A_BOT)) == 30 and len(fake.sent_by(CLUB_B_BOT)) == 2


async def test_a_revoked_club_bot_is_refused_while_the_others_send(telegram_clubs: FakeTelegram):
    fake = telegram_clubs
    async with club_bot(fake, CLUB_A_BOT) as a, club_bot(fake, CLUB_B_BOT) as b:
        await a.send_message(STEWARD, "Club A: before")
        fake.revoke(CLUB_A_BOT)
        with pytest.raises(InvalidToken):
            await a.send_message(STEWARD, "Club A: after")
        with pytest.raises(InvalidToken):
            await a.get_updates(timeout=0)
        await b.send_message(STEWARD, "Club B: still here")
    assert [c.params["text"] for c in fake.sent_by(CLUB_A_BOT)] == ["Club A: before"]
    assert [c.params["text"] for c in fake.sent_by(CLUB_B_BOT)] == ["Club B: still here"]


@pytest.mark.parametrize(("token", "status", "description"), [
    (CLUB_A_BOT, 401, "Unauthorized"),  # revoked
    ("700000009:ZZnot-any-clubs-bot_for-the-fake-api-test", 401, "Unauthorized"),  # unknown
    ("0700000001:AAclubA-secret", 401, "Unauthorized: invalid token specified"),
    ("clubA-no-bot-id", 404, "Not Found"),
])
async def test_bad_tokens_are_answered_as_the_bot_api_answers_them(
        telegram_clubs: FakeTelegram, token: str, status: int, description: str):
    fake = telegram_clubs
    fake.revoke(CLUB_A_BOT)
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{fake.base_url}/bot{token}/getMe") as resp:
            assert (resp.status, await resp.json()) == (status, {
                "ok": False, "error_code": status, "description": description})
        async with http.post(f"{fake.base_url}/bot{CLUB_B_BOT}/getMe") as resp:
            assert resp.status == 200
            assert (await resp.json())["result"]["id"] == 700000002
