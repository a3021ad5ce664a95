"""The corpora's noise is mixed at 10 dB under the speech's active level (ITU-T P.56), so a
note with pauses is not made noisier than one without: the level is measured over the
samples where someone speaks, not diluted by silence."""

from __future__ import annotations

import numpy as np

from rigs.voice_corpus import active_level, highpass, rms

RATE = 16_000


def db(amplitude: float) -> float:
    return float(20 * np.log10(amplitude))


def tone(seconds: float, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return amplitude * np.sin(2 * np.pi * 440 * t)


def test_a_tone_with_long_silence_has_the_tone_s_level() -> None:
    """2 s of tone then 8 s of silence: the active level is the tone's (within 1 dB), where
    the whole file's RMS is 7 dB lower."""
    note = np.concatenate([tone(2), np.zeros(8 * RATE)])
    assert abs(db(active_level(note, RATE)) - db(rms(tone(2)))) < 1.0
    assert db(rms(note)) < db(rms(tone(2))) - 6.5


def test_continuous_sound_is_its_rms() -> None:
    """With no pauses the active level is the RMS level, tone or noise, over a quiet floor."""
    noise = np.random.default_rng(38).normal(0, 0.05, 5 * RATE)
    assert abs(db(active_level(noise, RATE)) - db(rms(noise))) < 0.5
    assert abs(db(active_level(tone(3), RATE)) - db(rms(tone(3)))) < 0.5
    floor = np.random.default_rng(26).normal(0, 0.0005, 8 * RATE)
    floor[:2 * RATE] += tone(2)
    assert abs(db(active_level(floor, RATE)) - db(rms(tone(2)))) < 1.0


def test_rumble_under_the_speech_band_is_not_counted() -> None:
    """A tone under a 10 Hz rumble ten times its power: measured above 50 Hz, the level is
    the tone's, not the rumble's."""
    t = np.arange(4 * RATE) / RATE
    rumble = np.sqrt(10) * 0.3 * np.sin(2 * np.pi * 10 * t)
    heard = highpass(tone(4) + rumble, RATE)
    assert abs(db(active_level(heard, RATE)) - db(rms(tone(4)))) < 0.5
    assert db(active_level(tone(4) + rumble, RATE)) > db(rms(tone(4))) + 9
