"""Escalation timers per severity: deadlines in a Redis sorted set, swept every second.

Each incident has at most two deadlines in the fixture's `esc` sorted set: `<n>:ack` (the
next escalation tier while unacknowledged) and `<n>:open` (the next open-too-long reminder);
a missing-person search adds `<M-id>:police` (bot/schedule/missing_timer.py), a broadcast
posted once in a one-to-many chat `<id>:chase` (bot/schedule/chase_timer.py). They are
written in the report's round trip and removed in the acknowledgement's (or the close's).
A sweep fires what is due; the incident hash's tier counter guards each firing, so a tier
fires once even with several replicas sweeping at the same second.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from bot.core.dispatch import Core
from bot.domain.briefing.briefing_cadence import config_for
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.escalation_policy import SeverityPolicy, policy_for
from bot.domain.incident.incident_card import IncidentCard
from bot.domain.incident.incident_model import Incident
from bot.domain.ledger import Event
from bot.domain.messages import Button, Outbound, Reply
from bot.domain.vocab import ROLES
from bot.observe import metrics
from bot.schedule.chase_timer import fire_chase
from bot.schedule.missing_timer import fire_missing
from bot.schedule.review_timer import fire_review
from bot.store import Store

log = logging.getLogger(__name__)
SYSTEM = "system:escalation"
AUDIENCE_WORDS = {"command": "safety officer and police commander", "police": "police",
                  "control": "control room"}


def _system_event(kind: str, now: datetime, data: dict[str, Any]) -> Event:
    return Event(kind=kind, at=iso(now), by=SYSTEM, role="system", data=data)


async def swept_fixtures(core: Core, store: Store) -> list[str]:
    """Fixtures whose deadlines this process sweeps: every indexed one plus the active one
    (a safety net for deadlines written before the index existed); in a replay only the
    fixtures its drill created."""
    if core.drill is not None:
        return sorted(core.drill.created)
    ids = await store.escalating_fixtures()
    active = await store.active_fixture_id()
    if active:
        ids.add(active)
    return sorted(ids)


async def sweep_escalations(core: Core, store: Store, now: datetime) -> list[Outbound]:
    """Fire every escalation tier and reminder due by `now` in every fixture with open
    incidents (`store`: the incident log); send and return the messages. Safe to run on
    every replica at once."""
    due = await store.due_deadlines_of(await swept_fixtures(core, store), int(now.timestamp()))
    outs: list[Outbound] = []
    for fx_id, rows in due.items():
        fx = await store.fixture(fx_id)
        if fx is None:
            continue
        for member, when in rows:
            n_text, _, tag = member.partition(":")
            try:
                if tag == "police":  # a missing-person search's deadline (/missing)
                    outs += await fire_missing(core, store, fx, n_text, when, now)
                    continue
                if tag == "review":  # a decision's review time (bot/schedule/review_timer)
                    outs += await fire_review(core, store, fx, n_text, now)
                    continue
                if tag == "chase":  # a one-to-many post's chasers (bot/schedule/chase_timer)
                    outs += await fire_chase(core, store, fx, n_text, now)
                    continue
                outs += await _fire(core, store, fx, int(n_text), tag, member, when, now)
            except Exception:
                log.exception("escalation %s of %s failed", member, fx.id)
    if outs:
        await core.notifier.send(outs)
    if core.drill is None:
        await store.retire_escalations()  # the index shrinks as fixtures end
    return outs


async def next_due(core: Core, store: Store) -> datetime | None:
    """When the next deadline of a swept fixture falls due (replay steps to it)."""
    ts = await store.first_deadline_of(await swept_fixtures(core, store))
    return datetime.fromtimestamp(ts, UTC) if ts is not None else None


async def _fire(core: Core, store: Store, fx: Fixture, n: int, tag: str, member: str,
                due: int, now: datetime) -> list[Outbound]:
    inc = await store.incident(fx.id, n)
    if inc is None or tag not in ("ack", "open"):
        await store.drop_deadline(fx.id, member)
        return []
    sp = policy_for(core.settings).for_severity(inc.severity)
    outs = await (_fire_tier if tag == "ack" else _fire_reminder)(
        core, store, fx, inc, sp, member, now, _late(core, due, now))
    return outs


def _late(core: Core, due: int, now: datetime) -> str:
    """' (late: due 19:15)' for a deadline that passed while no replica could fire it (the
    store was down, or every replica was), else ''. An alert is never dropped as too late:
    the incident is still unacknowledged or open."""
    cfg = config_for(core.settings)
    if now.timestamp() - due <= cfg.on_time_tolerance.total_seconds():
        return ""
    return f" (late: due {datetime.fromtimestamp(due, UTC).astimezone(cfg.tz):%H:%M})"


async def _fire_tier(core: Core, store: Store, fx: Fixture, inc: Incident,
                     sp: SeverityPolicy, member: str, now: datetime,
                     late: str = "") -> list[Outbound]:
    i = inc.esc_next
    if inc.status != "reported" or i >= len(sp.tiers):
        await store.drop_deadline(fx.id, member)
        return []
    tier = sp.tiers[i]
    waited = int(now.timestamp()) - inc.reported_ts
    who = ", ".join(AUDIENCE_WORDS.get(a, a) for a in tier.to)
    text = f"auto: unacknowledged {_dur(waited)}, tier {i + 1} → {who}"
    ev = _system_event("incident.escalated", now, {"id": inc.id, "auto": True, "tier": i + 1,
                                                   "to": list(tier.to), "text": text})
    nxt = inc.reported_ts + sp.tiers[i + 1].after_s if i + 1 < len(sp.tiers) else None
    # Drafted from the incident as read (the claim's guards hold it unacknowledged at this
    # tier), so the claim can write the alerts to the outbox in the same script.
    reply = _alert(core, fx, inc, f"⚠ {inc.id} unacknowledged {_dur(waited)}{late}",
                   f"Escalated to {who} (tier {i + 1} of {len(sp.tiers)}).")
    if tier.methane and not inc.methane:
        reply.text += "\nMajor incident? Send a METHANE report now: /methane"
        reply.buttons[0].append(Button("METHANE report", "/methane", "danger"))
    outs = [Outbound(a, reply, fixture=fx.id) for a in tier.to]
    claimed = await store.claim_tier(fx.id, inc.n, i, ev, nxt,
                                         core.notifier.outbox.ops(outs))
    if claimed is None:
        return []
    metrics.ESCALATIONS.inc()
    return outs


async def _fire_reminder(core: Core, store: Store, fx: Fixture, inc: Incident,
                         sp: SeverityPolicy, member: str, now: datetime,
                         late: str = "") -> list[Outbound]:
    k = inc.remind_n
    if inc.status == "closed" or not sp.remind_after_s:
        await store.drop_deadline(fx.id, member)
        return []
    opened = int(now.timestamp()) - inc.reported_ts
    text = f"auto: still open after {_dur(opened)} ({inc.status.replace('_', ' ')})"
    ev = _system_event("incident.reminder", now, {"id": inc.id, "n": k + 1, "text": text})
    every = sp.remind_every_s or sp.remind_after_s
    owner = inc.owner_name or "no owner"
    reply = _alert(core, fx, inc, f"⏰ {inc.id} still open after {_dur(opened)}{late}",
                   f"Owner: {owner}. Update it, or resolve it if it is over.")
    outs = [Outbound(a, reply, fixture=fx.id) for a in sp.remind_to]
    claimed = await store.claim_reminder(fx.id, inc.n, k, ev,
                                              int(now.timestamp()) + every,
                                              core.notifier.outbox.ops(outs))
    if claimed is None:
        return []
    return outs


def _alert(core: Core, fx: Fixture, inc: Incident, title: str, tail: str) -> Reply:
    ground = core.grounds.get(fx.ground) or next(iter(core.grounds.values()))
    reporter = inc.reporter_name or ROLES.label(inc.reporter_role or "steward")
    n = inc.n
    text = (f"{inc.what} at {ground.label(inc.location)}, "
            f"severity {inc.severity}, reported by {reporter}.\n{tail}")
    buttons = [Button("Acknowledge", f"/ack {n}", "primary"), Button("Show", f"/incident {n}")]
    if inc.status != "reported":
        buttons = [Button("Show", f"/incident {n}"), Button("Resolve", f"/resolve {n}")]
    return Reply(text=text, title=title, buttons=[buttons], card=IncidentCard.of(inc, ground))


def _dur(seconds: int) -> str:
    seconds = max(0, seconds)
    if seconds < 60:
        return f"{seconds}s"
    m = seconds // 60
    return f"{m}m" if m < 60 else f"{m // 60}h{m % 60:02d}"
