"""An incident's escalation rules: per severity, who is told after how long unacknowledged
(tiers, a METHANE prompt at some), the open-too-long reminders, and the merge window and the
missing-person police timer that share config/escalation.toml. Pure rules;
handlers/incident/escalation.py fires them."""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tier:
    """One escalation step: after this long unacknowledged, tell these audiences."""

    after_s: int
    to: tuple[str, ...]
    methane: bool = False


@dataclass(frozen=True)
class SeverityPolicy:
    """Tiers and open-too-long reminders for one severity."""

    tiers: tuple[Tier, ...] = ()
    remind_after_s: int = 0
    remind_every_s: int = 0
    remind_to: tuple[str, ...] = ("control",)


@dataclass(frozen=True)
class Policy:
    """The whole escalation config (plus the merge window, which shares the file)."""

    severities: dict[int, SeverityPolicy]
    merge_window_s: int = 600
    # a missing child or vulnerable person not found by then: police are told (and control)
    missing_police_after_s: int = 900
    missing_to: tuple[str, ...] = ("police", "control")
    # control's copy of a procedure (evacuate, lockdown, all clear, ...) goes here too
    procedures_to: tuple[str, ...] = ("command", "police")
    # a broadcast posted once in a one-to-many chat: those who have not tapped "I have it"
    # by then get a direct message (a chaser), worst zone first
    chase_after_s: int = 60

    def for_severity(self, sev: int) -> SeverityPolicy:
        """The policy of a severity (an empty one if not configured)."""
        return self.severities.get(int(sev), SeverityPolicy())

    def report_deadlines(self, sev: int, reported_ts: int) -> dict[str, int]:
        """Deadlines a new report starts: tag -> due epoch seconds."""
        sp = self.for_severity(sev)
        out: dict[str, int] = {}
        if sp.tiers:
            out["ack"] = reported_ts + sp.tiers[0].after_s
        if sp.remind_after_s:
            out["open"] = reported_ts + sp.remind_after_s
        return out

    def reopen_deadlines(self, sev: int, now_ts: int) -> dict[str, int]:
        """Deadlines a reopened incident restarts (reminders only: it was acknowledged)."""
        sp = self.for_severity(sev)
        return {"open": now_ts + sp.remind_after_s} if sp.remind_after_s else {}


def load_policy(path: Path) -> Policy:
    """Read config/escalation.toml; a missing file means no escalation at all."""
    if not path.exists():
        log.warning("no escalation config at %s: incidents will not escalate", path)
        return Policy({})
    data = tomllib.loads(path.read_text())
    sevs: dict[int, SeverityPolicy] = {}
    for key, row in data.get("severity", {}).items():
        tiers = tuple(Tier(int(t["after_s"]), tuple(t.get("to", ["command"])),
                           bool(t.get("methane", False))) for t in row.get("tiers", []))
        if list(tiers) != sorted(tiers, key=lambda t: t.after_s):
            raise ValueError(f"{path.name}: severity {key} tiers must be in time order")
        sevs[int(key)] = SeverityPolicy(tiers, int(row.get("remind_after_s", 0)),
                                        int(row.get("remind_every_s", 0)),
                                        tuple(row.get("remind_to", ["control"])))
    merge, missing = data.get("merge", {}), data.get("missing", {})
    return Policy(sevs, int(merge.get("window_s", 600)),
                  int(missing.get("police_after_s", 900)),
                  tuple(missing.get("to", ["police", "control"])),
                  tuple(data.get("procedures", {}).get("to", ["command", "police"])),
                  int(data.get("broadcast", {}).get("chase_after_s", 60)))


_policies: dict[str, Policy] = {}


def policy_for(settings: Any) -> Policy:
    """The escalation policy of an app's settings (config_dir/escalation.toml), read once
    per process."""
    key = str(settings.config_dir)
    if key not in _policies:
        _policies[key] = load_policy(Path(key) / "escalation.toml")
    return _policies[key]
