"""A reply to a bot message is tied to the incident the outbox recorded for that message when
it sent it, never to an incident id read back out of its text (issue 33 item 5)."""

# ruff: noqa: F811  (pytest fixtures imported from tests.support)
from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401 (fixtures)
    CONTROL,
    STEWARD,
    SUPERVISOR,
    Feed,
    fake,
    join_supervisor,
    polling,
    sends_to,
    sent_message,
)


async def evidence_of(core: Core) -> list[str]:
    """The incident ids evidence was added to, in order."""
    fx = await core.active_fixture()
    assert fx is not None
    return [e.data.get("id", "") for e in await core.store.events(fx.id)
            if e.kind == "incident.evidence"]


async def test_a_photo_replying_to_a_status_screen_is_not_filed_on_the_first_incident_listed(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    feed = Feed(fake)
    await join_supervisor(core, fake, feed)
    await feed(fake.message_update(STEWARD, "/incident missile @stb_walkway s3 bottles"))
    await fake.wait_for(sends_to(CONTROL, "INC-1"))
    await feed(fake.message_update(SUPERVISOR, "/status"))
    await fake.wait_for(sends_to(SUPERVISOR, "Open: 1"))
    status = sent_message(fake, SUPERVISOR, "Open: 1")
    assert "INC-1" in status["text"]  # the screen names the incident, without being about it
    await feed(fake.message_update(SUPERVISOR, photo="AgACstatus", reply_to=status))
    [asked] = await fake.wait_for(sends_to(SUPERVISOR, "Which incident is this for?"))
    assert asked.params["chat_id"] == SUPERVISOR
    assert await evidence_of(core) == []  # not silently added to INC-1
    assert not sends_to(SUPERVISOR, "Added to INC-1")(fake.calls)


async def test_a_photo_replying_to_the_logged_answer_goes_to_that_incident(
        polling: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    feed = Feed(fake)
    for text in ("/incident missile @stb_walkway s3 bottles", "/incident pyro @away_upper s2"):
        await feed(fake.message_update(STEWARD, text))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-2"))
    first = sent_message(fake, STEWARD, "Logged INC-1")  # the older report, not the latest
    await feed(fake.message_update(STEWARD, photo="AgACfirst", reply_to=first))
    await fake.wait_for(sends_to(STEWARD, "Added to INC-1"))
    assert await evidence_of(core) == ["INC-1"]
