"""Pre-event inspections: /inspect lists the ground's checklist with a Pass and a Fail button
per item; a tick may carry a photo; a failure raises an incident; /inspect ready says
whether the turnstiles may open, and the Safety Officer may open anyway with a logged
decision (/inspect override <why>)."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.decision_log import Decision
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_card import RAISED
from bot.domain.inspection_checklist import (
    OVERRIDE_SOURCE,
    Check,
    Item,
    Readiness,
    checklists,
    latest,
    override_of,
    readiness,
)
from bot.domain.ledger import Event
from bot.domain.messages import Button, Reply, Result
from bot.domain.outcomes import Logged
from bot.domain.plurals import counted
from bot.domain.vocab import match_key
from bot.store.inspection_keys import Inspections
from handlers.incident.reporting import log_incident

USAGE = ("/inspect  |  /inspect <item> pass|fail [note] (a photo may come with it)  |  "
         "/inspect ready  |  /inspect override <why>")
TITLE = "Pre-event inspection"


def items_of(ctx: Ctx, fx: Fixture) -> tuple[Item, ...]:
    """The fixture's ground's checklist."""
    return checklists(ctx.core.settings.config_dir).get(fx.ground, ())


def _may_tick(ctx: Ctx, item: Item) -> bool:
    rank = ctx.core.roles.rank
    role = ctx.role or ""
    return role in rank and item.role in rank and rank.index(role) <= rank.index(item.role)


async def ready_state(ctx: Ctx, fx: Fixture) -> tuple[Readiness, list[Check]]:
    """Readiness to open the turnstiles, and every tick so far."""
    checks = await ctx.facades.inspections.read(fx.id)
    log = await ctx.facades.decisions.read(fx.id)
    return readiness(items_of(ctx, fx), checks, override_of(log)), checks


async def turnstiles_refusal(ctx: Ctx, fx: Fixture) -> str | None:
    """Why the turnstiles may not open yet (None: they may). Applies once the fixture's
    inspection has begun (a tick recorded) on a ground with a checklist."""
    if not items_of(ctx, fx):
        return None
    state, checks = await ready_state(ctx, fx)
    if not checks or state.ready:
        return None
    names = "; ".join(i.label for i in state.blocking)
    return (f"Not ready to open turnstiles: "
            f"{counted(len(state.blocking), 'safety-critical item')} not passed ({names}). "
            "Pass them with /inspect, or the Safety Officer opens anyway: "
            "/inspect override <why>.")


def _readiness_line(state: Readiness) -> str:
    if not state.blocking:
        return "READY to open turnstiles: every safety-critical item passed."
    if state.override is not None:
        return (f"OPENING ON OVERRIDE (decision D-{state.override}): "
                f"{len(state.blocking)} safety-critical item(s) not passed.")
    return (f"NOT READY to open turnstiles: {len(state.blocking)} safety-critical item(s) "
            "not passed.")


async def _list(ctx: Ctx, fx: Fixture) -> Result:
    items = items_of(ctx, fx)
    if not items:
        return Result(Reply(f"No inspection checklist for {fx.ground} in config.",
                            title=TITLE, ok=False))
    state, checks = await ready_state(ctx, fx)
    last = latest(checks)
    tz = ctx.core.settings.zone
    lines, rows = [_readiness_line(state)], []
    for item in items:
        c = last.get(item.key)
        mark = "✔ PASSED" if c and c.outcome == "pass" else "✖ FAILED" if c else "○ TO DO"
        when = f" {c.at.astimezone(tz):%H:%M}" if c else \
            f" (due from {item.due_from(fx.kickoff).astimezone(tz):%a %H:%M})"
        crit = " · safety-critical" if item.critical else ""
        inc = f" · INC-{c.incident}" if c and c.incident else ""
        lines.append(f"{mark}{when} · {item.label}{crit}{inc}")
        if _may_tick(ctx, item):
            rows.append([Button(f"✔ Pass: {item.label[:32]}", f"/inspect {item.key} pass",
                                "primary"),
                         Button("✖ Fail", f"/inspect {item.key} fail", "danger")])
    return Result(Reply("\n".join(lines), title=f"{TITLE} · {fx.title}", buttons=rows))


async def _tick(ctx: Ctx, fx: Fixture, item: Item, outcome: str, note: str) -> Result:
    if not _may_tick(ctx, item):
        raise UsageError(f"{item.label} is for a {item.role.replace('_', ' ')} (or above) "
                         "to inspect.")
    due = item.due_from(fx.kickoff)
    if ctx.now < due:  # a check long before the match says nothing about the match
        raise UsageError(f"{item.label} is due from "
                         f"{due.astimezone(ctx.core.settings.zone):%a %d %b %H:%M} ({item.due_h} h "
                         "before kick-off): a check before that does not count.")
    photos = tuple(a.file_id for a in ctx.cmd.attachments if a.kind == "photo" and a.file_id)
    check = Check(item.key, outcome, ctx.now, ctx.who, ctx.role or "", note, photos)
    ev = ctx.event("inspection.checked", {"item": item.key, "label": item.label,
                                          "outcome": outcome, "note": note,
                                          "photos": len(photos), "critical": item.critical})
    if outcome == "fail":
        return await _failed(ctx, fx, item, check, ev)
    applied = await ctx.facades.inspections.record(fx.id, check, ev,
                                                  ctx.cmd.dedupe_key + "#inspect")
    if not applied.duplicate:
        await ctx.core.changed("inspection", fx.id)
    return await _answer(ctx, fx, item, check, "")


async def _answer(ctx: Ctx, fx: Fixture, item: Item, check: Check, extra: str) -> Result:
    word = "PASSED" if check.outcome == "pass" else "FAILED"
    photos = check.photos
    pics = f" with {counted(len(photos), 'photo')}" if photos else ""
    line = f"{'✔' if check.outcome == 'pass' else '✖'} {word}: {item.label}{pics}.{extra}"
    state, _ = await ready_state(ctx, fx)
    hint = "" if photos else (f"\nTo add a photo as evidence, send it with the caption "
                              f"/inspect {item.key} {check.outcome}")
    return Result(Reply(line + "\n" + _readiness_line(state) + hint, title=TITLE, ok=True))


async def _failed(ctx: Ctx, fx: Fixture, item: Item, check: Check, ev: Event) -> Result:
    """A failed item: the tick, the incident it raises and the inspector's answer in ONE
    write (a redelivery, on this replica or another, writes and answers nothing more)."""
    fields = {"type": item.incident_type, "location": item.zone,
              "severity": 3 if item.critical else 2, "affiliation": "unknown",
              "description": f"Inspection failed: {item.label}" + (f". {check.note}"
                                                                   if check.note else ""),
              "inspection": item.label, "failed_check": item.failed_check,
              "critical": item.critical, "new": True}
    logged = await log_incident(ctx, fx, fields, answer=RAISED,
                                also=Inspections.failure_ops(check, ev))
    assert isinstance(logged.outcome, Logged)  # a new incident ("new"): never joined to one
    n = logged.outcome.n
    if not logged.outcome.again:
        await ctx.core.changed("inspection", fx.id)
        if item.critical:  # the card went to command with the write; this says why
            ctx.notify("command", Reply(f"✖ FAILED: {item.label}. Raised INC-{n}.",
                                        title=f"Inspection · {fx.title}"), fixture=fx.id)
    result = await _answer(ctx, fx, item, check, f" Raised INC-{n}.")
    # the answer went into the outbox with the write (the "raised" view): not again
    result.queued = logged.queued
    result.outcome = logged.outcome
    return result


async def _override(ctx: Ctx, fx: Fixture, why: str) -> Result:
    if not why:
        raise UsageError("Give the reason: /inspect override <why>.", field="why")
    state, _ = await ready_state(ctx, fx)
    if not state.blocking:
        return Result(Reply("Nothing to override: every safety-critical item passed."))
    names = "; ".join(i.label for i in state.blocking)
    entry = Decision(n=0, at=ctx.now, by=ctx.who, name=ctx.member.name if ctx.member else "",
                     role=ctx.role or "", phase="",
                     decision=f"Open the turnstiles with safety-critical items not passed: "
                              f"{names}", rationale=why[:1000], source=OVERRIDE_SOURCE,
                     kind="turnstiles")
    applied = await ctx.facades.decisions.append(fx.id, entry, ctx.cmd.dedupe_key)
    await ctx.core.changed("decision", fx.id)
    line = f"Decision D-{applied.n}: turnstiles may open on override ({names}). Why: {why}"
    ctx.notify("command", Reply(line, title=f"Inspection override · {fx.title}"),
               fixture=fx.id)
    return Result(Reply(line, title=f"Decision D-{applied.n}"))


async def inspect_cmd(ctx: Ctx) -> Result:
    """/inspect: the checklist; /inspect <item> pass|fail; ready; override <why>."""
    fx = await ctx.fixture()
    if not ctx.args:
        return await _list(ctx, fx)
    first = ctx.args[0].lower()
    if first == "ready":
        state, checks = await ready_state(ctx, fx)
        last = latest(checks)
        blocking = "".join(f"\n  {'✖ FAILED' if i.key in last else '○ TO DO'}: {i.label}"
                           for i in state.blocking)
        return Result(Reply(_readiness_line(state) + blocking, title=TITLE))
    if first == "override":
        return await _override(ctx, fx, " ".join(ctx.args[1:]).strip())
    items = {i.key: i for i in items_of(ctx, fx)}
    item = items.get(match_key(first, items) or "")
    if item is None:
        known = ", ".join(items) or "none configured"
        raise UsageError(f"No inspection item '{first[:30]}' at this ground ({known}).")
    outcome = ctx.args[1].lower() if len(ctx.args) > 1 else ""
    if outcome not in ("pass", "fail"):
        raise UsageError("Pass or fail?", field="outcome")
    note = " ".join(ctx.args[2:]).strip()[:500]
    return await _tick(ctx, fx, item, outcome, note)


def register(registry: Registry) -> None:
    """Add /inspect."""
    registry.add(Spec("inspect", USAGE, "Pre-event inspection checklist", inspect_cmd,
                      aliases=("inspection", "checks"), subcommands={"override": "override"}))
