"""Flashpoint benchmark: 300 one-line reports from 60 stewards in 60 s, through the real bot
process, against the fake Bot API and fake Slack enforcing the platforms' documented limits.

For every "Logged INC-n" a steward got, the seconds until the first control message (send or
edit) naming INC-n, per platform. Prints `name: value` lines; the baseline ratio compares the
p95 with the limit's own pace (one Telegram group message every 3 s).
Usage: python bench/flashpoint.py [--reports 300] [--stewards 60] [--seconds 60] [--smoke]
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from rigs.botproc import (  # noqa: E402
    SLACK_CONTROL,
    STEWARD0,
    TG_CONTROL,
    TYPES,
    ZONES,
    Rig,
    percentile,
)

LOGGED = re.compile(r"Logged (INC-\d+)")


def report_text(k: int) -> str:
    sev = 5 if k == 150 else 4 if k % 9 == 0 else 2 + k % 2
    return (f"/incident {TYPES[k % len(TYPES)]} @{ZONES[(k * 7) % len(ZONES)]} s{sev} "
            f"bench report {k}")


INC = re.compile(r"\bINC-\d+\b")


class Seen:
    """First sighting of each INC id: in a steward's 'Logged' reply, in each control chat."""

    def __init__(self, rig: Rig) -> None:
        self.rig = rig
        self.logged: dict[str, float] = {}
        self.tg: dict[str, float] = {}
        self.sl: dict[str, float] = {}
        self._tg_i = self._sl_i = 0

    def scan(self) -> None:
        calls = self.rig.tg.calls
        for c in calls[self._tg_i:]:
            if not c.ok or c.method not in ("sendMessage", "editMessageText"):
                continue
            chat = int(c.params.get("chat_id", 0))
            text = str(c.params.get("text", ""))
            if chat > 0:
                m = LOGGED.search(text)
                if m:
                    self.logged.setdefault(m.group(1), c.at)
            elif chat == TG_CONTROL:
                for inc in INC.findall(text):
                    self.tg.setdefault(inc, c.at)
        self._tg_i = len(calls)
        scalls = self.rig.slack.calls
        for c in scalls[self._sl_i:]:
            if c.ok and c.method in ("chat.postMessage", "chat.update") and \
                    c.params.get("channel") == SLACK_CONTROL:
                for inc in INC.findall(json.dumps(c.params)):
                    self.sl.setdefault(inc, c.at)
        self._sl_i = len(scalls)

    def never(self) -> int:
        return sum((i not in self.tg) + (i not in self.sl) for i in self.logged)


async def main(reports: int, stewards: int, seconds: float, settle: float,
               trace: bool = False) -> None:
    rig = Rig(stewards)
    await rig.start()
    try:
        await rig.spawn()
        t0 = time.monotonic()
        for k in range(reports):
            user = STEWARD0 + k % stewards
            await rig.tg.push(rig.tg.message_update(user, report_text(k)))
            await asyncio.sleep(max(0.0, t0 + (k + 1) * seconds / reports - time.monotonic()))
        deadline = time.monotonic() + settle
        seen = Seen(rig)
        while True:  # cheap, incremental: the fakes share this process's loop
            seen.scan()
            never = seen.never()
            if never == 0 or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
        logged = seen.logged
        tg_lat = [max(0.0, seen.tg[i] - at) for i, at in logged.items() if i in seen.tg]
        sl_lat = [max(0.0, seen.sl[i] - at) for i, at in logged.items() if i in seen.sl]
        tg_ctl = rig.tg_texts(TG_CONTROL)
        print(f"reports: {reports}")
        print(f"incidents_logged: {len(logged)}")
        print(f"telegram_control_p95_s: {percentile(tg_lat, 0.95):.2f}")
        print(f"slack_control_p95_s: {percentile(sl_lat, 0.95):.2f}")
        print(f"telegram_control_p50_s: {percentile(tg_lat, 0.5):.2f}")
        print(f"telegram_control_max_s: {max(tg_lat, default=float('nan')):.2f}")
        print(f"slack_control_max_s: {max(sl_lat, default=float('nan')):.2f}")
        print(f"incidents_never_shown: {never}")
        print(f"telegram_429: {rig.tg.too_many}")
        print(f"slack_429: {rig.slack.too_many}")
        ctl_msgs = len(tg_ctl)
        print(f"telegram_control_messages: {ctl_msgs}")
        times = sorted(t for t, _, _ in tg_ctl)
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        print(f"telegram_control_max_gap_s: {max(gaps, default=0.0):.2f}")
        if trace:
            for t, text, c in tg_ctl:
                print(f"  {t - t0:7.2f} {c.method} {text.splitlines()[0][:70]!r}")
        # baseline: one card per incident at the group limit (20/min) would take this long
        print(f"ratio_p95_vs_one_card_each_at_limit: "
              f"{percentile(tg_lat, 0.95) / max(1e-9, len(logged) * 3.0):.4f}")
    finally:
        await rig.stop()


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--reports", type=int, default=300)
    ap.add_argument("--stewards", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--settle", type=float, default=60.0)
    ap.add_argument("--trace", action="store_true", help="list every control message")
    a = cli.parse(ap, {"reports": 20, "stewards": 5, "seconds": 4.0, "settle": 30.0})
    asyncio.run(main(a.reports, a.stewards, a.seconds, a.settle, a.trace))
