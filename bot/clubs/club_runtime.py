"""Many clubs in one process: each enabled club its own core, bots, duties and control room
under /c/<club>/ on the deployment's one HTTP server, all over one Redis connection (each in
its own key space). A club whose secrets are missing or whose bots refuse to start is down
alone, said once in the log and in the deployment's /healthz, and tried again; the others
run on."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from bot.app import App, StartupError
from bot.clubs.club_settings import club_path, settings_for
from bot.domain.club_record import Club, ClubError
from bot.domain.routes import Answer, Endpoint, Request, Route
from bot.observe import metrics
from bot.observe.lag_alarm import LagAlarm
from bot.observe.redact import add_secret, redact, settings_secrets
from bot.runtime import (
    duties,
    http_site,
    lag_alarm,
    leads,
    make_scheduler,
    outbox_lag,
    start_chats,
    stop_on_signals,
)
from bot.settings import secret_environment
from bot.store.outbox import Outbox
from bot.tasks import cancel_and_wait

log = logging.getLogger(__name__)
RETRY_S = 60.0  # a club that is down is tried again this often
# The paths a club's chats answer on (under its prefix): Telegram's webhook, Slack's events.
CHAT_PATHS = ("/telegram", "/slack/events")


@dataclass(frozen=True)
class ClubHealth:
    """What the deployment says of one club: up or down and why (never its content)."""

    club_id: str
    name: str
    up: bool
    why: str = ""


class ChatSwitch:
    """A club's chat routes as they stand: answered by its running bots, or 503 while its
    chats are down (the routes are mounted once; the bots behind them may come later)."""

    def __init__(self) -> None:
        self.endpoints: dict[str, Endpoint] = {}

    def routes(self) -> list[Route]:
        """The club's chat routes, each looking up its current endpoint per request."""
        return [Route("POST", path, self._switched(path)) for path in CHAT_PATHS]

    def use(self, routes: list[Route]) -> None:
        """From now on, answer with these (the bots that just started)."""
        self.endpoints = {r.path: r.endpoint for r in routes}

    def _switched(self, path: str) -> Endpoint:
        async def endpoint(request: Request) -> Answer:
            current = self.endpoints.get(path)
            if current is None:
                return Answer(503, "this club's chats are not running")
            return await current(request)
        return endpoint


