"""Prometheus metrics of this process (one registry, served at /metrics)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

REGISTRY = CollectorRegistry()
CONTENT_TYPE = CONTENT_TYPE_LATEST

# `club`: the club a figure is of on a deployment of many clubs ("" on a one-club bot)
REPORTS = Counter("matchday_reports_logged", "Incident reports answered 'Logged'", ["club"],
                  registry=REGISTRY)
COMMANDS = Counter("matchday_commands", "Commands by name and outcome",
                   ["command", "outcome", "club"], registry=REGISTRY)
STORE_SECONDS = Histogram("matchday_store_seconds", "Latency of one store round trip",
                          buckets=(.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 5),
                          registry=REGISTRY)
ESCALATIONS = Counter("matchday_escalations_fired", "Escalation tiers fired",
                      registry=REGISTRY)
BRIEFINGS = Counter("matchday_briefings", "Scheduled briefings and summaries by outcome",
                    ["outcome"], registry=REGISTRY)  # sent, late, missed
for _outcome in ("sent", "late", "missed"):  # every outcome scraped, even at 0
    BRIEFINGS.labels(_outcome)
RATE_LIMITED = Counter("matchday_rate_limited", "429 answers (retry_after) by platform",
                       ["platform"], registry=REGISTRY)
LEADER = Gauge("matchday_leader", "1 while this replica holds the leader lease", ["club"],
               registry=REGISTRY)
CLUB_UP = Gauge("matchday_club_up", "1 while a club of the deployment runs its chats",
                ["club"], registry=REGISTRY)


class _Delivery(Collector):
    """Per club and platform, at scrape time: messages waiting in this process's chat queues
    and the age of the oldest of them."""

    def __init__(self) -> None:
        # club ("" on a one-club bot) -> its figures by platform
        self.sources: dict[str, Callable[[], dict[str, tuple[int, float]]]] = {}

    def collect(self) -> Iterable[GaugeMetricFamily]:
        depth = GaugeMetricFamily("matchday_delivery_queue_depth",
                                  "Messages waiting in delivery queues",
                                  labels=["club", "platform"])
        oldest = GaugeMetricFamily("matchday_delivery_oldest_seconds",
                                   "Age of the oldest message waiting",
                                   labels=["club", "platform"])
        for club, source in sorted(self.sources.items()):
            for platform, (n, age) in sorted(source().items()):
                depth.add_metric([club, platform], n)
                oldest.add_metric([club, platform], age)
        yield depth
        yield oldest


DELIVERY = _Delivery()
REGISTRY.register(DELIVERY)


def watch_delivery(chats: Callable[[], Iterable[Any]], clock: Callable[[], float],
                   platforms: Callable[[], Iterable[str]] = tuple, club: str = "") -> None:
    """Report a club's queue depth and oldest age per platform from per-chat health rows
    (with `platform`, `queued`, `oldest_at`), asked at scrape time; `platforms` are shown
    at 0."""

    def by_platform() -> dict[str, tuple[int, float]]:
        now = clock()
        out = {p: (0, 0.0) for p in platforms()}
        for h in chats():
            n, age = out.get(h.platform, (0, 0.0))
            waited = now - h.oldest_at if h.oldest_at is not None else 0.0
            out[h.platform] = (n + h.queued, max(age, waited))
        return out

    DELIVERY.sources[club] = by_platform


class _ClubView(Collector):
    """The registry as one club may see it: only the samples labelled with that club (the
    deployment's own figures, without a club label, are not a club's to read)."""

    def __init__(self, club: str) -> None:
        self.club = club

    def collect(self) -> Iterable[Any]:
        for family in REGISTRY.collect():
            mine = [s for s in family.samples if s.labels.get("club") == self.club]
            if mine:
                family.samples = mine
                yield family


def exposition(club: str = "") -> bytes:
    """The registry in Prometheus text format; a club's (on a deployment of many clubs) only
    its own samples."""
    return generate_latest(_ClubView(club) if club else REGISTRY)
