"""The turnstile feed's door on the one HTTP server: POST /ingress/batch, a JSON batch signed
with the feed's HMAC key; the answer says what was counted or, in one line, why not."""

from __future__ import annotations

import logging

from aiohttp import web

from bot.domain.ingress_batch import MAX_BODY, SIGNATURE_HEADER, BatchRefused
from bot.ingress.ingress_desk import IngressDesk
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)
PATH = "/ingress/batch"


class IngressFeed:
    """The route in front of the ingress desk."""

    def __init__(self, desk: IngressDesk) -> None:
        self.desk = desk

    def add_routes(self, app: web.Application) -> None:
        """Mount POST /ingress/batch."""
        app.add_routes([web.post(PATH, self.batch)])

    async def batch(self, request: web.Request) -> web.Response:
        """Count one signed batch, once."""
        if (request.content_length or 0) > MAX_BODY:
            return _refused(BatchRefused(f"batch too large (at most {MAX_BODY} bytes)", 413))
        body = await request.content.read(MAX_BODY + 1)
        try:
            got = await self.desk.receive(body, request.headers.get(SIGNATURE_HEADER, ""))
        except StoreUnavailable:
            return _refused(BatchRefused("the record is unreachable: not counted, send again",
                                         503))
        if isinstance(got, BatchRefused):
            log.info("ingress batch refused: %s", got.reason)
            return _refused(got)
        return web.json_response({"ok": True, "batch": got.batch, "readings": got.readings,
                                  "people": got.people,
                                  "alerts": [a.kind + ":" + a.zone for a in got.alerts]})


def _refused(r: BatchRefused) -> web.Response:
    return web.json_response({"ok": False, "reason": r.reason}, status=r.status)
