"""Early warning: a zone heating up, from what a Safety Officer weighs (pure rules).

Each zone has a score over the last `window_s`: its own reports and (weighted less) its
neighbours' on the ground map, each by severity, crowd-pressure words in the report's own
text, the people it counts; more when reports come faster; more when the turnstiles of the
zone or a neighbour show a surge, a stalled bank or a section nearly full, held for a while.
A zone warns when its score reaches `threshold`; the warning stays until the score falls
below `clear_below` (or control dismisses it). Reports are counted where they were seen: one
that joined an incident elsewhere still counts for its own place. Thresholds come from
config/early_warning.toml.
"""

from __future__ import annotations

import re
import tomllib
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.domain.crowd_signals import IngressReading
from bot.domain.grounds import Ground
from bot.domain.vocab import INCIDENT_TYPES


@dataclass(frozen=True)
class Rules:
    """The weights and thresholds of config/early_warning.toml."""

    window_s: int = 600
    quiet_s: int = 900  # a cleared area stays silent this long before warning again
    threshold: float = 3.0
    clear_below: float = 1.5
    neighbour_weight: float = 0.5
    severity_weight: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0, 3.0)  # S1..S5
    pressure_words: tuple[str, ...] = ()
    places: tuple[str, ...] = ()  # pressure words that name a place: they count only beside
    # another ("pushing at the gate"), never alone ("a radio at the gate")
    pressure_types: tuple[str, ...] = ("crowd_density",)
    pressure_weight: float = 0.8
    people_at: int = 50
    people_weight: float = 0.5
    accel_s: int = 180
    accel_weight: float = 1.0
    accel_min_severity: int = 3
    accel_pressing_weight: float = 0.0  # each pressing report after the first in the window
    accel_pressing_min_severity: int = 2
    surge_ratio: float = 1.3
    surge_weight: float = 1.5
    surge_cap: float = 2.0  # a surge counts more the further above surge_ratio, up to this
    stall_weight: float = 1.5
    stall_long_s: int = 0  # a bank stalled this long counts twice (0: never)
    full_share: float = 0.95
    full_weight: float = 1.0
    sustain_s: int = 120
    stale_s: int = 300  # a zone's turnstile reading older than this says nothing
    # the crowd on the move (arrivals, half-time, full time: minutes from kick-off): a
    # pressing report in a circulation area (concourse, walkway, gate, outside, the blocks'
    # vomitories) weighs more then; so does any report of `moving_any_severity` and over
    moving_weight: float = 1.0
    moving_kinds: tuple[str, ...] = ("concourse", "walkway", "gate", "outside")
    moving_min_severity: int = 3
    moving_any_severity: int = 6
    moving_min: tuple[tuple[int, int], ...] = ((-60, 10), (45, 70), (105, 140))

    def severity(self, s: int) -> float:
        """The weight of one severity (1-5)."""
        return self.severity_weight[max(1, min(5, s)) - 1]


PRESSURE_KEYS = ("weight", "types", "words", "places")
ACCEL_KEYS = ("window_s", "weight", "min_severity", "pressing_weight", "pressing_min_severity")
MOVING_KEYS = ("weight", "kinds", "min_severity", "any_severity", "windows_min")
INGRESS_KEYS = ("surge_ratio", "surge_weight", "surge_cap", "stall_weight", "stall_long_s",
                "full_share",
                "full_weight", "sustain_s", "stale_s")


def load_rules(path: Path) -> Rules:
    """The rules of a TOML file (config/early_warning.toml); a clear ValueError when one
    makes no sense."""
    raw = tomllib.loads(path.read_text())
    return rules_of(raw, path.name)


