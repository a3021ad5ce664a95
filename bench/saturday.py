"""A national Saturday on one deployment: 80 live fixtures, each with its own control, command,
police and stewards chats on Telegram and Slack (per-fixture sections of channels.toml), a
background of 1 report a minute per fixture, and three simultaneous flashpoints (300 reports in
60 s each), on a 3-master Redis Cluster with a replica per master and 3 bot replicas
(`matchday run --webhook --http`, updates posted round-robin as a load balancer would), against
the fake Bot API and fake Slack enforcing the platforms' documented limits (loopback only).

First a baseline: one extra fixture alone, a report every 2 s, on the same deployment; then
the Saturday. Per fixture, the seconds from a steward's "Logged INC-n" to the first message
naming INC-n in that fixture's control chat, per platform; the worst fixture's p95 is printed.
Also: lost (answered Logged, not in the store), cross_fixture (a message carrying one
fixture's report marker in another fixture's chat), 429s, CPU per bot replica (utime+stime
from /proc over the run), the busiest Telegram/Slack rates against the limits that bind.

`--fault pause` stops the master serving the first flashpoint fixture's slot (SIGSTOP for
PAUSE_S, then SIGCONT: its replica is promoted meanwhile); `--fault kill` kills it (SIGKILL);
either a third of the way into the flashpoints. The worst fixture's control p95 is then also
printed for the incidents logged before the fault and for those logged from it on.

`--clubs N` (N >= 2): the same Saturday on a deployment of N clubs (#39). Fixture i belongs to
club i mod N; each club is registered with `matchday club add` (its secrets in the bot
processes' environment, as env: references), has its own bot token on the fake Bot API, its own
workspace on the fake Slack and its own config directory (config/clubs/<club>/: its stewards,
its fixtures' audiences); its fixtures and stewards' choices are written in its key space, and
updates are posted to /c/<club>/telegram with its webhook secret. Printed besides:
`cross_club` (a message in one club's chat sent by another club's bot or workspace, or carrying
one club's marker sent by another club's; goal 0); 429s and the busiest rates are per bot token
and per workspace.

With clubs (or `--evacuate N` without), a ground's EVACUATE during the flashpoints
(bench/ground_evacuation.py): fixture 3's club has N more stewards (1,000; 30 in --smoke) of
whom all but `--evacuate-outside` joined the fixture's alert channel (chat_member updates
through the webhook), and a safety officer sends /evacuate and taps its confirm a little into
the flashpoints; every steward then taps "I have it". Printed: `reach_p95_s_evacuate` (the
confirm tap to each targeted steward's phone: the channel post reaches every member when the
fake accepts it; goal <= 2), the reached, acknowledged and the messages the taps caused.

Usage: python bench/saturday.py [--fixtures 80] [--minutes 3] [--replicas 3] [--quick]
[--fault none|pause|kill] [--clubs N] [--evacuate N] [--smoke]
(--smoke: 4 fixtures, 2 replicas, flashpoints of 6 reports in 3 s)
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bench.ground_evacuation import (  # noqa: E402
    SO0,
    Evacuation,
    alert_section,
    roster_line,
    zone_of,
)
from bot.adapters.telegram.webhook import SECRET_HEADER  # noqa: E402
from bot.app import build_core  # noqa: E402
from bot.domain.clock import SystemClock  # noqa: E402
from bot.domain.fixture.fixture_model import slug  # noqa: E402
from bot.domain.messages import Command  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store.base import fx_prefix  # noqa: E402
from rigs.botproc import ROOT, STEWARD0, TYPES, ZONES, percentile  # noqa: E402
from rigs.fakes.slack_api import RESPONSE_HOSTS, FakeSlack  # noqa: E402
from rigs.fakes.telegram_api import TOKEN, FakeTelegram  # noqa: E402
from rigs.net import free_port  # noqa: E402
from rigs.topology import Topology, start_cluster  # noqa: E402

SECRET = "saturday-secret"
TG_GLOBAL_PER_S = 30  # one bot token, every chat
TG_GROUP_PER_MIN = 20  # per group chat
# Slack limits each method apart (bot/delivery/ratelimit.py DEFAULT_LIMITS): chat.postMessage
# about 1/s per channel (no workspace-wide figure: the bot does not pace one), chat.update
# Tier 3, paced to 50/min across the workspace (and at most 5 in any 6 s)
SLACK_POSTS_PER_S = 1  # per channel
SLACK_UPDATES_PER_MIN = 50  # per workspace
PAUSE_S = 8.0  # a master's SIGSTOP in --fault pause (as in the failover reports of #34)
GOAL_S = 5.0
FLASHPOINTS = 3
EVAC_STEWARDS, EVAC_SMOKE = 1000, 30  # a ground's EVACUATE (--clubs), and in --smoke
BG_STEWARDS = 2
AUDS = ("control", "command", "police", "stewards", "summary")
LOGGED = re.compile(r"Logged (INC-\d+)")
ANSWER = re.compile(r"Logged INC-\d+|Added to INC-\d+|Already logged as INC-\d+")
INC = re.compile(r"\bINC-\d+\b")
MARK = re.compile(r"\bzq(\d{3})\b")
TG_SENDS = ("sendMessage", "editMessageText", "sendPhoto", "sendDocument", "sendMediaGroup",
            "pinChatMessage", "unpinChatMessage")


def tg_chat(i: int, aud: str) -> str:
    """Fixture i's Telegram group for an audience."""
    return str(-(1_005_000_000_000 + i * 10 + ("control", "command", "stewards").index(aud)))


def slack_chan(i: int, aud: str) -> str:
    """Fixture i's Slack channel for an audience."""
    return f"C{i:03d}{aud[:3].upper()}"


