"""Scheduled sends are claimed and written to the outbox in one script: a replica that dies
right after the claim still gets its alert delivered, once, by whoever reads the outbox."""

from __future__ import annotations

from datetime import timedelta

from bot.app import build_core
from bot.delivery.durable import OutboxReader
from bot.domain.messages import Outbound
from bot.store.outbox import Outbox
from handlers import sweep_escalations
from rigs.recording_sink import RecordingSink
from tests.conftest import START


class Slack(RecordingSink):
    """A native sink recording what each Slack channel got."""

    platform = "slack"


async def test_an_escalation_claimed_by_a_replica_that_dies_is_delivered_once(
        say, core, store, settings, clock):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    core.notifier.outbox = Outbox(store.gateway)

    async def dies(outs: list[Outbound]) -> None:
        raise RuntimeError("kill -9")  # nothing after the claim's write runs

    core.notifier.send = dies
    try:
        await sweep_escalations(core, core.store, START + timedelta(seconds=60))
    except RuntimeError:
        pass
    other = build_core(store, settings, clock, cache_ttl=0)  # the replica that takes over
    slack = Slack()
    other.notifier.add_sink(slack)
    other.notifier.store = other.facades.delivery.refs
    reader = OutboxReader(other.notifier, Outbox(store.gateway), owner="b", block_ms=50,
                          rescan_s=0.05)
    reader.start()
    await reader.drain()
    alerts = [(c, r.title) for c, r in slack.got if "unacknowledged" in r.title]
    assert sorted(c for c, _ in alerts) == ["C0COMMAND", "C0POLICE"]  # tier 1, once each
    # not again
    assert await sweep_escalations(other, other.store, START + timedelta(seconds=61)) == []
    await reader.drain()
    assert [(c, r.title) for c, r in slack.got if "unacknowledged" in r.title] == alerts
    await reader.stop()
