"""Short administrative calls to one local server (who it is, is it ready, shut it down),
for the embedded server's supervisor (bot/embedded_redis): it starts processes, this knows
the protocol."""

from __future__ import annotations

from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


class ServerError(Exception):
    """The server answered with an error (not "not up yet")."""


class LocalServer:
    """A synchronous connection to the server on 127.0.0.1:`port` (no retries)."""

    def __init__(self, host: str, port: int, password: str | None,
                 timeout: float = 1.0) -> None:
        self._client = redis.Redis(
            host=host,
            port=port,
            password=password,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            decode_responses=True,
            retry=Retry(NoBackoff(), 0),  # redis-py 8 retries with backoff by default
        )

    def close(self) -> None:
        """Close the connection."""
        self._client.close()

    def identity(self) -> tuple[int, Path] | None:
        """(process id, data dir) of the server answering, or None."""
        try:
            info = self._client.info("server")
            conf = self._client.config_get("dir")
        except redis.RedisError:
            return None
        try:
            return int(info["process_id"]), Path(conf["dir"]).resolve()
        except (KeyError, TypeError, ValueError):
            return None

    def ready(self) -> bool:
        """True once it answers PING; False while it loads its data or is not listening
        yet; ServerError for any other error answer."""
        try:
            return bool(self._client.ping())
        except redis.BusyLoadingError:
            return False  # still loading the AOF
        except (redis.ConnectionError, redis.TimeoutError):
            return False  # not listening yet (or something else holds the port)
        except redis.RedisError as exc:
            raise ServerError(str(exc)) from None

    def shutdown(self) -> str | None:
        """SHUTDOWN: None when it went, else why not."""
        try:
            self._client.shutdown()
        except redis.RedisError as exc:
            return str(exc)
        return None
