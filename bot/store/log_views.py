"""Read-only views of a fixture's log for the pack, exports, charts, briefings and the web
view: one incident's timeline, the restricted log, a recent window, the chart's bins, the
response times and several fixtures' counters at once. The incident log (bot/store/client.py)
writes what they read."""

from __future__ import annotations

from bot.domain.ledger import Event
from bot.store.base import fx_prefix
from bot.store.gateway import Gateway
from bot.store.ops import RESTRICTED_LOG


class LogViews:
    """What readers of a fixture's record ask of it, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def incident_events(self, fx_id: str, n: int) -> list[Event]:
        """The events about one incident, in order, from its timeline index (cost ~ its own
        events, not the fixture's). An incident logged before the index existed is found by
        reading the whole log."""
        p = fx_prefix(fx_id, self.space)
        ids = await self.gateway.call(lambda r: r.lrange(f"{p}tl:{n}", 0, -1))
        if not ids:
            iid = f"INC-{n}"
            return [e for e in await self._log(fx_id)
                    if e.data.get("id") == iid or e.data.get("incident") == iid]
        pipe = self.gateway.pipeline()
        for sid in ids:
            pipe.xrange(p + "log", sid, sid, count=1)
        rows = await self.gateway.call(pipe.execute())
        return [Event.from_stream(sid, f) for row in rows for sid, f in row]

    async def restricted_events(self, fx_id: str) -> list[Event]:
        """The fixture's restricted log (intelligence), in order: only restricted exports
        read it."""
        rows = await self.gateway.call(
            lambda r: r.xrange(fx_prefix(fx_id, self.space) + RESTRICTED_LOG, "-", "+"))
        return [Event.from_stream(sid, f) for sid, f in rows]

    async def events_since(self, fx_id: str, since: str, limit: int = 2000) -> list[Event]:
        """Events logged at or after an ISO UTC time, oldest first; reads back from the end
        of the stream in pages and stops at the first older event (cost ~ the window)."""
        key, end, out = fx_prefix(fx_id, self.space) + "log", "+", []
        while len(out) < limit:
            rows = await self.gateway.call(lambda r, end=end: r.xrevrange(key, end, "-", count=100))
            for sid, f in rows:
                if f["at"] < since:  # ISO UTC strings order like the times they name
                    return [Event.from_stream(s, g) for s, g in reversed(out)]
                out.append((sid, f))
            if len(rows) < 100:
                break
            end = "(" + rows[-1][0]
        return [Event.from_stream(s, g) for s, g in reversed(out)]

    async def chart_counts(self, fx_id: str) -> dict[str, int]:
        """The chart's counters: 'i:<bin>:<phase>' incidents and 'a:<bin>' arrests per
        15-minute bin (see ledger.chart_deltas); cost ~ the number of bins."""
        h = await self.gateway.call(lambda r: r.hgetall(fx_prefix(fx_id, self.space) + "chart"))
        return {k: int(v) for k, v in h.items() if int(v)}

    async def response_times(self, fx_id: str) -> dict[str, float | int | None]:
        """Median and worst seconds to acknowledge and to close (O(log n) via sorted sets)."""
        p = fx_prefix(fx_id, self.space)
        pipe = self.gateway.pipeline()
        for z in ("tta", "ttc"):
            pipe.zcard(p + z)
        res = await self.gateway.call(pipe.execute())
        out: dict[str, float | int | None] = {"acknowledged": res[0], "closed": res[1]}
        pipe = self.gateway.pipeline()
        for z, n in (("tta", res[0]), ("ttc", res[1])):
            lo, hi = (n - 1) // 2, n // 2
            pipe.zrange(p + z, lo, hi, withscores=True)
            pipe.zrange(p + z, -1, -1, withscores=True)
        rows = await self.gateway.call(pipe.execute())
        for i, name in enumerate(("ack", "close")):
            mid, worst = rows[2 * i], rows[2 * i + 1]
            out[f"median_{name}_s"] = (sum(s for _, s in mid) / len(mid)) if mid else None
            out[f"worst_{name}_s"] = worst[0][1] if worst else None
        return out

    async def open_ids(self, fx_id: str, limit: int = 50) -> list[str]:
        """Ids of open incidents, most severe then oldest first."""
        key = fx_prefix(fx_id, self.space) + "open"
        ns = await self.gateway.call(lambda r: r.zrange(key, 0, limit - 1))
        return [f"INC-{n}" for n in ns]

    async def _log(self, fx_id: str) -> list[Event]:
        rows = await self.gateway.call(
            lambda r: r.xrange(fx_prefix(fx_id, self.space) + "log", "-", "+"))
        return [Event.from_stream(sid, f) for sid, f in rows]
