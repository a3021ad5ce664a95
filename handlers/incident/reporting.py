"""The shared steps of reporting: parse a report, log it (or join it to the same incident),
add updates and evidence, and tell control. Every report path (one line, guided form, METHANE,
split-out) goes through here."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from typing import Any

from bot.core.dispatch import Ctx, UsageError
from bot.core.refusals import said
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.incident.incident_card import CARD, LOGGED, LiveRef
from bot.domain.incident.incident_model import Incident, incident_id
from bot.domain.incident.incident_rules import replan_after_s
from bot.domain.incident.when import WhenError, take_when
from bot.domain.messages import Attachment, Button, Outbound, Reply, Result
from bot.domain.outcomes import Added, Joined, Logged
from bot.domain.vocab import AFFILIATIONS, INCIDENT_TYPES, SEVERITIES, STATUSES
from bot.store import Refused, Similar
from handlers.common.words import resolve_word
from handlers.incident.card import age, card
from handlers.incident.live_views import announce, card_audiences

DEFAULT_SEVERITY = {
    "missile": 3, "pyro": 3, "pitch_incursion": 3, "segregation_breach": 4, "disorder": 4,
    "antisocial": 2, "discriminatory": 3, "alcohol": 2, "drugs": 2, "criminal_damage": 2,
    "assault_staff": 4, "crowd_density": 4, "persistent_standing": 1, "suspicious_item": 4,
    "medical": 3, "safeguarding": 3, "fire": 4, "structural": 4, "entry": 2, "drone": 3,
    "ejection": 1, "other": 2,
}


MAX_PEOPLE = 100_000  # more than any ground holds: a bigger count is a typo
SEVERITY_WORD = re.compile(r"(?:s|sev|severity)=?(\d{1,6})")
PEOPLE_WORD = re.compile(r"(?:x|people=|n=)(\d{1,12})")


def parse_severity(word: str) -> int | None:
    """s4, sev4, sev=4, severity=4 -> 4."""
    m = re.fullmatch(r"(?:s|sev|severity)=?([1-5])", word.lower())
    return int(m.group(1)) if m else None


def resolve_type(word: str) -> str:
    """An incident type key, or a UsageError with suggestions."""
    return resolve_word(INCIDENT_TYPES, word, "incident type", "Send /help incident for the list.",
                        field="type")


def resolve_location(word: str, ground: Ground) -> str:
    """A zone id in the ground, or a UsageError with suggestions."""
    zone = ground.resolve(word)
    if zone:
        return zone
    block = ground.block_number(word)
    if block is not None:
        raise UsageError(f"No block {block} at {ground.name} (blocks {ground.block_ranges()}).")
    hints = ground.suggest(word)
    hint = f" Did you mean @{hints[0]} ({ground.label(hints[0])})?" if hints else ""
    raise UsageError(f"Unknown location '@{word}' at {ground.name}.{hint}", field="location")


def parse_report(args: list[str], ground: Ground, default_zone: str,
                 now: datetime | None = None, tz: tzinfo = UTC) -> dict[str, Any]:
    """The fields of a one-line report (with `now`, a time said in it: "10 min ago",
    "at 14:52" in tz, is when it happened)."""
    if not args:
        raise UsageError("Say what is happening.", field="type")
    fields: dict[str, Any] = {"type": resolve_type(args[0])}
    if now is not None:
        try:
            occurred, rest = take_when(args[1:], now, tz)
        except WhenError as exc:
            raise UsageError(str(exc), field="occurred_at") from None
        args = [args[0], *rest]
        if occurred is not None:
            fields["occurred_at"] = iso(occurred)
    text: list[str] = []
    location = severity = None
    affiliation, people = "unknown", ""
    for word in args[1:]:
        low = word.lower()
        if word.startswith("@"):
            if location is not None:
                raise UsageError(f"One place per report: {word} as well as @{location}.")
            location = resolve_location(word[1:], ground)
        elif m := SEVERITY_WORD.fullmatch(low):
            if severity is not None:
                raise UsageError(f"One severity per report: {word} as well as s{severity}.")
            severity = parse_severity(word)
            if severity is None:
                raise UsageError(f"Severity is 1 to 5, not {m.group(1)}.")
        elif low.startswith(("aff=", "fans=")):
            aff = AFFILIATIONS.resolve(low.split("=", 1)[1])
            if aff is None:
                raise UsageError(f"aff= takes home, away or unknown, not '{word[:40]}'.",
                                 field="affiliation")
            affiliation = aff
        elif m := PEOPLE_WORD.fullmatch(low):
            count = int(m.group(1))
            if not 1 <= count <= MAX_PEOPLE:
                raise UsageError(f"About how many people? 1 to {MAX_PEOPLE:,}, not {count:,}.")
            if people:
                raise UsageError(f"One people count per report: {word} as well as x{people}.")
            people = str(count)
        else:
            text.append(word)
    if location is None:
        if not default_zone:
            raise UsageError("Where? Add @<location>, e.g. @stb_walkway.", field="location")
        location = default_zone
    fields.update(location=location, severity=severity or DEFAULT_SEVERITY[fields["type"]],
                  affiliation=affiliation, people=people, description=" ".join(text))
    return fields


async def log_incident(ctx: Ctx, fx: Fixture, fields: dict[str, Any], *,
                       drop_form: bool = False, form_id: str = "",
                       extra_evidence: list[dict[str, Any]] | None = None,
                       also: list[Any] | None = None, answer: str = LOGGED) -> Result:
    """Write a new incident (one round trip) and alert control; shared by all report paths.
    `also`: the store's ops for what caused the report, written in the same round trip;
    `answer`: the view of the reporter's answer stored with it (see LiveViews)."""
    ground = ctx.ground(fx)
    if fields["location"] not in ground.zones and fields["location"] != "gps":
        raise UsageError(f"Unknown location '{fields['location']}'.", field="location")
    evidence = [evidence_of(a) for a in ctx.cmd.attachments] + list(extra_evidence or [])
    record = {
        "type": fields["type"], "severity": str(fields["severity"]),
        "location": fields["location"], "status": "reported", "reported_at": iso(ctx.now),
        "occurred_at": fields.get("occurred_at") or iso(ctx.now), "reporter": ctx.who,
        "reporter_role": ctx.role or "", "reporter_name": ctx.member.name if ctx.member else "",
        "description": fields.get("description", ""), "affiliation": fields["affiliation"],
        "people": str(fields.get("people", "")), "fixture": fx.id,
        "evidence": str(len(evidence)),
    }
    if ctx.cmd.at is not None:  # the platform's time beside ours: a slow network shows
        record["platform_at"] = iso(ctx.cmd.at)
    # None: the store fills in the number the write takes
    data: dict[str, Any] = {"id": None, **{k: record[k] for k in (
        "type", "severity", "location", "description", "affiliation", "people",
        "reported_at", "occurred_at")}}
    if "platform_at" in record:
        data["platform_at"] = record["platform_at"]
    data["severity"] = int(fields["severity"])
    if evidence:
        data["evidence"] = evidence
    if fields.get("methane"):
        data["methane"], record["methane"] = fields["methane"], "1"
    if fields.get("inspection"):  # the failed item's label: the inspector's answer shows it
        record["inspection"] = fields["inspection"]
        # what failed, typed: the incident's title says a check failed, not that it happened
        record["failed_check"] = data["failed_check"] = fields.get("failed_check", "")
        if fields.get("critical"):  # and that it holds the turnstiles
            record["inspection_critical"] = "1"
    ev = ctx.event("incident.reported", data)
    ts = int(ctx.now.timestamp())
    sim = similar_query(ctx, fx, fields, evidence)  # "looks like INC-7": same write
    # What control and the reporter will see goes into the outbox in the same write, as
    # references to the incident it numbers: rendered at send time from its record.
    refs = _references(ctx, fx, int(fields["severity"]), answer)
    deadlines = policy_for(ctx.core.settings).report_deadlines(int(fields["severity"]), ts)
    if deadlines:  # the sweep must find them (listed first: crash-safe)
        await ctx.facades.deadlines.index_escalation(fx.id)
    applied = await ctx.store.report_incident(
        fx.id, record, ev, ts, ctx.cmd.dedupe_key, drop_form=ctx.who if drop_form else "",
        form_id=form_id, deadlines=deadlines,
        similar=sim, last_ttl=ctx.core.settings.note_window_seconds,
        outbox=ctx.outbox.ops(refs), also=also,
    )
    if applied.duplicate:  # a redelivery: the first answer is already in the outbox
        n = applied.n
        again = await joined_again(ctx, fx, n, sim) if applied.joined else None
        if again is not None:
            return again
        return Result(Reply(f"Already logged as {incident_id(n)}.",
                            title=f"Logged {incident_id(n)}"),
                      queued=ctx.reply_outbound(Reply(""), fx.id) is not None
                      and not applied.joined, outcome=Logged(n, again=True))
    inc = applied.incident
    if applied.joined and sim is not None:
        await ctx.core.changed("incident", fx.id)
        return merged_reply(ctx, fx, inc, sim)
    outs, result = announce(ctx.core.grounds, ctx.core.settings, fx, inc)
    # Stored when the outbox is in the store (the script wrote the references); else they
    # are added to it after the write, rendered.
    if refs and all(o.stored for o in refs):
        outs = [replace(o, stored=True) for o in outs]
        result.queued = any(o.audience.startswith("user:") for o in refs)
    ctx.outbound += outs
    await ctx.core.changed("incident", fx.id)
    result.outcome = Logged(inc.n)
    return result


