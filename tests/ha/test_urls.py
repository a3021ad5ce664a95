"""REDIS_URL: plain, Sentinel and Cluster URLs are accepted; a malformed one gets one line."""

from __future__ import annotations

import pytest

from bot.settings import SettingsError, load_settings
from bot.store import Store, StoreUnavailable
from bot.store.connect import CLUSTER_MAX_CONNECTIONS, connect, parse_url
from rigs.net import free_port


def test_sentinel_url_names_its_sentinels_master_and_database():
    t = parse_url("redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26380/matchday/2")
    assert (t.kind, t.nodes, t.master, t.db, t.password) == (
        "sentinel", (("10.0.0.1", 26379), ("10.0.0.2", 26380)), "matchday", 2, "s3cret")


def test_cluster_url_names_its_seed_nodes():
    t = parse_url("redis+cluster://r1:7000,r2:7001,r3:7002")
    assert t.kind == "cluster" and t.nodes == (("r1", 7000), ("r2", 7001), ("r3", 7002))


def test_a_cluster_client_is_not_held_to_redis_pys_100_connections_a_node():
    # a deployment of 40 clubs over one cluster client ran past 100 and stopped (#39)
    client = connect("redis+cluster://127.0.0.1:7000")
    assert client.nodes_manager.connection_kwargs["max_connections"] == CLUSTER_MAX_CONNECTIONS
    assert CLUSTER_MAX_CONNECTIONS >= 1000


def test_plain_urls_are_accepted_as_before():
    for url in ("redis://localhost:6379/0", "rediss://u:p@h:6380", "unix:///tmp/r.sock"):
        assert load_settings(REDIS_URL=url).redis_url == url


@pytest.mark.parametrize("url, reason", [
    ("redis+sentinel://h:26379", "no master name"),
    ("redis+sentinel://h:26379/m/x", "bad path"),
    ("redis+sentinel://h/m", "bad node 'h'"),
    ("redis+cluster://h:7000/3", "no database number"),
    ("redis+cluster://h:99999", "bad node"),
    ("redis+cluster://", "no host:port"),
    ("http://h:6379", "must start with redis://"),
])
def test_a_malformed_url_gets_one_line_naming_the_problem(url, reason):
    with pytest.raises(SettingsError) as err:
        load_settings(REDIS_URL=url)
    assert "\n" not in str(err.value) and reason in str(err.value)
    assert str(err.value).startswith("bad settings: REDIS_URL")


def test_replica_acks_setting_is_a_count_or_auto():
    assert load_settings(MATCHDAY_REPLICA_ACKS="auto").replica_acks is None
    assert load_settings(MATCHDAY_REPLICA_ACKS="2").replica_acks == 2
    with pytest.raises(SettingsError):
        load_settings(MATCHDAY_REPLICA_ACKS="-1")


@pytest.mark.parametrize("scheme", ["redis+cluster://", "redis+sentinel://"])
async def test_an_unreachable_cluster_or_sentinel_is_not_answering(scheme):
    url = f"{scheme}127.0.0.1:{free_port()}" + ("/matchday" if "sentinel" in scheme else "")
    store = Store.from_url(url)
    with pytest.raises(StoreUnavailable):
        await store.gateway.ping()
    await store.close()
