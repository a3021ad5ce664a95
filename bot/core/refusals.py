"""The words for a refused write (the store gives a reason, never a sentence): the core's
default answer; a handler may say it its own way."""

from __future__ import annotations

from bot.domain.messages import MEDIA_ICONS, MediaFault
from bot.domain.outcomes import Reason
from bot.store import Refused

WORDS = {
    Reason.NO_FIXTURE: "No fixture {subject}.",
    Reason.FIXTURE_EXISTS: "Fixture {subject} already exists.",
    Reason.NO_INCIDENT: "No incident INC-{subject} in this fixture.",
    Reason.NO_DECISION: "No decision D-{subject} in this fixture.",
    Reason.SUPERSEDED: "D-{subject} is already superseded by D-{current}: "
                       "supersede D-{current} instead.",
    Reason.NO_LINK: "No incident INC-{subject} to link.",
    Reason.STATUS: "INC-{subject} is already {current}; nothing changed.",
    Reason.CHANGED: "INC-{subject} changed meanwhile; look again with /incident {subject}.",
    Reason.STALE: "That no longer applies (acknowledged or closed meanwhile).",
    Reason.CLAIMED: "Already done by another replica.",
    Reason.STEP_TAKEN: "That step was already answered (another tap or device): "
                       "use the latest form message.",
    Reason.UNKNOWN_INVITE: "Unknown or used invite code.",
    Reason.NOT_TARGETED: "That message was not sent to you.",
    Reason.ALREADY_SENT: "That was already sent; see /status for who has it.",
    Reason.TABARD_TAKEN: "That tabard number is linked to another account; ask control.",
    Reason.HAS_TABARD: "Your account is linked to another tabard number; ask control.",
    Reason.NOT_MISSING: "No missing-person report {subject}.",
    Reason.SEARCH_OVER: "That search is already closed.",
    Reason.BRIEFING_CHANGED: "The briefing has changed: read the new one and sign it off.",
}


def said(exc: Refused) -> str:
    """One line saying why a write was refused."""
    return WORDS[exc.reason].format(subject=exc.subject, current=exc.current)


def media_refused(fault: MediaFault) -> str:
    """One line refusing an attachment whose metadata is out of range (its numbers unsaid)."""
    label = MEDIA_ICONS.get(fault.kind, fault.kind).split(" ", 1)[-1]
    if fault.what == "duration":
        return (f"{label[:1].upper()}{label[1:]}s up to {fault.limit_s // 60} min are kept; "
                f"this one's length is out of range. Nothing was logged.")
    return (f"That {label} is not a point on the map (latitude -90 to 90, longitude -180 to "
            "180). Nothing was logged.")
