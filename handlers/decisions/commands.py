"""The decision log: /decision (guided or one line), corrections as new linked entries,
rationale for decisions taken through other commands, and /decisions in order."""

from __future__ import annotations

import re
import secrets
from datetime import tzinfo
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.paging import page_of, split_page_args
from bot.domain.decision_log import (
    DECISION_KINDS,
    MAX_LINKS,
    MAX_TEXT,
    RATIONALE,
    Decision,
    LogView,
    clock_time,
    parse_decision_id,
    parse_kind,
)
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_model import parse_incident_id
from bot.domain.messages import Button, Reply, Result
from bot.domain.plurals import counted
from bot.domain.vocab import PHASES
from handlers.common.words import CANCEL_WORDS, CONFIRM_WORDS, key_values, typed_word

USAGE = ("/decision  |  /decision d=<decision> why=<rationale> [options=<options considered>] "
         "[inc=INC-3,INC-5] [type=stoppage|gate|police_support|other] [supersedes=D-4] "
         "[taken=HH:MM] [consulted=<who>] [info=<what it rested on>] [review=HH:MM|+30m]  |  "
         "/decision supersedes D-4  |  /decision why D-4 [rationale]")
ALIASES = {"d": "d", "decision": "d", "decided": "d", "why": "why", "rationale": "why",
           "reason": "why", "options": "options", "opts": "options", "considered": "options",
           "inc": "inc", "incidents": "inc", "incident": "inc", "supersedes": "supersedes",
           "corrects": "supersedes", "type": "kind", "kind": "kind", "taken": "taken",
           "consulted": "consulted", "with": "consulted", "info": "information",
           "information": "information", "review": "review"}
# step -> question
QUESTIONS = {"d": "What did you decide?",
             "why": "Why? The rationale: what you knew and what you were weighing.",
             "options": "Which options did you consider (and reject)? Type them, or tap None.",
             "inc": "Which incidents does it concern? e.g. INC-3, INC-5 — or tap None."}
STEPS = ("d", "why", "options", "inc")
NONE_WORDS = {"none", "no", "n/a", "-", "nil", "skip"}
# the types the guided form offers: those with no command of their own first
FORM_KINDS = ("stoppage", "gate", "police_support", "procedure", "other")
TITLE = "Decision log"


def parse_line(rest: str) -> dict[str, str]:
    """key=value pairs where values run to the next key=."""
    lead, out = key_values(rest, ALIASES, "decision")
    if lead.strip():
        raise UsageError("Start with d=<decision>, or send /decision on its own to be guided.",
                         field="d")
    return out


def parse_incidents(text: str) -> tuple[int, ...]:
    """'INC-3, INC-5' -> (3, 5); 'none' or '' -> ()."""
    if text.strip().lower() in NONE_WORDS or not text.strip():
        return ()
    out: list[int] = []
    for word in re.split(r"[,\s]+", text.strip()):
        if not word:
            continue
        n = parse_incident_id(word)
        if n is None:
            raise UsageError(f"'{word[:20]}' is not an incident id like INC-7.", field="inc")
        if n not in out:
            out.append(n)
    if len(out) > MAX_LINKS:
        raise UsageError(f"At most {MAX_LINKS} incidents per decision.", field="inc")
    return tuple(out)


def _decision_ref(text: str, what: str) -> int:
    n = parse_decision_id(text)
    if n is None:
        raise UsageError(f"{what} takes a decision id like D-4, not '{text[:20]}'.",
                         field="supersedes")
    return n


def _text(value: str, name: str, field: str) -> str:
    value = value.strip()
    if len(value) > MAX_TEXT:
        raise UsageError(f"The {name} is {len(value)} characters; keep it under {MAX_TEXT}.",
                         field=field)
    return value


def kind_of(word: str) -> str:
    """A decision type key, or a one-line refusal listing them."""
    kind = parse_kind(word) if word.strip() else "other"
    if kind is None:
        raise UsageError(f"'{word[:20]}' is not a decision type ({', '.join(DECISION_KINDS)}).",
                         field="kind")
    return kind


