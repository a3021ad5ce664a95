"""The ingress picture from the counts: per entry point and stand, people in, % full, entry
rate against plan, queue pressure, the forecast time to full, and the alerts it calls for."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.domain.crowd_signals import IngressReading
from bot.domain.ingress_plan import IngressPlan

BIN_S = 30  # counts are kept per entry point in bins of this many seconds
RATE_WINDOW_S = 300  # the entry rate: people a minute over the last five minutes
TREND_S = 120  # "falling": the last two minutes against the two before
FALLING = 0.7
LATE_GRACE_MIN = 2.0  # "not in by kick-off" only when short by more than this
KINDS = ("threshold", "full", "stalled", "rate", "late")


@dataclass(frozen=True)
class Counts:
    """What the store holds for a fixture, read at `at` (epoch seconds in the maps)."""

    at: datetime
    totals: dict[str, int]  # entry point -> people in
    bins: dict[str, dict[int, int]]  # entry point -> bin start -> people in that bin
    heard: dict[str, float] = field(default_factory=dict)  # entry -> last batch from it
    flowing: dict[str, float] = field(default_factory=dict)  # entry -> last count above 0
    closed: frozenset[str] = frozenset()  # entry points control has closed
    fed: dict[str, float] = field(default_factory=dict)  # entry -> last batch its turnstiles
    # sent themselves (a typed tally is not a feed: silence after it says nothing)


@dataclass(frozen=True)
class EntryState:
    """One entry point now."""

    zone: str
    stand: str
    inside: int
    rate_per_min: float
    recent_per_min: float
    planned_per_min: float
    safe_rate_per_min: float
    stalled: bool
    falling: bool
    closed: bool


@dataclass(frozen=True)
class StandState:
    """One stand now: the figures control reads, and the forecast."""

    zone: str
    inside: int
    capacity: int
    rate_per_min: float
    planned_per_min: float
    pressure: str  # "ok", "building" (rate falling, people still to come), "stalled"
    full_at: datetime | None  # at the current rate; None with no flow
    in_by_kickoff: bool | None
    entries: tuple[EntryState, ...]

    @property
    def pct(self) -> float:
        """% of capacity."""
        return 100.0 * self.inside / self.capacity if self.capacity else 0.0


@dataclass(frozen=True)
class Picture:
    """Every stand at one moment."""

    at: datetime
    kickoff: datetime
    stands: tuple[StandState, ...]

    @property
    def inside(self) -> int:
        """People in the ground."""
        return sum(s.inside for s in self.stands)

    @property
    def capacity(self) -> int:
        """The ground's capacity over the stands fed."""
        return sum(s.capacity for s in self.stands)


@dataclass(frozen=True)
class IngressAlert:
    """What control must hear about: kind (KINDS), where, the figures, and for a stand at
    capacity the entry points to close."""

    kind: str
    zone: str
    level: int  # the % crossed; for the other kinds what makes one occurrence
    at: datetime
    inside: int
    capacity: int
    rate_per_min: float
    limit: float  # the safe rate, the planned rate, or the threshold in people
    close: tuple[str, ...] = ()
    minutes_needed: float = 0.0  # "late": minutes to admit the rest at the planned rate
    minutes_left: float = 0.0  # "late": minutes to kick-off


def _sum_since(bins: dict[int, int], since: float, until: float) -> int:
    return sum(n for start, n in bins.items() if since <= start < until)


def _per_min(bins: dict[int, int], now: float, span: float, first: float | None) -> float:
    start = now - span
    counted = _sum_since(bins, start - BIN_S / 2, now + 1)
    if first is not None and first > start:  # the feed began inside the window
        span = max(now - first + BIN_S, BIN_S)
    return counted * 60.0 / span


