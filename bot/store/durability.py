"""How safe an acknowledged write is on this Redis: its append-only file and fsync policy,
and the replicas each write WAITs for. Facts only; the caller words any warning."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Durability:
    """What the server says about keeping a write it has answered."""

    appendonly: bool | None  # an append-only file (None: the server would not say)
    appendfsync: str | None  # always, everysec, no (None: CONFIG GET refused)
    replicas: int  # replicas in sync now (the fewest of any primary, for a cluster)
    waited_for: int  # replicas each write WAITs for before the bot answers "Logged"
    config_refused: bool = False  # CONFIG GET was refused (a managed Redis, an ACL)

    @property
    def replicated(self) -> bool:
        """Every acknowledged write is on at least one replica: each write WAITs for one or
        more, and is answered "HELD, not confirmed" when they do not confirm."""
        return self.waited_for >= 1

    @property
    def fsynced(self) -> bool:
        """Every acknowledged write is on this server's disk (appendfsync always)."""
        return self.appendonly is True and self.appendfsync == "always"

    @property
    def durable(self) -> bool | None:
        """True when a crash cannot lose an acknowledged write, False when it can, None
        when the server would not say (CONFIG refused and no replica waited for)."""
        if self.replicated or self.fsynced:
            return True
        if self.appendonly is False or self.appendfsync is not None:
            return False
        return None


def worst_fsync(values: list[str | None]) -> str | None:
    """The least safe of several servers' appendfsync settings (None: one would not say)."""
    order = ("no", "everysec", "always")
    if any(v is None for v in values):
        return None
    known = [v for v in values if v in order]
    return min(known, key=order.index) if known else None
