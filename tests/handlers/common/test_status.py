"""/status: the commander's one phone screen."""

from datetime import timedelta

from bot.domain.vocab import INCIDENT_TYPES


async def test_status_fits_one_screen_with_30_open_incidents(say, core, clock):
    types = [t for t in INCIDENT_TYPES.keys() if t != "suspicious_item"]
    pairs = [(t, z) for z in ("stb_lower", "bms_upper") for t in types][:30]  # never "near"
    for n, (t, z) in enumerate(pairs):
        r = await say(f"/incident {t} @{z} s{1 + n % 5}", as_="steward")
        assert r.reply.title.startswith("Logged"), r.reply.text
        clock.advance(timedelta(seconds=20))
    await say("/ack 5 on it", as_="supervisor")
    await say("/arrest public_disorder x2 outside away ref=C/1", as_="police_liaison")
    await say("/ban club_season", as_="safety_officer")

    async def missed(fx):
        return ["Missed briefing: T-3h (store was down)"]

    core.status_lines.append(missed)
    clock.advance(timedelta(minutes=5))
    r = await say("/status", as_="police_commander")
    lines = r.reply.lines()
    assert len(lines) <= 15, "\n".join(lines)
    text = r.reply.text
    assert "Open: 30 (unacknowledged 29)" in text
    assert "🔴5×6 🟠4×6 🟡3×6 🟢2×6 ⚪1×6" in text
    shown = [ln for ln in lines if ln.startswith("INC-")]
    sevs = [int(ln.split()[1][-1]) for ln in shown]
    assert sevs == sorted(sevs, reverse=True) and sevs[0] == 5  # worst first
    fives = [int(ln.split()[0][4:]) for ln in shown if ln.split()[1].endswith("5")]
    assert fives == sorted(fives)  # oldest first within a severity
    assert shown[0].endswith("13m · Supervisor North") and shown[1].endswith("UNACKED")
    assert any("+" in ln and "more open" in ln for ln in lines)
    assert "Arrests: 2 (inside 0, outside 2) · Bans: 1" in text
    assert "Median time to acknowledge tonight:" in text
    assert "Missed briefing: T-3h" in lines[-1]
    assert "C/1" not in text


async def test_status_shows_what_changed_in_the_last_15_minutes(say, core, clock):
    await say("/incident pyro @away_upper s3", as_="steward")
    clock.advance(timedelta(minutes=20))
    await say("/incident missile @bbs s4", as_="steward")
    clock.advance(timedelta(seconds=90))
    await say("/ack 2", as_="control")
    await say("/resolve 1", as_="control")
    r = await say("/status", as_="safety_officer")
    text = r.reply.text
    assert "Last 15 min: 1 new, 2 acked, 1 closed (INC-2 new)" in text, text
    assert "Median time to acknowledge tonight: 11m30 (worst 21m30" in text
    assert "Open: 1 (unacknowledged 0)" in text
    assert "INC-2 🟠4 Throwing missiles" in text and "Control loggist" in text
