"""A missing child or vulnerable person: the description (never the name) to every zone
supervisor and exit post at once, in the life-safety lane; the police are told at T+15 min
(handlers/stewarding/missing_timer.py) unless /found closes it first. `/missing` alone (or with only
some of the details) asks for them one at a time, then shows the alert before it goes."""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.messages import Button, Reply, Result
from bot.domain.person_names import name_in
from bot.domain.procedures import Target
from handlers.common.words import CANCEL_WORDS, CONFIRM_WORDS, key_values, typed_word
from handlers.incident.methane import zone_in
from handlers.stewarding.broadcasts import send

USAGE = "/missing  |  /missing age=<years> desc=<description> seen=<place> at=<HH:MM>"
FOUND_USAGE = "/found <M-id> <where they were found or reunited>"
KEYS = {"age": "age", "desc": "desc", "description": "desc", "seen": "seen",
        "place": "seen", "at": "at", "time": "at"}
NAME_KEYS = ("name", "called", "firstname", "surname")
NO_NAME = ("No name: it would go to every steward. Describe them (age, clothing, hair, "
           "height) and where they were last seen.")
HHMM = re.compile(r"^([01]?\d|2[0-3])[:.]?([0-5]\d)$")
YEARS = re.compile(r"(\d{1,3})\s*(?:y|yrs?|years?(?:\s+old)?)?", re.IGNORECASE)
ADULT = 18
MAX_AGE = 120
STEPS = ("age", "desc", "seen", "at")
QUESTIONS = {"age": "How old? (years)",
             "desc": "Describe them: clothing, hair, height. Not their name.",
             "seen": "Where were they last seen? Tap a place, or type a stand, block or gate.",
             "at": "When were they last seen? Tap Just now, or type the time (19:20)."}
PLACE_KINDS = ("stand", "gate")  # the place buttons for someone with no zone of their own
PLACES = 10
BUTTON_WIDTH = 40  # a place's full name on a button up to this long, else its short name
NOW_WORDS = {"now", "just now", "right now"}
TITLE = "Missing person"
EXPIRED = "This missing-person form has expired. Send /missing to start again."


def parse(rest: str) -> dict[str, str]:
    """key=value pairs where values run to the next key=; a name is refused."""
    lead, got = key_values(rest, KEYS | dict.fromkeys(NAME_KEYS, "name"), "detail")
    if lead.strip():
        raise UsageError("Give each detail as key=value.")
    if "name" in got:
        raise UsageError(NO_NAME, field="name")
    if (phrase := name_in(got.get("desc", ""))) is not None:
        raise UsageError(f"No name, not even in the description ('{phrase[:40]}'): it would "
                         "go to every steward. Describe them instead; nothing was sent.",
                         field="desc")
    return {k: v[:300] for k, v in got.items()}


def age_of(text: str) -> int | None:
    """Whole years, 0 to 120, or None."""
    return int(text) if text.isdigit() and 0 <= int(text) <= MAX_AGE else None


def time_of(text: str) -> str | None:
    """'19:20' for 19:20, 1920 or 19.20; None when it is not a time of day."""
    m = HHMM.match(text.strip())
    return f"{int(m.group(1)):02d}:{m.group(2)}" if m else None


def alert(ground: Ground, details: dict[str, str], mid: str) -> tuple[str, str, str]:
    """(who, title, text) of the alert for checked details (seen: a zone id, at: HH:MM)."""
    who = "child" if int(details["age"]) < ADULT else "vulnerable person"
    place = ground.label(details["seen"])
    if details.get("seen_as"):  # what was typed beyond the zone ("near kiosk 4")
        place += f" ({details['seen_as']})"
    text = (f"Age {details['age']}. {details['desc']}\nLast seen: "
            f"{place} at {details['at']}.\nIf you see them, stay with "
            "them and tell control at once.")
    return who, f"🔎 MISSING {who.upper()} {mid} · supervisors and exits", text


async def report(ctx: Ctx, fx: Fixture, got: dict[str, str], mid: str, dedupe: str) -> Result:
    """Check the four details and send the alert to every supervisor and exit post in one
    write (`dedupe` its key): the one-line command and the guided form's final tap."""
    if age_of(got["age"]) is None:
        raise UsageError(f"age= is a number of years, not '{got['age'][:10]}'.", field="age")
    ground = ctx.ground(fx)
    zone = zone_in(ground, got["seen"])
    if zone is None:
        raise UsageError(f"'{got['seen'][:40]}' is not a place at {ground.name}.", field="seen")
    at = time_of(got["at"])
    if at is None:
        raise UsageError(f"at= is a time like 19:20, not '{got['at'][:10]}'.", field="at")
    who, title, text = alert(ground, got | {"seen": zone, "at": at,
                                            "seen_as": got.get("seen_as") or typed_place(
                                                ground, zone, got["seen"])}, mid)
    after = policy_for(ctx.core.settings).missing_police_after_s
    # the sweep reads its deadline (listed first: crash-safe)
    await ctx.facades.deadlines.index_escalation(fx.id)
    result = await send(ctx, fx, mid, "missing", Target("exits"), text, title=title,
                        record={"search": "open", "who": who},
                        police_at=int(ctx.now.timestamp()) + after, dedupe=dedupe)
    if result.reply.ok:
        due = (ctx.now + timedelta(seconds=after)).astimezone(ctx.core.settings.zone)
        result.reply.text += (f"\nPolice are told at {due:%H:%M} unless /found {mid} <where> "
                              "closes it first.")
    return result


