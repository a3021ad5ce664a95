"""Incidents: report (one-line form), acknowledge, dispatch, update, resolve, evidence."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.messages import Reply, Result
from bot.domain.clock import iso
from bot.domain.grounds import Ground
from bot.domain.models import Fixture, incident_id, parse_incident_id
from bot.domain.vocab import AFFILIATIONS, INCIDENT_TYPES, SEVERITIES, STATUS_ORDER, STATUSES
from bot.store import Refused
from handlers.cards import card
from handlers.merge import merged_reply, similar_query
from handlers.words import resolve_word

REPORT_USAGE = "/incident <type> @<location> [s<1-5>] [aff=home|away] [xN people] [text]"

# Severity when the reporter gives none: what control would usually start at.
DEFAULT_SEVERITY = {
    "missile": 3, "pyro": 3, "pitch_incursion": 3, "segregation_breach": 4, "disorder": 4,
    "antisocial": 2, "discriminatory": 3, "alcohol": 2, "drugs": 2, "criminal_damage": 2,
    "assault_staff": 4, "crowd_density": 4, "persistent_standing": 1, "suspicious_item": 4,
    "medical": 3, "safeguarding": 3, "fire": 4, "structural": 4, "entry": 2, "drone": 3,
    "ejection": 1, "other": 2,
}
# Command -> (target status, summary)
TRANSITIONS = {
    "ack": ("acknowledged", "Acknowledge an incident"),
    "dispatch": ("dispatched", "Mark response dispatched"),
    "onscene": ("on_scene", "Mark response on scene"),
    "contain": ("contained", "Mark an incident contained"),
    "handover": ("handed_to_police", "Hand an incident to police"),
    "resolve": ("closed", "Close an incident"),
}
OWNER_STATUSES = {"acknowledged", "dispatched"}


def parse_severity(word: str) -> int | None:
    """s4, sev4, sev=4, severity=4 -> 4."""
    m = re.fullmatch(r"(?:s|sev|severity)=?([1-5])", word.lower())
    return int(m.group(1)) if m else None


def resolve_type(word: str) -> str:
    """An incident type key, or a UsageError with suggestions."""
    return resolve_word(INCIDENT_TYPES, word, "incident type", "Send /help incident for the list.")


def resolve_location(word: str, ground: Ground) -> str:
    """A zone id in the ground, or a UsageError with suggestions."""
    zone = ground.resolve(word)
    if zone:
        return zone
    hints = ground.suggest(word)
    hint = f" Did you mean @{hints[0]} ({ground.label(hints[0])})?" if hints else ""
    raise UsageError(f"Unknown location '@{word}' at {ground.name}.{hint}")


def parse_report(args: list[str], ground: Ground, default_zone: str) -> dict[str, Any]:
    """The fields of a one-line report."""
    if not args:
        raise UsageError("Say what is happening.")
    fields: dict[str, Any] = {"type": resolve_type(args[0])}
    text: list[str] = []
    location = severity = None
    affiliation, people = "unknown", ""
    for word in args[1:]:
        low = word.lower()
        if word.startswith("@") and location is None:
            location = resolve_location(word[1:], ground)
        elif severity is None and parse_severity(word):
            severity = parse_severity(word)
        elif low.startswith(("aff=", "fans=")):
            aff = AFFILIATIONS.resolve(low.split("=", 1)[1])
            if aff is None:
                raise UsageError(f"aff= takes home, away or unknown, not '{word}'.")
            affiliation = aff
        elif re.fullmatch(r"(?:x|people=|n=)\d{1,6}", low):
            people = re.sub(r"\D", "", low)
        else:
            text.append(word)
    if location is None:
        if not default_zone:
            raise UsageError("Where? Add @<location>, e.g. @stb_walkway.")
        location = default_zone
    fields.update(location=location, severity=severity or DEFAULT_SEVERITY[fields["type"]],
                  affiliation=affiliation, people=people, description=" ".join(text))
    return fields


async def log_incident(ctx: Ctx, fx: Fixture, fields: dict[str, Any], *,
                       drop_form: bool = False,
                       extra_evidence: list[dict[str, Any]] | None = None) -> Result:
    """Write a new incident (one round trip) and alert control; shared by all report paths."""
    ground = ctx.ground(fx)
    if fields["location"] not in ground.zones and fields["location"] != "gps":
        raise UsageError(f"Unknown location '{fields['location']}'.")
    evidence = [_evidence(a) for a in ctx.cmd.attachments] + list(extra_evidence or [])
    record = {
        "type": fields["type"], "severity": str(fields["severity"]),
        "location": fields["location"], "status": "reported", "reported_at": iso(ctx.now),
        "occurred_at": fields.get("occurred_at") or iso(ctx.now), "reporter": ctx.who,
        "reporter_role": ctx.role or "", "reporter_name": ctx.member.name if ctx.member else "",
        "description": fields.get("description", ""), "affiliation": fields["affiliation"],
        "people": str(fields.get("people", "")), "fixture": fx.id,
        "evidence": str(len(evidence)),
    }
    data = {"id": "INC-\x01n\x01", **{k: record[k] for k in (
        "type", "severity", "location", "description", "affiliation", "people",
        "reported_at", "occurred_at")}}
    data["severity"] = int(fields["severity"])
    if evidence:
        data["evidence"] = evidence
    if fields.get("methane"):
        data["methane"], record["methane"] = fields["methane"], "1"
    ev = ctx.event("incident.reported", data)
    from bot.schedule.escalation import policy

    ts = int(ctx.now.timestamp())
    sim = similar_query(ctx, fx, fields, evidence)  # "looks like INC-7": same write
    applied = await ctx.store.report_incident(
        fx.id, record, ev, ts, ctx.cmd.dedupe_key, drop_form=ctx.who if drop_form else "",
        deadlines=policy(ctx.core).report_deadlines(int(fields["severity"]), ts),
        similar=sim,
    )
    merged_into = applied.vars.get("similar", "")
    n = merged_into or applied.vars["n"]
    if applied.duplicate:
        return Result(Reply(f"Already logged as {incident_id(n)}."))
    inc = applied.hashes[0]
    if merged_into and sim is not None:
        await ctx.core.changed("incident", fx.id)
        return merged_reply(ctx, fx, inc, sim)
    live = card(inc, ground, ctx.core.settings.zone)
    ctx.notify("control", live, ref=inc["id"], fixture=fx.id)
    if int(inc["severity"]) >= 3:
        ctx.notify("command", live, ref=inc["id"], fixture=fx.id)
    await ctx.core.changed("incident", fx.id)
    sev = int(inc["severity"])
    result = Result(Reply(
        f"{INCIDENT_TYPES.label(inc['type'])} at {ground.label(inc['location'])}, "
        f"severity {SEVERITIES[sev]}.\nControl has it; you'll be told when it's acknowledged.\n"
        f"Send text or a photo now to add to {inc['id']}.",
        title=f"Logged {inc['id']}",
    ))
    if inc["type"] == "suspicious_item":  # walk the reporter through HOT and the 4 Cs
        from handlers.hot import hot_prompt

        hot_prompt(result.reply, inc["n"])
    return result


def _evidence(a: Any) -> dict[str, Any]:
    if a.kind == "location":
        return {"kind": "location", "lat": a.lat, "lon": a.lon}
    return {"kind": a.kind, "file_id": a.file_id, "caption": a.caption}


async def incident_cmd(ctx: Ctx) -> Result:
    """/incident: guided form with no words, one-line report, or /incident <id> timeline."""
    fx = await ctx.fixture()
    if not ctx.args:
        from handlers.forms import start_form

        return await start_form(ctx, fx)
    if len(ctx.args) == 1 and parse_incident_id(ctx.args[0]) is not None:
        from handlers.timeline import timeline

        return await timeline(ctx, fx, parse_incident_id(ctx.args[0]) or 0)
    zone = ctx.member.zone if ctx.member else ""
    fields = parse_report(ctx.args, ctx.ground(fx), zone)
    return await log_incident(ctx, fx, fields)


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
    cls = "close" if to == "closed" else "progress"
    name = ctx.member.name if ctx.member else ctx.who
    ev = ctx.event("incident.status", {"id": incident_id(n), "from": "\x01from\x01", "to": to,
                                       "cls": cls, "note": note})
    extra = {"owner": ctx.who, "owner_name": name} if to in OWNER_STATUSES else {}
    extra["status_by_name"] = name
    if note:
        extra["last_note"] = note
    applied = await ctx.store.change_status(
        fx.id, n, to, before, ev, int(ctx.now.timestamp()), ctx.cmd.dedupe_key,
        refusal=f"INC-{n} is already \x01current\x01; nothing changed.", fields=extra,
    )
    if applied.duplicate:
        return Result(Reply(f"Already done: INC-{n} {STATUSES.label(to).lower()}."))
    inc = applied.hashes[0]
    ground = ctx.ground(fx)
    live = card(inc, ground, ctx.core.settings.zone)
    ctx.notify("control", live, ref=inc["id"], fixture=fx.id)
    if int(inc["severity"]) >= 3:
        ctx.notify("command", live, ref=inc["id"], fixture=fx.id)
    if to in ("acknowledged", "closed") and inc.get("reporter") != ctx.who:
        word = "acknowledged" if to == "acknowledged" else "closed"
        ctx.notify("user:" + inc["reporter"], Reply(
            f"Your report {inc['id']} ({INCIDENT_TYPES.label(inc['type'])}) was {word} "
            f"by {name}." + (f" “{note}”" if note else "")), fixture=fx.id)
    await ctx.core.changed("incident", fx.id)
    return Result(Reply(f"{inc['id']} {STATUSES.label(to).lower()}.", title=""))


async def add_text(ctx: Ctx, fx: Fixture, n: int, text: str, kind: str = "incident.update") \
        -> Result:
    """Add an update or evidence to an incident's timeline and its thread."""
    evidence = [_evidence(a) for a in ctx.cmd.attachments]
    if kind == "incident.update" and evidence:
        kind = "incident.evidence"
    data: dict[str, Any] = {"id": incident_id(n), "text": text}
    if evidence:
        data["evidence"] = evidence
    ev = ctx.event(kind, data)
    counter = "evidence" if kind == "incident.evidence" else "updates"
    try:
        applied = await ctx.store.add_to_incident(fx.id, n, ev, ctx.cmd.dedupe_key, counter)
    except Refused as exc:
        raise UsageError(str(exc)) from None
    if applied.duplicate:
        return Result(Reply(f"Already added to INC-{n}."))
    inc = applied.hashes[0]
    name = ctx.member.name if ctx.member else ctx.who
    what = "Evidence" if evidence else "Update"
    line = f"{what} on {inc['id']} from {name}: {text}".rstrip(": ")
    ctx.notify("control", Reply(line), fixture=fx.id, thread=inc["id"])
    live = card(inc, ctx.ground(fx), ctx.core.settings.zone)
    ctx.notify("control", live, ref=inc["id"], fixture=fx.id)
    await ctx.core.changed("incident", fx.id)
    if kind == "incident.escalated":
        ctx.notify("command", Reply(live.text, title="⚠ Escalated: " + live.title,
                                    buttons=live.buttons), fixture=fx.id)
        return Result(Reply(f"{inc['id']} escalated to the safety officer and police "
                            "commander."))
    return Result(Reply(f"Added to {inc['id']}."))