@dataclass(frozen=True)
class Clubs:
    """A deployment of `n` clubs (n >= 2; 0: the one-club deployment): fixture i is club
    i mod n's; each club's id, secrets (as the bot processes' environment holds them), bot
    token and Slack workspace."""

    n: int = 0

    def of(self, i: int) -> int:
        return i % self.n if self.n else 0

    @staticmethod
    def id(c: int) -> str:
        return f"club{c:03d}"

    @staticmethod
    def token(c: int) -> str:
        return f"{800100000 + c}:CLUB{c:03d}secret-token-for-the-fake-api-bench"

    @staticmethod
    def hook(c: int) -> str:
        return f"club{c:03d}-webhook-secret"

    @staticmethod
    def team(c: int) -> str:
        return f"T0CLUB{c:03d}"

    @staticmethod
    def slack_token(c: int) -> str:
        return f"xoxb-club{c:03d}-token"

    @staticmethod
    def sign(c: int) -> str:
        return f"club{c:03d}-signing-secret"

    def env(self) -> dict[str, str]:
        """Every club's secrets, named as `matchday club add` is told (env:CLUBnnn_TG...)."""
        out = {}
        for c in range(self.n):
            up = self.id(c).upper()
            out.update({f"{up}_TG": self.token(c), f"{up}_HOOK": self.hook(c),
                        f"{up}_SLACK": self.slack_token(c), f"{up}_SIGN": self.sign(c)})
        return out

    def add_args(self, c: int) -> list[str]:
        up = self.id(c).upper()
        return ["club", "add", self.id(c), "--name", f"Club {c:03d}",
                "--telegram-token", f"env:{up}_TG", "--telegram-secret", f"env:{up}_HOOK",
                "--slack-token", f"env:{up}_SLACK",
                "--slack-signing-secret", f"env:{up}_SIGN"]


def fixture_section(fx: str, i: int) -> str:
    """channels.toml: every audience of fixture i in its own chats."""
    rows = {
        "control": ("control", "safety_officer"),
        "command": ("safety_officer", "police_commander", "control"),
        "police": ("police_liaison", "police_commander"),
        "stewards": ("steward", "supervisor"),
        "summary": ("safety_officer", "police_commander", "control"),
    }
    chats = {
        "control": ([tg_chat(i, "control")], [slack_chan(i, "control")]),
        "command": ([tg_chat(i, "command")], [slack_chan(i, "command")]),
        "police": ([], [slack_chan(i, "police")]),
        "stewards": ([tg_chat(i, "stewards")], []),
        "summary": ([tg_chat(i, "command")], [slack_chan(i, "command"),
                                                slack_chan(i, "control")]),
    }
    out = ""
    for aud in AUDS:
        tg, sl = chats[aud]
        out += (f'\n[fixtures."{fx}".audiences.{aud}]\nreaders = {json.dumps(list(rows[aud]))}\n'
                f"telegram = {json.dumps(tg)}\nslack = {json.dumps(sl)}\n")
    return out


@dataclass
class Plan:
    """Who reports into which fixture, and when (seconds from the start of a phase)."""

    fixtures: int
    steward_fx: dict[int, int] = field(default_factory=dict)  # Telegram user -> fixture index
    by_fx: dict[int, list[int]] = field(default_factory=dict)

    def add_stewards(self, i: int, n: int) -> list[int]:
        users = [STEWARD0 + len(self.steward_fx) + k for k in range(n)]
        for u in users:
            self.steward_fx[u] = i
        self.by_fx.setdefault(i, []).extend(users)
        return users


def report(i: int, k: int) -> str:
    """A one-line report into fixture i carrying its marker zqNNN; k keeps type@zone apart
    (identical ones within 10 minutes would merge)."""
    sev = 5 if k == 150 else 4 if k % 9 == 0 else 2 + k % 2
    return (f"/incident {TYPES[k % len(TYPES)]} @{ZONES[(k * 7) % len(ZONES)]} s{sev} "
            f"zq{i:03d} report {k}")


