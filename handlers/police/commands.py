"""Police records: arrests (Home Office categories) and banning orders. Counts, never names."""

from __future__ import annotations

import re
import secrets
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError, split_args
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_model import parse_incident_id
from bot.domain.messages import Button, Reply, Result
from bot.domain.plurals import counted, noun
from bot.domain.vocab import (
    BAN_STATUSES,
    BAN_TYPES,
    OFFENCES,
    OUTCOMES,
    PLACES,
    SUPPORTER_SIDES,
    norm,
)
from handlers.common.words import CANCEL_WORDS, choices, leading_key, resolve_word, typed_word

ARREST_USAGE = ("/arrest <offence> [xN] inside|outside home|away|neutral [ref=<custody ref>] "
                "[inc=<id>] [outcome=<nfa|rui|bailed|charged|caution>] [zone=<place>]")
BAN_USAGE = ("/ban <type> [xN] [home|away|neutral] [years=<n>] "
             "[status=<proposed|pending_court|active>] [ref=<ref>] [inc=<id>]")
HELP_WORDS = {"help", "?", "list"}
# ref=…, inc=…: one word each (the lookbehind keeps a search linear: a key starts a word)
OPTION = re.compile(r"(?<![a-zA-Z_])([a-zA-Z_]+)=(.+)")
COUNT = re.compile(r"x\d{1,3}")
YEARS = re.compile(r"\d{1,2}")
EXPIRED = "This arrest form has expired (or was recorded). Send /arrest to start again."
NO_FREE_TEXT = ("Free text isn't stored for arrests or bans, so no names end up in the log. "
                "Use ref= for the custody/occurrence reference and inc= to link an incident.")


def _options(words: list[str], known: set[str]) -> tuple[dict[str, str], list[str]]:
    opts: dict[str, str] = {}
    rest: list[str] = []
    for w in words:
        m = OPTION.fullmatch(w)
        if m and norm(m.group(1)) in known:
            opts[norm(m.group(1))] = m.group(2)
        elif COUNT.fullmatch(w.lower()):
            opts["count"] = w[1:]
        else:
            rest.append(w)
    return opts, rest


def _count(opts: dict[str, str]) -> int:
    n = int(opts.get("count", "1"))
    if not 1 <= n <= 200:
        raise UsageError("xN must be between 1 and 200.", field="count")
    return n


def _link(opts: dict[str, str]) -> int | None:
    if "inc" not in opts:
        return None
    n = parse_incident_id(opts["inc"])
    if n is None:
        raise UsageError(f"inc= takes an incident id like INC-7, not '{opts['inc']}'.",
                         field="inc")
    return n


def _offence_menu() -> Result:
    """Which offence? One button per Home Office category, and the words to type."""
    buttons = [Button(OFFENCES.label(k), f"/arrest {k}") for k in OFFENCES.keys()]
    text = (f"Which offence? Tap one, or type {ARREST_USAGE}\n{choices(OFFENCES)}.\n"
            f"{choices(PLACES)}. {choices(SUPPORTER_SIDES)}.")
    return Result(Reply(text, title="Record an arrest",
                        buttons=[buttons[i:i + 2] for i in range(0, len(buttons), 2)]))


def _ask_missing(fid: str, offence: str, missing: str) -> Result:
    """The one thing an arrest still needs (inside or outside; whose supporters), as buttons."""
    vocab, question = ((PLACES, "inside or outside the ground?") if missing == "place"
                       else (SUPPORTER_SIDES, "home, away or neutral supporter?"))
    row = [Button(vocab.label(k), f"/arrest step {fid} {k}") for k in vocab.keys()]
    text = f"{OFFENCES.label(offence)}: {question} Tap one, or type it."
    return Result(Reply(text, title="Record an arrest",
                        buttons=[row, [Button("Cancel", f"/arrest step {fid} cancel")]]))


