"""The guided form edits one message and sends nothing else, and a tap's answer is not held
behind the private chat's one-message-a-second pacing (issue 22 item 17; the wall-clock
figures are in bench/form_taps.py)."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.delivery.ratelimit import DEFAULT_LIMITS, RateLimiter
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401 (fixtures)
    CONTROL,
    STEWARD,
    Feed,
    edits_of,
    fake,
    polling,
    sends_to,
    sent_message,
    to_last_step,
)


class PacingClock:
    """The limiter's clock and sleeper: time moves only when it is asked to wait."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += max(0.0, seconds)


async def test_three_taps_edit_one_message_with_no_pacing_wait(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:  # noqa: F811
    pace = PacingClock()
    core.notifier.limiter = RateLimiter(DEFAULT_LIMITS, clock=pace, sleep=pace.sleep)
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident"))
    first = (await fake.wait_for(sends_to(STEWARD, "What is happening?")))[0]
    mid = sent_message(fake, STEWARD, "What is happening?")["message_id"]
    await polling.drain()
    pace.waits.clear()

    sev3 = await to_last_step(fake, feed, first, mid)
    await feed(fake.callback_update(STEWARD, fake.message(STEWARD, mid), sev3))
    await fake.wait_for(edits_of(STEWARD, mid, "Logged INC-1"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    await polling.drain()

    to_steward = [c for c in fake.calls if c.ok and c.method.startswith(("send", "edit"))
                  and c.params.get("chat_id") == STEWARD]
    assert [c.method for c in to_steward] == ["sendMessage"] + ["editMessageText"] * 3
    assert {c.params.get("message_id") for c in to_steward[1:]} == {mid}
    assert not any("keyboard" in (c.params.get("reply_markup") or {}) for c in to_steward)
    # each answer went out at once: the steward's chat never waited for its pacing slot
    assert [w for w in pace.waits if w > 0] == []
