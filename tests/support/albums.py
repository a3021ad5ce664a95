"""Evidence photos sent to Telegram as albums."""

from __future__ import annotations

from bot.delivery.ratelimit import Limit
from bot.domain.messages import Attachment, Outbound, Reply
from rigs.fakes.telegram_api import Call, FakeTelegram
from tests.support.control_group import GROUP

SLOW = {"telegram": (Limit(1, 3.0, "chat"), Limit(20, 60.0, "group"),
                     Limit(30, 1.0, "platform"))}


def photos(fake: FakeTelegram, n: int) -> None:
    """A steward's photos the fake knows, as their file ids are what control is shown."""
    for k in range(1, n + 1):
        fake.message_update(100000001, photo=f"AgACalbum{k}")


def evidence(fx: str, k: int) -> Outbound:
    photo = Attachment("photo", file_id=f"AgACalbum{k}", platform="telegram")
    return Outbound("control", Reply(f"Evidence on INC-61 from Sam: 📷 photo — shot {k}",
                                     media=[photo]), fixture=fx, thread="INC-61")


def shown(calls: list[Call]) -> list[str]:
    """The file ids of the photos the group was shown, alone or in albums."""
    out: list[str] = []
    for c in calls:
        if not c.ok or str(c.params.get("chat_id")) != GROUP:
            continue
        if c.method == "sendPhoto":
            out.append(str(c.params["photo"]))
        elif c.method == "sendMediaGroup":
            out += [str(m["media"]) for m in c.params["media"]]
    return out
