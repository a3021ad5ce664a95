"""The store: the only code that knows Redis keys, Lua or redis-py."""

from bot.store.base import Applied, Refused, StoreUnavailable, WriteAttempts
from bot.store.client import Similar, Store, Unconfirmed
from bot.store.durability import Durability

__all__ = ["Applied", "Durability", "Refused", "Similar", "Store", "StoreUnavailable",
           "Unconfirmed", "WriteAttempts"]