async def update_cmd(ctx: Ctx) -> Result:
    """/update <id> <text>."""
    n = _target(ctx)
    text = " ".join(ctx.args[1:])
    if not text and not ctx.cmd.attachments:
        raise UsageError("What's the update? Add some text after the id.")
    return await add_text(ctx, await ctx.fixture(), n, text)


async def note_cmd(ctx: Ctx) -> Result:
    """Plain text or a photo in a private chat: continue a form, or add to the latest report."""
    fx = await ctx.fixture()
    from handlers.forms import continue_with_text

    # The open form and the latest report are read together: one round trip of latency.
    state, last = await asyncio.gather(ctx.store.form(fx.id, ctx.who),
                                       ctx.store.last_incident_of(fx.id, ctx.who))
    handled = await continue_with_text(ctx, fx, state)
    if handled is not None:
        return handled
    n = parse_incident_id(ctx.cmd.reply_to) if ctx.cmd.reply_to else None
    if n is None:
        n = last
    if n is None:
        if ctx.cmd.attachments:
            return Result(Reply("Which incident is this for? Reply to the incident message, "
                                "or send /incident first.", ok=False))
        return Result(Reply("To report, send /incident. Send /help for commands.", ok=False))
    return await add_text(ctx, fx, n, ctx.rest)


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
    registry.add(Spec("note", "(send text or a photo)", "Add to your latest report", note_cmd,
                      hidden=True))
