"""The missing-person police timer: a child or vulnerable person not found (/found) by the
deadline /missing wrote (T+15 min by default, config/escalation.toml [missing]) is passed
to the police, with the description and where last seen, never a name. The deadline lives
in the fixture's escalation deadlines in Redis, so a restart or another replica fires it;
the claim, its event and the police's messages are one script, so it fires once."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.dispatch import Core
from bot.domain.briefing.briefing_cadence import config_for
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.ledger import Event
from bot.domain.messages import Outbound, Reply
from bot.store import Store

SYSTEM = "system:missing"


async def fire_missing(core: Core, store: Store, fx: Fixture, mid: str, due: int,
                       now: datetime) -> list[Outbound]:
    """Tell the police (and control) of a search still open at its deadline; [] when it was
    found first, another replica told them, or there is no such report."""
    state = core.facades.stewarding
    bc = await state.broadcast(fx.id, mid)
    if bc is None or bc.kind != "missing":
        await core.facades.deadlines.drop_deadline(fx.id, f"{mid}:police")
        return []
    policy = policy_for(core.settings)
    tz = config_for(core.settings).tz
    mins = policy.missing_police_after_s // 60
    who = (await state.search(fx.id, mid)).get("who", "person")
    late = ""
    if now.timestamp() - due > config_for(core.settings).on_time_tolerance.total_seconds():
        late = f" (late: due {datetime.fromtimestamp(due, UTC).astimezone(tz):%H:%M})"
    reported = datetime.fromisoformat(bc.at).astimezone(tz)
    reply = Reply(f"{bc.text}\nReported to control {reported:%H:%M}; every zone supervisor and "
                  f"exit post has the description. Not found after {mins} min: police are "
                  f"asked to take the search on. /found {mid} <where> closes it.",
                  title=f"🔎 MISSING {who.upper()} {mid}: not found after {mins} min{late}")
    outs = [Outbound(a, reply, fixture=fx.id) for a in policy.missing_to]
    ev = Event(kind="stewards.missing_police", at=iso(now), by=SYSTEM, role="system",
               data={"id": mid, "due": iso(datetime.fromtimestamp(due, UTC)),
                     "to": list(policy.missing_to)})
    if not await state.police_informed(fx.id, mid, iso(now), ev,
                                       core.notifier.outbox.ops(outs)):
        return []
    return outs
