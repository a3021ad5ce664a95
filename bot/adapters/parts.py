"""What a platform adapter uses besides the core (bot.core.ports.CoreAPI), handed over by
the composition root (bot/runtime.py) instead of reached through the core."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.dispatch import Registry
from bot.core.roles import Member, RoleMatrix
from bot.delivery.notifier import Notifier
from bot.domain.clock import Clock
from bot.domain.grounds import Ground
from bot.observe.outage import OutageLog
from bot.store.audit_trail import AuditTrail
from bot.store.facades import PlatformState


@dataclass(frozen=True)
class AdapterParts:
    """The delivery door, the incident log and platform state in the store, and the command
    catalogue."""

    delivery: Notifier  # replies and broadcasts go out through it (and the sinks it holds)
    audit: AuditTrail  # the audit trail of refusals
    platform: PlatformState  # updates seen, inboxes, chat moves, Home watchers, refs
    clock: Clock
    outage: OutageLog  # what a Redis outage cost, counted rather than logged each time
    registry: Registry  # command names and summaries (menus, suggestions)
    roles: RoleMatrix  # each role's commands (menus)
    roster: dict[str, Member]
    grounds: dict[str, Ground]  # a modal's places
