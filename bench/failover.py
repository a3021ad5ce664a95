"""Failover benchmark: reports during a Sentinel failover, with and without WAIT.

A master, 2 replicas and 3 sentinels on loopback (down-after 1 s). Several tasks send
incident reports through the core as stewards do on Telegram: each report carries its own
dedupe key, its answer goes through the durable outbox (as a Telegram answer does), and a
steward who is not shown "Logged" sends the same report again (same key) until it is.
What a steward is shown is what an outbox reader delivers to a recording sink.
Mid-burst the master is paused (SIGSTOP 5 s, then SIGCONT), killed (SIGKILL), or, in the
`stall` case, both replication links stall for 3 s (rigs/stall_link.py: the bytes stay in
the link) and then the master is killed and the links cut, so the replicas never get the
last writes. Afterwards every report shown
"Logged INC-n" is checked against the new master. Control has a chat on Telegram and one on
Slack (recording sinks, paced by the bot's own limits: Telegram's 20 a minute per group), and
the outbox lag (/healthz's `outbox_lag_s`: the oldest undelivered entry's age) is sampled every
half second from the fault until the end.

Prints, per case: acked_lost_<case> (shown Logged, not in the log afterwards),
inc_reused_<case> (one INC number shown for two different reports), not_logged_replies_<case>
(answers that were "NOT logged" or "HELD": honest refusals), seconds_unavailable_<case>
(the longest stretch with no report acknowledged), max_answer_wait_s_<case> (the longest a
steward waited from first sending a report to being shown "Logged"), answers_repeated_<case>
(an answer shown a second time: its delivered mark was lost with the old master),
control_never_shown_telegram_<case> and control_never_shown_slack_<case> (an incident shown
Logged to a steward and never named in control's chat on that platform, after up to
SETTLE_S seconds for the last cards), outbox_lag_max_s_<case> (the largest outbox lag from
the fault until control had every card).
The baseline is the same run with MATCHDAY_REPLICA_ACKS=0 (no WAIT), measured in the same
process.

Usage: python bench/failover.py [--tasks 8] [--seconds 14] [--no-baseline] [--cases ...]
[--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bot.app import build_core  # noqa: E402
from bot.delivery.durable import OutboxReader  # noqa: E402
from bot.domain.clock import VirtualClock  # noqa: E402
from bot.domain.messages import Command, Reply, ReplyVia  # noqa: E402
from bot.runtime import outbox_lag  # noqa: E402
from bot.sample import ensure_sample_fixture  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from bot.store import Store  # noqa: E402
from rigs.recording_sink import RecordingSink  # noqa: E402
from rigs.topology import start_sentinel  # noqa: E402

INC = re.compile(r"(?:Logged|Already logged as) INC-(\d+)")
NAMED = re.compile(r"\bINC-(\d+)\b")
# control's chats in config/channels.toml (the sample fixture uses the default audiences)
CONTROL = {"telegram": "-1001000000001", "slack": "C0CONTROL"}
SETTLE_S = 60.0  # the longest the bench waits for control to be shown every incident
# One incident type per steward: reports of different types never merge into one incident,
# whatever order concurrent reports reach the store in.
TYPES = ["missile", "pyro", "disorder", "antisocial", "alcohol", "criminal_damage",
         "persistent_standing", "entry"]


@dataclass
class Tally:
    """What the stewards were shown."""

    acked: dict[str, int] = field(default_factory=dict)  # report id -> INC number shown
    refusals: int = 0
    ack_times: list[float] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)  # first send -> shown Logged
    reused: int = 0
    repeats: int = 0  # an answer shown again (its delivered mark was lost with a master)


class Phones(RecordingSink):
    """The stewards' phones: a console sink that records each "Logged INC-n" by chat."""

    def __init__(self) -> None:
        super().__init__("console")
        self.shown: dict[str, asyncio.Queue[int]] = {}

    def phone(self, chat: str) -> asyncio.Queue[int]:
        """What one steward's phone shows, in order (INC numbers)."""
        return self.shown.setdefault(chat, asyncio.Queue())

    def cost(self, reply: Reply) -> int:
        """One message a reply."""
        return 1

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Show a message on a steward's phone."""
        m = INC.search(reply.title or reply.text)
        if m and reply.ok:
            self.phone(chat).put_nowait(int(m.group(1)))
        return ""

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """An edit changes a message already shown (its number was counted when sent)."""
        return True


