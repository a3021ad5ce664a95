"""The crash run (bench/crash.py, tests/delivery/test_crash.py): kill -9 the real bot
mid-burst (30 final form taps + 30 one-line reports),
restart it, and count what was lost or doubled. Prints `name: value` lines (goal: all 0).
The bot has a Telegram archive chat (MATCHDAY_TELEGRAM_ARCHIVE_CHAT), so a send the kill
left in doubt is looked up rather than repeated; --no-archive measures without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections import Counter

from rigs.botproc import SLACK_CONTROL, STEWARD0, TG_CONTROL, TYPES, ZONES, Rig, names

TAPS = 30
LINES = 30
ANSWER = re.compile(r"Logged INC-\d+|Added to INC-\d+|Already logged as INC-\d+")
LOGGED = re.compile(r"Logged (INC-\d+)")
ARCHIVE = "-1009999999999"  # a private channel only the bot posts in


def keyboard(msg: dict) -> list[str]:
    rm = msg.get("reply_markup") or {}
    return [b.get("callback_data", "") for row in rm.get("inline_keyboard", []) for b in row]


async def prompt(rig: Rig, user: int, word: str, timeout: float = 20.0) -> dict:
    """The bot's latest message to a user offering buttons with `word` (e.g. ' sev ')."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        best = None
        for (chat, mid), msg in list(rig.tg.messages.items()):
            if chat == user and any(word in d for d in keyboard(msg)):
                if best is None or mid > best["message_id"]:
                    best = msg
        if best is not None:
            return best
        await asyncio.sleep(0.25)
    raise RuntimeError(f"no '{word}' prompt for {user}")


async def to_severity_step(rig: Rig, i: int) -> dict:
    user = STEWARD0 + i
    await rig.tg.push(rig.tg.message_update(user, "/incident"))
    msg = await prompt(rig, user, " type ")
    typ = TYPES[i % len(TYPES)]
    data = next((d for d in keyboard(msg) if d.endswith(f" type {typ}")),
                next(d for d in keyboard(msg) if " type " in d))
    await rig.tg.push(rig.tg.callback_update(user, msg, data))
    msg = await prompt(rig, user, " loc ")
    locs = [d for d in keyboard(msg) if " loc " in d]
    await rig.tg.push(rig.tg.callback_update(user, msg, locs[i % len(locs)]))
    return await prompt(rig, user, " sev ")


def answers_to(rig: Rig, user: int, since: float) -> list[tuple[str, tuple[str, object]]]:
    """The answers a steward got, each with the message it is in: a sendMessage is a new
    message, an edit is the message it edits (a redelivered tap's answer edits the same
    form prompt again: one message to the steward, not two)."""
    out = []
    for i, c in enumerate(rig.tg.calls):
        if c.ok and c.at >= since and c.method in ("sendMessage", "editMessageText") \
                and c.params.get("chat_id") == user:
            m = ANSWER.search(str(c.params.get("text", "")))
            if m:
                where = ("edit", str(c.params.get("message_id"))) \
                    if c.method == "editMessageText" else ("send", i)
                out.append((m.group(0), where))
    return out


async def main(kill_after: int, settle: float, archive: bool, taps: int = TAPS,
               lines: int = LINES) -> None:
    """Run it and print `name: value` lines."""
    for name, value in (await crash_run(kill_after, settle, taps, lines, archive)).items():
        print(f"{name}: {value}")


async def crash_run(kill_after: int, settle: float, taps: int = TAPS,
                    lines: int = LINES, archive: bool = True) -> dict[str, object]:
    """Run the burst, kill -9 mid-way, restart; the figures."""
    TAPS, LINES = taps, lines  # noqa: N806
    before = os.environ.get("MATCHDAY_TELEGRAM_ARCHIVE_CHAT")
    os.environ.pop("MATCHDAY_TELEGRAM_ARCHIVE_CHAT", None)
    if archive:
        os.environ["MATCHDAY_TELEGRAM_ARCHIVE_CHAT"] = ARCHIVE  # read by the bot process
    try:
        return await _run(kill_after, settle, TAPS, LINES)
    finally:
        os.environ.pop("MATCHDAY_TELEGRAM_ARCHIVE_CHAT", None)
        if before is not None:
            os.environ["MATCHDAY_TELEGRAM_ARCHIVE_CHAT"] = before


