"""A failover that closes a connection under a command makes redis-py raise: redis-py 8.1
from its own code (AttributeError: 'NoneType' object has no attribute 'writelines'), 8.2 a
ConnectionError ("Connection closed by the server before write"). Whichever a version
raises, that is the store not answering, not a bug, so the command answers "NOT logged"
(#27 item 2b). The tests hold the behaviour, not one version's error (#31 item 1)."""

from __future__ import annotations

import asyncio

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from bot.store import Store, StoreUnavailable
from bot.store.connect import unavailable


async def set_on_a_connection_cut_under_it(store: Store) -> None:
    """SET on a pooled connection that another task closes the moment it is sent (what
    redis-py's own error handling does to a shared connection during a Cluster failover)."""
    pool = getattr(store.gateway.r, "connection_pool", None)
    if pool is None:  # Redis Cluster: a connection of the node that holds the key
        node = store.gateway.r.get_node_from_key("md:{ops}:cut")
        conn, release = node.acquire_connection(), node.release
    else:
        conn, release = await pool.get_connection(), pool.release
    try:
        await conn.connect()
        cut = asyncio.create_task(conn.disconnect(nowait=True))
        try:
            await conn.send_command("SET", "md:{ops}:cut", "1")
            await conn.read_response()
        finally:
            await cut
    finally:
        result = release(conn)
        if asyncio.iscoroutine(result):
            await result


async def test_a_client_error_from_a_closed_connection_is_the_store_not_answering(store):
    # some client error (which one depends on the redis-py version), never a reply
    with pytest.raises((AttributeError, RedisError, OSError)) as raw:
        await set_on_a_connection_cut_under_it(store)
    assert unavailable(raw.value)
    with pytest.raises(StoreUnavailable):
        await store.gateway.call(set_on_a_connection_cut_under_it(store))
    await store.gateway.ping()  # and the store carries on


async def test_a_bug_in_our_own_code_is_still_a_bug(store):
    async def ours() -> None:
        raise AttributeError("a bug of ours")

    with pytest.raises(AttributeError):
        await store.gateway.call(ours())


def test_every_client_error_a_failover_gives_is_the_store_not_answering():
    """The errors redis-py versions raise for a connection cut under a command."""
    closed = RedisConnectionError("Connection closed by the server before write")
    assert unavailable(closed)
    assert unavailable(ConnectionResetError(104, "Connection reset by peer"))
    assert not unavailable(ValueError("a bug of ours"))
