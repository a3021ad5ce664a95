"""A club's value (#39): its id is a slug, its secrets are references (env:/file:) that never
hold the secret, and a reference that does not resolve says so naming the ref, not a value."""

from __future__ import annotations

import pytest

from bot.domain.club_record import (
    Club,
    ClubError,
    SecretRef,
    parse_club_id,
    parse_ref,
    parse_retention,
)

SECRET = "7712345678:AAH9x-Kq2LwVtR8sQpZ0yN3mB5cD7eF1gH4"


@pytest.mark.parametrize("good", ["west-ham", "ars", "a1", "spurs-u21"])
def test_a_slug_is_a_club_id(good):
    assert parse_club_id(good) == good


@pytest.mark.parametrize("bad", ["West-Ham", "a", "-ham", "west ham", "west_ham", "x" * 32, ""])
def test_anything_else_is_refused_in_one_line(bad):
    with pytest.raises(ClubError) as exc:
        parse_club_id(bad)
    assert "\n" not in str(exc.value) and "club id" in str(exc.value)


def test_references_parse_and_print_as_typed():
    assert str(SecretRef.parse("env:WHU_TG_TOKEN")) == "env:WHU_TG_TOKEN"
    assert SecretRef.parse("file:/run/secrets/whu") == SecretRef("file", "/run/secrets/whu")


@pytest.mark.parametrize("literal", [SECRET, "xoxb-1234-5678-abcdef", "env:bad-name", "env:1X",
                                     "file:relative/path", "ENV:X"])
def test_a_literal_secret_is_refused_without_repeating_it(literal):
    with pytest.raises(ClubError) as exc:
        parse_ref("--telegram-token", literal)
    message = str(exc.value)
    assert "--telegram-token" in message and "env:VAR_NAME" in message
    assert literal not in message and "\n" not in message


def test_resolve_reads_the_environment_and_files(tmp_path):
    path = tmp_path / "tg"
    path.write_text(SECRET + "\n")
    assert SecretRef("env", "TG").resolve({"TG": SECRET}) == SECRET
    assert SecretRef("file", str(path)).resolve({}) == SECRET


@pytest.mark.parametrize("ref, env", [(SecretRef("env", "TG"), {"OTHER": SECRET}),
                                      (SecretRef("env", "TG"), {"TG": ""}),
                                      (SecretRef("file", "/nonexistent/tg"), {"TG": SECRET})])
def test_a_missing_secret_names_the_ref_never_a_value(ref, env):
    with pytest.raises(ClubError) as exc:
        ref.resolve(env)
    assert str(ref) in str(exc.value) and SECRET not in str(exc.value)
    assert not ref.resolves(env)


def test_retention_is_bounded():
    assert parse_retention(365) == 365
    for bad in (0, -1, 3651):
        with pytest.raises(ClubError):
            parse_retention(bad)


def test_a_club_survives_its_stored_fields():
    refs = [SecretRef("env", n) for n in ("A", "B", "C")] + [SecretRef("file", "/s/d")]
    club = Club("west-ham", "West Ham United", False, *refs, grounds=("london_stadium",),
                retention_days=90)
    assert Club.from_fields(club.to_fields()) == club
