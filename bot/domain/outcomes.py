"""What a command did, and why a write was refused, as values: the words are chosen at the
edge (handlers, the core), never written by the store nor read back from a reply."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class Logged:
    """A report opened incident n (again: a redelivery found it opened already)."""

    n: int
    again: bool = False


@dataclass(frozen=True)
class Joined:
    """A report was added to incident n, an open one it matched (the same incident)."""

    n: int


@dataclass(frozen=True)
class Added:
    """An update or evidence was added to incident n."""

    n: int


Outcome = Logged | Joined | Added


class Reason(Enum):
    """Why the store refused a write (nothing was written): a closed set."""

    NO_FIXTURE = "no_fixture"  # subject: the fixture id
    FIXTURE_EXISTS = "fixture_exists"  # subject: the fixture id
    NO_INCIDENT = "no_incident"  # subject: the incident number
    NO_DECISION = "no_decision"  # subject: the decision number
    SUPERSEDED = "superseded"  # subject: the decision; current: the entry that superseded it
    NO_LINK = "no_link"  # the incident to link (an arrest, a ban) is unknown; subject: n
    STATUS = "status"  # the incident's status does not allow the move; current: the status
    CHANGED = "changed"  # the incident changed since it was read; subject: n
    STALE = "stale"  # a deadline no longer applies (acknowledged or closed)
    CLAIMED = "claimed"  # another replica took it first (a deadline, a scheduled slot)
    STEP_TAKEN = "step_taken"  # a guided form's step was already answered elsewhere
    UNKNOWN_INVITE = "unknown_invite"  # an invite code unknown, used or expired
    NOT_TARGETED = "not_targeted"  # an "I have it" from someone a broadcast was not sent to
    ALREADY_SENT = "already_sent"  # the broadcast id exists (a second confirm of one draft)
    TABARD_TAKEN = "tabard_taken"  # another account is linked to this tabard number
    HAS_TABARD = "has_tabard"  # this account is linked to another tabard number
    NOT_MISSING = "not_missing"  # /found names no missing-person report; subject: the id
    SEARCH_OVER = "search_over"  # the search was closed (found) or police told already
    BRIEFING_CHANGED = "briefing_changed"  # a sign-off of a version no longer current
    NO_CLUB = "no_club"  # no club of this id is registered; subject: the club id
    CLUB_EXISTS = "club_exists"  # a club of this id is registered already; subject: its id
