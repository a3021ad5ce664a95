"""The command core: who is asking, what they asked, may they, and the handler's answer."""

from __future__ import annotations

import difflib
import logging
import shlex
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.core.messages import Command, Outbound, Reply, Result, refuse
from bot.core.roles import Member, allowed
from bot.delivery.notifier import Notifier
from bot.domain.clock import Clock, iso
from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.domain.models import Fixture
from bot.domain.vocab import ROLES, norm
from bot.store import Refused, Store, StoreUnavailable

log = logging.getLogger(__name__)

NOT_LOGGED = ("NOT logged: the log store is not answering. Try again in a moment, "
              "or radio control.")
NOT_ANSWERING = "The log store is not answering. Try again in a moment."
MAX_TEXT = 3000


class UsageError(Exception):
    """The command was malformed: answer one line plus the usage, write nothing."""


Handler = Callable[["Ctx"], Awaitable[Result]]


@dataclass(frozen=True)
class Spec:
    """One command of the language: name, aliases, usage line, summary, handler."""

    name: str
    usage: str
    summary: str
    handler: Handler
    aliases: tuple[str, ...] = ()
    hidden: bool = False
    reads_only: bool = False  # an outage then says "try again", not "NOT logged"


class Registry:
    """The command language: names and aliases to specs."""

    def __init__(self) -> None:
        self.specs: dict[str, Spec] = {}
        self.names: dict[str, str] = {}

    def add(self, spec: Spec) -> None:
        """Register a command (each module's register() calls this)."""
        self.specs[spec.name] = spec
        for n in (spec.name, *spec.aliases):
            self.names[norm(n)] = spec.name

    def lookup(self, word: str) -> Spec | None:
        """The spec a typed command name means, or None."""
        name = self.names.get(norm(word))
        return self.specs.get(name) if name else None

    def suggest(self, word: str) -> list[str]:
        """Visible command names close to a typo."""
        visible = [n for n, s in self.names.items() if not self.specs[s].hidden]
        out: list[str] = []
        for m in difflib.get_close_matches(norm(word), visible, n=5, cutoff=0.5):
            if self.names[m] not in out:
                out.append(self.names[m])
        return out[:3]


class TTLCache:
    """A few seconds' memory of rarely-changing reads (members, active fixture).

    Keeps the hot write path at one Redis round trip; local writes invalidate at once and
    other replicas converge within `ttl`.
    """

    def __init__(self, ttl: float = 5.0) -> None:
        self.ttl = ttl
        self._data: dict[str, tuple[float, Any]] = {}

    def get(self, key: str) -> tuple[bool, Any]:
        """(hit, value)."""
        hit = self._data.get(key)
        if hit and hit[0] > time.monotonic():
            return True, hit[1]
        return False, None

    def put(self, key: str, value: Any) -> None:
        """Remember a value."""
        self._data[key] = (time.monotonic() + self.ttl, value)

    def drop(self, key: str | None = None) -> None:
        """Forget one key, or everything."""
        if key is None:
            self._data.clear()
        else:
            self._data.pop(key, None)


@dataclass
class Ctx:
    """Everything a handler needs for one command."""

    core: Core
    cmd: Command
    member: Member | None
    spec: Spec
    args: list[str]
    rest: str  # the raw text after the command name
    now: datetime
    outbound: list[Outbound] = field(default_factory=list)

    @property
    def store(self) -> Store:
        """The store."""
        return self.core.store

    @property
    def role(self) -> str | None:
        """The sender's role, None for a stranger."""
        return self.member.role if self.member else None

    @property
    def who(self) -> str:
        """platform:user of the sender."""
        return self.cmd.who

    async def fixture(self) -> Fixture:
        """The active fixture, or a one-line refusal if none is set."""
        fx = await self.core.active_fixture()
        if fx is None:
            raise UsageError("No active fixture. An admin sets one with /fixture use <id>.")
        return fx

    def ground(self, fx: Fixture) -> Ground:
        """The layout of a fixture's ground (the first known one as a fallback)."""
        return self.core.grounds.get(fx.ground) or next(iter(self.core.grounds.values()))

    def event(self, kind: str, data: dict[str, Any]) -> Event:
        """A new event stamped with now, the sender and their role."""
        return Event(kind=kind, at=iso(self.now), by=self.who, role=self.role or "", data=data)

    @property
    def durable(self) -> bool:
        """Messages go through the durable outbox (the app wired one)."""
        return self.core.notifier.outbox is not None

    def reply_outbound(self, reply: Reply, fixture: str) -> Outbound | None:
        """The sender's reply as an outbox message, when the adapter lets the core queue it."""
        via = self.cmd.reply_via
        if not via or not self.durable:
            return None
        how, _, mid = via.partition(":")
        return Outbound(f"user:{self.cmd.platform}:{self.cmd.chat}", reply, fixture=fixture,
                        quote=mid if how == "quote" else "", edit=mid if how == "edit" else "")

    def notify(self, audience: str, reply: Reply, ref: str = "", fixture: str = "",
               thread: str = "") -> None:
        """Queue a message to an audience, sent after the command is answered."""
        self.outbound.append(Outbound(audience, reply, ref, fixture, thread))


def split_args(text: str) -> list[str]:
    """Words of a command, honouring quotes when they balance."""
    if '"' not in text and "'" not in text:
        return text.split()  # the common case; shlex is slow on the hot path
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


