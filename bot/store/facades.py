"""The store's facades besides the incident log (bot/store/client.py), one per purpose, each
over the one Gateway: what delivery keeps, what the platform adapters keep, what the
control-room web view keeps, and each domain's record (stewarding, decisions, police, forms,
the audit trail, ...). The composition root (bot/app.py) builds them once; each consumer
takes its own (the notifier, the adapters' parts, the web view, the scheduler, handlers
through ctx.facades)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.store.audit_trail import AuditTrail
from bot.store.base import ops_prefix
from bot.store.chat_moves import ChatMoves
from bot.store.choices import Choices
from bot.store.clubs import ClubRegistry
from bot.store.deadline_keys import Deadlines
from bot.store.decision_keys import DecisionLog
from bot.store.feed import Feed
from bot.store.form_state import Forms
from bot.store.gateway import Gateway
from bot.store.inbox import Inbox, Seen
from bot.store.ingress_keys import IngressCounts
from bot.store.inspection_keys import Inspections
from bot.store.lease import Lease, polling
from bot.store.log_views import LogViews
from bot.store.members import Members
from bot.store.menus_given import MenusGiven
from bot.store.message_refs import MessageRefs
from bot.store.notices import Notices
from bot.store.outbox import Outbox, last_ids
from bot.store.plans import Plans
from bot.store.police_records import PoliceRecords
from bot.store.protection_keys import ProtectionRevisions
from bot.store.replica_changes import Changes
from bot.store.report_extras import ReportExtras
from bot.store.stewarding_keys import Stewarding
from bot.store.timing_keys import KeyTimings
from bot.store.unsure import Unsure
from bot.store.web_sessions import WebSessions
from bot.store.windows import Windows


class DeliveryState:
    """The outbox, the rate-limit windows every replica shares, where live messages are,
    and the leases of singleton duties."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.outbox = Outbox(gateway)
        self.windows = Windows(gateway)
        self.refs = MessageRefs(gateway)

    def lease(self, name: str, owner: str, ttl_ms: int = 10_000) -> Lease:
        """A deployment-wide lease (e.g. the singleton duties')."""
        return Lease(self.gateway, name, owner, ttl_ms)


class PlatformState:
    """Inbound updates already seen, each Telegram bot's inbox and polling lease, chat
    moves, Slack Home-tab watchers, and which live message a reply answers."""

    def __init__(self, gateway: Gateway, refs: MessageRefs) -> None:
        self.gateway = gateway
        self.seen = Seen(gateway)
        self.chat_moves = ChatMoves(gateway)
        # Who has the Slack Home tab open, shared by every replica: user -> when their watch
        # lapses (renewed each time they open the tab), so the one replica refreshing Home
        # tabs (under the leader lease) knows whom to refresh, whichever replica they used.
        self.watchers = ops_prefix(gateway.space) + "home:watchers"
        self._refs = refs

    def inbox(self, bot_id: str) -> Inbox:
        """One Telegram bot's recorded-but-unprocessed updates."""
        return Inbox(self.gateway, bot_id)

    def menus(self, bot_id: str) -> MenusGiven:
        """Which command menu each person was last given by one Telegram bot."""
        return MenusGiven(self.gateway, bot_id)

    def polling(self, bot_id: str, owner: str, ttl_ms: int = 10_000) -> Lease:
        """One Telegram bot's polling lease (see bot.store.lease.polling)."""
        return polling(self.gateway, bot_id, owner, ttl_ms)

    async def last_ids(self, platform: str) -> dict[str, int]:
        """Id space -> the highest message id delivery recorded there (in-doubt lookups)."""
        return await last_ids(self.gateway, platform)

    async def ref_of_message(self, platform: str, chat: str,
                             message_id: str) -> tuple[str, str] | None:
        """(fixture, ref) of a live message the bot posted, e.g. to attach a reply's photo."""
        return await self._refs.ref_of_message(platform, chat, message_id)

    async def watch_home(self, user: str, until_ts: float) -> None:
        """A Slack user opened the Home tab: watch it until `until_ts` (epoch seconds)."""
        await self.gateway.call(lambda r: r.zadd(self.watchers, {user: until_ts}))

    async def unwatch_home(self, user: str) -> None:
        """Stop refreshing a user's Home tab (no longer a member)."""
        await self.gateway.call(lambda r: r.zrem(self.watchers, user))

    async def home_watchers(self, now_ts: float) -> list[str]:
        """Users whose watch has not lapsed (lapsed ones are forgotten)."""
        pipe = self.gateway.pipeline()
        pipe.zremrangebyscore(self.watchers, "-inf", now_ts)
        pipe.zrangebyscore(self.watchers, now_ts, "+inf")
        _, users = await self.gateway.call(pipe.execute())
        return list(users)


class WebState:
    """The control-room web view's sign-in links and sessions, its feed of the logs, and
    when each live card reached the control chats."""

    def __init__(self, gateway: Gateway, refs: MessageRefs) -> None:
        self.sessions = WebSessions(gateway)
        self.feed = Feed(gateway)
        self._refs = refs

    async def delivered_at(self, fixture: str, refs: list[str]) -> dict[str, dict[str, int]]:
        """ref -> {'platform:chat': ms since the epoch its live message first arrived}."""
        return await self._refs.delivered_at(fixture, refs)


@dataclass(frozen=True)
class StoreFacades:
    """Every facade but the incident log, over one gateway: one per purpose, none of them
    hanging off another (the incident log included)."""

    delivery: DeliveryState
    platform: PlatformState
    web: WebState
    plans: Plans
    deadlines: Deadlines
    views: LogViews
    reports: ReportExtras
    stewarding: Stewarding
    decisions: DecisionLog
    inspections: Inspections
    timings: KeyTimings
    ingress: IngressCounts
    protection: ProtectionRevisions
    forms: Forms
    choices: Choices
    unsure: Unsure
    changes: Changes
    audit: AuditTrail
    members: Members
    notices: Notices
    police: PoliceRecords
    clubs: ClubRegistry

    @classmethod
    def over(cls, gateway: Gateway) -> StoreFacades:
        """Build each facade once (the composition root calls this)."""
        delivery = DeliveryState(gateway)
        return cls(delivery, PlatformState(gateway, delivery.refs),
                   WebState(gateway, delivery.refs), Plans(gateway),
                   deadlines=Deadlines(gateway), views=LogViews(gateway),
                   reports=ReportExtras(gateway), stewarding=Stewarding(gateway),
                   decisions=DecisionLog(gateway),
                   inspections=Inspections(gateway), timings=KeyTimings(gateway),
                   ingress=IngressCounts(gateway), protection=ProtectionRevisions(gateway),
                   forms=Forms(gateway), choices=Choices(gateway), unsure=Unsure(gateway),
                   changes=Changes(gateway), audit=AuditTrail(gateway),
                   members=Members(gateway), notices=Notices(gateway),
                   police=PoliceRecords(gateway), clubs=ClubRegistry(gateway))
