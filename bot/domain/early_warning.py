"""Early warning: a zone heating up, from the reports in it and its neighbours (pure rules).

Reports are counted, not incidents: a report that joined an incident is the signal. Rules
come from config/early_warning.toml; each (zone, rule) warns once per quiet period.
"""

from __future__ import annotations

import tomllib
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bot.domain.grounds import Ground
from bot.domain.vocab import INCIDENT_TYPES


@dataclass(frozen=True)
class Rule:
    """Within the window, `reports` reports of severity >= min_severity (rising: each more
    severe than or as severe as the one before, with at least one rise), in the zone and its
    neighbours, or with `same_zone` in one zone and `same_type` of one kind (a crowd building
    at one gate)."""

    name: str
    reports: int
    min_severity: int = 1
    rising: bool = False
    same_zone: bool = False
    same_type: bool = False


@dataclass(frozen=True)
class Rules:
    """Every rule, the window they count in and how long a zone stays quiet after a warning."""

    rules: tuple[Rule, ...]
    window_s: int = 300
    quiet_s: int = 1800


def load_rules(path: Path) -> Rules:
    """The rules of a TOML file (config/early_warning.toml)."""
    raw = tomllib.loads(path.read_text())
    rules = tuple(Rule(name=str(r["name"]), reports=int(r["reports"]),
                       min_severity=int(r.get("min_severity", 1)),
                       rising=bool(r.get("rising", False)),
                       same_zone=bool(r.get("same_zone", False)),
                       same_type=bool(r.get("same_type", False)))
                  for r in raw.get("rule", []))
    if not rules or any(r.reports < 1 or not 1 <= r.min_severity <= 5 for r in rules):
        raise ValueError(f"{path}: each [[rule]] needs reports >= 1 and min_severity 1-5")
    return Rules(rules, int(raw.get("window_s", 300)), int(raw.get("quiet_s", 1800)))


@dataclass(frozen=True)
class Report:
    """One report as the rules see it."""

    at: datetime
    zone: str
    severity: int
    type: str
    affiliation: str = "unknown"


@dataclass(frozen=True)
class Warning:
    """A zone heating up: where, by which rule, the reports that made it, and its one line."""

    zone: str
    zones: tuple[str, ...]
    rule: str
    reports: tuple[Report, ...]
    text: str


@dataclass
class Watch:
    """The reports of one fixture's last window, and when each (zone, rule) last warned."""

    rules: Rules
    ground: Ground
    recent: deque[Report] = field(default_factory=deque)
    warned: dict[tuple[str, str], datetime] = field(default_factory=dict)

    def feed(self, report: Report) -> list[Warning]:
        """Take one report; the warnings it raises (none while its zone is quiet)."""
        self.recent.append(report)
        while (report.at - self.recent[0].at).total_seconds() > self.rules.window_s:
            self.recent.popleft()
        near = set(self.ground.nearby(report.zone))
        here = [r for r in self.recent if r.zone in near]
        out = []
        for rule in self.rules.rules:
            pool = [r for r in here if (not rule.same_zone or r.zone == report.zone)
                    and (not rule.same_type or r.type == report.type)]
            hits = matching(rule, pool)
            if not hits:
                continue
            last = self.warned.get((report.zone, rule.name))
            if last is not None and (report.at - last).total_seconds() < self.rules.quiet_s:
                continue
            for z in near:  # the neighbours heard it too: one warning for the area
                self.warned[(z, rule.name)] = report.at
            # named for where most of it is (the first report's place on a tie)
            zone = max(dict.fromkeys(r.zone for r in hits),
                       key=lambda z: sum(r.zone == z for r in hits))
            out.append(Warning(zone, tuple(sorted(near)), rule.name, tuple(hits),
                               warning_text(self.ground, zone, hits)))
        return out


def matching(rule: Rule, reports: list[Report]) -> list[Report]:
    """The reports that make a rule match (empty when it does not)."""
    if rule.rising:
        if not reports or reports[-1].severity < rule.min_severity:
            return []
        run = [reports[-1]]
        for r in reversed(reports[:-1]):  # back from the newest while severity falls
            if r.severity > run[0].severity:
                break
            run.insert(0, r)
        rose = run[0].severity < run[-1].severity
        return run if len(run) >= rule.reports and rose else []
    hits = [r for r in reports if r.severity >= rule.min_severity]
    return hits if len(hits) >= rule.reports else []


def warning_text(ground: Ground, zone: str, hits: list[Report]) -> str:
    """'Early warning — North-east segregation: 2 × S4 missiles both ways in 2 min, risk of
    breach' (the words are the ground's and the vocabulary's, never a reporter's)."""
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
    kinds = {ground.zones[z].kind for z in ground.nearby(zone) if z in ground.zones}
    if "segregation" in kinds:
        risk = "risk of breach"
    elif any(r.type == "crowd_density" for r in hits):
        risk = "risk of crushing"
    else:
        risk = "may escalate"
    where = ground.short_label(zone, 30)
    what = " and ".join(types[:2])
    others = f" (+{len(hits) - n_worst} more)" if len(hits) > n_worst else ""
    return (f"Early warning — {where}: {n_worst} × S{worst} {what}{both}{others} in "
            f"{span} min, {risk}")