class ClubRun:
    """One club of a running deployment: its App over the deployment's gateway, its site,
    its chats and duties."""

    def __init__(self, club: Club, base: App, env: Mapping[str, str], *,
                 webhook: bool) -> None:
        self.club, self.base, self.env, self.webhook = club, base, env, webhook
        self.app: App | None = None
        self.switch = ChatSwitch()
        self.why = "starting"
        self.up = False
        self.alarm: LagAlarm | None = None
        self.voice: Any = None  # the deployment's transcriber
        self._running = AsyncExitStack()

    def health(self) -> ClubHealth:
        """Up, or down and why, in one line."""
        return ClubHealth(self.club.club_id, self.club.name, self.up, "" if self.up else self.why)

    async def open(self) -> Any:
        """The club's store view, core and site (an aiohttp app to mount under its path);
        None when the club cannot even start its core (its secrets, its config)."""
        assert self.base.store is not None
        try:
            settings = settings_for(self.club, self.base.settings, self.env)
        except ClubError as exc:
            return self._down(f"secret missing: {exc}")
        for secret in settings_secrets(settings):  # every line and error, masked
            add_secret(secret)
        self.app = App(settings, self.base.clock, serving=True, club=self.club.club_id,
                       shared=self.base.store.gateway, outage=self.base.outage)
        try:
            core = await self.app.start()
        except StartupError as exc:
            return self._down(str(exc))
        self.alarm = (lag_alarm(core, leads(self.app))
                      if isinstance(core.notifier.outbox, Outbox) else None)
        return http_site(self.app, self.switch.routes(), control_room=True,
                         alarm=self.alarm, prefix=club_path(self.club.club_id))

    async def start_chats(self, voice: Any = None) -> bool:
        """Start the club's bots (voice notes through the deployment's `voice`) and its
        duties; False (the club down, said once) when a platform refuses it."""
        app = self.app
        if app is None:
            return False
        self.voice = voice
        before = len(app.adapters)
        try:
            _started, pollers, routes = await start_chats(app, webhook=self.webhook, http=True,
                                                          voice=voice)
        except StartupError as exc:
            for adapter in reversed(app.adapters[before:]):  # half-started: stopped again
                try:
                    await adapter.stop()
                except Exception:
                    log.exception("club %s: stopping %s failed", self.club.club_id,
                                  adapter.platform)
            del app.adapters[before:]
            self._down(str(exc))
            return False
        scheduler = make_scheduler(app, live=True)
        await self._running.enter_async_context(duties(app, scheduler, pollers, self.alarm))
        self.switch.use(routes)
        await scheduler.start()
        self.up, self.why = True, ""
        metrics.CLUB_UP.labels(self.club.club_id).set(1)
        log.warning("club %s: running", self.club.club_id)
        return True

    async def outbox_lag(self) -> float | None:
        """Seconds the club's oldest undelivered message has waited (None: not known)."""
        if self.app is None or self.app.core is None:
            return None
        try:
            return await asyncio.wait_for(outbox_lag(self.app.core)(), 2)
        except Exception:  # the store away or slow: not known, health still answers
            return None

    async def keep_trying(self, every_s: float) -> None:
        """Start the club's chats again every `every_s` seconds until they run."""
        while not self.up and self.app is not None:
            await asyncio.sleep(every_s)
            await self.start_chats(self.voice)

    async def close(self) -> None:
        """Stop the club's duties, bots and core (the shared connection stays)."""
        self.switch.use([])
        await self._running.aclose()
        if self.app is not None:
            await self.app.stop()

    def _down(self, why: str) -> None:
        # a platform's refusal may quote the token it refused (PTB's InvalidToken does): the
        # line goes to the log and /healthz masked
        line = redact(" ".join(why.split()))
        if line != self.why:  # once per reason, not every retry
            log.error("club %s is down: %s", self.club.club_id, line)
        self.up, self.why = False, line
        metrics.CLUB_UP.labels(self.club.club_id).set(0)


