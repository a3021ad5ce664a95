"""Wiring: settings -> Redis (embedded or URL) -> store -> core -> scheduler -> adapters."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.core.dispatch import Core, Registry
from bot.core.drill import Drill
from bot.core.fixture_scope import DrillFixtures
from bot.core.roles import DEFAULT_ROLES, RolesError, load_role_matrix, load_roster
from bot.delivery.lane import Lane
from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import SharedRateLimiter
from bot.delivery.routing import load_channels, load_readers
from bot.delivery.scopes import load_scopes
from bot.domain.clock import Clock, FileClock, SystemClock
from bot.domain.grounds import load_grounds
from bot.observe import metrics
from bot.observe.outage import OutageLog
from bot.observe.redact import add_secret
from bot.settings import Settings
from bot.store import Gateway, Store, StoreUnavailable
from bot.store.facades import StoreFacades
from bot.store.lease import Lease
from bot.tasks import cancel_and_wait

if TYPE_CHECKING:  # imported when used: a one-shot command with REDIS_URL needs neither
    from bot.embedded_redis.supervisor import EmbeddedRedis
    from bot.observe.loss_risk import LossRisk

log = logging.getLogger(__name__)


class Adapter(Protocol):
    """A platform adapter the app starts and stops on its loop."""

    platform: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class StartupError(RuntimeError):
    """The bot cannot start; the message is one line for the operator."""


def build_registry() -> Registry:
    """The whole command language, from every handler module's register()."""
    import handlers
    from bot.ingress import ingress_command

    registry = Registry()
    handlers.register(registry)
    ingress_command.register(registry)
    return registry


def build_core(store: Store, settings: Settings, clock: Clock,
               config_dir: Path | None = None, cache_ttl: float = 5.0, *,
               outage: OutageLog | None = None,
               publish: Callable[[str, str], Awaitable[None]] | None = None,
               durable: bool = False, drill: Drill | None = None,
               facades: StoreFacades | None = None) -> Core:
    """A Core over a store with the config folder's grounds, roster and channels. `durable`:
    what commands cause goes through the outbox, paced by limits shared by every replica;
    `drill`: a replay's, whose commands use only the fixtures it makes (or, --live, the live
    one) and never write the live bot's fixture choices; `facades`: the store's other
    facades when the caller (App) built them, else built here, once."""
    cfg = config_dir or settings.config_dir
    grounds = load_grounds(cfg)
    if not grounds:
        raise StartupError(f"no ground layouts in {cfg / 'grounds'}")
    try:
        readers = load_readers(cfg / "channels.toml")
        scopes = load_scopes(cfg / "channels.toml")  # several fixtures at once
    except ValueError as exc:
        raise StartupError(str(exc)) from None
    from handlers.incident.live_views import LiveViews

    if facades is None:  # each built once, for its consumer
        facades = StoreFacades.over(store.gateway)
    if drill is not None:
        facades.deadlines.use_drill_index()  # the live bot never sweeps the drill's deadlines
    delivery = facades.delivery
    notifier = Notifier(
        load_channels(cfg / "channels.toml"), readers=readers, scopes=scopes,
        store=delivery.refs,  # live messages' platform ids
        wall=lambda: clock.now().astimezone(settings.zone),  # the board's local HH:MM
        outbox=delivery.outbox if durable else None,
        limiter=SharedRateLimiter(delivery.windows) if durable else None,  # one budget for all
        views=LiveViews(store, grounds, settings),  # references rendered at send time
        lane=Lane(facades.stewarding),  # while a procedure goes out, nothing else
        fixtures=store.fixture)  # a fixture's ground, for per-ground chats
    registry = build_registry()
    roles_file = cfg / "roles.toml" if (cfg / "roles.toml").exists() else DEFAULT_ROLES
    try:
        roles = load_role_matrix(roles_file, registry.commands())
    except RolesError as exc:
        raise StartupError(str(exc)) from None
    return Core(store, registry, clock, grounds, load_roster(cfg / "roster.toml"),
                notifier, settings, cache_ttl=cache_ttl, roles=roles, outage=outage,
                publish=publish, facades=facades,
                fixtures=DrillFixtures(store, facades.choices, drill) if drill is not None
                else None)


def check_config_or_fail(config_dir: Path) -> int:
    """The number of config files, all valid; else StartupError with one line a problem."""
    from bot.config_check import check_config

    files, problems = check_config(config_dir, lambda: build_registry().commands())
    if problems:
        raise StartupError("\n".join(problems))
    return files


def warm_config(core: Core) -> None:
    """Read the files read on first use now, so they are the ones checked at start-up."""
    from bot.domain.briefing.briefing_cadence import config_for
    from bot.domain.incident.escalation_policy import policy_for

    policy_for(core.settings)
    config_for(core.settings)


