"""Voice notes transcribed on this machine: accuracy on the corpus, speed, and whether the bot
stays responsive while the pool works.

    python rigs/voice_corpus.py      # once: makes bench/.voice-corpus (espeak-ng + sox)
    python bench/voice.py [--corpus DIR] [--workers 2]
    python bench/voice.py --smoke    # 1 note made in a temporary directory, 1 worker

Prints `name: value` lines:
  wer_clean, wer_noise10db   word error rate against the corpus texts (goals <= 0.10, 0.25)
  rtf                        pool wall time / audio time, `--workers` processes (goal <= 0.5)
  suggestion_accuracy        type and place both right, from the clean transcripts (>= 0.8)
  loop_stall_ms_max          the event loop's longest stall while voice notes go through the
                             real Telegram path (fake Bot API, PTB, getFile, pool, handler,
                             Redis) (goal <= 50); loop_stall_ms_max_text is the same run with
                             typed reports, the baseline (on a loaded machine both include
                             time the OS gave other processes: see load_average_1min)
  loop_busy_ms_max           the most CPU the loop's thread spent between two 5 ms ticks
                             (what the bot itself blocked the loop for), and the baseline
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bench.rig import bench_core  # noqa: E402
from bot.domain.grounds import load_grounds  # noqa: E402
from bot.settings import PROJECT_CONFIG  # noqa: E402
from bot.voice.model import model_dir, unavailable  # noqa: E402
from bot.voice.outcome import Heard  # noqa: E402
from bot.voice.pool import Transcriber  # noqa: E402
from bot.voice.suggest import prompt_for, suggest  # noqa: E402
from rigs.voice_corpus import make, missing_tools  # noqa: E402

CORPUS = Path(__file__).resolve().parent / ".voice-corpus"
STEWARD = 100000001  # config/roster.toml: a Telegram steward
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def spell(n: int) -> str:
    """A number under 1000 in words (both sides of the WER say numbers the same way)."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    rest = n % 100
    return ONES[n // 100] + " hundred" + (" and " + spell(rest) if rest else "")


def words(text: str) -> list[str]:
    """Lower case, numbers in words, no punctuation."""
    text = re.sub(r"\d+", lambda m: f" {spell(int(m.group()))} " if int(m.group()) < 1000
                  else m.group(), text.lower())
    text = re.sub(r"(?<=\w)-(?=\w)", " ", text)
    # "and" is left out: "one hundred and twelve" and "one hundred twelve" are the same
    return [w for w in re.findall(r"[a-z0-9']+", text) if w != "and"]


def edits(ref: list[str], hyp: list[str]) -> int:
    """Levenshtein distance in words."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def wer(pairs: list[tuple[str, str]]) -> float:
    """Corpus word error rate: all edits over all reference words."""
    total = sum(len(words(r)) for r, _ in pairs)
    return sum(edits(words(r), words(h)) for r, h in pairs) / total


async def transcribe_all(pool: Transcriber, notes: list[bytes]) -> tuple[list[str], float]:
    """Every note through the pool at once; (transcripts, wall seconds)."""
    t = time.perf_counter()
    for _ in notes:
        assert pool.admit(1) is None
    outs = await asyncio.gather(*(pool.transcribe(n) for n in notes))
    wall = time.perf_counter() - t
    return [o.text if isinstance(o, Heard) else "" for o in outs], wall


class Ticker:
    """How late a 5 ms sleep on the loop wakes (the loop's stalls, wall clock: on a shared
    machine this includes time the OS gave other processes), and the most CPU the loop's
    thread spent between two wakes (what the bot itself held the loop for)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.busy = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            t, cpu = time.perf_counter(), time.thread_time()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - t - 0.005)
            self.busy = max(self.busy, time.thread_time() - cpu)

    def __enter__(self) -> Ticker:
        self._task = asyncio.create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def stall(notes: list[tuple[bytes, int]],
                workers: int) -> tuple[float, float, float, float]:
    """(worst loop stall in ms with voice notes, the same with typed reports, the loop
    thread's most CPU between two wakes with each) through the
    real Telegram path: the fake Bot API, python-telegram-bot, getFile, the pool, Redis."""
    from pydantic import SecretStr

    from bot.runtime import telegram_for
    from rigs.fakes.telegram_api import TOKEN, FakeTelegram

    async with bench_core() as (core, _url, _tmp):
        fake = FakeTelegram(record=True)
        await fake.start()
        settings = core.settings.model_copy(update={
            "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url})
        grounds = list(load_grounds(PROJECT_CONFIG).values())
        pool = Transcriber(model_dir(), prompt_for(grounds), workers=workers,
                           queue=len(notes), max_s=60)
        adapter = telegram_for(core, settings, poll_timeout=1, voice=pool)
        await adapter.start()
        await pool.warm()  # the model loads at start, not under the first note

        async def answered(n: int) -> None:
            await fake.wait_for(lambda c: [x for x in c if x.method == "sendMessage"
                                           and x.params.get("chat_id") == STEWARD][n - 1:],
                                timeout=600)

        with Ticker() as text_ticker:
            for i in range(len(notes)):
                await fake.push(fake.message_update(
                    STEWARD, f"/incident pyro @stb_walkway s2 flare {i}"))
            await answered(len(notes))
        before = len([x for x in fake.calls if x.method == "sendMessage"
                      and x.params.get("chat_id") == STEWARD])
        await core.store.drop_form((await core.active_fixture()).id, f"telegram:{STEWARD}")
        core.clock.advance(timedelta(hours=1))  # past the note window: notes start reports
        with Ticker() as voice_ticker:
            for audio, seconds in notes:
                await fake.push(fake.voice_update(STEWARD, audio, seconds))
            await answered(before + len(notes))
        await adapter.stop()
        await fake.stop()
    return (voice_ticker.worst * 1000, text_ticker.worst * 1000, voice_ticker.busy * 1000,
            text_ticker.busy * 1000)


SMOKE = {"make": 1, "workers": 1, "stall_notes": 1}


def parse() -> argparse.Namespace:
    """The command line."""
    ap = cli.parser(__doc__)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--make", type=int, default=0, metavar="N",
                    help="first make a corpus of N notes in a temporary directory, use that")
    ap.add_argument("--workers", type=int, default=2, help="pool size for wer and rtf")
    ap.add_argument("--stall-workers", type=int, default=1,
                    help="pool size for the stall run (the deployment default)")
    ap.add_argument("--stall-notes", type=int, default=20)
    ap.add_argument("--show", action="store_true", help="print each wrong transcript")
    return cli.parse(ap, SMOKE)


def main() -> None:
    """Check what it needs, make the corpus if asked, and run."""
    args = parse()
    why = unavailable() or (missing_tools() if args.make else "")
    if why:
        sys.exit(f"voice bench: {why}")
    if not args.make:
        asyncio.run(bench(args))
        return
    with tempfile.TemporaryDirectory(prefix="md-voice-corpus-") as tmp:
        args.corpus = Path(tmp)
        make(args.corpus, count=args.make, say=False)
        asyncio.run(bench(args))


async def bench(args: argparse.Namespace) -> None:
    """Run the corpus through the pool, then the stall test; print the figures."""
    manifest = args.corpus / "manifest.jsonl"
    if not manifest.exists():
        sys.exit(f"no corpus in {args.corpus}: run python rigs/voice_corpus.py first")
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    ground = load_grounds(PROJECT_CONFIG)["london_stadium"]
    pool = Transcriber(model_dir(), prompt_for([ground]), workers=args.workers,
                       queue=2 * len(rows), max_s=60)
    await pool.warm()
    audio_s = sum(r["seconds"] for r in rows)
    clean = [(args.corpus / f"{r['id']}-clean.ogg").read_bytes() for r in rows]
    noisy = [(args.corpus / f"{r['id']}-noise10db.ogg").read_bytes() for r in rows]
    heard_clean, wall_clean = await transcribe_all(pool, clean)
    heard_noisy, wall_noisy = await transcribe_all(pool, noisy)
    pool.close()
    right = [suggest(h, ground) for h in heard_clean]
    ok = sum(1 for r, s in zip(rows, right, strict=True)
             if s.types[:1] == (r["type"],) and s.zones[:1] == (r["zone"],))
    ok_noisy = sum(1 for r, h in zip(rows, heard_noisy, strict=True)
                   if (s := suggest(h, ground)).types[:1] == (r["type"],)
                   and s.zones[:1] == (r["zone"],))
    text_ok = sum(1 for r in rows if (s := suggest(r["text"], ground)).types[:1] == (r["type"],)
                  and s.zones[:1] == (r["zone"],))
    if args.show:
        for r, h, n in zip(rows, heard_clean, heard_noisy, strict=True):
            if words(h) != words(r["text"]) or words(n) != words(r["text"]):
                print(f"# {r['id']} ref: {r['text']}\n#    clean: {h}\n#    noisy: {n}",
                      file=sys.stderr)
    print(f"notes: {len(rows)} (clean) + {len(rows)} (10 dB SNR), audio {audio_s:.1f} s each")
    print(f"wer_clean: {wer([(r['text'], h) for r, h in zip(rows, heard_clean, strict=True)]):.3f}")
    print(f"wer_noise10db: "
          f"{wer([(r['text'], h) for r, h in zip(rows, heard_noisy, strict=True)]):.3f}")
    print(f"rtf: {(wall_clean + wall_noisy) / (2 * audio_s):.3f}")
    print(f"rtf_clean: {wall_clean / audio_s:.3f}")
    print(f"rtf_noise10db: {wall_noisy / audio_s:.3f}")
    print(f"suggestion_accuracy: {ok / len(rows):.2f}")
    print(f"suggestion_accuracy_noise10db: {ok_noisy / len(rows):.2f}")
    print(f"suggestion_accuracy_from_text: {text_ok / len(rows):.2f}")
    n = min(args.stall_notes, len(rows))
    voice_ms, text_ms, voice_busy, text_busy = await stall([(clean[i], int(rows[i]["seconds"]) + 1)
                                     for i in range(n)], args.stall_workers)
    print(f"loop_stall_ms_max: {voice_ms:.1f}")
    print(f"loop_stall_ms_max_text: {text_ms:.1f}")
    print(f"loop_busy_ms_max: {voice_busy:.1f}")
    print(f"loop_busy_ms_max_text: {text_busy:.1f}")
    print(f"load_average_1min: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
