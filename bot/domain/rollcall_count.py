"""A roll call's answers, counted true: a post is on when a steward's latest check-in, made
since the roll call went out and not stood down since, is there (a steward counts once, at
the post he moved to last); the denominator is the plan's posts, and the posts the rota
leaves empty are unfilled posts, not missing stewards."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.domain.deployment import DutyRecord, Post


@dataclass(frozen=True)
class RollCallCount:
    """Posts planned, posts on, and the rest split into filled-but-silent and unfilled."""

    planned: int
    on: tuple[str, ...]  # post ids answered
    silent: tuple[Post, ...]  # posts the rota fills whose steward has not answered
    unfilled: tuple[Post, ...]  # posts nobody holds on the rota (and nobody checked in at)


def answered(on_post: Mapping[str, tuple[str, str]], duty: Mapping[str, DutyRecord],
             since: str) -> set[str]:
    """Posts whose latest check-in is the steward's own latest, made at or after `since`
    (ISO) and not stood down since."""
    out = set()
    for post, (who, at) in on_post.items():
        d = duty.get(who)
        if d is None or d.post != post or at < since:
            continue  # moved on since, or an answer to an earlier call
        if d.stood_down and d.stood_down >= at:
            continue  # stood down after checking in here
        out.add(post)
    return out


def count(posts: list[Post], on_post: Mapping[str, tuple[str, str]],
          duty: Mapping[str, DutyRecord], filled: Mapping[str, object],
          since: str) -> RollCallCount:
    """The roll call of these planned posts, sent at `since`."""
    got = answered(on_post, duty, since)
    on = tuple(p.id for p in posts if p.id in got)
    rest = [p for p in posts if p.id not in got]
    return RollCallCount(len(posts), on, tuple(p for p in rest if p.id in filled),
                         tuple(p for p in rest if p.id not in filled))
