"""The reminder 30 days after a revision of the Martyn's Law document (issue 36, beyond):
control and command are told once, on the injected clock, unless the revision was recorded
as sent; a new revision starts its own 30 days."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import build_core
from bot.delivery.durable import OutboxReader
from bot.domain.clock import iso
from bot.domain.messages import Outbound
from bot.publicprotection.protection_document import digest
from bot.publicprotection.protection_plan import load_plan
from bot.publicprotection.revision_reminder import remind_due
from bot.store.outbox import Outbox
from rigs.recording_sink import RecordingSink
from tests.conftest import START
from tests.support.cli import ROOT
from tests.support.lifecycle import record


async def test_control_and_command_are_reminded_once_thirty_days_after_a_revision(core):
    store, facades = core.store, core.facades
    plan = load_plan(Path(ROOT / "config" / "grounds" / "london_stadium.toml"))
    rev, revised = await facades.protection.revise("london_stadium", digest(plan), iso(START),
                                                 "test")
    assert (rev.n, revised) == (1, True)
    sent = record(core)
    assert await remind_due(core, store, facades, START + timedelta(days=29, hours=23)) == []
    outs = await remind_due(core, store, facades, START + timedelta(days=30))
    assert sorted(o.audience for o in outs) == ["command", "control"]
    assert "revision 1 of the London Stadium public-protection document (revised 25 Nov " \
           "2026) is due with the Security Industry Authority today" in outs[0].reply.text
    assert [o.audience for o in sent if "Martyn's Law" in o.reply.text] == ["control",
                                                                            "command"]
    assert await remind_due(core, store, facades, START + timedelta(days=31)) == []  # once

    later = START + timedelta(days=40)
    rev2, revised = await facades.protection.revise("london_stadium", "0" * 64, iso(later), "t")
    assert (rev2.n, revised) == (2, True)
    await facades.protection.mark_sent("london_stadium", 2, iso(later + timedelta(days=3)))
    assert await remind_due(core, store, facades, later + timedelta(days=31)) == []  # sent: no nag


class Slack(RecordingSink):
    """A native sink recording what each Slack channel got."""

    platform = "slack"


async def test_a_reminder_claimed_by_a_replica_that_dies_is_still_delivered_once(
        core, store, settings, clock):
    """The claim and the messages are one write to the deployment's outbox: a crash right
    after it loses nothing; whoever reads the outbox delivers it, once."""
    plan = load_plan(Path(ROOT / "config" / "grounds" / "london_stadium.toml"))
    facades = core.facades
    await facades.protection.revise("london_stadium", digest(plan), iso(START), "test")
    core.notifier.outbox = Outbox(store.gateway)

    async def dies(outs: list[Outbound], once: str = "") -> None:
        raise RuntimeError("kill -9")  # nothing after the claim's write runs

    core.notifier.send = dies
    with pytest.raises(RuntimeError):
        await remind_due(core, store, facades, START + timedelta(days=30))
    other = build_core(store, settings, clock, cache_ttl=0)  # the replica that takes over
    assert await remind_due(other, store, other.facades, START + timedelta(days=30,
                                                                           hours=1)) == []
    slack = Slack()
    other.notifier.add_sink(slack)
    reader = OutboxReader(other.notifier, Outbox(store.gateway), owner="b", block_ms=50,
                          rescan_s=0.05)
    reader.start()
    try:
        await reader.drain()
        got = sorted(c for c, r in slack.got if "Martyn's Law" in r.title)
        assert got == ["C0COMMAND", "C0CONTROL"], slack.got  # control and command, once each
    finally:
        await reader.stop()
