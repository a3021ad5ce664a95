"""Prompt echo (issue #38): in crowd noise Whisper writes words of its prompt, the ground's
vocabulary, that nobody said. Such segments are dropped from the transcript, so an echoed
place never reaches the suggestion; what a steward really says about a place is kept."""

from __future__ import annotations

import pytest

from bot.domain.grounds import load_grounds
from bot.settings import PROJECT_CONFIG
from bot.voice.echo import Prompt, is_echo, prompt_of
from bot.voice.suggest import prompt_for


@pytest.fixture(scope="module")
def prompt() -> Prompt:
    return prompt_of(prompt_for(list(load_grounds(PROJECT_CONFIG).values())))


def test_a_guess_over_crowd_noise_is_dropped(prompt: Prompt) -> None:
    """What base wrote over the babble for a real speaker's note (bench/voice.py, mfa-cold
    at 10 dB), at its measured confidence."""
    assert is_echo(" Stratford stations, flight, departure, boarding, environment, on a more "
                   "point different.", -1.77, prompt)


def test_the_prompt_recited_is_dropped_however_sure(prompt: Prompt) -> None:
    assert is_echo(" Gate A turnstiles, Away turnstiles, Gate C turnstiles, Gate E turnstiles.",
                   -0.3, prompt)


def test_places_said_with_doubt_and_nothing_else_are_dropped(prompt: Prompt) -> None:
    """A segment that is mostly the prompt's phrases, from a model unsure of it, is an echo;
    the same words heard with confidence are speech."""
    assert is_echo(" Stratford station, Greenway bridge.", -0.7, prompt)
    assert not is_echo(" Stratford station, Greenway bridge.", -0.2, prompt)


@pytest.mark.parametrize("said", [
    "Fight on the walkway at the top of the Billy Bonds Stand, severity four.",
    "Flare lit in block 112, Sir Trevor Brooking Stand, north stand lower tier.",
    "Man collapse at Gate C turnstiles, first aid.",
    "Crowd crush building at Stratford station.",
])
def test_what_stewards_say_about_places_is_kept(prompt: Prompt, said: str) -> None:
    """Reports naming the ground's places, at the confidence base gives speech at 10 dB."""
    assert not is_echo(said, -0.45, prompt)
