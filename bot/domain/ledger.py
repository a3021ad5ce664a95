"""Events (the truth) and the counters derived from them, as pure functions.

The store writes counters with the same `deltas()` the recount uses, so a summary
built from counters always equals a recount of the event stream.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from bot.domain.clock import parse_iso

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """What a user typed, as text the log can hold: lone surrogates (not characters, and
    impossible in UTF-8) become U+FFFD; everything else is kept exactly."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


class Var:
    """A value the store fills in while it writes (e.g. the new incident's number `n`, the
    fixture's `phase`, the refused incident's `current` status). Join it to text with `+`."""

    # A plain class, not a dataclass: built on every write, so kept cheap. `wire` is where
    # the store caches how it sends this value (opaque here).
    __slots__ = ("name", "wire")

    def __init__(self, name: str) -> None:
        self.name = name
        self.wire: object = None

    def __add__(self, other: str | Var | Tpl) -> Tpl:
        return Tpl((self,)) + other

    def __radd__(self, other: str) -> Tpl:
        return Tpl((other, self))

    def __eq__(self, other: object) -> bool:
        return type(other) is Var and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Var", self.name))

    def __repr__(self) -> str:
        return f"Var({self.name!r})"

    def __format__(self, spec: str) -> str:
        raise TypeError("a store Var cannot be formatted into a string; join it with +")


class Tpl:
    """Text made of literal parts and Vars, e.g. "INC-" + Var("n")."""

    __slots__ = ("parts", "wire", "_hash")

    def __init__(self, parts: tuple[str | Var, ...]) -> None:
        self.parts = parts
        self.wire: object = None
        self._hash = 0

    def __add__(self, other: str | Var | Tpl) -> Tpl:
        more = other.parts if isinstance(other, Tpl) else (other,)
        return Tpl(self.parts + more)

    def __radd__(self, other: str) -> Tpl:
        return Tpl((other, *self.parts))

    def __eq__(self, other: object) -> bool:
        return type(other) is Tpl and other.parts == self.parts

    def __hash__(self) -> int:
        if not self._hash:
            self._hash = hash(("Tpl", self.parts))
        return self._hash

    def __repr__(self) -> str:
        return f"Tpl({self.parts!r})"

    def __format__(self, spec: str) -> str:
        raise TypeError("a store Tpl cannot be formatted into a string; join it with +")


Text = str | Var | Tpl  # what a write may carry where the store fills something in
PHASE = Var("phase")  # the fixture's current phase, read in the same write


@dataclass
class Event:
    """One entry of a fixture's append-only log."""

    kind: str
    at: str
    by: str
    role: str
    data: dict  # values may be Vars or Tpls until stored
    phase: str | Var = PHASE
    id: str = ""  # the stream id, once stored

    @classmethod
    def from_stream(cls, sid: str, f: dict[str, str]) -> Event:
        """Rebuild an event read back from the stream."""
        return cls(kind=f["kind"], at=f["at"], by=f["by"], role=f.get("role", ""),
                   data=json.loads(f.get("data", "{}")), phase=f.get("phase", ""), id=sid)


