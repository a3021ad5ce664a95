"""Corrections: /amend changes type, severity, location or (backwards) status, and /reopen;
the original stays visible in the log and on the incident (orig_* fields)."""

from __future__ import annotations

from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.refusals import said
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.incident.incident_model import Incident, incident_id, parse_incident_id
from bot.domain.incident.incident_rules import replan_after_s
from bot.domain.messages import Reply, Result
from bot.domain.outcomes import Reason
from bot.domain.vocab import STATUS_ORDER, STATUSES
from bot.store import Refused
from handlers.incident.card import card
from handlers.incident.reporting import parse_severity, resolve_location, resolve_type

AMEND_USAGE = ("/amend <id> [type=<type>] [severity=<1-5>] [location=<place>] "
               "[status=<earlier status>] [why]")
REOPEN_USAGE = "/reopen <id> [why]"


def parse_changes(ctx: Ctx, fx: Fixture, words: list[str]) -> tuple[dict[str, str], str]:
    """Requested field changes and the reason text."""
    ground = ctx.ground(fx)
    changes: dict[str, str] = {}
    why: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        key = key.lower()
        if word.startswith("@"):
            changes["location"] = resolve_location(word[1:], ground)
        elif sep and key in {"type", "t"}:
            changes["type"] = resolve_type(value)
        elif sep and key in {"severity", "sev", "s"} or (not sep and parse_severity(word)):
            sev = parse_severity("s" + value) if sep else parse_severity(word)
            if sev is None:
                raise UsageError(f"Severity is 1 to 5, not '{value}'.")
            changes["severity"] = str(sev)
        elif sep and key in {"location", "loc", "where"}:
            changes["location"] = resolve_location(value.lstrip("@"), ground)
        elif sep and key == "status":
            to = STATUSES.resolve(value)
            if to is None:
                raise UsageError(f"Unknown status '{value}'.")
            changes["status"] = to
        else:
            why.append(word)
    return changes, " ".join(why)


def _who(ctx: Ctx) -> str:
    return ctx.member.name if ctx.member and ctx.member.name else ctx.who


async def _target(ctx: Ctx, fx: Fixture) -> tuple[int, Incident]:
    n = parse_incident_id(ctx.args[0]) if ctx.args else None
    if n is None:
        raise UsageError("Which incident? Give its number, e.g. 7 or INC-7.")
    inc = await ctx.store.incident(fx.id, n)
    if inc is None:
        raise UsageError(f"No incident INC-{n} in this fixture.")
    return n, inc


async def amend_cmd(ctx: Ctx) -> Result:
    """/amend <id> field=value… [why]: a recorded correction, never an overwrite."""
    fx = await ctx.fixture()
    n, inc = await _target(ctx, fx)
    changes, why = parse_changes(ctx, fx, ctx.args[1:])
    if "status" in changes:
        if len(changes) > 1:
            raise UsageError("Correct the status on its own, then the other fields.")
        return await correct_status(ctx, fx, n, inc, changes["status"], why)
    now = {"type": inc.type, "severity": str(inc.severity), "location": inc.location}
    new = {k: v for k, v in changes.items() if now.get(k) != v}
    if not new:
        raise UsageError("Nothing to change: give type=, severity=, location= or status=.")
    old = {k: now[k] for k in new}
    text = "; ".join(f"{k} {old[k]} → {new[k]}" for k in new) + (f" ({why})" if why else "")
    ev = ctx.event("incident.amended", {"id": incident_id(n), "old": old, "new": new,
                                        "why": why, "status": inc.status, "text": text,
                                        "was": {"type": inc.type,
                                                "location": inc.location}})
    ack_due = None
    if "severity" in new:
        after = replan_after_s(policy_for(ctx.core.settings), int(new["severity"]))
        ack_due = inc.reported_ts + after if after is not None else None
    if ack_due is not None:  # the sweep must find the re-planned deadline (listed first)
        await ctx.facades.deadlines.index_escalation(fx.id)
    try:
        applied = await ctx.store.amend_incident(fx.id, n, old, new, ev,
                                                 ctx.cmd.dedupe_key, ack_due)
    except Refused as exc:
        return Result(Reply(said(exc), ok=False))
    if applied.duplicate:
        return Result(Reply(f"Already amended INC-{n}."))
    return await _announce(ctx, fx, applied.incident, f"{incident_id(n)} amended: {text}")


