"""An incident as every surface shows it: the card's facts, as a value.

Made once from the record (`IncidentCard.of`) by the card renderer (handlers/incident/card.py) and
carried on every message that shows an incident (`Reply.card`), so the board, digests,
severity routing and the web view read these fields and never the rendered words.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.grounds import Ground
from bot.domain.incident.incident_model import Incident, failed_title, incident_id
from bot.domain.vocab import STATUSES


@dataclass(frozen=True)
class IncidentCard:
    """The facts of one incident's card: who it is, how bad, where, and where it stands."""

    id: str  # "INC-7"
    n: int
    severity: int  # 1-5
    kind: str  # the incident type key ("missile")
    what: str  # the type's label ("Throwing missiles")
    place: str  # the location's full name
    status: str  # the status key ("acknowledged")
    status_label: str  # its label ("Acknowledged")

    @property
    def closed(self) -> bool:
        """Whether the incident is closed."""
        return self.status == "closed"

    @classmethod
    def of(cls, inc: Incident, ground: Ground) -> IncidentCard:
        """The card of an incident as recorded, with its ground's names."""
        return cls.made(inc.n, inc.severity, inc.type, inc.location, inc.status, ground,
                        inc.failed_check)

    @classmethod
    def made(cls, n: int, severity: int, kind: str, location: str, status: str,
             ground: Ground, failed_check: str = "") -> IncidentCard:
        """The card of incident n from the fields it shows (a screen's hash of them)."""
        return cls(id=incident_id(n), n=n, severity=severity, kind=kind,
                   what=failed_title(kind, failed_check), place=ground.label(location),
                   status=status, status_label=STATUSES.label(status))


CARD = "card"  # a LiveRef's view: the live card control (and command) see
LOGGED = "logged"  # a LiveRef's view: the reporter's answer
RAISED = "raised"  # a LiveRef's view: the inspector's answer to a failed item (its incident)


@dataclass(frozen=True)
class LiveRef:
    """A message about an incident a write is logging, stored as a reference (`view` of
    incident `n`: "card" for the live card, "logged" for the reporter's answer, "raised" for
    the answer to a failed inspection item) and rendered
    at send time from the record; n is 0 until the store has numbered it."""

    view: str
    n: int = 0
