"""The turnstile feed as a test or bench sends it: signed JSON batches."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta
from typing import Any

from bot.core.dispatch import Core
from bot.domain.clock import iso
from bot.domain.ingress_batch import SIGNATURE_HEADER, Batch, Reading, sign
from bot.ingress.ingress_desk import IngressDesk

KEY = b"test-ingress-key-not-a-secret"
_ids = itertools.count(1)


def batch_body(batch_id: str, counts: dict[str, int], at: datetime) -> bytes:
    """A batch of one reading per turnstile, all timed `at`."""
    return json.dumps({"batch": batch_id, "counts": [
        {"turnstile": t, "count": n, "at": iso(at)} for t, n in counts.items()]}).encode()


def signed_headers(body: bytes, key: bytes = KEY) -> dict[str, Any]:
    """The headers a turnstile controller sends with a body."""
    return {SIGNATURE_HEADER: sign(key, body), "Content-Type": "application/json"}


async def pour(core: Core, clock, entry: str, per_min: int, minutes: float,
               step_s: int = 10) -> list:
    """People through an entry point's turnstiles at `per_min`, a batch every `step_s`."""
    desk = IngressDesk(core)
    fx = await core.active_fixture()
    plan = desk.plan_of(fx)
    turnstiles = plan.entries[entry].turnstiles
    raised = []
    for _ in range(int(minutes * 60 / step_s)):
        clock.advance(timedelta(seconds=step_s))
        n = per_min * step_s // 60
        share = [n // len(turnstiles) + (1 if i < n % len(turnstiles) else 0)
                 for i in range(len(turnstiles))]
        got = await desk.take(fx, Batch(f"pour{next(_ids)}", tuple(
            Reading(t, entry, c, clock.now()) for t, c in zip(turnstiles, share, strict=True))))
        raised += got.alerts
    return raised
