"""The incident's named rules (bot/domain/incident/incident_rules.py): the highest severity
wins on a merge and after a split; escalation is re-planned only while unacknowledged, on the
new severity's first tier. The store running them in its script: tests/store (merge, amend)."""

from __future__ import annotations

from bot.domain.incident.escalation_policy import Policy, SeverityPolicy, Tier
from bot.domain.incident.incident_rules import (
    merge_raise_test,
    remaining_severity,
    replan_after_s,
    replan_test,
    replans_escalation,
)
from bot.domain.ledger import Event


def ev(kind: str, **data: object) -> Event:
    return Event(kind=kind, at="2026-12-02T20:00:00Z", by="u", role="steward", data=data)


def test_a_merge_raises_only_when_the_report_is_more_severe() -> None:
    op, value = merge_raise_test(4)
    assert (op, value) == ("<", 4)  # the script raises when the stored severity < 4


def test_a_split_leaves_the_highest_severity_the_remaining_reports_support() -> None:
    log = [ev("incident.reported", severity=2),
           ev("incident.merged", token="a", report={"severity": 4}),
           ev("incident.merged", token="b", report={"severity": 3}),
           ev("incident.amended", new={"severity": "4"}, merged="a")]
    assert remaining_severity(log, "a") == 3
    assert remaining_severity(log, "b") == 4
    assert remaining_severity(log + [ev("incident.unmerged", token="b")], "a") == 2


def test_a_severity_a_person_amended_to_is_the_new_base() -> None:
    log = [ev("incident.reported", severity=2),
           ev("incident.merged", token="a", report={"severity": 4}),
           ev("incident.amended", new={"severity": "5"})]
    assert remaining_severity(log, "a") == 5
    assert remaining_severity([], "a") is None


def test_escalation_is_re_planned_only_while_unacknowledged() -> None:
    assert replans_escalation("reported")
    assert not any(map(replans_escalation, ("acknowledged", "closed", None)))
    assert replan_test() == ("==", "reported")


def test_the_re_plan_starts_the_new_severitys_first_tier_or_drops_it() -> None:
    policy = Policy({4: SeverityPolicy((Tier(120, ("command",)), Tier(300, ("police",))))})
    assert replan_after_s(policy, 4) == 120
    assert replan_after_s(policy, 2) is None
