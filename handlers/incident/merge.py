"""/merge <token> new: a report that joined an open incident is split out on its own."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.incident.incident_model import incident_id
from bot.domain.incident.incident_rules import remaining_severity
from bot.domain.ledger import Event
from bot.domain.messages import Reply, Result
from bot.store import Refused
from handlers.incident.card import card
from handlers.incident.reporting import log_incident

MERGE_USAGE = "/merge <token> new"


async def merge_cmd(ctx: Ctx) -> Result:
    """/merge <token> new: the reporter says it is a separate incident after all."""
    if len(ctx.args) != 2 or ctx.args[1].lower() != "new":
        raise UsageError("Merge buttons only.")
    fx = await ctx.fixture()
    taken = await ctx.facades.reports.take_merge(fx.id, ctx.args[0], ctx.who)
    if taken is None:
        return Result(Reply("Already handled: that report was split out or has expired.",
                            ok=False))
    fields = {**taken["fields"], "new": True, "occurred_at": taken["at"]}
    result = await log_incident(ctx, fx, fields, extra_evidence=taken.get("evidence", []))
    first = int(taken["first"])
    ev = ctx.event("incident.unmerged", {"id": f"INC-{first}", "token": ctx.args[0],
                                         "reporter": taken["who"],
                                         "now": incident_id(result.outcome.n)
                                         if result.outcome is not None else ""})
    lower = await _lowered(ctx, fx, first, ctx.args[0])
    if lower is not None and lower[3] is not None:  # a re-planned deadline (listed first)
        await ctx.facades.deadlines.index_escalation(fx.id)
    try:
        applied = await ctx.store.unmerge(fx.id, first, ev, lower)
    except Refused:  # INC-n changed meanwhile (an /amend): the split stands, severity stays
        await ctx.store.unmerge(fx.id, first, ev)
        applied = None
    if lower is not None and applied is not None:
        inc = applied.incident
        live = card(inc, ctx.ground(fx), ctx.core.settings.zone)
        ctx.notify("control", live, ref=inc.id, fixture=fx.id)
        if inc.severity >= 3:
            ctx.notify("command", live, ref=inc.id, fixture=fx.id)
    await ctx.core.changed("incident", fx.id)
    return result


async def _lowered(ctx: Ctx, fx: Fixture, n: int, token: str
                   ) -> tuple[str, str, Event, int | None] | None:
    """The severity change the split brings (None: the split report raised nothing)."""
    inc = await ctx.store.incident(fx.id, n)
    if inc is None:
        return None
    sev = remaining_severity(await ctx.facades.views.incident_events(fx.id, n), token)
    if sev is None or sev >= inc.severity:
        return None
    old, new = str(inc.severity), str(sev)
    text = f"severity {old} → {new} (a merged report was split out)"
    amend = ctx.event("incident.amended", {
        "id": incident_id(n), "old": {"severity": old}, "new": {"severity": new},
        "why": "a merged report was split out", "split": token, "status": inc.status,
        "text": text, "was": {"type": inc.type, "location": inc.location}})
    tiers = policy_for(ctx.core.settings).for_severity(sev).tiers
    return old, new, amend, inc.reported_ts + tiers[0].after_s if tiers else None


def register(registry: Registry) -> None:
    """Add the hidden merge command (its button)."""
    registry.add(Spec("merge", MERGE_USAGE, "Split a report out of the incident it joined",
                      merge_cmd, hidden=True))
