"""Resends after a "NOT CONFIRMED" answer, shared by every replica: per reporter, the first
dedupe key of each command whose outcome is unknown (a hash, content key -> dedupe key, with
a short TTL), and one marker key that lives as long as any such entry may, so a replica that
(re)subscribes to the changes channel learns that there are unsure writes to look up."""

from __future__ import annotations

from bot.store.base import OPS

UNSURE = OPS + "unsure:"  # unsure:<platform>:<user> -> {content key: first dedupe key}
MARKER = OPS + "unsure-any"  # exists while some reporter may have an entry
