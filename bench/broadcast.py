"""Broadcast benchmark (issues 24 §4 and 32): an EVACUATE to `--stewards` stewards on the
fake Telegram (which enforces the bot-wide 30/s, 1/s per chat and 20/min per group with
429s), through the real python-telegram-bot path, the durable outbox and the shared rate
limiter in Redis, with control also on the fake Slack (its limits enforced) through Bolt.

Reach first, then chase: the ground's stewards' alert channel (a Telegram channel) holds
every linked steward who joined it (learnt from Telegram's chat_member updates, pushed
through the bot); `--outside` linked stewards never joined it and get a direct message;
`--unlinked` stewards on the rota have no linked account (no phone to reach). 3 s after the
confirm a steward reports a severity-5 casualty, and `--taps` reached stewards (1,000) then
tap "I have it". Prints `reach_p95_s` (confirm to each targeted steward's phone: the channel post
counts for every member the moment the fake accepts it; goal <= 2), `reach_max_s`,
`telegram_control_p95_during_s` and `slack_control_p95_during_s` (the report to its card in
control; goal <= 5), `ack_messages_sent` (messages the taps caused; goal 0), `acked` (taps
recorded), `telegram_429` (0), `unreached_listed` (rota stewards with no linked account,
counted from the rota; the bench makes `--unlinked`) and `lane_released`.

`--missing` sends a /missing report instead, on a matchday deployment (`--supervisors` 40
and `--exits` 60 exit-post stewards among the `--stewards`), and prints `missing_alert_p95_s`
(from the /missing command to each targeted supervisor's and exit steward's receipt on the
fake Telegram; goal <= 10), `missing_alert_max_s`, `missing_floor_s` (targeted/30, the
platform's floor for that many) and `missing_ratio` (max / floor).

`--kill` runs the real bot process instead (tests/botproc.py: its own roster of stewards, a
Telegram archive chat for in-doubt lookups, no alert channel: every steward gets a direct
message), SIGKILLs it once `--kill-after` stewards have the EVACUATE, starts it again, and
prints `lost` (stewards who never got it, goal 0) and `duplicates` (stewards who got it more
than once).

    .venv/bin/python bench/broadcast.py [--stewards 1000] [--outside 20] [--unlinked 50]
    .venv/bin/python bench/broadcast.py --stewards 15000
    .venv/bin/python bench/broadcast.py --missing [--supervisors 40] [--exits 60]
    .venv/bin/python bench/broadcast.py --kill [--stewards 1000] [--kill-after 400]
    .venv/bin/python bench/broadcast.py --smoke [--missing | --kill]   # 60 stewards: seconds
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import SecretStr  # noqa: E402

from bench import cli  # noqa: E402
from bench.rig import bench_core  # noqa: E402
from bot.core.dispatch import Core  # noqa: E402
from bot.delivery.durable import OutboxReader  # noqa: E402
from bot.domain.messages import Command  # noqa: E402
from bot.runtime import slack_for  # noqa: E402
from bot.store.stewarding_keys import Stewarding  # noqa: E402
from rigs.fakes.slack_api import FakeSlack  # noqa: E402
from rigs.fakes.telegram_api import FakeTelegram  # noqa: E402
from rigs.telegram_rig import tabards_on_telegram, telegram_through_outbox  # noqa: E402

FIRST_ID = 500_000_000
ZONES = ("stb_upper", "stb_lower", "gate_away", "gate_a", "bbs_lower", "ws_lower")
PER_SECOND = 30.0


def say(text: str, i: int, user: str = "safety_officer") -> Command:
    return Command("console", user, user, text, f"bench-bc:{i}")


@asynccontextmanager
async def on_telegram(latency: float, posts: Iterable[tuple[str, str]]
                      ) -> AsyncIterator[tuple[Core, FakeTelegram, OutboxReader]]:
    """A bench core whose only stewards and supervisors are `posts` ((role, zone) each) on
    the fake Telegram (its limits enforced), sending through the durable outbox."""
    fake = FakeTelegram(enforce_limits=True, latency=latency)
    await fake.start()
    async with bench_core() as (core, _url, _tmp):
        for who in [w for w, m in core.roster.items() if m.role in ("steward", "supervisor")]:
            core.roster.pop(who)
        async with telegram_through_outbox(core, fake) as reader:
            # on the roster once the bot is up: setting 15,000 command menus at start (one
            # setMyCommands each) is not what is measured here
            tabards_on_telegram(core, FIRST_ID, 1000, posts)
            yield core, fake, reader
    await fake.stop()


async def keep_reporting(core: Core, reports: int) -> None:
    """Control reports `reports` incidents, each a new one (the clock moves on 11 minutes)."""
    for k in range(reports):
        core.clock.advance(timedelta(minutes=11))
        await core.handle(Command("console", "control", "control",
                                  f"/incident missile @stb_walkway s3 bench {k}",
                                  f"bench-inc:{k}"))


ALERT = -1001000000077  # the ground's stewards' alert channel
TG_CONTROL, SLACK_CONTROL = -1001000000001, "C0CONTROL"  # config/channels.toml: control
REPORT_AFTER_S = 3.0


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank)."""
    times = sorted(values)
    return times[max(0, -(-95 * len(times) // 100) - 1)] if times else float("nan")


async def until(check: Callable[[], Awaitable[bool]], timeout: float) -> None:
    """Wait (bounded) for the bot to have taken in what the fake sent it."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.05)


def stage(name: str, since: float) -> None:
    """Progress on stderr (the figures go to stdout)."""
    print(f"[{time.monotonic() - since:7.1f}s] {name}", file=sys.stderr, flush=True)


async def run(stewards: int, outside: int, unlinked: int, taps: int,
              latency: float) -> dict[str, float | int]:
    """EVACUATE to the whole ground: one channel post, DMs to those outside the channel."""
    began = time.monotonic()
    linked = stewards - unlinked  # the rest of the rota has no account to reach
    posts = [("steward", ZONES[i % len(ZONES)]) for i in range(linked)]
    slack = FakeSlack(enforce_limits=True)
    await slack.start()
    async with on_telegram(latency, posts) as (core, fake, reader):
        stage("telegram up", began)
        adapter = slack_for(core, core.settings.model_copy(update={
            "slack_bot_token": SecretStr("xoxb-bench"), "slack_signing_secret":
            SecretStr("bench-signing"), "slack_api_url": slack.api_url}))
        await adapter.start()
        core.notifier.channels = {**core.notifier.channels,
                                  "alert": {"telegram": [str(ALERT)]}}
        fake.add_chat(ALERT, "channel", "Stewards")
        await fake.push(fake.bot_member_update(ALERT, True))
        members = linked - outside
        for i in range(members):
            await fake.push(fake.member_update(ALERT, FIRST_ID + i, True))
        await until(lambda: _count(core, members), timeout=60 + members / 50)
        stage("joined", began)

        ask = await core.handle(say("/evacuate all fire in the east stand", 1))
        assert ask is not None and ask.reply.ok, ask
        confirm = next(b.command for row in ask.reply.buttons for b in row
                       if "now" in b.label)
        fake.calls.clear()
        t0 = time.monotonic()
        done = await core.handle(say(confirm, 2))
        assert done is not None and done.reply.ok, done.reply.text
        bid = done.reply.title.split()[-1]
        await asyncio.sleep(max(0.0, t0 + REPORT_AFTER_S - time.monotonic()))
        reporter = FIRST_ID + linked - 1
        sent_at = time.monotonic()
        await fake.push(fake.message_update(reporter, "/incident medical @stb_upper s5 "
                                                      "not breathing"))
        ids = range(FIRST_ID, FIRST_ID + linked)
        await fake.wait_for(lambda _c: all(fake.first_reached(u, "EVACUATE") for u in ids),
                            timeout=linked / 25 + 60)
        reach = [fake.first_reached(u, "EVACUATE") - t0 for u in ids]  # type: ignore[operator]
        stage("reached", began)

        def card(calls: list[Any]) -> list[Any]:
            return [c for c in calls if c.ok and c.method == "sendMessage" and
                    c.params.get("chat_id") == TG_CONTROL and "INC-" in str(c.params["text"])]

        tg_card = (await fake.wait_for(card, timeout=60))[0].at - sent_at
        sl = await slack.wait_for(lambda: [c for c in slack.of("chat.postMessage")
                                           if c.ok and c.params.get("channel") == SLACK_CONTROL
                                           and "INC-" in str(c.params)], timeout=60)
        slack_card = sl[0].at - sent_at
        stage("cards", began)

        # every steward taps "I have it": on the channel post, or on their DM
        tapped = len(fake.calls)
        post = next(m for (c, _), m in fake.messages.items() if c == ALERT)
        data = post["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        tappers = [*ids[members:], *ids[:min(members, max(0, taps - outside))]][:taps]
        for u in tappers:
            msg = post if u < FIRST_ID + members else next(
                m for (c, _), m in fake.messages.items() if c == u and "EVACUATE" in
                m.get("text", ""))
            await fake.push(fake.callback_update(u, msg, data))
        stage("tapped", began)
        state = Stewarding(core.store.gateway)
        fx = (await core.active_fixture()).id  # type: ignore[union-attr]

        async def all_acked() -> bool:
            bc = await state.broadcast(fx, bid)
            return bc is not None and len(bc.acked) >= len(tappers)

        await until(all_acked, timeout=60 + len(tappers) / 10)
        stage("acked", began)
        await asyncio.wait_for(reader.drain(), 120)
        acked = len((await state.broadcast(fx, bid)).acked)  # type: ignore[union-attr]
        ack_messages = sum(1 for c in fake.calls[tapped:] if c.ok and c.method.startswith(
            "send") and int(c.params.get("chat_id", 0)) >= FIRST_ID  # a steward's chat,
            and c.params["chat_id"] != reporter)  # not the reporter's answer come late
        lane_free = await state.lane() is None
        await adapter.stop()
    await slack.stop()
    return {"stewards": stewards, "in_channel": members, "dm_outside": outside,
            "reach_p95_s": round(p95(reach), 2), "reach_max_s": round(max(reach), 2),
            "telegram_control_p95_during_s": round(tg_card, 2),
            "slack_control_p95_during_s": round(slack_card, 2),
            "ack_messages_sent": ack_messages, "acked": acked,
            "telegram_429": fake.too_many, "slack_429": slack.too_many,
            "unreached_listed": stewards - linked, "lane_released": int(lane_free)}


async def _count(core: Core, members: int) -> bool:
    got = await Stewarding(core.store.gateway).chat_members("telegram", [str(ALERT)])
    return len(got) >= members


EXIT_ZONES = ("gate_a", "gate_away", "gate_c", "gate_e", "gate_f")  # exit posts (kind gate)
INSIDE = ("stb_upper", "stb_lower", "stb_walkway", "bbs_lower", "bms_lower", "ws_lower")
MISSING = ("/missing age=7 desc=red coat, blue cap, about 120cm, fair hair seen=gate c "
           "at=19:20")


async def missing(stewards: int, supervisors: int, exits: int, reports: int,
                  latency: float) -> dict[str, float | int]:
    """A /missing report on a matchday deployment: how long until each supervisor and exit
    steward has it on the fake Telegram (the rest of the stewards are not told)."""
    posts = [("supervisor" if i < supervisors else "steward",
              EXIT_ZONES[i % len(EXIT_ZONES)] if supervisors <= i < supervisors + exits
              else INSIDE[i % len(INSIDE)]) for i in range(stewards)]
    targeted = supervisors + exits
    async with on_telegram(latency, posts) as (core, fake, reader):
        fake.calls.clear()
        t0 = time.monotonic()
        done = await core.handle(say(MISSING, 1))
        assert done is not None and done.reply.ok, done.reply.text
        await keep_reporting(core, reports)  # meanwhile

        def received() -> dict[int, float]:
            first: dict[int, float] = {}
            for c in fake.calls:
                if (c.ok and c.method == "sendMessage" and "MISSING" in str(
                        c.params.get("text", "")) and int(c.params["chat_id"]) >= FIRST_ID):
                    first.setdefault(int(c.params["chat_id"]), c.at - t0)
            return first

        await fake.wait_for(lambda _calls: len(received()) >= targeted,
                            timeout=targeted / PER_SECOND * 3 + 30)
        got = received()
        await asyncio.wait_for(reader.drain(), 120)
    times = sorted(got.values())
    worst = p95(times)
    floor = targeted / PER_SECOND
    wrong = sum(1 for chat in got if not chat - FIRST_ID < targeted)
    return {"stewards": stewards, "missing_targeted": targeted, "missing_delivered": len(got),
            "missing_to_others": wrong, "missing_alert_p95_s": round(worst, 2),
            "missing_alert_max_s": round(times[-1], 2), "missing_floor_s": round(floor, 2),
            "missing_ratio": round(times[-1] / floor, 3), "telegram_429": fake.too_many}


SO = 299_999_999  # the safety officer who sends it, on Telegram
ARCHIVE = "-1009999999999"  # a private channel only the bot posts in (in-doubt lookups)


async def respawn(rig: object, timeout: float = 180.0) -> None:
    """Start the bot again and wait until it polls Telegram (the dead one's polling lease
    runs out first, and it sets every steward's command menu at start)."""
    import subprocess

    polls = rig.tg.polls  # type: ignore[attr-defined]
    log = (rig.tmp / "bot.log").open("ab")  # type: ignore[attr-defined]
    rig.proc = subprocess.Popen(  # type: ignore[attr-defined]
        [sys.executable, "-m", "bot.cli", "run"], cwd=Path(__file__).resolve().parent.parent,
        env=rig.env(), stdout=log, stderr=log)  # type: ignore[attr-defined]
    end = time.monotonic() + timeout
    while rig.tg.polls <= polls + 1:  # type: ignore[attr-defined]
        if time.monotonic() > end:
            raise RuntimeError("the bot did not start again")
        await asyncio.sleep(0.05)


async def killed(stewards: int, kill_after: int, settle: float) -> dict[str, float | int]:
    """EVACUATE from the real bot process, kill -9 mid-way, restart: lost and duplicates."""
    import os

    from rigs.botproc import STEWARD0, Rig

    os.environ["MATCHDAY_TELEGRAM_ARCHIVE_CHAT"] = ARCHIVE  # read by the bot process
    rig = Rig(stewards)
    await rig.start()
    with (rig.cfg / "roster.toml").open("a") as f:
        f.write(f'\n[[user]]\nplatform = "telegram"\nid = "{SO}"\n'
                'name = "Safety Officer"\nrole = "safety_officer"\n')
    got = lambda: [c for c in rig.tg.calls if c.ok and c.method == "sendMessage"  # noqa: E731
                   and "EVACUATE ·" in str(c.params.get("text"))
                   and STEWARD0 <= int(c.params["chat_id"]) < STEWARD0 + stewards]
    try:
        await rig.spawn()
        await rig.tg.push(rig.tg.message_update(SO, "/evacuate all bench"))
        ask = await rig.tg.wait_for(lambda calls: [
            c for c in calls if c.ok and c.params.get("chat_id") == SO
            and "Confirm" in str(c.params.get("text"))], timeout=30)
        rows = ask[-1].params["reply_markup"]["inline_keyboard"]
        data = next(b["callback_data"] for row in rows for b in row if "now" in b["text"])
        msg = next(m for (c, _), m in rig.tg.messages.items()
                   if c == SO and "Confirm" in m.get("text", ""))
        t0 = time.monotonic()
        await rig.tg.push(rig.tg.callback_update(SO, msg, data))
        await rig.tg.wait_for(lambda _c: len(got()) >= kill_after, timeout=120)
        rig.kill9()
        before = len(got())
        await respawn(rig)
        end = time.monotonic() + settle
        while time.monotonic() < end and len({c.params["chat_id"] for c in got()}) < stewards:
            await asyncio.sleep(0.5)
        elapsed = time.monotonic() - t0
        per: dict[int, int] = {}
        for c in got():
            per[int(c.params["chat_id"])] = per.get(int(c.params["chat_id"]), 0) + 1
        return {"stewards": stewards, "killed_after": before,
                "broadcast_s_with_restart": round(elapsed, 2),
                "lost": stewards - len(per), "duplicates": sum(n - 1 for n in per.values()),
                "telegram_429": rig.tg.too_many}
    finally:
        await rig.stop()
        os.environ.pop("MATCHDAY_TELEGRAM_ARCHIVE_CHAT", None)


def main() -> None:
    ap = cli.parser(__doc__)
    ap.add_argument("--stewards", type=int, default=1000)
    ap.add_argument("--reports", type=int, default=20, help="during --missing")
    ap.add_argument("--outside", type=int, default=20,
                    help="linked stewards not in the alert channel (a DM each)")
    ap.add_argument("--taps", type=int, default=1000,
                    help="stewards who tap \"I have it\" (the DM'd ones first)")
    ap.add_argument("--unlinked", type=int, default=50,
                    help="rota stewards with no linked account")
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--missing", action="store_true",
                    help="a /missing report to the supervisors and exit posts instead")
    ap.add_argument("--supervisors", type=int, default=40)
    ap.add_argument("--exits", type=int, default=60)
    ap.add_argument("--kill", action="store_true", help="kill -9 the bot mid-broadcast")
    ap.add_argument("--kill-after", type=int, default=400)
    ap.add_argument("--settle", type=float, default=120.0)
    a = cli.parse(ap, {"stewards": 60, "outside": 5, "unlinked": 5, "taps": 60, "reports": 3,
                       "supervisors": 4, "exits": 6, "kill_after": 20, "settle": 30.0})
    if a.kill:
        job = killed(a.stewards, a.kill_after, a.settle)
    elif a.missing:
        job = missing(a.stewards, a.supervisors, a.exits, a.reports, a.latency_ms / 1000)
    else:
        job = run(a.stewards, a.outside, a.unlinked, a.taps, a.latency_ms / 1000)
    figures = asyncio.run(job)
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
