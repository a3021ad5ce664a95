"""A voice note: kept as evidence with its transcript (made on this machine by the adapter's
pool, marked "transcript (automatic)"), added to the incident it is for, or the start of a
report whose type, place and severity are suggested from what was said: one tap to log."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_model import parse_incident_id
from bot.domain.messages import Attachment, Button, Reply, Result
from bot.domain.vocab import INCIDENT_TYPES, SEVERITIES
from bot.voice.outcome import Heard, NotHeard, from_args, marked, reason
from bot.voice.suggest import suggest
from handlers.common.forms import EXPIRED, start_form
from handlers.incident.reporting import DEFAULT_SEVERITY, add_text, evidence_of, log_incident

KIND = "voice"  # the form state of a voice report waiting for its tap
BUTTON_WIDTH = 40
MAX_HEARD = 600  # characters of transcript kept for one voice report (about a minute)


async def voice_cmd(ctx: Ctx) -> Result:
    """A voice note (the adapter's /voice heard|<why> …) or a tap on a voice report's
    buttons (/voice <id> ok|type|loc|sev|form|cancel)."""
    fx = await ctx.fixture()
    outcome = from_args(ctx.args)
    note = next((a for a in ctx.cmd.attachments if a.kind == "voice" and a.file_id), None)
    if outcome is not None and note is not None:
        return _to_outbox(ctx, fx, await _voice_note(ctx, fx, note, outcome))
    if len(ctx.args) >= 2 and not ctx.cmd.attachments:
        return await _tap(ctx, fx, ctx.args[0], ctx.args[1], " ".join(ctx.args[2:]))
    raise UsageError("Send a voice note: it is kept as evidence and transcribed.")


def _to_outbox(ctx: Ctx, fx: Fixture, result: Result) -> Result:
    """The answer to a voice note goes by the durable outbox under the note's dedupe key:
    a note finished again after a crash (its update was still in the inbox) is answered
    once, whichever run gets there."""
    mine = None if result.queued else ctx.cmd.answer_outbound(result.reply, fx.id,
                                                               result.incident)
    if mine is None:
        return result
    result.outbound.append(mine)
    result.queued = True
    return result


def _has(state: dict[str, Any], note: Attachment) -> bool:
    """Whether this note is already with the state (its first run saved it, then crashed)."""
    return any(e.get("file_id") == note.file_id for e in state.get("evidence", []))


def _evidence(note: Attachment, outcome: Heard | NotHeard) -> dict[str, Any]:
    rec = evidence_of(note)
    if isinstance(outcome, Heard):
        rec["transcript"] = outcome.text  # made by a machine: shown marked, never as said
    return rec


async def _voice_note(ctx: Ctx, fx: Fixture, note: Attachment,
                      outcome: Heard | NotHeard) -> Result:
    state, last = await asyncio.gather(ctx.facades.forms.form(fx.id, ctx.who),
                                       ctx.store.last_report_of(fx.id, ctx.who))
    ev = _evidence(note, outcome)
    heard = outcome.text if isinstance(outcome, Heard) else ""
    why = "" if isinstance(outcome, Heard) else reason(outcome) + \
        ": the voice note is kept as evidence for control to listen to."
    again = state is not None and _has(state, note)  # finished again after a crash
    if state is not None and state.get("kind") == KIND and again:
        return await _offer(ctx, fx, state, why)
    if state is not None and state.get("kind") == KIND:  # a second note for the same report
        state["evidence"] = [*state.get("evidence", []), ev]
        # bounded: a steward sending note after note never grows the state without end
        state["heard"] = " ".join(p for p in (state.get("heard", ""), heard) if p)[-MAX_HEARD:]
        return await _offer(ctx, fx, state, why)
    if state is not None and state.get("kind") != "methane" and state.get("step"):
        if not again:  # logged with the form's report
            state["evidence"] = [*state.get("evidence", []), ev]
            await ctx.facades.forms.save_form(fx.id, ctx.who, state,
                                      ctx.core.settings.form_ttl_seconds)
        lines = [marked(heard)] if heard else [why]
        return Result(Reply("\n".join([*lines, "Kept with the report you are making: finish "
                                       "it above."]), title="Voice note kept"))
    n = parse_incident_id(ctx.cmd.reply_to) if ctx.cmd.reply_to else None
    if n is None and last is not None and (
            last[1] is None or 0 <= ctx.now.timestamp() - last[1]
            <= ctx.core.settings.note_window_seconds):
        n = last[0]
    if n is not None:
        result = await add_text(ctx, fx, n, marked(heard) if heard else "", evidence=[ev])
        if result.reply.ok:  # the steward sees what the machine heard, or why it did not
            result.reply.text += "\n" + (marked(heard) if heard else why)
        return result
    if not heard:  # nothing to suggest from: the guided form, the note kept with it
        return await start_form(ctx, fx, evidence=[ev], note=why)
    state = {"fid": secrets.token_hex(3), "kind": KIND, "step": KIND, "heard": heard,
             "evidence": [ev]}
    return await _offer(ctx, fx, state, "")


async def _offer(ctx: Ctx, fx: Fixture, state: dict[str, Any], note: str) -> Result:
    """Suggest type, place and severity from everything said so far; save the state."""
    ground = ctx.ground(fx)
    s = suggest(state.get("heard", ""), ground)  # a few ms: MAX_HEARD bounds it
    home = ctx.member.zone if ctx.member and ctx.member.zone in ground.zones else ""
    state["types"] = list(s.types)
    state["zones"] = list(s.zones) or ([home] if home else [])
    state.setdefault("type", s.types[0] if s.types else "")
    state.setdefault("location", state["zones"][0] if state["zones"] else "")
    if s.severity is not None:
        state["severity"] = s.severity
    if not state["type"] or not state["location"]:
        # half a suggestion is no one-tap report: the guided form, the notes kept with it
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        lines = [marked(state["heard"])] if state.get("heard") else []
        if note:
            lines.append(note)
        lines.append("I couldn't tell " + ("what is happening" if not state["type"] else
                                          "where") + " from that.")
        return await start_form(ctx, fx, evidence=state["evidence"], note="\n".join(lines))
    await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
    return _prompt(ctx, fx, state, note)


def _severity(state: dict[str, Any]) -> int:
    return int(state.get("severity") or DEFAULT_SEVERITY.get(state["type"], 2))


def _prompt(ctx: Ctx, fx: Fixture, state: dict[str, Any], note: str) -> Result:
    ground = ctx.ground(fx)
    fid, sev = state["fid"], _severity(state)
    what = INCIDENT_TYPES.label(state["type"])
    where = ground.short_label(state["location"], BUTTON_WIDTH)
    text = [marked(state["heard"])]
    if note:
        text.append(note)
    text.append(f"Suggested: {what} at {ground.label(state['location'])}, severity "
                f"{SEVERITIES[sev]}. Tap to report it, or change it first.")
    # every button but the last row is a whole report: a wrong type, place or severity in
    # the suggestion costs one tap on the right one, never a wrong record
    rows = [[Button(f"Report: {what} at {where}, severity {sev}", f"/voice {fid} ok",
                    "primary")]]
    others = [t for t in state.get("types", []) if t != state["type"]][:2]
    if others:
        rows.append([Button(f"Report as {INCIDENT_TYPES.label(t)}", f"/voice {fid} type {t}")
                     for t in others])
    places = [z for z in state.get("zones", []) if z != state["location"]][:2]
    if places:
        rows.append([Button(f"Report at {ground.short_label(z, BUTTON_WIDTH)}",
                            f"/voice {fid} loc {z}") for z in places])
    rows.append([Button(f"Report as severity {s}", f"/voice {fid} sev {s}")
                 for s in (sev - 1, sev + 1) if 1 <= s <= 4])
    rows.append([Button("Something else…", f"/voice {fid} form"),
                 Button("Cancel", f"/voice {fid} cancel")])
    return Result(Reply("\n".join(text), title="Voice report", buttons=rows))


async def _tap(ctx: Ctx, fx: Fixture, fid: str, field: str, value: str) -> Result:
    state = await ctx.facades.forms.form(fx.id, ctx.who)
    if state is None or state.get("kind") != KIND or state.get("fid") != fid:
        done = await ctx.facades.forms.form_done(fx.id, ctx.who)
        if done is not None and done[0] == fid:  # a second tap on a logged voice report
            return Result(Reply(f"Already logged as INC-{done[1]}."), toast_only=True)
        return Result(Reply(EXPIRED, ok=False))
    ground = ctx.ground(fx)
    if field == "cancel":
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        return Result(Reply("Voice report cancelled; nothing was logged."))
    if field == "form":
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        return await start_form(ctx, fx, evidence=state.get("evidence", []),
                                note=marked(state.get("heard", "")))
    if field == "type" and value in INCIDENT_TYPES.labels:
        state["type"] = value
        state.pop("severity", None)  # the new type's usual severity unless one is tapped
    elif field == "loc" and value in ground.zones:
        state["location"] = value
    elif field == "sev" and value.isdigit() and 1 <= int(value) <= 4:
        state["severity"] = int(value)  # 5 (major incident) only through the form's confirm
    elif field != "ok":
        return Result(Reply(EXPIRED, ok=False))
    fields = {"type": state["type"], "location": state["location"],
              "severity": _severity(state), "affiliation": "unknown", "people": "",
              "description": marked(state.get("heard", ""))}
    return await log_incident(ctx, fx, fields, drop_form=True, form_id=fid,
                              extra_evidence=state.get("evidence", []))


def register(registry: Registry) -> None:
    """Add the hidden /voice command (what a voice note and its buttons become)."""
    registry.add(Spec("voice", "(send a voice note)", "Report by voice note", voice_cmd,
                      hidden=True))
