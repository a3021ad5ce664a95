"""The guided incident report: type -> location -> severity, three taps, state in Redis."""

from __future__ import annotations

import secrets
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.when import WhenError, whole_when
from bot.domain.messages import Button, Reply, Result
from bot.domain.vocab import INCIDENT_TYPES, SEVERITIES
from handlers.common.words import BACK_WORDS, CANCEL_WORDS, CONFIRM_WORDS, typed_word
from handlers.incident.reporting import joined_again, log_incident, parse_severity

EXPIRED = "This form has expired. Send /incident to start a new report."
FAVOURITES = ["disorder", "missile", "pyro", "medical", "crowd_density", "antisocial",
              "segregation_breach", "discriminatory"]
TYPE_BUTTONS = 6
PIN_TTL = 2 * 86400  # a fixture's evening and then some: type positions stay put that long
BUTTON_WIDTH = 40  # a place's full name on a button up to this long, else its short name
MAJOR = 5  # the severity that needs a confirm step


async def _save(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> None:
    await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)


def _rows(buttons: list[Button], per_row: int) -> list[list[Button]]:
    return [buttons[i:i + per_row] for i in range(0, len(buttons), per_row)]


def _nav(fid: str, back: bool = True) -> list[Button]:
    return ([Button("Back", f"/form {fid} back")] if back else []) + \
        [Button("Cancel", f"/form {fid} cancel")]


async def likely_types(ctx: Ctx, fx: Fixture) -> list[str]:
    """Types this steward most likely needs: tonight's commonest in their area (their zone and
    its neighbours), then tonight's commonest anywhere, then the usual ones. Worked out on
    the steward's first report of a fixture and then kept, so learned positions never move."""
    pin_key = ctx.who + "#types"  # a per-steward, per-fixture record beside the form
    pinned = await ctx.facades.forms.form(fx.id, pin_key)
    if pinned and isinstance(pinned.get("types"), list):
        return [t for t in pinned["types"] if t in INCIDENT_TYPES.labels][:TYPE_BUTTONS]
    counts = await ctx.store.counts(fx.id)
    ground = ctx.ground(fx)
    zone = ctx.member.zone if ctx.member else ""
    area: dict[str, int] = {}
    for k, v in counts.items():
        if k.startswith("inc:lt:"):
            loc, _, typ = k[7:].partition(":")
            if zone and ground.near(zone, loc):
                area[typ] = area.get(typ, 0) + v
    tonight = {k[9:]: v for k, v in counts.items() if k.startswith("inc:type:")}
    out: list[str] = []
    for ranked in (area, tonight):
        for t in sorted(ranked, key=lambda t: -ranked[t]):
            if t in INCIDENT_TYPES.labels and t not in out:
                out.append(t)
    for t in FAVOURITES:
        if t not in out:
            out.append(t)
    out = out[:TYPE_BUTTONS]
    await ctx.facades.forms.save_form(fx.id, pin_key, {"types": out}, PIN_TTL)
    return out


async def start_form(ctx: Ctx, fx: Fixture, *, evidence: list[dict[str, Any]] | None = None,
                     note: str = "") -> Result:
    """Tap 1 of 3: what is it? (`evidence` already sent, e.g. a voice note, goes with the
    report.)"""
    fid = secrets.token_hex(3)
    await _save(ctx, fx, {"fid": fid, "step": "type"} | ({"evidence": evidence} if evidence
                                                         else {}))
    return _type_step(fid, await likely_types(ctx, fx), note)


def _type_step(fid: str, types: list[str], note: str = "", ok: bool = True) -> Result:
    buttons = [Button(INCIDENT_TYPES.label(t), f"/form {fid} type {t}") for t in types]
    rows = _rows(buttons, 2)
    rows.append([Button("More…", f"/form {fid} more"), *_nav(fid, back=False)])
    text = (note + "\n" if note else "") + "What is happening? Tap one, or type it."
    return Result(Reply(text, title="New report", buttons=rows, ok=ok))


def _more_step(fid: str) -> Result:
    buttons = [Button(INCIDENT_TYPES.label(t), f"/form {fid} type {t}")
               for t in INCIDENT_TYPES.keys()]
    return Result(Reply("All incident types:", title="New report",
                        buttons=[*_rows(buttons, 2), _nav(fid)]))


def _location_step(ctx: Ctx, fx: Fixture, fid: str, type_key: str, zones: list[str] | None = None,
                   note: str = "", ok: bool = True) -> Result:
    ground = ctx.ground(fx)
    if zones is None:
        home = ctx.member.zone if ctx.member else ""
        zones = []
        if home in ground.zones:
            zones = [home, *[z for z in ground.zones[home].adjacent if z in ground.zones]]
        if not zones:
            zones = list(ground.zones)[:6]
    buttons = [Button(ground.short_label(z, BUTTON_WIDTH), f"/form {fid} loc {z}")
               for z in zones[:6]]
    rows = _rows(buttons, 1)
    rows.append(_nav(fid))
    # No "share my location" key: on Telegram it is a message of its own beside the one the
    # form edits, and it held each next step a second behind the chat's pacing. A location
    # sent from the attachment menu answers this step just the same.
    text = (f"{INCIDENT_TYPES.label(type_key)}. Where? Tap a place, type a stand, block or "
            "gate, or send your location (📎 → Location).")
    return Result(Reply((note + "\n" if note else "") + text, title="New report",
                        buttons=rows, ok=ok))


