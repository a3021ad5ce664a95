"""Decision review reminders: a decision logged with review=<time> puts `D-<n>:review` among
the fixture's deadlines (the escalation sweep's sorted set), so a restart or another replica
reminds command when it is due, once. A decision superseded meanwhile is not reminded: the
newer entry carries its own review time."""

from __future__ import annotations

from datetime import datetime

from bot.core.dispatch import Core
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ledger import Event
from bot.domain.messages import Button, Outbound, Reply
from bot.store import Store

SYSTEM = "system:review"
TO = ("command", "control")


async def fire_review(core: Core, store: Store, fx: Fixture, ref: str,
                      _due: int, now: datetime) -> list[Outbound]:
    """Remind command that decision `ref` ('D-4') is due for review; [] when it was
    superseded, another replica reminded, or there is no such decision."""
    facades = core.facades  # the records by purpose, built once by the root
    n = int(ref.removeprefix("D-")) if ref.removeprefix("D-").isdigit() else 0
    view = await facades.decisions.read(fx.id)
    d = next((e for e in view.entries if e.n == n), None)
    if d is None or view.superseded_by(n) is not None:
        await core.facades.deadlines.drop_deadline(fx.id, f"{ref}:review")
        return []
    tz = core.settings.zone
    reply = Reply(f"{d.decision}\nLogged {d.at.astimezone(tz):%H:%M} by {d.name or d.by}; "
                  f"review was set for {d.review.astimezone(tz):%H:%M}." if d.review else
                  d.decision,
                  title=f"⏰ Decision {d.id} is due for review",
                  buttons=[[Button("Correct it (supersede)", f"/decision supersedes {d.id}")]])
    outs = [Outbound(a, reply, fixture=fx.id) for a in TO]
    ev = Event(kind="decision.review_due", at=iso(now), by=SYSTEM, role="system",
               data={"id": d.id})
    if not await facades.decisions.review_due(fx.id, n, ev, core.notifier.outbox.ops(outs)):
        return []
    return outs
