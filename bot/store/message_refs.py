"""Where the bot's live messages are: per fixture and chat, the platform id of each live
message (an incident card, the board) so later changes edit it in place; the reverse index
(message id -> fixture and ref) a reply to it is tied back with; when each first arrived.

On a Cluster a live message's id is also kept in its fixture's second copy (another master's
slot, bot.store.copies), written after the first and read beside it: with the fixture's own
master paused or lost, its cards are still edited in place, not posted again."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from bot.store.base import KeySpace, StoreUnavailable, chat_prefix, fx_prefix, ops_prefix
from bot.store.copies import Copies, copy_key, hash_tag
from bot.store.gateway import Gateway

log = logging.getLogger(__name__)
REF_TTL = 14 * 86400
_LATER: set[asyncio.Task[Any]] = set()  # copies being written (kept from the collector)


def keep_copy(gateway: Gateway, key: str, value: str | None) -> None:
    """On a Cluster, write (or with None, drop) a live message's id in its second copy, in
    the background: the send that made it does not wait for another master."""
    if not gateway.cluster:
        return
    second = copy_key(key)

    async def write() -> None:
        try:
            if value is None:
                await gateway.call(lambda r: r.delete(second))
            else:
                await gateway.call(lambda r: r.set(second, value, ex=REF_TTL))
        except StoreUnavailable:  # the first copy has it; a read falls back only rarely
            log.info("the second copy of %s was not written (Redis not answering)", key)

    task = asyncio.create_task(write())
    _LATER.add(task)
    task.add_done_callback(_LATER.discard)


def msgof_key(platform: str, chat: str, message_id: str, space: KeySpace) -> str:
    """The reverse index of a message the bot posted (-> 'fixture|ref'), with its chat."""
    return f"{chat_prefix(platform, chat, space)}msgof:{message_id}"


def ref_key(fixture: str, platform: str, chat: str, ref: str, space: KeySpace) -> str:
    """The key of a live message's platform id in a chat."""
    head = fx_prefix(fixture, space) if fixture else ops_prefix(space)
    return f"{head}msg:{platform}:{chat}:{ref}"


def _seen_key(fixture: str, ref: str, space: KeySpace) -> str:
    return f"{fx_prefix(fixture, space)}seen:{ref}"


def seen_op(pipe: Any, fixture: str, platform: str, chat: str, ref: str,
            at_ms: int | None, space: KeySpace) -> None:
    """Add to a pipeline: when a live message first reached a chat (kept as long as its
    ref), so a screen can say "delivered 21:06:14 (Slack)" per incident."""
    if at_ms is None or not fixture:
        return
    key = _seen_key(fixture, ref, space)
    pipe.hsetnx(key, f"{platform}:{chat}", str(at_ms))
    pipe.expire(key, REF_TTL)


class MessageRefs:
    """Read and write where live messages are."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self._copies = Copies(what="live messages' ids")

    async def message_ref(self, fixture: str, platform: str, chat: str, ref: str) -> str | None:
        """The platform message id of a live message (e.g. an incident card) in a chat."""
        key = ref_key(fixture, platform, chat, ref, self.space)
        if not self.gateway.cluster:
            return await self.gateway.call(lambda r: r.get(key))
        second = copy_key(key)
        first_tag, second_tag = hash_tag(key), hash_tag(second)
        got = await self._copies.first({
            first_tag: lambda: self.gateway.call(lambda r: r.get(key)),
            second_tag: lambda: self.gateway.call(lambda r: r.get(second))})
        # the fixture's own copy is the truth; the second only stands in while it is away
        return got[first_tag] if first_tag in got else got[second_tag]

    async def delivered_at(self, fixture: str, refs: list[str]) -> dict[str, dict[str, int]]:
        """ref -> {'platform:chat': ms since the epoch its live message first arrived}."""
        if not refs:
            return {}
        pipe = self.gateway.pipeline()
        for ref in refs:
            pipe.hgetall(_seen_key(fixture, ref, self.space))
        res = await self.gateway.call(pipe.execute())
        return {ref: {str(k): int(v) for k, v in h.items()} for ref, h in zip(refs, res,
                                                                             strict=True) if h}

    async def set_message_ref(self, fixture: str, platform: str, chat: str, ref: str,
                              message_id: str, at_ms: int | None = None) -> None:
        """Remember where a live message was posted, so later changes edit it in place
        (`at_ms`: when it arrived, for the first arrival in that chat)."""
        # Two slots ({fixture} and the chat's), so no MULTI: each SET is idempotent, and the
        # reverse index is written first so a found forward ref always resolves back. The
        # reverse index is a hint: while the chat's slot refuses writes, a reply to the
        # message is not tied to its incident, but the forward ref every edit needs is kept.
        pipe = self.gateway.pipeline()
        pipe.set(msgof_key(platform, chat, message_id, self.space), f"{fixture}|{ref}", ex=REF_TTL)
        key = ref_key(fixture, platform, chat, ref, self.space)
        pipe.set(key, message_id, ex=REF_TTL)
        seen_op(pipe, fixture, platform, chat, ref, at_ms, self.space)
        await self.gateway.run_with_hints(pipe, 1)
        keep_copy(self.gateway, key, message_id)

    async def tie_message(self, fixture: str, platform: str, chat: str, ref: str,
                          message_id: str) -> None:
        """Remember which incident a message that is not its live message is about (a
        "Logged INC-7" answer), so a reply to it is tied to that incident."""
        await self.gateway.call(lambda r: r.set(msgof_key(platform, chat, message_id, self.space),
                                                f"{fixture}|{ref}", ex=REF_TTL))

    async def drop_message_ref(self, fixture: str, platform: str, chat: str,
                               ref: str) -> None:
        """Forget a live message (e.g. a board no longer live): the next one is posted anew."""
        key = ref_key(fixture, platform, chat, ref, self.space)
        await self.gateway.call(lambda r: r.delete(key))
        keep_copy(self.gateway, key, None)

    async def ref_of_message(self, platform: str, chat: str,
                             message_id: str) -> tuple[str, str] | None:
        """(fixture, ref) of a live message the bot posted, e.g. to attach a reply's photo."""
        key = msgof_key(platform, chat, message_id, self.space)
        raw = await self.gateway.call(lambda r: r.get(key))
        if not raw:
            return None
        fixture, _, ref = raw.partition("|")
        return fixture, ref

