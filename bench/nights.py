"""Match nights made from a seed for bench/early_warning.py: hot nights that build up to a
crush and quiet nights that never do. Made from how a night runs (arrivals at the turnstiles,
what stewards report and in which words), never from the early warning's thresholds: this
module reads nothing of config/early_warning.toml.

A hot night: a crush at a gate during arrivals, in a concourse at half-time, on a walkway or
gate at full time, or in an overfilled stand. Its build-up (first report to the crush) runs
5 to 20 minutes: reports in the place and its neighbours, more and more severe, in the
stewards' words (some about pressure, some not), some redelivered (one report, counted once),
some joined to an incident elsewhere (the report keeps its own place); the turnstiles show a
surge, a stalled bank or a section overfilling a few minutes before, unless the night has no
ingress feed. A quiet night: normal arrivals (a late rush, now and then a bank stalling for a
minute or two), scattered low-severity reports, and a busy but safe half-time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.domain.crowd_signals import IngressReading
from bot.domain.early_warning import Report
from bot.domain.grounds import Ground

KICKOFF = datetime(2026, 12, 9, 19, 45, tzinfo=UTC)
GATES = {"gate_a": ("stb", 22), "gate_away": ("away_upper", 8), "gate_c": ("bbs", 18),
         "gate_e": ("bms", 16), "gate_f": ("ws", 24)}  # entry point: (stand it fills, turnstiles)
PER_TURNSTILE = 11.0  # people a minute (planning figure: 660 an hour)
OPEN = timedelta(minutes=105)  # turnstiles open before kick-off
HALF_TIME = KICKOFF + timedelta(minutes=47)
FULL_TIME = KICKOFF + timedelta(minutes=110)
CONCOURSES = ("stb_concourse", "bbs_concourse", "bms_concourse", "ws_concourse")

PRESSING = ("crowd pressure building at the front", "people climbing the barriers",
            "surge in the queue, stewards pushed back", "pushing at the gate",
            "fans can't move near the turnstiles", "crowd density very high, crushing at front",
            "crush against the barrier", "heavy pressure on the gate line")
WORRIED = ("queue not moving and getting angry", "fans agitated, need more stewards",
           "person fainted in the crowd", "too many people here, send support",
           "fans shouting at stewards", "lost control of the queue")
EVERYDAY = ("fan refused entry, no ticket", "spilled drink on the stairs", "smoking in toilets",
            "steward needs a radio at the gate", "lost child reunited", "drunk fan warned",
            "queue at the gate moving fine", "fan asked for first aid, minor cut",
            "standing in the gangway, asked to sit", "flag on the barrier taken down",
            "litter bins full", "chanting, nothing offensive")
BUSY = ("busy concourse, queues at the bars", "crowd density high at the kiosks, moving",
        "toilets queue out the door", "busy but flowing", "long queue for food")
QUIET_TYPES = ("antisocial", "alcohol", "entry", "medical", "other", "persistent_standing",
               "crowd_density", "drugs", "ejection")


@dataclass(frozen=True)
class Said:
    """A report as a steward sent it: what the bot logs, and the steward's own words (the
    early warning matches its crowd-pressure words on these when the report comes in)."""

    report: Report
    text: str

    @property
    def at(self) -> datetime:
        """When it was reported."""
        return self.report.at


@dataclass
class Night:
    """One night: its reports and turnstile readings in time order, and its crush (if hot)."""

    seed: int
    kind: str
    events: list[Said | IngressReading] = field(default_factory=list)
    crush_zone: str = ""
    crush_at: datetime | None = None
    build_up_s: float = 0.0
    ingress: bool = True

    def ordered(self) -> list[Said | IngressReading]:
        """Every event by time (reports before readings at the same second)."""
        return sorted(self.events, key=lambda e: (e.at, isinstance(e, IngressReading)))


def _near(ground: Ground, zone: str) -> list[str]:
    return [z for z in ground.nearby(zone) if z != zone and z in ground.zones]


def arrivals(rng: random.Random, night: Night, anomaly: dict[str, tuple] | None = None,
             late_rush: float = 1.0) -> None:
    """A reading a minute per entry point from the turnstiles opening to 15 minutes after
    kick-off; `anomaly`: gate -> (from, to, "surge"|"stall"|"overfill", strength)."""
    start = KICKOFF - OPEN
    for gate, (_stand, turnstiles) in GATES.items():
        planned = turnstiles * PER_TURNSTILE
        sold = rng.uniform(0.7, 1.0)  # tickets sold for the section, of capacity
        capacity = int(planned * 70)  # the section's seats
        expected = sold * capacity
        inside, t = 0.0, start
        stalls = []
        if rng.random() < 0.25:  # a scanner restart now and then
            s0 = start + timedelta(minutes=rng.uniform(20, 95))
            stalls.append((s0, s0 + timedelta(seconds=rng.uniform(40, 150))))
        while t <= KICKOFF + timedelta(minutes=15):
            m = (t - start).total_seconds() / 60
            # most come in the last 45 minutes; a rush just before kick-off on busy nights
            shape = 0.35 + 0.9 * max(0.0, 1 - abs(m - 80) / 40)
            if 85 <= m <= 105:
                shape *= late_rush
            ratio = max(0.0, shape * rng.uniform(0.88, 1.08))
            stalled = any(a <= t < b for a, b in stalls)
            a = (anomaly or {}).get(gate)
            if a and a[0] <= t <= a[1]:
                if a[2] == "surge":
                    ratio = a[3] * rng.uniform(0.93, 1.07)
                elif a[2] == "stall":
                    stalled = True
                elif a[2] == "overfill":
                    inside = max(inside, capacity * rng.uniform(0.97, 1.02))
                    ratio = max(ratio, a[3])
            rate = 0.0 if stalled else min(ratio * planned, max(0.0, expected * 1.25 - inside))
            inside += rate
            night.events.append(IngressReading(gate, t, int(inside), capacity,
                                               round(rate, 1), planned, stalled))
            t += timedelta(minutes=1)


def background(rng: random.Random, ground: Ground, night: Night, n: int) -> None:
    """Scattered low-severity reports over the evening, in plain words."""
    zones = sorted(z for z, v in ground.zones.items() if v.kind not in ("mobile", "specialist",
                                                                         "fire"))
    start = KICKOFF - OPEN
    for i in range(n):
        at = start + timedelta(seconds=rng.uniform(0, 4 * 3600))
        sev = rng.choices((1, 2, 3), (3, 5, 2))[0]
        night.events.append(Said(Report(
            at, rng.choice(zones), sev, rng.choice(QUIET_TYPES),
            people=rng.choice((0, 0, 0, 2, 5, 20, 60)), ref=f"INC-{i + 1}", key=f"bg{i}"),
            rng.choice(EVERYDAY)))


def half_time(rng: random.Random, night: Night) -> None:
    """A busy but safe half-time: queues in the concourses, reported low."""
    for i in range(rng.randint(5, 12)):
        at = HALF_TIME + timedelta(seconds=rng.uniform(0, 15 * 60))
        night.events.append(Said(Report(
            at, rng.choice(CONCOURSES), rng.choice((1, 1, 2, 2, 2)),
            rng.choice(("crowd_density", "alcohol", "other", "crowd_density")),
            people=rng.choice((0, 40, 80, 150, 250)), ref=f"INC-h{i}", key=f"ht{i}"),
            rng.choice(BUSY)))


def quiet_night(seed: int, ground: Ground, k: int = 0) -> Night:
    """A night that never comes near a crush."""
    rng = random.Random(f"quiet:{seed}:{k}")
    night = Night(seed, "quiet")
    arrivals(rng, night, late_rush=rng.uniform(1.0, 1.5))
    background(rng, ground, night, rng.randint(30, 80))
    half_time(rng, night)
    return night


def hot_night(seed: int, ground: Ground, k: int = 0) -> Night:
    """A night with a crush: where and when it comes, its build-up and what shows it."""
    rng = random.Random(f"hot:{seed}:{k}")
    kind = rng.choice(("gate arrivals", "gate arrivals", "half-time concourse",
                       "full-time egress", "overfilled stand"))
    night = Night(seed, kind, ingress=rng.random() >= 0.12)
    build = rng.uniform(5, 20) * 60
    anomaly: dict[str, tuple] = {}
    if kind == "gate arrivals":
        gate = rng.choice(sorted(GATES))
        focal = gate
        crush = KICKOFF + timedelta(minutes=rng.uniform(-40, 5))
        lead_in = timedelta(minutes=rng.uniform(1, 6))  # the turnstiles see it first
        how = rng.choice(("surge", "stall"))
        anomaly[gate] = (crush - timedelta(seconds=build) - lead_in, crush, how,
                         rng.uniform(1.4, 2.2))
    elif kind == "half-time concourse":
        focal = rng.choice(CONCOURSES)
        crush = HALF_TIME + timedelta(minutes=rng.uniform(6, 14))
    elif kind == "full-time egress":
        focal = rng.choice(sorted(GATES) + ["stb_walkway", "bbs_walkway", "outside_bridge"])
        crush = FULL_TIME + timedelta(minutes=rng.uniform(3, 20))
    else:
        gate = rng.choice(sorted(GATES))
        stand = GATES[gate][0]
        focal = rng.choice([z for z in ground.nearby(gate) if z != gate] or [gate])
        crush = KICKOFF + timedelta(minutes=rng.uniform(-20, 10))
        lead_in = timedelta(minutes=rng.uniform(1, 6))
        anomaly[gate] = (crush - timedelta(seconds=build) - lead_in, crush, "overfill",
                         rng.uniform(1.0, 1.5))
        del stand
    start = crush - timedelta(seconds=build)
    if night.ingress:
        arrivals(rng, night, anomaly, late_rush=rng.uniform(1.0, 1.5))
    background(rng, ground, night, rng.randint(30, 80))
    half_time(rng, night)
    near = _near(ground, focal)
    # stewards nearby see it together: two to four reports in the first minutes, then more
    # and more as it tightens
    opening = rng.randint(2, 4)
    for i in range(opening + rng.randint(1, 5)):
        if i < opening:
            frac = 0.0 if i == 0 else rng.uniform(0, 150) / build
            sev = rng.choice((2, 3, 3, 4))
        else:
            frac = rng.random() ** 0.5
            sev = max(2, min(4, round(2.6 + 1.4 * frac + rng.uniform(-0.6, 0.6))))
        at = start + timedelta(seconds=frac * build)
        zone = focal if not near or rng.random() < 0.55 else rng.choice(near)
        pressing = rng.random() < 0.65
        typ = rng.choice(("crowd_density", "crowd_density", "entry", "other", "disorder",
                          "medical"))
        text = rng.choice(PRESSING if pressing else WORRIED)
        people = rng.choice((0, 0, rng.randint(20, 400)))
        # joined to an incident already open nearby: the incident is elsewhere, the report
        # keeps its own place
        ref = f"INC-{rng.randint(1, 9)}" if rng.random() < 0.5 else f"INC-b{i}"
        said = Said(Report(at, zone, sev, typ, people=people, ref=ref, key=f"b{i}"), text)
        night.events.append(said)
        if rng.random() < 0.25:  # the same report delivered again: counted once
            night.events.append(said)
    night.crush_zone, night.crush_at, night.build_up_s = focal, crush, build
    night.events.append(Said(Report(crush, focal, 5, "crowd_density", people=300,
                                    key="crush"), "crush, people down"))
    return night
