"""A double tap on the guided form's last button leaves "Logged INC-n" standing (issue 22
item 16): the second tap gets at most a toast, never "This form has expired"."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401 (fixtures)
    STEWARD,
    Feed,
    edits_of,
    fake,
    incidents,
    polling,
    sends_to,
    sent_message,
    to_last_step,
)


async def test_second_tap_on_the_last_button_keeps_logged(polling: TelegramAdapter,  # noqa: F811
                                                          fake: FakeTelegram,  # noqa: F811
                                                          core: Core) -> None:
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/incident"))
    first = (await fake.wait_for(sends_to(STEWARD, "What is happening?")))[0]
    mid = sent_message(fake, STEWARD, "What is happening?")["message_id"]
    sev3 = await to_last_step(fake, feed, first, mid)
    tapped = fake.message(STEWARD, mid)  # the message as the steward's phone had it

    await feed(fake.callback_update(STEWARD, tapped, sev3))
    await fake.wait_for(edits_of(STEWARD, mid, "Logged INC-1"))
    second = fake.callback_update(STEWARD, tapped, sev3)  # the same button, a second later
    await feed(second)
    qid = second["callback_query"]["id"]
    (toast,) = await fake.wait_for(lambda c: [x for x in c if x.method == "answerCallbackQuery"
                                              and str(x.params.get("callback_query_id")) == qid])
    await polling.drain()

    assert "expired" not in str(toast.params.get("text", "")).lower()
    assert "Logged INC-1" in fake.message(STEWARD, mid)["text"]
    assert edits_of(STEWARD, mid, "expired")(fake.calls) == []
    assert len(await incidents(core)) == 1
