"""The store: the only code that knows Redis keys, Lua or redis-py."""

from bot.store.client import Applied, Refused, Similar, Store, StoreUnavailable, fill, var

__all__ = ["Applied", "Refused", "Similar", "Store", "StoreUnavailable", "fill", "var"]