async def arrest_cmd(ctx: Ctx) -> Result:
    """/arrest: record arrests in Home Office categories; what is missing is asked for."""
    if ctx.args[:1] == ["step"] and len(ctx.args) == 3:
        return await _arrest_step(ctx)
    if not ctx.args or typed_word(ctx.rest) in HELP_WORDS:
        return _offence_menu()
    return await _arrest(ctx, await ctx.fixture(), ctx.rest, None)


async def _arrest(ctx: Ctx, fx: Fixture, line: str, form: dict[str, Any] | None) -> Result:
    """Record the arrest `line` describes (the text after /arrest), or ask (through the
    arrest `form`, started if None) for the place or side it does not give."""
    words = split_args(line)
    offence, used = leading_key(OFFENCES, words)
    if offence is None:  # a refusal naming the closest and listing every category
        offence = resolve_word(OFFENCES, words[0], "offence", field="offence", listed=True)
    opts, rest = _options(words[used:], {"ref", "inc", "outcome", "zone", "club"})
    place = side = ""
    for w in rest:
        if PLACES.resolve(w):
            place = PLACES.resolve(w) or place
        elif SUPPORTER_SIDES.resolve(w):
            side = SUPPORTER_SIDES.resolve(w) or side
        elif OUTCOMES.resolve(w) and "outcome" not in opts:  # "charged" as well as outcome=
            opts["outcome"] = w
        else:
            raise UsageError(NO_FREE_TEXT, field="ref")
    outcome = resolve_word(OUTCOMES, opts["outcome"], "outcome", field="outcome") \
        if "outcome" in opts else ""
    n, link = _count(opts), _link(opts)
    zone = ""
    if "zone" in opts:
        zone = ctx.ground(fx).resolve(opts["zone"]) or ""
        if not zone:
            raise UsageError(f"Unknown zone '{opts['zone'][:40]}'.", field="zone")
    if not place or not side:  # never a default: a wrong side skews the Home Office return
        state = (form or {"kind": "arrest", "fid": secrets.token_hex(3)}) | {
            "line": line, "offence": offence, "missing": "place" if not place else "side"}
        await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
        return _ask_missing(state["fid"], offence, state["missing"])
    club = opts.get("club") or (fx.home if side == "home" else fx.away if side == "away" else "")
    data = {"count": n, "offence": offence, "place": place, "side": side, "club": club,
            "zone": zone, "outcome": outcome, "incident": f"INC-{link}" if link else "",
            "ref_recorded": "ref" in opts}
    fields = {k: str(v) for k, v in data.items()}
    fields.update(at=iso(ctx.now), by=ctx.who, ref=opts.get("ref", ""))
    dedupe = f"arrest-form:{ctx.who}:{form['fid']}" if form else ctx.cmd.dedupe_key
    applied = await ctx.facades.police.record_police(fx.id, "arr", fields,
                                                     ctx.event("arrest.recorded",
                                                     data),
                                                     dedupe, link)
    if form:
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
    if applied.duplicate:
        return Result(Reply("Already recorded."))
    line = (f"{counted(n, 'arrest')}: {OFFENCES.label(offence)}, {place} the ground, "
            f"{noun(n, side + ' supporter')}"
            + (f", linked to INC-{link}" if link else ""))
    ctx.notify("command", Reply(line, title="Arrest recorded"), fixture=fx.id)
    if link:
        ctx.notify("control", Reply(line), fixture=fx.id, thread=f"INC-{link}")
    await ctx.core.changed("arrest", fx.id)
    ref_note = " Custody reference kept (restricted)." if "ref" in opts else ""
    return Result(Reply(f"Recorded {line}.{ref_note}", title=f"Arrest A-{applied.n}"))


async def _arrest_step(ctx: Ctx) -> Result:
    """A button of the arrest form: /arrest step <fid> <inside|outside|home|…|cancel>."""
    fx = await ctx.fixture()
    state = await ctx.facades.forms.form(fx.id, ctx.who)
    if not state or state.get("kind") != "arrest" or state.get("fid") != ctx.args[1]:
        return Result(Reply(EXPIRED, ok=False))
    return await _arrest_answer(ctx, fx, state, ctx.args[2])


