"""The command core: who is asking, what they asked, may they, and the handler's answer."""

from __future__ import annotations

import asyncio
import difflib
import logging
import shlex
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.core.delivery_port import Delivery, Outbox
from bot.core.drill import Drill
from bot.core.fixture_scope import FixtureScope, LiveFixtures
from bot.core.paging import fits, overflow, page_of, split_page_args
from bot.core.refusals import media_refused, said
from bot.core.refused_reports import RefusedReports
from bot.core.resend import NOT_CONFIRMED, UNSURE_CHANGE, UnsureWrites
from bot.core.roles import DEFAULT_ROLES, Member, RoleMatrix, load_role_matrix
from bot.core.strangers import StrangerAudit
from bot.domain.clock import Clock, iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.domain.messages import Command, Outbound, Reply, Result, refuse
from bot.domain.outcomes import Logged
from bot.domain.vocab import norm
from bot.observe import metrics
from bot.observe.outage import OutageLog
from bot.settings import Settings
from bot.store import (
    Refused,
    Store,
    StoreUnavailable,
    Unconfirmed,
    WriteAttempts,
    WritesRefused,
)
from bot.store.base import track_writes
from bot.store.facades import StoreFacades

log = logging.getLogger(__name__)

# A slot's master that answers but takes no writes may stay so for minutes: say so, so a
# steward radios the report in rather than sending it again and again.
WRITES_REFUSED = ("NOT logged: the log store is refusing writes just now (its server has no "
                  "standby to copy them to). Radio control with it; sending it again will "
                  "not help until this clears.")
NOT_LOGGED = ("NOT logged: the log store is not answering. Try again in a moment, "
              "or radio control.")
NOT_ANSWERING = "The log store is not answering. Try again in a moment."
HELD = ("HELD, not confirmed yet: the log store has not copied this to its standby. "
        "Send it again in a moment to confirm it (it will not be logged twice), "
        "or radio control.")
MAX_TEXT = 3000
SHARED_CHANGES = ("fixture", "phase", "active", "use")  # what per-process caches hold
SCOPES = ("me", "chat", "all")  # /fixture use <id> [scope]: a person, a chat, the deployment


