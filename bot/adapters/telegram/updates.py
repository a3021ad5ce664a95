"""Reading updates this library version may not understand (newer or older Bot API shapes):
each one is logged once with its update id and skipped, never retried forever.

Webhook: the POST is answered 200 (a 4xx makes Telegram redeliver it again and again).
Polling: python-telegram-bot parses a whole getUpdates batch at once and, on one bad update,
fails the batch and fetches it again, forever; LenientBot swaps such an update for an empty
one with the same id, so the offset moves past it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from telegram import Update
from telegram.ext import ExtBot

log = logging.getLogger(__name__)

_logged: OrderedDict[str, None] = OrderedDict()


def _log_once(data: Any, exc: Exception) -> None:
    uid = str(data.get("update_id", "?")) if isinstance(data, dict) else "?"
    if uid in _logged:
        return
    _logged[uid] = None
    if len(_logged) > 1000:
        _logged.popitem(last=False)
    kinds = [k for k in data if k != "update_id"] if isinstance(data, dict) else []
    log.warning("telegram: update %s (%s) not understood, skipped: %s: %s", uid,
                ",".join(kinds) or "not an object", type(exc).__name__, str(exc)[:200])


def parse_update(data: Any, bot: Any) -> Update | None:
    """The Update, or None (logged once) when this library cannot read it."""
    try:
        update = Update.de_json(data, bot)
    except Exception as exc:
        _log_once(data, exc)
        return None
    if update is None:
        _log_once(data, ValueError("empty update"))
    return update


class LenientBot(ExtBot[Any]):
    """ExtBot whose getUpdates never fails on an update it cannot read."""

    async def _post(self, endpoint: str, *args: Any, **kwargs: Any) -> Any:
        result = await super()._post(endpoint, *args, **kwargs)
        if endpoint == "getUpdates" and isinstance(result, list):
            result = [u if not isinstance(u, dict) or parse_update(u, self) is not None
                      else {"update_id": u.get("update_id", 0)} for u in result]
        return result
