"""An incident's escalation rules as config/escalation.toml gives them: who is told after how
long unacknowledged, when reminders start, and what a reopened incident restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.domain.incident.escalation_policy import load_policy

ROOT = Path(__file__).resolve().parents[3]
POLICY = load_policy(ROOT / "config" / "escalation.toml")


def test_a_severity_3_report_escalates_to_command_after_two_minutes_then_police_too() -> None:
    tiers = POLICY.for_severity(3).tiers
    assert [(t.after_s, t.to) for t in tiers] == [(120, ("command",)),
                                                   (300, ("command", "police"))]
    assert POLICY.report_deadlines(3, 1_000) == {"ack": 1_120, "open": 2_200}


def test_a_reopened_incident_restarts_only_its_reminder() -> None:
    assert POLICY.reopen_deadlines(3, 5_000) == {"open": 6_200}
    assert POLICY.report_deadlines(1, 0) == {"open": 3600}  # severity 1: reminders, no tiers


def test_an_unconfigured_severity_and_a_missing_file_never_escalate(tmp_path: Path) -> None:
    assert POLICY.report_deadlines(9, 0) == {}
    none = load_policy(tmp_path / "escalation.toml")
    assert none.report_deadlines(5, 0) == {} and none.merge_window_s == 600


def test_tiers_out_of_time_order_are_refused_naming_the_severity(tmp_path: Path) -> None:
    bad = tmp_path / "escalation.toml"
    bad.write_text("[severity.4]\ntiers = [{ after_s = 300 }, { after_s = 60 }]\n")
    with pytest.raises(ValueError, match="severity 4 tiers must be in time order"):
        load_policy(bad)
