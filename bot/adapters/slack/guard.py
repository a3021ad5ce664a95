"""What a Slack request must be before any listener sees it: from the workspace the bot is
installed in (auth.test), and answered only through response_urls on Slack's own hosts.

Refusals are written to the audit trail (action `refused`, detail `slack: ...`), never with
the request's text."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.parts import AdapterParts
from bot.domain.clock import iso
from bot.store import StoreUnavailable, WritesRefused

log = logging.getLogger(__name__)

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def host_allowed(url: str, patterns: tuple[str, ...]) -> bool:
    """Is this response_url on an allowed host (`*.x` = any subdomain of x)? https only,
    except loopback hosts (tests, a local relay) that are listed explicitly."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    if not host or parts.scheme not in ("https", "http"):
        return False
    if parts.scheme == "http" and host not in LOOPBACK:
        return False
    for pattern in patterns:
        pattern = pattern.strip("[]")
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and host != pattern[2:]:
                return True
        elif host == pattern:
            return True
    return False


def _host_of(url: str) -> str:
    try:
        return urlsplit(url).netloc[:100]
    except ValueError:
        return url[:100]


def response_urls(body: dict[str, Any]) -> list[str]:
    """Every response_url a request hands the bot (commands, buttons, modal inputs)."""
    urls = [body["response_url"]] if isinstance(body.get("response_url"), str) else []
    for item in body.get("response_urls") or []:
        if isinstance(item, dict) and isinstance(item.get("response_url"), str):
            urls.append(item["response_url"])
    return urls


@dataclass(frozen=True)
class Installation:
    """Where the bot token belongs, as auth.test says."""

    team_id: str | None
    enterprise_id: str | None
    enterprise_install: bool

    def admits(self, team_id: str | None, enterprise_id: str | None) -> bool:
        """Does a request from this team/org belong to this installation?"""
        if self.enterprise_install:  # org-wide: any workspace of the org
            return bool(enterprise_id) and enterprise_id == self.enterprise_id
        if not team_id or team_id != self.team_id:
            return False
        return not (self.enterprise_id and enterprise_id and enterprise_id != self.enterprise_id)


class RequestGuard:
    """Bolt global middleware: pin requests to the installed workspace, allow only Slack's
    response_url hosts; refuse and audit everything else."""

    def __init__(self, parts: AdapterParts, client: AsyncWebClient,
                 hosts: tuple[str, ...]) -> None:
        self.audit = parts.audit  # the audit trail of refusals
        self.clock = parts.clock
        self.outage = parts.outage
        self.client = client
        self.hosts = hosts
        self._installation: Installation | None = None
        self._lock = asyncio.Lock()

    async def installation(self) -> Installation:
        """auth.test once per process (the token does not move between workspaces)."""
        async with self._lock:
            if self._installation is None:
                resp = await self.client.auth_test()
                self._installation = Installation(
                    resp.get("team_id") or None, resp.get("enterprise_id") or None,
                    bool(resp.get("is_enterprise_install")))
            return self._installation

    async def refuse(self, who: str, why: str) -> None:
        """Log and audit a refused request."""
        log.warning("slack: refused a request from %s: %s", who, why)
        try:
            await self.audit.audit(who, "refused", f"slack: {why}",
                                        iso(self.clock.now()))
        except StoreUnavailable as exc:
            self.outage.count("{n} refusals not recorded in the audit trail",
                              refused=isinstance(exc, WritesRefused))

    async def __call__(self, body: dict[str, Any], context: Any,
                       next: Callable[[], Awaitable[Any]]) -> Any:
        """The middleware step (Bolt passes body, context and next by name)."""
        who = f"slack:{context.user_id or 'unknown'}"
        team, org = context.team_id, context.enterprise_id
        installed = await self.installation()
        if not installed.admits(team, org):
            await self.refuse(who, f"request from team {str(team)[:40]} org {str(org)[:40]}, "
                                   f"not the installed workspace")
            return BoltResponse(status=403, body="")
        for url in response_urls(body):
            if not host_allowed(url, self.hosts):
                await self.refuse(who, f"response_url on {_host_of(url)!r}, not a Slack host "
                                       f"(SLACK_RESPONSE_HOSTS)")
                return BoltResponse(status=400, body="")
        return await next()


def middleware(guard: RequestGuard) -> Callable[..., Awaitable[Any]]:
    """A plain function for Bolt (it reads the parameter names to pass arguments)."""

    async def slack_request_guard(body: dict[str, Any], context: Any,
                                  next: Callable[[], Awaitable[Any]]) -> Any:
        return await guard(body, context, next)

    return slack_request_guard
