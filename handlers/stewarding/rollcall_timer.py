"""The automatic roll call: every deployed steward asked to check in at a configured time
(default kick-off - 90 min; the ground's `rollcall`, or a fixture's `/fixture note rollcall`).
Planned with the briefings (bot/schedule/scheduler.py) and claimed in the same script that
records the roll call and queues its messages, so several replicas send it once."""

from __future__ import annotations

import json
import secrets
from datetime import datetime

from bot.core.dispatch import Core
from bot.domain.briefing.briefing_cadence import Slot
from bot.domain.clock import iso
from bot.domain.deployment import (
    ROLLCALL_TEXT,
    plan_of,
    post_buttons,
    rollcall_due,
    tonight,
)
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.domain.messages import Outbound
from bot.domain.outcomes import Reason
from bot.domain.procedures import Broadcast, Steward, Target, compose, target_label
from bot.domain.rota_reach import plan_record, radio_line, reach_of, short_target
from bot.store import Refused, Store
from bot.store.facades import StoreFacades
from handlers.stewarding.reach import roster_here

SYSTEM = "system:scheduler"


async def plan_rollcall(core: Core, store: Store, facades: StoreFacades, fx: Fixture,
                        now: datetime) -> list[Slot]:
    """The fixture's roll-call slot as planned now (saved in Redis when it changed); one
    that only enters the plan after its due time is never sent (like a briefing's)."""
    state = facades.stewarding
    old = await state.rollcall_plan(fx.id)
    plan = plan_of(core.settings.config_dir, fx.ground)
    want = rollcall_due(fx, plan, core.settings.zone)
    slot = None
    if want is not None:
        label, due = want
        planned = old.planned_at if old is not None and old.due == due else now
        if due > planned:
            slot = Slot(fx.id, "rollcall", label, due, planned)
    if (old.to_json() if old else None) != (slot.to_json() if slot else None):
        await state.save_rollcall_plan(fx.id, slot)
    return [slot] if slot else []


async def planned(store: Store, facades: StoreFacades, slot: Slot) -> bool:
    """Whether this roll-call slot is still the fixture's plan (not re-timed meanwhile)."""
    current = await facades.stewarding.rollcall_plan(slot.fixture)
    return current is not None and current.id == slot.id


def ground_of(core: Core, fx: Fixture) -> Ground:
    """The fixture's ground (the first configured one when it names none)."""
    return core.grounds.get(fx.ground) or next(iter(core.grounds.values()))


async def deployed(core: Core, store: Store, facades: StoreFacades, fx: Fixture) -> list[Steward]:
    """Everyone stewarding the fixture: the roster's at it, and every account linked to a
    tabard on tonight's rota."""
    roster = await roster_here(core, facades, fx)
    filled, _ = await facades.stewarding.deployment(fx.id)
    if not filled:
        return roster
    posts = plan_of(core.settings.config_dir, fx.ground or ground_of(core, fx).id
                    ).posts_for(fx.id)
    return tonight(roster, filled, await facades.stewarding.tabards(), posts)


async def send_rollcall(core: Core, store: Store, facades: StoreFacades, fx: Fixture, slot: Slot,
                        state: str,
                        by: str, now: datetime) -> list[Outbound] | None:
    """Claim the slot and send the roll call to every deployed steward in one write; None
    when another replica claimed it first."""
    ground = ground_of(core, fx)
    posts = plan_of(core.settings.config_dir, fx.ground or ground.id).posts_for(fx.id)
    filled, _ = await facades.stewarding.deployment(fx.id)
    links = await facades.stewarding.tabards() if filled else {}
    # counted against the rota, naming the planned stewards the bot cannot reach (#32)
    reach = reach_of(await deployed(core, store, facades, fx), Target("all"), ground, filled, links,
                     posts)
    to = list(reach.to)
    bid = "R-" + secrets.token_hex(3)
    label = target_label("all", ground)
    outs = compose("rollcall", bid, label, ROLLCALL_TEXT, to, fx.id,
                   title=f"📋 Roll call {slot.label} · {label}", buttons=post_buttons(posts),
                   note=radio_line(reach.planned, reach.unreached,
                                   short_target("all", ground)))
    bc = Broadcast(bid, "rollcall", "all", ROLLCALL_TEXT, iso(now), SYSTEM, len(to))
    ev = Event(kind="stewards.broadcast", at=iso(now), by=SYSTEM, role="system",
               data={"id": bid, "kind": "rollcall", "target": "all", "text": ROLLCALL_TEXT,
                     "sent": len(to), "auto": slot.label})
    claim = json.dumps({"state": state, "by": by, "at": iso(now)}, separators=(",", ":"))
    try:
        await facades.stewarding.send(fx.id, bc, {s.who: "1" for s in to},
                                          core.notifier.outbox.ops(outs), ev, "",
                                          claim=(slot.id, claim), record=plan_record(reach))
    except Refused as exc:
        if exc.reason is not Reason.CLAIMED:
            raise
        return None
    await core.changed("broadcast", fx.id)
    return outs


class RollCallSlots:
    """The automatic roll call as a kind of slot the scheduler fires (its `HomeSlots`)."""

    async def plan(self, core: Core, store: Store, fx: Fixture, now: datetime) -> list[Slot]:
        """The fixture's roll-call slot as planned now."""
        return await plan_rollcall(core, store, core.facades, fx, now)

    async def planned(self, core: Core, store: Store, slot: Slot) -> bool:
        """Whether the roll-call slot is still the fixture's plan."""
        return await planned(store, core.facades, slot)

    async def send(self, core: Core, store: Store, fx: Fixture, slot: Slot, state: str,
                   by: str, now: datetime) -> list[Outbound] | None:
        """Claim the slot and send the roll call; None when another replica has it."""
        return await send_rollcall(core, store, core.facades, fx, slot, state, by, now)
