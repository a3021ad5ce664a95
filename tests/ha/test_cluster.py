"""On a 3-master Redis Cluster: a matchday's commands work, and every key a write script
touches is one it declared (MONITOR on the node that owns the fixture's slot)."""

from __future__ import annotations

import codecs
import json
import logging
import re
import socket
from datetime import timedelta
from pathlib import Path

import pytest
from redis.crc import key_slot
from redis.exceptions import ResponseError

from bot.app import build_core
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from bot.store.client import fx_prefix
from bot.store.feed import Feed
from bot.store.message_refs import MessageRefs
from handlers import sweep_escalations
from tests.conftest import Chat

ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
TG = {"as_": "100000001", "platform": "telegram"}


def _args(line: str) -> list[str]:
    # the write script's ops travel as MessagePack: binary, not text
    return [codecs.escape_decode(a.encode())[0].decode(errors="replace")
            for a in ARG.findall(line)]


class Monitor:
    """MONITOR on one node over a raw socket."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"MONITOR\r\n")
        assert self.sock.recv(5) == b"+OK\r\n"


def _declared(key: str, declared: list[str]) -> bool:
    for d in declared:
        if key == d or (d.endswith("*") and key.startswith(d[:-1])):
            return True
        if "$" in d and re.fullmatch(re.sub(r"\\\$\w+", r"[\\w-]+", re.escape(d)), key):
            return True  # a key the script fills in (bot/store/keys.py key_shape: $name)
    return False


@pytest.fixture
async def cluster_core(cluster, clock, tmp_path: Path):
    store = Store.from_url(cluster.url)
    await store.reset_for_tests()
    settings = load_settings(REDIS_URL=cluster.url, MATCHDAY_DATA_DIR=str(tmp_path))
    core = build_core(store, settings, clock, cache_ttl=0)
    await ensure_sample_fixture(core)
    yield core
    await store.close()


async def test_every_key_a_script_touches_is_declared_and_in_its_slot(cluster_core, clock):
    core, store = cluster_core, cluster_core.store
    say = Chat(core)
    fx = await core.active_fixture()
    node = store.gateway.r.get_node_from_key(fx_prefix(fx.id))
    mon = Monitor(node.port)
    replies = [
        await say("/incident disorder @stb_walkway s4 fight", as_="steward"),
        clock.advance(timedelta(minutes=2)),
        await say("/incident disorder @stb_upper s3 same fight", **TG),  # joins INC-1
        await say("/incident pyro @away_upper s3", as_="steward"),
        await say("/ack 1", as_="control"),
        await say("/resolve 2 out", as_="control"),  # a close: type index from the hash
        await say("/arrest missiles inside away inc=1", as_="police_liaison"),
        await say("/update 1 calmer now", as_="control"),
    ]
    assert all(r.reply.ok for r in replies if r is not None), [
        r.reply.text for r in replies if r is not None]
    marker = await store.gateway.r.execute_command("ECHO", "end-of-monitor", target_nodes=node)
    assert marker == "end-of-monitor"
    buf = b""
    while b"end-of-monitor" not in buf:
        buf += mon.sock.recv(65536)
    mon.sock.close()

    scripts, touched = 0, 0
    declared: list[str] = []
    for line in buf.decode().split("\r\n"):
        if not line.startswith("+") or "]" not in line:
            continue
        origin, args = line.split("]", 1)[0], _args(line.split("]", 1)[1])
        if args and args[0].upper() == "EVALSHA":
            scripts += 1
            declared = args[3:3 + int(args[2])]
            slot = key_slot(declared[0].encode())
            assert {key_slot(k.encode()) for k in declared} == {slot}
        elif origin.endswith("lua") and len(args) > 1 and args[0].upper() != "ECHO":
            touched += 1
            assert _declared(args[1], declared), (args, declared)
            assert key_slot(args[1].encode()) == slot
    assert scripts >= 7 and touched > 50


async def test_a_script_refuses_to_write_a_key_it_was_not_told_about(cluster_core):
    store = cluster_core.store
    fx = await cluster_core.active_fixture()
    p = fx_prefix(fx.id)
    ops = [["hset", "meta", "note", "x"], ["set", "sneaky", "1"]]
    with pytest.raises(ResponseError, match="undeclared key"):
        await store.gateway._apply(keys=[p, p + "meta"], args=["", 60, json.dumps(ops)])
    assert not await store.gateway.r.exists(p + "sneaky")


async def test_live_cards_are_remembered_across_slots(cluster_core):
    store = cluster_core.store
    fx = await cluster_core.active_fixture()
    await MessageRefs(store.gateway).set_message_ref(fx.id, "telegram", "-100", "INC-1", "42")
    assert await MessageRefs(store.gateway).message_ref(fx.id, "telegram", "-100", "INC-1") == "42"
    found = await MessageRefs(store.gateway).ref_of_message("telegram", "-100", "42")
    assert found == (fx.id, "INC-1")


async def test_waiting_for_a_replica_the_cluster_lacks_holds_the_report(cluster_core):
    store = cluster_core.store
    gw = store.gateway
    gw.replica_acks, gw.replica_timeout_ms = 1, 50  # as if a replica were required
    try:
        r = await Chat(cluster_core)("/incident pyro @away_upper s3", as_="steward")
    finally:
        store.gateway.replica_acks = 0
    assert not r.reply.ok and r.reply.text.startswith("HELD")


async def test_the_live_feed_follows_a_fixtures_log(cluster_core):
    """The web view's live feed reads each fixture's log with a blocking client of its own:
    on a Cluster its first read named the slot's master before that client knew the slot
    map, failed, and failed again every second for good (the wall never moved)."""
    core = cluster_core
    feed = Feed(core.store.gateway)
    fx = await core.active_fixture()
    try:
        last = await feed.last_id(fx.id)
        assert (await Chat(core)("/incident disorder @stb_walkway s4 fight",
                                 as_="steward")).reply.ok
        events = await feed.wait_after(fx.id, last, 1000)
        assert "incident.reported" in [e.kind for e in events]
    finally:
        await feed.close()


async def test_an_escalation_written_but_not_yet_on_a_replica_is_one_warning(
        cluster_core, clock, caplog: pytest.LogCaptureFixture):
    """An acknowledgement deadline falling due while the fixture's replica lags (bench
    saturday.py's resumed master): the tier is written and goes out once confirmed; the log
    says so in one line, not a traceback at ERROR."""
    core = cluster_core
    fx = await core.active_fixture()
    assert (await Chat(core)("/incident disorder @stb_walkway s4 fight",
                             as_="steward")).reply.ok
    gw = core.store.gateway
    gw.replica_acks, gw.replica_timeout_ms = 1, 50  # as if its replica had fallen behind
    clock.advance(timedelta(minutes=10))
    try:
        with caplog.at_level(logging.WARNING):
            await sweep_escalations(core, core.store, clock.now())
    finally:
        gw.replica_acks = 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert any("not yet on a replica" in r.getMessage() and fx.id in r.getMessage()
               for r in caplog.records), caplog.text
