"""Which fixture fields are restricted (intelligence): they are kept in the fixture's
restricted log, never in the ordinary event log that exports, feeds and screens read."""

from __future__ import annotations

import json
from typing import Any

# The notes every role may read (the method part of a briefing); every other note is
# intelligence, so a note key nobody listed here fails closed.
PUBLIC_NOTES = frozenset({"segregation", "gates", "alcohol", "pyro", "travel", "dispersal",
                          "contacts"})
RESTRICTED_FIELDS = frozenset({"category_why"})
RESTRICTED_KIND = "fixture.restricted"


def note_restricted(key: str, intel_notes: frozenset[str] = frozenset()) -> bool:
    """Whether a briefing note is intelligence (configured so, or not a public note)."""
    return key in intel_notes or key not in PUBLIC_NOTES


def _notes(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    try:
        v = json.loads(value) if value else {}
    except (TypeError, ValueError):
        return {}
    return v if isinstance(v, dict) else {}


def split_fixture_data(data: dict[str, Any], intel_notes: frozenset[str] = frozenset()
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(public, restricted) parts of a fixture event's data; the public part names the
    restricted fields it left out under "restricted" (names only, never values)."""
    public, restricted = dict(data), {}
    for name in RESTRICTED_FIELDS & public.keys():
        value = public.pop(name)
        if value:
            restricted[name] = value
    if "notes" in public:
        notes = _notes(public["notes"])
        secret = {k: v for k, v in notes.items() if note_restricted(k, intel_notes)}
        public["notes"] = json.dumps({k: v for k, v in notes.items() if k not in secret},
                                     separators=(",", ":"))
        restricted.update({f"notes.{k}": v for k, v in secret.items()})
    if restricted:
        public["restricted"] = sorted(set(public.get("restricted", [])) | restricted.keys())
        if "id" in data:
            restricted = {"id": data["id"], **restricted}
    return public, restricted