class ControlChat(RecordingSink):
    """Control's chat on one platform: every INC number a card or digest named there."""

    def __init__(self, platform: str) -> None:
        super().__init__(platform)
        self.named: set[int] = set()

    async def on_send(self, chat: str, reply: Reply) -> None:
        """Note the incidents a message to control names (a digest names several)."""
        if chat == CONTROL[self.platform]:
            self.named |= {int(n) for n in NAMED.findall(f"{reply.title}\n{reply.text}")}


async def sample_lag(probe, lags: list[float], stop: asyncio.Event) -> None:  # type: ignore[no-untyped-def]
    """The outbox lag every half second until `stop` (a sample the store cannot answer, in
    the failover, is skipped)."""
    while not stop.is_set():
        try:
            lags.append(await asyncio.wait_for(probe(), 2.0))
        except Exception:  # the store is away: the outage has its own figures
            pass
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except TimeoutError:
            pass


async def shown(phone: asyncio.Queue[int], wait: float, seen: set[int],
                tally: Tally) -> int | None:
    """The next new number the phone shows within `wait` seconds; an earlier answer shown
    again (its entry redelivered after a failover lost its delivered mark) is counted as a
    repeat, not taken for the report in hand."""
    end = time.monotonic() + wait
    while (left := end - time.monotonic()) > 0:
        try:
            n = await asyncio.wait_for(phone.get(), left)
        except TimeoutError:
            return None
        if n not in seen:
            return n
        tally.repeats += 1
    return None


async def steward(core, clock: VirtualClock, task: int, stop: asyncio.Event,
                  tally: Tally, told: dict[int, str], phones: Phones) -> None:
    """Send reports one after another; resend one until the phone shows it logged."""
    i = 0
    chat = f"steward-{task}"
    phone = phones.phone(chat)
    seen: set[int] = set()  # numbers this phone already showed
    while not stop.is_set():
        i += 1
        rid = f"r{task}x{i}"
        first = time.monotonic()
        while True:
            clock.advance(timedelta(minutes=11))  # nor two of one steward's reports
            cmd = Command(platform="console", chat=chat, user="steward",
                          text=f"/incident {TYPES[task % len(TYPES)]} @seg_ne s3 {rid}",
                          dedupe_key=f"fo:{rid}", reply_via=ReplyVia())
            result = await core.handle(cmd)
            # The answer travels through the outbox: look at the phone for it, a while after
            # an OK, a moment after "HELD" (a "Logged" shown then is believed just the same).
            ok = result is not None and result.reply.ok
            n = await shown(phone, 5.0 if ok else 0.3, seen, tally)
            if n is not None:
                if told.setdefault(n, rid) != rid:
                    tally.reused += 1
                tally.acked[rid] = n
                seen.add(n)
                tally.ack_times.append(time.monotonic())
                tally.waits.append(time.monotonic() - first)
                # a moment before the next report, so some pooled connections sit idle when
                # the master stops (those are the ones that would write to it afterwards)
                await asyncio.sleep(random.random() * 0.02)
                break
            tally.refusals += 1
            if stop.is_set() and i > 1:
                return  # the run is over; an unacknowledged report is not counted as acked
            await asyncio.sleep(0.2)  # the steward looks at the phone and taps again


