"""What an HTTP endpoint is, whatever server hosts it: a request, an answer, a route.

Adapters (Telegram's webhook, Slack's events) and observability (/healthz, /metrics) hand
the one HTTP server (bot/web/host.py) Routes; only that package knows the HTTP library."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import NamedTuple


class Request(NamedTuple):
    """One HTTP request, read whole."""

    headers: Mapping[str, str]
    body: bytes = b""
    query: str = ""


class Answer(NamedTuple):
    """What an endpoint answers: status, body and headers."""

    status: int
    body: bytes | str = b""
    headers: Mapping[str, str] = {}
    content_type: str = "text/plain"


Endpoint = Callable[[Request], Awaitable[Answer]]


class Route(NamedTuple):
    """A method and path served by an endpoint."""

    method: str
    path: str
    endpoint: Endpoint