class App:
    """One process: one Redis connection pool, one core, one scheduler, many adapters."""

    def __init__(self, settings: Settings, clock: Clock | None = None, *,
                 serving: bool = False, drill: Drill | None = None,
                 outage: OutageLog | None = None, club: str = "",
                 shared: Gateway | None = None) -> None:
        """`serving`: the long-running bot (matchday run), not a one-shot command: it tells
        other replicas what it changes, holds the singleton lease in turn and, with a
        platform token, delivers through the outbox. `drill`: a replay's fence (its core
        resolves fixtures inside it; its store sweeps only the drill's deadlines). `outage`:
        the outage log (a test's, to see the background loops meet an outage). `club`: the
        club whose key space the store reads and writes (bot.store.base.KeySpace; "" the
        single-club deployment); `shared`: the deployment's gateway the club's view is of
        (a club of a running deployment: no connection, server or failover watch of its
        own)."""
        self.settings = settings
        self.drill = drill
        self.clock = clock or (FileClock(settings.clock_file) if settings.clock_file
                               else SystemClock())
        self.serving = serving
        self.origin = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        # A Redis outage is logged when it starts and ends, not per command or per tick.
        self.outage = outage or OutageLog()
        self.embedded: EmbeddedRedis | None = None  # when no REDIS_URL is set
        self.club = club
        self.shared = shared
        self.store: Store | None = None  # the incident log (the club's view, with a club)
        self._own: Store | None = None  # the store whose connections this app owns
        self.facades: StoreFacades | None = None  # the store's other facades, built once
        self.core: Core | None = None
        self.adapters: list[Adapter] = []
        self.lease: Lease | None = None  # the singleton duties' lease, when serving
        self._failovers: asyncio.Task[None] | None = None  # follows Sentinel's switch-master
        self.loss_risk: LossRisk | None = None  # once the store is up
        self._restart_failed: str | None = None  # why the embedded server last failed to start

    async def start_store(self) -> Store:
        """Connect to REDIS_URL, or start the embedded server; fail with one line. With a
        club, the store is that club's view of the connection."""
        if self.shared is not None:
            self.store = Store(self.shared.for_club(self.club))
            return self.store
        url = self.settings.redis_url
        if url is None:
            from bot.embedded_redis.supervisor import EmbeddedRedis, EmbeddedRedisError, private_dir

            private_dir(self.settings.data_dir)  # AOF, exports, charts, keys: this account only
            self.embedded = EmbeddedRedis(self.settings.data_dir / "redis",
                                          appendfsync=self.settings.appendfsync)
            add_secret(self.embedded.password)  # it travels in the URL: never in a log line
            try:
                url = self.embedded.start()
            except EmbeddedRedisError as exc:
                raise StartupError(str(exc)) from None
        store = Store.from_url(url, dedupe_ttl=self.settings.dedupe_ttl_seconds,
                               observe_latency=metrics.STORE_SECONDS.observe,
                               observe_answer=self.outage.observe)  # a line when Redis goes
        try:
            await store.gateway.ping()
            await store.gateway.configure_replication(self.settings.replica_acks,
                                              self.settings.replica_timeout_ms)
        except StoreUnavailable:
            await store.close()
            raise StartupError(f"Redis at {safe_url(url)} is not answering") from None
        self._own = store
        self.store = Store(store.gateway.for_club(self.club)) if self.club else store
        self._failovers = asyncio.create_task(store.gateway.follow_failovers())
        return self.store

    async def check_durability(self) -> None:
        """Before the bot answers anyone: warn in one line (or, with MATCHDAY_REQUIRE_DURABLE,
        refuse to start) when a crash of this Redis can lose a report already answered
        "Logged"; control sees the same line in /status. (One-shot CLI commands answer
        nobody "Logged": they skip it.)"""
        from bot.observe.loss_risk import LossRisk

        assert self.store is not None and self.core is not None
        where = safe_url(self.settings.redis_url or "") if self.embedded is None else \
            f"{self.embedded.data_dir} (embedded)"
        self.loss_risk = LossRisk(lambda: self._current_store().gateway.durability(), where)
        try:  # app.stop() closes the store when start-up fails here
            line = self.loss_risk.prime(await self.store.gateway.durability())
        except StoreUnavailable:
            raise StartupError(f"Redis at {where} is not answering") from None
        if line and self.settings.require_durable:
            raise StartupError(f"{line} (MATCHDAY_REQUIRE_DURABLE=1: not starting)")
        if line:
            log.warning("%s", line)
        self.core.commander_lines.append(self.loss_risk.lines)
        stopping = await self.store.gateway.whole_cluster_stops()
        if stopping:
            log.warning("Redis Cluster: %d master(s) have cluster-require-full-coverage yes: "
                        "while one master is down every fixture stops, not only its own; "
                        "set it to no (README, Recommended Cluster settings)", stopping)
        if self.store.gateway.replica_acks or self.store.gateway.cluster:
            slow = await self.store.gateway.slow_full_syncs()
            if slow:
                log.warning("Redis: %d master(s) wait repl-diskless-sync-delay seconds before "
                            "a replica's full sync: after a failover reports are HELD and "
                            "cards wait that much longer; set it to 0 (README, Recommended "
                            "Cluster settings)", slow)

    def _current_store(self) -> Store:
        assert self.store is not None
        return self.store

    async def watch_embedded(self) -> bool:
        """Restart the embedded server if it died (same data dir); True if it restarted.

        Commands in the gap answer "not answering"; the store reconnects by itself once the
        server is back on the same port (a new port gets a new connection pool)."""
        from bot.embedded_redis.supervisor import EmbeddedRedisError

        if self.embedded is None or self.embedded.alive():
            return False
        old = self.embedded.url if self.embedded.pid is not None else None
        try:
            url = await asyncio.to_thread(self.embedded.start)
        except EmbeddedRedisError as exc:
            why = str(exc).splitlines()[0]
            if why != self._restart_failed:  # once, not every second it keeps failing
                log.error("embedded Redis is down and did not restart: %s", why)
            self._restart_failed = why
            return False
        self._restart_failed = None
        if url != old and self.store is not None:
            await self.store.gateway.reconnect(url)
        log.warning("embedded Redis restarted: pid %s at %s (%s)", self.embedded.pid,
                    self.embedded.display_url, self.embedded.binary)
        return True

    async def watchdog(self, every_s: float = 1.0) -> None:
        """Run watch_embedded() every few seconds until cancelled (the bot's lifetime)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await self.watch_embedded()
            except Exception:
                log.exception("embedded Redis watchdog failed")

    async def start(self) -> Core:
        """Check the config, start the store and the core (adapters are added and started by
        the caller)."""
        check_config_or_fail(self.settings.config_dir)
        store = self.store if self.store is not None else await self.start_store()
        self.facades = facades = StoreFacades.over(store.gateway)  # each built once
        publish = None
        if self.serving:
            async def publish(what: str, fixture: str) -> None:
                await facades.changes.publish_change(what, fixture, self.origin)

        platforms = (self.settings.telegram_bot_token, self.settings.slack_bot_token)
        self.core = build_core(store, self.settings, self.clock, outage=self.outage,
                               publish=publish, durable=self.serving and any(
                                   t is not None for t in platforms), drill=self.drill,
                               facades=self.facades)
        if self.serving:
            self.lease = self.facades.delivery.lease("singleton", self.origin,
                                                     self.settings.lease_ms)
        warm_config(self.core)
        notifier = self.core.notifier
        metrics.watch_delivery(notifier.pending, notifier.clock, lambda: list(notifier.sinks),
                               club=self.club)
        return self.core

    def role(self) -> str:
        """'leader' while this replica holds the singleton duties' lease, else 'standby'."""
        return "leader" if self.lease is None or self.lease.held else "standby"

    async def stop(self) -> None:
        """Deliver what is queued, stop adapters, close Redis, stop the embedded server last
        (it holds the log)."""
        if self.core is not None:
            try:
                # briefly: what is in the outbox is delivered by another replica or the
                # next start; a platform that is unreachable must not hold the stop up
                await asyncio.wait_for(self.core.notifier.close(), 2)
            except TimeoutError:
                log.warning("stopping with undelivered messages")
        for adapter in reversed(self.adapters):
            try:
                await adapter.stop()
            except Exception:
                log.exception("stopping %s failed", adapter.platform)
        if self._failovers is not None:
            await cancel_and_wait([self._failovers])
        if self._own is not None:  # a club's view owns nothing: its deployment closes it
            await self._own.close()
        if self.embedded is not None:
            self.embedded.stop()


def safe_url(url: str) -> str:
    """A Redis URL without its credentials, for messages and logs. They end at the LAST '@'
    (as redis-py's urlparse and bot.store.connect read them), so an '@' in a password hides
    nothing of it; a `password=` query argument is masked too."""
    scheme, sep, rest = url.partition("://")
    head, qsep, query = rest.partition("?")
    if "@" in head:
        head = "***@" + head.rpartition("@")[2]
    if qsep:
        query = re.sub(r"(?i)(^|&)(password|username)=[^&#]*", r"\1\2=***", query)
    return f"{scheme}{sep}{head}{qsep}{query}"
