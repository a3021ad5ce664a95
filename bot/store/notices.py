"""Notices told once for every replica (e.g. "reports are being refused"): a claim per
notice, asked in a slot that takes writes."""

from __future__ import annotations

from bot.store.base import StoreUnavailable, tag_prefix
from bot.store.gateway import Gateway

# Where notice claims are asked, in order: `{ops}`, then tags whose slots (2729, 8189; ops
# is 12791) fall in other thirds of the key space, so on other masters of a usual Cluster.
# (A club's tags carry the club, so their slots differ: still three tags, likely spread.)
NOTICE_TAGS = ("ops", "notice:279", "notice:1215")


class Notices:
    """Claims of once-only notices, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    def _keys(self, name: str) -> list[str]:
        """A notice's claim keys, one per tag of NOTICE_TAGS, in order."""
        return [tag_prefix(tag, self.space) + f"notice:{name}" for tag in NOTICE_TAGS]

    async def claim_notice(self, name: str, ttl_s: int) -> bool:
        """Claim a notice once for every replica (for `ttl_s` seconds): True for the first.
        Asked in the first of NOTICE_TAGS whose slot takes the write (every replica sees
        the same ones refuse), so a slot that refuses writes cannot make two replicas tell."""
        for key in self._keys(name):
            try:
                return bool(await self.gateway.call(
                    lambda r, k=key: r.set(k, "1", nx=True, ex=ttl_s)))
            except StoreUnavailable:
                continue
        raise StoreUnavailable(f"no slot takes the notice {name}")

    async def drop_notice(self, name: str) -> bool:
        """Drop a notice's claim: True for the replica that removed it."""
        dropped, answered = False, False
        for key in self._keys(name):
            try:
                dropped |= bool(await self.gateway.call(lambda r, k=key: r.delete(k)))
                answered = True
            except StoreUnavailable:
                continue
        if not answered:
            raise StoreUnavailable(f"no slot drops the notice {name}")
        return dropped
