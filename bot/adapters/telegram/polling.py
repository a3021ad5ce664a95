"""Telegram polling through the inbox: a getUpdates batch is recorded before the next call
confirms it to Telegram, then processed from the record (recorded leftovers of a crashed
run first). PTB's Updater confirms before processing, so it is not used. An update whose work
goes on beside the loop (a voice note being transcribed) stays recorded until that work is
done, so a crash meanwhile leaves it for the next run, or the next lease holder, to finish.

Updates are processed in lanes: one person's updates in one chat in order, different people
side by side (at most IN_FLIGHT at once), so a thousand stewards tapping "I have it" in the
alert channel are not answered one after another, and one slow answer holds nobody else."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from telegram import Update
from telegram.error import RetryAfter
from telegram.ext import Application

from bot.adapters.telegram.probes import MessageIds, retry_seconds
from bot.store import StoreUnavailable
from bot.store.inbox import Inbox
from bot.tasks import cancel_and_wait

log = logging.getLogger(__name__)

# chat_member: who joins or leaves a chat the bot administers (the stewards' alert channel:
# who its one post reaches); Telegram sends it only when asked for by name
ALLOWED_UPDATES = ["message", "edited_message", "callback_query", "chat_member",
                   "my_chat_member"]
IN_FLIGHT = 64  # updates processed at once; the next getUpdates waits for a free place
LANE_STOP_S = 10.0  # how long a stop lets updates being processed finish


def lane_of(raw: dict[str, Any]) -> str:
    """Whose update it is, as 'chat:user': updates of one lane are processed in order."""
    for kind in ALLOWED_UPDATES:
        body = raw.get(kind)
        if isinstance(body, dict):
            message = body.get("message") if kind == "callback_query" else body
            chat = (message or {}).get("chat", {}).get("id", "")
            return f"{chat}:{(body.get('from') or {}).get('id', '')}"
    return ""


class Poller:
    """getUpdates on this replica while it holds the polling lease."""

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any], inbox: Inbox,
                 ids: MessageIds, replayed: set[int], timeout: int = 10,
                 later: dict[int, asyncio.Task[None]] | None = None) -> None:
        self.application = application
        self.inbox = inbox
        self.ids = ids
        self.replayed = replayed  # recorded by a crashed run: processed again
        self.timeout = timeout
        self.later = later if later is not None else {}  # update id -> its work beside the loop
        self.finishing: set[asyncio.Task[None]] = set()  # forgetting those once done
        self._task: asyncio.Task[None] | None = None
        self._polling = False
        self._lanes: dict[str, asyncio.Task[None]] = {}  # lane -> its last update's work
        self._room = asyncio.Semaphore(IN_FLIGHT)

    async def start(self) -> None:
        """Fetch updates with getUpdates into the inbox (one replica at a time: the lease
        holder)."""
        if self._task is not None and not self._task.done():
            self._polling = True  # a stop still finishing its last long poll: keep going
            return
        await self.application.bot.delete_webhook()
        self._task = asyncio.create_task(self._poll())

    async def stop(self) -> None:
        """Stop fetching updates (this replica lost the polling lease); sending goes on.
        The current long poll finishes first: whatever it fetched is recorded."""
        poller, self._task = self._task, None
        if poller is None:
            return
        self._polling = False
        try:
            await asyncio.wait_for(asyncio.shield(poller), self.timeout + 6)
        except TimeoutError:
            await cancel_and_wait([poller])
        await asyncio.gather(poller, return_exceptions=True)
        lanes = set(self._lanes.values())
        if lanes:  # what is being processed finishes; the rest stays recorded for next time
            await asyncio.wait(lanes, timeout=LANE_STOP_S)
            await cancel_and_wait(lanes)

    async def _dispatch(self, raw: dict[str, Any]) -> None:
        """Process an update in its lane, after the lane's previous one; returns once there
        is room for it (IN_FLIGHT), not when it is done."""
        await self._room.acquire()
        key = lane_of(raw)
        before = self._lanes.get(key)
        task = asyncio.create_task(self._in_lane(before, raw))
        self._lanes[key] = task
        task.add_done_callback(lambda t: self._lanes.pop(key, None)
                               if self._lanes.get(key) is t else None)

    async def _in_lane(self, before: asyncio.Task[None] | None, raw: dict[str, Any]) -> None:
        try:
            if before is not None:
                await asyncio.wait([before])
            await self.process(raw)
        except StoreUnavailable:  # not forgotten: the next run processes it again, once
            pass
        finally:
            self._room.release()

    async def _poll(self) -> None:
        """getUpdates in a loop: record, confirm with the next call, process."""
        bot = self.application.bot
        offset: int | None = None
        first = True
        self._polling = True
        while self._polling:
            try:
                if first:
                    offset = await self.inbox.offset()
                    for raw in await self.inbox.pending():
                        self.replayed.add(int(raw["update_id"]))
                        await self._dispatch(raw)
                    first = False
                updates = await bot.get_updates(
                    offset=offset, timeout=self.timeout, allowed_updates=ALLOWED_UPDATES,
                    read_timeout=self.timeout + 5)
                if not updates:
                    continue
                raws = [u.to_dict() for u in updates]  # kept even when stopping
                await self.inbox.record(raws)
                offset = updates[-1].update_id + 1
                for raw in raws:
                    await self._dispatch(raw)
            except asyncio.CancelledError:
                raise
            except RetryAfter as exc:
                await asyncio.sleep(retry_seconds(exc))
            except StoreUnavailable:  # the outage log says so once, not every second
                await asyncio.sleep(1.0)
            except Exception as exc:  # network, store outage: nothing confirmed, try again
                log.warning("telegram: polling failed (%s); retrying", exc)
                await asyncio.sleep(1.0)

    async def process(self, raw: dict[str, Any]) -> None:
        """Handle one recorded update, then forget it (a failing update is not retried
        for ever: it is logged and dropped, like PTB does)."""
        self.ids.learn_update(raw)
        try:
            update = Update.de_json(raw, self.application.bot)
            await self.application.process_update(update)
        except Exception:
            log.exception("telegram: update %s failed", raw.get("update_id"))
        update_id = int(raw["update_id"])
        work = self.later.pop(update_id, None)
        if work is not None and not work.done():
            task = asyncio.create_task(self._done_after(work, update_id))
            self.finishing.add(task)
            task.add_done_callback(self.finishing.discard)
            return
        await self.inbox.done(update_id)

    async def _done_after(self, work: asyncio.Task[None], update_id: int) -> None:
        """Forget an update once its work beside the loop has finished (its answer is in the
        outbox); work cancelled by a stop leaves it recorded for the next run."""
        await asyncio.wait([work])
        if work.cancelled():
            return
        try:
            await self.inbox.done(update_id)
        except StoreUnavailable:  # kept: the next run does it again, the outbox answers once
            log.warning("telegram: update %s not forgotten (store unavailable)", update_id)