async def run_case(case: str, acks: int | None, tasks: int, seconds: float) -> dict[str, float]:
    """One failover under a burst of reports; the four figures."""
    with tempfile.TemporaryDirectory(prefix=f"failover-{case}-") as tmp:
        topo = start_sentinel(Path(tmp) / "redis", replicas=2, down_after_ms=1000,
                              stall_links=case == "stall")
        try:
            settings = load_settings(REDIS_URL=topo.url, MATCHDAY_DATA_DIR=tmp)
            store = Store.from_url(topo.url)
            await store.gateway.configure_replication(acks, timeout_ms=500)
            clock = VirtualClock(datetime(2026, 12, 2, 18, 0, tzinfo=UTC))
            # durable, as `matchday run` serves Telegram and Slack: the outbox, and the
            # rate limits shared in Redis
            core = build_core(store, settings, clock, cache_ttl=5.0, durable=True)
            fx = await ensure_sample_fixture(core)
            phones = Phones()
            core.notifier.add_sink(phones)
            control = {p: ControlChat(p) for p in CONTROL}
            for sink in control.values():
                core.notifier.add_sink(sink)
            reader = OutboxReader(core.notifier, core.notifier.outbox, block_ms=200,
                                  rescan_s=0.5)
            reader.start()
            tally, told, stop = Tally(), {}, asyncio.Event()
            workers = [asyncio.create_task(steward(core, clock, t, stop, tally, told, phones))
                       for t in range(tasks)]
            t0 = time.monotonic()
            await asyncio.sleep(2)
            master = topo.pid(topo.master_port)
            fault = time.monotonic()
            lags: list[float] = []
            sampled = asyncio.Event()
            sampler = asyncio.create_task(sample_lag(outbox_lag(core), lags, sampled))
            if case == "pause":
                os.kill(master, signal.SIGSTOP)
                await asyncio.sleep(5)
                os.kill(master, signal.SIGCONT)
            elif case == "stall":  # the replication links stall, then the master dies
                for link in topo.links:
                    link.stall()
                await asyncio.sleep(3)
                os.kill(master, signal.SIGKILL)
                for link in topo.links:
                    link.cut()  # what the links held is gone with the master
            else:
                os.kill(master, signal.SIGKILL)
            await asyncio.sleep(max(0.0, seconds - (time.monotonic() - t0)))
            stop.set()
            await asyncio.wait_for(asyncio.gather(*workers), 60)
            stopped = time.monotonic()
            acked = set(tally.acked.values())
            end = time.monotonic() + SETTLE_S
            while time.monotonic() < end and any(acked - c.named for c in control.values()):
                await asyncio.sleep(0.5)
            sampled.set()
            await sampler
            await reader.stop()
            await core.notifier.close()
            # what the log holds now, on whichever server is master
            lost = 0
            for rid, n in tally.acked.items():
                inc = await store.incident(fx.id, n)
                if inc is None or inc.description != rid:
                    lost += 1
            times = sorted([fault, *tally.ack_times, stopped])
            after = [t for t in times if t >= fault]
            gap = max(b - a for a, b in zip(after, after[1:], strict=False))
            await store.close()
            return {"acked": len(tally.acked), "acked_lost": lost, "inc_reused": tally.reused,
                    "not_logged_replies": tally.refusals, "seconds_unavailable": round(gap, 2),
                    "max_answer_wait_s": round(max(tally.waits, default=0.0), 2),
                    "answers_repeated": tally.repeats,
                    "control_never_shown_telegram": len(acked - control["telegram"].named),
                    "control_never_shown_slack": len(acked - control["slack"].named),
                    "outbox_lag_max_s": round(max(lags, default=float("nan")), 1)}
        finally:
            topo.stop()


SMOKE = {"cases": ["kill"], "seconds": 6.0, "tasks": 2, "no_baseline": True}


async def main(args: argparse.Namespace) -> None:
    """Each case, with WAIT and (unless --no-baseline) without; print the figures."""
    random.seed(args.seed)
    logging.getLogger("bot").setLevel(logging.CRITICAL)  # one warning per refusal otherwise
    for case in args.cases:
        res = await run_case(case, None, args.tasks, args.seconds)
        print(f"reports_acked_{case}: {res['acked']}")
        for k in ("acked_lost", "inc_reused", "not_logged_replies", "seconds_unavailable",
                  "max_answer_wait_s", "answers_repeated", "control_never_shown_telegram",
                  "control_never_shown_slack", "outbox_lag_max_s"):
            print(f"{k}_{case}: {res[k]}")
        if not args.no_baseline:
            base = await run_case(case, 0, args.tasks, args.seconds)
            print(f"baseline_no_wait_acked_{case}: {base['acked']}")
            print(f"baseline_no_wait_acked_lost_{case}: {base['acked_lost']}")
            print(f"baseline_no_wait_inc_reused_{case}: {base['inc_reused']}")
            print(f"baseline_no_wait_seconds_unavailable_{case}: {base['seconds_unavailable']}")
            print(f"ratio_acked_vs_no_wait_{case}: {res['acked'] / max(1, base['acked']):.2f}")


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--tasks", type=int, default=len(TYPES))
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=14.0)
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--cases", nargs="+", default=["pause", "kill", "stall"],
                    choices=["pause", "kill", "stall"])
    asyncio.run(main(cli.parse(ap, SMOKE)))
