"""Whose record an export is: the club of the store it was read from, named in the signed
manifest (and the report's header) so a reader knows; the single-club deployment's exports
name none and are exactly as they always were."""

from __future__ import annotations

from typing import Any

from bot.store import Store

CLUB_FIELD = "club"


def club_of(store: Store) -> str:
    """The club whose key space the store reads ("" for the single-club deployment)."""
    space = getattr(store.gateway, "space", None)  # a test's stand-in gateway may have none
    return getattr(space, "club", "") or ""


def labelled(manifest: dict[str, Any], store: Store) -> dict[str, Any]:
    """The manifest with the store's club in it (before signing: the signature covers it)."""
    club = club_of(store)
    return {**manifest, CLUB_FIELD: club} if club else manifest
