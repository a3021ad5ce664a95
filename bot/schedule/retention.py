"""Retention: personal references (custody/occurrence refs of arrests and bans) expire after
the configured period, and the log records that they did."""

from __future__ import annotations

import tomllib
from datetime import datetime, timedelta
from pathlib import Path

from bot.core.dispatch import Core
from bot.domain.clock import iso
from bot.domain.ledger import Event
from bot.store import Store
from bot.store.police_records import PoliceRecords

KINDS = {"arr": ("arrest", "A"), "ban": ("ban", "B")}


def load_retention(path: Path) -> dict[str, int]:
    """Days to keep refs per record kind ('arr', 'ban'); a missing file keeps them a year."""
    data = tomllib.loads(path.read_text()) if path.exists() else {}
    return {kind: int(data.get(word, {}).get("ref_days", 365))
            for kind, (word, _) in KINDS.items()}


async def sweep_retention(core: Core, store: Store, police: PoliceRecords,
                          now: datetime) -> list[Event]:
    """Blank refs older than their period in every fixture; one logged event per fixture."""
    days = load_retention(Path(core.settings.config_dir) / "retention.toml")
    logged: list[Event] = []
    for fx in [*await store.fixtures(), *await store.fixtures(drill=True)]:
        records: list[str] = []
        names: list[str] = []
        for kind, (_, letter) in KINDS.items():
            if now < fx.kickoff + timedelta(days=days[kind]):
                continue
            for rec in await police.police_records(fx.id, kind):
                if rec.get("ref"):
                    records.append(f"{kind}:{rec['n']}")
                    names.append(f"{letter}-{rec['n']}")
        if not records:
            continue
        ev = Event(kind="retention.expired", at=iso(now), by="system:retention", role="system",
                   data={"records": names, "field": "ref",
                         "periods_days": {KINDS[k][0]: days[k] for k in KINDS},
                         "text": f"custody/occurrence refs of {', '.join(names)} removed "
                                 "after their retention period"})
        await police.expire_refs(fx.id, records, ev, iso(now))
        logged.append(ev)
    return logged
