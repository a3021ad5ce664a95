"""Flashpoint benchmark: 300 one-line reports from 60 stewards in 60 s, through the real bot
process, against the fake Bot API and fake Slack enforcing the platforms' documented limits.

For every "Logged INC-n" a steward got, the seconds until the first control message (send or
edit) naming INC-n, per platform. Prints `name: value` lines; the baseline ratio compares the
p95 with the limit's own pace (one Telegram group message every 3 s).
Usage: python bench/flashpoint.py [--reports 300] [--stewards 60] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from botproc import (  # noqa: E402
    SLACK_CONTROL,
    STEWARD0,
    TG_CONTROL,
    TYPES,
    ZONES,
    Rig,
    names,
    percentile,
)

LOGGED = re.compile(r"Logged (INC-\d+)")


def report_text(k: int) -> str:
    sev = 5 if k == 150 else 4 if k % 9 == 0 else 2 + k % 2
    return (f"/incident {TYPES[k % len(TYPES)]} @{ZONES[(k * 7) % len(ZONES)]} s{sev} "
            f"bench report {k}")


async def main(reports: int, stewards: int, seconds: float, settle: float) -> None:
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
        logged: dict[str, float] = {}
        while True:
            logged = {}
            for c in rig.tg.calls:
                if c.ok and c.method == "sendMessage" and int(c.params.get("chat_id", 0)) > 0:
                    m = LOGGED.search(str(c.params.get("text", "")))
                    if m and m.group(1) not in logged:
                        logged[m.group(1)] = c.at
            tg_ctl = rig.tg_texts(TG_CONTROL)
            sl_ctl = rig.slack_texts(SLACK_CONTROL)
            tg_lat, sl_lat, never = [], [], 0
            for inc, at in logged.items():
                pat = names(inc)
                tg_first = next((t for t, x, _ in tg_ctl if pat.search(x)), None)
                sl_first = next((t for t, x in sl_ctl if pat.search(x)), None)
                if tg_first is not None:
                    tg_lat.append(max(0.0, tg_first - at))
                if sl_first is not None:
                    sl_lat.append(max(0.0, sl_first - at))
                never += (tg_first is None) + (sl_first is None)
            if (never == 0 and len(logged) >= 1) or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
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
        # baseline: one card per incident at the group limit (20/min) would take this long
        print(f"ratio_p95_vs_one_card_each_at_limit: "
              f"{percentile(tg_lat, 0.95) / max(1e-9, len(logged) * 3.0):.4f}")
    finally:
        await rig.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", type=int, default=300)
    ap.add_argument("--stewards", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--settle", type=float, default=60.0)
    a = ap.parse_args()
    asyncio.run(main(a.reports, a.stewards, a.seconds, a.settle))