def entry_of(ctx: Ctx, answers: dict[str, str], *, supersedes: int | None = None,
             explains: int | None = None, source: str = "", kind: str = "") -> Decision:
    """A new entry from answers (checked: decision and rationale are required)."""
    decision = _text(answers.get("d", ""), "decision", "d")
    rationale = _text(answers.get("why", ""), "rationale", "why")
    if not decision:
        raise UsageError("What was decided? d=<decision> is required.", field="d")
    if not rationale and not source:
        raise UsageError("Every decision needs its rationale: why=<reasons>.", field="why")
    options = _text(answers.get("options", ""), "options", "options")
    if options.lower() in NONE_WORDS:
        options = ""
    tz = ctx.core.settings.zone
    taken = review = None
    if answers.get("taken"):
        taken = clock_time(answers["taken"], ctx.now, tz, ahead=False)
        if taken is None:
            raise UsageError(f"taken= is a time like 19:05, not '{answers['taken'][:10]}'.",
                             field="taken")
    if answers.get("review"):
        review = clock_time(answers["review"], ctx.now, tz, ahead=True)
        if review is None:
            raise UsageError(f"review= is a time like 19:45 or +30m, not "
                             f"'{answers['review'][:10]}'.", field="review")
    sup = supersedes if supersedes is not None else (
        _decision_ref(answers["supersedes"], "supersedes=") if answers.get("supersedes") else None)
    return Decision(n=0, at=ctx.now, by=ctx.who, name=ctx.member.name if ctx.member else "",
                    role=ctx.role or "", phase="", decision=decision, rationale=rationale,
                    options=options, incidents=parse_incidents(answers.get("inc", "")),
                    supersedes=sup, explains=explains, source=source,
                    kind=RATIONALE if explains else kind or kind_of(answers.get("kind", "")),
                    taken=taken, review=review,
                    consulted=_text(answers.get("consulted", ""), "consulted", "consulted"),
                    information=_text(answers.get("information", ""), "information",
                                      "information"))


async def record(ctx: Ctx, fx: Fixture, entry: Decision, dedupe: str) -> int:
    """Append the entry to the fixture's decision log; its number (the same on a redelivery)."""
    if entry.review is not None:
        await ctx.facades.deadlines.index_escalation(fx.id)  # the sweep reads its review deadline
    applied = await ctx.facades.decisions.append(fx.id, entry, dedupe)
    if not applied.duplicate:
        await ctx.core.changed("decision", fx.id)
    return applied.n


def from_command(ctx: Ctx, decision: str, source: str, kind: str,
                 incidents: str = "") -> Decision:
    """The entry for a decision taken through another command (its rationale to follow),
    attributed and timed, linked to what that command did (`source`: "evacuate P-1a2b3c")."""
    return entry_of(ctx, {"d": decision[:MAX_TEXT], "inc": incidents}, source=source,
                    kind=kind)


def rationale_prompt(n: int) -> Reply:
    """The line that asks for the rationale of decision D-n, with its button."""
    return Reply(f"Logged as decision D-{n}: what was the rationale?", title=f"Decision D-{n}",
                 buttons=[[Button("Give the rationale", f"/decision why D-{n}", "primary")]])


async def record_from_command(ctx: Ctx, fx: Fixture, decision: str, source: str,
                              incidents: str = "", kind: str = "other") -> Reply:
    """Log a decision taken through another command (rationale to follow) and the prompt for
    it, as a line to add to that command's answer."""
    entry = from_command(ctx, decision, source, kind, incidents)
    n = await record(ctx, fx, entry, ctx.cmd.dedupe_key + "#decision")
    return rationale_prompt(n)


async def _logged(ctx: Ctx, fx: Fixture, entry: Decision, dedupe: str) -> Result:
    n = await record(ctx, fx, entry, dedupe)
    head = f"D-{n}" + (f" (supersedes D-{entry.supersedes})" if entry.supersedes else "") + \
        (f" (rationale for D-{entry.explains})" if entry.explains else "")
    line = f"{head}: {entry.decision}" + (f"\nWhy: {entry.rationale}" if entry.rationale else "")
    ctx.notify("command", Reply(line, title=f"Decision {head} · {fx.title}"), fixture=fx.id)
    return Result(Reply(f"Logged {line}", title=f"Decision D-{n}"))


def _ask(fid: str, step: str, note: str = "", *, kind_chosen: bool = False) -> Result:
    buttons = [[Button("Cancel", f"/decision step {fid} cancel")]]
    if step in ("options", "inc"):
        buttons.insert(0, [Button("None", f"/decision step {fid} {step} none")])
    if step == "d" and not kind_chosen:  # what it is about, one tap (then the decision, typed)
        kinds = [Button(DECISION_KINDS[k], f"/decision step {fid} kind {k}") for k in FORM_KINDS]
        buttons[:0] = [kinds[i:i + 2] for i in range(0, len(kinds), 2)]
    text = (note + "\n" if note else "") + QUESTIONS[step]
    return Result(Reply(text, title=TITLE, buttons=buttons))


def _steps(state: dict[str, Any]) -> tuple[str, ...]:
    return ("why", "options") if state.get("explains") else STEPS


