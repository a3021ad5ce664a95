"""One door into delivery: every message goes through an outbox, which always exists (in
memory until the durable one is wired), and every platform sink declares the same
capabilities."""

from __future__ import annotations

from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import unlimited
from bot.delivery.sink import PlatformSink
from bot.domain.messages import Outbound, Reply
from rigs.fakes.slack_api import FakeSlack
from rigs.fakes.telegram_api import FakeTelegram
from rigs.recording_sink import RecordingSink
from tests.support.adapters import both_adapters


def recorded() -> tuple[Notifier, RecordingSink]:
    n = Notifier({"control": {"telegram": ["-100"]}}, unlimited())
    sink = RecordingSink("telegram")
    n.add_sink(sink)
    return n, sink


async def test_a_redelivered_command_is_shown_once_without_a_store():
    n, sink = recorded()
    card = [Outbound("control", Reply("INC-1 card"), fixture="fx")]
    await n.send(card, once="telegram:7")
    await n.send(card, once="telegram:7")  # the same update, redelivered
    await n.send(card, once="telegram:8")  # another command saying the same
    await n.drain()
    assert [r.text for _, r in sink.got] == ["INC-1 card", "INC-1 card"]
    await n.close()


async def test_messages_about_no_fixture_are_never_deduped():
    n, sink = recorded()
    hello = [Outbound("control", Reply("shift starts"))]
    await n.send(hello, once="k")
    await n.send(hello, once="k")
    await n.drain()
    assert len(sink.got) == 2
    await n.close()


async def test_every_platform_adapter_is_a_full_platform_sink(core, settings):
    async with both_adapters(core, settings, FakeTelegram(), FakeSlack()):
        assert set(core.notifier.sinks) == {"telegram", "slack"}
        for sink in core.notifier.sinks.values():
            assert isinstance(sink, PlatformSink), sink.platform