async def continue_arrest(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result | None:
    """Typed text while the arrest form waits for inside/outside or home/away."""
    return await _arrest_answer(ctx, fx, state, ctx.rest) if ctx.rest.strip() else None


async def _arrest_answer(ctx: Ctx, fx: Fixture, state: dict[str, Any], text: str) -> Result:
    if typed_word(text) in CANCEL_WORDS:
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        return Result(Reply("Arrest not recorded; nothing was written."))
    try:
        return await _arrest(ctx, fx, f"{state['line']} {text}", state)
    except UsageError as exc:  # asked again, with why: the form stays open
        asked = _ask_missing(state["fid"], state["offence"], state["missing"])
        asked.reply.text = f"{exc}\n{asked.reply.text}"
        asked.reply.ok = False
        return asked


async def ban_cmd(ctx: Ctx) -> Result:
    """/ban: record a banning order (proposed by default)."""
    if not ctx.args or typed_word(ctx.rest) in HELP_WORDS:
        raise UsageError(f"Which type of ban? {choices(BAN_TYPES)}.", field="type")
    btype, used = leading_key(BAN_TYPES, ctx.args)
    if btype is None:  # a refusal naming the closest and listing every type
        btype = resolve_word(BAN_TYPES, ctx.args[0], "ban type", field="type", listed=True)
    opts, rest = _options(ctx.args[used:], {"ref", "inc", "years", "status", "club"})
    side = "home"  # whose supporters: club bans are mostly the home club's own fans
    for w in rest:
        if BAN_STATUSES.resolve(w) and "status" not in opts:  # "proposed" as well as status=
            opts["status"] = w
        elif SUPPORTER_SIDES.resolve(w) is None:
            raise UsageError(NO_FREE_TEXT, field="ref")
        else:
            side = SUPPORTER_SIDES.resolve(w) or side
    status = resolve_word(BAN_STATUSES, opts["status"], "ban status", field="status") \
        if "status" in opts else "proposed"
    years = opts.get("years", "")
    if years and not YEARS.fullmatch(years):
        raise UsageError(f"years= takes a whole number, not '{years}'.", field="years")
    n, link = _count(opts), _link(opts)
    fx = await ctx.fixture()
    club = opts.get("club") or (fx.home if side == "home" else fx.away if side == "away" else "")
    data = {"count": n, "type": btype, "status": status, "years": years, "side": side,
            "club": club, "incident": f"INC-{link}" if link else "",
            "ref_recorded": "ref" in opts}
    fields = {k: str(v) for k, v in data.items()}
    fields.update(by=ctx.who, ref=opts.get("ref", ""))
    applied = await ctx.facades.police.record_police(fx.id, "ban", fields,
                                                     ctx.event("ban.recorded", data),
                                                     ctx.cmd.dedupe_key, link)
    if applied.duplicate:
        return Result(Reply("Already recorded."))
    line = (f"{n} × {BAN_TYPES.label(btype)} ({BAN_STATUSES.label(status).lower()}), "
            f"{noun(n, side + ' supporter')}"
            + (f", {years} years" if years else "") + (f", linked to INC-{link}" if link else ""))
    ctx.notify("command", Reply(line, title="Banning order recorded"), fixture=fx.id)
    await ctx.core.changed("ban", fx.id)
    return Result(Reply(f"Recorded {line}.", title=f"Ban B-{applied.n}"))


def register(registry: Registry) -> None:
    """Add the police commands."""
    registry.add(Spec("arrest", ARREST_USAGE, "Record arrests (Home Office categories)",
                      arrest_cmd, aliases=("arrests", "arr")))
    registry.add(Spec("ban", BAN_USAGE, "Record a banning order", ban_cmd, aliases=("bans",)))
    registry.add_form("arrest", continue_arrest)
