"""A missing child or vulnerable person: the description (never the name) to every zone
supervisor and exit post at once, in the life-safety lane; the police are told at T+15 min
(bot/schedule/missing_timer.py) unless /found closes it first."""

from __future__ import annotations

import re
import secrets
from datetime import timedelta

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.messages import Result
from bot.domain.procedures import Target
from handlers.methane import zone_in
from handlers.stewarding import send

USAGE = "/missing age=<years> desc=<description> seen=<place> at=<HH:MM>"
FOUND_USAGE = "/found <M-id> <where they were found or reunited>"
KEYS = {"age": "age", "desc": "desc", "description": "desc", "seen": "seen",
        "place": "seen", "at": "at", "time": "at"}
NO_NAME = ("No name: it would go to every steward. Describe them (age, clothing, hair, "
           "height) and where they were last seen.")
HHMM = re.compile(r"^([01]?\d|2[0-3])[:.]?([0-5]\d)$")
ADULT = 18


def parse(rest: str) -> dict[str, str]:
    """key=value pairs where values run to the next key=; a name is refused."""
    parts = re.split(r"(?:^|\s)([A-Za-z]+)=", " " + rest)
    if parts[0].strip():
        raise UsageError("Give each detail as key=value.")
    out: dict[str, str] = {}
    for key, value in zip(parts[1::2], parts[2::2], strict=True):
        k = KEYS.get(key.lower())
        if key.lower() in ("name", "called", "firstname", "surname"):
            raise UsageError(NO_NAME, field="name")
        if k is None:
            raise UsageError(f"Unknown detail '{key}='.")
        out[k] = value.strip()[:300]
    return out


async def missing_cmd(ctx: Ctx) -> Result:
    """/missing: send the description to every supervisor and exit post, ahead of all."""
    got = parse(ctx.rest)
    lacking = [k for k in ("age", "desc", "seen", "at") if not got.get(k)]
    if lacking:
        raise UsageError("Missing details: " + ", ".join(f"{k}=" for k in lacking) + ".",
                         field=lacking[0])
    if not got["age"].isdigit() or not 0 <= int(got["age"]) <= 120:
        raise UsageError(f"age= is a number of years, not '{got['age'][:10]}'.", field="age")
    fx = await ctx.fixture()
    ground = ctx.ground(fx)
    zone = zone_in(ground, got["seen"])
    if zone is None:
        raise UsageError(f"'{got['seen'][:40]}' is not a place at {ground.name}.", field="seen")
    m = HHMM.match(got["at"])
    if m is None:
        raise UsageError(f"at= is a time like 19:20, not '{got['at'][:10]}'.", field="at")
    who = "child" if int(got["age"]) < ADULT else "vulnerable person"
    text = (f"Age {got['age']}. {got['desc']}\nLast seen: {ground.label(zone)} at "
            f"{int(m.group(1)):02d}:{m.group(2)}.\nIf you see them, stay with them and tell "
            "control at once.")
    mid = "M-" + secrets.token_hex(3)
    after = policy_for(ctx.core.settings).missing_police_after_s
    await ctx.store.index_escalation(fx.id)  # the sweep reads its deadline (crash-safe first)
    result = await send(ctx, fx, mid, "missing", Target("exits"), text,
                        title=f"🔎 MISSING {who.upper()} {mid} · supervisors and exits",
                        record={"search": "open", "who": who},
                        police_at=int(ctx.now.timestamp()) + after)
    if result.reply.ok:
        due = (ctx.now + timedelta(seconds=after)).astimezone(ctx.core.settings.zone)
        result.reply.text += (f"\nPolice are told at {due:%H:%M} unless /found {mid} <where> "
                              "closes it first.")
    return result


async def found_cmd(ctx: Ctx) -> Result:
    """/found <M-id> <where>: tell every supervisor and exit post the search is over."""
    if len(ctx.args) < 2 or not ctx.args[0].upper().startswith("M-"):
        raise UsageError("Which report, and where were they found?")
    fx = await ctx.fixture()
    mid = "M-" + ctx.args[0][2:].lower()
    where = ctx.rest.split(None, 1)[1][:200]
    search = (await ctx.store.stewarding.search(fx.id, mid)).get("search")
    if search is None:
        raise UsageError(f"No missing-person report {mid}.", field="id")
    told = policy_for(ctx.core.settings).missing_to if search == "police" else ()
    return await send(ctx, fx, f"F-{mid[2:]}-{secrets.token_hex(2)}", "found", Target("exits"),
                      f"{mid}: found / reunited at {where}. Stand down the search.",
                      title=f"✅ FOUND {mid} · supervisors and exits", closes=mid,
                      also=told)  # the police were told it: they are told it is over


def register(registry: Registry) -> None:
    """Add /missing and /found."""
    registry.add(Spec("missing", USAGE, "Missing child or vulnerable person: to every "
                      "supervisor and exit", missing_cmd, aliases=("lost",)))
    registry.add(Spec("found", FOUND_USAGE, "A missing person is found or reunited", found_cmd,
                      aliases=("reunited",)))
