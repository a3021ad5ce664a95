"""A ground's EVACUATE in the middle of a national Saturday (bench/saturday.py, #39): the
ground's stewards joined to its alert channel (their chat_member updates posted through the
club's webhook, as Telegram sends them), a safety officer's /evacuate and its confirm tap
through the webhook as well, then every steward's "I have it". Measured on the club's bot at
the fake Bot API: the seconds from the confirm tap to each targeted steward's phone (the
channel post reaches every member the moment the fake accepts it; a direct message the
others), and what the taps cost (answered on the button: no message)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from rigs.botproc import ZONES, percentile
from rigs.fakes.telegram_api import FakeTelegram

ALERT0 = -1_002_000_000_000  # fixture i's stewards' alert channel: ALERT0 - i
SO0 = 299_000_000  # fixture i's safety officer (Telegram user): SO0 + i
TEXT = "all fire in the east stand, leave by the nearest exit"
GOAL_S = 2.0  # reach p95 with the one-to-many channel post (#39)

Post = Callable[[dict[str, Any]], Awaitable[None]]  # an update to the club's webhook


def alert_channel(i: int) -> int:
    """Fixture i's alert channel."""
    return ALERT0 - i


def alert_section(fx: str, i: int) -> str:
    """channels.toml: fixture i's stewards' alert channel (one post reaches every member)."""
    return (f'\n[fixtures."{fx}".audiences.alert]\nreaders = ["steward", "supervisor"]\n'
            f'telegram = ["{alert_channel(i)}"]\n')


def roster_line(user: int, role: str, name: str, zone: str = "") -> str:
    """roster.toml: one Telegram member."""
    return (f'\n[[user]]\nplatform = "telegram"\nid = "{user}"\nname = "{name}"\n'
            f'role = "{role}"\n' + (f'zone = "{zone}"\n' if zone else ""))


def zone_of(k: int) -> str:
    """The post zone of the ground's k-th evacuation steward."""
    return ZONES[k % len(ZONES)]


