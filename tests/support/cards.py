"""Incident cards for delivery tests: what the core sends control for incident `n`."""

from __future__ import annotations

from bot.domain.incident.incident_card import IncidentCard
from bot.domain.messages import Outbound, Reply


def card(n: int, *, fixture: str = "fx", sev: int = 2, status: str = "Reported",
         kind: str = "Missile", where: bool = True) -> Outbound:
    """Incident n's live card for control (edited in place by the next one for n), its facts
    carried as the renderer carries them."""
    lines = [f"Severity {sev} x", *([f"Where: Gate {n}"] if where else []), f"Status: {status}"]
    facts = IncidentCard(f"INC-{n}", n, sev, kind.lower(), kind, f"Gate {n}" if where else "",
                         status.lower().replace(" ", "_"), status)
    return Outbound("control", Reply("\n".join(lines), title=f"INC-{n} {kind}", card=facts),
                    ref=f"INC-{n}", fixture=fixture)
