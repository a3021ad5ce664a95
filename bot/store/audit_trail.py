"""The audit trail (refusals, restricted reads, admin changes), the shared one and each
fixture's own, and the capped stream of refusals of strangers."""

from __future__ import annotations

from bot.store.base import fx_prefix, ops_prefix
from bot.store.gateway import Gateway

STRANGERS_AUDIT_MAXLEN = 2000


class AuditTrail:
    """Appends to and reads of the audit trails, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        # refusals of people and clients not known
        self.strangers = ops_prefix(gateway.space) + "audit:anonymous"

    async def audit(self, who: str, action: str, detail: str, at: str,
                    unix_user: str = "", *, fixture: str | None = None) -> None:
        """Append to the audit trail (refusals, restricted reads, admin changes); a command-line
        action also names the Unix user who ran it (`who` is only what they claimed).
        `fixture`: an entry about reading one fixture's record (an export, a report) goes to
        that fixture's own trail, in its slot: reading the record never needs a write to the
        shared slot, which may refuse writes while the fixture's is healthy."""
        entry = {"at": at, "who": who, "action": action, "detail": detail}
        if unix_user:
            entry["unix_user"] = unix_user
        key = (fx_prefix(fixture, self.space) if fixture else ops_prefix(self.space)) + "audit"
        await self.gateway.call(
            lambda r: r.xadd(key, entry, maxlen=100_000, approximate=True))

    async def audit_log(self, count: int = 100,
                        fixture: str | None = None) -> list[dict[str, str]]:
        """Newest audit entries, newest first; with `fixture`, that fixture's own trail too."""
        keys = [ops_prefix(self.space) + "audit"]
        if fixture:
            keys.append(fx_prefix(fixture, self.space) + "audit")
        rows = [row for key in keys for row in await self.gateway.call(
            lambda r, k=key: r.xrevrange(k, count=count))]
        rows.sort(key=lambda row: _stream_order(row[0]), reverse=True)  # two slots' clocks
        return [f for _, f in rows[:count]]

    async def audit_stranger(self, fields: dict[str, str]) -> None:
        """Keep a refusal of someone the bot does not know (a capped stream of its own, so a
        flood of them never pushes members' entries out of the audit trail)."""
        await self.gateway.call(
            lambda r: r.xadd(self.strangers, fields, maxlen=STRANGERS_AUDIT_MAXLEN,
                             approximate=True))

    async def stranger_refusals(self, count: int = 100) -> list[dict[str, str]]:
        """Newest refusals of strangers, newest first."""
        rows = await self.gateway.call(lambda r: r.xrevrange(self.strangers, count=count))
        return [f for _, f in rows]


def _stream_order(entry_id: str) -> tuple[int, int]:
    """A stream entry id (`<ms>-<seq>`) as numbers, to merge two streams' entries by time."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)