def deltas(ev: Event) -> dict[str | Tpl, int]:
    """Counter increments an event causes (fields of the fixture's counts hash); before the
    event is stored its phase is the store's Var, so that key is a Tpl."""
    d = ev.data
    if ev.kind == "incident.reported":
        return {
            "inc:total": 1,
            "inc:open": 1,
            f"inc:type:{d['type']}": 1,
            f"inc:sev:{d['severity']}": 1,
            f"inc:loc:{d['location']}": 1,
            "inc:phase:" + ev.phase: 1,
            f"inc:aff:{d.get('affiliation', 'unknown')}": 1,
            f"inc:lt:{d['location']}:{d['type']}": 1,  # by place and type: the form's order
        }
    if ev.kind == "incident.status":
        if d.get("cls") == "close":
            return {"inc:open": -1, "inc:closed": 1}
        if d.get("cls") == "reopen":
            return {"inc:open": 1, "inc:closed": -1}
        return {}
    if ev.kind == "incident.amended":
        out: Counter[str] = Counter()
        for fld, prefix in (("type", "type"), ("severity", "sev"), ("location", "loc")):
            if fld in d.get("new", {}):
                out[f"inc:{prefix}:{d['old'][fld]}"] -= 1
                out[f"inc:{prefix}:{d['new'][fld]}"] += 1
        was = d.get("was")
        if was and ({"type", "location"} & set(d.get("new", {}))):
            now = {**was, **{k: v for k, v in d["new"].items() if k in was}}
            out[f"inc:lt:{was['location']}:{was['type']}"] -= 1
            out[f"inc:lt:{now['location']}:{now['type']}"] += 1
        return dict({k: v for k, v in out.items() if v})
    if ev.kind == "arrest.recorded":
        n = int(d.get("count", 1))
        o, io, sd = d["offence"], d["place"], d["side"]
        return {"arr:total": n, f"arr:o:{o}": n, f"arr:io:{io}": n, f"arr:sd:{sd}": n,
                f"arr:x:{o}:{io}:{sd}": n}
    if ev.kind == "ban.recorded":
        n = int(d.get("count", 1))
        side = d.get("side", "home")
        return {"ban:total": n, f"ban:type:{d['type']}": n, f"ban:status:{d['status']}": n,
                f"ban:sd:{side}": n, f"ban:x:{d['type']}:{d['status']}:{side}": n}
    return {}


CHART_BIN_S = 15 * 60  # the post-match chart counts per 15 minutes
FINE_BIN_S = 5 * 60  # the live screens' chart: per 5 minutes, so a first quarter-hour reads


def chart_bin(at_iso: str, width: int = CHART_BIN_S) -> int:
    """Epoch seconds of the start of the bin (15 minutes unless `width`) a time falls in."""
    ts = int(parse_iso(at_iso).timestamp())
    return ts - ts % width


def chart_deltas(ev: Event) -> dict[str | Tpl, int]:
    """Chart counters an event moves: incidents per bin and phase ('i:<bin>:<phase>', by
    when it happened) and arrests per bin ('a:<bin>'); the same per 5 minutes ('f:', 'b:')
    for the live screens."""
    if ev.kind == "incident.reported":
        at = ev.data.get("occurred_at") or ev.data.get("reported_at") or ev.at
        phase = ev.phase or "pre"  # may be a Var the script fills in: joined with +
        return {f"i:{chart_bin(at)}:" + phase: 1, f"f:{chart_bin(at, FINE_BIN_S)}:" + phase: 1}
    if ev.kind == "arrest.recorded":
        n = int(ev.data.get("count", 1))
        return {f"a:{chart_bin(ev.at)}": n, f"b:{chart_bin(ev.at, FINE_BIN_S)}": n}
    return {}


def incident_of(ev: Event) -> str | Tpl | None:
    """The incident an event belongs to ('7', or a Tpl before the store fills it in)."""
    ref = ev.data.get("id") or ev.data.get("incident")
    if isinstance(ref, str) and ref.startswith("INC-"):
        return ref[4:]
    if isinstance(ref, Tpl) and ref.parts[0] == "INC-":
        return Tpl(ref.parts[1:])
    return None


@dataclass
class Tally:
    """Counters and response times recomputed from scratch from an event list."""

    counts: Counter[str] = field(default_factory=Counter)
    ack_seconds: dict[str, float] = field(default_factory=dict)
    close_seconds: dict[str, float] = field(default_factory=dict)


def recount(events: list[Event]) -> Tally:
    """Replay the log into counters: the reference the derived views must equal."""
    t = Tally()
    reported: dict[str, datetime] = {}
    for ev in events:
        for k, v in deltas(ev).items():
            t.counts[k] += v
        if ev.kind == "incident.reported":
            reported[ev.data["id"]] = parse_iso(ev.data.get("reported_at", ev.at))
        elif ev.kind == "incident.status" and ev.data["id"] in reported:
            iid = ev.data["id"]
            elapsed = (parse_iso(ev.at) - reported[iid]).total_seconds()
            if ev.data.get("to") != "reported":
                t.ack_seconds.setdefault(iid, elapsed)
            if ev.data.get("cls") == "close":
                t.close_seconds.setdefault(iid, elapsed)
    t.counts = Counter({k: v for k, v in t.counts.items() if v})
    return t


def median(values: list[float]) -> float | None:
    """Median, or None for no values."""
    return statistics.median(values) if values else None