class Replica:
    """One `matchday run --webhook --http` process."""

    def __init__(self, name: str, env: dict[str, str], tmp: Path) -> None:
        self.port = free_port()
        self.log = tmp / f"{name}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "run", "--webhook", "--http"], cwd=ROOT,
            env={**env, "PORT": str(self.port), "MATCHDAY_DATA_DIR": str(tmp / f"data-{name}")},
            stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"

    async def wait_healthy(self, http: aiohttp.ClientSession, timeout: float = 90,
                           clubs: bool = False) -> None:
        """Until /healthz answers 200 (with clubs: and every club is up, not starting)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"replica exited; see {self.log}")
            try:
                async with http.get(self.url + "/healthz") as resp:
                    if resp.status == 200 and (
                            not clubs or json.loads(await resp.text()).get("status") == "ok"):
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
        raise RuntimeError(f"replica not healthy; see {self.log}")

    def cpu_s(self) -> float:
        """utime + stime of the process so far, in seconds."""
        return cpu_of(self.proc.pid)

    def terminate(self) -> None:
        """Ask it to stop (SIGTERM)."""
        if self.proc.poll() is None:
            self.proc.terminate()

    async def stopped(self) -> None:
        """Wait until it has stopped (SIGKILL after 20 s), beside the loop: the fakes on this
        loop must answer its last calls (a blocking wait stalled every stop 20 s)."""
        try:
            await asyncio.to_thread(self.proc.wait, 20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cpu_of(pid: int) -> float:
    """utime + stime of a process, seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Seen:
    """What people saw: Logged answers per (fixture, INC), first sighting in each fixture's
    control chats, answers per steward, markers in the wrong fixture's chats."""

    def __init__(self, tg: FakeTelegram, slack: FakeSlack, plan: Plan,
                 clubs: Clubs = Clubs()) -> None:
        self.tg, self.slack, self.plan, self.clubs = tg, slack, plan, clubs
        # who sends: (club, its bot's state) per Telegram bot and Slack workspace
        self.tg_src: list[tuple[int, FakeTelegram]] = (
            [(c, tg.bot(clubs.token(c))) for c in range(clubs.n)] if clubs.n else [(0, tg)])
        self.sl_src: list[tuple[int, FakeSlack]] = (
            [(c, slack.workspace(clubs.team(c))) for c in range(clubs.n)] if clubs.n
            else [(0, slack)])
        self._at = {id(f): 0 for _, f in self.tg_src + self.sl_src}
        self.cross_club: list[str] = []
        self.tg_owner = {tg_chat(i, a): i for i in range(plan.fixtures)
                         for a in ("control", "command", "stewards")}
        self.sl_owner = {slack_chan(i, a): i for i in range(plan.fixtures)
                         for a in ("control", "command", "police")}
        self.logged: dict[tuple[int, str], float] = {}
        self.tg_ctl: dict[tuple[int, str], float] = {}
        self.sl_ctl: dict[tuple[int, str], float] = {}
        self.answers = 0
        self.refused = 0  # "NOT logged" / "NOT CONFIRMED": the steward is told to send again
        self.held = 0  # "HELD, not confirmed": written, no replica has it yet (a slot's
        # master died with its only replica promoted: nothing to confirm it until one is back)
        self.cross: list[str] = []

    def tg_calls(self) -> list[Any]:
        """Every call any bot token made."""
        return [c for _, f in self.tg_src for c in f.calls]

    def sl_calls(self) -> list[Any]:
        """Every call in any workspace."""
        return [c for _, f in self.sl_src for c in f.calls]

    def scan(self) -> None:
        for club, bot in self.tg_src:
            self._scan_tg(club, bot)
        for club, ws in self.sl_src:
            self._scan_sl(club, ws)

    def _scan_tg(self, club: int, bot: FakeTelegram) -> None:
        calls = bot.calls
        for c in calls[self._at[id(bot)]:]:
            if not c.ok or c.method not in ("sendMessage", "editMessageText"):
                continue
            chat, text = str(c.params.get("chat_id", "")), str(c.params.get("text", ""))
            if not chat.startswith("-"):
                fx = self.plan.steward_fx.get(int(chat))
                if fx is not None:
                    self._club(club, self.clubs.of(fx), text, f"telegram {chat} (steward)")
                if fx is not None and c.method == "sendMessage":
                    self.answers += len(ANSWER.findall(text))
                    self.refused += text.startswith(("NOT logged", "NOT CONFIRMED"))
                    self.held += text.startswith("HELD")
                    m = LOGGED.search(text)
                    if m:
                        self.logged.setdefault((fx, m.group(1)), c.at)
            elif chat in self.tg_owner:
                owner = self.tg_owner[chat]
                self._cross(owner, text, f"telegram {chat}")
                self._club(club, self.clubs.of(owner), text, f"telegram {chat}")
                if chat == tg_chat(owner, "control"):
                    for inc in INC.findall(text):
                        self.tg_ctl.setdefault((owner, inc), c.at)
        self._at[id(bot)] = len(calls)

    def _scan_sl(self, club: int, ws: FakeSlack) -> None:
        scalls = ws.calls
        for c in scalls[self._at[id(ws)]:]:
            chan = str(c.params.get("channel", ""))
            if c.ok and c.method in ("chat.postMessage", "chat.update") and chan in self.sl_owner:
                owner, text = self.sl_owner[chan], json.dumps(c.params)
                self._cross(owner, text, f"slack {chan}")
                self._club(club, self.clubs.of(owner), text, f"slack {chan}")
                if chan == slack_chan(owner, "control"):
                    for inc in INC.findall(text):
                        self.sl_ctl.setdefault((owner, inc), c.at)
        self._at[id(ws)] = len(scalls)

    def _club(self, sender: int, owner: int, text: str, where: str) -> None:
        """A message the bot of club `sender` sent into a chat of club `owner`: another
        club's chat, or another club's marker, is a cross-club message."""
        if not self.clubs.n:
            return
        if sender != owner:
            self.cross_club.append(f"{where} of {self.clubs.id(owner)} sent by "
                                   f"{self.clubs.id(sender)}'s bot")
            return
        for m in MARK.findall(text):
            if self.clubs.of(int(m)) != sender:
                self.cross_club.append(f"zq{m} ({self.clubs.id(self.clubs.of(int(m)))}) in "
                                       f"{where} sent by {self.clubs.id(sender)}'s bot")

    @property
    def replied(self) -> int:
        """Reports given any answer: Logged (or added), HELD or NOT logged."""
        return self.answers + self.held + self.refused

    def _cross(self, owner: int, text: str, where: str) -> None:
        for m in MARK.findall(text):
            if int(m) != owner:
                self.cross.append(f"zq{m} in {where} (fixture {owner})")

    def missing(self, fixtures: set[int]) -> int:
        """Logged incidents of these fixtures not yet shown in their control chats."""
        return sum((k not in self.tg_ctl) + (k not in self.sl_ctl)
                   for k in self.logged if k[0] in fixtures)

    def p95(self, shown: dict[tuple[int, str], float], fx: int, since: float = 0.0,
            until: float = float("inf")) -> float:
        """p95 seconds from Logged to the control chat, of the incidents logged between
        `since` and `until`; one never shown counts as the time it has waited so far (a
        lower bound)."""
        now = time.monotonic()
        lat = [max(0.0, shown.get(k, now) - at) for k, at in self.logged.items()
               if k[0] == fx and since <= at < until]
        return percentile(lat, 0.95)


