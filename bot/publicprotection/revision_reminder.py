"""The reminder 30 days after a revision of a ground's Martyn's Law document: control and
command are told it is due with the regulator, once (claimed across replicas, its messages
written to the deployment's outbox with the claim), unless the revision has been recorded
as sent."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from bot.core.dispatch import Core
from bot.domain.clock import iso, parse_iso
from bot.domain.messages import Outbound, Reply
from bot.publicprotection.protection_document import SEND_WITHIN
from bot.publicprotection.protection_plan import PlanError, ProtectionPlan, load_plan
from bot.store import Store
from bot.store.facades import StoreFacades
from bot.store.outbox import OPS_OUTBOX

AUDIENCES = ("control", "command")


def enhanced_plans(config_dir: Path) -> list[ProtectionPlan]:
    """The plans of every enhanced-tier ground (a ground file check-config refuses is left
    to check-config)."""
    out = []
    for path in sorted((config_dir / "grounds").glob("*.toml")):
        try:
            plan = load_plan(path)
        except (PlanError, ValueError):
            continue
        if plan is not None and plan.tier == "enhanced":
            out.append(plan)
    return out


def reminder(plan: ProtectionPlan, n: int, revised: datetime) -> Reply:
    """What control and command are told."""
    return Reply(f"Martyn's Law: revision {n} of the {plan.ground_name} public-protection "
                 f"document (revised {revised:%d %b %Y}) is due with the {plan.regulator} "
                 "today: s.7 asks for it within 30 days of a revision. Send it, then record "
                 f"it: matchday martyns-law --ground {plan.ground} --sent {n}",
                 title="Martyn's Law: send the document to the regulator")


async def remind_due(core: Core, store: Store, facades: StoreFacades,
                     now: datetime) -> list[Outbound]:
    """Send the reminder of every revision 30 days old and not yet sent; what was sent."""
    sent: list[Outbound] = []
    for plan in enhanced_plans(Path(core.settings.config_dir)):
        revs = await facades.protection.revisions(plan.ground)
        if not revs or revs[-1].sent_at:
            continue
        last = revs[-1]
        revised = parse_iso(last.at)
        if now < revised + SEND_WITHIN:
            continue
        reply = reminder(plan, last.n, revised.astimezone(core.settings.zone))
        outs = [Outbound(a, reply, fixture=OPS_OUTBOX) for a in AUDIENCES]
        if not await facades.protection.claim_reminder(plan.ground, last.n, iso(now),
                                                     core.notifier.outbox.ops(outs)):
            continue
        await core.notifier.send(outs)  # written with the claim: only its observers see it
        sent += outs
    return sent
