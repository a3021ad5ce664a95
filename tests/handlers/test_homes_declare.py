"""The root gathers what each home declares: every deadline the store writes has its firer,
and a tag two homes claim stops the start."""

from __future__ import annotations

import pytest

import handlers


def test_every_deadline_tag_has_the_firer_of_its_home():
    assert {tag: fire.__module__ for tag, fire in handlers.DEADLINES.items()} == {
        "ack": "handlers.incident.escalation", "open": "handlers.incident.escalation",
        "police": "handlers.stewarding.missing_timer",
        "chase": "handlers.stewarding.chase_timer",
        "review": "handlers.decisions.review_timer"}
    assert list(handlers.SLOTS) == ["rollcall"]


def test_a_deadline_tag_two_homes_declare_is_refused():
    with pytest.raises(ValueError, match="'ack' declared by two homes"):
        handlers.declared("deadline tag", lambda home: {"ack": 1} if home in (
            handlers.incident_home, handlers.stewarding_home) else {})
