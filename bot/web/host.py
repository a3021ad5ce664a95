"""The one HTTP server: the control room, Telegram's webhook, Slack's events, /healthz and
/metrics on one port. Every other package hands it Routes (bot.domain.routes); aiohttp is
imported here and in the control room's own modules only."""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web

from bot.domain.routes import Request, Route

MAX_BODY = 1024 * 1024  # bytes: a Telegram update or a Slack event is far smaller


def _handler(route: Route):  # type: ignore[no-untyped-def]
    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        answer = await route.endpoint(Request(dict(request.headers), body,
                                              request.query_string))
        if any(k.lower() == "content-type" for k in answer.headers):
            raw = answer.body.encode() if isinstance(answer.body, str) else answer.body
            return web.Response(status=answer.status, body=raw, headers=answer.headers)
        if isinstance(answer.body, str):
            return web.Response(status=answer.status, text=answer.body,
                                content_type=answer.content_type, headers=answer.headers)
        return web.Response(status=answer.status, body=answer.body,
                            content_type=answer.content_type, headers=answer.headers)

    return handle


def application(routes: Iterable[Route] = ()) -> web.Application:
    """An aiohttp application serving these routes (more can be mounted on it)."""
    app = web.Application(client_max_size=MAX_BODY)
    app.add_routes([web.route(r.method, r.path, _handler(r)) for r in routes])
    return app


def mount(site: web.Application, prefix: str, part: web.Application) -> None:
    """Serve `part` under the path `prefix` of `site` (a club's site on a deployment)."""
    site.add_subapp(prefix, part)


class HttpHost:
    """The bot's one HTTP server, listening on host:port."""

    platform = "http"

    def __init__(self, app: web.Application, port: int, host: str = "127.0.0.1") -> None:
        self.app, self.port, self.host = app, port, host
        self.runner = web.AppRunner(app)

    async def start(self) -> int:
        """Listen on the port (0: any free one); the port listened on."""
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self.port

    async def stop(self) -> None:
        """Stop listening."""
        await self.runner.cleanup()
