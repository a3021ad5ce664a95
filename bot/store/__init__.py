"""The store: the only code that knows Redis keys, Lua or redis-py. One Gateway owns the
client; facades by purpose (the incident log `Store`, and in bot/store/facades.py delivery,
platform and web state, plans and each domain's record) are built once over it in the
composition root (bot/app.py)."""

from bot.store.base import Applied, Refused, StoreUnavailable, WriteAttempts, WritesRefused
from bot.store.client import Similar, Store, Unconfirmed
from bot.store.durability import Durability
from bot.store.gateway import Gateway

__all__ = ["Applied", "Durability", "Gateway", "Refused", "Similar", "Store",
           "StoreUnavailable", "Unconfirmed", "WriteAttempts",
           "WritesRefused"]
