"""The web server's status as the CLI reports it."""

from __future__ import annotations

import urllib.error
import urllib.request

from tests.support.web import BROWSER


def status_of(url: str, data: bytes | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=BROWSER),
                                    timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
