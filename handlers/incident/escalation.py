"""Escalation timers per severity: the incident's deadlines, fired by the deadline sweep.

Each incident has at most two deadlines in the fixture's `esc` sorted set: `<n>:ack` (the
next escalation tier while unacknowledged) and `<n>:open` (the next open-too-long reminder),
written in the report's round trip and removed in the acknowledgement's (or the close's).
The home hands `fire_ack`/`fire_open` to the root (`DEADLINES`), which gives them to the
sweep (bot/schedule/deadlines.py); the incident hash's tier counter guards each firing, so
a tier fires once even with several replicas sweeping at the same second. The alert is
rendered by the incident's one renderer (card.py `alert`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from bot.core.dispatch import Core
from bot.domain.briefing.briefing_cadence import config_for
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.incident.escalation_policy import SeverityPolicy, policy_for
from bot.domain.incident.incident_model import Incident
from bot.domain.ledger import Event
from bot.domain.messages import Button, Outbound
from bot.observe import metrics
from bot.store import Store
from handlers.incident.card import alert, duration

log = logging.getLogger(__name__)
SYSTEM = "system:escalation"
AUDIENCE_WORDS = {"command": "safety officer and police commander", "police": "police",
                  "control": "control room"}


def _system_event(kind: str, now: datetime, data: dict[str, Any]) -> Event:
    return Event(kind=kind, at=iso(now), by=SYSTEM, role="system", data=data)


async def fire_ack(core: Core, store: Store, fx: Fixture, key: str, due: int,
                   now: datetime) -> list[Outbound]:
    """An unacknowledged incident's next escalation tier (deadline `<n>:ack`)."""
    return await _fire(core, store, fx, int(key), "ack", due, now)


async def fire_open(core: Core, store: Store, fx: Fixture, key: str, due: int,
                    now: datetime) -> list[Outbound]:
    """An open incident's next still-open reminder (deadline `<n>:open`)."""
    return await _fire(core, store, fx, int(key), "open", due, now)


async def _fire(core: Core, store: Store, fx: Fixture, n: int, tag: str, due: int,
                now: datetime) -> list[Outbound]:
    member = f"{n}:{tag}"
    inc = await store.incident(fx.id, n)
    if inc is None:
        await core.facades.deadlines.drop_deadline(fx.id, member)
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
        await core.facades.deadlines.drop_deadline(fx.id, member)
        return []
    tier = sp.tiers[i]
    waited = int(now.timestamp()) - inc.reported_ts
    who = ", ".join(AUDIENCE_WORDS.get(a, a) for a in tier.to)
    text = f"auto: unacknowledged {duration(waited)}, tier {i + 1} → {who}"
    ev = _system_event("incident.escalated", now, {"id": inc.id, "auto": True, "tier": i + 1,
                                                   "to": list(tier.to), "text": text})
    nxt = inc.reported_ts + sp.tiers[i + 1].after_s if i + 1 < len(sp.tiers) else None
    # Drafted from the incident as read (the claim's guards hold it unacknowledged at this
    # tier), so the claim can write the alerts to the outbox in the same script.
    reply = alert(inc, _ground(core, fx), f"⚠ {inc.id} unacknowledged {duration(waited)}{late}",
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
        await core.facades.deadlines.drop_deadline(fx.id, member)
        return []
    opened = int(now.timestamp()) - inc.reported_ts
    text = f"auto: still open after {duration(opened)} ({inc.status.replace('_', ' ')})"
    ev = _system_event("incident.reminder", now, {"id": inc.id, "n": k + 1, "text": text})
    every = sp.remind_every_s or sp.remind_after_s
    owner = inc.owner_name or "no owner"
    reply = alert(inc, _ground(core, fx), f"⏰ {inc.id} still open after {duration(opened)}{late}",
                   f"Owner: {owner}. Update it, or resolve it if it is over.")
    outs = [Outbound(a, reply, fixture=fx.id) for a in sp.remind_to]
    claimed = await store.claim_reminder(fx.id, inc.n, k, ev,
                                              int(now.timestamp()) + every,
                                              core.notifier.outbox.ops(outs))
    if claimed is None:
        return []
    return outs


def _ground(core: Core, fx: Fixture) -> Ground:
    return core.grounds.get(fx.ground) or next(iter(core.grounds.values()))