def _references(ctx: Ctx, fx: Fixture, severity: int, answer: str = LOGGED) -> list[Outbound]:
    """A new incident's announcement before its number is known: one card reference for
    every audience that gets it, plus the reporter's answer (when the adapter lets the core
    queue it) in its `answer` view."""
    audience = ",".join(card_audiences(severity))
    refs = [Outbound(audience, Reply(""), fixture=fx.id, live=LiveRef(CARD))]
    mine = ctx.reply_outbound(Reply(""), fx.id)
    return refs + ([replace(mine, live=LiveRef(answer))] if mine else [])


def evidence_of(a: Attachment) -> dict[str, Any]:
    """An attachment as an evidence record: what it is, in one line, and how to fetch it."""
    if a.kind == "location":
        point: dict[str, Any] = {"kind": "location", "lat": a.lat, "lon": a.lon}
        if a.live:  # it moves: its latest position is kept under this key (move_live)
            point["live"] = a.live
        return point | ({"what": a.describe(), "detail": a.detail} if a.detail else {})
    rec: dict[str, Any] = {"kind": a.kind, "what": a.describe()}
    for key, value in (("file_id", a.file_id), ("caption", a.caption), ("lat", a.lat),
                       ("lon", a.lon), ("duration", a.duration), ("mime_type", a.mime_type),
                       ("detail", a.detail), ("platform", a.platform)):
        if value or key in ("file_id", "caption"):
            rec[key] = value
    return rec


