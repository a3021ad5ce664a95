"""Whose duty an account's check-ins, stand-down and sign-off are: the tabard it is linked
to, else the rota tabard of the post it checked in at last. Never the holder of the first
post it was seen at: steward 14 covering tabard 15's post for a while is still steward 14."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.domain.ledger import Event


def credited(events: Iterable[Event], links: Mapping[str, str],
             filled: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """Account -> tabard for every account that checked in (`links`: tabard -> account;
    `filled`: post -> (tabard, rota name))."""
    out = {who: t for t, who in links.items()}
    last_post: dict[str, str] = {}
    for ev in events:
        if ev.kind == "steward.onpost":
            last_post[ev.by] = str(ev.data.get("post", ""))
    for who, post in last_post.items():
        if who not in out and post in filled:
            out[who] = filled[post][0]
    return out
