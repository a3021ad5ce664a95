"""Inspections over Telegram's real python-telegram-bot path: a steward taps Pass on the
checklist, sends a photo captioned with a tick, and a failure raises an incident for
control (issue 25 §2)."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.store.inspection_keys import Inspections
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401 (fixtures)
    CONTROL,
    STEWARD,
    Feed,
    buttons,
    fake,
    polling,
    sends_to,
    sent_message,
)


async def test_a_steward_ticks_by_tap_and_by_captioned_photo(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:  # noqa: F811
    feed = Feed(fake)
    await feed(fake.message_update(STEWARD, "/inspect"))
    listing = (await fake.wait_for(sends_to(STEWARD, "NOT READY to open turnstiles")))[0]
    tap = next(b for b in buttons(listing) if b.endswith("/inspect exits_gates pass"))
    mid = sent_message(fake, STEWARD, "NOT READY")["message_id"]
    await feed(fake.callback_update(STEWARD, fake.message(STEWARD, mid), tap))
    await fake.wait_for(lambda calls: [c for c in calls if c.ok and "PASSED: Exit gates"
                                       in str(c.params.get("text"))])
    await feed(fake.message_update(STEWARD, photo="AgAD-seats",
                                   caption="/inspect missiles_removed fail bottles under seats"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    # the steward's answer, rendered from the incident at send time, says the gates wait
    answer = (await fake.wait_for(sends_to(STEWARD, "Raised INC-1")))[-1]
    assert "NOT READY to open turnstiles" in answer.params["text"]
    await polling.drain()
    fx = await core.active_fixture()
    checks = await Inspections(core.store.gateway).read(fx.id)
    assert [(c.item, c.outcome, c.by) for c in checks] == [
        ("exits_gates", "pass", f"telegram:{STEWARD}"),
        ("missiles_removed", "fail", f"telegram:{STEWARD}")]
    assert checks[1].photos == ("AgAD-seats",) and checks[1].incident == 1
    inc = await core.store.incident(fx.id, 1)
    assert inc.location == "seg_ne" and "bottles under seats" in inc.description
