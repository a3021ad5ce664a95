"""GET /healthz and GET /metrics, as routes for the bot's one HTTP server."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.domain.routes import Answer, Request, Route
from bot.observe.metrics import CONTENT_TYPE, exposition

Probe = Callable[[], Awaitable[Any]]


def health_routes(ping: Probe, role: Callable[[], str],
                  outbox_lag: Probe | None = None, timeout: float = 2.0,
                  lag_alarm: Callable[[], bool] | None = None, club: str = "") -> list[Route]:
    """/healthz (200 while the store answers, else 503; JSON, with the outbox lag and its
    alarm, bot.observe.lag_alarm) and /metrics (Prometheus; a club's site: its own samples
    only)."""

    async def healthz(_: Request) -> Answer:
        t0 = time.perf_counter()
        try:
            await asyncio.wait_for(ping(), timeout)
            reachable, error = True, None
        except Exception as exc:  # any failure to answer is "unreachable" to a prober
            reachable, error = False, exc.__class__.__name__
        body: dict[str, Any] = {
            "status": "ok" if reachable else "unavailable",
            "store": {"reachable": reachable,
                      "latency_ms": round((time.perf_counter() - t0) * 1000, 2)},
            "role": role(),
            "outbox_lag_s": None,
        }
        if lag_alarm is not None:
            body["outbox_lag_alarm"] = lag_alarm()
        if error:
            body["store"]["error"] = error
        if outbox_lag is not None and reachable:
            try:
                body["outbox_lag_s"] = await asyncio.wait_for(outbox_lag(), timeout)
            except Exception:
                body["outbox_lag_s"] = None
        return Answer(200 if reachable else 503, json.dumps(body),
                      content_type="application/json")

    async def metrics(_: Request) -> Answer:
        return Answer(200, exposition(club), {"Content-Type": CONTENT_TYPE})

    return [Route("GET", "/healthz", healthz), Route("GET", "/metrics", metrics)]
