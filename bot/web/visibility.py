"""What a signed-in member may see on the control-room screen, as plain JSON-ready data.

Stewards see only incidents they reported; arrest and ban records (never custody references)
only for police and the control room; a viewer sees counts, not records or intelligence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.core.roles import RoleMatrix
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.incident.incident_card import IncidentCard
from bot.domain.ledger import Event
from bot.domain.vocab import (
    BAN_TYPES,
    INCIDENT_TYPES,
    OFFENCES,
    PHASES,
    PLACES,
    ROLES,
    STATUSES,
    SUPPORTER_SIDES,
)
from bot.evidence.summary import figures_from_counts, mmss

ACTIONS = ("ack", "dispatch", "resolve")
CLOSED = ("closed",)
# Incident fields a screen shows (kept few: every change goes to every screen); everything
# else in the hash stays in the store.
INCIDENT_FIELDS = ("id", "type", "location", "status", "reported_at", "description",
                   "affiliation", "people", "owner_name", "reporter_name")
PLACE_WIDTH = 18  # characters a card gives a place name before it takes the ground's `short`


@dataclass(frozen=True)
class Viewer:
    """A signed-in member as the screen sees them."""

    who: str  # platform:user of the member
    role: str
    name: str
    roles: RoleMatrix  # who may do and read what (config/roles.toml)

    @property
    def steward(self) -> bool:
        """Sees only their own reports."""
        return self.role == "steward"

    @property
    def police_view(self) -> bool:
        """Sees arrest and ban records (never custody references): roles cleared for the
        restricted part of briefings."""
        return self.roles.allowed(self.role, "intel")

    def may(self, action: str) -> bool:
        """May press this board button (the core checks again)."""
        return self.roles.allowed(self.role, action)

    @property
    def key(self) -> str:
        """What the rendering of a change depends on (stewards: who they are)."""
        return f"steward:{self.who}" if self.steward else self.role


def board_column(status: str) -> str:
    """The board column an open incident's status puts it in."""
    return "contained" if status == "handed_to_police" else status


def sees_incident(viewer: Viewer, inc: dict[str, Any] | None) -> bool:
    """May this member see this incident?"""
    if inc is None:
        return False
    return not viewer.steward or inc.get("reporter") == viewer.who


def incident_view(inc: dict[str, str], ground: Ground) -> dict[str, Any]:
    """An incident for the screen: display fields and labels only."""
    out: dict[str, Any] = {k: inc[k] for k in INCIDENT_FIELDS if inc.get(k)}
    card = IncidentCard.made(int(inc.get("n") or 0), int(inc.get("severity", 1)),  # as shown
                             inc.get("type", ""), inc.get("location", ""),
                             inc.get("status", "reported"), ground,
                             inc.get("failed_check", ""))
    out["severity"] = card.severity
    out["type_label"] = card.what
    out["location_label"] = card.place
    out["place"] = ground.short_label(inc.get("location", ""), PLACE_WIDTH)
    out["reports"] = 1 + int(inc.get("merged") or 0)  # joined reports are the signal
    if int(inc.get("escalated_tier") or 0):
        out["escalated"] = int(inc["escalated_tier"])
    out["status_label"] = card.status_label
    out["closed"] = card.closed
    if why := alert_reason(inc):
        out["alert"] = why
    return out


ALERT_SEVERITY = 4  # an unacknowledged incident this severe is on every screen's banner


def alert_reason(inc: dict[str, Any]) -> str:
    """Why an incident is on the screens' banner ('' when it is not): unacknowledged and S4/S5,
    or escalated on its timer. The server's answer, so every screen shows the same set,
    whatever each saw happen."""
    if inc.get("status", "reported") != "reported":
        return ""
    if int(inc.get("escalated_tier") or 0):
        return "Escalated, not acknowledged"
    sev = int(inc.get("severity") or 1)
    return "Not acknowledged" if sev >= ALERT_SEVERITY else ""


def describe(ev: Event, ground: Ground) -> str:
    """One line saying what an event was."""
    d = ev.data
    iid = d.get("id", "")
    if ev.kind == "incident.reported":
        text = (f"{iid} reported: {INCIDENT_TYPES.label(d.get('type', ''))} at "
                f"{ground.label(d.get('location', ''))}, S{d.get('severity', '?')}")
        return text + (f" – {d['description']}" if d.get("description") else "")
    if ev.kind == "incident.status":
        note = f" – {d['note']}" if d.get("note") else ""
        return f"{iid} {STATUSES.label(d.get('to', '')).lower()}{note}"
    if ev.kind == "incident.merged":
        return f"Another report of {iid} (same incident)"
    if ev.kind == "incident.amended":
        new = ", ".join(f"{k} {d.get('old', {}).get(k)}→{v}" for k, v in d.get("new", {}).items())
        return f"{iid} amended: {new}"
    if ev.kind.startswith("incident."):
        word = ev.kind.split(".", 1)[1]
        return f"{iid} {word}" + (f": {d['text']}" if d.get("text") else "")
    if ev.kind == "arrest.recorded":
        n = int(d.get("count", 1))
        link = f" ({d['incident']})" if d.get("incident") else ""
        return (f"Arrest ×{n}: {OFFENCES.label(d.get('offence', ''))}, "
                f"{PLACES.label(d.get('place', '')).lower()}, "
                f"{SUPPORTER_SIDES.label(d.get('side', '')).lower()}{link}")
    if ev.kind == "ban.recorded":
        n = int(d.get("count", 1))
        return f"Banning order ×{n}: {BAN_TYPES.label(d.get('type', ''))}, {d.get('status', '')}"
    if ev.kind == "fixture.phase":
        return f"Phase: {PHASES.label(d.get('phase', ''))}"
    if ev.kind == "fixture.early_warning":
        return str(d.get("text", "Early warning"))
    if ev.kind == "fixture.early_warning_cleared":
        how = "dismissed" if d.get("why") == "dismissed" else "cleared"
        return f"Early warning {how} — {ground.short_label(str(d.get('zone', '')), 30)}"
    if ev.kind == "ingress.alert":
        return str(d.get("text", "Ingress alert"))
    if ev.kind == "fixture.created":
        return f"Fixture created: {d.get('home', '')} v {d.get('away', '')}"
    if ev.kind == "fixture.changed":
        keys = ", ".join(k for k in d if k not in ("id", "notes"))
        return "Fixture changed" + (f": {keys}" if keys else "")
    return ev.kind.replace(".", " ")


