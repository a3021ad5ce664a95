"""An incident's rules, named once: the highest severity wins on a merge (and what is left
after a split), and a severity change re-plans escalation while unacknowledged.

The store's op builders (bot/store/client.py `_raise_ops`, bot/store/lifecycle.py
`_amend_ops`) call these and run them inside the write's one round trip; the handlers call
them to compute what they hand the store. Pure rules, no I/O.
"""

from __future__ import annotations

from bot.domain.incident.escalation_policy import Policy
from bot.domain.ledger import Event

UNACKNOWLEDGED = "reported"  # the one status in which escalation tiers still fire


def merge_raise_test(reported: int) -> tuple[str, int]:
    """Highest severity wins on merge: the comparison (the incident's severity, then this op,
    then this value) under which a merged report raises its incident to the report's own
    severity; a merge never lowers one. The store's script runs it against the stored value."""
    return "<", reported


def remaining_severity(events: list[Event], token: str) -> int | None:
    """Highest severity wins, after a split: the severity INC-n's reports support once the
    report `token` is split out, the highest of its own report (or the last /amend of
    severity, which a person chose) and the merged reports still with it; None when the log
    says nothing."""
    base: int | None = None
    merged: dict[str, int] = {}
    for ev in events:
        d = ev.data
        if ev.kind == "incident.reported":
            base = int(d["severity"])
        elif ev.kind == "incident.amended" and "severity" in d.get("new", {}) \
                and not d.get("merged") and not d.get("split"):
            base, merged = int(d["new"]["severity"]), {}
        elif ev.kind == "incident.merged":
            merged[d.get("token", "")] = int(d.get("report", {}).get("severity") or 0)
        elif ev.kind == "incident.unmerged":
            merged.pop(d.get("token", ""), None)
    merged.pop(token, None)
    return None if base is None else max([base, *merged.values()])


def replans_escalation(status: str | None) -> bool:
    """Escalation re-plan: a severity change (an amendment, a merge, a split) restarts the
    tiers from the first, on the new severity's timers, only while the incident is
    unacknowledged; an acknowledged or closed one has no tiers left to fire."""
    return status == UNACKNOWLEDGED


def replan_test() -> tuple[str, str]:
    """The escalation re-plan's condition as the store's script compares it with the status
    it reads inside the write (see replans_escalation)."""
    return "==", UNACKNOWLEDGED


def replan_after_s(policy: Policy, severity: int) -> int | None:
    """Escalation re-plan: the first tier's delay of the new severity, counted from the
    report's time (None: that severity does not escalate, so the pending tier is dropped)."""
    tiers = policy.for_severity(severity).tiers
    return tiers[0].after_s if tiers else None
