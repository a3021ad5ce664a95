"""Major incidents: the guided METHANE report (ETHANE when not declared), sent to every
command channel at once and kept as a severity-5 incident."""

from __future__ import annotations

import secrets
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.incident.incident_model import incident_id
from bot.domain.messages import Button, Reply, Result
from bot.domain.outcomes import Logged
from bot.domain.vocab import INCIDENT_TYPES
from handlers.common.words import (
    CANCEL_WORDS,
    CONFIRM_WORDS,
    KEY_WITH_DIGITS,
    key_values,
    typed_word,
)
from handlers.decisions.commands import record_from_command
from handlers.incident.reporting import log_incident

# key, letter, question
FIELDS = (("m", "M", "Major incident declared?"),
          ("e", "E", "Exact location"),
          ("t", "T", "Type of incident"),
          ("h", "H", "Hazards, present and potential"),
          ("a", "A", "Access: routes in and out, rendezvous point"),
          ("n", "N", "Number and severity of casualties"),
          ("s", "E", "Emergency services present and required"))
ALIASES = {"m": "m", "major": "m", "declared": "m", "e": "e", "exact": "e", "location": "e",
           "t": "t", "type": "t", "h": "h", "hazards": "h", "a": "a", "access": "a",
           "n": "n", "number": "n", "casualties": "n", "s": "s", "e2": "s",
           "emergency": "s", "services": "s"}
AUDIENCES = ("command", "control", "police")
USAGE = ("/methane  |  /methane m=yes|no e=<exact location> t=<type> h=<hazards> a=<access> "
         "n=<casualties> s=<emergency services>")


def parse_line(rest: str) -> dict[str, str]:
    """key=value pairs where values run to the next key=."""
    return key_values(rest, ALIASES, "METHANE", keys=KEY_WITH_DIGITS)[1]


def _clip(text: str, width: int = 60) -> str:
    """A user's text quoted back in an error, shortened at a word boundary."""
    if len(text) <= width:
        return text
    return text[:width].rsplit(" ", 1)[0] + "…"


def _yes_no(text: str) -> str | None:
    t = text.strip().lower()
    return "yes" if t in {"yes", "y", "declared", "true"} else \
        "no" if t in {"no", "n", "not declared", "false"} else None


def zone_in(ground: Ground, text: str) -> str | None:
    """The ground zone a free-text exact location names (whole text, then word runs).

    Runs are no longer than the ground's longest name or alias, so the work is linear in
    the text's length (a 3,000-character field once stalled the bot for seconds)."""
    zone = ground.resolve(text)
    if zone:
        return zone
    words = text.split()
    for size in range(min(len(words), ground.max_words), 0, -1):
        for i in range(len(words) - size + 1):
            zone = ground.resolve(" ".join(words[i:i + size]))
            if zone:
                return zone
    return None


def _type_of(text: str) -> str:
    for word in [text, *text.split()]:
        key = INCIDENT_TYPES.resolve(word)
        if key:
            return key
    return "other"


def problems(answers: dict[str, str], ground: Ground) -> list[str]:
    """What is missing or wrong; every field is required."""
    out = [f"{letter} ({q.split(':')[0].split(',')[0].lower().rstrip('?')})"
           for key, letter, q in FIELDS if not answers.get(key, "").strip()]
    if answers.get("m") and _yes_no(answers["m"]) is None:
        out.append("M must be yes or no")
    if answers.get("e") and zone_in(ground, answers["e"]) is None:
        out.append(f"E '{_clip(answers['e'])}' is not a place at {ground.name}")
    return out


def report_text(answers: dict[str, str]) -> tuple[str, str]:
    """(title word, body) of the METHANE or ETHANE message."""
    declared = _yes_no(answers["m"]) == "yes"
    lines = [f"{letter} – {q}: {answers[key]}" for key, letter, q in FIELDS
             if key != "m" or declared]
    if declared:
        lines[0] = "M – MAJOR INCIDENT DECLARED"
    return ("METHANE" if declared else "ETHANE"), "\n".join(lines)


async def send(ctx: Ctx, fx: Fixture, answers: dict[str, str], drop_form: bool) -> Result:
    """Log the severity-5 incident and send the report to every command channel at once."""
    ground = ctx.ground(fx)
    wrong = problems(answers, ground)
    if wrong:
        raise UsageError("METHANE needs every field: " + "; ".join(wrong) + ".")
    word, body = report_text(answers)
    fields: dict[str, Any] = {
        "type": _type_of(answers["t"]), "location": zone_in(ground, answers["e"]),
        "severity": 5, "affiliation": "unknown", "people": "", "new": True,
        "description": f"{word}: " + " | ".join(body.splitlines()), "methane": answers,
    }
    result = await log_incident(ctx, fx, fields, drop_form=drop_form)
    if not isinstance(result.outcome, Logged):
        return result
    iid = incident_id(result.outcome.n)
    msg = Reply(body, title=f"🔴 {word} {iid} · {fx.title}",
                buttons=[[Button("Acknowledge", f"/ack {iid}", "primary"),
                          Button("Show", f"/incident {iid}")]])
    for audience in AUDIENCES:
        ctx.notify(audience, msg, fixture=fx.id)
    result.reply.text = f"{word} sent to control, command and police as {iid}.\n{body}"
    result.reply.title = f"{word} {iid}"
    if word == "METHANE" and ctx.core.roles.allowed(ctx.role, "decision"):
        # declaring a major incident is a command decision: logged, its rationale asked for
        prompt = await record_from_command(ctx, fx, f"Major incident declared ({iid})",
                                           f"methane {iid}", incidents=iid,
                                           kind="major_incident")
        result.reply.text += "\n" + prompt.text
        result.reply.buttons = result.reply.buttons + prompt.buttons
    return result


