"""Make the voice-note corpus (no downloads): short steward reports spoken by espeak-ng
voices, encoded as Telegram voice notes (OGG/Opus, 48 kHz mono), and the same mixed with
crowd-like babble (other espeak-ng talkers and pink noise) at 10 dB SNR with sox: the noise's
RMS level 10 dB under the speech's *active* level (ITU-T P.56, method B: the level over the
samples where speech is active, pauses left out), not under its RMS over the whole file, which
counts the pauses and makes a note with pauses much noisier than 10 dB. Both levels are
measured in the wideband speech band, above 50 Hz (ITU-T P.341's lower edge): a recording's
inaudible rumble is not speech (93 % of one real note's energy is under 20 Hz; counted, it put
the babble 12 dB louder than its speech). The texts, with the incident type and place each one
reports, are the ground truth.

    sudo apt-get install -y espeak-ng sox libsox-fmt-all
    pip install -e ".[voice]"     # PyAV (with faster-whisper) encodes the Opus
    python rigs/voice_corpus.py [--out DIR]     # default: bench/.voice-corpus
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "bench" / ".voice-corpus"
SNR_DB = 10.0
BAND_HZ = 50.0  # levels are measured above this (the wideband speech band, ITU-T P.341)
# (what the steward says, incident type, zone id at the London Stadium)
REPORTS: list[tuple[str, str, str]] = [
    ("Flare lit in block 112, north stand lower tier.", "pyro", "stb_lower"),
    ("Coins thrown from the away end towards the home fans.", "missile", "away_upper"),
    ("Fight on the walkway at the top of the Billy Bonds Stand, severity four.", "disorder",
     "bbs_walkway"),
    ("Man collapsed at gate C turnstiles, need first aid.", "medical", "gate_c"),
    ("Supporter ran onto the pitch at the south goal.", "pitch_incursion", "pitch_south"),
    ("Away fans climbing over the segregation line, severity four.", "segregation_breach",
     "seg_ne"),
    ("Racist chanting in block 215, east upper tier.", "discriminatory", "bbs_upper"),
    ("Very drunk male refused entry at gate A.", "alcohol", "gate_a"),
    ("Suspicious package left by the away turnstiles.", "suspicious_item", "gate_away"),
    ("Crowd crush building at Stratford station.", "crowd_density", "stratford"),
    ("Smoke bomb let off in the West Stand concourse.", "pyro", "ws_concourse"),
    ("Bottles thrown in the coach park.", "missile", "outside_coach"),
    ("Steward assaulted at gate E, severity four.", "assault_staff", "gate_e"),
    ("Lost child at the Bobby Moore Stand concourse.", "safeguarding", "bms_concourse"),
    ("Drone hovering above the south stand.", "drone", "bms"),
    ("Fans standing on seats in block 140.", "persistent_standing", "bms_lower"),
    ("Seats smashed in block 250, north upper tier.", "criminal_damage", "stb_upper"),
    ("Fire in a bin on the east concourse.", "fire", "bbs_concourse"),
    ("Fighting outside Pudding Mill Lane station.", "disorder", "pudding_mill"),
    ("Two lads jumped the turnstile at gate F without tickets.", "entry", "gate_f"),
    ("Supporter ejected from block 145, west lower tier.", "ejection", "ws_lower"),
    ("Cracked barrier on the Bobby Moore Stand walkway.", "structural", "bms_walkway"),
    ("Man bleeding from the head in block 230.", "medical", "bms_upper"),
    ("Cannabis being smoked in the West Stand upper tier.", "drugs", "ws_upper"),
    ("Homophobic abuse from block 120, east lower.", "discriminatory", "bbs_lower"),
    ("Pyro going off in the away section.", "pyro", "away_upper"),
    ("Lighters thrown from the north stand.", "missile", "stb"),
    ("Large fight on the Greenway bridge.", "disorder", "outside_bridge"),
    ("Overcrowding in the north concourse, people packed in.", "crowd_density",
     "stb_concourse"),
    ("Home fans trying to get into the sterile area.", "segregation_breach", "seg_ne"),
    ("Unattended bag under a seat in block 105.", "suspicious_item", "stb_lower"),
    ("Woman fainted in the heat at gate E.", "medical", "gate_e"),
    ("Spitting at stewards from the away end.", "antisocial", "away_upper"),
    ("Youths swearing and abusive at the coach park.", "antisocial", "outside_coach"),
    ("Pitch invader near the tunnel.", "pitch_incursion", "pitch_west"),
    ("Two flares set off in block 260.", "pyro", "stb_upper"),
    ("Fight in the toilets on the south concourse.", "disorder", "bms_concourse"),
    ("Drunk fan asleep in block 133.", "alcohol", "bms_lower"),
    ("Missile hit a substitute near the dugouts.", "missile", "pitch_west"),
    ("No tickets, group pushing at gate A.", "entry", "gate_a"),
    ("Flames coming from a kiosk on the west concourse.", "fire", "ws_concourse"),
    ("Child separated from his parents at Stratford station.", "safeguarding", "stratford"),
    ("Objects thrown at the away coaches.", "missile", "outside_coach"),
    ("Broken seats in block 118, east lower.", "criminal_damage", "bbs_lower"),
    ("Fans refusing to sit down in block 248.", "persistent_standing", "ws_upper"),
    ("Racist abuse aimed at a player at the north goal.", "discriminatory", "pitch_north"),
    ("Man with chest pain in the Billy Bonds Stand lower tier.", "medical", "bbs_lower"),
    ("Crowd surging at the away turnstiles.", "crowd_density", "gate_away"),
    ("Someone let off a firework in block 150.", "pyro", "ws_lower"),
    ("Suspicious man with a holdall near gate F.", "suspicious_item", "gate_f"),
]
# The reporting voices: espeak-ng's plain British, RP and American English, each as its
# default male voice and one female variant, taken in turn (never chosen per sentence).
# espeak-ng's regional voices and most of its variants are far less intelligible than a
# person (README: "Voice notes"); they still talk in the babble below.
VOICES = ["en-gb", "en-gb-x-rp", "en-us"]
VARIANTS = ["", "+f3"]
RATE = (150, 160)  # words per minute: a natural speaking rate
BABBLE_VOICES = ["en-gb", "en-gb-x-rp", "en-us", "en-gb-scotland", "en-gb-x-gbcwmd", "en-029",
                 "en-gb-x-gbclan", "en-us-nyc"]
BABBLE_VARIANTS = ["", "+m3", "+f2", "+m1", "+f4"]
BABBLE = [  # crowd talk under the report: other talkers, not the words being scored
    "come on you irons", "what a goal that was", "where are we sitting mate",
    "get a pie at half time", "referee you are having a laugh", "who is playing up front",
    "I told you he would miss that", "two more minutes of injury time", "pass it wide",
    "we are going to win this", "did you see that tackle", "the train was packed tonight",
]


def run(*cmd: str) -> str:
    """Run a program; its stdout and stderr (sox prints stat to stderr). sox runs repeatable
    (-R): its pink noise and dither are otherwise new on every run, so a noisy note, and what
    the model heard in it, differed from one run of the voice tests to the next (CI once
    heard "e-git" for "acoustic": a stray "E", as in the prompt's "Gate E")."""
    if cmd and cmd[0] == "sox":
        cmd = ("sox", "-R", *cmd[1:])
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return p.stdout + p.stderr


def samples(wav: Path, rate: int = 16000) -> np.ndarray:
    """A sound file's samples, mono at `rate`, as floats in [-1, 1] (sox reads any format)."""
    raw = subprocess.run(["sox", str(wav), "-t", "raw", "-e", "floating-point", "-b", "32",
                          "-c", "1", "-r", str(rate), "-"], capture_output=True,
                         check=True).stdout
    return np.frombuffer(raw, dtype=np.float32).astype(np.float64)


def rms(x: np.ndarray) -> float:
    """RMS amplitude over every sample (how the noise's level is measured)."""
    return float(np.sqrt(np.mean(np.square(x)))) if len(x) else 0.0


def highpass(x: np.ndarray, rate: int, hz: float = BAND_HZ) -> np.ndarray:
    """The signal without what is under `hz` (DC, rumble): its spectrum's lower bins zeroed."""
    spectrum = np.fft.rfft(x)
    spectrum[np.fft.rfftfreq(len(x), 1 / rate) < hz] = 0
    return np.fft.irfft(spectrum, len(x))


def _smooth(x: np.ndarray, g: float) -> np.ndarray:
    """One-pole smoothing y[k] = g*y[k-1] + (1-g)*x[k], from y = 0."""
    y = np.empty_like(x)
    acc, a = 0.0, 1.0 - g
    for k, v in enumerate(x.tolist()):
        acc = g * acc + a * v
        y[k] = acc
    return y


def active_level(x: np.ndarray, rate: int) -> float:
    """The active speech level (RMS amplitude over the active samples) of ITU-T P.56 method
    B: the envelope (|x| smoothed twice, 30 ms) against thresholds an octave apart, a sample
    active at a threshold while the envelope is over it or up to 200 ms after; the level is
    where the mean square over the active samples is 15.9 dB over the threshold
    (interpolated in dB between the two thresholds around it). The whole file's RMS when no
    threshold qualifies."""
    margin, hangover = 15.9, int(np.ceil(0.2 * rate))
    g = float(np.exp(-1.0 / (0.03 * rate)))
    envelope = _smooth(_smooth(np.abs(x), g), g)
    energy = float(np.sum(np.square(x)))
    index = np.arange(len(x))
    levels: list[tuple[float, float]] = []  # (mean square over active, threshold), in dB
    for c in 2.0 ** np.arange(-15, 0):  # 16-bit audio's thresholds: 2^-15 ... 2^-1
        over = np.where(envelope >= c, index, -hangover - 1)
        active = int(np.count_nonzero(index - np.maximum.accumulate(over) <= hangover))
        if active == 0:
            break
        level = 10 * np.log10(energy / active + 1e-20)
        threshold = 20 * np.log10(c)
        if level - threshold <= margin:
            if not levels:
                break
            a_prev, c_prev = levels[-1]
            t = (a_prev - c_prev - margin) / ((a_prev - c_prev) - (level - threshold))
            return float(10 ** ((a_prev + t * (level - a_prev)) / 20))
        levels.append((level, threshold))
    return rms(x)


def seconds(wav: Path) -> float:
    """A WAV file's length."""
    return float(run("soxi", "-D", str(wav)).strip())


def speak(text: str, voice: str, speed: int, pitch: int, out: Path, gap: int = 0) -> None:
    """espeak-ng reads the text (`gap`: pause between words, in 10 ms); sox makes it 16 kHz
    mono with a little room around it."""
    raw = out.with_suffix(".raw.wav")
    run("espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-g", str(gap), "-w",
        str(raw), text)
    run("sox", str(raw), "-r", "16000", "-c", "1", str(out), "gain", "-2", "pad", "0.3",
        "0.4")
    raw.unlink()


def babble(length: float, rng: random.Random, work: Path) -> Path:
    """Crowd-like babble as long as the report: six other talkers and pink-noise roar."""
    talkers: list[str] = []
    for i in range(6):
        wav = work / f"talker{i}.wav"
        line = ". ".join(rng.sample(BABBLE, 4))
        speak(line, rng.choice(BABBLE_VOICES) + rng.choice(BABBLE_VARIANTS),
              rng.randint(140, 190),
              rng.randint(20, 80), wav)
        shifted = work / f"talker{i}s.wav"
        run("sox", str(wav), str(shifted), "trim", f"{rng.uniform(0, 1.5):.2f}",
            "repeat", "3", "trim", "0", f"{length:.2f}", "vol", f"{rng.uniform(0.5, 1):.2f}")
        talkers.append(str(shifted))
    roar = work / "roar.wav"
    run("sox", "-n", "-r", "16000", "-c", "1", str(roar), "synth", f"{length:.2f}",
        "pinknoise", "vol", "0.3")
    out = work / "babble.wav"
    run("sox", "-m", *talkers, str(roar), str(out), "reverb", "60", "norm", "-3")
    return out


def mix(speech: Path, noise: Path, snr_db: float, out: Path) -> None:
    """Speech plus noise whose RMS level is `snr_db` under the speech's active level (ITU-T
    P.56: pauses do not count), both measured above BAND_HZ, with sox."""
    length = seconds(speech)
    noise_level = rms(highpass(samples(noise)[:int(round(length * 16000))], 16000))
    gain = (active_level(highpass(samples(speech), 16000), 16000)
            / (noise_level * 10 ** (snr_db / 20)))
    run("sox", "-m", "-v", "1", str(speech), "-v", f"{gain:.5f}", str(noise), str(out),
        "trim", "0", f"{length:.3f}")


def to_voice_note(wav: Path, out: Path) -> None:
    """A Telegram voice note: OGG/Opus, 48 kHz mono, ~32 kbit/s (PyAV's libopus)."""
    import av

    with av.open(str(wav)) as src, av.open(str(out), "w", format="ogg") as dst:
        stream = dst.add_stream("libopus", rate=48000, layout="mono")
        stream.bit_rate = 32000
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for frame in src.decode(audio=0):
            for f in resampler.resample(frame):
                dst.mux(stream.encode(f))
        for f in resampler.resample(None):
            dst.mux(stream.encode(f))
        dst.mux(stream.encode(None))


def missing_tools() -> str:
    """Why the corpus cannot be made here ('' when it can), one line."""
    missing = [p for p in ("espeak-ng", "sox", "soxi") if shutil.which(p) is None]
    return (f"{', '.join(missing)} not found: sudo apt-get install -y espeak-ng sox "
            "libsox-fmt-all") if missing else ""


def make(out: Path, *, count: int = len(REPORTS), seed: int = 26,
         voices: Sequence[str] = VOICES, variants: Sequence[str] = VARIANTS,
         rate: tuple[int, int] = RATE, gap: int = 0, say: bool = True) -> list[dict]:
    """Write the first `count` reports (clean and noisy voice notes) and manifest.jsonl into
    `out`; the manifest's rows."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for i, (text, typ, zone) in enumerate(REPORTS[:count], 1):
            # every voice with every variant in turn: 6 speakers, 8 or 9 reports each
            voice = voices[i % len(voices)] + variants[(i // len(voices)) % len(variants)]
            speech = work / "speech.wav"
            speak(text, voice, rng.randint(*rate), rng.randint(35, 65), speech, gap=gap)
            noisy = work / "noisy.wav"
            mix(speech, babble(seconds(speech), rng, work), SNR_DB, noisy)
            name = f"{i:02d}"
            to_voice_note(speech, out / f"{name}-clean.ogg")
            to_voice_note(noisy, out / f"{name}-noise10db.ogg")
            rows.append({"id": name, "text": text, "type": typ, "zone": zone, "voice": voice,
                         "seconds": round(seconds(speech), 2)})
            if say:
                print(f"{name} {voice:22} {text}", flush=True)
    write_manifest(out, rows)
    return rows


def write_manifest(out: Path, rows: list[dict]) -> None:
    """A corpus's manifest.jsonl: one row (id, text, …) a line."""
    with open(out / "manifest.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def main() -> None:
    """Write the corpus and its manifest.jsonl."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--voices", default=",".join(VOICES), help="espeak-ng voices, in turn")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="variants, in turn")
    ap.add_argument("--rate", default=f"{RATE[0]}-{RATE[1]}", help="words per minute, LO-HI")
    ap.add_argument("--gap", type=int, default=0, help="pause between words, in 10 ms")
    ap.add_argument("--count", type=int, default=len(REPORTS), help="the first N reports")
    args = ap.parse_args()
    lo, _, hi = args.rate.partition("-")
    why = missing_tools()
    if why:
        sys.exit(why)
    rows = make(args.out, count=args.count, seed=args.seed, voices=args.voices.split(","),
                variants=args.variants.split(","), rate=(int(lo), int(hi or lo)), gap=args.gap)
    print(f"{len(rows)} reports, clean and at {SNR_DB:g} dB SNR, in {args.out}")


if __name__ == "__main__":
    main()
