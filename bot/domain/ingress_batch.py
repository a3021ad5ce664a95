"""A batch of turnstile counts as the feed sends it: signed JSON, checked before anything is
counted; what was refused says why in one line."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.domain.ingress_plan import IngressPlan

MAX_BODY = 256 * 1024
MAX_ROWS = 5000
MAX_COUNT = 10_000  # one turnstile, one reading: more is a broken counter, not a crowd
BATCH_ID = re.compile(r"[A-Za-z0-9_.:-]{1,80}")
SIGNATURE_HEADER = "X-Ingress-Signature"


@dataclass(frozen=True)
class Reading:
    """People through one turnstile in the interval ending at `at`."""

    turnstile: str
    entry: str
    count: int
    at: datetime


@dataclass(frozen=True)
class Batch:
    """A checked batch: its id and readings (every turnstile known, every time near now)."""

    id: str
    readings: tuple[Reading, ...]
    live: bool = True  # sent by the turnstiles as they count (False: a tally typed in)

    @property
    def people(self) -> int:
        """People counted in the batch."""
        return sum(r.count for r in self.readings)

    def per_entry(self) -> dict[str, int]:
        """Entry point -> people counted there."""
        out: dict[str, int] = {}
        for r in self.readings:
            out[r.entry] = out.get(r.entry, 0) + r.count
        return out


@dataclass(frozen=True)
class BatchRefused:
    """Why a batch was not counted (`status` is the HTTP answer's)."""

    reason: str
    status: int = 400


def sign(key: bytes, body: bytes) -> str:
    """The signature header's value for a body: sha256=<hex HMAC-SHA256 of the body>."""
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def signed(key: bytes, body: bytes, signature: str) -> bool:
    """Does the signature match the body under the key (compared in constant time)?"""
    return hmac.compare_digest(sign(key, body), signature.strip())


def parse_batch(body: bytes, plan: IngressPlan, now: datetime) -> Batch | BatchRefused:
    """The batch of a (verified) body, or why it is refused."""
    if len(body) > MAX_BODY:
        return BatchRefused(f"batch too large ({len(body)} bytes, at most {MAX_BODY})", 413)
    try:
        obj = json.loads(body)
    except ValueError:
        return BatchRefused("not JSON: send {\"batch\": id, \"counts\": [{turnstile, count, at}]}")
    if not isinstance(obj, dict):
        return BatchRefused("a batch is a JSON object with batch and counts")
    batch_id = obj.get("batch")
    if not isinstance(batch_id, str) or not BATCH_ID.fullmatch(batch_id):
        return BatchRefused("batch id missing or not 1-80 letters, digits or _.:-")
    rows = obj.get("counts")
    if not isinstance(rows, list) or not rows:
        return BatchRefused(f"batch {batch_id}: counts must be a non-empty list")
    if len(rows) > MAX_ROWS:
        return BatchRefused(f"batch {batch_id}: {len(rows)} counts, at most {MAX_ROWS}")
    skew = timedelta(seconds=plan.max_skew_s)
    out: list[Reading] = []
    for i, row in enumerate(rows):
        got = _reading(row, plan)
        if isinstance(got, str):
            return BatchRefused(f"batch {batch_id}: counts[{i}]: {got}")
        if abs(got.at - now) > skew:
            return BatchRefused(f"batch {batch_id}: counts[{i}] is timed {got.at:%H:%M:%S}, "
                                f"more than {plan.max_skew_s} s from now: not counted", 422)
        out.append(got)
    return Batch(batch_id, tuple(out))


def _reading(row: object, plan: IngressPlan) -> Reading | str:
    if not isinstance(row, dict):
        return "each count is an object with turnstile, count, at"
    turnstile, count, at = row.get("turnstile"), row.get("count"), row.get("at")
    if not isinstance(turnstile, str) or turnstile not in plan.turnstile_entry:
        return f"turnstile {str(turnstile)[:24]!r} is not in the ground file"
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
        return f"count must be a whole number 0-{MAX_COUNT}"
    try:
        when = datetime.fromisoformat(str(at))
    except (ValueError, TypeError):
        return "at must be an ISO time with its offset, e.g. 2026-12-02T19:01:00+00:00"
    if when.tzinfo is None:
        return "at must carry its offset (e.g. +00:00)"
    return Reading(turnstile, plan.turnstile_entry[turnstile], count, when.astimezone(UTC))
