"""Drills: a file of turnstile counts (CSV `at,turnstile,count`, or JSON: a list of batches as
the HTTP feed sends them, or of rows) replayed into a fixture on a virtual clock, each batch
through the same checks and the same once-only count as the feed's."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.domain.clock import VirtualClock
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ingress_batch import BatchRefused, parse_batch
from bot.ingress.ingress_desk import Counted, IngressDesk


@dataclass
class Replayed:
    """What a replay counted, skipped as counted before, and refused (with the reasons)."""

    counted: int = 0
    people: int = 0
    again: int = 0
    alerts: int = 0
    refused: list[str] = field(default_factory=list)


def batches_in(path: Path) -> list[dict[str, Any]]:
    """The file's batches ({batch, counts}); rows are grouped by their time."""
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        data = json.loads(text)
        items = data if isinstance(data, list) else [data]
        if all(isinstance(b, dict) and "counts" in b for b in items):
            return items
        rows = items
    else:
        rows = list(csv.DictReader(text.splitlines()))
    by_time: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if not isinstance(row, dict):
            raise ValueError(f"{path.name}: each row needs at, turnstile, count")
        count = row.get("count")
        by_time.setdefault(str(row.get("at")), []).append(
            {"turnstile": row.get("turnstile"), "at": row.get("at"),
             "count": int(count) if isinstance(count, str) and count.isdigit() else count})
    return [{"batch": _batch_id(f"{path.stem}:{at}"), "counts": rows}
            for at, rows in by_time.items()]


def _batch_id(text: str) -> str:
    """A batch id the feed accepts, the same for the same file and time."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_.:-") else "_"
                   for c in text)[-80:]


def _time_of(batch: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(batch["counts"][0]["at"]))
    except (KeyError, IndexError, TypeError, ValueError):
        return None


async def replay_counts(desk: IngressDesk, fx: Fixture, path: Path,
                        clock: VirtualClock) -> Replayed:
    """Count the file's batches in time order, the clock at each batch's time."""
    out = Replayed()
    plan = desk.plan_of(fx)
    if plan is None:
        out.refused.append(f"ground {fx.ground!r} has no [ingress] plan")
        return out
    batches = batches_in(path)
    for b in sorted(batches, key=lambda b: str(_time_of(b) or "")):
        at = _time_of(b)
        if at is None or at.tzinfo is None:
            out.refused.append(f"batch {b.get('batch')}: no time with its offset")
            continue
        clock.set(at)
        got = parse_batch(json.dumps(b).encode(), plan, at)
        result = got if isinstance(got, BatchRefused) else await desk.take(fx, got)
        if isinstance(result, Counted):
            out.counted += 1
            out.people += result.people
            out.alerts += len(result.alerts)
        elif result.status == 409:
            out.again += 1
        else:
            out.refused.append(result.reason)
    return out