def _severity_step(ctx: Ctx, fx: Fixture, fid: str, state: dict[str, Any], note: str = "",
                   ok: bool = True) -> Result:
    ground = ctx.ground(fx)
    # Button n is severity n: the console numbers buttons in order, and people learn them.
    rows = [[Button(SEVERITIES[s], f"/form {fid} sev {s}")] for s in range(1, 6)]
    rows.append(_nav(fid))
    place = ground.label(state["location"]) if state["location"] != "gps" else "your location"
    text = f"{INCIDENT_TYPES.label(state['type'])} at {place}. How serious?"
    return Result(Reply((note + "\n" if note else "") + text, title="New report",
                        buttons=rows, ok=ok))


def _confirm_step(ctx: Ctx, fx: Fixture, fid: str, state: dict[str, Any]) -> Result:
    ground = ctx.ground(fx)
    place = ground.label(state["location"]) if state["location"] != "gps" else "your location"
    text = (f"Confirm: declare {INCIDENT_TYPES.label(state['type'])} at {place} a "
            f"MAJOR INCIDENT (severity {MAJOR})? Command, control and police are alerted at "
            "once and you will be asked for METHANE. Go back to choose a lower severity.")
    rows = [[Button(f"Yes, severity {MAJOR}: major incident", f"/form {fid} confirm",
                    "danger")], _nav(fid)]
    return Result(Reply(text, title="Major incident?", buttons=rows))


async def form_cmd(ctx: Ctx) -> Result:
    """A button press inside the guided form: /form <fid> <field> [value]."""
    if len(ctx.args) < 2:
        raise UsageError("Form buttons only; send /incident to report.")
    fid, field_name, value = ctx.args[0], ctx.args[1], " ".join(ctx.args[2:])
    fx = await ctx.fixture()
    state = await ctx.facades.forms.form(fx.id, ctx.who)
    if state is None or state.get("fid") != fid or state.get("kind"):  # another form's
        # A final tap redelivered after a restart: it was logged, say so again.
        done = await ctx.store.applied_vars(fx.id, ctx.cmd.dedupe_key) \
            if ctx.cmd.dedupe_key else None
        n = (done or {}).get("similar") or (done or {}).get("n")
        again = await joined_again(ctx, fx, int(n)) if n and done.get("similar") else None
        if again is not None:
            return again
        if n:  # durable: its "Logged" answer is already in the outbox, don't say it twice
            queued = (ctx.reply_outbound(Reply(""), fx.id) is not None
                      and not done.get("similar"))
            return Result(Reply(f"Already logged as INC-{n}.", title=f"Logged INC-{n}"),
                          queued=queued)
        finished = await ctx.facades.forms.form_done(fx.id, ctx.who)
        if finished is not None and finished[0] == fid:  # a second tap on a finished form
            return Result(Reply(f"Already logged as INC-{finished[1]}."), toast_only=True)
        return Result(Reply(EXPIRED, ok=False))
    return await _advance(ctx, fx, state, field_name, value)


