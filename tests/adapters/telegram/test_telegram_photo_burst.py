"""A burst of photos from one steward reaches the Telegram control group quickly: each photo
is one message (the evidence line is its caption) and, while the group is paced, the photos
waiting for one incident go as one album (sendMediaGroup) ahead of that incident's card
edit, within the group's limits (no 429), measured on an injected clock shared by the
delivery layer's limiter and the fake Bot API's limits."""

from __future__ import annotations

from bot.core.dispatch import Core
from bot.delivery.ratelimit import RateLimiter
from bot.settings import Settings
from tests.support.photo_burst import BOUND_S, burst, paced, shown, to_control


async def test_eight_photos_reach_control_within_15_s(core: Core, settings: Settings) -> None:
    async with paced(core, settings,
                     lambda time: RateLimiter(clock=time.clock, sleep=time.sleep)) as (
            fake, adapter, time):
        took = await burst(core, fake, adapter, time)
        print(f"8th photo visible to Telegram control after {took:.1f} s (injected clock)")
        assert took <= BOUND_S, (took, fake.describe(40))
        # one message per photo, in order, the evidence line its caption; no separate line
        photos = shown(fake.calls)
        assert [p[0] for p in photos] == [f"AgACburst{k}" for k in range(1, 9)]
        assert all(p[1].startswith("Evidence on INC-1 from") and f"thrower {k}" in p[1]
                   for k, p in enumerate(photos, 1))
        albums = [c for c in to_control(fake.calls) if c.method == "sendMediaGroup"]
        assert albums, "the paced group gets the waiting photos as an album"
        # under the incident's card, like a single photo
        assert all(c.params.get("reply_parameters", {}).get("message_id") for c in albums)
        assert not [c for c in to_control(fake.calls) if c.method == "sendMessage"
                    and "Evidence on" in str(c.params.get("text"))]
        assert fake.too_many == 0, fake.too_many_at
        # the card counts all of them
        await fake.wait_for(lambda c: [x for x in to_control(c) if x.method == "editMessageText"
                                       and "8 evidence items" in str(x.params.get("text"))])
