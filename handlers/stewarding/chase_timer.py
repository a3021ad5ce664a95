"""Chasing a one-to-many post: a broadcast posted once in the stewards' alert channel
(handlers.stewarding.reach) whose targeted stewards have not all tapped "I have it" by its chase
deadline ([broadcast] chase_after_s in config/escalation.toml) sends each of them a direct
message, the zones where the fewest have it first, as chasers (they take only their share
of the platform's rate). The deadline lives with the escalations in Redis; the claim, its
event and the chasers are one script, so it fires once."""

from __future__ import annotations

from datetime import datetime

from bot.core.dispatch import Core
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ledger import Event
from bot.domain.messages import Outbound
from bot.domain.procedures import chasers, target_label, worst_first
from bot.store import Store
from bot.store.stewarding_keys import chase_member
from handlers.stewarding.rollcall_timer import deployed, ground_of

SYSTEM = "system:chase"


async def fire_chase(core: Core, store: Store, fx: Fixture, bid: str,
                     _due: int, now: datetime) -> list[Outbound]:
    """A direct message to each targeted steward still without the broadcast's "I have it";
    [] when everyone has it, another replica chased it, or there is no such broadcast."""
    facades = core.facades  # the records by purpose, built once by the root
    state = facades.stewarding
    bc = await state.broadcast(fx.id, bid)
    if bc is None or not bc.missing:
        await core.facades.deadlines.drop_deadline(fx.id, chase_member(bid))
        return []
    zones = {s.who: s.zone for s in await deployed(core, store, facades, fx)}
    order = worst_first(bc, zones)
    outs = chasers(bc, target_label(bc.target, ground_of(core, fx)), order, fx.id)
    ev = Event(kind="stewards.chased", at=iso(now), by=SYSTEM, role="system",
               data={"id": bid, "to": len(order)})
    if not await state.chased(fx.id, bid, iso(now), ev, core.notifier.outbox.ops(outs)):
        return []
    return outs
