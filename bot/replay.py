"""Replay a scripted matchday through the real core on a virtual clock (drills, demo)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.adapters.console import render_text
from bot.core.dispatch import Core
from bot.core.messages import Command, Outbound
from bot.core.roles import Member
from bot.domain.clock import VirtualClock, iso
from bot.domain.vocab import ROLES
from bot.schedule.escalation import next_due
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


def read_script(path: Path) -> list[Line]:
    """Parse and check a replay file: one JSON object per line, times never going back."""
    lines: list[Line] = []
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            obj = json.loads(raw)
            at = datetime.fromisoformat(obj["at"])
            user, role, text = str(obj["user"]), str(obj["role"]), str(obj["text"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ScriptError(f"{path.name}:{no}: needs at, user, role, text ({exc})") from None
        if at.tzinfo is None:
            raise ScriptError(f"{path.name}:{no}: 'at' needs a UTC offset, e.g. +01:00")
        if ROLES.resolve(role) is None:
            raise ScriptError(f"{path.name}:{no}: unknown role '{role}'")
        if lines and at < lines[-1].at:
            raise ScriptError(f"{path.name}:{no}: time goes backwards")
        lines.append(Line(at, user, ROLES.resolve(role) or role, text))
    if not lines:
        raise ScriptError(f"{path.name}: no lines")
    return lines


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
                 name: str, emit: Emit) -> None:
    """Feed each line at its virtual time; scheduled work fires at its own due time."""

    async def tap(out: Outbound) -> None:
        emit({"at": iso(clock.now()), "to": out.audience, "text": render_text(out.reply, False),
              "kind": "broadcast", "thread": out.thread})

    async def advance(to: datetime) -> None:
        # Step to each escalation deadline on the way, so it fires at its own time.
        last = None
        while (due := await next_due(core)) is not None and due <= to and due != last:
            await scheduler.run_due(max(due, clock.now()))
            last = due
        await scheduler.run_due(to)

    core.notifier.taps.append(tap)
    keys = line_keys(name, lines)
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
            if result is not None:
                emit({"at": iso(clock.now()), "to": line.user,
                      "text": render_text(result.reply), "kind": "reply"})
        end = lines[-1].at + TAIL
        await advance(end)
        clock.set(end)
    finally:
        core.notifier.taps.remove(tap)


def printer(json_lines: bool, out: Callable[[str], None] = print) -> Emit:
    """An emitter: JSON lines of outgoing messages, or a readable transcript."""

    def emit(rec: dict[str, Any]) -> None:
        if json_lines:
            if rec["kind"] != "said":
                out(json.dumps({"at": rec["at"], "to": rec["to"], "text": rec["text"]},
                               ensure_ascii=False))
            return
        t = rec["at"][11:16]
        if rec["kind"] == "said":
            out(f"{t} {rec['from']} ({rec['role']}): {rec['text']}")
        elif rec["kind"] == "reply":
            out("      ← " + rec["text"].replace("\n", "\n        "))
        else:
            thread = f" (re {rec['thread']})" if rec.get("thread") else ""
            out(f"{t}   → {rec['to']}{thread}: " + rec["text"].replace("\n", "\n        "))

    return emit
