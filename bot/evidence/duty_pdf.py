"""The per-steward record as a PDF for the club's files: one section per steward (tabard and
the rota's name), a line per fixture worked with the post, check-in, stand-down and the
briefing they signed off; the same rows as stewards.csv, under the same signed manifest."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, tzinfo

from bot.domain.clock import parse_iso
from bot.domain.plurals import counted
from bot.evidence.duty_record import Duty
from bot.evidence.pdf_parts import Page


def _hm(at: str, tz: tzinfo) -> str:
    return f"{parse_iso(at).astimezone(tz):%H:%M}" if at else "-"


def by_steward(rows: list[Duty]) -> dict[tuple[str, str], list[Duty]]:
    """Each steward's duties, by (tabard, name), tabards in number order."""
    out: dict[tuple[str, str], list[Duty]] = defaultdict(list)
    for d in rows:
        out[(d.tabard, d.name)].append(d)
    return dict(sorted(out.items(), key=lambda kv: (len(kv[0][0]), kv[0][0], kv[0][1])))


def duty_pdf(rows: list[Duty], scope: str, generated: datetime, public_key: str,
             tz: tzinfo) -> bytes:
    """The record as an A4 PDF."""
    page = Page("Stewards' duty record", scope)
    stewards = by_steward(rows)
    page.para(f"Generated {generated.astimezone(tz):%d %b %Y %H:%M %Z}. "
              f"{counted(len(stewards), 'steward')}, {counted(len(rows), 'duty', 'duties')}, "
              "from each fixture's rota and log. Only what "
              "the club's rota holds: tabard, the rota's name, the post; no platform account "
              "or phone number. Times are local; '-' means never recorded.")
    page.signed_by(public_key)
    if not stewards:
        page.heading("No duties")
        page.para("No fixture in this scope has a rota.")
    for (tabard, name), duties in stewards.items():
        came = sum(1 for d in duties if d.checked_in)
        briefed = sum(1 for d in duties if d.briefing_signed_off)
        page.heading(f"Tabard {tabard} - {name}", 11.5)
        page.para(f"On the rota at {counted(len(duties), 'fixture')}; checked in at {came}; "
                  f"briefing signed off at {briefed}.")
        page.table((52, 46, 20, 22, 42), ("Fixture", "Post", "Checked in", "Stood down",
                                          "Briefing signed off"),
                   [(f"{parse_iso(d.kickoff).astimezone(tz):%d %b %Y} {d.title}",
                     d.post_name, _hm(d.checked_in, tz),
                     _hm(d.stood_down, tz),
                     f"{d.briefing_version} at {_hm(d.briefing_signed_off, tz)}"
                     if d.briefing_signed_off else "not signed off") for d in duties])
    return page.done()[0]
