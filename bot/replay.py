"""Replay a scripted matchday through the real core on a virtual clock (drills, demo)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from bot.adapters.console import render_text
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.domain.clock import VirtualClock, iso
from bot.domain.ledger import clean_text
from bot.domain.messages import Command, Outbound
from bot.domain.vocab import ROLES
from bot.schedule.deadlines import next_due
from bot.schedule.scheduler import Scheduler

Emit = Callable[[dict[str, Any]], None]
TAIL = timedelta(minutes=30)  # after the last line, let due briefings/summaries fire


class ScriptError(ValueError):
    """A replay file line is malformed; the message names the line."""


@dataclass(frozen=True)
class Line:
    """One scripted message."""

    at: datetime
    user: str
    role: str
    text: str


@dataclass(frozen=True)
class Script:
    """A replay file's good lines, and (line number, what is wrong) of each bad one."""

    lines: list[Line]
    bad: list[tuple[int, str]]


def _line(raw: str) -> Line:
    """One line of a replay file, or a ValueError saying what is wrong with it."""
    try:
        obj = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ValueError("needs a JSON object with at, user, role, text")
    missing = [k for k in ("at", "user", "role", "text") if k not in obj]
    if missing:
        raise ValueError(f"needs at, user, role, text (missing {', '.join(missing)})")
    try:
        at = datetime.fromisoformat(str(obj["at"]))
    except ValueError:
        raise ValueError(f"'at' is not a time: {clean_text(str(obj['at']))[:40]!r}") from None
    if at.tzinfo is None:
        raise ValueError("'at' needs a UTC offset, e.g. +01:00")
    role = ROLES.resolve(str(obj["role"]))
    if role is None:
        raise ValueError(f"unknown role '{clean_text(str(obj['role']))[:40]}'")
    # what people type arrives as valid Unicode: a lone surrogate ("\ud800") becomes U+FFFD
    return Line(at, clean_text(str(obj["user"])), role, clean_text(str(obj["text"])))


def parse_script(path: Path) -> Script:
    """A replay file: one JSON object per line, times never going back. A bad line (not
    JSON, a field missing, a bad time or role, a time going back) is named with its line
    number and skipped; the others still run."""
    lines: list[Line] = []
    bad: list[tuple[int, str]] = []
    text = path.read_bytes().decode("utf-8", errors="replace")
    # "\n" only: splitlines() would also cut inside a text at U+2028 or a form feed
    for no, raw in enumerate(text.split("\n"), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            line = _line(raw)
            if lines and line.at < lines[-1].at:
                raise ValueError("time goes backwards")
        except ValueError as exc:
            bad.append((no, str(exc)))
            continue
        lines.append(line)
    return Script(lines, bad)


def read_script(path: Path) -> list[Line]:
    """A replay file's lines; ScriptError naming the first bad line, or when none is good."""
    script = parse_script(path)
    if script.bad:
        no, problem = script.bad[0]
        raise ScriptError(f"{path.name}:{no}: {problem}")
    if not script.lines:
        raise ScriptError(f"{path.name}: no lines")
    return script.lines


def line_keys(name: str, lines: list[Line]) -> list[str]:
    """Dedupe keys by each line's own identity (file name, at, user, text), never its position
    or the rest of the file: a drill replayed again after lines were added or moved logs only
    the new ones. The n-th identical line of a file is its own key (two equal reports)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    keys = []
    for ln in lines:
        ident = (iso(ln.at), ln.user, ln.text)
        seen[ident] += 1
        raw = json.dumps([name, *ident, seen[ident]], ensure_ascii=False)
        keys.append(f"replay:{hashlib.sha256(raw.encode()).hexdigest()[:24]}")
    return keys


async def replay(core: Core, scheduler: Scheduler, clock: VirtualClock, lines: list[Line],
                 name: str, emit: Emit) -> list[str]:
    """Feed each line at its virtual time; scheduled work fires at its own due time. The
    first line of each refusal the lines got, in order."""

    async def tap(out: Outbound) -> None:
        emit({"at": iso(clock.now()), "to": out.audience, "text": render_text(out.reply, False),
              "kind": "broadcast", "thread": out.thread})

    async def advance(to: datetime) -> None:
        # Step to each escalation deadline on the way, so it fires at its own time.
        last = None
        while (due := await next_due(core, core.facades.deadlines)) is not None and due <= to \
                and due != last:
            await scheduler.run_due(max(due, clock.now()))
            last = due
        await scheduler.run_due(to)

    core.notifier.taps.append(tap)
    keys = line_keys(name, lines)
    refused: list[str] = []
    try:
        for line, key in zip(lines, keys, strict=True):
            await advance(line.at)
            clock.set(line.at)
            who = f"replay:{line.user}"
            core.roster[who] = Member("replay", line.user, line.role, line.user)
            emit({"at": iso(line.at), "from": line.user, "role": line.role, "text": line.text,
                  "kind": "said"})
            cmd = Command(platform="replay", chat=line.user, user=line.user, text=line.text,
                          dedupe_key=key, user_name=line.user)
            result = await core.handle(cmd)
            if result is not None and not result.reply.ok:
                refused.append(result.reply.text.strip().splitlines()[0] if result.reply.text
                               else result.reply.title)
            if result is not None:
                emit({"at": iso(clock.now()), "to": line.user,
                      "text": render_text(result.reply), "kind": "reply"})
        end = lines[-1].at + TAIL
        await advance(end)
        clock.set(end)
    finally:
        core.notifier.taps.remove(tap)
    return refused


def printer(json_lines: bool, out: Callable[[str], None] = print,
            tz: tzinfo = UTC) -> Emit:
    """An emitter: JSON lines of outgoing messages, or a readable transcript in `tz`."""

    def emit(rec: dict[str, Any]) -> None:
        if json_lines:
            if rec["kind"] != "said":
                out(json.dumps({"at": rec["at"], "to": rec["to"], "text": rec["text"]},
                               ensure_ascii=False))
            return
        t = f"{datetime.fromisoformat(rec['at']).astimezone(tz):%H:%M}"
        if rec["kind"] == "said":
            out(f"{t} {rec['from']} ({rec['role']}): {rec['text']}")
        elif rec["kind"] == "reply":
            out("      ← " + rec["text"].replace("\n", "\n        "))
        else:
            thread = f" (re {rec['thread']})" if rec.get("thread") else ""
            out(f"{t}   → {rec['to']}{thread}: " + rec["text"].replace("\n", "\n        "))

    return emit
