"""Prompt echo (issue #38): in crowd noise Whisper writes words of its prompt, the ground's
vocabulary, that nobody said. Those words are dropped from the transcript one by one (the
prompt recited, or a run of the prompt's words the model was unsure of in a segment it had
to guess), so an echoed place never reaches the suggestion, while the words a steward really
said around it, and what they say about places, stay in the transcript."""

from __future__ import annotations

import pytest

from bot.domain.grounds import load_grounds
from bot.settings import PROJECT_CONFIG
from bot.voice.echo import Prompt, Word, guessed, no_speech, prompt_of, without_echo
from bot.voice.suggest import prompt_for, suggest

GROUND = load_grounds(PROJECT_CONFIG)["london_stadium"]


@pytest.fixture(scope="module")
def prompt() -> Prompt:
    return prompt_of(prompt_for(list(load_grounds(PROJECT_CONFIG).values())))


def heard(text: str, probability: float) -> list[Word]:
    """Words as faster-whisper gives them (a leading space each), all equally sure."""
    return [Word(" " + w, probability) for w in text.split()]


def test_an_echoed_place_goes_and_the_report_around_it_stays(prompt: Prompt) -> None:
    """The steward said where; the model added an unsure "Stratford station" from its prompt:
    only those two words go, and the suggested place is the one the steward said."""
    segment = [*heard("Man collapsed at Gate C turnstiles,", 0.9),
               Word(" Stratford", 0.12), Word(" station.", 0.0),
               *heard("First aid needed.", 0.85)]
    text, dropped = without_echo(segment, prompt, guessed(-1.1, 1.6))
    assert text == "Man collapsed at Gate C turnstiles, First aid needed."
    assert dropped == 2
    assert suggest(text, GROUND).zones[:1] == suggest("gate c turnstiles", GROUND).zones[:1]


def test_real_words_of_an_unsure_segment_are_kept(prompt: Prompt) -> None:
    """What base wrote for a real speaker's note at 10 dB (bench/voice.py, mfa-cold: average
    log-probability -1.26, which used to drop the whole segment): nothing in it is the
    prompt, so every word stays, the right ones with the wrong."""
    said = ("Strictly movement, sporting environment, a little bit different. I think this "
            "is probably good. Alright, thanks.")
    assert without_echo(heard(said, 0.3), prompt, guessed(-1.26, 1.5)) == (said, 0)


def test_places_really_said_stay_when_the_model_did_not_have_to_guess(prompt: Prompt) -> None:
    """Base's words for a clean espeak note ("man collapsed at gate C turnstiles, need first
    aid"), decoded at the first try: the place is right although its words scored low."""
    segment = [*heard("Man collapsed at", 0.9), Word(" Gate", 0.35), Word(" C", 0.14),
               Word(" turnstiles,", 0.34), *heard("need first aid.", 0.9)]
    text, dropped = without_echo(segment, prompt, guessed(-0.45, 1.4))
    assert (text, dropped) == ("Man collapsed at Gate C turnstiles, need first aid.", 0)


def test_the_prompt_recited_goes_however_sure(prompt: Prompt) -> None:
    segment = heard("Gate A turnstiles, Away turnstiles, Gate C turnstiles, Gate E turnstiles.",
                    0.9)
    assert without_echo(segment, prompt, guessed(-0.3, 2.0)) == ("", len(segment))


def test_a_place_written_over_and_over_goes_but_said_twice_stays(prompt: Prompt) -> None:
    """The model going round its prompt at temperature 0 in crowd noise, sure of it: gone.
    A steward saying the place twice keeps it."""
    loop = heard("Stratford station. Stratford station. Stratford station.", 0.8)
    assert without_echo(loop, prompt, guessed(-0.6, 1.8)) == ("", len(loop))
    twice = heard("Crush at Stratford station, Stratford station, send help.", 0.8)
    assert without_echo(twice, prompt, guessed(-0.6, 1.8)) == (
        "Crush at Stratford station, Stratford station, send help.", 0)


@pytest.mark.parametrize("places", ["Stratford station, Greenway bridge.",
                                    "Stratford stations."])
def test_places_guessed_with_doubt_go_and_heard_surely_stay(prompt: Prompt, places: str) -> None:
    """In a segment the model repeated itself in (where Whisper would decode again at a
    higher temperature): unsure place names go."""
    assert without_echo(heard(places, 0.3), prompt, guessed(-0.8, 2.6))[0] == ""
    assert without_echo(heard(places, 0.8), prompt, guessed(-0.8, 2.6)) == (places, 0)


def test_a_segment_is_a_guess_when_the_model_repeated_itself_or_was_unsure() -> None:
    """Decoded at temperature 0 only, a segment Whisper would have decoded again (repetitive:
    gzip ratio over 2.4; or average log-probability under -1.0) is a guess; speech is not."""
    assert guessed(-0.3, 3.1)  # "Stratford station. Stratford station. ..." surely written
    assert guessed(-1.2, 1.5)
    assert not guessed(-0.45, 1.4)


@pytest.mark.parametrize("said", [
    "Fight on the walkway at the top of the Billy Bonds Stand, severity four.",
    "Flare lit in block 112, Sir Trevor Brooking Stand, north stand lower tier.",
    "Man collapse at Gate C turnstiles, first aid.",
    "Crowd crush building at Stratford station.",
])
def test_what_stewards_say_about_places_is_kept(prompt: Prompt, said: str) -> None:
    """Reports naming the ground's places, at the word probabilities base gives speech at
    10 dB."""
    assert without_echo(heard(said, 0.6), prompt, guessed(-1.1, 1.6)) == (said, 0)
    assert without_echo(heard(said, 0.2), prompt, guessed(-0.5, 1.6)) == (said, 0)


def test_what_the_model_writes_after_a_note_ends_is_not_speech() -> None:
    """Base's "you" after a clean note had ended (no-speech probability 0.57, log-probability
    -1.90) is dropped; a real speaker's segments (0.19 and -0.25; 0.10 and -0.59) are not."""
    assert no_speech(0.57, -1.90)
    assert no_speech(0.40, -0.66)
    assert not no_speech(0.19, -0.25)
    assert not no_speech(0.10, -0.59)
