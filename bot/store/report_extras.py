"""What a steward's reports keep beside the incident log: merged reports waiting to be split
out (written by the report script, `mrg:<token>`) and live locations (`live:<id>`), the
latest position of each."""

from __future__ import annotations

import json
from typing import Any

from bot.domain.ledger import Event
from bot.store.base import LIVE_TTL_S, Applied, fx_prefix, note_write
from bot.store.gateway import Gateway
from bot.store.lifecycle import missing_incident
from bot.store.ops import Op, RequireExists, Set, log_event


class ReportExtras:
    """Merged reports and live locations of each fixture, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def merge_record(self, fx_id: str, token: str) -> dict[str, Any] | None:
        """A merged report as its split would log it (None: split out already, or expired)."""
        raw = await self.gateway.call(lambda r: r.get(f"{fx_prefix(fx_id, self.space)}mrg:{token}"))
        return json.loads(raw) if raw else None

    async def take_merge(self, fx_id: str, token: str, who: str) -> dict[str, Any] | None:
        """Claim a merged report once so its reporter can split it out (None if not theirs,
        already split, or expired)."""
        key = f"{fx_prefix(fx_id, self.space)}mrg:{token}"
        raw = await self.gateway.call(lambda r: r.get(key))
        if not raw or json.loads(raw).get("who") != who:
            return None
        note_write()
        if not await self.gateway.call(lambda r: r.delete(key)):
            return None  # another press got there first
        return json.loads(raw)

    async def live_location(self, fx_id: str, live: str) -> dict[str, Any] | None:
        """A kept live location's incident (n) and latest position (lat, lon, at), or None."""
        raw = await self.gateway.call(lambda r: r.get(f"{fx_prefix(fx_id, self.space)}live:{live}"))
        return json.loads(raw) if raw else None

    async def move_live(self, fx_id: str, n: int, live: str, pos: dict[str, Any], ev: Event,
                        dedupe: str) -> Applied:
        """A live location's later position: its latest position and time replaced and the
        move appended to the incident's timeline, in one round trip."""
        ops: list[Op] = [
            RequireExists(f"inc:{n}", missing_incident(n)),
            Set(f"live:{live}", json.dumps({"n": n, **pos}), LIVE_TTL_S),
            *log_event(ev),
        ]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)
