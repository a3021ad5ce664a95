"""Key timings' keys: an append-only stream per fixture ('timings'); the phase-starting ones
are written in the /phase write itself (timing_ops), the others on their own."""

from __future__ import annotations

from bot.domain.fixture.key_timings import Timing
from bot.domain.ledger import Event
from bot.domain.outcomes import Reason
from bot.store.base import Applied, fx_prefix, guard
from bot.store.gateway import Gateway
from bot.store.lifecycle import phase_op
from bot.store.ops import Op, RequireExists, Xadd, log_event

STREAM = "timings"


def timing_ops(key: str, ev: Event) -> list[Op]:
    """The ops that record a key timing (to add to another write, e.g. a phase change)."""
    return [Xadd(STREAM, {"key": key, "at": ev.at, "by": ev.by})]


class KeyTimings:
    """Record and read a fixture's key timings."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def record(self, fx_id: str, key: str, ev: Event, dedupe: str) -> Applied:
        """Record a timing that starts no phase, with its event, in one round trip."""
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)), phase_op(),
                         *timing_ops(key, ev), *log_event(ev)]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    async def read(self, fx_id: str) -> list[Timing]:
        """Every recording, in order (see bot.domain.fixture.key_timings.latest)."""
        rows = await self.gateway.call(lambda r: r.xrange(fx_prefix(fx_id, self.space) + STREAM))
        return [Timing.from_fields(h) for _, h in rows]

