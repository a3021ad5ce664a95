"""Standing guard (issue 10): random and adversarial command lines from every role, through
the core, against the real Redis. No exception escapes a handler, every command is answered,
every answer fits every platform, and afterwards the counters equal a recount of the log and
the evidence export verifies."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app import build_core
from bot.domain.clock import VirtualClock
from bot.domain.ledger import recount
from bot.domain.messages import Command
from bot.domain.vocab import INCIDENT_TYPES
from bot.evidence.export import export_fixture
from bot.evidence.signing import new_key
from bot.evidence.verify import verify_dir
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from bot.store import Store
from handlers import sweep_escalations
from tests.conftest import START
from tests.support.paging import (
    fits_every_platform,
)

EXAMPLES = 300
# (platform, user): every console roster role, a Telegram steward, and a stranger
PEOPLE = [("console", r) for r in ("steward", "supervisor", "control", "safety_officer",
                                   "police_liaison", "police_commander", "viewer", "admin")]
PEOPLE += [("telegram", "100000001"), ("telegram", "555")]

COMMANDS = ["incident", "i", "report", "ack", "dispatch", "onscene", "contain", "handover",
            "resolve", "update", "escalate", "amend", "reopen", "arrest", "ban", "status",
            "summary", "briefing", "season", "fixture", "fixtures", "phase", "methane",
            "invite", "join", "whoami", "help", "note", "form", "merge", "hot", "export",
            "incidnet", "x", ""]
WORDS = [
    *INCIDENT_TYPES.keys()[:8], "fight", "flare", "@stb_walkway", "@stb_upper", "@gate_a",
    "@gate a", "@block_112", "@block_999", "@nowhere", "@", "s0", "s1", "s3", "s4", "s5",
    "s6", "s9", "sev=12", "x0", "x3", "x99999999", "aff=home", "aff=away", "aff=mars",
    "1", "2", "3", "9", "0", "-1", "INC-1", "INC-2", "inc=1", "inc=999", "page", "2",
    "99999999999", "ref=CUS/1", "throwing_missiles", "club_lifetime", "years=3", "inside",
    "away", "yes", "no", "cancel", "back", "more", "type", "loc", "sev", "confirm", "new",
    "m=yes", "m=no", "e=stb walkway", "t=fight", "h=none", "a=gate a", "n=0", "s=police",
    "first_half", "full_time", "ht", "category", "C-IRD", "kickoff", "2026-11-26 19:45",
    "use", "add", "Home", "v", "Away", "note", "intel", "steward", "admin", "'", '"',
    "{n}", "<b>", "&amp;", "</b>", "🙂", "\u202e", "ＩＮＣ", "C:\\temp", "%s", "*_~`",
    "a" * 300, "word " * 200, "<>&" * 500,
]
LONG = ["<>&" * 900, "word " * 590, "\u2028".join(["line"] * 300), "🙂" * 1500]
word = st.one_of(st.sampled_from(WORDS), st.text(max_size=30))
text = st.one_of(st.builds(" ".join, st.lists(word, max_size=6)), st.sampled_from(LONG))
num = st.sampled_from(["1", "2", "3", "INC-1", "7"])
zone = st.sampled_from(["stb_walkway", "stb_upper", "seg_ne", "gate_a", "block_112", "pml"])
sev = st.sampled_from(["", "s1", "s3", "s4", "s5"])
kind = st.sampled_from(INCIDENT_TYPES.keys()[:6])
line = st.one_of(
    st.builds(lambda c, ws: f"/{c} " + " ".join(ws), st.sampled_from(COMMANDS),
              st.lists(word, max_size=8)),
    st.builds(" ".join, st.lists(word, min_size=1, max_size=6)),  # plain text
    st.text(max_size=3200),
    # well-formed lines carrying adversarial text, so they get past the parsers
    st.builds("/incident {} @{} {} {}".format, kind, zone, sev, text),
    st.builds("/update {} {}".format, num, text),
    st.builds("/incident {}".format, num),
    st.builds("/{} {} {}".format, st.sampled_from(["ack", "onscene", "resolve", "escalate"]),
              num, text),
    st.builds("/methane m=yes e=stb walkway t=fight h={} a=gate a n={} s=police".format,
              text, text),
    text,
)
action = st.tuples(st.sampled_from(PEOPLE), st.one_of(line, st.integers(0, 12)),
                   st.integers(0, 240))


class Failures(logging.Handler):
    """Errors the product logs ('handler /x failed', 'change hook failed') and any logged
    traceback; not asyncio's notes about earlier tests' abandoned tasks."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("bot", "handlers")) or record.exc_info:
            self.records.append(record)


@pytest.mark.long  # a minute or more of subprocesses: started first
def test_fuzzed_commands_from_every_role(redis_url: str, tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    store = Store.from_url(redis_url)
    loop.run_until_complete(store.reset_for_tests())
    clock = VirtualClock(START)
    core = build_core(store, load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path)),
                      clock, cache_ttl=0)
    loop.run_until_complete(ensure_sample_fixture(core))
    failures = Failures()
    logging.getLogger().addHandler(failures)
    last_buttons: dict[tuple[str, str], list[str]] = {}
    ran = [0]
    ids = iter(range(10**9))

    async def one(person: tuple[str, str], what: str | int, wait: int) -> None:
        clock.advance(timedelta(seconds=wait))
        if isinstance(what, int):  # press a button of this person's last answer
            buttons = last_buttons.get(person) or []
            if not buttons:
                return
            what = buttons[what % len(buttons)]
        platform, user = person
        cmd = Command(platform=platform, chat=user, user=user, text=what,
                      dedupe_key=f"fuzz:{next(ids)}")
        result = await core.handle(cmd)
        ran[0] += 1
        assert result is not None, f"no answer to {what!r} from {person}"
        assert result.reply.text.strip() or result.reply.title.strip(), what
        assert fits_every_platform(result.reply), (what, len(result.reply.text))
        for row in result.reply.buttons:
            for b in row:
                assert len(b.command.encode()) <= 64, b.command  # Telegram callback data
        last_buttons[person] = [b.command for row in result.reply.buttons for b in row]

    # derandomized: the same inputs every run, so the suite never flakes; widen EXAMPLES
    # or drop derandomize locally to hunt further
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(action, min_size=1, max_size=6))
    def run(actions: list) -> None:
        for person, what, wait in actions:
            loop.run_until_complete(one(person, what, wait))
        loop.run_until_complete(sweep_escalations(core, core.store, clock.now()))
        assert not failures.records, [r.getMessage() for r in failures.records]

    try:
        run()
        assert ran[0] >= EXAMPLES
        assert not failures.records, [r.getMessage() for r in failures.records]

        async def audit() -> int:
            fixtures = await store.fixtures()
            for fx in fixtures:
                events = await store.events(fx.id)
                assert await store.counts(fx.id) == dict(recount(events).counts), fx.id
                out = await export_fixture(store, core.facades, fx.id, tmp_path / f"ex-{fx.id}",
                                           restricted=False, key=new_key())
                result = verify_dir(out)
                assert result.ok and result.events == len(events), result
            return len(fixtures)

        assert loop.run_until_complete(audit()) >= 1
        print(f"\nfuzz: {ran[0]} commands, tracebacks {len(failures.records)}")
    finally:
        logging.getLogger().removeHandler(failures)
        loop.run_until_complete(store.close())
        loop.close()