class UsageError(Exception):
    """The command was malformed: answer one line plus the usage, write nothing.

    `field` names the part of the command the refusal is about (e.g. "location", "inc"), so
    a form can mark that field instead of guessing from the words."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


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
    subcommands: dict[str, str] = field(default_factory=dict, compare=False)  # word -> sub
    # sub -> the command whose right it needs (an alias of another command's action, e.g.
    # `fixture attendance` is `deploy attendance`: whoever may /deploy may, nobody else)
    same_right: dict[str, str] = field(default_factory=dict, compare=False)

    def subcommand(self, rest: str) -> str | None:
        """The sub-command the first word after the name means (roles.toml rights), if any."""
        first = rest.split(None, 1)[0] if self.subcommands and rest.strip() else ""
        return self.subcommands.get(norm(first)) if first else None

    def right(self, sub: str | None) -> tuple[str, str | None]:
        """(command, sub-command) whose right in roles.toml running this needs."""
        return (self.same_right[sub], None) if sub in self.same_right else (self.name, sub)


# What a guided form does with typed text (or a shared location) while its state waits:
# (ctx, fixture, the form's state) -> the answer, or None to let the text be a note.
Continuation = Callable[["Ctx", Fixture, dict[str, Any]], Awaitable["Result | None"]]


class Registry:
    """The command language: names and aliases to specs, and form kinds to continuations."""

    def __init__(self) -> None:
        self.specs: dict[str, Spec] = {}
        self.names: dict[str, str] = {}
        self.forms: dict[str, Continuation] = {}

    def add(self, spec: Spec) -> None:
        """Register a command (each module's register() calls this)."""
        self.specs[spec.name] = spec
        for n in (spec.name, *spec.aliases):
            self.names[norm(n)] = spec.name

    def add_form(self, kind: str, then: Continuation) -> None:
        """Register a guided form: typed text while a state of this `kind` waits goes to
        `then` (each form module's register() calls this)."""
        if kind in self.forms:
            raise ValueError(f"form kind {kind!r} registered twice")
        self.forms[kind] = then

    def continuation(self, kind: str) -> Continuation | None:
        """What continues a waiting form of this kind (None: not a registered form)."""
        return self.forms.get(kind)

    def lookup(self, word: str) -> Spec | None:
        """The spec a typed command name means, or None."""
        name = self.names.get(norm(word))
        return self.specs.get(name) if name else None

    def commands(self) -> dict[str, frozenset[str]]:
        """Command names (registration order) with their sub-commands, for roles.toml."""
        return {n: frozenset(s.subcommands.values()) for n, s in self.specs.items()}

    def suggest(self, word: str) -> list[str]:
        """Visible command names close to a typo (none for an enormous word)."""
        if len(word) > 60:
            return []
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

    def stale(self, key: str) -> tuple[bool, Any]:
        """(hit, value) even past its time: what to go on while the store refuses."""
        hit = self._data.get(key)
        return (True, hit[1]) if hit else (False, None)

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
    """Everything a handler needs for one command. Of `core` and `facades` a handler uses
    only what its home declares (handlers/<home>/home.py CORE and FACADES: checked by the
    architecture tests)."""

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
    def facades(self) -> StoreFacades:
        """The store's facades by purpose (stewarding, decisions, ...), built once by the root."""
        return self.core.facades

    @property
    def role(self) -> str | None:
        """The sender's role, None for a stranger."""
        return self.member.role if self.member else None

    @property
    def who(self) -> str:
        """platform:user of the sender."""
        return self.cmd.who

    async def fixture(self) -> Fixture:
        """The sender's fixture (their chat's, their own, else the deployment default), or a
        one-line refusal if none is set."""
        fx = await self.core.fixture_for(self.cmd)
        if fx is None:
            raise UsageError(self.core.fixtures.no_fixture())
        return fx

    def ground(self, fx: Fixture) -> Ground:
        """The layout of a fixture's ground (the first known one as a fallback)."""
        return self.core.grounds.get(fx.ground) or next(iter(self.core.grounds.values()))

    def event(self, kind: str, data: dict[str, Any]) -> Event:
        """A new event stamped with now, the sender and their role."""
        return Event(kind=kind, at=iso(self.now), by=self.who, role=self.role or "", data=data)

    @property
    def outbox(self) -> Outbox:
        """Where this command's messages go first (see bot.core.delivery_port.Outbox)."""
        return self.core.notifier.outbox

    def reply_outbound(self, reply: Reply, fixture: str) -> Outbound | None:
        """The sender's reply as an outbox message, when the adapter lets the core queue it."""
        return self.cmd.answer_outbound(reply, fixture)

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
                 grounds: dict[str, Ground], roster: dict[str, Member], notifier: Delivery,
                 settings: Settings, cache_ttl: float = 5.0, roles: RoleMatrix | None = None, *,
                 outage: OutageLog | None = None,
                 publish: Callable[[str, str], Awaitable[None]] | None = None,
                 fixtures: FixtureScope | None = None, facades: StoreFacades) -> None:
        """`fixtures`: how commands find their fixture; the live bot's (the store's choices)
        unless the composition root gives a replay's (bot.core.fixture_scope.DrillFixtures).
        `facades`: the store's other facades (delivery, platform and web state, plans),
        built once by the composition root for the parts built around the core."""
        self.store = store
        self.facades = facades
        self.registry = registry
        self.roles = roles or default_roles(registry)
        self.clock = clock
        self.grounds = grounds
        self.roster = roster
        self.notifier = notifier
        self.settings = settings
        self.cache = TTLCache(cache_ttl)
        # resends after an outage reuse the first dedupe key
        self.unsure = UnsureWrites(facades.unsure)
        # A Redis outage is logged when it starts and ends, not per command or per tick.
        self.outage = outage or OutageLog()
        # refusals of people the bot does not know: apart from the members' audit trail
        self.strangers = StrangerAudit(facades.audit, lambda: self.clock.now().timestamp())
        # control told once when a fixture's reports are refused (its slot takes no writes)
        self.reports_refused = RefusedReports(facades.notices, notifier)
        self.hooks: list[Callable[[str, str], Awaitable[None]]] = []  # (event, fixture)
        # When other replicas may run: tells them a SHARED_CHANGES change (pub/sub).
        self.publish = publish
        # Extra /status lines from other parts (missed briefings, escalations), by fixture.
        self.status_lines: list[Callable[[Fixture], Awaitable[list[str]]]] = []
        # Lines only commanders and control see (e.g. Redis could lose acknowledged reports).
        self.commander_lines: list[Callable[[Fixture], Awaitable[list[str]]]] = []
        self.fixtures: FixtureScope = fixtures or LiveFixtures(store, self.cache,
                                                               facades.choices)
        self._telling: set[asyncio.Task[None]] = set()  # change notices being published

    # ---------------------------------------------------------------- lookups
    async def chat_member(self, platform: str, chat: str, user: str, joined: bool) -> None:
        """Someone joined or left a chat, as its member updates tell: who a one-to-many
        post there reaches (handlers.stewarding.broadcasts)."""
        await self.facades.stewarding.chat_member(platform, chat, user, joined)

    async def member(self, who: str) -> Member | None:
        """A roster member or someone who joined by invite (cached briefly)."""
        if who.startswith("web:"):  # the control-room web view acts as its signed-in member
            who = who[4:]
        if who in self.roster:
            return self.roster[who]
        hit, m = self.cache.get("member:" + who)
        if hit:
            return m
        try:
            rec = await self.facades.members.member(who)
        except StoreUnavailable:  # e.g. the {ops} slot is away: who they were a moment ago
            hit, m = self.cache.stale("member:" + who)
            if hit:
                return m
            raise
        platform, user = who.split(":", 1)
        m = Member(platform, user, rec["role"], rec.get("name", ""), rec.get("zone", "")) \
            if rec else None
        self.cache.put("member:" + who, m)
        return m

    @property
    def drill(self) -> Drill | None:
        """The replay's fence (the fixtures it made and may use), or None for the live bot."""
        return self.fixtures.drill

    async def active_fixture(self) -> Fixture | None:
        """The fixture commands apply to (cached briefly); in a drill, the drill's own."""
        return await self.fixtures.active()

    def may(self, role: str | None, command: str, sub: str | None = None) -> bool:
        """May someone with this role (None: a stranger) run this (sub-)command?"""
        return self.roles.allowed(role, command, sub)

    async def fixture_for(self, cmd: Command) -> Fixture | None:
        """The fixture a command applies to: its group chat's choice, else its sender's,
        else the deployment default (see `choose_fixture`)."""
        fx_id = await self._chosen(cmd)
        if fx_id:
            fx = await self._fixture_by_id(fx_id)
            if fx is not None:
                return fx
        return await self.active_fixture()

    async def fixture_of(self, who: str) -> Fixture | None:
        """The fixture a person works on (their /fixture use choice, else the default)."""
        _chat_fx, fx_id = await self.facades.choices.fixture_choice(who, "", "")
        fx = await self._fixture_by_id(fx_id) if fx_id else None
        return fx or await self.active_fixture()

    async def _chosen(self, cmd: Command) -> str | None:
        return await self.fixtures.chosen(cmd)

    async def _fixture_by_id(self, fx_id: str) -> Fixture | None:
        hit, fx = self.cache.get("fx:" + fx_id)
        if not hit:
            fx = await self.store.fixture(fx_id)
            self.cache.put("fx:" + fx_id, fx)
        return fx

    async def choose_fixture(self, cmd: Command, fx_id: str, scope: str) -> str | None:
        """`/fixture use`: the fixture of the sender (scope "me"), of their chat ("chat") or
        the deployment default ("all"). A one-line refusal, or None when done."""
        return await self.fixtures.choose(cmd, fx_id, scope)

    async def use_fixture(self, fx_id: str, *, if_none: bool = False) -> str | None:
        """Make a fixture the one commands apply to (only if none is, with if_none); in a
        drill only the drill's own. A one-line refusal, or None when done."""
        return await self.fixtures.use(fx_id, if_none=if_none)

    async def changed(self, what: str, fixture_id: str, *, here: bool = True) -> None:
        """Something others depend on changed (fixture, phase, incident): drop caches, tell
        the scheduler and adapters' live views, and (if it happened `here`) other replicas
        about what they may have cached."""
        if what in SHARED_CHANGES:
            self.cache.drop()  # the default, fixtures by id and choices: all re-read
        if what == UNSURE_CHANGE:  # not a change to views: only replicas need to know
            if not here:  # another replica has unsure writes: look resends up in the store
                self.unsure.watch(self.clock.now() + timedelta(seconds=self.unsure.window_s))
            elif self.publish is not None:
                await self._tell(what, fixture_id)
            return
        if here and self.publish is not None:
            if what in SHARED_CHANGES:  # others' caches must drop before anyone relies on it
                await self._tell(what, fixture_id)
            else:  # for live views elsewhere (Home tabs): off the reply's path
                task = asyncio.get_running_loop().create_task(self._tell(what, fixture_id))
                self._telling.add(task)
                task.add_done_callback(self._telling.discard)
        for hook in self.hooks:
            try:
                await hook(what, fixture_id)
            except Exception:
                log.exception("change hook failed for %s", what)

    async def _tell(self, what: str, fixture_id: str) -> None:
        assert self.publish is not None
        try:
            await self.publish(what, fixture_id)
        except StoreUnavailable as exc:
            self.outage.count("{n} changes not told to other replicas at once",
                              refused=isinstance(exc, WritesRefused))

    # ---------------------------------------------------------------- dispatch
    async def handle(self, cmd: Command) -> Result | None:
        """Answer one command; None means 'not for the bot' (chatter in a group)."""
        result = await self._handle(cmd)
        if result is not None and result.outbound:
            if not result.queued and cmd.reply_via:
                # it wrote and tells others: its answer goes durably with their messages
                fx = next((o.fixture for o in result.outbound if o.fixture), "")
                mine = cmd.answer_outbound(result.reply, fx, result.incident) if fx else None
                if mine is not None:
                    result.outbound.append(mine)
                    result.queued = True
            await self.notifier.send(result.outbound, once=cmd.dedupe_key)
        return result

    async def _handle(self, cmd: Command) -> Result | None:
        now = self.clock.now()  # the log's time is when the bot received it
        cmd = await self.unsure.resend(cmd, now)
        writes = track_writes()
        result = await self._answer(cmd, now, writes)
        if writes.unconfirmed:
            self.unsure.remember(cmd, now)
        elif not writes.outage:
            await self.unsure.settle(cmd)  # answered with the store up: the outcome is known
            if self.unsure.pending:  # the store answers again: let other replicas know too
                await self.share_unsure()
        return result

    async def share_unsure(self) -> None:
        """Write commands answered NOT CONFIRMED through to the store once it answers again,
        and tell the other replicas to look resends up there."""
        if await self.unsure.write_through():
            await self.changed(UNSURE_CHANGE, "")

    async def learn_unsure(self) -> None:
        """Whether another replica has unsure writes, from the store (on (re)subscribing to
        the changes channel: what was published meanwhile was not heard)."""
        await self.unsure.learn(self.clock.now())

    async def _answer(self, cmd: Command, now: datetime,
                      writes: WriteAttempts) -> Result | None:
        text = cmd.text.strip()
        if len(text) > MAX_TEXT:  # refused, never cut: a cut report says something else
            if not text.startswith("/") and not cmd.private and not cmd.attachments:
                return None
            return Result(Reply(f"Too long: {len(text):,} characters (the limit is "
                                f"{MAX_TEXT:,}). Nothing was logged; send it in shorter "
                                "parts.", ok=False))
        fault = next((a.fault for a in cmd.attachments if a.fault is not None), None)
        if fault is not None:  # e.g. a voice note declaring 2^31 s: refused, never shown
            return Result(Reply(media_refused(fault), ok=False))
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
        spec = self.registry.lookup(word)
        if spec is None:
            if not cmd.private and member is None:
                return None
            await self._audit_refusal(cmd, "?", member.role if member else None, "unknown command")
            hints = self.registry.suggest(word)
            hint = f" Did you mean /{hints[0]}?" if hints else ""
            return Result(Reply(f"Unknown command /{word}.{hint} Send /help for the list.",
                                ok=False))
        role = member.role if member else None
        sub = spec.subcommand(rest)
        name = f"{spec.name} {sub}" if sub else spec.name
        if not self.roles.allowed(role, *spec.right(sub)):
            await self._audit_refusal(cmd, name, role, "role")
            if role is None:
                return Result(Reply("You are not registered. Ask control for an invite code, "
                                    "then send /join <code>.", ok=False))
            return Result(Reply(self.roles.not_for(role, *spec.right(sub),
                                                      asked=f"/{name}"), ok=False))
        page = 1
        if spec.reads_only:  # a read can be asked for again: long answers come in pages
            rest, page = split_page_args(rest)
        ctx = Ctx(self, cmd, member, spec, split_args(rest), rest.strip(), now)
        outcome = "error"
        try:
            result = await spec.handler(ctx)
            outcome = "ok" if result.reply.ok else "refused"
        except UsageError as exc:
            outcome = "usage"
            await self._audit_refusal(cmd, name, role, "usage")
            return refuse(str(exc), spec.usage, field=exc.field)
        except Refused as exc:
            outcome = "refused"
            await self._audit_refusal(cmd, name, role, "refused")
            return Result(Reply(said(exc), ok=False))
        except Unconfirmed:
            outcome = "held"
            log.warning("/%s written but not confirmed by a replica", spec.name)
            writes.unconfirmed = True  # a resend of the same text reuses this dedupe key
            return Result(Reply(HELD, ok=False))
        except StoreUnavailable as exc:
            outcome = "unavailable"
            refused = isinstance(exc, WritesRefused)  # its slot answers, takes no writes
            self.outage.count(refused=refused)  # one line when it starts, one when it ends
            if refused and not spec.reads_only:
                await self._fixture_refusing(ctx, True)
            if writes.attempted:  # the write may have run before the reply was lost
                writes.unconfirmed = True
                return Result(Reply(NOT_CONFIRMED, ok=False))
            return Result(Reply(NOT_ANSWERING if spec.reads_only else
                                WRITES_REFUSED if refused else NOT_LOGGED, ok=False))
        except Exception:
            log.exception("handler /%s failed", spec.name)
            if writes.attempted:  # it failed after sending a write, which may have run
                writes.unconfirmed = True
                return Result(Reply(f"Sorry, /{spec.name} failed after writing; it may or may "
                                    "not have been logged. Send it again: a repeat will not "
                                    "be logged twice.", ok=False))
            return Result(Reply(f"Sorry, /{spec.name} failed and was NOT logged. "
                                "Try again or radio control.", ok=False))
        finally:
            metrics.COMMANDS.labels(spec.name, outcome, self.store.space.club).inc()
        if isinstance(result.outcome, Logged):
            metrics.REPORTS.labels(self.store.space.club).inc()
            if self.reports_refused.refusing:
                await self._fixture_refusing(ctx, False)
        if not result.reply.ok:
            await self._audit_refusal(cmd, name, role, "refused")
        result.outbound = ctx.outbound + result.outbound
        if spec.reads_only:
            base = f"/{spec.name} {rest.strip()}".rstrip()
            result.reply = page_of(result.reply, page, lambda n: f"{base} page {n}")
        elif not fits(result.reply):  # a write's answer: the rest follows as messages
            first, *more = overflow(result.reply)
            result.reply = first
            result.outbound += [Outbound(f"user:{cmd.who}", r) for r in more]
        return result

    async def _fixture_refusing(self, ctx: Ctx, refusing: bool) -> None:
        """Tell control (once, across replicas) that the command's fixture refuses reports,
        or takes them again."""
        try:
            fx = await ctx.fixture()
        except (UsageError, StoreUnavailable):
            return
        await (self.reports_refused.refused(fx) if refusing else self.reports_refused.logged(fx))

    async def _audit_refusal(self, cmd: Command, name: str, role: str | None, why: str) -> None:
        # Never the user's words: they could name an arrested person.
        if role is None:  # a stranger: a flood of these must not evict members' entries
            await self.strangers.refused(cmd.who, f"/{name} as stranger: {why}",
                                         iso(self.clock.now()))
            return
        try:
            await self.facades.audit.audit(cmd.who, "refused", f"/{name} as {role}: {why}",
                                   iso(self.clock.now()))
        except StoreUnavailable as exc:
            self.outage.count("{n} refusals not recorded in the audit trail",
                              refused=isinstance(exc, WritesRefused))


def default_roles(registry: Registry) -> RoleMatrix:
    """The shipped config/roles.toml checked against a registry's commands."""
    return load_role_matrix(DEFAULT_ROLES, registry.commands())
