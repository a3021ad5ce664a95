"""The real bot (`matchday run`) as a child process on a Redis of its own, against the
limit-enforcing fake Bot API and fake Slack in this process (delivery benches, crash test)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bot.app import build_core
from bot.domain.clock import SystemClock
from bot.domain.incident.incident_model import Incident
from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from bot.store.base import fx_prefix
from rigs.fakes.slack_api import RESPONSE_HOSTS, FakeSlack
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from rigs.net import free_port

ROOT = Path(__file__).resolve().parent.parent

TG_CONTROL = -1001000000001
SLACK_CONTROL = "C0CONTROL"
STEWARD0 = 300000001
ZONES = ["stb_lower", "stb_upper", "stb_walkway", "stb_concourse", "seg_ne", "away_upper",
         "bbs_lower", "bbs_upper", "bbs_walkway", "bms_lower", "bms_upper", "bms_concourse",
         "ws_lower", "ws_upper", "ws_walkway", "pitch_north", "pitch_east", "gate_a",
         "gate_away", "gate_c", "gate_e", "gate_f", "stratford", "outside_bridge",
         "outside_coach", "pudding_mill"]
TYPES = ["missile", "pyro", "pitch_incursion", "disorder", "antisocial", "discriminatory",
         "alcohol", "drugs", "criminal_damage", "medical", "safeguarding", "entry", "drone",
         "ejection", "persistent_standing", "crowd_density", "other"]


def names(inc: str) -> re.Pattern[str]:
    """Matches text naming exactly this incident id."""
    return re.compile(rf"\b{re.escape(inc)}\b")


class Rig:
    """Fakes + Redis + config + the bot process."""

    def __init__(self, stewards: int) -> None:
        self.stewards = stewards
        self.tmp = Path(tempfile.mkdtemp(prefix="md-bench-"))
        self.tg = FakeTelegram(record=True, enforce_limits=True)
        self.slack = FakeSlack(enforce_limits=True)
        self.redis = EmbeddedRedis(self.tmp / "redis", appendfsync="everysec")
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.store: Store | None = None
        self.fixture = ""

    async def start(self) -> None:
        """Redis, fakes, config (roster with the stewards), the active fixture."""
        self.url = os.environ.get("REDIS_URL") or self.redis.start()
        await self.tg.start()
        await self.slack.start()
        cfg = self.tmp / "config"
        shutil.copytree(ROOT / "config", cfg)
        with (cfg / "roster.toml").open("a") as f:
            for i in range(self.stewards):
                f.write(f'\n[[user]]\nplatform = "telegram"\nid = "{STEWARD0 + i}"\n'
                        f'name = "Bench steward {i}"\nrole = "steward"\n'
                        f'zone = "{ZONES[i % len(ZONES)]}"\n')
        self.cfg = cfg
        self.store = Store.from_url(self.url)
        await self.store.gateway.r.flushdb()
        settings = load_settings(REDIS_URL=self.url, MATCHDAY_CONFIG_DIR=str(cfg),
                                 MATCHDAY_DATA_DIR=str(self.tmp / "data"))
        core = build_core(self.store, settings, SystemClock(), cache_ttl=0)
        self.fixture = (await ensure_sample_fixture(core)).id

    def env(self) -> dict[str, str]:
        return {**os.environ, "REDIS_URL": self.url, "MATCHDAY_CONFIG_DIR": str(self.cfg),
                "MATCHDAY_DATA_DIR": str(self.tmp / "data"), "TELEGRAM_BOT_TOKEN": TOKEN,
                "TELEGRAM_BASE_URL": self.tg.base_url, "SLACK_BOT_TOKEN": "xoxb-bench",
                "SLACK_SIGNING_SECRET": "bench-secret", "SLACK_API_URL": self.slack.api_url,
                "SLACK_RESPONSE_HOSTS": RESPONSE_HOSTS, "PORT": str(free_port()),
                "PYTHONUNBUFFERED": "1"}

    async def spawn(self) -> None:
        """Start `matchday run` and wait until it polls Telegram."""
        polls = self.tg.polls
        log = (self.tmp / "bot.log").open("ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run"], cwd=ROOT,
                                     env=self.env(), stdout=log, stderr=log)
        for _ in range(400):
            if self.tg.polls > polls + 1:
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"bot did not start; see {self.tmp / 'bot.log'}")

    def kill9(self) -> None:
        """SIGKILL the bot: no shutdown code runs."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            # waited on beside the loop: the fakes it serves answer the bot's last calls
            try:
                await asyncio.to_thread(self.proc.wait, 15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        await self.tg.stop()
        await self.slack.stop()
        if self.store is not None:
            await self.store.close()
        if not os.environ.get("REDIS_URL"):
            self.redis.stop()

    # ------------------------------------------------------------------ what people saw
    def tg_texts(self, chat: int, methods: tuple[str, ...] = ("sendMessage",
                                                              "editMessageText")
                 ) -> list[tuple[float, str, Any]]:
        return [(c.at, str(c.params.get("text", "")), c) for c in self.tg.calls
                if c.ok and c.method in methods and str(c.params.get("chat_id")) == str(chat)]

    def slack_texts(self, channel: str) -> list[tuple[float, str]]:
        import json

        out = []
        for c in self.slack.calls:
            if c.ok and c.method in ("chat.postMessage", "chat.update") and \
                    str(c.params.get("channel")) == channel:
                out.append((c.at, json.dumps(c.params)))
        return out

    def slack_ok(self, since: int = 0) -> list[tuple[float, str]]:
        return self.slack_texts(SLACK_CONTROL)

    async def incidents(self) -> list[Incident]:
        assert self.store is not None
        key = fx_prefix(self.fixture, self.store.gateway.space) + "all"
        ids = await self.store.gateway.r.zrange(key, 0, -1)
        out = []
        for n in ids:
            h = await self.store.incident(self.fixture, int(n))
            if h:
                out.append(h)
        return out


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
