"""Incident commands: report (one line or guided), show a timeline, move through the
lifecycle (acknowledge … resolve), update, escalate."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.paging import page_of, split_page_args
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_model import incident_id, parse_incident_id
from bot.domain.ledger import Event
from bot.domain.messages import Reply, Result
from bot.domain.outcomes import Added
from bot.domain.vocab import STATUS_ORDER, STATUSES
from handlers.common.forms import start_form
from handlers.decisions.commands import record_from_command
from handlers.incident.card import card, clock_time, timeline_lines, times_line
from handlers.incident.reporting import add_text, log_incident, parse_report

REPORT_USAGE = "/incident <type> @<location> [s<1-5>] [aff=home|away] [xN people] [text]"

TRANSITIONS = {
    "ack": ("acknowledged", "Acknowledge an incident"),
    "dispatch": ("dispatched", "Mark response dispatched"),
    "onscene": ("on_scene", "Mark response on scene"),
    "contain": ("contained", "Mark an incident contained"),
    "handover": ("handed_to_police", "Hand an incident to police"),
    "resolve": ("closed", "Close an incident"),
}
OWNER_STATUSES = {"acknowledged", "dispatched"}
# Only roles that handle incidents move them off "reported": anyone else's /onscene on an
# unacknowledged incident is a note, so it neither stops escalation nor counts as the time to
# acknowledge (after an acknowledgement a steward may mark on scene).


async def incident_cmd(ctx: Ctx) -> Result:
    """/incident: guided form with no words, one-line report, or /incident <id> timeline."""
    fx = await ctx.fixture()
    if not ctx.args:
        return await start_form(ctx, fx)
    asked, page = split_page_args(ctx.rest)
    if len(asked.split()) == 1 and parse_incident_id(asked) is not None:
        return await timeline(ctx, fx, parse_incident_id(asked) or 0, page)
    zone = ctx.member.zone if ctx.member else ""
    fields = parse_report(ctx.args, ctx.ground(fx), zone, ctx.now, ctx.core.settings.zone)
    return await log_incident(ctx, fx, fields)


async def timeline(ctx: Ctx, fx: Fixture, n: int, page: int = 1) -> Result:
    """/incident <id> [page N]: the card plus every event about it, oldest first, in pages
    that fit every platform."""
    inc = await ctx.store.incident(fx.id, n)
    if inc is None:
        raise UsageError(f"No incident INC-{n} in this fixture.")
    tz = ctx.core.settings.zone
    view = card(inc, ctx.ground(fx), tz)
    iid = incident_id(n)
    lines = timeline_lines(await ctx.facades.views.incident_events(fx.id, n), iid, tz)
    view.text += f"\n{times_line(inc, tz)}\n\nTimeline:\n" + "\n".join(lines)
    view.buttons = []
    return Result(page_of(view, page, lambda p: f"/incident {n} page {p}"))


def _target(ctx: Ctx) -> int:
    if not ctx.args:
        raise UsageError("Which incident? Give its number, e.g. 7 or INC-7.")
    n = parse_incident_id(ctx.args[0])
    if n is None:
        raise UsageError(f"'{ctx.args[0]}' is not an incident id (e.g. INC-7).")
    return n


async def transition(ctx: Ctx) -> Result:
    """/ack /dispatch /onscene /contain /handover /resolve <id> [note]."""
    to = TRANSITIONS[ctx.spec.name][0]
    n = _target(ctx)
    fx = await ctx.fixture()
    note = " ".join(ctx.args[1:])
    before = STATUS_ORDER[: STATUS_ORDER.index(to)]
    if to == "on_scene" and not ctx.core.roles.allowed(ctx.role, "ack"):
        inc = await ctx.store.incident(fx.id, n)
        if inc is not None and inc.status == "reported":
            return await _on_scene_note(ctx, fx, n, note)
        before = before[1:]  # never from "reported": that would be an acknowledgement
    cls = "close" if to == "closed" else "progress"
    name = ctx.member.name if ctx.member else ctx.who
    extra = {"owner": ctx.who, "owner_name": name} if to in OWNER_STATUSES else {}
    ack = await _handover_ack(ctx, fx, n, name) if to == "handed_to_police" else None
    if ack is not None:  # only from "reported": a race with an /ack refuses, writes nothing
        before = ["reported"]
        extra |= {"acknowledged_at": ack.at, "acknowledged_by": ack.by, "ack_by_name": name,
                  "ack_via": "handover"}
    ev = ctx.event("incident.status", {"id": incident_id(n),
                                       # None: the store records the status it moved from
                                       "from": "acknowledged" if ack else None,
                                       "to": to, "cls": cls, "note": note})
    extra["status_by_name"] = name
    if note:
        extra["last_note"] = note
    applied = await ctx.store.change_status(
        fx.id, n, to, before, ev, int(ctx.now.timestamp()), ctx.cmd.dedupe_key,
        fields=extra, first=ack,
    )
    if applied.duplicate:
        return Result(Reply(f"Already done: INC-{n} {STATUSES.label(to).lower()}."))
    inc = applied.incident
    ground = ctx.ground(fx)
    live = card(inc, ground, ctx.core.settings.zone)
    ctx.notify("control", live, ref=inc.id, fixture=fx.id)
    if inc.severity >= 3:
        ctx.notify("command", live, ref=inc.id, fixture=fx.id)
    if (to in ("acknowledged", "closed") or ack) and inc.reporter != ctx.who:
        word = "closed" if to == "closed" else "acknowledged"
        ctx.notify("user:" + inc.reporter, Reply(
            f"Your report {inc.id} ({inc.what}) was {word} "
            f"by {name}." + (f" “{note}”" if note else "")), fixture=fx.id)
    await ctx.core.changed("incident", fx.id)
    said = f"{inc.id} {STATUSES.label(to).lower()}."
    if ack is not None:
        said += (f" It had not been acknowledged: your handover is recorded as its "
                 f"acknowledgement (by {name}, {clock_time(ack.at, ctx.core.settings.zone)}), "
                 "and its escalation stops.")
    reply = Reply(said, title="")
    if to == "handed_to_police" and ctx.core.roles.allowed(ctx.role, "decision"):
        # handing an incident to the police is a command decision: logged, rationale asked
        prompt = await record_from_command(
            ctx, fx, f"Hand {inc.id} to police" + (f": {note}" if note else ""),
            f"handover {inc.id}", incidents=inc.id, kind="handover")
        reply.text += "\n" + prompt.text
        reply.buttons = prompt.buttons
    return Result(reply)


async def _handover_ack(ctx: Ctx, fx: Fixture, n: int, name: str) -> Event | None:
    """A handover of an unacknowledged incident acknowledges it: the acknowledgement event,
    by the police member at this time (None when it was acknowledged already)."""
    inc = await ctx.store.incident(fx.id, n)
    if inc is None or inc.status != "reported":
        return None
    return ctx.event("incident.status", {
        "id": incident_id(n), "from": "reported", "to": "acknowledged", "cls": "progress",
        "note": f"acknowledged by {name} by handing it to police", "via": "handover"})


async def _on_scene_note(ctx: Ctx, fx: Fixture, n: int, note: str) -> Result:
    """A steward at the scene: recorded on the timeline and in control's thread, status and
    escalation untouched."""
    result = await add_text(ctx, fx, n, f"On scene: {note}" if note else "On scene")
    if isinstance(result.outcome, Added):
        result.reply.text = (f"Noted on INC-{n}: you are on scene. That is not an "
                             "acknowledgement: control or a supervisor acknowledges it, and it "
                             "keeps escalating until then.")
    return result


async def update_cmd(ctx: Ctx) -> Result:
    """/update <id> <text>."""
    n = _target(ctx)
    text = " ".join(ctx.args[1:])
    if not text and not ctx.cmd.attachments:
        raise UsageError("What's the update? Add some text after the id.")
    return await add_text(ctx, await ctx.fixture(), n, text)


async def escalate_cmd(ctx: Ctx) -> Result:
    """/escalate <id> [why]: put an incident in front of the command team now."""
    n = _target(ctx)
    why = " ".join(ctx.args[1:])
    return await add_text(ctx, await ctx.fixture(), n, f"ESCALATED {why}".strip(),
                          "incident.escalated")


def register(registry: Registry) -> None:
    """Add the incident commands to the language."""
    registry.add(Spec("incident", REPORT_USAGE + "  |  /incident  |  /incident <id>",
                      "Report an incident (or show one)", incident_cmd,
                      aliases=("report", "inc", "i")))
    for name, (_, summary) in TRANSITIONS.items():
        aliases = {"ack": ("acknowledge",), "resolve": ("close", "closed"),
                   "onscene": ("on_scene",), "handover": ("police", "handed")}.get(name, ())
        registry.add(Spec(name, f"/{name} <id> [note]", summary, transition, aliases=aliases))
    registry.add(Spec("update", "/update <id> <text>", "Add an update to an incident",
                      update_cmd, aliases=("upd", "add")))
    registry.add(Spec("escalate", "/escalate <id> [why]", "Escalate to the command team",
                      escalate_cmd))