def _considered(d: Decision, indent: str = "", tz: tzinfo | None = None) -> list[str]:
    """The options considered, incidents concerned and JESIP lines, those that are given."""
    lines = [f"{indent}Options considered: {d.options}"] if d.options else []
    if d.information:
        lines.append(f"{indent}Information: {d.information}")
    if d.consulted:
        lines.append(f"{indent}Consulted: {d.consulted}")
    if d.taken and tz is not None:
        lines.append(f"{indent}Taken: {d.taken.astimezone(tz):%H:%M} "
                     f"(logged {d.at.astimezone(tz):%H:%M})")
    if d.review and tz is not None:
        lines.append(f"{indent}Review by: {d.review.astimezone(tz):%H:%M}")
    if d.incidents:
        lines.append(f"{indent}Incidents: " + ", ".join(f"INC-{i}" for i in d.incidents))
    return lines


def _confirm(state: dict[str, Any], ctx: Ctx) -> Result:
    entry = entry_of(ctx, state["answers"], supersedes=state.get("supersedes"),
                     explains=state.get("explains"))
    lines = [f"Decision: {entry.decision}", f"Type: {DECISION_KINDS[entry.kind]}",
             f"Why: {entry.rationale}"]
    lines += _considered(entry, "", ctx.core.settings.zone)
    if entry.supersedes:
        lines.append(f"Supersedes D-{entry.supersedes} (which stays in the log)")
    fid = state["fid"]
    return Result(Reply("\n".join(lines), title="Record this decision?", buttons=[[
        Button("Record decision", f"/decision step {fid} record", "primary"),
        Button("Cancel", f"/decision step {fid} cancel")]]))


async def _answer(ctx: Ctx, fx: Fixture, state: dict[str, Any], value: str) -> Result:
    fid, step = state["fid"], state["step"]
    value = value.strip()
    if not value:
        return _ask(fid, step, "Required.", kind_chosen="kind" in state["answers"])
    if len(value) > MAX_TEXT:
        return _ask(fid, step, f"That is {len(value)} characters; keep it under {MAX_TEXT}.",
                    kind_chosen="kind" in state["answers"])
    if step == "options" and value.isdigit():
        # a button number typed where the buttons are no longer the last answer (a command
        # came in between): never an option list of its own
        return _ask(fid, step, f"'{value}' is not a list of options: type them, or tap None.")
    if step == "inc":
        try:
            parse_incidents(value)
        except UsageError as exc:
            return _ask(fid, step, str(exc))
    state["answers"][step] = value
    steps = _steps(state)
    i = steps.index(step)
    state["step"] = steps[i + 1] if i + 1 < len(steps) else "confirm"
    await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
    return _ask(fid, state["step"]) if state["step"] != "confirm" else _confirm(state, ctx)