def schedule(plan: Plan, fixtures: list[int], minutes: float, flash: list[int],
             flash_at: float, flash_reports: int, flash_s: float = 60.0
             ) -> list[tuple[float, int, str]]:
    """(seconds from start, user, text): background for every fixture (a report a minute;
    under a minute, one report, spread over that time), flashpoints."""
    out = []
    n = len(fixtures)
    spread = 60 * min(1.0, minutes)
    for j, i in enumerate(fixtures):
        users = plan.by_fx[i][:BG_STEWARDS]
        for m in range(max(1, int(minutes))):
            t = m * 60 + spread * j / n  # spread over the minute
            out.append((t, users[m % len(users)], report(i, 1000 + m)))
    for i in flash:
        users = plan.by_fx[i][BG_STEWARDS:]
        for k in range(flash_reports):
            out.append((flash_at + k * flash_s / flash_reports, users[k % len(users)],
                        report(i, k)))
    return sorted(out)


def one_club(_user: int) -> tuple[str, str]:
    """The one-club deployment's webhook path and secret, whoever writes."""
    return "/telegram", SECRET


async def drive(http: aiohttp.ClientSession, tg: FakeTelegram, replicas: list[Replica],
                sched: list[tuple[float, int, str]],
                route: Callable[[int], tuple[str, str]] = one_club) -> None:
    """Post each update at its time to the next replica (round-robin), not waiting for one
    answer before the next post; to the webhook (path, secret) of the writer's club."""
    t0 = time.monotonic()
    tasks: set[asyncio.Task[None]] = set()

    async def post(r: Replica, update: dict[str, Any], user: int) -> None:
        path, secret = route(user)
        try:
            async with http.post(r.url + path, json=update,
                                 headers={SECRET_HEADER: secret}) as resp:
                await resp.read()
                if resp.status != 200:
                    print(f"# post to {path}: HTTP {resp.status}", file=sys.stderr)
        except aiohttp.ClientError as exc:
            print(f"# post failed: {exc}", file=sys.stderr)

    for n, (at, user, text) in enumerate(sched):
        await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))
        task = asyncio.create_task(post(replicas[n % len(replicas)],
                                        tg.message_update(user, text), user))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)


