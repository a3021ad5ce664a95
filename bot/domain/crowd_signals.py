"""What the turnstiles say about one zone at one moment: the ingress feed's output and one of
the early warning's inputs (the contract between the two homes)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class IngressReading:
    """People in, capacity and entry rate of one zone of the ground file (a stand or an entry
    point) at `at`; `stalled` when a bank of open turnstiles counts nothing while people
    are still arriving."""

    zone: str
    at: datetime
    inside: int
    capacity: int
    rate_per_min: float
    planned_rate_per_min: float
    stalled: bool = False

    @property
    def share_full(self) -> float:
        """People in over capacity (0 when the capacity is unknown)."""
        return self.inside / self.capacity if self.capacity > 0 else 0.0

    @property
    def rate_ratio(self) -> float:
        """Entry rate over the planned rate for the open turnstiles (0 when none planned)."""
        return self.rate_per_min / self.planned_rate_per_min if self.planned_rate_per_min else 0.0