async def _run(kill_after: int, settle: float, TAPS: int, LINES: int  # noqa: N803
               ) -> dict[str, object]:
    rig = Rig(TAPS + LINES)
    await rig.start()
    try:
        await rig.spawn()
        prompts = await asyncio.gather(*(to_severity_step(rig, i) for i in range(TAPS)))
        burst = time.monotonic()
        for i, msg in enumerate(prompts):
            sev = next(d for d in keyboard(msg) if d.endswith(" sev 3"))
            await rig.tg.push(rig.tg.callback_update(STEWARD0 + i, msg, sev))
        for j in range(LINES):
            k = TAPS + j
            await rig.tg.push(rig.tg.message_update(
                STEWARD0 + k, f"/incident {TYPES[k % len(TYPES)]} @{ZONES[(k * 5) % len(ZONES)]}"
                f" s2 crash bench {k}"))
        while sum(len(answers_to(rig, STEWARD0 + u, burst)) > 0
                  for u in range(TAPS + LINES)) < kill_after:
            await asyncio.sleep(0.005)
        rig.kill9()
        acked_before = sum(len(answers_to(rig, STEWARD0 + u, burst)) > 0
                           for u in range(TAPS + LINES))
        await rig.spawn()
        end = time.monotonic() + settle
        while time.monotonic() < end:
            if all(answers_to(rig, STEWARD0 + u, burst) for u in range(TAPS + LINES)):
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(min(20.0, max(0.0, end - time.monotonic())))  # let cards land
        # ---- what the store has
        assert rig.store is not None
        events = await rig.store.events(rig.fixture)
        reported_by = {e.by for e in events if e.kind in ("incident.reported",
                                                          "incident.merged")
                       and e.at >= ""}
        incs = await rig.incidents()
        ids = {i.id for i in incs}
        # ---- what people saw
        replies_missing = acked_lost = 0
        logged_in: dict[str, set[tuple[int, tuple[str, object]]]] = {}
        for u in range(TAPS + LINES):
            got = answers_to(rig, STEWARD0 + u, burst)
            replies_missing += not got
            for a, where in got:
                m = LOGGED.search(a)
                if m and not a.startswith("Already"):
                    logged_in.setdefault(m.group(1), set()).add((u, where))
                    acked_lost += m.group(1) not in ids
        logged_counts = Counter({inc: len(msgs) for inc, msgs in logged_in.items()})
        taps_lost = sum(f"telegram:{STEWARD0 + i}" not in reported_by for i in range(TAPS))
        reports_lost = sum(f"telegram:{STEWARD0 + TAPS + j}" not in reported_by
                           for j in range(LINES))
        tg_ctl = rig.tg_texts(TG_CONTROL, ("sendMessage", "editMessageText"))
        sl_ctl = rig.slack_texts(SLACK_CONTROL)
        cards_missing = 0
        tg_cards: Counter[str] = Counter()
        for inc in ids:
            pat = names(inc)
            cards_missing += not any(pat.search(x) for _, x, _ in tg_ctl)
            cards_missing += not any(pat.search(x) for _, x in sl_ctl)
        for _, text, call in tg_ctl:
            if call.method == "sendMessage" and isinstance(call.params.get("reply_markup"),
                                                            dict):
                first = text.splitlines()[0] if text else ""
                m = re.search(r"\bINC-\d+\b", first)
                if m:
                    tg_cards[m.group(0)] += 1
        sl_cards: Counter[str] = Counter()
        for c in rig.slack.calls:
            if c.ok and c.method == "chat.postMessage" and c.params.get("channel") == \
                    SLACK_CONTROL and "cmd_" in json.dumps(c.params.get("blocks", "")):
                m = re.search(r"\bINC-\d+\b", str(c.params.get("text", "")))
                if m:
                    sl_cards[m.group(0)] += 1
        dups = sum(n - 1 for n in (*tg_cards.values(), *sl_cards.values(),
                                   *logged_counts.values()) if n > 1)
        return {"inputs": f"{TAPS + LINES} ({TAPS} final taps, {LINES} one-line reports)",
                "answered_before_kill": acked_before, "incidents_stored": len(ids),
                "acked_lost": acked_lost, "cards_never_delivered": cards_missing,
                "replies_never_delivered": replies_missing, "taps_lost": taps_lost,
                "reports_lost": reports_lost, "duplicates": dups,
                "duplicated": sorted([f"tg card {k}" for k, v in tg_cards.items() if v > 1]
                                     + [f"slack card {k}" for k, v in sl_cards.items() if v > 1]
                                     + [f"logged {k}" for k, v in logged_counts.items()
                                        if v > 1]),
                "duplicated_calls": [(c.method, c.params.get("chat_id"), c.params.get("message_id"),
                               str(c.params.get("text"))[:20], round(c.at - burst, 2))
                              for c in rig.tg.calls if c.ok and any(
                                  re.search(rf"Logged {k}\b", str(c.params.get("text", "")))
                                  for k, v in logged_counts.items() if v > 1)],
                "telegram_429": rig.tg.too_many, "telegram_429_at": rig.tg.too_many_at,
                "slack_429": rig.slack.too_many,
                "telegram_probes": len(rig.tg.calls_of("forwardMessage", ok_only=False))}
    finally:
        await rig.stop()