async def correct_status(ctx: Ctx, fx: Fixture, n: int, inc: Incident, to: str,
                         why: str) -> Result:
    """Move an incident back to an earlier status (reopen when closed), recorded as such."""
    cur = inc.status
    if to == "reported":
        raise UsageError("An acknowledged incident can't be un-acknowledged; "
                         "use status=acknowledged.")
    if STATUS_ORDER.index(to) >= STATUS_ORDER.index(cur):
        raise UsageError(f"INC-{n} is {STATUSES.label(cur).lower()}; moving forward is "
                         f"/dispatch, /onscene, /contain, /handover or /resolve.")
    cls = "reopen" if cur == "closed" else "amend"
    text = f"correction: {STATUSES.label(cur).lower()} → {STATUSES.label(to).lower()}" + \
        (f" ({why})" if why else "")
    data: dict[str, Any] = {"id": incident_id(n), "from": cur, "to": to, "cls": cls,
                            "note": why, "amended": True, "severity": inc.severity,
                            "text": text}
    deadlines = policy_for(ctx.core.settings).reopen_deadlines(inc.severity,
                                                  int(ctx.now.timestamp())) \
        if cls == "reopen" else None
    if deadlines:  # the sweep must find them (listed first)
        await ctx.facades.deadlines.index_escalation(fx.id)
    try:
        applied = await ctx.store.change_status(
            fx.id, n, to, [cur], ctx.event("incident.status", data), int(ctx.now.timestamp()),
            ctx.cmd.dedupe_key, fields={"last_note": text}, deadlines=deadlines)
    except Refused as exc:
        if exc.reason is Reason.STATUS:  # someone moved it since it was read
            return Result(Reply(f"INC-{n} changed meanwhile (now {exc.current}).", ok=False))
        return Result(Reply(said(exc), ok=False))
    if applied.duplicate:
        return Result(Reply(f"Already corrected INC-{n}."))
    word = "reopened" if cls == "reopen" else "corrected"
    return await _announce(ctx, fx, applied.incident, f"{incident_id(n)} {word}: {text}")


async def _announce(ctx: Ctx, fx: Fixture, inc: Incident, line: str) -> Result:
    ground = ctx.ground(fx)
    live = card(inc, ground, ctx.core.settings.zone)
    ctx.notify("control", live, ref=inc.id, fixture=fx.id)
    if inc.severity >= 3:
        ctx.notify("command", live, ref=inc.id, fixture=fx.id)
    ctx.notify("control", Reply(f"{line} — by {_who(ctx)}"), fixture=fx.id, thread=inc.id)
    await ctx.core.changed("incident", fx.id)
    return Result(Reply(f"{line}.\nThe original stays in the log (/incident {inc.n}).",
                        title=f"{inc.id} {inc.what}"))


async def reopen_cmd(ctx: Ctx) -> Result:
    """/reopen <id> [why]: a closed incident back to acknowledged, recorded."""
    fx = await ctx.fixture()
    n, inc = await _target(ctx, fx)
    if inc.status != "closed":
        raise UsageError(f"INC-{n} is not closed.")
    return await correct_status(ctx, fx, n, inc, "acknowledged", " ".join(ctx.args[1:]))


def register(registry: Registry) -> None:
    """Add /amend and /reopen."""
    registry.add(Spec("amend", AMEND_USAGE, "Correct an incident (the original stays visible)",
                      amend_cmd, aliases=("correct",)))
    registry.add(Spec("reopen", REOPEN_USAGE, "Reopen a closed incident", reopen_cmd))
