"""The store: the only code that knows Redis keys, Lua or redis-py."""

from bot.store.base import Applied, Refused, StoreUnavailable, WriteAttempts
from bot.store.client import Similar, Store, Unconfirmed

__all__ = ["Applied", "Refused", "Similar", "Store", "StoreUnavailable", "Unconfirmed",
           "WriteAttempts"]
