"""Police records: arrests (Home Office categories) and banning orders. Counts, never names."""

from __future__ import annotations

import re

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso
from bot.domain.incident.incident_model import parse_incident_id
from bot.domain.messages import Reply, Result
from bot.domain.vocab import (
    BAN_STATUSES,
    BAN_TYPES,
    OFFENCES,
    OUTCOMES,
    PLACES,
    SUPPORTER_SIDES,
    norm,
)
from handlers.words import resolve_word

ARREST_USAGE = ("/arrest <offence> [xN] [inside|outside] [home|away|neutral] [ref=<custody ref>] "
                "[inc=<id>] [outcome=<nfa|rui|bailed|charged|caution>] [zone=<place>]")
BAN_USAGE = ("/ban <type> [xN] [home|away|neutral] [years=<n>] "
             "[status=<proposed|pending_court|active>] [ref=<ref>] [inc=<id>]")
NO_FREE_TEXT = ("Free text isn't stored for arrests or bans, so no names end up in the log. "
                "Use ref= for the custody/occurrence reference and inc= to link an incident.")


def _options(words: list[str], known: set[str]) -> tuple[dict[str, str], list[str]]:
    opts: dict[str, str] = {}
    rest: list[str] = []
    for w in words:
        m = re.fullmatch(r"([a-zA-Z_]+)=(.+)", w)
        if m and norm(m.group(1)) in known:
            opts[norm(m.group(1))] = m.group(2)
        elif re.fullmatch(r"x\d{1,3}", w.lower()):
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


async def arrest_cmd(ctx: Ctx) -> Result:
    """/arrest: record arrests in Home Office categories."""
    if not ctx.args:
        raise UsageError("Which offence?", field="offence")
    offence = resolve_word(OFFENCES, ctx.args[0], "offence", field="offence")
    opts, rest = _options(ctx.args[1:], {"ref", "inc", "outcome", "zone", "club"})
    place, side = "inside", "home"
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
    fx = await ctx.fixture()
    zone = ""
    if "zone" in opts:
        ground = ctx.ground(fx)
        zone = ground.resolve(opts["zone"]) or ""
        if not zone:
            raise UsageError(f"Unknown zone '{opts['zone']}'.", field="zone")
    club = opts.get("club") or (fx.home if side == "home" else fx.away if side == "away" else "")
    data = {"count": n, "offence": offence, "place": place, "side": side, "club": club,
            "zone": zone, "outcome": outcome, "incident": f"INC-{link}" if link else "",
            "ref_recorded": "ref" in opts}
    fields = {k: str(v) for k, v in data.items()}
    fields.update(at=iso(ctx.now), by=ctx.who, ref=opts.get("ref", ""))
    applied = await ctx.store.record_police(fx.id, "arr", fields, ctx.event("arrest.recorded",
                                                                             data),
                                            ctx.cmd.dedupe_key, link)
    if applied.duplicate:
        return Result(Reply("Already recorded."))
    word = "arrest" if n == 1 else "arrests"
    line = (f"{n} {word}: {OFFENCES.label(offence)}, {place} the ground, {side} supporter"
            + ("s" if n > 1 else "") + (f", linked to INC-{link}" if link else ""))
    ctx.notify("command", Reply(line, title="Arrest recorded"), fixture=fx.id)
    if link:
        ctx.notify("control", Reply(line), fixture=fx.id, thread=f"INC-{link}")
    await ctx.core.changed("arrest", fx.id)
    ref_note = " Custody reference kept (restricted)." if "ref" in opts else ""
    return Result(Reply(f"Recorded {line}.{ref_note}", title=f"Arrest A-{applied.n}"))


async def ban_cmd(ctx: Ctx) -> Result:
    """/ban: record a banning order (proposed by default)."""
    if not ctx.args:
        raise UsageError("Which type of ban?", field="type")
    btype = resolve_word(BAN_TYPES, ctx.args[0], "ban type", field="type")
    opts, rest = _options(ctx.args[1:], {"ref", "inc", "years", "status", "club"})
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
    if years and not re.fullmatch(r"\d{1,2}", years):
        raise UsageError(f"years= takes a whole number, not '{years}'.", field="years")
    n, link = _count(opts), _link(opts)
    fx = await ctx.fixture()
    club = opts.get("club") or (fx.home if side == "home" else fx.away if side == "away" else "")
    data = {"count": n, "type": btype, "status": status, "years": years, "side": side,
            "club": club, "incident": f"INC-{link}" if link else "",
            "ref_recorded": "ref" in opts}
    fields = {k: str(v) for k, v in data.items()}
    fields.update(by=ctx.who, ref=opts.get("ref", ""))
    applied = await ctx.store.record_police(fx.id, "ban", fields, ctx.event("ban.recorded", data),
                                            ctx.cmd.dedupe_key, link)
    if applied.duplicate:
        return Result(Reply("Already recorded."))
    line = (f"{n} × {BAN_TYPES.label(btype)} ({BAN_STATUSES.label(status).lower()}), "
            f"{side} supporter{'s' if n > 1 else ''}"
            + (f", {years} years" if years else "") + (f", linked to INC-{link}" if link else ""))
    ctx.notify("command", Reply(line, title="Banning order recorded"), fixture=fx.id)
    await ctx.core.changed("ban", fx.id)
    return Result(Reply(f"Recorded {line}.", title=f"Ban B-{applied.n}"))


def register(registry: Registry) -> None:
    """Add the police commands."""
    registry.add(Spec("arrest", ARREST_USAGE, "Record arrests (Home Office categories)",
                      arrest_cmd, aliases=("arrests", "arr")))
    registry.add(Spec("ban", BAN_USAGE, "Record a banning order", ban_cmd, aliases=("bans",)))
