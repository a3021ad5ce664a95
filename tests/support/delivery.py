"""The durable notifier over a recording sink, and its audiences."""

from __future__ import annotations

import itertools

from pydantic import SecretStr

from bot.core.dispatch import Core
from bot.delivery.durable import OutboxReader
from bot.delivery.notifier import Notifier
from bot.delivery.ratelimit import RateLimiter
from bot.delivery.sink import RetryLater
from bot.domain.messages import Reply
from bot.settings import Settings
from bot.store import Store
from bot.store.message_refs import MessageRefs
from bot.store.outbox import Outbox
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from rigs.recording_sink import RecordingSink
from tests.support.fake_time import FakeTime

GROUP = "-1001000000001"  # channels.toml: the Telegram control group
STEWARD = 100000001


class Recorder(RecordingSink):
    """A native sink: records sends and edits with the fake time; can answer 429s."""

    platform = "telegram"

    def __init__(self, time: FakeTime) -> None:
        super().__init__()
        self.time = time
        self.log: list[tuple[float, str, str, str]] = []  # (t, op, chat, first line)
        self.busy_until = 0.0
        self.ids = itertools.count(1)

    def cost(self, reply: Reply) -> int:
        return 1

    def _check(self) -> None:
        if self.time.now < self.busy_until:
            self.log.append((self.time.now, "429", "", ""))
            raise RetryLater(5)

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        self._check()
        self.log.append((self.time.now, "send", chat, (reply.title + "\n" + reply.text)))
        return str(next(self.ids))

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        self._check()
        self.log.append((self.time.now, "edit", chat, (reply.title + "\n" + reply.text)))
        return True

    def sent(self, op: str = "send") -> list[str]:
        return [x for _, o, _, x in self.log if o == op]


def notifier(store: Store, time: FakeTime) -> tuple[Notifier, Recorder]:
    n = Notifier({"control": {"telegram": [GROUP]}},
                 limiter=RateLimiter(clock=time.clock, sleep=time.sleep), clock=time.clock)
    n.store = MessageRefs(store.gateway)
    sink = Recorder(time)
    n.add_sink(sink)
    return n, sink


def tg_settings(settings: Settings, fake: FakeTelegram) -> Settings:
    return settings.model_copy(update={"telegram_bot_token": SecretStr(TOKEN),
                                       "telegram_base_url": fake.base_url})


async def durable(core: Core) -> OutboxReader:
    outbox = Outbox(core.store.gateway)
    core.notifier.outbox = outbox
    reader = OutboxReader(core.notifier, outbox, owner="test-a", block_ms=100, rescan_s=0.1)
    reader.start()
    return reader