async def _back(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result:
    fid, step = state["fid"], state.get("step")
    if step == "confirm":
        state.update(step="severity")
        state.pop("severity", None)
        await _save(ctx, fx, state)
        return _severity_step(ctx, fx, fid, state)
    if step == "severity":
        state.update(step="location")
        state.pop("location", None)
        await _save(ctx, fx, state)
        return _location_step(ctx, fx, fid, state["type"])
    state = {k: v for k, v in state.items() if k in ("fid", "evidence")} | {"step": "type"}
    await _save(ctx, fx, state)
    return _type_step(fid, await likely_types(ctx, fx))


async def _log(ctx: Ctx, fx: Fixture, state: dict[str, Any], sev: int) -> Result:
    fields = {"type": state["type"], "location": state["location"], "severity": sev,
              "affiliation": "unknown", "people": "", "description": "",
              "occurred_at": state.get("occurred_at", "")}
    return await log_incident(ctx, fx, fields, drop_form=True, form_id=state["fid"],
                              extra_evidence=state.get("evidence", []))


async def _place(ctx: Ctx, fx: Fixture, state: dict[str, Any], value: str) -> Result:
    fid = state["fid"]
    ground = ctx.ground(fx)
    if value not in ground.zones and value != "gps":
        zone = ground.resolve(value)  # exact names, aliases and block numbers first
        if zone is None:
            block = ground.block_number(value)
            if block is not None:
                what = (f"No button {block}" if value.strip().isdigit() and block <= 9
                        else f"No block {block} at {ground.name} "
                             f"(blocks {ground.block_ranges()})")
                return _location_step(ctx, fx, fid, state["type"], None,
                                      f"{what}. Tap a place or type a stand, block or gate.",
                                      ok=False)
            hits = ground.search(value)
            if len(hits) != 1:
                note = (f"No place matches '{value}'." if not hits
                        else f"Several places match '{value}':")
                return _location_step(ctx, fx, fid, state["type"], hits or None, note,
                                      ok=bool(hits))
            zone = hits[0]
        value = zone
    state.update(location=value, step="severity")
    await _save(ctx, fx, state)
    return _severity_step(ctx, fx, fid, state)


async def _severity(ctx: Ctx, fx: Fixture, state: dict[str, Any], value: str) -> Result:
    word = value.strip()
    sev = parse_severity(word if not word.isdigit() else "s" + word)
    if sev is None:
        return _severity_step(ctx, fx, state["fid"], state,
                              f"Severity is 1 to 5, not '{word[:20]}'. Tap one.", ok=False)
    if sev == MAJOR:
        state.update(step="confirm", severity=sev)
        await _save(ctx, fx, state)
        return _confirm_step(ctx, fx, state["fid"], state)
    return await _log(ctx, fx, state, sev)


async def _advance(ctx: Ctx, fx: Fixture, state: dict[str, Any], field_name: str,
                   value: str) -> Result:
    fid = state["fid"]
    if field_name == "cancel":
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        return Result(Reply("Report cancelled; nothing was logged."))
    if field_name == "back":
        return await _back(ctx, fx, state)
    if field_name == "more":
        return _more_step(fid)
    if field_name == "type":
        if value.strip().isdigit():
            return _type_step(fid, await likely_types(ctx, fx),
                              f"No button {value.strip()[:12]}: tap a type or type its name.",
                              ok=False)
        key = INCIDENT_TYPES.resolve(value)
        if key is None:
            hints = INCIDENT_TYPES.suggest(value)
            if not hints:
                return _type_step(fid, await likely_types(ctx, fx),
                                  f"No incident type '{value[:40]}'.", ok=False)
            return _type_step(fid, hints, "Did you mean:")
        state.update(type=key, step="location")
        state.pop("location", None)
        await _save(ctx, fx, state)
        return _location_step(ctx, fx, fid, key)
    if field_name == "loc" and state.get("type"):
        return await _place(ctx, fx, state, value)
    if field_name == "sev" and state.get("location"):
        return await _severity(ctx, fx, state, value)
    if field_name == "confirm" and state.get("step") == "confirm":
        return await _log(ctx, fx, state, MAJOR)
    return Result(Reply(EXPIRED, ok=False))


async def continue_with_text(ctx: Ctx, fx: Fixture,
                             state: dict[str, Any] | None) -> Result | None:
    """Typed text or a shared location while the form `state` waits; None when no form is
    open."""
    if state is None:
        return None
    then = ctx.core.registry.continuation(state.get("kind", ""))
    if then is not None:  # another guided form's state (the incident form's has no kind)
        return await then(ctx, fx, state)
    step = state.get("step")
    loc = next((a for a in ctx.cmd.attachments if a.kind == "location"), None)
    if step == "location" and loc is not None:
        state["evidence"] = [*state.get("evidence", []),  # a voice note kept before it
                             {"kind": "location", "lat": loc.lat, "lon": loc.lon}]
        zone = ctx.member.zone if ctx.member and ctx.member.zone else "gps"
        return await _advance(ctx, fx, state, "loc", zone)
    text = ctx.rest.strip()
    if not text:
        return None
    word = typed_word(text)
    if word in CANCEL_WORDS:
        return await _advance(ctx, fx, state, "cancel", "")
    if word in BACK_WORDS:
        return await _advance(ctx, fx, state, "back", "")
    if step == "confirm":
        if word in CONFIRM_WORDS:
            return await _advance(ctx, fx, state, "confirm", "")
        return await _advance(ctx, fx, state, "back", "")  # anything else: choose again
    field_name = {"type": "type", "location": "loc", "severity": "sev"}.get(step or "")
    if field_name is None:
        return None
    timed = await _when(ctx, fx, state, text)
    if timed is not None:
        return timed
    return await _advance(ctx, fx, state, field_name, text)


async def _when(ctx: Ctx, fx: Fixture, state: dict[str, Any], text: str) -> Result | None:
    """"10 min ago" or "at 14:52" typed at any step: when it happened, kept for the report;
    the same step is asked again. None when the text says no time."""
    tz = ctx.core.settings.zone
    try:
        at = whole_when(text, ctx.now, tz)
    except WhenError as exc:
        note, ok = str(exc), False
    else:
        if at is None:
            return None
        state["occurred_at"] = iso(at)
        await _save(ctx, fx, state)
        note, ok = f"Noted: it happened at {at.astimezone(tz):%H:%M}.", True
    fid = state["fid"]
    if state.get("step") == "severity":
        return _severity_step(ctx, fx, fid, state, note, ok=ok)
    if state.get("step") == "location":
        return _location_step(ctx, fx, fid, state["type"], None, note, ok=ok)
    return _type_step(fid, await likely_types(ctx, fx), note, ok=ok)


def register(registry: Registry) -> None:
    """Add the hidden form command."""
    registry.add(Spec("form", "/form <id> <field> <value>", "Guided report step", form_cmd,
                      hidden=True))
