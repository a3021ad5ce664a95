"""Wiring: settings -> Redis (embedded or URL) -> store -> core -> scheduler -> adapters."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Protocol

from bot.core.dispatch import Core, Registry
from bot.core.roles import load_roster
from bot.delivery.notifier import Notifier, load_channels
from bot.domain.clock import Clock, SystemClock
from bot.domain.grounds import load_grounds
from bot.settings import Settings
from bot.store import Store, StoreUnavailable

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

    registry = Registry()
    handlers.register(registry)
    return registry


def build_core(store: Store, settings: Settings, clock: Clock,
               config_dir: Path | None = None, cache_ttl: float = 5.0) -> Core:
    """A Core over a store with the config folder's grounds, roster and channels."""
    cfg = config_dir or settings.config_dir
    grounds = load_grounds(cfg)
    if not grounds:
        raise StartupError(f"no ground layouts in {cfg / 'grounds'}")
    notifier = Notifier(load_channels(cfg / "channels.toml"))
    notifier.store = store  # live messages' platform ids
    return Core(store, build_registry(), clock, grounds, load_roster(cfg / "roster.toml"),
                notifier, settings, cache_ttl=cache_ttl)


class App:
    """One process: one Redis connection pool, one core, one scheduler, many adapters."""

    def __init__(self, settings: Settings, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock = clock or SystemClock()
        self.embedded = None
        self.store: Store | None = None
        self.core: Core | None = None
        self.adapters: list[Adapter] = []
        self.reader: Any = None  # the outbox reader, when platforms are running

    async def start_store(self) -> Store:
        """Connect to REDIS_URL, or start the embedded server; fail with one line."""
        url = self.settings.redis_url
        if url is None:
            from bot.store.embedded import EmbeddedRedis, EmbeddedRedisError

            self.embedded = EmbeddedRedis(self.settings.data_dir / "redis",
                                          appendfsync=self.settings.appendfsync)
            try:
                url = self.embedded.start()
            except EmbeddedRedisError as exc:
                raise StartupError(str(exc)) from None
        store = Store.from_url(url, dedupe_ttl=self.settings.dedupe_ttl_seconds)
        try:
            await store.ping()
        except StoreUnavailable:
            await store.close()
            raise StartupError(f"Redis at {_safe_url(url)} is not answering") from None
        self.store = store
        return store

    async def start(self) -> Core:
        """Start the store and the core (adapters are added and started by the caller)."""
        store = await self.start_store()
        self.core = build_core(store, self.settings, self.clock)
        return self.core

    async def stop(self) -> None:
        """Deliver what is queued, stop adapters, close Redis, stop the embedded server last
        (it holds the log)."""
        if self.core is not None:
            try:
                await asyncio.wait_for(self.core.notifier.close(), 10)
            except TimeoutError:
                log.warning("stopping with undelivered messages")
        for adapter in reversed(self.adapters):
            try:
                await adapter.stop()
            except Exception:
                log.exception("stopping %s failed", adapter.platform)
        if self.store is not None:
            await self.store.close()
        if self.embedded is not None:
            self.embedded.stop()


def _safe_url(url: str) -> str:
    """A Redis URL without its password, for messages and logs."""
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
