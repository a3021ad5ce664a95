"""Fixtures of the security tests of the control-room web view: a room on a local port."""

from __future__ import annotations

from tests.support.web import client, room  # noqa: F401 (fixtures)