@dataclass
class Evacuation:
    """One ground's EVACUATE: fixture `i` (its store id `fx`), its club's bot on the fake,
    the stewards it goes to (`targeted`: every steward who chose the fixture; the club's at
    its other ground are not told) of whom all but `outside` of the ground's own joined the
    alert channel."""

    i: int
    fx: str
    bot: FakeTelegram
    ground: list[int]  # the ground's own evacuation stewards (they join the channel)
    targeted: list[int]  # everyone the EVACUATE goes to
    outside: int = 20
    so: int = 0
    t0: float = 0.0
    reach: dict[int, float] = field(default_factory=dict)
    tapped: int = 0
    taps_from: int = 0  # index into the bot's calls where the taps began
    why: str = ""  # what went wrong, if it did

    def __post_init__(self) -> None:
        self.so = SO0 + self.i
        self.channel = alert_channel(self.i)

    @property
    def members(self) -> list[int]:
        """The ground's stewards in the alert channel."""
        return self.ground[self.outside:]

    async def join(self, post: Post, known: Callable[[], Awaitable[int]],
                   timeout: float = 120) -> None:
        """The bot is made the channel's administrator and the stewards join it, each a
        chat_member update through the webhook; until the bot knows them all."""
        self.bot.add_chat(self.channel, "channel", f"Stewards {self.i}")
        await post(self.bot.bot_member_update(self.channel, True))
        gate = asyncio.Semaphore(16)

        async def one(u: int) -> None:
            async with gate:
                await post(self.bot.member_update(self.channel, u, True))
        await asyncio.gather(*(one(u) for u in self.members))
        end = time.monotonic() + timeout
        while await known() < len(self.members):
            if time.monotonic() > end:
                raise RuntimeError(f"the bot knows {await known()} of {len(self.members)} "
                                   "alert-channel members")
            await asyncio.sleep(0.2)

    async def run(self, post: Post, at: float, acked: Callable[[], Awaitable[int]],
                  tap_s: float, timeout: float) -> None:
        """At monotonic `at`: /evacuate, its confirm tap, until every targeted steward has
        it; then each taps "I have it" (over `tap_s` seconds), until all are recorded."""
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        try:
            await self._evacuate(post, timeout)
            await self._taps(post, acked, tap_s, timeout)
        except (AssertionError, RuntimeError, TimeoutError) as exc:
            self.why = " ".join(str(exc).split())[:300]

    async def _evacuate(self, post: Post, timeout: float) -> None:
        await post(self.bot.message_update(self.so, f"/evacuate {TEXT} zq{self.i:03d}"))

        def asked(_calls: list[Any]) -> tuple[dict[str, Any], str] | None:
            for (chat, _mid), m in list(self.bot.messages.items()):
                if chat != self.so:
                    continue
                for row in m.get("reply_markup", {}).get("inline_keyboard", []):
                    for b in row:
                        if "now" in str(b.get("text", "")):  # "Send EVACUATE now"
                            return m, b["callback_data"]
            return None
        msg, data = await self.bot.wait_for(asked, timeout=timeout)
        self.t0 = time.monotonic()
        await post(self.bot.callback_update(self.so, msg, data))
        waiting = set(self.targeted)
        end = self.t0 + timeout
        while waiting and time.monotonic() < end:
            for u in list(waiting):
                at = self.bot.first_reached(u, "EVACUATE")
                if at is not None:
                    self.reach[u] = at - self.t0
                    waiting.discard(u)
            await asyncio.sleep(0.1)
        if waiting:
            raise RuntimeError(f"{len(waiting)} of {len(self.targeted)} stewards never got "
                               "the EVACUATE")

    async def _taps(self, post: Post, acked: Callable[[], Awaitable[int]], tap_s: float,
                    timeout: float) -> None:
        channel_post = next(m for (c, _), m in list(self.bot.messages.items())
                            if c == self.channel and "EVACUATE" in m.get("text", ""))
        in_channel = set(self.members)
        self.taps_from = len(self.bot.calls)
        t = time.monotonic()
        tasks = []
        for k, u in enumerate(self.targeted):
            msg = channel_post if u in in_channel else next(
                m for (c, _), m in list(self.bot.messages.items())
                if c == u and "EVACUATE" in m.get("text", ""))
            data = msg["reply_markup"]["inline_keyboard"][0][0]["callback_data"]  # I have it
            await asyncio.sleep(max(0.0, t + tap_s * k / len(self.targeted) - time.monotonic()))
            tasks.append(asyncio.create_task(post(self.bot.callback_update(u, msg, data))))
        await asyncio.gather(*tasks)
        self.tapped = len(self.targeted)
        end = time.monotonic() + timeout
        while await acked() < self.tapped and time.monotonic() < end:
            await asyncio.sleep(0.25)

    def tap_messages(self) -> int:
        """Messages to the ground's stewards' own chats after their taps began (they report
        nothing: each such message is one a tap caused; answered on its button: goal 0)."""
        mine = set(self.ground)
        return sum(1 for c in self.bot.calls[self.taps_from:] if c.ok and c.method.startswith(
            "send") and str(c.params.get("chat_id", "")).lstrip("-").isdigit()
            and int(c.params["chat_id"]) in mine) if self.taps_from else 0

    def lines(self, acked: int, club: str) -> list[str]:
        """The figures, one `name: value` line each."""
        times = sorted(self.reach.values())
        p95 = percentile(times, 0.95) if times else float("nan")
        verdict = f"goal <= {GOAL_S:g}"
        out = [f"reach_p95_s_evacuate: {p95:.2f} ({verdict}; fixture {self.i}"
               f"{', ' + club if club else ''})",
               f"reach_max_s_evacuate: {times[-1] if times else float('nan'):.2f}",
               f"evacuate_targeted: {len(self.targeted)} ({len(self.members)} in the alert "
               f"channel, one post; {len(self.targeted) - len(self.members)} by direct "
               "message)",
               f"evacuate_reached: {len(self.reach)}",
               f"evacuate_acked: {acked} of {self.tapped} taps",
               f"evacuate_tap_messages: {self.tap_messages()} (goal 0: each tap answered on "
               "its button)"]
        if self.why:
            out.append(f"# evacuate: {self.why}")
        return out