async def continue_decision(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result | None:
    """Typed text while a decision form waits for an answer (or, at its last step, for
    yes or cancel)."""
    word = typed_word(ctx.rest)
    if not word:
        return None
    if word in CANCEL_WORDS:
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        return Result(Reply("Decision not recorded; nothing was written."))
    if state.get("step") == "confirm":
        if word in CONFIRM_WORDS or word == "record":
            return await _record(ctx, fx, state)
        confirm = _confirm(state, ctx)
        confirm.reply.text += "\nReply yes to record it, or cancel."
        return confirm
    return await _answer(ctx, fx, state, ctx.rest)


async def _record(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result:
    entry = entry_of(ctx, state["answers"], supersedes=state.get("supersedes"),
                     explains=state.get("explains"))
    # the form's id makes a second tap (or a redelivery) the same write
    result = await _logged(ctx, fx, entry, f"decision-form:{ctx.who}:{state['fid']}")
    await ctx.facades.forms.drop_form(fx.id, ctx.who)
    return result


async def _start(ctx: Ctx, fx: Fixture, first: str, answers: dict[str, str],
                 **links: int) -> Result:
    fid = secrets.token_hex(3)
    await ctx.facades.forms.save_form(fx.id, ctx.who, {"kind": "decision", "fid": fid,
                                      "step": first,
                                               "answers": answers, **links},
                              ctx.core.settings.form_ttl_seconds)
    return _ask(fid, first)


async def _step(ctx: Ctx, fx: Fixture) -> Result:
    state = await ctx.facades.forms.form(fx.id, ctx.who)
    if not state or state.get("kind") != "decision" or state.get("fid") != ctx.args[1]:
        return Result(Reply("This decision form has expired. Send /decision to start again.",
                            ok=False))
    what = ctx.args[2]
    if what == "kind" and len(ctx.args) == 4 and state.get("step") != "confirm":
        state["answers"]["kind"] = kind_of(ctx.args[3])
        await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
        return _ask(state["fid"], state["step"],
                    f"Type: {DECISION_KINDS[state['answers']['kind']]}.", kind_chosen=True)
    if what == "cancel":
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
        return Result(Reply("Decision not recorded; nothing was written."))
    if what == "record" and state.get("step") == "confirm":
        return await _record(ctx, fx, state)
    if what == state.get("step"):
        return await _answer(ctx, fx, state, " ".join(ctx.args[3:]))
    if state["step"] == "confirm":
        return Result(Reply("Tap Record decision or Cancel.", ok=False))
    return _ask(state["fid"], state["step"], kind_chosen="kind" in state["answers"])


async def decision_cmd(ctx: Ctx) -> Result:
    """/decision: guided; one line with d= why= ...; corrections and later rationale."""
    fx = await ctx.fixture()
    if ctx.args[:1] == ["step"] and len(ctx.args) >= 3:
        return await _step(ctx, fx)
    first = ctx.args[0].lower() if ctx.args else ""
    if first in ("supersedes", "corrects", "correct") and len(ctx.args) == 2:
        n = _decision_ref(ctx.args[1], "supersedes")
        view = await ctx.facades.decisions.read(fx.id)
        if (newer := view.superseded_by(n)) is not None:
            return Result(Reply(f"D-{n} is already superseded by D-{newer}: supersede "
                                f"D-{view.chain(n)[-1]} instead.", ok=False))
        return await _start(ctx, fx, "d", {}, supersedes=n)
    if first in ("why", "rationale") and len(ctx.args) >= 2:
        n = _decision_ref(ctx.args[1], "why")
        view = await ctx.facades.decisions.read(fx.id)
        target = next((d for d in view.entries if d.n == n), None)
        if target is None:
            raise UsageError(f"No decision D-{n} in this fixture.", field="supersedes")
        answers = {"d": f"Rationale for D-{n}: {target.decision}"[:MAX_TEXT]}
        if len(ctx.args) > 2:  # the rationale on the same line: recorded at once
            answers["why"] = _text(ctx.rest.split(None, 2)[2], "rationale", "why")
            return await _logged(ctx, fx, entry_of(ctx, answers, explains=n),
                                 ctx.cmd.dedupe_key)
        return await _start(ctx, fx, "why", answers, explains=n)
    if not ctx.rest:
        return await _start(ctx, fx, "d", {})
    if "=" not in ctx.rest:  # the decision itself, typed: ask for the rest
        return await _start(ctx, fx, "why", {"d": _text(ctx.rest, "decision", "d")})
    return await _logged(ctx, fx, entry_of(ctx, parse_line(ctx.rest)), ctx.cmd.dedupe_key)


def render(view: LogView, tz: tzinfo) -> str:
    """The log as text, oldest first; corrected entries stay, marked."""
    lines: list[str] = []
    for d in view.entries:
        head = f"{d.id} {d.at.astimezone(tz):%H:%M} · {PHASES.label(d.phase) if d.phase else ''}"
        if d.explains:  # a rationale, filed with the decision it explains
            lines.append(f"{head} · Rationale for D-{d.explains} · {d.name or d.by} ({d.role})")
            lines.append(f"  Why: {d.rationale}")
            continue
        if d.kind and d.kind != "other":
            head += f" · {DECISION_KINDS.get(d.kind, d.kind)}"
        who = d.name or d.by
        lines.append(f"{head} · {who} ({d.role})")
        lines.append(f"  {d.decision}")
        why = view.rationale_of(d.n)
        lines.append(f"  Why: {why}" if why else "  Why: (rationale not yet given)")
        lines += _considered(d, "  ", tz)
        if d.source:
            lines.append(f"  Taken through: /{d.source}")
        if d.supersedes:
            lines.append(f"  Supersedes D-{d.supersedes}")
        later = view.superseded_by(d.n)
        if later:
            lines.append(f"  SUPERSEDED by D-{later} (kept as it was)")
        chain = view.chain(d.n)
        if len(chain) > 2:
            lines.append("  Chain: " + " superseded by ".join(f"D-{n}" for n in chain))
    return "\n".join(lines)


async def decisions_cmd(ctx: Ctx) -> Result:
    """/decisions: the fixture's decision log in order."""
    _, page = split_page_args(ctx.rest)
    fx = await ctx.fixture()
    view = await ctx.facades.decisions.read(fx.id)
    if not view.entries:
        return Result(Reply("No decisions logged yet. Log one with /decision.", title=TITLE))
    whole = Reply(render(view, ctx.core.settings.zone),
                  title=f"{TITLE} · {fx.title} · {counted(len(view.entries), 'entry')}")
    return Result(page_of(whole, page, lambda p: f"/decisions page {p}"))


def register(registry: Registry) -> None:
    """Add /decision and /decisions."""
    registry.add(Spec("decision", USAGE, "Log a decision with its rationale", decision_cmd,
                      aliases=("decide",)))
    registry.add_form("decision", continue_decision)
    registry.add(Spec("decisions", "/decisions [page N]", "The decision log, in order",
                      decisions_cmd,
                      aliases=("declog",)))
