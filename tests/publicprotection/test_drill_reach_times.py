"""The Martyn's Law drill log shows when a drilled procedure reached its stewards as the
pack does (issue 36 item 2): the channel post reaches its members when the platform took it,
a direct message its steward; reached n, the last at +s, "I have it" by +1 and +5 minutes,
and the steward no copy reached named from the rota."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pypdfium2 as pdfium

from bot.domain.clock import iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.procedures import Broadcast
from bot.publicprotection.drill_log import drill_rows
from bot.publicprotection.protection_document import ProtectionDocument, digest
from bot.publicprotection.protection_pdf import protection_pdf
from bot.publicprotection.protection_plan import PROCEDURE_KEYS, load_plan
from tests.support.cli import ROOT

SENT = datetime(2026, 12, 2, 19, 30, 5, tzinfo=UTC)
A, B, C = "telegram:101", "telegram:102", "telegram:103"


def ms(seconds: float) -> int:
    return int((SENT + timedelta(seconds=seconds)).timestamp() * 1000)


def test_a_drill_shows_when_its_copies_reached_and_who_had_it_by_when() -> None:
    fx = Fixture("drill-x", "West Ham United", "Chelsea", SENT, "london_stadium", drill=True)
    bc = Broadcast("P-1", "evacuate", "all", "", iso(SENT), "so", 3, acked=(A, B),
                   missing=(C,), planned=3,
                   names=((A, "Amy Post"), (B, "Ben Direct"), (C, "Cal Nobody")),
                   posted=frozenset({A}))
    times = {"P-1": {"post:telegram": ms(2), B: ms(41)}}  # C's copy never delivered
    acks = {"P-1": {A: iso(SENT + timedelta(seconds=45)), B: iso(SENT + timedelta(minutes=4))}}
    [row] = drill_rows(fx, [bc], acks, str, PROCEDURE_KEYS, times)
    assert (row.delivered, row.last_reach_s, row.acked_soon, row.not_reached) == \
        (2, 41, (1, 2), ("Cal Nobody",))
    assert row.as_json()["last_reach_s"] == 41

    plan = load_plan(Path(ROOT / "config" / "grounds" / "london_stadium.toml"))
    doc = ProtectionDocument(plan, 1, digest(plan), iso(SENT), SENT, (row,))
    pdf, _ = protection_pdf(doc, "00" * 32, {}, UTC)
    text = " ".join(" ".join(p.get_textpage().get_text_range()
                             for p in pdfium.PdfDocument(pdf)).split())
    assert "reached 2, last at +41s" in text, text[-800:]
    assert "1 / 2 / 2 (67%)" in text
    assert "no delivery recorded to Cal Nobody" in text
