"""/ingress: the picture per stand and entry point for control and command; `count` types a
tally in from the console (drills, a radio count), `close`/`open` record what control did."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ingress_batch import MAX_COUNT, Batch, Reading
from bot.domain.ingress_model import Picture
from bot.domain.ingress_plan import IngressPlan
from bot.domain.messages import Button, Reply, Result
from bot.ingress.ingress_desk import Counted, IngressDesk
from bot.ingress.ingress_text import picture_lines, status_line

USAGE = ("/ingress  |  /ingress count [<minutes>m] <entry or turnstile>=<people> …  |  "
         "/ingress close <entry>  |  /ingress open <entry>")
TALLY = re.compile(r"([A-Za-z0-9_-]{1,24})=(\d{1,6})")
SPAN = re.compile(r"(\d{1,3})m")


def _plan(ctx: Ctx, fx: Fixture) -> IngressPlan:
    plan = ctx.ground(fx).ingress
    if plan is None:
        raise UsageError(f"{ctx.ground(fx).name} has no [ingress] plan in its ground file.")
    return plan


def tally(ctx: Ctx, plan: IngressPlan, words: list[str]) -> Batch:
    """A typed tally as a batch: each count spread evenly over the minutes it covers."""
    minutes = 1
    if words and SPAN.fullmatch(words[0]):
        minutes = max(1, min(int(words[0][:-1]), 120))
        words = words[1:]
    if not words:
        raise UsageError("Say what was counted, e.g. /ingress count 10m gate_a=1200.")
    rows: list[Reading] = []
    for w in words:
        m = TALLY.fullmatch(w)
        if not m:
            raise UsageError(f"'{w[:30]}' is not <entry or turnstile>=<people>.")
        where, n = m.group(1), int(m.group(2))
        entry = plan.turnstile_entry.get(where) or (where if where in plan.entries else None)
        if entry is None:
            raise UsageError(f"'{where}' is not an entry point or turnstile "
                             f"(entry points: {', '.join(plan.entries)}).")
        if n > MAX_COUNT * minutes:
            raise UsageError(f"{n} at {where} in {minutes} min is more than turnstiles admit.")
        for i in range(minutes):  # the last minute's share carries the remainder
            share = n // minutes + (n % minutes if i == minutes - 1 else 0)
            rows.append(Reading(where, entry, share,
                                ctx.now - timedelta(minutes=minutes - 1 - i)))
    return Batch(f"console:{ctx.cmd.dedupe_key}", tuple(rows), live=False)


async def _screen(ctx: Ctx, fx: Fixture, p: Picture, note: str = "") -> Result:
    lines = ([note] if note else []) + picture_lines(p, ctx.ground(fx), ctx.core.settings.zone)
    return Result(Reply("\n".join(lines), title=f"Ingress · {fx.title}",
                        buttons=[[Button("Refresh", "/ingress")]]))


async def ingress_cmd(ctx: Ctx) -> Result:
    """/ingress: the picture; count, close and open as in USAGE."""
    fx = await ctx.fixture()
    plan = _plan(ctx, fx)
    desk = IngressDesk(ctx.core)
    word = ctx.args[0].lower() if ctx.args else ""
    note = ""
    if word == "count":
        got = await desk.take(fx, tally(ctx, plan, ctx.args[1:]))
        if not isinstance(got, Counted):
            return Result(Reply(f"Not counted: {got.reason}.", title="Ingress", ok=False))
        note = f"Counted: {got.people:,} people." + (
            f" {len(got.alerts)} alert(s) sent to control." if got.alerts else "")
    elif word in ("close", "open"):
        if len(ctx.args) < 2 or ctx.args[1] not in plan.entries:
            raise UsageError(f"Name the entry point to {word} ({', '.join(plan.entries)}).")
        entry = ctx.args[1]
        ev = ctx.event("ingress.entry", {"zone": entry, "closed": word == "close",
                                         "note": " ".join(ctx.args[2:])[:200]})
        await ctx.facades.ingress.set_closed(fx.id, entry, word == "close", ev, ctx.cmd.dedupe_key)
        await ctx.core.changed("ingress", fx.id)
        done = f"{ctx.ground(fx).label(entry)} {'closed' if word == 'close' else 'reopened'}"
        for audience in ("control", "command"):
            ctx.notify(audience, Reply(f"{done} by {ctx.who}.", title="Ingress"), fixture=fx.id)
        note = f"Recorded: {done}."
    elif word:
        raise UsageError(f"'{word[:20]}' is not count, close or open.")
    else:
        await desk.check(fx, ctx.now, force=True)
    p = await desk.picture(fx, ctx.now)
    assert p is not None  # the plan exists
    return await _screen(ctx, fx, p, note)


async def status_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """The /status line of ingress (none when the ground has no plan or nothing counted)."""
    plan = ctx.ground(fx).ingress
    if plan is None:
        return []
    p = await IngressDesk(ctx.core).picture(fx, ctx.now)
    return [status_line(p, plan.alert_at[0] if plan.alert_at else 100)] \
        if p is not None and p.inside else []


def register(registry: Registry) -> None:
    """Add /ingress."""
    registry.add(Spec("ingress", USAGE, "Turnstile counts per stand: in, rate, forecast",
                      ingress_cmd, aliases=("turnstiles", "gates")))
