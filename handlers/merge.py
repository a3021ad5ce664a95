"""Many stewards, one event: a report that looks like an open incident is added to it at once
(control sees it straight away, counts are not doubled) and the reporter can split it out."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.messages import Button, Reply, Result
from bot.domain.clock import iso
from bot.domain.models import Fixture
from bot.domain.vocab import INCIDENT_TYPES, STATUSES
from bot.store import Similar
from bot.store.lifecycle import take_merge, unmerge
from handlers.cards import age, card

MERGE_USAGE = "/merge <token> new"
SIMILAR = "\x01similar\x01"  # the store fills in the matched incident's number


def similar_query(ctx: Ctx, fx: Fixture, fields: dict[str, Any],
                  evidence: list[dict[str, Any]]) -> Similar | None:
    """What the report script needs to spot and merge 'the same incident', or None."""
    from bot.schedule.escalation import policy

    window = policy(ctx.core).merge_window_s
    if window <= 0 or fields.get("new"):
        return None
    ground = ctx.ground(fx)
    loc = fields["location"]
    near = ground.nearby(loc)
    key = ctx.cmd.dedupe_key
    token = hashlib.sha256(f"{fx.id}|{key}".encode()).hexdigest()[:8] if key \
        else secrets.token_hex(4)
    name = ctx.member.name if ctx.member else ctx.who
    report = {k: fields.get(k) for k in ("type", "location", "severity", "description",
                                         "affiliation", "people")}
    text = (f"report from {name}: {INCIDENT_TYPES.label(fields['type'])} at "
            f"{ground.label(loc)}, severity {fields['severity']}"
            + (f": {fields['description']}" if fields.get("description") else ""))
    data: dict[str, Any] = {"id": f"INC-{SIMILAR}", "reporter": ctx.who, "token": token,
                            "report": report | {"at": iso(ctx.now)}, "text": text}
    if evidence:
        data["evidence"] = evidence
    ev = ctx.event("incident.merged", data)
    # The split record names the first incident through the store's variable: keep the
    # placeholder as raw bytes (json.dumps would escape them).
    record = json.dumps({"who": ctx.who, "fields": fields, "evidence": evidence,
                         "at": ev.at, "first": SIMILAR}).replace("\\u0001", "\x01")
    return Similar(since=int(ctx.now.timestamp()) - window, near=near, event=ev,
                   token=token, record=record)


def merged_reply(ctx: Ctx, fx: Fixture, inc: dict[str, str], sim: Similar) -> Result:
    """Tell the reporter and control that the report joined an existing incident."""
    ground = ctx.ground(fx)
    text = sim.event.data["text"]
    ctx.notify("control", Reply(f"Same incident, another {text}"), fixture=fx.id,
               thread=inc["id"])
    ctx.notify("control", card(inc, ground, ctx.core.settings.zone), ref=inc["id"],
               fixture=fx.id)
    line = (f"Looks like {inc['id']}: {INCIDENT_TYPES.label(inc['type'])} at "
            f"{ground.label(inc['location'])}, {age(inc['reported_at'], ctx.now)} ago, "
            f"{STATUSES.label(inc['status']).lower()}. Your report was added to it, so "
            "control has it now (not counted twice).")
    buttons = [[Button(f"Keep with {inc['id']}", f"/incident {inc['n']}"),
                Button("No, it's a new incident", f"/merge {sim.token} new", "danger")]]
    return Result(Reply(line, title=f"Added to {inc['id']}", buttons=buttons))


async def merge_cmd(ctx: Ctx) -> Result:
    """/merge <token> new: the reporter says it is a separate incident after all."""
    if len(ctx.args) != 2 or ctx.args[1].lower() != "new":
        raise UsageError("Merge buttons only.")
    fx = await ctx.fixture()
    taken = await take_merge(ctx.store, fx.id, ctx.args[0], ctx.who)
    if taken is None:
        return Result(Reply("Already handled: that report was split out or has expired.",
                            ok=False))
    from handlers.incidents import log_incident

    fields = {**taken["fields"], "new": True, "occurred_at": taken["at"]}
    result = await log_incident(ctx, fx, fields, extra_evidence=taken.get("evidence", []))
    first = int(taken["first"])
    ev = ctx.event("incident.unmerged", {"id": f"INC-{first}", "token": ctx.args[0],
                                         "reporter": taken["who"],
                                         "now": result.reply.title.removeprefix("Logged ")})
    await unmerge(ctx.store, fx.id, first, ev)
    await ctx.core.changed("incident", fx.id)
    return result




def register(registry: Registry) -> None:
    """Add the hidden merge command (its button)."""
    registry.add(Spec("merge", MERGE_USAGE, "Split a report out of the incident it joined",
                      merge_cmd, hidden=True))
