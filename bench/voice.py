"""Voice notes transcribed on this machine, with the configured model (MATCHDAY_STT_MODEL:
base, the default, or tiny.en, or a directory): accuracy on real human speech and on the
espeak corpus, speed, a 20-note burst, and whether the bot stays responsive meanwhile.

    python rigs/voice_corpus.py      # once: makes bench/.voice-corpus (espeak-ng + sox)
    python bench/voice.py [--corpus DIR] [--model base|tiny.en|DIR] [--workers 2]
    python bench/voice.py --smoke    # 1 espeak note and 1 real note, made in a temporary dir

Prints `name: value` lines:
  wer_real_clean, wer_real_noise10db  word error rate on real human English speech
                             (bench/voice_corpus_real: 317 words, 4 speakers, openly licensed,
                             see its SOURCES.md), clean and mixed with crowd babble at 10 dB
                             under the speech's active level (ITU-T P.56, above 50 Hz)
                             (goals <= 0.05, <= 0.15), both spelt the same way first (Whisper's
                             English normaliser's rules); _report the same on the report half
                             (REPORT_HALF: never looked at when choosing decoding options or
                             the echo filter's thresholds, which came from the espeak corpus and
                             the other half)
  prompt_echo_words          words of the ground-vocabulary prompt in the clean real
                             transcripts that were not said (goal 0); _noise10db the same
  wer_clean, wer_noise10db   the espeak corpus: a regression check (base <= 0.20, <= 0.40)
  rtf                        pool wall time / audio time, `--workers` processes (goal <= 0.5)
  suggestion_accuracy        type and place both right, from the clean transcripts (>= 0.75)
  burst20_s                  20 voice notes sent at once by 20 stewards through the real
                             Telegram path, to the last transcript, with the deployment's pool
                             (<= 30)
  busy_answers               notes of the burst answered "busy" (goal 0); waiting_acks how
                             many were told at once how many notes are ahead of theirs
  loop_stall_ms_max          the event loop's longest stall during the burst (fake Bot API,
                             PTB, getFile, pool, handler, Redis) (goal <= 50);
                             loop_stall_ms_max_text is the same with typed reports, the
                             baseline (on a loaded machine both include time the OS gave
                             other processes: see load_average_1min)
  loop_busy_ms_max           the most CPU the loop's thread spent between two 5 ms ticks
                             (what the bot itself blocked the loop for), and the baseline
  cpu_s_per_note             CPU seconds a worker spends on an espeak note (what sizes a
                             machine: a worker per core transcribes 1/cpu_s_per_note notes a
                             second)
  core_share, core_share_burst  the share of a core each worker got while it transcribed
                             (its CPU seconds over its wall seconds: 1.00 on a machine with a
                             core free per worker), printed with the load average and a fixed
                             pure-Python workload's speed (the cores' speed, load aside);
                             rtf_quiet and burst20_s_quiet are rtf and burst20_s times that
                             share: what they would be with a core per worker (the goals'
                             machine), so figures from a busy machine compare
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bench.rig import bench_core  # noqa: E402
from bot.domain.grounds import load_grounds  # noqa: E402
from bot.settings import PROJECT_CONFIG  # noqa: E402
from bot.voice.model import ModelError, model_dir, unavailable  # noqa: E402
from bot.voice.outcome import Heard  # noqa: E402
from bot.voice.pool import Transcriber  # noqa: E402
from bot.voice.suggest import prompt_for, suggest  # noqa: E402
from rigs.voice_corpus import make, missing_tools  # noqa: E402
from rigs.voice_corpus_real import noisy  # noqa: E402
from rigs.voice_score import echoed, wer, words  # noqa: E402

CORPUS = Path(__file__).resolve().parent / ".voice-corpus"
DATA = CORPUS / "data"  # where Whisper base is put together for the bench
FIRST_STEWARD = 300000001  # the burst's stewards: one note each, on the roster for the bench


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


@dataclass
class Burst:
    """What a burst of voice notes through the real Telegram path showed."""

    seconds: float = 0.0  # from the first note sent to the last transcript
    busy: int = 0  # notes the pool refused as full
    acks: int = 0  # notes told at once how many are ahead of theirs
    stall_ms: float = 0.0
    stall_ms_text: float = 0.0
    busy_ms: float = 0.0
    busy_ms_text: float = 0.0
    share: float = 0.0  # of a core, each worker, while the burst was transcribed


async def burst(notes: list[tuple[bytes, int]], model: Path) -> Burst:
    """The notes sent at once, one by each of as many stewards (a flashpoint: Telegram paces
    a bot at about one message a second per chat, so one steward's 20 notes, 18 "N ahead of
    yours" and 20 transcripts, would take 38 s whatever the machine), through the real
    Telegram path (the fake Bot API, python-telegram-bot, getFile, the pool with the
    deployment's workers and queue, the handler, Redis), after a typed report from each (the
    baseline)."""
    from pydantic import SecretStr

    from bot.runtime import telegram_for
    from rigs.fakes.telegram_api import TOKEN, FakeTelegram
    from rigs.telegram_rig import tabards_on_telegram

    out = Burst()
    stewards = [FIRST_STEWARD + i for i in range(len(notes))]
    async with bench_core() as (core, _url, _tmp):
        tabards_on_telegram(core, FIRST_STEWARD, 1, [("steward", "gate_away")] * len(notes))
        fake = FakeTelegram(record=True)
        await fake.start()
        settings = core.settings.model_copy(update={
            "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url})
        grounds = list(load_grounds(PROJECT_CONFIG).values())
        pool = Transcriber(model, prompt_for(grounds), workers=settings.stt_workers,
                           queue=settings.stt_queue, max_s=settings.stt_max_seconds)
        adapter = telegram_for(core, settings, poll_timeout=1, voice=pool)
        await adapter.start()
        await pool.warm()  # the model loads at start, not under the first note

        def answers() -> list:
            return [x for x in fake.calls if x.method == "sendMessage"
                    and x.params.get("chat_id") in stewards]

        async def answered(n: int) -> None:
            await fake.wait_for(lambda c: answers()[n - 1:], timeout=900)

        with Ticker() as text_ticker:
            for i, steward in enumerate(stewards):
                await fake.push(fake.message_update(
                    steward, f"/incident pyro @stb_walkway s2 flare {i}"))
            await answered(len(notes))
        before = len(answers())
        fixture = (await core.active_fixture()).id
        for steward in stewards:
            await core.facades.forms.drop_form(fixture, f"telegram:{steward}")
        core.clock.advance(timedelta(hours=1))  # past the note window: notes start reports
        started = time.perf_counter()
        with Ticker() as voice_ticker:
            for steward, (audio, seconds) in zip(stewards, notes, strict=True):
                await fake.push(fake.voice_update(steward, audio, seconds))
            # every note gets its answer (the waiting ones an acknowledgement first)
            await fake.wait_for(lambda c: len(answers()) - before >= len(notes) + pool.waited,
                                timeout=900)
        out.seconds = time.perf_counter() - started
        out.busy, out.acks, out.share = pool.refused_busy, pool.waited, share(pool)
        await adapter.stop()
        pool.close()
        await fake.stop()
    out.stall_ms, out.stall_ms_text = voice_ticker.worst * 1000, text_ticker.worst * 1000
    out.busy_ms, out.busy_ms_text = voice_ticker.busy * 1000, text_ticker.busy * 1000
    return out


REPORT_HALF = ("ss-0880", "ss-0920", "libri-61-70968-0000", "mfa-cold", "sonnet1-b")
REFERENCE_TURNS = 3_000_000  # the fixed workload's loop turns: about 0.2 CPU s


def reference() -> float:
    """The cores' speed, whatever the load: a fixed pure-Python workload's millions of loop
    turns per CPU second (CPU time, so other processes do not count)."""
    cpu, x = time.process_time(), 0
    for i in range(REFERENCE_TURNS):
        x = (x + i * i) % 1_000_003
    return REFERENCE_TURNS / (time.process_time() - cpu) / 1e6


def share(pool: Transcriber, since: tuple[float, float] = (0.0, 0.0)) -> float:
    """The share of a core each worker got for the notes since `since` (the pool's CPU and
    wall seconds then): their CPU seconds over their wall seconds."""
    wall = pool.proc_s - since[1]
    return (pool.cpu_s - since[0]) / wall if wall > 0 else 0.0


def speed_line(got: float) -> str:
    """What is printed beside a speed figure: how busy the machine was."""
    return (f"{got:.2f} of a core per worker (load average {os.getloadavg()[0]:.1f} on "
            f"{os.cpu_count()} cores; reference {reference():.1f} M loop turns per CPU s)")


SMOKE = {"make": 1, "workers": 1, "burst_notes": 1, "real": 1}


def parse() -> argparse.Namespace:
    """The command line."""
    ap = cli.parser(__doc__)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--model", default=os.environ.get("MATCHDAY_STT_MODEL", ""),
                    help="base (the default), tiny.en or a model directory")
    ap.add_argument("--data-dir", type=Path, default=DATA,
                    help="where Whisper base is put together (once)")
    ap.add_argument("--make", type=int, default=0, metavar="N",
                    help="first make a corpus of N notes in a temporary directory, use that")
    ap.add_argument("--real", type=int, default=0, metavar="N",
                    help="only the first N real-speech notes (0: all)")
    ap.add_argument("--workers", type=int, default=2, help="pool size for wer and rtf")
    ap.add_argument("--burst-notes", type=int, default=20)
    ap.add_argument("--show", action="store_true", help="print each wrong transcript")
    return cli.parse(ap, SMOKE)


def main() -> None:
    """Check what it needs, make the corpora, and run."""
    args = parse()
    why = unavailable(args.model) or missing_tools()
    if why:
        sys.exit(f"voice bench: {why}")
    try:
        args.model_path = model_dir(args.model, args.data_dir)
    except ModelError as exc:
        sys.exit(f"voice bench: {exc}")
    with tempfile.TemporaryDirectory(prefix="md-voice-corpus-") as tmp:
        real = Path(tmp) / "real"
        rows = noisy(real)
        if args.real:
            keep = rows[:args.real]
            (real / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
        args.real_corpus = real
        if args.make:
            args.corpus = Path(tmp) / "espeak"
            make(args.corpus, count=args.make, say=False)
        asyncio.run(bench(args))


def load(corpus: Path) -> tuple[list[dict], list[bytes], list[bytes]]:
    """A corpus's rows and its clean and noisy notes."""
    manifest = corpus / "manifest.jsonl"
    if not manifest.exists():
        sys.exit(f"no corpus in {corpus}: run python rigs/voice_corpus.py first")
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    return (rows, [(corpus / f"{r['id']}-clean.ogg").read_bytes() for r in rows],
            [(corpus / f"{r['id']}-noise10db.ogg").read_bytes() for r in rows])


async def bench(args: argparse.Namespace) -> None:
    """Run both corpora through the pool, then the burst; print the figures."""
    rows, clean, noisy_notes = load(args.corpus)
    real_rows, real_clean, real_noisy = load(args.real_corpus)
    ground = load_grounds(PROJECT_CONFIG)["london_stadium"]
    prompt = prompt_for([ground])
    pool = Transcriber(args.model_path, prompt, workers=args.workers,
                       queue=2 * (len(rows) + len(real_rows)), max_s=60)
    await pool.warm()
    audio_s = sum(r["seconds"] for r in rows)
    heard_real_clean, _ = await transcribe_all(pool, real_clean)
    heard_real_noisy, _ = await transcribe_all(pool, real_noisy)
    before = (pool.cpu_s, pool.proc_s)
    heard_clean, wall_clean = await transcribe_all(pool, clean)
    heard_noisy, wall_noisy = await transcribe_all(pool, noisy_notes)
    got, pool_cpu = share(pool, before), pool.cpu_s
    pool.close()
    right = [suggest(h, ground) for h in heard_clean]
    ok = sum(1 for r, s in zip(rows, right, strict=True)
             if s.types[:1] == (r["type"],) and s.zones[:1] == (r["zone"],))
    ok_noisy = sum(1 for r, h in zip(rows, heard_noisy, strict=True)
                   if (s := suggest(h, ground)).types[:1] == (r["type"],)
                   and s.zones[:1] == (r["zone"],))
    text_ok = sum(1 for r in rows if (s := suggest(r["text"], ground)).types[:1] == (r["type"],)
                  and s.zones[:1] == (r["zone"],))
    real_pairs = [(r["text"], h) for r, h in zip(real_rows, heard_real_clean, strict=True)]
    real_noisy_pairs = [(r["text"], h)
                        for r, h in zip(real_rows, heard_real_noisy, strict=True)]
    if args.show:
        for r, h, n in [*zip(rows, heard_clean, heard_noisy, strict=True),
                        *zip(real_rows, heard_real_clean, heard_real_noisy, strict=True)]:
            if words(h) != words(r["text"]) or words(n) != words(r["text"]):
                print(f"# {r['id']} ref: {r['text']}\n#    clean: {h}\n#    noisy: {n}",
                      file=sys.stderr)
    print(f"model: {args.model or 'base'} ({args.model_path})")
    print(f"real_notes: {len(real_rows)} ({sum(len(words(r['text'])) for r in real_rows)} "
          f"words, {len({r['speaker'] for r in real_rows})} speakers), clean and 10 dB SNR")
    print(f"wer_real_clean: {wer(real_pairs):.3f}")
    print(f"wer_real_noise10db: {wer(real_noisy_pairs):.3f}")
    half = [i for i, r in enumerate(real_rows) if r["id"] in REPORT_HALF]
    if half:
        print(f"wer_real_clean_report: {wer([real_pairs[i] for i in half]):.3f}")
        print(f"wer_real_noise10db_report: {wer([real_noisy_pairs[i] for i in half]):.3f}")
    print(f"prompt_echo_words: {echoed(real_pairs, prompt)}")
    print(f"prompt_echo_words_noise10db: {echoed(real_noisy_pairs, prompt)}")
    print(f"notes: {len(rows)} (clean) + {len(rows)} (10 dB SNR), audio {audio_s:.1f} s each")
    print(f"wer_clean: {wer([(r['text'], h) for r, h in zip(rows, heard_clean, strict=True)]):.3f}")
    print(f"wer_noise10db: "
          f"{wer([(r['text'], h) for r, h in zip(rows, heard_noisy, strict=True)]):.3f}")
    rtf = (wall_clean + wall_noisy) / (2 * audio_s)
    print(f"rtf: {rtf:.3f}")
    print(f"core_share: {speed_line(got)}")
    print(f"cpu_s_per_note: {(pool_cpu - before[0]) / (2 * len(rows)):.2f} (one thread; "
          f"{audio_s / len(rows):.1f} s of audio a note)")
    print(f"rtf_quiet: {rtf * got:.3f}")
    print(f"rtf_clean: {wall_clean / audio_s:.3f}")
    print(f"rtf_noise10db: {wall_noisy / audio_s:.3f}")
    print(f"suggestion_accuracy: {ok / len(rows):.2f}")
    print(f"suggestion_accuracy_noise10db: {ok_noisy / len(rows):.2f}")
    print(f"suggestion_accuracy_from_text: {text_ok / len(rows):.2f}")
    n = args.burst_notes
    b = await burst([(clean[i % len(rows)], int(rows[i % len(rows)]["seconds"]) + 1)
                     for i in range(n)], args.model_path)
    print(f"burst{n}_s: {b.seconds:.1f}")
    print(f"core_share_burst: {speed_line(b.share)}")
    print(f"burst{n}_s_quiet: {b.seconds * b.share:.1f}")
    print(f"busy_answers: {b.busy}")
    print(f"waiting_acks: {b.acks}")
    print(f"loop_stall_ms_max: {b.stall_ms:.1f}")
    print(f"loop_stall_ms_max_text: {b.stall_ms_text:.1f}")
    print(f"loop_busy_ms_max: {b.busy_ms:.1f}")
    print(f"loop_busy_ms_max_text: {b.busy_ms_text:.1f}")
    print(f"load_average_1min: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
