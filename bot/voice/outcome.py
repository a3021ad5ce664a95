"""What became of a voice note sent for transcription: typed, and carried to the handler as
the hidden `/voice` command's words (the adapter makes them; nobody types them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Why = Literal["not_installed", "too_long", "busy", "failed", "silent"]
WHYS: tuple[Why, ...] = ("not_installed", "too_long", "busy", "failed", "silent")
LABEL = "transcript (automatic)"  # how every transcript is marked, wherever it is shown


@dataclass(frozen=True)
class Heard:
    """The words of a voice note, made by the model named."""

    text: str
    audio_s: float = 0.0
    proc_s: float = 0.0  # wall seconds the worker took
    cpu_s: float = 0.0  # CPU seconds it spent (less than proc_s when the machine is busy)


@dataclass(frozen=True)
class NotHeard:
    """No transcript: why (the audio is kept as evidence all the same)."""

    why: Why
    limit_s: int = 0  # the longest note transcribed, for "too_long"


Outcome = Heard | NotHeard


def as_command(outcome: Outcome) -> str:
    """The hidden command the adapter sends with the voice note."""
    if isinstance(outcome, Heard):
        return f"/voice heard {outcome.text}"
    return f"/voice {outcome.why}" + (f" {outcome.limit_s}" if outcome.limit_s else "")


def from_args(args: list[str]) -> Outcome | None:
    """The outcome the adapter put in a `/voice` command, or None (not one of its forms)."""
    if not args:
        return None
    if args[0] == "heard" and len(args) > 1:
        return Heard(" ".join(args[1:]))
    if args[0] in WHYS:
        limit = int(args[1]) if len(args) > 1 and args[1].isdigit() else 0
        return NotHeard(args[0], limit)  # type: ignore[arg-type]
    return None


def waiting(ahead: int) -> str:
    """The answer at once to a voice note that waits for a worker."""
    return (f"🎤 Transcribing, {ahead} ahead of yours. The voice note is kept as evidence "
            "either way.")


def marked(text: str) -> str:
    """A transcript as it is shown and logged: marked as made by a machine."""
    return f"{LABEL}: {text}"


def reason(outcome: NotHeard) -> str:
    """One line saying why there is no transcript."""
    return {
        "not_installed": "Transcription is not installed on this bot",
        "too_long": f"Too long to transcribe (over {outcome.limit_s} s)",
        "busy": "Transcription is busy right now",
        "failed": "Transcription failed for this note",
        "silent": "No words could be made out",
    }[outcome.why]
