"""Small words (#31 item 6): what people read says it right: the found line, counts, values
without their quotes, METHANE's questions, one type choice per decision form, refusals that
say who can, and the README's count of the bundled night."""

from __future__ import annotations

from pathlib import Path

from bot.domain.messages import Result
from tests.support.lifecycle import record

ROOT = Path(__file__).resolve().parents[2]
SO = "safety_officer"


def tap(r: Result, label: str) -> str:
    """The command of the button with this label."""
    return next(b.command for row in r.reply.buttons for b in row if b.label == label)


async def test_found_says_where_without_a_stray_at(say, core):
    r = await say("/missing age=7 desc=red coat seen=gate c at=19:20", as_=SO)
    mid = next(w for w in r.reply.title.split() if w.startswith("M-"))
    sent = record(core)
    r = await say(f"/found {mid} with mum at Gate C", as_=SO)
    assert r.reply.ok, r.reply.text
    texts = {o.reply.text for o in sent if "FOUND" in o.reply.title}
    assert texts and all(t.startswith(f"{mid} found: with mum at Gate C. Stand down the "
                                      "search.") for t in texts), texts


async def test_one_decision_is_one_entry_and_quotes_are_not_kept(say):
    r = await say('/decision d="Open Gate F" why=\u201cqueue on the bridge\u201d', as_=SO)
    assert r.reply.ok, r.reply.text
    r = await say("/decisions", as_=SO)
    assert r.reply.title.endswith("· 1 entry"), r.reply.title
    assert "  Open Gate F\n" in r.reply.text and "Why: queue on the bridge" in r.reply.text
    assert '"' not in r.reply.text and "\u201c" not in r.reply.text, r.reply.text


async def test_the_decision_form_offers_the_types_once(say):
    r = await say("/decision", as_=SO)
    r = await say(tap(r, "Match stoppage"), as_=SO)
    assert r.reply.text.startswith("Type: Match stoppage.")
    labels = [b.label for row in r.reply.buttons for b in row]
    assert labels == ["Cancel"], labels  # the decision itself is typed next


async def test_methane_asks_each_question_as_a_sentence(say):
    r = await say("/methane", as_=SO)
    r = await say(tap(r, "No (ETHANE)"), as_=SO)
    assert r.reply.text == "E – Exact location: type it.", r.reply.text


async def test_a_refusal_says_who_can_and_whom_to_ask(say):
    r = await say("/phase ht", as_="police_commander")
    assert r.reply.text == ("/phase is not for your role (Police commander). Only Control "
                            "room or Safety Officer can. Ask control."), r.reply.text
    r = await say("/arrest vd inside away", as_="control")
    assert r.reply.text.endswith("Only Police liaison can. Ask the police liaison.")
    r = await say("/help ack", as_="steward")
    assert r.reply.text.endswith("Ask your supervisor."), r.reply.text


def test_the_readme_counts_the_bundled_night_right():
    lines = (ROOT / "bot/scenarios/west_ham_chelsea.jsonl").read_text().splitlines()
    readme = (ROOT / "README.md").read_text()
    assert f"west_ham_chelsea.jsonl   # {len(lines)} lines on a virtual clock" in readme


async def test_a_steward_refused_status_is_sent_to_a_person_not_a_viewer(say):
    """A viewer (a read-only screen) was named as whom to ask: 'Ask a viewer.'"""
    r = await say("/status", as_="steward")
    assert not r.reply.ok and "Ask a viewer" not in r.reply.text, r.reply.text
    assert r.reply.text.endswith("Ask your supervisor."), r.reply.text