class Deployment:
    """Every enabled club on one HTTP server. /healthz (for a load balancer) says how many
    clubs run; /deployment/health, for the deployment's super-admin (a bearer token,
    MATCHDAY_ADMIN_TOKEN), says which and why, with each club's outbox lag: health only,
    never a club's content (no route takes that token anywhere else)."""

    def __init__(self, base: App, clubs: list[Club], env: Mapping[str, str], *,
                 webhook: bool = True, retry_s: float = RETRY_S) -> None:
        self.base = base
        self.runs = [ClubRun(c, base, env, webhook=webhook) for c in clubs if c.enabled]
        self.retry_s = retry_s
        self.voice: Any = None  # the one transcriber every club's bot shares
        self._tasks: list[asyncio.Task[None]] = []

    def health(self) -> list[ClubHealth]:
        """Each club's health, in the registry's order."""
        return [run.health() for run in self.runs]

    async def site(self) -> Any:
        """The deployment's aiohttp app: each club's site under /c/<club>/, a 503 for a club
        that could not start its core, and the deployment's own /healthz."""
        from bot.web.host import application, mount

        top = application([Route("GET", "/healthz", self._healthz),
                           Route("GET", "/deployment/health", self._admin_health),
                           Route("GET", "/deployment/metrics", self._admin_metrics)])
        for run in self.runs:
            site = await run.open()
            if site is None:
                site = application([Route(m, "/{tail:.*}", self._unavailable(run))
                                    for m in ("GET", "POST")])
            mount(top, club_path(run.club.club_id), site)
        return top

    async def start_chats(self) -> None:
        """Start every club's bots side by side, with one voice-note transcriber for all
        (one pool of workers on the machine, not one per club); keep trying those down."""
        self.voice = self._transcriber()
        await asyncio.gather(*(run.start_chats(self.voice) for run in self.runs))
        self._tasks = [asyncio.create_task(run.keep_trying(self.retry_s))
                       for run in self.runs if not run.up and run.app is not None]

    async def stop(self) -> None:
        """Stop every club (its duties, bots and core)."""
        await cancel_and_wait(self._tasks)
        for run in self.runs:
            try:
                await run.close()
            except Exception:
                log.exception("stopping club %s failed", run.club.club_id)
        if self.voice is not None:
            self.voice.shutdown()

    def _transcriber(self) -> Any:
        """The deployment's one transcriber (None without the voice extra); StartupError
        (one line) when its model is missing or corrupt."""
        from bot.voice.model import ModelError
        from bot.voice.pool import transcriber_for
        from bot.voice.suggest import prompt_for

        s, core = self.base.settings, self.base.core
        grounds = list(core.grounds.values()) if core is not None else []
        try:
            return transcriber_for(s.stt_model, prompt_for(grounds), data_dir=s.data_dir,
                                   workers=s.stt_workers, queue=s.stt_queue,
                                   max_s=s.stt_max_seconds, shared=True)
        except ModelError as exc:
            raise StartupError(f"voice notes: {exc}") from None

    async def _healthz(self, _request: Request) -> Answer:
        clubs = self.health()
        down = sum(not c.up for c in clubs)
        body = {"status": "ok" if not down else "degraded", "clubs_up": len(clubs) - down,
                "clubs_down": down}
        return Answer(200, json.dumps(body), content_type="application/json")

    def _refused(self, request: Request) -> Answer | None:
        """None for the deployment's super-admin (its bearer token), else the refusal."""
        token = self.base.settings.admin_token
        if token is None:
            return Answer(403, "MATCHDAY_ADMIN_TOKEN is not set: no super-admin on this "
                               "deployment")
        given = next((v for k, v in request.headers.items() if k.lower() == "authorization"),
                     "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token.get_secret_value()}".encode()):
            return Answer(401, "super-admin token required (Authorization: Bearer ...)",
                          {"WWW-Authenticate": "Bearer"})
        return None

    async def _admin_metrics(self, request: Request) -> Answer:
        """Every club's figures and the deployment's own, for the super-admin's scraper."""
        if (refused := self._refused(request)) is not None:
            return refused
        return Answer(200, metrics.exposition(), {"Content-Type": metrics.CONTENT_TYPE})

    async def _admin_health(self, request: Request) -> Answer:
        if (refused := self._refused(request)) is not None:
            return refused
        lags = await asyncio.gather(*(run.outbox_lag() for run in self.runs))
        clubs = {}
        for run, lag in zip(self.runs, lags, strict=True):
            h = run.health()
            clubs[h.club_id] = {"name": h.name, "up": h.up, "why": h.why, "outbox_lag_s": lag}
        body = {"status": "ok" if all(c["up"] for c in clubs.values()) else "degraded",
                "clubs": clubs}
        return Answer(200, json.dumps(body), content_type="application/json")

    def _unavailable(self, run: ClubRun) -> Endpoint:
        async def endpoint(_request: Request) -> Answer:
            return Answer(503, f"club {run.club.club_id} is down: {run.why}")
        return endpoint


async def run_deployment(app: App, clubs: list[Club], *, webhook: bool) -> int:
    """`matchday run` on a deployment with clubs registered: every enabled club until
    SIGTERM (the base app holds the connection: the embedded server or REDIS_URL)."""
    from bot.web.host import HttpHost

    stop = stop_on_signals()
    await app.check_durability()  # one line (or a refusal) before anyone is answered
    deployment = Deployment(app, clubs, secret_environment(), webhook=webhook)
    server: HttpHost | None = None
    try:
        server = HttpHost(await deployment.site(), app.settings.port, app.settings.bind)
        await server.start()
        await deployment.start_chats()
        up = sum(h.up for h in deployment.health())
        log.warning("running: %d of %d clubs on http %s:%s (%s)", up, len(deployment.runs),
                    app.settings.bind, server.port,
                    ", ".join(f"{h.club_id} {'up' if h.up else 'DOWN'}"
                              for h in deployment.health()))
        await stop.wait()
    finally:
        if server is not None:
            await server.stop()  # no request half-answered by a club being stopped
        await deployment.stop()
    return 0