class Core:
    """Turns Commands into Results, for every platform, through one registry."""

    def __init__(self, store: Store, registry: Registry, clock: Clock,
                 grounds: dict[str, Ground], roster: dict[str, Member], notifier: Notifier,
                 settings: Any, cache_ttl: float = 5.0) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock
        self.grounds = grounds
        self.roster = roster
        self.notifier = notifier
        self.settings = settings
        self.cache = TTLCache(cache_ttl)
        self.hooks: list[Callable[[str, str], Awaitable[None]]] = []  # (event, fixture)
        # Extra /status lines from other parts (missed briefings, escalations), by fixture.
        self.status_lines: list[Callable[[Fixture], Awaitable[list[str]]]] = []

    # ---------------------------------------------------------------- lookups
    async def member(self, who: str) -> Member | None:
        """A roster member or someone who joined by invite (cached briefly)."""
        if who in self.roster:
            return self.roster[who]
        hit, m = self.cache.get("member:" + who)
        if hit:
            return m
        rec = await self.store.member(who)
        platform, user = who.split(":", 1)
        m = Member(platform, user, rec["role"], rec.get("name", ""), rec.get("zone", "")) \
            if rec else None
        self.cache.put("member:" + who, m)
        return m

    async def active_fixture(self) -> Fixture | None:
        """The fixture commands apply to (cached briefly)."""
        hit, fx = self.cache.get("active")
        if hit:
            return fx
        fx_id = await self.store.active_fixture_id()
        fx = await self.store.fixture(fx_id) if fx_id else None
        self.cache.put("active", fx)
        return fx

    async def changed(self, what: str, fixture_id: str) -> None:
        """Something others depend on changed (fixture, phase, incident): drop caches, tell
        the scheduler and adapters' live views."""
        if what in ("fixture", "phase", "active"):
            self.cache.drop("active")
        for hook in self.hooks:
            try:
                await hook(what, fixture_id)
            except Exception:
                log.exception("change hook failed for %s", what)

    # ---------------------------------------------------------------- dispatch
    async def handle(self, cmd: Command) -> Result | None:
        """Answer one command; None means 'not for the bot' (chatter in a group)."""
        result = await self._handle(cmd)
        if result is not None and result.outbound:
            if not result.queued and cmd.reply_via and self.notifier.outbox is not None:
                # it wrote and tells others: its answer goes durably with their messages
                fx = next((o.fixture for o in result.outbound if o.fixture), "")
                how, _, mid = cmd.reply_via.partition(":")
                if fx:
                    result.outbound.append(Outbound(
                        f"user:{cmd.platform}:{cmd.chat}", result.reply, fixture=fx,
                        quote=mid if how == "quote" else "", edit=mid if how == "edit" else ""))
                    result.queued = True
            await self.notifier.send(result.outbound)
        return result

    async def _handle(self, cmd: Command) -> Result | None:
        text = cmd.text.replace("\x01", "").strip()[:MAX_TEXT]
        now = self.clock.now()  # the log's time is when the bot received it
        try:
            member = await self.member(cmd.who)
        except StoreUnavailable:
            return Result(Reply(NOT_LOGGED, ok=False))
        if not text.startswith("/"):
            if not cmd.private and not cmd.attachments:
                return None  # group chatter is never the bot's business
            if member is None:
                return Result(Reply("You are not registered. Ask control for an invite code, "
                                    "then send /join <code>.", ok=False))
            text = "/note " + text
        word, _, rest = text[1:].partition(" ")
        word = word.split("@", 1)[0]  # Telegram's /cmd@botname
        spec = self.registry.lookup(word)
        if spec is None:
            if not cmd.private and member is None:
                return None
            hints = self.registry.suggest(word)
            hint = f" Did you mean /{hints[0]}?" if hints else ""
            return Result(Reply(f"Unknown command /{word}.{hint} Send /help for the list.",
                                ok=False))
        role = member.role if member else None
        if not allowed(role, spec.name):
            await self._audit_refusal(cmd, spec.name, role)
            if role is None:
                return Result(Reply("You are not registered. Ask control for an invite code, "
                                    "then send /join <code>.", ok=False))
            return Result(Reply(f"/{spec.name} is not for your role ({ROLES.label(role)}).",
                                ok=False))
        ctx = Ctx(self, cmd, member, spec, split_args(rest), rest.strip(), now)
        try:
            result = await spec.handler(ctx)
        except UsageError as exc:
            return refuse(str(exc), spec.usage)
        except Refused as exc:
            return Result(Reply(str(exc), ok=False))
        except StoreUnavailable:
            log.warning("store unavailable during /%s", spec.name)
            return Result(Reply(NOT_ANSWERING if spec.reads_only else NOT_LOGGED, ok=False))
        except Exception:
            log.exception("handler /%s failed", spec.name)
            return Result(Reply(f"Sorry, /{spec.name} failed and was NOT logged. "
                                "Try again or radio control.", ok=False))
        result.outbound = ctx.outbound + result.outbound
        return result

    async def _audit_refusal(self, cmd: Command, name: str, role: str | None) -> None:
        try:
            await self.store.audit(cmd.who, "refused", f"/{name} as {role or 'stranger'}",
                                   iso(self.clock.now()))
        except StoreUnavailable:
            log.warning("audit trail unavailable; refusal of %s not recorded", cmd.who)
