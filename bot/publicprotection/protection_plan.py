"""What the ground file says for Martyn's Law: the premises' duty holder and tier, each
public-protection procedure's local arrangements (`[[procedure]]`) and each measure
(`[[measure]]`), read as values; the four procedures' standing instructions come from
bot/domain/procedures.py."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.domain.procedures import PROCEDURES

# The Act's kinds of public-protection measure (s.6(3)): what a measure is for
MEASURE_KINDS = {
    "monitoring": "Monitoring the premises and their surroundings",
    "movement": "Controlling the movement of individuals",
    "physical": "Physical safety and security of the premises",
    "information": "Security of information",
}
TIERS = ("standard", "enhanced")
PROCEDURE_KEYS = ("evacuate", "invacuate", "lockdown", "allclear")


class PlanError(ValueError):
    """A Martyn's Law section of a ground file that cannot be used; one line per problem."""


@dataclass(frozen=True)
class Procedure:
    """One public-protection procedure: its standing instruction and the ground's plan."""

    key: str
    title: str
    instruction: str
    detail: str = ""  # the ground's arrangements (routes, protected areas, who decides)
    zones: tuple[str, ...] = ()


@dataclass(frozen=True)
class Measure:
    """One public-protection measure of the premises."""

    id: str
    kind: str  # a MEASURE_KINDS key
    title: str
    detail: str = ""
    zones: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProtectionPlan:
    """A ground's Martyn's Law content: who holds the duty, the procedures and the measures."""

    ground: str
    ground_name: str
    tier: str
    responsible: str  # the responsible person (the premises' duty holder), by role or name
    regulator: str
    capacity: int
    procedures: tuple[Procedure, ...]
    measures: tuple[Measure, ...]

    def content(self) -> dict[str, Any]:
        """The document's content as plain data (what its revision number follows)."""
        return {"ground": self.ground, "ground_name": self.ground_name, "tier": self.tier,
                "responsible_person": self.responsible, "regulator": self.regulator,
                "capacity": self.capacity,
                "procedures": [{"key": p.key, "title": p.title, "instruction": p.instruction,
                                "detail": p.detail, "zones": list(p.zones)}
                               for p in self.procedures],
                "measures": [{"id": m.id, "kind": m.kind, "kind_label": MEASURE_KINDS[m.kind],
                              "title": m.title, "detail": m.detail, "zones": list(m.zones)}
                             for m in self.measures]}


def _text(row: dict[str, Any], key: str, where: str, required: bool = True) -> str:
    value = row.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise PlanError(f"{where}.{key}: text needed")
    return value.strip()


def _zones(row: dict[str, Any], where: str, zones: set[str]) -> tuple[str, ...]:
    got = row.get("zones", [])
    if isinstance(got, list) and all(isinstance(z, str) for z in got):
        for z in got:
            if z not in zones:
                raise PlanError(f"{where}.zones: {z!r} is not a zone of this ground")
        return tuple(got)
    raise PlanError(f"{where}.zones: a list of zone ids")


def plan_of(data: dict[str, Any], zones: set[str]) -> ProtectionPlan | None:
    """The plan a ground file's data holds (None without a [martyns_law] table)."""
    head = data.get("martyns_law")
    if head is None:
        return None
    if not isinstance(head, dict):
        raise PlanError("martyns_law: must be a table")
    tier = head.get("tier", "enhanced")
    if tier not in TIERS:
        raise PlanError(f"martyns_law.tier: 'standard' or 'enhanced', not {tier!r}")
    capacity = head.get("capacity", 0)
    if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 0:
        raise PlanError("martyns_law.capacity: a whole number of people")
    local: dict[str, tuple[str, tuple[str, ...]]] = {}
    for i, row in enumerate(data.get("procedure", [])):
        where = f"procedure[{i}]"
        key = row.get("key") if isinstance(row, dict) else None
        if key not in PROCEDURE_KEYS:
            raise PlanError(f"{where}.key: one of {', '.join(PROCEDURE_KEYS)}, not {key!r}")
        if key in local:
            raise PlanError(f"{where}.key: {key!r} is given twice")
        local[key] = (_text(row, "detail", where), _zones(row, where, zones))
    measures: list[Measure] = []
    for i, row in enumerate(data.get("measure", [])):
        where = f"measure[{i}]"
        if not isinstance(row, dict):
            raise PlanError(f"{where}: must be a table")
        kind = row.get("kind")
        if kind not in MEASURE_KINDS:
            raise PlanError(f"{where}.kind: one of {', '.join(MEASURE_KINDS)}, not {kind!r}")
        mid = _text(row, "id", where)
        if any(m.id == mid for m in measures):
            raise PlanError(f"{where}.id: {mid!r} is given twice")
        measures.append(Measure(mid, kind, _text(row, "title", where),
                                _text(row, "detail", where, required=False),
                                _zones(row, where, zones)))
    procedures = tuple(Procedure(k, PROCEDURES[k][0], PROCEDURES[k][1], *local.get(k, ("", ())))
                       for k in PROCEDURE_KEYS)
    return ProtectionPlan(str(data.get("id", "")), str(data.get("name", "")), tier,
                          _text(head, "responsible_person", "martyns_law"),
                          _text(head, "regulator", "martyns_law", required=False)
                          or "Security Industry Authority", capacity, procedures,
                          tuple(measures))


def load_plan(path: Path) -> ProtectionPlan | None:
    """A ground file's Martyn's Law plan (None when it has none); PlanError when wrong."""
    data = tomllib.loads(path.read_text())
    zones = {z.get("id") for z in data.get("zone", []) if isinstance(z, dict)}
    return plan_of(data, {z for z in zones if isinstance(z, str)})
