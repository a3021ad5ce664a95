"""The reminder 30 days after a revision of the Martyn's Law document (issue 36, beyond):
control and command are told once, on the injected clock, unless the revision was recorded
as sent; a new revision starts its own 30 days."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bot.domain.clock import iso
from bot.publicprotection.protection_document import digest
from bot.publicprotection.protection_plan import load_plan
from bot.publicprotection.revision_reminder import remind_due
from tests.conftest import START
from tests.support.cli import ROOT
from tests.support.lifecycle import record


async def test_control_and_command_are_reminded_once_thirty_days_after_a_revision(core):
    store = core.store
    plan = load_plan(Path(ROOT / "config" / "grounds" / "london_stadium.toml"))
    rev, revised = await store.protection.revise("london_stadium", digest(plan), iso(START),
                                                 "test")
    assert (rev.n, revised) == (1, True)
    sent = record(core)
    assert await remind_due(core, store, START + timedelta(days=29, hours=23)) == []
    outs = await remind_due(core, store, START + timedelta(days=30))
    assert sorted(o.audience for o in outs) == ["command", "control"]
    assert "revision 1 of the London Stadium public-protection document (revised 25 Nov " \
           "2026) is due with the Security Industry Authority today" in outs[0].reply.text
    assert [o.audience for o in sent if "Martyn's Law" in o.reply.text] == ["control",
                                                                            "command"]
    assert await remind_due(core, store, START + timedelta(days=31)) == []  # once

    later = START + timedelta(days=40)
    rev2, revised = await store.protection.revise("london_stadium", "0" * 64, iso(later), "t")
    assert (rev2.n, revised) == (2, True)
    await store.protection.mark_sent("london_stadium", 2, iso(later + timedelta(days=3)))
    assert await remind_due(core, store, later + timedelta(days=31)) == []  # sent: no nag
