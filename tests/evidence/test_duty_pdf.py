"""The per-steward record as a PDF for the club's files (issue 36, beyond): `matchday
stewards` writes stewards.pdf beside stewards.csv, a section per steward, under the signed
manifest; `matchday verify` accepts the folder as signed and names the PDF once it is
edited; `--tabard` gives one steward's record."""

from __future__ import annotations

import pypdfium2 as pdfium

from bot.store.stewarding_keys import Stewarding
from tests.support.cli import matchday

ROTA = "steward id,name,post\n311,A. Steward,stb_250_gangway\n312,B. Steward,gate_b_lane_1\n"


def pdf_text(path) -> str:
    doc = pdfium.PdfDocument(str(path))
    try:
        return "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


async def test_the_club_files_a_signed_pdf_per_steward(say, core, store, redis_url, tmp_path):
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    await say("/deploy import\n" + ROTA, as_="control")
    await say("/tabard 311", as_="steward")
    await say("/onpost stb_250_gangway", as_="steward")
    await say("/briefing", as_="steward")
    version, _ = await Stewarding(store.gateway).briefing_acks(fx)
    await say(f"/briefed {version}", as_="steward")

    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path)}
    out = tmp_path / "record"
    p = matchday("stewards", "--fixture", fx, "--out", str(out), env=env)
    assert p.returncode == 0, p.stderr
    text = pdf_text(out / "stewards.pdf")
    assert "Tabard 311 - A. Steward" in text and "Tabard 312 - B. Steward" in text
    assert "Block 250 gangway" in text and "not signed off" in text  # 312 never came
    assert f"{version} at 18:00" in text  # signed off at 18:00 GMT
    assert "console:" not in text  # no platform account

    v = matchday("verify", str(out), env=env)
    assert v.returncode == 0 and v.stdout.startswith("OK: stewards' record, 2 file(s)"), \
        v.stdout + v.stderr
    keys = matchday("keys", env=env).stdout.split()
    key = next(w for w in keys if len(w) == 64)
    assert matchday("verify", str(out), "--key", key, env=env).returncode == 0
    raw = (out / "stewards.pdf").read_bytes()
    (out / "stewards.pdf").write_bytes(raw + b"%edited\n")
    bad = matchday("verify", str(out), env=env)
    assert bad.returncode == 1 and "stewards.pdf: file changed" in bad.stdout, bad.stdout

    one = tmp_path / "one"
    p = matchday("stewards", "--fixture", fx, "--tabard", "311", "--out", str(one), env=env)
    assert p.returncode == 0, p.stderr
    text = pdf_text(one / "stewards.pdf")
    assert "Tabard 311" in text and "Tabard 312" not in text
    assert matchday("verify", str(one), env=env).returncode == 0