def who_label(ev: Event, names: dict[str, str] | None = None) -> str:
    """Who did it, as the log shows it: their name, else their role (never a raw platform
    id); the bot's own entries say so."""
    web = ev.by.startswith("web:")
    key = ev.by[4:] if web else ev.by
    name = (names or {}).get(key, "")
    if not name:
        system = key.split(":", 1)[0] in ("system", "cli", "") or ev.role == "system"
        name = "bot" if system else ROLES.label(ev.role) if ev.role else "someone"
    return name + (" (web)" if web else "")


def event_view(ev: Event, inc: dict[str, str] | None, viewer: Viewer,
               ground: Ground, names: dict[str, str] | None = None) -> dict[str, Any] | None:
    """A log line for this member, or None when the event is not for their eyes."""
    police = ev.kind in ("arrest.recorded", "ban.recorded")
    if police and not viewer.police_view:
        return None
    if ev.kind.startswith("incident.") and not sees_incident(viewer, inc):
        return None
    if viewer.steward and not ev.kind.startswith("incident.") and ev.kind != "fixture.phase":
        return None
    who = who_label(ev, names)
    out: dict[str, Any] = {"id": ev.id, "kind": ev.kind, "at": ev.at, "phase": ev.phase,
                           "who": "" if viewer.steward else who, "what": describe(ev, ground)}
    if ev.kind.startswith("incident.") and inc is not None:
        out.update(incident=inc.get("id", ""), type=inc.get("type", ""),
                   severity=int(inc.get("severity", 1)), location=inc.get("location", ""))
    if ev.kind == "incident.merged" and isinstance(ev.data.get("report"), dict):
        # a joined report stays where it was seen: its own place and severity, not the
        # incident's (the heat map and its pin are there)
        rep = ev.data["report"]
        if rep.get("location"):
            out["location"] = str(rep["location"])
        if str(rep.get("severity") or "").isdigit():
            out["severity"] = int(rep["severity"])
    if police and ev.data.get("zone"):
        out["location"] = ev.data["zone"]
    if ev.kind in ("fixture.early_warning", "fixture.early_warning_cleared"):
        out.update(location=ev.data.get("zone", ""), zones=ev.data.get("zones", []))
    if ev.kind == "ingress.alert":  # on the map at its stand or entry point
        out["location"] = ev.data.get("zone", "")
    return out


def tiles(fx: Fixture, counts: dict[str, int], rt: dict[str, Any],
          unacked: int) -> dict[str, Any]:
    """The figures on the tiles, for every role (trimmed per viewer by tiles_for)."""
    fig = figures_from_counts(counts)
    inc, arr, ban = fig["incidents"], fig["arrests"], fig["bans"]
    return {
        "phase": fx.phase, "phase_label": PHASES.label(fx.phase),
        "open": inc["open"], "closed": inc["closed"], "total": inc["total"],
        "unacked": unacked,
        "arrests": arr["total"], "arrests_inside": arr["inside_outside"].get("inside", 0),
        "arrests_outside": arr["inside_outside"].get("outside", 0),
        "arrests_by_offence": {OFFENCES.label(k): v for k, v in arr["by_offence"].items()},
        "bans": ban["total"],
        "bans_by_type": {BAN_TYPES.label(k): v for k, v in ban["by_type"].items()},
        "median_ack": mmss(rt.get("median_ack_s")), "worst_ack": mmss(rt.get("worst_ack_s")),
    }


def tiles_for(all_tiles: dict[str, Any], viewer: Viewer,
              own: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The tiles a member may see: a viewer gets totals only, a steward their own count."""
    if viewer.steward:
        mine = own or []
        return {"phase": all_tiles["phase"], "phase_label": all_tiles["phase_label"],
                "open": sum(not i["closed"] for i in mine),
                "closed": sum(bool(i["closed"]) for i in mine), "total": len(mine)}
    if viewer.police_view:
        return dict(all_tiles)
    return {k: v for k, v in all_tiles.items()
            if k not in ("arrests_by_offence", "bans_by_type")}
