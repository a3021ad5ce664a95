"""The scheduler's state: briefing plans, slot claims and missed records (under each
fixture's hash tag)."""

from __future__ import annotations

import json
from datetime import datetime

from bot.domain.briefing.briefing_cadence import Slot, dumps, loads
from bot.domain.clock import iso
from bot.domain.outcomes import Reason
from bot.store.base import Refused, fx_prefix, guard
from bot.store.gateway import Gateway
from bot.store.ops import Hset, Op, RequireMissing, Set

CLAIM_TTL = 120 * 86400  # a claim outlives any re-send window by far
PLAN_TTL = 400 * 86400


class Plans:
    """Briefing plans, slot claims and missed firings."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def load_plan(self, fx_id: str) -> list[Slot]:
        """The fixture's planned briefings plus its summary slot (if full time was declared)."""
        p = fx_prefix(fx_id, self.space)
        briefings, summary = await self.gateway.call(
            lambda r: r.mget(p + "plan", p + "plan:summary"))
        return loads(briefings) + ([Slot.from_json(json.loads(summary))] if summary else [])

    async def save_briefing_plan(self, fx_id: str, slots: list[Slot]) -> None:
        """Replace the fixture's briefing plan."""
        await self.gateway.call(
            lambda r: r.set(fx_prefix(fx_id, self.space) + "plan", dumps(slots), ex=PLAN_TTL))

    async def add_summary_slot(self, slot: Slot) -> bool:
        """Plan the post-match summary once (SET NX): True if this call planned it."""
        raw = json.dumps(slot.to_json(), separators=(",", ":"))
        return bool(await self.gateway.call(
            lambda r: r.set(fx_prefix(slot.fixture, self.space) + "plan:summary", raw,
                                                nx=True, ex=PLAN_TTL)))

    async def claim_slot(self, slot: Slot, state: str, by: str, at: datetime) -> bool:
        """SET NX the slot: True for the one replica that may send (or record) it."""
        value = json.dumps({"state": state, "by": by, "at": iso(at)}, separators=(",", ":"))
        key = f"{fx_prefix(slot.fixture, self.space)}slot:{slot.id}"
        return bool(await self.gateway.call(lambda r: r.set(key, value, nx=True, ex=CLAIM_TTL)))

    async def slot_claim(self, slot: Slot) -> dict[str, str] | None:
        """Who claimed a slot, when, and as what (sent, late, missed), or None."""
        key = f"{fx_prefix(slot.fixture, self.space)}slot:{slot.id}"
        raw = await self.gateway.call(lambda r: r.get(key))
        return json.loads(raw) if raw else None

    async def claim_missed(self, slot: Slot, by: str, at: datetime) -> bool:
        """Claim a slot as missed AND record it for /status in one script: True for the
        one replica that recorded it."""
        raw = json.dumps(slot.to_json(), separators=(",", ":"))
        return await self.claim_slot_with(slot, "missed", by, at,
                                          [Hset("missed", {slot.id: raw})])

    async def missed_slots(self, fx_id: str) -> list[Slot]:
        """Missed firings of a fixture, by due time."""
        rows = await self.gateway.call(lambda r: r.hvals(fx_prefix(fx_id, self.space) + "missed"))
        return sorted((Slot.from_json(json.loads(r)) for r in rows), key=lambda s: s.due)

    async def claim_slot_with(self, slot: Slot, state: str, by: str, at: datetime,
                              outbox: list[Op]) -> bool:
        """Claim the slot AND write what it sends to the outbox in one script: the one
        replica that claims it has its messages durable at the same instant (a crash cannot
        split them)."""
        value = json.dumps({"state": state, "by": by, "at": iso(at)}, separators=(",", ":"))
        ops: list[Op] = [RequireMissing(f"slot:{slot.id}", guard(Reason.CLAIMED)),
                         Set(f"slot:{slot.id}", value, CLAIM_TTL), *outbox]
        try:
            await self.gateway.apply(fx_prefix(slot.fixture, self.space), ops)
        except Refused:
            return False
        return True