async def add_text(ctx: Ctx, fx: Fixture, n: int, text: str, kind: str = "incident.update",
                   evidence: list[dict[str, Any]] | None = None) -> Result:
    """Add an update or evidence (the command's attachments, unless `evidence` gives their
    records) to an incident's timeline and its thread."""
    if evidence is None:
        evidence = [evidence_of(a) for a in ctx.cmd.attachments]
    if kind == "incident.update" and evidence:
        kind = "incident.evidence"
    data: dict[str, Any] = {"id": incident_id(n), "text": text}
    if evidence:
        data["evidence"] = evidence
    ev = ctx.event(kind, data)
    counter = "evidence" if kind == "incident.evidence" else "updates"
    live = {a.live: live_position(ctx, a) for a in ctx.cmd.attachments if a.live}
    try:
        applied = await ctx.store.add_to_incident(fx.id, n, ev, ctx.cmd.dedupe_key, counter,
                                                  live=live)
    except Refused as exc:
        raise UsageError(said(exc)) from None
    if applied.duplicate:
        return Result(Reply(f"Already added to INC-{n}."))
    inc = applied.incident
    name = ctx.member.name if ctx.member else ctx.who
    what = "Evidence" if evidence else "Update"
    kept = "; ".join(a.describe() for a in ctx.cmd.attachments)
    told = " — ".join(p for p in (kept, text) if p)
    line = f"{what} on {inc.id} from {name}: {told}".rstrip(": ")
    ctx.notify("control", Reply(line, media=list(ctx.cmd.attachments)), fixture=fx.id,
               thread=inc.id)
    live = card(inc, ctx.ground(fx), ctx.core.settings.zone)
    ctx.notify("control", live, ref=inc.id, fixture=fx.id)
    await ctx.core.changed("incident", fx.id)
    if kind == "incident.escalated":
        ctx.notify("command", replace(live, title="⚠ Escalated: " + live.title),
                   fixture=fx.id)
        return Result(Reply(f"{inc.id} escalated to the safety officer and police "
                            "commander."))
    place = ctx.ground(fx).short_label(inc.location, 40)
    what = f"{inc.id} ({inc.what} at {place})"
    return Result(Reply(f"Added to {what}: {kept}." if kept else f"Added to {what}."),
                  outcome=Added(inc.n))


def live_position(ctx: Ctx, a: Attachment) -> dict[str, Any]:
    """A live location's position and when the platform says it was there."""
    return {"lat": a.lat, "lon": a.lon, "at": iso(ctx.cmd.at or ctx.now)}