def entry_state(plan: IngressPlan, zone: str, c: Counts, kickoff: datetime,
                stand_full: bool) -> EntryState:
    """One entry point's figures from the counts."""
    entry = plan.entries[zone]
    now = c.at.timestamp()
    bins = c.bins.get(zone, {})
    first = min((s for s, n in bins.items() if n > 0), default=None)
    rate = _per_min(bins, now, RATE_WINDOW_S, first)
    recent = _sum_since(bins, now - TREND_S, now + 1) * 60.0 / TREND_S
    earlier = _sum_since(bins, now - 2 * TREND_S, now - TREND_S) * 60.0 / TREND_S
    closed = zone in c.closed
    arriving = c.at < kickoff and not stand_full and not closed
    heard, flowing, fed = c.heard.get(zone), c.flowing.get(zone), c.fed.get(zone)
    # stalled: batches still come but count nobody, or the bank's own feed fell silent
    # while it was counting (a stalled bank may send nothing at all)
    zeros = heard is not None and now - heard < plan.stall_s
    silent = fed is not None and now - fed >= plan.stall_s and flowing is not None \
        and fed - flowing < plan.stall_s
    stalled = bool(arriving and flowing is not None and now - flowing >= plan.stall_s
                   and (zeros or silent))
    live = heard is not None and now - heard < 2 * BIN_S  # a typed tally says nothing after
    return EntryState(zone, entry.stand, c.totals.get(zone, 0), rate, recent,
                      0.0 if closed else entry.planned_per_min(plan.per_turnstile_per_min),
                      entry.safe_rate_per_min, stalled,
                      arriving and live and earlier > 0 and recent < FALLING * earlier, closed)


def picture(plan: IngressPlan, c: Counts, kickoff: datetime) -> Picture:
    """Every stand's figures and forecast from the counts."""
    stands = []
    for stand in plan.stands.values():
        inside = sum(c.totals.get(e.zone, 0) for e in plan.entries_of(stand.zone))
        full = inside >= stand.capacity
        entries = tuple(entry_state(plan, e.zone, c, kickoff, full)
                        for e in plan.entries_of(stand.zone))
        rate = sum(e.rate_per_min for e in entries)
        planned = sum(e.planned_per_min for e in entries)
        remaining = max(stand.capacity - inside, 0)
        full_at = c.at + timedelta(minutes=remaining / rate) if rate > 0 else None
        if remaining == 0:
            full_at = c.at
        pressure = "stalled" if any(e.stalled for e in entries) else \
            "building" if any(e.falling for e in entries) else "ok"
        stands.append(StandState(stand.zone, inside, stand.capacity, rate, planned, pressure,
                                 full_at, None if full_at is None else full_at <= kickoff,
                                 entries))
    return Picture(c.at, kickoff, tuple(stands))


def readings(p: Picture) -> list[IngressReading]:
    """The early warning's input: one reading per stand and per entry point."""
    out = []
    for s in p.stands:
        out.append(IngressReading(s.zone, p.at, s.inside, s.capacity, s.rate_per_min,
                                  s.planned_per_min, s.pressure == "stalled"))
        out += [IngressReading(e.zone, p.at, e.inside, s.capacity, e.rate_per_min,
                               e.planned_per_min, e.stalled) for e in s.entries]
    return out


def alerts(plan: IngressPlan, p: Picture) -> list[IngressAlert]:
    """Every alert the picture calls for (each is sent once: see IngressAlert.level)."""
    out: list[IngressAlert] = []
    quarter = int(p.at.timestamp()) // 900  # a continuing condition is repeated each 15 min
    for s in p.stands:
        for pct in plan.alert_at:
            if s.inside * 100 >= pct * s.capacity:
                out.append(IngressAlert("threshold", s.zone, pct, p.at, s.inside, s.capacity,
                                        s.rate_per_min, s.capacity * pct / 100))
        if s.inside >= s.capacity:
            open_ = tuple(e.zone for e in s.entries if not e.closed)
            if open_:
                out.append(IngressAlert("full", s.zone, 100, p.at, s.inside, s.capacity,
                                        s.rate_per_min, s.capacity, close=open_))
        for e in s.entries:
            if e.stalled:
                out.append(IngressAlert("stalled", e.zone, quarter, p.at, e.inside, s.capacity,
                                        e.recent_per_min, e.planned_per_min))
            if e.recent_per_min > e.safe_rate_per_min:
                out.append(IngressAlert("rate", e.zone, quarter, p.at, e.inside, s.capacity,
                                        e.recent_per_min, e.safe_rate_per_min))
        left = (p.kickoff - p.at).total_seconds() / 60
        remaining = s.capacity - s.inside
        if 0 < left <= plan.forecast_from_min and 0 < s.inside < s.capacity \
                and s.planned_per_min > 0:  # a stand with no count yet: no feed, no forecast
            needed = remaining / s.planned_per_min
            if needed > left + LATE_GRACE_MIN:
                out.append(IngressAlert("late", s.zone, 0, p.at, s.inside, s.capacity,
                                        s.rate_per_min, s.planned_per_min,
                                        minutes_needed=needed, minutes_left=left))
    return out
