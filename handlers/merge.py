"""Many stewards, one event: offer "looks like INC-7: add to it, or new?" and merge."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from typing import Any

from bot.clock import iso
from bot.core import Core, Ctx, Registry, Spec, UsageError
from bot.escalation import policy
from bot.grounds import Ground
from bot.ledger import Event
from bot.lifecycle_store import (
    already_applied,
    load_offer,
    merge_report,
    recent_incidents,
    save_offer,
    take_offer,
)
from bot.messages import Button, Outbound, Reply, Result
from bot.models import Fixture, incident_id, parse_incident_id
from bot.store import Refused
from bot.vocab import INCIDENT_TYPES, STATUSES
from handlers.cards import age, card

MERGE_USAGE = "/merge <offer> <id|new>"


def _same_event(inc: dict[str, str], fields: dict[str, Any], ground: Ground) -> bool:
    """Open, same type, same or adjacent zone, and not home fans versus away fans."""
    affs = {inc.get("affiliation", "unknown"), fields.get("affiliation", "unknown")}
    return (inc.get("status") != "closed" and inc.get("type") == fields["type"]
            and ground.near(inc["location"], fields["location"])
            and (len(affs) == 1 or "unknown" in affs))


async def candidates(ctx: Ctx, fx: Fixture, fields: dict[str, Any]) -> list[dict[str, str]]:
    """Open incidents of the same type, same or adjacent zone, within the merge window;
    same zone first, then oldest."""
    window = policy(ctx.core).merge_window_s
    if window <= 0:
        return []
    ground = ctx.ground(fx)
    since = int(ctx.now.timestamp()) - window
    out = [i for i in await recent_incidents(ctx.store, fx.id, since)
           if _same_event(i, fields, ground)]
    return sorted(out, key=lambda i: (i["location"] != fields["location"], int(i["n"])))


async def offer_merge(ctx: Ctx, fx: Fixture, fields: dict[str, Any],
                      evidence: list[dict[str, Any]], drop_form: bool) -> Result | None:
    """A merge offer instead of a new incident, or None to log it as new."""
    if await already_applied(ctx.store, fx.id, ctx.cmd.dedupe_key):
        return None  # a redelivery: let the report path say "already logged"
    found = (await candidates(ctx, fx, fields))[:2]
    if not found:
        return None
    pol = policy(ctx.core)
    key = ctx.cmd.dedupe_key  # deterministic for a given inbound event (replays, retries)
    token = hashlib.sha256(f"{fx.id}|{key}".encode()).hexdigest()[:8] if key \
        else secrets.token_hex(4)
    offer = {"who": ctx.who, "fields": {k: v for k, v in fields.items() if k != "new"},
             "evidence": evidence, "at": iso(ctx.now), "first": found[0]["n"]}
    ttl = pol.merge_offer_s + 3600
    await save_offer(ctx.store, fx.id, token, offer, int(ctx.now.timestamp())
                     + pol.merge_offer_s, ttl)
    if drop_form:
        await ctx.store.drop_form(fx.id, ctx.who)
    ground = ctx.ground(fx)
    first = found[0]
    line = (f"Looks like {first['id']}: {INCIDENT_TYPES.label(first['type'])} at "
            f"{ground.label(first['location'])}, {age(first['reported_at'], ctx.now)} ago, "
            f"{STATUSES.label(first['status']).lower()}. Add to it, or new?")
    buttons = [[Button(f"Add to {i['id']}", f"/merge {token} {i['n']}", "primary")]
               for i in found]
    buttons.append([Button("New incident", f"/merge {token} new")])
    note = (f"Not logged yet: if you don't choose within {pol.merge_offer_s // 60 or 1} min "
            f"it is added to {first['id']}.")
    return Result(Reply(f"{line}\n{note}", title="Same incident?", buttons=buttons))


def _report_text(offer: dict[str, Any], who: str) -> str:
    f = offer["fields"]
    desc = f": {f['description']}" if f.get("description") else ""
    return f"report from {who}: {INCIDENT_TYPES.label(f['type'])} at {f['location']}, " \
           f"severity {f['severity']}{desc}"


def _merge_event(offer: dict[str, Any], n: int, at: str, by: str, role: str, name: str,
                 auto: bool) -> Event:
    f = offer["fields"]
    data: dict[str, Any] = {
        "id": incident_id(n), "auto": auto, "reporter": offer["who"],
        "report": {k: f.get(k) for k in ("type", "location", "severity", "description",
                                         "affiliation", "people")} | {"at": offer["at"]},
        "text": _report_text(offer, name),
    }
    if offer.get("evidence"):
        data["evidence"] = offer["evidence"]
    return Event(kind="incident.merged", at=at, by=by, role=role, data=data)


async def merge_cmd(ctx: Ctx) -> Result:
    """/merge <offer> <id|new>: the reporter's answer to "add to it, or new?"."""
    if len(ctx.args) != 2:
        raise UsageError("Merge buttons only.")
    token, choice = ctx.args
    fx = await ctx.fixture()
    offer = await load_offer(ctx.store, fx.id, token)
    if offer is None:
        return Result(Reply("Already handled: that report was added or logged.", ok=False))
    if offer["who"] != ctx.who:
        return Result(Reply("Only the person who reported it can choose.", ok=False))
    if choice.lower() == "new":
        taken = await take_offer(ctx.store, fx.id, token)
        if taken is None:
            return Result(Reply("Already handled: that report was added or logged.", ok=False))
        from handlers.incidents import log_incident

        fields = {**taken["fields"], "new": True, "occurred_at": taken["at"]}
        return await log_incident(ctx, fx, fields, extra_evidence=taken.get("evidence", []))
    n = parse_incident_id(choice)
    if n is None:
        raise UsageError(f"'{choice}' is not an incident id.")
    name = ctx.member.name if ctx.member else ctx.who
    ev = _merge_event(offer, n, iso(ctx.now), ctx.who, ctx.role or "", name, auto=False)
    try:
        applied = await merge_report(ctx.store, fx.id, n, ev, ctx.cmd.dedupe_key, token)
    except Refused as exc:
        return Result(Reply(str(exc), ok=False))
    if applied.duplicate:
        return Result(Reply(f"Already added to INC-{n}."))
    inc = applied.hashes[0]
    ctx.notify("control", Reply(f"Merged into {inc['id']}: {ev.data['text']}"), fixture=fx.id,
               thread=inc["id"])
    ctx.notify("control", card(inc, ctx.ground(fx), ctx.core.settings.zone), ref=inc["id"],
               fixture=fx.id)
    await ctx.core.changed("incident", fx.id)
    return Result(Reply(f"Added to {inc['id']} (not counted twice). Send text or a photo to "
                        "add more."))


async def expire_offer(core: Core, fx: Fixture, token: str, now: datetime) -> list[Outbound]:
    """An unanswered offer falls due: add it to the first match so no report is lost."""
    offer = await load_offer(core.store, fx.id, token)
    if offer is None:
        from bot.lifecycle_store import drop_deadline

        await drop_deadline(core.store, fx.id, f"offer:{token}")
        return []
    n = int(offer["first"])
    member = core.roster.get(offer["who"])
    ev = _merge_event(offer, n, iso(now), "system:merge", "system",
                      member.name if member else offer["who"], auto=True)
    try:
        applied = await merge_report(core.store, fx.id, n, ev, "", token)
    except Refused:
        return []
    inc = applied.hashes[0]
    await core.changed("incident", fx.id)
    return [Outbound("user:" + offer["who"], Reply(f"No answer, so your report was added to "
                                                   f"{inc['id']}.")),
            Outbound("control", Reply(f"Merged into {inc['id']}: {ev.data['text']}"),
                     fixture=fx.id, thread=inc["id"])]


def register(registry: Registry) -> None:
    """Add the hidden merge command (its buttons)."""
    registry.add(Spec("merge", MERGE_USAGE, "Add a report to an existing incident, or log new",
                      merge_cmd, hidden=True))
