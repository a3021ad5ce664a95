"""Local Redis topologies for the HA tests, started once per session and stopped by PID."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rigs.topology import Topology, start_cluster, start_sentinel


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    """A 3-master Redis Cluster on loopback."""
    t = start_cluster(tmp_path_factory.mktemp("cluster"))
    yield t
    t.stop()


@pytest.fixture(scope="session")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    """A master with one replica watched by 3 sentinels (quorum 2)."""
    t = start_sentinel(tmp_path_factory.mktemp("sentinel"), down_after_ms=60_000)
    yield t
    t.stop()