def typed_place(ground: Ground, zone: str, typed: str) -> str:
    """The typed place when it says more than the zone it names ("east stand near kiosk 4"),
    else ""; kept beside the zone so a searcher gets the detail."""
    words = typed.strip()
    if not words or words == zone or ground.resolve(words) == zone:
        return ""
    return words[:100]


def _take(ctx: Ctx, ground: Ground, step: str, value: str) -> str:
    """One answer of the form, checked; a one-line UsageError to ask again with."""
    value = value.strip()
    if step == "age":
        m = YEARS.fullmatch(value)
        if m is None or age_of(m.group(1)) is None:
            raise UsageError(f"'{value[:12]}' is not an age: type the years as a number, "
                             f"0 to {MAX_AGE}.", field="age")
        return m.group(1)
    if step == "desc":
        got = parse("desc= " + value)  # the one-line path's own check: a name is refused
        if set(got) != {"desc"} or not got["desc"]:
            raise UsageError("Just the description here: clothing, hair, height.", field="desc")
        return got["desc"]
    if step == "seen":
        zone = value if value in ground.zones else zone_in(ground, value)
        if zone is None:
            raise UsageError(f"No place at {ground.name} called '{value[:40]}'.", field="seen")
        return zone
    at = ctx.now.astimezone(ctx.core.settings.zone).strftime("%H:%M") \
        if typed_word(value) in NOW_WORDS else time_of(value)
    if at is None:
        raise UsageError(f"'{value[:12]}' is not a time: type it like 19:20, or tap Just now.",
                         field="at")
    return at


def _places(ctx: Ctx, ground: Ground) -> list[str]:
    home = ctx.member.zone if ctx.member else ""
    if home in ground.zones:
        return [home, *[z for z in ground.zones[home].adjacent if z in ground.zones]][:PLACES]
    return [z.id for z in ground.zones.values() if z.kind in PLACE_KINDS][:PLACES]


def _ask(ctx: Ctx, fx: Fixture, state: dict[str, Any], note: str = "",
         zones: list[str] | None = None, ok: bool = True) -> Result:
    fid, step = state["fid"], state["step"]
    if step == "confirm":
        return _confirm(ctx, fx, state, note, ok)
    cancel = Button("Cancel", f"/missing step {fid} cancel")
    rows: list[list[Button]] = []
    if step == "seen":
        ground = ctx.ground(fx)
        tap = [Button(ground.short_label(z, BUTTON_WIDTH), f"/missing step {fid} seen {z}")
               for z in zones or _places(ctx, ground)]
        rows = [tap[i:i + 2] for i in range(0, len(tap), 2)]
    if step == "at":
        rows = [[Button("Just now", f"/missing step {fid} at now", "primary")]]
    text = (note + "\n" if note else "") + QUESTIONS[step]
    return Result(Reply(text, title=f"{TITLE} · {STEPS.index(step) + 1} of {len(STEPS)}",
                        buttons=[*rows, [cancel]], ok=ok))


def _confirm(ctx: Ctx, fx: Fixture, state: dict[str, Any], note: str = "",
             ok: bool = True) -> Result:
    fid = state["fid"]
    _, title, text = alert(ctx.ground(fx), state["answers"], "M-" + fid)
    lines = [note] if note else []
    lines += [title, text, "", "This goes to every zone supervisor and exit post, and to "
              "control, ahead of every other message."]
    return Result(Reply("\n".join(lines), title="Send this missing-person alert?", ok=ok,
                        buttons=[[Button("Send to supervisors and exits",
                                         f"/missing step {fid} send", "danger")],
                                 [Button("Cancel", f"/missing step {fid} cancel")]]))


def _next(answers: dict[str, str]) -> str:
    return next((k for k in STEPS if k not in answers), "confirm")


async def _save(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> None:
    await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)


async def _start(ctx: Ctx, fx: Fixture, got: dict[str, str]) -> Result:
    """The guided form, with the details already given kept (a wrong one is asked again)."""
    ground = ctx.ground(fx)
    answers: dict[str, str] = {}
    notes: dict[str, str] = {}
    for step in STEPS:
        if got.get(step):
            try:
                answers[step] = _take(ctx, ground, step, got[step])
                if step == "seen":
                    answers["seen_as"] = typed_place(ground, answers["seen"], got["seen"])
            except UsageError as exc:
                notes[step] = str(exc)
    state = {"kind": "missing", "fid": secrets.token_hex(3), "step": _next(answers),
             "answers": answers}
    await _save(ctx, fx, state)
    return _ask(ctx, fx, state, notes.get(state["step"], ""))


