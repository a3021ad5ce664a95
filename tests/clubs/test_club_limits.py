"""Limits per club: each club's bot has Telegram's 30 messages a second and each of its chats
1 a second, counted in Redis windows of the club's own key space and shared by every replica
of the deployment; one club spending its whole budget leaves another's untouched (#39)."""

from __future__ import annotations

from bot.delivery.ratelimit import SharedRateLimiter
from bot.delivery.sink import BOT_WIDE
from bot.store import Store
from bot.store.windows import Windows
from tests.support.fake_time import FakeTime


async def test_one_clubs_full_budget_spends_nothing_of_anothers(store: Store) -> None:
    time = FakeTime()

    def limiter(club: str) -> SharedRateLimiter:  # one replica's limiter for one club
        return SharedRateLimiter(Windows(store.gateway.for_club(club)), clock=time.clock,
                                 sleep=time.sleep)

    north, north_again, south = limiter("north"), limiter("north"), limiter("south")
    start = time.now
    for _ in range(30):  # north's bot-wide 30/s spent in an instant, by one replica
        await north.acquire("telegram", BOT_WIDE)
    assert time.now == start
    await south.acquire("telegram", BOT_WIDE)  # south's first: not held
    await south.acquire("telegram", "-1001000000001")  # nor south's control group
    assert time.now == start
    await north_again.acquire("telegram", BOT_WIDE)  # another replica of north: waits
    assert time.now > start


async def test_a_chat_id_two_clubs_share_is_counted_per_club(store: Store) -> None:
    time = FakeTime()
    north = SharedRateLimiter(Windows(store.gateway.for_club("north")), clock=time.clock,
                              sleep=time.sleep)
    south = SharedRateLimiter(Windows(store.gateway.for_club("south")), clock=time.clock,
                              sleep=time.sleep)
    start = time.now
    # the same Slack channel id in two workspaces is two channels: 1 a second each
    await north.acquire("slack", "C0CONTROL")
    await south.acquire("slack", "C0CONTROL")
    assert time.now == start
    await north.acquire("slack", "C0CONTROL")
    assert time.now > start