async def settle(seen: Seen, fixtures: set[int], sent: int, seconds: float) -> None:
    """Until every report is answered and shown in both control chats, or time is up."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seen.scan()
        if seen.replied >= sent and seen.missing(fixtures) == 0:
            return
        await asyncio.sleep(1.0)
    seen.scan()


async def fault(topo: Topology, kind: str, key: str, at: float, log: list[str]) -> None:
    """At monotonic time `at`, pause (PAUSE_S) or kill the cluster master serving `key`."""
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    port = topo.master_of(key)
    pid = topo.pid(port)
    if kind == "kill":
        os.kill(pid, signal.SIGKILL)
        log.append(f"SIGKILL of the master on port {port}")
        return
    os.kill(pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(PAUSE_S)
    finally:
        os.kill(pid, signal.SIGCONT)
    log.append(f"SIGSTOP of the master on port {port} for {PAUSE_S:g} s")


async def register(clubs: Clubs, env: dict[str, str], tmp: Path) -> None:
    """`matchday club add` for every club (a few at a time), as an operator would."""
    gate = asyncio.Semaphore(4)

    async def add(c: int) -> None:
        async with gate:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", *clubs.add_args(c), cwd=ROOT,
                env={**env, "MATCHDAY_DATA_DIR": str(tmp / "data-admin")},
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            out, _ = await proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"matchday club add {clubs.id(c)}: {out.decode()[-500:]}")

    await asyncio.gather(*(add(c) for c in range(clubs.n)))


def busiest(times: list[float], window: float) -> float:
    """Most events in any `window` seconds, per second."""
    times.sort()
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while times[lo] < t - window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best / window


def dump(path: Path, seen: Seen, t0: float) -> None:
    """Every call the fakes got, one JSON line each (seconds from the Saturday's start),
    after a line giving that start in wall time (the bots' JSON logs carry wall time)."""
    with path.open("w") as f:
        f.write(json.dumps({"p": "start", "wall": round(time.time() - (time.monotonic() - t0),
                                                         3)}) + "\n")
        for plat, calls, key in (("telegram", seen.tg_calls(), "chat_id"),
                                 ("slack", seen.sl_calls(), "channel")):
            for c in calls:
                f.write(json.dumps({"p": plat, "m": c.method, "chat": str(c.params.get(key)),
                                    "t": round(c.at - t0, 3), "ok": c.ok,
                                    "text": str(c.params.get("text", ""))[:100]}) + "\n")


async def main(a: argparse.Namespace) -> None:
    """Set the Saturday up, run the baseline and the Saturday, print the figures."""
    n_fix, minutes, n_rep, dump_to = a.fixtures, a.minutes, a.replicas, a.dump
    flash_reports, flash_s = a.flash_reports, a.flash_seconds
    tmp = Path(tempfile.mkdtemp(prefix="md-saturday-"))
    plan = Plan(n_fix + 1)  # the last one is the baseline fixture
    base_fx = n_fix
    flash = list(range(min(FLASHPOINTS, n_fix)))
    for i in range(n_fix + 1):
        plan.add_stewards(i, BG_STEWARDS + (a.flash_stewards if i in flash else 0))
    clubs = Clubs(a.clubs if a.clubs >= 2 else 0)
    # a ground's EVACUATE in the flashpoints: a background fixture's N more stewards
    n_evac = a.evacuate if a.evacuate is not None else EVAC_STEWARDS if clubs.n else 0
    if a.smoke:
        n_evac = min(n_evac, EVAC_SMOKE)
    evac_i = FLASHPOINTS if n_evac and n_fix > FLASHPOINTS else None
    zones: dict[int, str] = {}
    if evac_i is not None:
        zones = {u: zone_of(k) for k, u in enumerate(plan.add_stewards(evac_i, n_evac))}

    def roster(c: int | None) -> str:
        """roster.toml lines: every steward (of club c's fixtures), the EVACUATE's safety
        officer of its club."""
        out = "".join(roster_line(u, "steward", f"Steward {u} of {i}", zones.get(u, ""))
                      for u, i in plan.steward_fx.items() if c is None or clubs.of(i) == c)
        if evac_i is not None and (c is None or clubs.of(evac_i) == c):
            out += roster_line(SO0 + evac_i, "safety_officer", f"Safety Officer {evac_i}")
        return out
    topo: Topology | None = None
    tg, slack = FakeTelegram(record=True, enforce_limits=True), FakeSlack(enforce_limits=True)
    for c in range(clubs.n):
        tg.add_bot(clubs.token(c))
        slack.add_workspace(clubs.team(c), clubs.slack_token(c), clubs.sign(c))
    replicas: list[Replica] = []
    store: Store | None = None
    t_setup = time.monotonic()
    done = False
    try:
        topo = await asyncio.to_thread(start_cluster, tmp / "cluster", 3, 1)
        await tg.start()
        await slack.start()
        # ---- config: roster of stewards, a section per fixture
        now = datetime.now(UTC).replace(second=0, microsecond=0)
        kickoff = now - timedelta(minutes=30)  # the matches are on
        day = kickoff.strftime("%Y%m%d")
        ids = [f"{slug(f'Home{i:03d}')}-{slug(f'Away{i:03d}')}-{day}" for i in range(n_fix + 1)]
        cfg = tmp / "config"
        shutil.copytree(ROOT / "config", cfg)
        with (cfg / "roster.toml").open("a") as f:
            f.write(roster(None))
        with (cfg / "channels.toml").open("a") as f:
            for i, fx in enumerate(ids):
                if not clubs.n:
                    f.write(fixture_section(fx, i) + (alert_section(fx, i) if i == evac_i
                                                      else ""))
        for c in range(clubs.n):  # each club's own config: its stewards, its fixtures' chats
            own = cfg / "clubs" / clubs.id(c)
            shutil.copytree(ROOT / "config", own)
            with (own / "roster.toml").open("a") as f:
                f.write(roster(c))
            with (own / "channels.toml").open("a") as f:
                for i, fx in enumerate(ids):
                    if clubs.of(i) == c:
                        f.write(fixture_section(fx, i) + (alert_section(fx, i) if i == evac_i
                                                          else ""))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MATCHDAY_", "TELEGRAM_", "SLACK_", "REDIS_"))}
        env.update({"REDIS_URL": topo.url, "MATCHDAY_CONFIG_DIR": str(cfg),
                    "TELEGRAM_BASE_URL": tg.base_url,
                    "TELEGRAM_WEBHOOK_URL": "https://bot.example.test/telegram",
                    "SLACK_API_URL": slack.api_url, "SLACK_RESPONSE_HOSTS": RESPONSE_HOSTS,
                    "PYTHONUNBUFFERED": "1"})
        if dump_to is not None:  # logs with their times, to read beside the calls
            env["MATCHDAY_LOG_FORMAT"] = "json"
        if clubs.n:  # every club's secrets, by the names `matchday club add` is told
            env.update(clubs.env())
            await register(clubs, env, tmp)
        else:
            env.update({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": SECRET,
                        "SLACK_BOT_TOKEN": "xoxb-saturday",
                        "SLACK_SIGNING_SECRET": "sat-secret"})
        # ---- fixtures, added as an admin would; each steward's /fixture use, in the store
        # (a club's in its own key space, from its own config directory)
        store = Store.from_url(topo.url)
        stores: dict[int, Store] = {}
        cores = {}
        for c in range(max(1, clubs.n)):
            stores[c] = Store(store.gateway.for_club(clubs.id(c))) if clubs.n else store
            own = cfg / "clubs" / clubs.id(c) if clubs.n else cfg
            settings = load_settings(REDIS_URL=topo.url, MATCHDAY_CONFIG_DIR=str(own),
                                     MATCHDAY_DATA_DIR=str(tmp / "data"))
            cores[c] = build_core(stores[c], settings, SystemClock(), cache_ttl=0)
        for i, fx in enumerate(ids):
            c = clubs.of(i)
            text = (f"/fixture add Home{i:03d} v Away{i:03d} "
                    f"{kickoff:%Y-%m-%d %H:%M} cat=C")
            r = await cores[c].handle(Command(platform="console", chat="admin", user="admin",
                                              text=text, dedupe_key=f"sat-add:{i}"))
            if r is None or not r.reply.ok or await stores[c].fixture(fx) is None:
                raise RuntimeError(f"fixture {fx} not added: {r.reply.text if r else None}")
        choosers = [*plan.steward_fx.items(), *([(SO0 + evac_i, evac_i)]
                                                if evac_i is not None else [])]
        for u, i in choosers:
            await cores[clubs.of(i)].facades.choices.choose_fixture(ids[i],
                                                                    who=f"telegram:{u}")

        def route(user: int) -> tuple[str, str]:
            c = clubs.of(plan.steward_fx[user])
            return f"/c/{clubs.id(c)}/telegram", clubs.hook(c)
        routing = route if clubs.n else one_club
        # ---- the bot replicas
        replicas = [Replica(f"bot{k}", env, tmp) for k in range(n_rep)]
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            for r in replicas:
                await r.wait_healthy(http, timeout=90 + 3 * clubs.n, clubs=clubs.n > 0)
            evac: Evacuation | None = None
            if evac_i is not None:
                ce = clubs.of(evac_i)
                bot = tg.bot(clubs.token(ce)) if clubs.n else tg
                ground = plan.by_fx[evac_i][-n_evac:]
                # it goes to the fixture's stewards (those who chose it), not to the club's
                # at its other ground
                evac = Evacuation(evac_i, ids[evac_i], bot, ground, list(plan.by_fx[evac_i]),
                                  outside=min(a.evacuate_outside, n_evac))
                turn = itertools.count()
                path, secret = route(ground[0]) if clubs.n else one_club(0)

                async def to_club(update: dict[str, Any]) -> None:
                    # update ids as Telegram gives them: one rising sequence per bot (the
                    # one the Saturday's reports take theirs from; the bot drops a repeat)
                    update["update_id"] = tg.next_update_id()
                    r = replicas[next(turn) % len(replicas)]
                    async with http.post(r.url + path, json=update,
                                         headers={SECRET_HEADER: secret}) as resp:
                        await resp.read()
                        if resp.status != 200:
                            print(f"# evacuate: post to {path}: HTTP {resp.status}",
                                  file=sys.stderr)
                stewarding = cores[ce].facades.stewarding

                async def known() -> int:
                    return len(await stewarding.chat_members("telegram", [str(evac.channel)]))

                async def acked() -> int:  # "I have it" recorded on the EVACUATE
                    return sum(len(b.acked) for b in await stewarding.broadcasts(ids[evac_i])
                               if b.kind == "evacuate")
                await evac.join(to_club, known)
            print(f"setup_s: {time.monotonic() - t_setup:.1f}")
            seen = Seen(tg, slack, plan, clubs)
            if evac is not None:  # its channel is the fixture's: checked for leaks too
                seen.tg_owner[str(evac.channel)] = evac.i
            # ---- baseline: one fixture alone
            n_base = a.baseline_reports
            base = [(2.0 * k, plan.by_fx[base_fx][k % BG_STEWARDS], report(base_fx, 500 + k))
                    for k in range(n_base)]
            await drive(http, tg, replicas, base, routing)
            await settle(seen, {base_fx}, n_base, 30)
            b_tg, b_sl = seen.p95(seen.tg_ctl, base_fx), seen.p95(seen.sl_ctl, base_fx)
            # ---- the Saturday
            cpu0 = [r.cpu_s() for r in replicas]
            redis0 = sum(cpu_of(topo.pid(p)) for p in topo.procs)
            me0 = sum(os.times()[:2])
            t0 = time.monotonic()
            tg429_0 = [f.too_many for _, f in seen.tg_src]
            sl429_0 = [f.too_many for _, f in seen.sl_src]
            answers0 = seen.answers
            refused0, held0, replied0 = seen.refused, seen.held, seen.replied
            flash_at = 0.0 if minutes < 2 else 60.0
            sched = schedule(plan, list(range(n_fix)), minutes, flash, flash_at, flash_reports,
                             flash_s)
            fault_at, faulted = float("inf"), []
            chaos = None
            if a.fault != "none":
                fault_at = t0 + flash_at + flash_s / 3
                key = fx_prefix(ids[0], stores[0].gateway.space) + "obx"
                chaos = asyncio.create_task(fault(topo, a.fault, key, fault_at, faulted))
            evacuating = None
            if evac is not None:  # a little into the flashpoints
                evacuating = asyncio.create_task(evac.run(
                    to_club, t0 + flash_at + 0.4 * flash_s, acked,
                    tap_s=min(20.0, flash_s / 3), timeout=60 + n_evac / 10))
            await drive(http, tg, replicas, sched, routing)
            if chaos is not None:
                await chaos
            if evacuating is not None:
                await evacuating
            load_end = time.monotonic()
            await settle(seen, set(range(n_fix)), replied0 + len(sched), a.settle)
            wall = time.monotonic() - t0
            cpu = [r.cpu_s() - c for r, c in zip(replicas, cpu0, strict=True)]
            redis_cpu = sum(cpu_of(topo.pid(p)) for p in topo.procs) - redis0
            me = sum(os.times()[:2]) - me0
            # ---- figures
            tg_p95 = {i: seen.p95(seen.tg_ctl, i) for i in range(n_fix)}
            sl_p95 = {i: seen.p95(seen.sl_ctl, i) for i in range(n_fix)}

            def worst(d: dict[int, float]) -> tuple[int, float]:
                # a fixture with nothing shown counts as worst (nan sorts as infinite)
                return max(d.items(), key=lambda kv: float("inf") if kv[1] != kv[1] else kv[1])

            wt, ws = worst(tg_p95), worst(sl_p95)
            lost = 0
            for (i, inc), _ in seen.logged.items():
                if await stores[clubs.of(i)].incident(ids[i], int(inc.split("-")[1])) is None:
                    lost += 1
            sat_logged = sum(1 for k in seen.logged if k[0] < n_fix)
            bg = [i for i in range(n_fix) if i not in flash]
            # the Saturday's calls, per bot token and per workspace (one each with one club)
            tg_by = [[c for c in f.calls if c.at >= t0] for _, f in seen.tg_src]
            sl_by = [[c for c in f.calls if c.at >= t0] for _, f in seen.sl_src]
            tg_sends = [c.at for calls in tg_by for c in calls
                        if c.ok and c.method in TG_SENDS]
            sl_calls = [c.at for calls in sl_by for c in calls
                        if c.ok and c.method in ("chat.postMessage", "chat.update")]
            sl_posts: dict[str, list[float]] = {}
            for calls in sl_by:
                for c in calls:
                    if c.ok and c.method == "chat.postMessage":
                        sl_posts.setdefault(str(c.params.get("channel")), []).append(c.at)
            post_peak = max((busiest(v, 10.0) for v in sl_posts.values()), default=0.0)
            flash_ctl = [c.at for calls in tg_by for c in calls
                         if c.ok and c.method in TG_SENDS
                         and str(c.params.get("chat_id")) in {tg_chat(i, "control")
                                                             for i in flash}]
            # the limits bind per bot token and per workspace: the busiest one
            tg_peak = max(busiest([c.at for c in calls if c.ok and c.method in TG_SENDS], 10.0)
                          for calls in tg_by)
            upd_peak_min = max(busiest([c.at for c in calls
                                        if c.ok and c.method == "chat.update"], 60.0)
                               for calls in sl_by) * 60
            tg429 = [f.too_many - n for (_, f), n in zip(seen.tg_src, tg429_0, strict=True)]
            sl429 = [f.too_many - n for (_, f), n in zip(seen.sl_src, sl429_0, strict=True)]
            # every Telegram message the Saturday caused, over the load's own duration
            load_s = max(1.0, load_end - t0)
            tg_need = len(tg_sends) / load_s
            print(f"fixtures: {n_fix}")
            print(f"bot_replicas: {n_rep}")
            print("redis: cluster 3 masters + 1 replica each")
            print(f"minutes: {minutes:g}")
            n_bg = len(sched) - len(flash) * flash_reports
            print(f"reports_sent: {len(sched)} (background {n_bg}"
                  f", flashpoints {len(flash)}x{flash_reports} in {flash_s:g} s)")
            print(f"answered: {seen.answers - answers0}")
            print(f"incidents_logged: {sat_logged}")
            print(f"baseline_telegram_control_p95_s: {b_tg:.2f}")
            print(f"baseline_slack_control_p95_s: {b_sl:.2f}")
            print(f"telegram_control_p95_s_max: {wt[1]:.2f} (fixture {wt[0]}"
                  f"{', flashpoint' if wt[0] in flash else ''}; goal <= {GOAL_S:g})")
            print(f"slack_control_p95_s_max: {ws[1]:.2f} (fixture {ws[0]}"
                  f"{', flashpoint' if ws[0] in flash else ''}; goal <= {GOAL_S:g})")
            print(f"telegram_control_p95_s_max_background: "
                  f"{max((tg_p95[i] for i in bg), default=float('nan')):.2f}")
            print(f"slack_control_p95_s_max_background: "
                  f"{max((sl_p95[i] for i in bg), default=float('nan')):.2f}")
            print(f"ratio_telegram_p95_max_vs_baseline: {wt[1] / max(b_tg, 0.01):.1f}")
            print(f"ratio_slack_p95_max_vs_baseline: {ws[1] / max(b_sl, 0.01):.1f}")
            over_tg = sum(v > GOAL_S or v != v for v in tg_p95.values())
            over_sl = sum(v > GOAL_S or v != v for v in sl_p95.values())
            print(f"fixtures_over_goal: telegram {over_tg}, slack {over_sl}")
            if a.fault != "none":
                print(f"fault: {a.fault} ({'; '.join(faulted) or 'not done'}, "
                      f"{fault_at - t0 - flash_at:.0f} s into the flashpoints; fixture 0's slot)")
                for when, lo, hi in (("before", 0.0, fault_at), ("after", fault_at, float("inf"))):
                    for plat, shown in (("telegram", seen.tg_ctl), ("slack", seen.sl_ctl)):
                        part = {i: seen.p95(shown, i, lo, hi) for i in range(n_fix)
                                if any(k[0] == i and lo <= at < hi
                                       for k, at in seen.logged.items())}
                        fx, p = worst(part) if part else (-1, float("nan"))
                        print(f"{plat}_control_p95_s_max_{when}_fault: {p:.2f} (fixture {fx}"
                              f"{', flashpoint' if fx in flash else ''}; goal <= {GOAL_S:g})")
            keys = [k for k in seen.logged if k[0] < n_fix]
            print(f"never_shown: telegram {sum(k not in seen.tg_ctl for k in keys)}, "
                  f"slack {sum(k not in seen.sl_ctl for k in keys)} (when the bench stopped)")
            print(f"lost: {lost}")
            print(f"not_logged_answers: {seen.refused - refused0} (told NOT logged / NOT "
                  "CONFIRMED: the store did not answer in time)")
            print(f"held_answers: {seen.held - held0} (told HELD, not confirmed: written, no "
                  "replica had it yet)")
            per = " per bot token, the most" if clubs.n else ""
            print(f"telegram_429: {sum(tg429)}" + (f" ({max(tg429)}{per})" if clubs.n else ""))
            for (_, f), n in zip(seen.tg_src, tg429_0, strict=True):
                for why in f.too_many_at[n:][:8]:  # the limit each broke
                    print(f"#   {why}")
            per = " per workspace, the most" if clubs.n else ""
            print(f"slack_429: {sum(sl429)}" + (f" ({max(sl429)}{per})" if clubs.n else ""))
            print(f"cross_fixture: {len(seen.cross)}")
            for line in seen.cross[:5]:
                print(f"#   {line}")
            if clubs.n:
                print(f"clubs: {clubs.n} ({n_fix} fixtures, {n_fix / clubs.n:g} each; a bot "
                      "token, a workspace, a config directory and a key space each)")
                print(f"cross_club: {len(seen.cross_club)} (goal 0)")
                for line in seen.cross_club[:5]:
                    print(f"#   {line}")
            if evac is not None:
                for line in evac.lines(await acked(),
                                       clubs.id(clubs.of(evac.i)) if clubs.n else ""):
                    print(line)
            for k, c in enumerate(cpu):
                print(f"cpu_bot_replica_{k}_s: {c:.1f} ({100 * c / wall:.0f}% of a core)")
            print(f"cpu_redis_6_servers_s: {redis_cpu:.1f}")
            print(f"cpu_bench_and_fakes_s: {me:.1f}")
            print(f"wall_s: {wall:.1f}")
            logs = "".join(r.log.read_text(errors="replace") for r in replicas)
            for label, needle in (("limiter_local_fallbacks",
                                   "unavailable (their slot is not"),
                                  ("store_unavailable_warnings", "store unavailable"),
                                  ("leader_changes", "is now the leader"),
                                  ("delivery_stuck_warnings", "stuck for")):
                print(f"{label}: {logs.count(needle)}")
            print(f"telegram_sends_busiest_10s_per_s: {tg_peak:.1f} (limit {TG_GLOBAL_PER_S}"
                  f" per bot token: {100 * tg_peak / TG_GLOBAL_PER_S:.0f}%)")
            print(f"telegram_sends_per_s_over_load: {tg_need:.1f} ({len(tg_sends)} messages "
                  f"in {load_s:.0f} s of load)")
            print(f"telegram_flashpoint_control_per_min: "
                  f"{busiest(flash_ctl, 60.0) * 60 / max(1, len(flash)):.1f} "
                  f"(limit {TG_GROUP_PER_MIN} per group)")
            print(f"slack_updates_busiest_min: {upd_peak_min:.0f} (chat.update, paced to "
                  f"{SLACK_UPDATES_PER_MIN}/min per workspace: "
                  f"{100 * upd_peak_min / SLACK_UPDATES_PER_MIN:.0f}%)")
            print(f"slack_posts_busiest_channel_10s_per_s: {post_peak:.1f} (chat.postMessage, "
                  f"{SLACK_POSTS_PER_S}/s per channel: {100 * post_peak / SLACK_POSTS_PER_S:.0f}%)")
            print(f"slack_calls_needed_per_min: {60 * len(sl_calls) / load_s:.0f} "
                  f"({len(sl_calls)} posts+updates for {load_s:.0f} s of load, sent by "
                  f"{time.monotonic() - t0:.0f} s)")
            limits = {"telegram": {
                f"Telegram {TG_GLOBAL_PER_S}/s per bot token (all fixtures share it)":
                    tg_peak / TG_GLOBAL_PER_S,
                f"Telegram {TG_GROUP_PER_MIN}/min per group (a flashpoint's control chat)":
                    busiest(flash_ctl, 60.0) * 60 / max(1, len(flash)) / TG_GROUP_PER_MIN},
                "slack": {
                f"Slack chat.update {SLACK_UPDATES_PER_MIN}/min per workspace (all fixtures "
                "share it)": upd_peak_min / SLACK_UPDATES_PER_MIN,
                f"Slack chat.postMessage {SLACK_POSTS_PER_S}/s per channel (the busiest "
                "channel)": post_peak / SLACK_POSTS_PER_S}}
            for plat, p95 in (("telegram", wt[1]), ("slack", ws[1])):
                name, use = max(limits[plat].items(), key=lambda kv: kv[1])
                verdict = (f"goal met ({p95:.1f} s)" if p95 <= GOAL_S else
                           f"goal missed by {p95 - GOAL_S:.1f} s")
                print(f"{plat}_binding_limit: {name} at {100 * use:.0f}% of it; {verdict}")
            done = True
            if dump_to is not None:
                dump(dump_to, seen, t0)
                for r in replicas:
                    shutil.copy(r.log, dump_to.with_name(f"{dump_to.stem}.{r.log.name}"))
    finally:
        for r in replicas:
            r.terminate()
        await asyncio.gather(*(r.stopped() for r in replicas))
        if store is not None:
            await store.close()
        await tg.stop()
        await slack.stop()
        if topo is not None:
            topo.stop()
        if done:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"# kept {tmp} (logs of the bot replicas)", file=sys.stderr)


QUICK = {"fixtures": 10, "minutes": 1.0, "flash_reports": 60, "baseline_reports": 5,
         "settle": 30.0}
SMOKE = {"fixtures": 4, "minutes": 0.1, "replicas": 2, "flash_reports": 6,
         "flash_seconds": 3.0, "flash_stewards": 3, "baseline_reports": 2, "settle": 20.0,
         "evacuate_outside": 3}

if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--fixtures", type=int, default=80)
    ap.add_argument("--minutes", type=float, default=3.0, help="of background load")
    ap.add_argument("--replicas", type=int, default=3, help="bot processes")
    ap.add_argument("--flash-reports", type=int, default=300, help="reports per flashpoint")
    ap.add_argument("--flash-seconds", type=float, default=60.0, help="a flashpoint's span")
    ap.add_argument("--flash-stewards", type=int, default=60, help="reporting in a flashpoint")
    ap.add_argument("--baseline-reports", type=int, default=10, help="2 s apart")
    ap.add_argument("--settle", type=float, default=40.0,
                    help="most seconds to wait for the last answers and cards")
    ap.add_argument("--quick", action="store_true",
                    help="1-minute run: 10 fixtures, flashpoints of 60 reports")
    ap.add_argument("--fault", choices=["none", "pause", "kill"], default="none",
                    help="a Redis fault in the flashpoints: pause (SIGSTOP) or kill the master "
                         "serving the first flashpoint fixture's slot")
    ap.add_argument("--clubs", type=int, default=1,
                    help="clubs on the deployment (>= 2: fixture i is club i mod N's, each "
                         "club its own bot token, workspace, config and key space)")
    ap.add_argument("--evacuate", type=int, default=None,
                    help="stewards of a ground's EVACUATE in the flashpoints (default: 1,000 "
                         "with --clubs, else none; 0: none)")
    ap.add_argument("--evacuate-outside", type=int, default=20,
                    help="of them, not in the alert channel (a direct message each)")
    ap.add_argument("--dump", type=Path, help="write every fake call here (JSON lines), "
                    "and each bot's log beside it (JSON lines, with times)")
    a = cli.parse(ap, SMOKE)
    if a.quick:
        ap.set_defaults(**QUICK)
        a = ap.parse_args()
    asyncio.run(main(a))
