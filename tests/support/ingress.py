"""The turnstile feed as a test or bench sends it: signed JSON batches."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from bot.domain.clock import iso
from bot.domain.ingress_batch import SIGNATURE_HEADER, sign

KEY = b"test-ingress-key-not-a-secret"


def batch_body(batch_id: str, counts: dict[str, int], at: datetime) -> bytes:
    """A batch of one reading per turnstile, all timed `at`."""
    return json.dumps({"batch": batch_id, "counts": [
        {"turnstile": t, "count": n, "at": iso(at)} for t, n in counts.items()]}).encode()


def signed_headers(body: bytes, key: bytes = KEY) -> dict[str, Any]:
    """The headers a turnstile controller sends with a body."""
    return {SIGNATURE_HEADER: sign(key, body), "Content-Type": "application/json"}
