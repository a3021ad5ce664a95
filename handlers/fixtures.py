"""Fixtures and phases: add, choose, re-categorise, re-time, cancel; declare the phase."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

from bot.core.dispatch import SCOPES, Core, Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso
from bot.domain.deployment import rollcall_offset
from bot.domain.fixture.fixture_model import Fixture, slug
from bot.domain.fixture.key_timings import BY_PHASE
from bot.domain.fixture.restricted import RESTRICTED_KIND, note_restricted, split_fixture_data
from bot.domain.ledger import Event
from bot.domain.messages import Reply, Result
from bot.domain.vocab import PHASES, RISK_CATEGORIES, match_key, norm
from handlers.deploy import attendance
from handlers.inspections import turnstiles_refusal
from handlers.words import resolve_word

FIXTURE_USAGE = ("/fixture add <Home> v <Away> <YYYY-MM-DD HH:MM> [cat=<A|B|C|C-IRD>] "
                 "[ground=<id>] [comp=<competition>] [att=<n>] [away=<n>]  |  "
                 "/fixture use <id> [me|chat|all]  |  /fixture category <cat> [why]  |  "
                 "/fixture kickoff <YYYY-MM-DD HH:MM>  |  /fixture note <key> <text>  |  "
                 "/fixture attendance <n>  |  /fixture cancel  |  /fixture list")
# Briefing notes (risk_groups and intel are intelligence: command briefing only).
NOTE_KEYS = ("segregation", "gates", "alcohol", "pyro", "travel", "dispersal", "risk_groups",
             "intel", "contacts", "rollcall")
# Typed word -> sub-command (roles.toml grants some on their own, e.g. "fixture list").
FIXTURE_ACTIONS = {"add": "add", "use": "use", "list": "list", "ls": "list",
                   "category": "category", "cat": "category", "kickoff": "kickoff",
                   "ko": "kickoff", "cancel": "cancel", "note": "note", "notes": "note",
                   "attendance": "attendance", "att": "attendance"}
# /fixture add is read word by word, never by one regex: "(.+?)\s+v\s+(.+?)\s+" backtracks
# for hours over 3,000 characters of spaces and "v"s, on the event loop.
WORD = re.compile(r"\S+")
VERSUS = frozenset({"v", "vs", "v.", "vs."})
DATE_WORD = re.compile(r"\d{4}-\d{2}-\d{2}")
TIME_START = re.compile(r"\d{1,2}:\d{2}")


# Kick-offs are accepted only this close to today: year 1 or 9999 broke change hooks, the
# retention sweep and replay.
KICKOFF_BACK = timedelta(days=365)
KICKOFF_AHEAD = timedelta(days=730)

CLUB_SUFFIXES = {"united", "city", "fc", "afc", "town", "rovers", "albion", "hotspur",
                 "wanderers", "athletic", "county"}


def club_slug(name: str) -> str:
    """West Ham United -> westham (common suffixes dropped)."""
    words = [w for w in name.split() if w.lower() not in CLUB_SUFFIXES] or name.split()
    return slug("".join(words), 12)


# A drill's fixture id: the live id with this in front. A live id is two slugs (letters and
# digits) and a date joined by two hyphens, a drill id has three: the two never meet.
DRILL_PREFIX = "drill-"


def fixture_id(home: str, away: str, kickoff_local: datetime, *, drill: bool = False) -> str:
    """A readable, stable id: westham-chelsea-20261125 (drill-westham-chelsea-20261125 for a
    replay's)."""
    live = f"{club_slug(home)}-{club_slug(away)}-{kickoff_local:%Y%m%d}"
    return DRILL_PREFIX + live if drill else live


async def _named(ctx: Ctx, fx_id: str) -> Fixture | None:
    """The fixture an id names; in a drill, a script's live-style id means the drill's own
    fixture of that match (scripts run unchanged, inside the drill's namespace)."""
    if ctx.core.drill is not None and not fx_id.startswith(DRILL_PREFIX):
        fx = await ctx.store.fixture(DRILL_PREFIX + fx_id)
        if fx is not None:
            return fx
    return await ctx.store.fixture(fx_id)


def local_time(core: Core, date: str, hhmm: str) -> datetime:
    """A local wall-clock time in the configured zone, or a UsageError."""
    try:
        naive = datetime.strptime(f"{date} {hhmm}", "%Y-%m-%d %H:%M")
    except ValueError:
        raise UsageError(f"'{date} {hhmm}' is not a date and time (YYYY-MM-DD HH:MM).") from None
    return naive.replace(tzinfo=core.settings.zone)


def kickoff_time(ctx: Ctx, date: str, hhmm: str) -> datetime:
    """A kick-off in local time, refused (UsageError) unless within KICKOFF_BACK of today
    and KICKOFF_AHEAD of it."""
    ko = local_time(ctx.core, date, hhmm)
    # Compared as local wall-clock times: an aware year-1 time can overflow on conversion.
    today = ctx.now.astimezone(ctx.core.settings.zone).replace(tzinfo=None)
    if not today - KICKOFF_BACK <= ko.replace(tzinfo=None) <= today + KICKOFF_AHEAD:
        raise UsageError(f"Kick-off {date} {hhmm} is out of range: it must be within "
                         f"{KICKOFF_BACK.days // 365} year back and "
                         f"{KICKOFF_AHEAD.days // 365} years ahead of today.")
    return ko


def _category(word: str) -> str:
    return resolve_word(RISK_CATEGORIES, word, "risk category",
                        "Use A, B, C, C-IRD or police_free.")


def intel_notes(core: Core) -> frozenset[str]:
    """The note keys the briefing config calls intelligence."""
    from bot.domain.briefing.briefing_cadence import config_for

    return config_for(core.settings).intel_notes


def restricted_twin(ev: Event, data: dict[str, Any]) -> Event | None:
    """The restricted event beside ev (same time, person, phase) carrying data, if any."""
    if not data:
        return None
    return Event(kind=RESTRICTED_KIND, at=ev.at, by=ev.by, role=ev.role, data=data,
                 phase=ev.phase)


async def create_fixture(core: Core, fx: Fixture, ev: Event, dedupe: str) -> bool:
    """Store a new fixture; False if one with that id exists already. The event's restricted
    fields (the risk category's reason, intelligence notes) go to the restricted log."""
    from bot.store import Refused

    ev.data, secret = split_fixture_data(ev.data, intel_notes(core))
    try:
        applied = await core.store.create_fixture(fx, ev, dedupe, restricted_twin(ev, secret))
    except Refused:
        return False
    if core.drill is not None:  # this replay made it (or made it on an earlier run)
        core.drill.created.add(fx.id)
    if not applied.duplicate:
        await core.changed("fixture", fx.id)
    return True


async def fixture_cmd(ctx: Ctx) -> Result:
    """/fixture add|use|category|kickoff|cancel|list."""
    if not ctx.args:
        raise UsageError("Which fixture action?")
    action = ctx.args[0].lower()
    rest = ctx.rest.split(None, 1)[1] if len(ctx.rest.split(None, 1)) > 1 else ""
    if action == "add":
        return await _add(ctx, rest)
    if action in ("list", "ls"):
        return await fixtures_cmd(ctx)
    if action == "use":
        return await _use(ctx)
    fx = await ctx.fixture()
    if FIXTURE_ACTIONS.get(action) == "attendance":  # /deploy attendance, by another name
        return await attendance(ctx, fx, ctx.args[1:])
    if action in ("category", "cat"):
        if len(ctx.args) < 2:
            raise UsageError("Which category?")
        cat, why = _category(ctx.args[1]), " ".join(ctx.args[2:])
        line = f"Risk category now {RISK_CATEGORIES.label(cat)}"
        touched = {"category_why": why} if why or fx.category_why else {}
        return await _change(ctx, fx, {"category": cat, "category_why": why},
                             line + (f": {why}" if why else ""),
                             {"category": cat, **({"restricted": ["category_why"]}
                                                  if touched else {})}, touched, notice=line)
    if action in ("kickoff", "ko"):
        if len(ctx.args) != 3:
            raise UsageError("Give the new kick-off as YYYY-MM-DD HH:MM.")
        ko = kickoff_time(ctx, ctx.args[1], ctx.args[2])
        return await _change(ctx, fx, {"kickoff": iso(ko)},
                             f"Kick-off moved to {ko:%a %d %b %H:%M}")
    if action == "cancel":
        return await _change(ctx, fx, {"status": "cancelled"}, "Fixture cancelled")
    if action in ("note", "notes"):
        if len(ctx.args) < 2 or norm(ctx.args[1]) not in NOTE_KEYS:
            raise UsageError(f"Which note? One of: {', '.join(NOTE_KEYS)}.")
        key, text = norm(ctx.args[1]), " ".join(ctx.args[2:])
        if key == "rollcall" and text:  # this fixture's automatic roll call time
            try:
                rollcall_offset(text)
            except ValueError:
                raise UsageError("The roll call time is T-<n>m, T-<n>h or T-<n>d before "
                                 "kick-off (e.g. T-90m), or off.", field="rollcall") from None
        notes = {**fx.notes, key: text} if text else {k: v for k, v in fx.notes.items()
                                                       if k != key}
        word = key.replace("_", " ")
        line = f"{word.capitalize()} note {'set' if text else 'cleared'}"
        fields = {"notes": json.dumps(notes, separators=(",", ":"))}
        if note_restricted(key, intel_notes(ctx.core)):
            return await _change(ctx, fx, fields, line, {"restricted": [f"notes.{key}"]},
                                 {f"notes.{key}": text})
        public, _ = split_fixture_data(fields, intel_notes(ctx.core))
        return await _change(ctx, fx, fields, line, {"notes": public["notes"]})
    raise UsageError(f"Unknown fixture action '{action}'.")


async def _use(ctx: Ctx) -> Result:
    """/fixture use <id> [me|chat|all]: for you (default), for this group chat, or the
    deployment default; the last two need the full /fixture right."""
    if len(ctx.args) not in (2, 3):
        raise UsageError("Which fixture? /fixtures lists their ids.")
    scope = norm(ctx.args[2]) if len(ctx.args) == 3 else "me"
    if scope not in SCOPES:
        raise UsageError(f"'{ctx.args[2]}' is not me, chat or all.", field="scope")
    if scope == "chat" and ctx.cmd.private:
        scope = "me"  # a private chat is the person's own
    if scope != "me" and not ctx.core.roles.allowed(ctx.role, "fixture"):
        whom = "this chat" if scope == "chat" else "everyone"
        return Result(Reply(f"Choosing the fixture for {whom} is for admins; "
                            "/fixture use <id> chooses yours.", ok=False))
    fx = await _named(ctx, ctx.args[1])
    if fx is None:
        raise UsageError(f"No fixture '{ctx.args[1]}'. /fixtures lists their ids.")
    if fx.drill and ctx.core.drill is None:
        return Result(Reply(f"{fx.id} is a drill's fixture: live work never goes into it "
                            f"(the control room shows it at /control/?fixture={fx.id}).",
                            ok=False))
    refusal = await ctx.core.choose_fixture(ctx.cmd, fx.id, scope)
    if refusal is not None:
        return Result(Reply(refusal, ok=False))
    detail = fx.id if scope == "all" else f"{fx.id} for {scope}"
    await ctx.store.audit(ctx.who, "fixture.use", detail, iso(ctx.now))
    await ctx.core.changed("active" if scope == "all" else "use", fx.id)
    whose = {"me": "You are", "chat": "This chat is", "all": "Everyone without a choice is"}
    ground = ctx.core.grounds.get(fx.ground)
    return Result(Reply(f"{whose[scope]} now on {fx.title} ({fx.id})"
                        + (f" at {ground.name}" if ground else "") + "."))


def read_add(text: str) -> tuple[str, str, str, str, str] | None:
    """(home, away, date, time, options) of "<Home> v <Away> <YYYY-MM-DD> <HH:MM>[options]",
    or None; linear in the text. Home ends at the first "v" word, away at the first date
    after it that a time follows."""
    words = list(WORD.finditer(text))
    vs = next((i for i in range(1, len(words)) if words[i][0].lower() in VERSUS), None)
    if vs is None:
        return None
    for d in range(vs + 2, len(words) - 1):
        if DATE_WORD.fullmatch(words[d][0]) and (t := TIME_START.match(words[d + 1][0])):
            home = text[:words[vs - 1].end()]
            away = text[words[vs + 1].start():words[d - 1].end()]
            tail = text[words[d + 1].start() + t.end():]
            if "\n" in home + away + tail:  # one fixture is one line
                return None
            return home, away, words[d][0], t[0], tail
    return None


async def _add(ctx: Ctx, text: str) -> Result:
    parts = read_add(text.strip())
    if parts is None:
        raise UsageError("Couldn't read that fixture.")
    home, away, date, hhmm, tail = parts
    ko = kickoff_time(ctx, date, hhmm)
    opts: dict[str, str] = {}
    for word in tail.split():
        if "=" not in word:
            raise UsageError(f"'{word}' isn't an option (cat=, ground=, comp=, att=, away=).")
        k, v = word.split("=", 1)
        opts[k.lower()] = v
    typed = opts.get("ground") or next(iter(ctx.core.grounds))
    ground = match_key(typed, ctx.core.grounds)
    if ground is None:
        raise UsageError(f"Unknown ground '{typed[:40]}' (grounds: "
                         f"{', '.join(ctx.core.grounds)}).", field="ground")
    try:
        att, away_n = int(opts.get("att", 0)), int(opts.get("away", 0))
    except ValueError:
        raise UsageError("att= and away= take whole numbers.") from None
    drill = ctx.core.drill is not None  # a replay's fixtures are drills, even with --live
    fx = Fixture(id=fixture_id(home, away, ko, drill=drill), home=home.strip(),
                 away=away.strip(), drill=drill,
                 kickoff=ko, ground=ground, category=_category(opts.get("cat", "B")),
                 competition=opts.get("comp", "").replace("_", " "), attendance=att,
                 away_allocation=away_n)
    ev = ctx.event("fixture.created", {"id": fx.id, **fx.to_hash()})
    ev.phase = "pre"
    if not await create_fixture(ctx.core, fx, ev, ctx.cmd.dedupe_key):
        raise UsageError(f"Fixture {fx.id} already exists.")
    await ctx.core.use_fixture(fx.id, if_none=True)
    return Result(Reply(f"{fx.title}, {ko:%a %d %b %Y %H:%M}, category {fx.category}, "
                        f"at {ctx.core.grounds[ground].name}.\nId: {fx.id} "
                        f"(/fixture use {fx.id} to run it).", title="Fixture added"))


async def _change(ctx: Ctx, fx: Fixture, fields: dict[str, str], line: str,
                  public: dict[str, Any] | None = None, secret: dict[str, str] | None = None,
                  notice: str | None = None) -> Result:
    """Write fields; log `public` (default: fields) and, apart, the restricted `secret`;
    tell the command chat `notice` (default: line) unless it may read intelligence."""
    ev = ctx.event("fixture.changed", {"id": fx.id, **(fields if public is None else public)})
    twin = restricted_twin(ev, {"id": fx.id, **secret} if secret else {})
    applied = await ctx.store.update_fixture(fx.id, fields, ev, ctx.cmd.dedupe_key, twin)
    if not applied.duplicate:
        from bot.schedule.briefing_content import reads_intel

        await ctx.core.changed("fixture", fx.id)
        told = line if notice is None or reads_intel(ctx.core, "command", fx.id) else notice
        ctx.notify("command", Reply(told, title=fx.title), fixture=fx.id)
    return Result(Reply(f"{line}.", title=fx.title))


async def fixtures_cmd(ctx: Ctx) -> Result:
    """/fixtures: every fixture with its id."""
    rows = await ctx.store.fixtures(drill=ctx.core.drill is not None)
    if not rows:
        return Result(Reply("No fixtures yet. /fixture add Home v Away YYYY-MM-DD HH:MM"))
    active = getattr(await ctx.core.fixture_for(ctx.cmd), "id", None)
    tz = ctx.core.settings.zone
    lines = [f"{'▶ ' if f.id == active else ''}{f.id}: {f.title}, "
             f"{f.kickoff.astimezone(tz):%d %b %H:%M}, cat {f.category}"
             + (" (cancelled)" if f.status == "cancelled" else "") for f in rows]
    return Result(Reply("\n".join(lines), title="Fixtures"))


async def phase_cmd(ctx: Ctx) -> Result:
    """/phase <phase>: declare the match phase; every later event is tagged with it."""
    if len(ctx.args) != 1:
        raise UsageError("Which phase?")
    phase = resolve_word(PHASES, ctx.args[0], "phase")
    fx = await ctx.fixture()
    if fx.phase == "pre" and phase not in ("pre", "closed"):
        # kick-off straight from pre-match opens the turnstiles too: the same gate
        refusal = await turnstiles_refusal(ctx, fx)  # the pre-event inspection's gate
        if refusal:
            raise UsageError(refusal)
    ev = ctx.event("fixture.phase", {"id": fx.id, "phase": phase, "from": fx.phase})
    ev.phase = phase
    timing = BY_PHASE.get(phase)  # the phases that start a key timing record it too
    applied = await ctx.store.update_fixture(fx.id, {"phase": phase}, ev, ctx.cmd.dedupe_key,
                                             timing=timing.key if timing else "")
    if not applied.duplicate:
        if phase == "closed":  # the log's head at close, kept apart from the log itself
            from bot.evidence.export import chain_head, head_detail

            n, head = await chain_head(ctx.store, fx.id)
            await ctx.store.audit(ctx.who, "fixture.closed", head_detail(fx.id, n, head),
                                  iso(ctx.now))
        await ctx.core.changed("phase", fx.id)
        for audience in ("control", "command"):
            ctx.notify(audience, Reply(f"Phase: {PHASES.label(phase)}", title=fx.title),
                       fixture=fx.id)
    at = ctx.now.astimezone(ctx.core.settings.zone)
    return Result(Reply(f"Phase is now {PHASES.label(phase)}."
                        + (f" {timing.label} recorded at {at:%H:%M}." if timing else "")))


def fixture_summary_fields(fx: Fixture) -> dict[str, Any]:
    """The fixture as plain data for JSON outputs."""
    return {"id": fx.id, "home": fx.home, "away": fx.away, "kickoff": iso(fx.kickoff),
            "ground": fx.ground, "category": fx.category, "phase": fx.phase,
            "status": fx.status, "season": fx.season, "drill": fx.drill}


def register(registry: Registry) -> None:
    """Add fixture and phase commands."""
    registry.add(Spec("fixture", FIXTURE_USAGE, "Add, choose or change a fixture", fixture_cmd,
                      subcommands=FIXTURE_ACTIONS, same_right={"attendance": "deploy"}))
    registry.add(Spec("fixtures", "/fixtures", "List fixtures and their ids", fixtures_cmd,
                      reads_only=True))
    registry.add(Spec("phase", "/phase <" + "|".join(PHASES.keys()) + ">",
                      "Declare the match phase", phase_cmd))