async def _answer(ctx: Ctx, fx: Fixture, state: dict[str, Any], value: str) -> Result:
    step = state["step"]
    ground = ctx.ground(fx)
    if not value.strip():
        return _ask(ctx, fx, state, "Required.", ok=False)
    try:
        state["answers"][step] = _take(ctx, ground, step, value)
        if step == "seen":
            state["answers"]["seen_as"] = typed_place(ground, state["answers"]["seen"], value)
    except UsageError as exc:  # the form stays at this step
        hits = ground.search(value) if step == "seen" else []
        return _ask(ctx, fx, state, str(exc), hits or None, ok=False)
    state["step"] = _next(state["answers"])
    await _save(ctx, fx, state)
    return _ask(ctx, fx, state)


async def _cancel(ctx: Ctx, fx: Fixture) -> Result:
    await ctx.facades.forms.drop_form(fx.id, ctx.who)
    return Result(Reply("Missing-person alert cancelled; nothing was sent."))


async def _step(ctx: Ctx, fx: Fixture) -> Result:
    fid, what = ctx.args[1], ctx.args[2]
    state = await ctx.facades.forms.form(fx.id, ctx.who)
    if not state or state.get("kind") != "missing" or state.get("fid") != fid:
        mid = "M-" + fid
        if what == "send" and await ctx.facades.stewarding.search(fx.id, mid):
            # a second tap after the first one sent it (the form is gone by then)
            return Result(Reply(f"Already sent as {mid}; see /status for who has it."))
        return Result(Reply(EXPIRED, ok=False))
    if what == "cancel":
        return await _cancel(ctx, fx)
    if what == "send" and state["step"] == "confirm":
        return await _send(ctx, fx, state)
    if what == state["step"]:
        return await _answer(ctx, fx, state, " ".join(ctx.args[3:]))
    return _ask(ctx, fx, state)


async def continue_missing(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result | None:
    """Typed text while a missing-person form waits for an answer."""
    text = ctx.rest.strip()
    if not text:
        return None
    word = typed_word(text)
    if word in CANCEL_WORDS:
        return await _cancel(ctx, fx)
    if state.get("step") == "confirm":
        if word in CONFIRM_WORDS | {"send"}:
            return await _send(ctx, fx, state)
        return _ask(ctx, fx, state, "Not sent yet: reply yes (or tap Send to supervisors and "
                    "exits) to send it, or cancel.", ok=False)
    return await _answer(ctx, fx, state, text)


async def _send(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result:
    """The confirmed alert: the form's id is the alert's, so a double or redelivered tap
    (or a typed yes after a tap) is the same one write."""
    fid = state["fid"]
    result = await report(ctx, fx, state["answers"], "M-" + fid, f"missing-form:{ctx.who}:{fid}")
    if result.reply.ok:
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
    return result


async def missing_cmd(ctx: Ctx) -> Result:
    """/missing: send the description to every supervisor and exit post, ahead of all;
    guided when details are lacking."""
    fx = await ctx.fixture()
    if ctx.args[:1] == ["step"] and len(ctx.args) >= 3:
        return await _step(ctx, fx)
    got = parse(ctx.rest)
    if not all(got.get(k) for k in STEPS):
        return await _start(ctx, fx, got)
    return await report(ctx, fx, got, "M-" + secrets.token_hex(3), ctx.cmd.dedupe_key)


async def found_cmd(ctx: Ctx) -> Result:
    """/found <M-id> <where>: tell every supervisor and exit post the search is over."""
    if len(ctx.args) < 2 or not ctx.args[0].upper().startswith("M-"):
        raise UsageError("Which report, and where were they found?")
    fx = await ctx.fixture()
    mid = "M-" + ctx.args[0][2:].lower()
    where = ctx.rest.split(None, 1)[1][:200]
    search = (await ctx.facades.stewarding.search(fx.id, mid)).get("search")
    if search is None:
        raise UsageError(f"No missing-person report {mid}.", field="id")
    told = policy_for(ctx.core.settings).missing_to if search == "police" else ()
    return await send(ctx, fx, f"F-{mid[2:]}-{secrets.token_hex(2)}", "found", Target("exits"),
                      f"{mid} found: {where}. Stand down the search.",
                      title=f"✅ FOUND {mid} · supervisors and exits", closes=mid,
                      also=told)  # the police were told it: they are told it is over


def register(registry: Registry) -> None:
    """Add /missing and /found."""
    registry.add(Spec("missing", USAGE, "Missing child or vulnerable person: to every "
                      "supervisor and exit", missing_cmd, aliases=("lost",)))
    registry.add(Spec("found", FOUND_USAGE, "A missing person is found or reunited", found_cmd,
                      aliases=("reunited",)))
    registry.add_form("missing", continue_missing)