CANCELLED = "METHANE report cancelled; nothing was sent."


def _ask(fid: str, step: str, note: str = "") -> Result:
    key, letter, question = next(f for f in FIELDS if f[0] == step)
    buttons = [[Button("Cancel", f"/methane step {fid} cancel")]]
    if key == "m":
        buttons.insert(0, [Button("Yes, declared", f"/methane step {fid} m yes", "danger"),
                           Button("No (ETHANE)", f"/methane step {fid} m no")])
    text = (note + "\n" if note else "") + f"{letter} – {question}" + \
        ("" if key == "m" else ": type it.")
    return Result(Reply(text, title="METHANE report", buttons=buttons))


async def _answer(ctx: Ctx, fx: Fixture, state: dict[str, Any], value: str) -> Result:
    fid, step = state["fid"], state["step"]
    value = value.strip()
    note = ""
    if not value:
        note = "Required."
    elif step == "m" and _yes_no(value) is None:
        note = "Yes or no?"
    elif step == "e" and zone_in(ctx.ground(fx), value) is None:
        note = (f"'{_clip(value)}' is not a place at {ctx.ground(fx).name}: "
                "name a stand, block or gate.")
    if note:
        return _ask(fid, step, note)
    state["answers"][step] = value
    keys = [f[0] for f in FIELDS]
    if step != keys[-1]:
        state["step"] = keys[keys.index(step) + 1]
        await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
        return _ask(fid, state["step"])
    state["step"] = "confirm"
    await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
    return _confirm(state)


def _confirm(state: dict[str, Any], note: str = "") -> Result:
    word, body = report_text(state["answers"])
    fid = state["fid"]
    return Result(Reply(body + (f"\n{note}" if note else ""), title=f"Send this {word}?",
                        buttons=[[Button("Send to all command channels",
                                         f"/methane step {fid} send", "danger"),
                                  Button("Cancel", f"/methane step {fid} cancel")]]))


async def continue_methane(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result | None:
    """Typed text while a METHANE form waits for a field (or, at its last step, for yes
    or cancel)."""
    word = typed_word(ctx.rest)
    if not word:
        return None
    if word in CANCEL_WORDS:
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        return Result(Reply(CANCELLED))
    if state.get("step") == "confirm":
        if word in CONFIRM_WORDS or word == "send":
            return await send(ctx, fx, state["answers"], drop_form=True)
        return _confirm(state, "Reply yes to send it, or cancel.")
    return await _answer(ctx, fx, state, ctx.rest)


async def methane_cmd(ctx: Ctx) -> Result:
    """/methane: guided form; /methane m=.. e=.. ...: one line; button steps."""
    fx = await ctx.fixture()
    if ctx.args[:1] == ["step"] and len(ctx.args) >= 3:
        state = await ctx.facades.forms.form(fx.id, ctx.who)
        if not state or state.get("kind") != "methane" or state.get("fid") != ctx.args[1]:
            return Result(Reply("This METHANE form has expired. Send /methane to start again.",
                                ok=False))
        what = ctx.args[2]
        if what == "cancel":
            await ctx.facades.forms.drop_form(fx.id, ctx.who)
            return Result(Reply(CANCELLED))
        if what == "send" and state.get("step") == "confirm":
            return await send(ctx, fx, state["answers"], drop_form=True)
        if what == state.get("step"):
            return await _answer(ctx, fx, state, " ".join(ctx.args[3:]))
        return _ask(state["fid"], state["step"]) if state["step"] != "confirm" else \
            Result(Reply("Tap Send or Cancel.", ok=False))
    if ctx.rest:
        return await send(ctx, fx, parse_line(ctx.rest), drop_form=False)
    fid = secrets.token_hex(3)
    await ctx.facades.forms.save_form(fx.id, ctx.who, {"kind": "methane", "fid": fid, "step": "m",
                                               "answers": {}},
                              ctx.core.settings.form_ttl_seconds)
    return _ask(fid, "m")


def register(registry: Registry) -> None:
    """Add /methane and its guided form."""
    registry.add(Spec("methane", USAGE, "Major incident report (METHANE / ETHANE)", methane_cmd,
                      aliases=("ethane", "major")))
    registry.add_form("methane", continue_methane)