async def move_live(ctx: Ctx, fx: Fixture, a: Attachment) -> Result | None:
    """A later position of a live location kept as evidence: its latest position and time
    updated, and the move appended to the incident's timeline. Silent: nobody is told of
    each step (a steward's phone sends one every few seconds); None when it is no
    incident's."""
    kept = await ctx.facades.reports.live_location(fx.id, a.live)
    if kept is None:
        return None
    n = int(kept["n"])
    pos = live_position(ctx, a)
    ev = ctx.event("incident.live_location", {"id": incident_id(n), "live": a.live, **pos})
    try:
        await ctx.facades.reports.move_live(fx.id, n, a.live, pos, ev, ctx.cmd.dedupe_key)
    except Refused:  # the incident is gone (merged, a test reset): nothing to move
        pass
    return Result(Reply("", ok=True))


def similar_query(ctx: Ctx, fx: Fixture, fields: dict[str, Any],
                  evidence: list[dict[str, Any]]) -> Similar | None:
    """What the report script needs to spot and merge 'the same incident', or None."""
    window = policy_for(ctx.core.settings).merge_window_s
    if window <= 0 or fields.get("new"):
        return None
    ground = ctx.ground(fx)
    loc = fields["location"]
    near = ground.nearby(loc)
    token = merge_token(ctx, fx)
    name = ctx.member.name if ctx.member else ctx.who
    report = {k: fields.get(k) for k in ("type", "location", "severity", "description",
                                         "affiliation", "people")}
    text = (f"report from {name}: {INCIDENT_TYPES.label(fields['type'])} at "
            f"{ground.label(loc)}, severity {fields['severity']}"
            + (f": {fields['description']}" if fields.get("description") else ""))
    # the id (None) is the store's to fill in: the incident the report joins
    data: dict[str, Any] = {"id": None, "reporter": ctx.who, "token": token,
                            "report": report | {"at": iso(ctx.now)}, "text": text}
    if evidence:
        data["evidence"] = evidence
    ev = ctx.event("incident.merged", data)
    # The split record names the first incident (None: the store fills it in).
    record = {"who": ctx.who, "fields": fields, "evidence": evidence, "at": ev.at,
              "first": None}
    sev = int(fields["severity"])
    return Similar(since=int(ctx.now.timestamp()) - window, near=near, event=ev,
                   token=token, record=record, severity=sev,
                   ack_after_s=replan_after_s(policy_for(ctx.core.settings), sev))


def merge_token(ctx: Ctx, fx: Fixture) -> str:
    """Names a report's merge (for its split button): from the command's dedupe key, so a
    redelivery names the same one."""
    key = ctx.cmd.dedupe_key
    return hashlib.sha256(f"{fx.id}|{key}".encode()).hexdigest()[:8] if key \
        else secrets.token_hex(4)


async def joined_again(ctx: Ctx, fx: Fixture, n: int, sim: Similar | None = None) \
        -> Result | None:
    """A redelivered report that joined INC-n: its 'Added to' answer rendered again (None when
    it cannot be). The first run queued its messages after its write, once per command, so
    this adds nothing then, and is what a crash in between kept from going."""
    if not ctx.cmd.dedupe_key:
        return None
    if sim is None:  # the form that made it is gone: the merge record has the report
        rec = await ctx.facades.reports.merge_record(fx.id, merge_token(ctx, fx))
        sim = similar_query(ctx, fx, rec["fields"], rec.get("evidence", [])) if rec else None
    inc = await ctx.store.incident(fx.id, n) if sim is not None else None
    return merged_reply(ctx, fx, inc, sim) if inc is not None and sim is not None else None


def merged_reply(ctx: Ctx, fx: Fixture, inc: Incident, sim: Similar) -> Result:
    """Tell the reporter and control that the report joined an existing incident."""
    ground = ctx.ground(fx)
    text = sim.event.data["text"]
    ctx.notify("control", Reply(f"Same incident, another {text}"), fixture=fx.id,
               thread=inc.id)
    live = card(inc, ground, ctx.core.settings.zone)
    ctx.notify("control", live, ref=inc.id, fixture=fx.id)
    raised = inc.marks.get("amended_at") == sim.event.at and inc.severity == sim.severity
    if raised and sim.severity >= 3:
        ctx.notify("command", live, ref=inc.id, fixture=fx.id)
    line = (f"Looks like {inc.id}: {inc.what} at "
            f"{ground.label(inc.location)}, {age(inc.reported_at, ctx.now)} ago, "
            f"{STATUSES.label(inc.status).lower()}. Your report was added to it, so "
            "control has it now (not counted twice).")
    if raised:
        line += (f"\nRaised to severity {SEVERITIES[sim.severity]}: the highest severity "
                 "reported counts.")
    buttons = [[Button(f"Keep with {inc.id}", f"/incident {inc.n}"),
                Button("No, it's a new incident", f"/merge {sim.token} new", "danger")]]
    return Result(Reply(line, title=f"Added to {inc.id}", buttons=buttons),
                  outcome=Joined(inc.n))
