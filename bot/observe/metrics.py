"""Prometheus metrics of this process (one registry, served at /metrics)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

REGISTRY = CollectorRegistry()
CONTENT_TYPE = CONTENT_TYPE_LATEST

REPORTS = Counter("matchday_reports_logged", "Incident reports answered 'Logged'",
                  registry=REGISTRY)
COMMANDS = Counter("matchday_commands", "Commands by name and outcome",
                   ["command", "outcome"], registry=REGISTRY)
STORE_SECONDS = Histogram("matchday_store_seconds", "Latency of one store round trip",
                          buckets=(.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 5),
                          registry=REGISTRY)
ESCALATIONS = Counter("matchday_escalations_fired", "Escalation tiers fired",
                      registry=REGISTRY)
BRIEFINGS = Counter("matchday_briefings", "Scheduled briefings and summaries by outcome",
                    ["outcome"], registry=REGISTRY)  # sent, late, missed
QUEUE_DEPTH = Gauge("matchday_delivery_queue_depth", "Messages waiting in delivery queues",
                    registry=REGISTRY)
LEADER = Gauge("matchday_leader", "1 while this replica holds the leader lease",
               registry=REGISTRY)


def watch_queue_depth(depth: Callable[[], int]) -> None:
    """Report the delivery queue depth by asking at scrape time."""
    QUEUE_DEPTH.set_function(depth)


def exposition() -> bytes:
    """The registry in Prometheus text format."""
    return generate_latest(REGISTRY)