def rules_of(raw: dict[str, Any], name: str = "early_warning.toml") -> Rules:
    """Rules from parsed TOML, checked."""
    known = {"window_s", "quiet_s", "threshold", "clear_below", "neighbour_weight",
             "severity_weight", "pressure", "people", "acceleration", "ingress", "moving"}
    extra = sorted(set(raw) - known)
    if extra:
        raise ValueError(f"{name}: unknown key(s) {', '.join(extra)}")
    p, pe = raw.get("pressure", {}), raw.get("people", {})
    ac, ing = raw.get("acceleration", {}), raw.get("ingress", {})
    mv = raw.get("moving", {})
    for part, keys, what in ((p, PRESSURE_KEYS, "pressure"), (pe, ("at", "weight"), "people"),
                             (mv, MOVING_KEYS, "moving"),
                             (ac, ACCEL_KEYS, "acceleration"),
                             (ing, INGRESS_KEYS, "ingress")):
        bad = sorted(set(part) - set(keys))
        if bad:
            raise ValueError(f"{name}: unknown key(s) in [{what}]: {', '.join(bad)}")
    d = Rules()
    try:
        r = Rules(
            window_s=int(raw.get("window_s", d.window_s)),
            quiet_s=int(raw.get("quiet_s", d.quiet_s)),
            threshold=float(raw.get("threshold", d.threshold)),
            clear_below=float(raw.get("clear_below", d.clear_below)),
            neighbour_weight=float(raw.get("neighbour_weight", d.neighbour_weight)),
            severity_weight=tuple(float(x) for x in raw.get("severity_weight",
                                                             d.severity_weight)),
            pressure_words=tuple(str(w).lower() for w in p.get("words", ())),
            places=tuple(str(w).lower() for w in p.get("places", ())),
            pressure_types=tuple(str(t) for t in p.get("types", d.pressure_types)),
            pressure_weight=float(p.get("weight", d.pressure_weight)),
            people_at=int(pe.get("at", d.people_at)),
            people_weight=float(pe.get("weight", d.people_weight)),
            accel_s=int(ac.get("window_s", d.accel_s)),
            accel_weight=float(ac.get("weight", d.accel_weight)),
            accel_min_severity=int(ac.get("min_severity", d.accel_min_severity)),
            accel_pressing_weight=float(ac.get("pressing_weight", d.accel_pressing_weight)),
            accel_pressing_min_severity=int(ac.get("pressing_min_severity",
                                                   d.accel_pressing_min_severity)),
            moving_weight=float(mv.get("weight", d.moving_weight)),
            moving_kinds=tuple(str(k) for k in mv.get("kinds", d.moving_kinds)),
            moving_min_severity=int(mv.get("min_severity", d.moving_min_severity)),
            moving_any_severity=int(mv.get("any_severity", d.moving_any_severity)),
            moving_min=tuple(_span(w) for w in mv.get("windows_min", d.moving_min)),
            **{k: type(getattr(d, k))(ing[k]) for k in INGRESS_KEYS if k in ing},
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: {exc}") from None
    problems = []
    if len(r.severity_weight) != 5:
        problems.append("severity_weight needs 5 numbers (S1 to S5)")
    if not 0 < r.clear_below < r.threshold:
        problems.append("clear_below must be above 0 and below threshold")
    if r.window_s < 60 or r.accel_s < 30 or r.accel_s > r.window_s:
        problems.append("window_s must be >= 60 s and acceleration window_s 30 s to window_s")
    if not 0 <= r.neighbour_weight <= 1:
        problems.append("neighbour_weight is 0 to 1")
    if not r.pressure_words:
        problems.append("[pressure] words must list the words stewards use for crowd pressure")
    if r.surge_ratio <= 1 or not 0 < r.full_share <= 1.2 or r.sustain_s < 0:
        problems.append("[ingress] surge_ratio > 1, full_share 0-1.2, sustain_s >= 0")
    if r.moving_weight < 1:
        problems.append("[moving] weight is 1 or more (1: no different when the crowd moves)")
    if not set(r.places) <= set(r.pressure_words):
        problems.append("[pressure] places must be among its words")
    unknown = [t for t in r.pressure_types if t not in INCIDENT_TYPES.labels]
    if unknown:
        problems.append(f"[pressure] types unknown: {', '.join(unknown)}")
    if problems:
        raise ValueError(f"{name}: " + "; ".join(problems))
    return r


def _span(v: Any) -> tuple[int, int]:
    a, b = (int(x) for x in v)
    if not a < b:
        raise ValueError("[moving] windows_min are [from, to] minutes from kick-off")
    return a, b


WORD = re.compile(r"[\w']+")


def pressure_words_in(text: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The crowd-pressure words of the list found in a report's own text (whole words)."""
    low = " ".join(WORD.findall(text.lower().replace("’", "'")))
    padded = f" {low} "
    # a phrase of the list is found as whole words (the text's words joined by one space)
    return tuple(w for w in words if f" {' '.join(WORD.findall(w.lower()))} " in padded)


@dataclass(frozen=True)
class Report:
    """One report as the rules see it: where it was seen (its own place, merged or not)."""

    at: datetime
    zone: str
    severity: int
    type: str
    affiliation: str = "unknown"
    words: tuple[str, ...] = ()  # crowd-pressure words in its own text
    people: int = 0
    ref: str = ""  # the incident it made or joined ("INC-7"); the evidence names it
    key: str = ""  # one report, however often it arrives (a redelivery counts once)


@dataclass(frozen=True)
class Warning:
    """A zone heating up: where, the area it covers, why (the reports and turnstile readings
    with their times), the score and what to do about it."""

    zone: str
    zones: tuple[str, ...]
    rule: str
    reports: tuple[Report, ...]
    text: str
    at: datetime | None = None
    score: float = 0.0
    ingress: tuple[IngressReading, ...] = ()
    action: str = ""


@dataclass(frozen=True)
class Cleared:
    """An area's warning over: the score fell below `clear_below` (or control dismissed it)."""

    zone: str
    zones: tuple[str, ...]
    at: datetime
    why: str  # "cleared" or "dismissed"


@dataclass
class _Flag:
    """Since when one turnstile condition has held in one zone (None: not now)."""

    surge: datetime | None = None
    stall: datetime | None = None
    full: datetime | None = None


@dataclass
class Watch:
    """One fixture's recent reports and turnstile readings, and its areas under warning."""

    rules: Rules
    ground: Ground
    kickoff: datetime | None = None  # when the crowd moves, from it (None: not known)
    recent: deque[Report] = field(default_factory=deque)
    readings: dict[str, IngressReading] = field(default_factory=dict)
    flags: dict[str, _Flag] = field(default_factory=dict)
    active: dict[str, Warning] = field(default_factory=dict)  # by the warned zone
    quiet_until: dict[str, datetime] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    now: datetime | None = None

    def feed(self, report: Report) -> list[Warning]:
        """Take one report; the warnings it raises (none in an area already warned)."""
        if report.key:
            if report.key in self.keys:
                return []
            self.keys.add(report.key)
        self._advance(report.at)
        self.recent.append(report)
        return self._check(self.ground.nearby(report.zone), report.at)

    def ingress(self, reading: IngressReading) -> list[Warning]:
        """Take one turnstile reading; the warnings it raises."""
        self._advance(reading.at)
        r, flag = self.rules, self.flags.setdefault(reading.zone, _Flag())
        flag.surge = (flag.surge or reading.at) if reading.rate_ratio >= r.surge_ratio else None
        flag.stall = (flag.stall or reading.at) if reading.stalled else None
        flag.full = (flag.full or reading.at) if reading.capacity and \
            reading.share_full >= r.full_share and reading.rate_per_min > 0 else None
        self.readings[reading.zone] = reading
        return self._check(self.ground.nearby(reading.zone), reading.at)

    def tick(self, now: datetime) -> list[Cleared]:
        """The warnings over by `now`: their area's score fell below `clear_below`."""
        self._advance(now)
        out = []
        for zone, w in list(self.active.items()):
            if max(self.score(z, now) for z in w.zones) < self.rules.clear_below:
                out.append(self._end(zone, now, "cleared"))
        return out

    def dismiss(self, zone: str, now: datetime) -> Cleared | None:
        """Control dismissed the warning that covers `zone` (None: none does)."""
        for z, w in list(self.active.items()):
            if zone == z or zone in w.zones:
                return self._end(z, now, "dismissed")
        return None

    def _end(self, zone: str, now: datetime, why: str) -> Cleared:
        w = self.active.pop(zone)
        for z in w.zones:
            self.quiet_until[z] = max(self.quiet_until.get(z, now),
                                      now + timedelta(seconds=self.rules.quiet_s))
        return Cleared(zone, w.zones, now, why)

    def _advance(self, now: datetime) -> None:
        if self.now is None or now > self.now:
            self.now = now
        while self.recent and (self.now - self.recent[0].at).total_seconds() > \
                self.rules.window_s:
            self.recent.popleft()

    def _covered(self, zone: str, now: datetime) -> bool:
        near = set(self.ground.nearby(zone))  # one warning for one hot area
        if any(near & set(w.zones) for w in self.active.values()):
            return True
        quiet = self.quiet_until.get(zone)
        return quiet is not None and now < quiet

    def _check(self, zones: list[str], now: datetime) -> list[Warning]:
        scored = sorted(((self.score(z, now), z) for z in zones
                         if not self._covered(z, now)), key=lambda t: (-t[0], t[1]))
        if not scored or scored[0][0] < self.rules.threshold:
            return []
        score, zone = scored[0]
        w = self._warning(zone, score, now)
        self.active[zone] = w
        return [w]

    def report_value(self, rep: Report) -> float:
        """What one report adds in its own zone: its severity's weight, raised by its
        crowd-pressure words and its people count (a steward's S1 stays small whatever its
        words: the severity is their judgement)."""
        r = self.rules
        v = 1.0
        pressing = self.pressing(rep)
        if pressing:
            v += r.pressure_weight
        if rep.people >= r.people_at:
            v += r.people_weight
        if (self.said_pressure(rep) and rep.severity >= r.moving_min_severity
                or rep.severity >= r.moving_any_severity) and self.on_the_move(rep):
            v *= r.moving_weight
        return r.severity(rep.severity) * v

    def pressing(self, rep: Report) -> bool:
        """The report speaks of crowd pressure: its type, or a pressure word of its own text
        (a place word alone, "at the gate", says nothing)."""
        return rep.type in self.rules.pressure_types or self.said_pressure(rep)

    def said_pressure(self, rep: Report) -> bool:
        """A pressure word in the steward's own text, beyond a place word."""
        return any(w not in self.rules.places for w in rep.words)

    def on_the_move(self, rep: Report) -> bool:
        """Seen in a circulation area while the crowd moves through it (arrivals, half-time,
        full time, by the kick-off)."""
        if self.kickoff is None:
            return False
        z = self.ground.zones.get(rep.zone)
        if z is None or z.kind not in self.rules.moving_kinds:
            return False
        m = (rep.at - self.kickoff).total_seconds() / 60
        return any(a <= m < b for a, b in self.rules.moving_min)

    def _weight(self, zone: str, other: str) -> float:
        if other == zone:
            return 1.0
        return self.rules.neighbour_weight if self.ground.near(zone, other) else 0.0

    def score(self, zone: str, now: datetime) -> float:
        """The zone's score now: its reports and its neighbours', faster reports, turnstiles."""
        r = self.rules
        s = sum(self._weight(zone, rep.zone) * self.report_value(rep) for rep in self.recent)
        area = [rep for rep in self.recent if self._weight(zone, rep.zone)
                and rep.severity >= r.accel_min_severity]
        last = sum((now - rep.at).total_seconds() <= r.accel_s for rep in area)
        before = sum(r.accel_s < (now - rep.at).total_seconds() <= 2 * r.accel_s
                     for rep in area)
        if last >= 2 and last > before:
            s += r.accel_weight
        pressing = sum(1 for rep in self.recent if self._weight(zone, rep.zone)
                       and rep.severity >= r.accel_pressing_min_severity
                       and (now - rep.at).total_seconds() <= r.accel_s and self.said_pressure(rep))
        s += r.accel_pressing_weight * max(0, pressing - 1)
        return s + max((self._weight(zone, z) * self.ingress_value(z, now)
                        for z in self.readings), default=0.0)

    def ingress_value(self, zone: str, now: datetime) -> float:
        """What a zone's turnstiles add: each condition held for `sustain_s`."""
        r, reading = self.rules, self.readings.get(zone)
        if reading is None or (now - reading.at).total_seconds() > r.stale_s:
            return 0.0
        flag = self.flags[zone]

        def held(since: datetime | None) -> bool:
            return since is not None and (now - since).total_seconds() >= r.sustain_s
        over = min(r.surge_cap, (reading.rate_ratio - 1) / (r.surge_ratio - 1))
        long = r.stall_long_s > 0 and flag.stall is not None and \
            (now - flag.stall).total_seconds() >= r.stall_long_s
        return (r.surge_weight * over * held(flag.surge)
                + r.stall_weight * (held(flag.stall) + long)
                + r.full_weight * held(flag.full))

    def _warning(self, zone: str, score: float, now: datetime) -> Warning:
        area = tuple(sorted(self.ground.nearby(zone)))
        hits = tuple(rep for rep in self.recent if rep.zone in area)
        readings = tuple(self.readings[z] for z in area if z in self.readings
                         and self.ingress_value(z, now) > 0)
        signals = signals_of(self, zone, hits, readings)
        return Warning(zone, area, " + ".join(signals) or "score", hits,
                       warning_text(self.ground, zone, list(hits), readings), now,
                       round(score, 2), readings, suggested_action(self.ground, zone, hits))


def signals_of(watch: Watch, zone: str, hits: tuple[Report, ...],
               readings: tuple[IngressReading, ...]) -> list[str]:
    """Which kinds of evidence the warning rests on, in a Safety Officer's words."""
    r, out = watch.rules, []
    if hits:
        out.append("reports here" if any(h.zone == zone for h in hits) else "reports nearby")
    if any(h.zone != zone for h in hits) and any(h.zone == zone for h in hits):
        out.append("neighbours")
    if any(h.words or h.type in r.pressure_types for h in hits):
        out.append("crowd-pressure words")
    if any(h.people >= r.people_at for h in hits):
        out.append("people counts")
    if any(watch.on_the_move(h) for h in hits):
        out.append("crowd on the move")
    if any(x.stalled for x in readings):
        out.append("stalled turnstiles")
    if any(x.rate_ratio >= r.surge_ratio for x in readings):
        out.append("entry surge")
    if any(x.share_full >= r.full_share for x in readings):
        out.append("section nearly full")
    return out


def suggested_action(ground: Ground, zone: str, hits: tuple[Report, ...]) -> str:
    """What control should do first about the area (the ground's words, never a reporter's)."""
    z = ground.zones.get(zone)
    kinds = {ground.zones[n].kind for n in ground.nearby(zone) if n in ground.zones}
    where = ground.short_label(zone, 30)
    if z is not None and z.kind == "segregation" or "segregation" in kinds and \
            any(h.type in ("missile", "segregation_breach", "disorder") for h in hits):
        return f"Reinforce the segregation line at {where}: response team there, police told."
    if z is not None and z.kind in ("gate", "outside"):
        return (f"Slow entry at {where}: hold the queue back, open the exit gates beside it, "
                "send a supervisor and the response team.")
    if z is not None and z.kind in ("concourse", "walkway"):
        return (f"Hold people back from {where}: stop entry to it, open relief routes, "
                "send a supervisor and the response team.")
    return (f"Send a supervisor and the response team to {where}, and be ready to stop "
            "entry to it.")


def warning_text(ground: Ground, zone: str, hits: list[Report],
                 readings: tuple[IngressReading, ...] = ()) -> str:
    """'Early warning — North-east segregation: 2 × S4 missiles both ways in 2 min, risk of
    breach' (the words are the ground's and the vocabulary's, never a reporter's)."""
    where = ground.short_label(zone, 30)
    kinds = {ground.zones[z].kind for z in ground.nearby(zone) if z in ground.zones}
    crowd = any(r.type == "crowd_density" or r.words for r in hits) or bool(readings)
    if "segregation" in kinds and not crowd:
        risk = "risk of breach"
    elif crowd:
        risk = "risk of crushing"
    else:
        risk = "may escalate"
    if not hits:
        return f"Early warning — {where}: turnstiles {ingress_words(readings)}, {risk}"
    worst = max(r.severity for r in hits)
    n_worst = sum(r.severity == worst for r in hits)
    types = []
    for r in sorted(hits, key=lambda r: -r.severity):
        label = INCIDENT_TYPES.label(r.type).lower()
        if label not in types:
            types.append(label)
    sides = {r.affiliation for r in hits} - {"unknown", ""}
    both = " both ways" if len(sides) > 1 else ""
    span = max(1, round((hits[-1].at - hits[0].at).total_seconds() / 60))
    what = " and ".join(types[:2])
    others = f" (+{len(hits) - n_worst} more)" if len(hits) > n_worst else ""
    gates = f", turnstiles {ingress_words(readings)}" if readings else ""
    return (f"Early warning — {where}: {n_worst} × S{worst} {what}{both}{others} in "
            f"{span} min{gates}, {risk}")


def ingress_words(readings: tuple[IngressReading, ...]) -> str:
    """'stalled' / 'entry at 160% of plan' / '97% full' for the readings behind a warning."""
    bits = []
    for x in readings:
        if x.stalled:
            bits.append("stalled")
        elif x.planned_rate_per_min:
            bits.append(f"entry at {x.rate_ratio:.0%} of plan")
        if x.capacity:
            bits.append(f"{x.share_full:.0%} full")
    return ", ".join(dict.fromkeys(bits)) or "unusual"


def open_warnings(events: list[Any]) -> dict[str, dict[str, Any]]:
    """The warnings still standing in a fixture's log (oldest first): each
    `fixture.early_warning` by its zone, less those a later `fixture.early_warning_cleared`
    ended (cleared or dismissed) for a zone of its area."""
    out: dict[str, dict[str, Any]] = {}
    for ev in events:
        if ev.kind == "fixture.early_warning":
            out[str(ev.data.get("zone", ""))] = dict(ev.data, at=ev.at)
        elif ev.kind == "fixture.early_warning_cleared":
            zone = str(ev.data.get("zone", ""))
            for z, w in list(out.items()):
                if z == zone or zone in w.get("zones", ()):
                    del out[z]
    return out
