"""Key timings: one tap each (turnstiles open, kick-off, half-time, second half, full-time,
ground clear, Zone Ex clear). A timing that starts a phase is the phase's declaration."""

from __future__ import annotations

import dataclasses

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.fixture.key_timings import KEY_TIMINGS, latest, resolve_timing
from bot.domain.messages import Button, Reply, Result
from bot.domain.vocab import PHASES
from handlers.fixtures.commands import phase_cmd

USAGE = "/timing  |  /timing <" + "|".join(t.key for t in KEY_TIMINGS) + ">"


async def _board(ctx: Ctx, note: str = "") -> Result:
    fx = await ctx.fixture()
    done = {t.key: t for t in latest(await ctx.facades.timings.read(fx.id))}
    tz = ctx.core.settings.zone
    lines, rows = [], []
    for kind in KEY_TIMINGS:
        t = done.get(kind.key)
        lines.append(f"{'✔' if t else '·'} {kind.label}: "
                     + (f"{t.at.astimezone(tz):%H:%M:%S}" if t else "not yet"))
        command = f"/timing {kind.key}"  # a phase's too: /timing never takes a phase back
        rows.append([Button(("Again: " if t else "") + kind.label, command,
                            "" if t else "primary")])
    if ctx.core.roles.allowed(ctx.role, "pack"):
        rows.append([Button("Build the debrief pack", "/pack")])
    text = (note + "\n" if note else "") + "\n".join(lines) + "\nTap a moment as it happens."
    return Result(Reply(text, title=f"Key timings · {fx.title}", buttons=rows))


async def timing_cmd(ctx: Ctx) -> Result:
    """/timing: the key timings with one button each; /timing <key>: record one now."""
    if not ctx.rest:
        return await _board(ctx)
    kind = resolve_timing(ctx.rest)
    if kind is None:
        raise UsageError(f"'{ctx.rest[:30]}' is not a key timing.")
    if kind.phase:  # the phase's declaration records it, in the same write
        if not ctx.core.roles.allowed(ctx.role, "phase"):
            raise UsageError(f"{kind.label} declares the phase: ask control to tap it.")
        fx = await ctx.fixture()
        order = PHASES.keys()
        if fx.phase in order and order.index(kind.phase) < order.index(fx.phase):
            return Result(Reply(
                f"The phase is {PHASES.label(fx.phase)}: {kind.label} would take it back to "
                f"{PHASES.label(kind.phase)}, so nothing was recorded.", ok=False))
        return await phase_cmd(dataclasses.replace(ctx, args=[kind.phase], rest=kind.phase))
    fx = await ctx.fixture()
    ev = ctx.event("timing.recorded", {"key": kind.key, "label": kind.label})
    applied = await ctx.facades.timings.record(fx.id, kind.key, ev, ctx.cmd.dedupe_key)
    line = f"{kind.label} at {ctx.now.astimezone(ctx.core.settings.zone):%H:%M}"
    if not applied.duplicate:
        await ctx.core.changed("timing", fx.id)
        for audience in ("control", "command"):
            ctx.notify(audience, Reply(line, title=fx.title), fixture=fx.id)
    return Result(Reply(f"Recorded: {line}.", title="Key timing"))


def register(registry: Registry) -> None:
    """Add /timing."""
    registry.add(Spec("timing", USAGE, "Key timings, one tap each", timing_cmd,
                      aliases=("timings", "kt")))
