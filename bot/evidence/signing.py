"""The installation's Ed25519 export-signing key: made once in the data dir (0700 dir, 0600
file), used to sign every export's manifest; its public half is what `verify` checks against."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_DIR, KEY_FILE = "keys", "export-signing-ed25519.pem"
SigningKey = Ed25519PrivateKey  # what signs an export, for modules outside bot/evidence


class SigningKeyError(ValueError):
    """A key file or value that cannot be used; the message is one line."""


def new_key() -> Ed25519PrivateKey:
    """A fresh signing key (tests, and the first run)."""
    return Ed25519PrivateKey.generate()


def key_path(data_dir: Path) -> Path:
    """Where the installation's signing key lives."""
    return Path(data_dir) / KEY_DIR / KEY_FILE


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)  # mkdir's mode is masked by the umask, and an old dir may be wider


def load_or_create(data_dir: Path) -> Ed25519PrivateKey:
    """The installation's key, made on first use (O_EXCL, so two first runs agree on one)."""
    path = key_path(data_dir)
    _private_dir(Path(data_dir))
    _private_dir(path.parent)
    if not path.exists():
        pem = new_key().private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: use theirs
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
                f.flush()
                os.fsync(f.fileno())
    return _read_key(path)


def _read_key(path: Path) -> Ed25519PrivateKey:
    """The key in a PEM file (SigningKeyError, one line, when it cannot be used)."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise SigningKeyError(f"signing key {path} is unreadable "
                              f"({exc.__class__.__name__})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"signing key {path} is not an Ed25519 key")
    return key


def installed_public(data_dir: Path) -> str | None:
    """This installation's public key when it has one (never made here: verify only reads);
    None when there is no key file. SigningKeyError when the file is there but unusable."""
    path = key_path(data_dir)
    return public_hex(_read_key(path)) if path.is_file() else None


def public_hex(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """The raw 32-byte public key as 64 hex digits (what `matchday keys` prints)."""
    pub = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    """The signature of message, as hex."""
    return key.sign(message).hex()


def parse_public(text: str) -> Ed25519PublicKey:
    """A public key from 64 hex digits (SigningKeyError otherwise)."""
    text = text.strip().lower()
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise SigningKeyError("a public key is 64 hex digits (as `matchday keys` prints it)")
    return Ed25519PublicKey.from_public_bytes(raw)


def signature_ok(public: str, signature: str, message: bytes) -> bool:
    """Whether signature (hex) is public's (hex) signature of message."""
    try:
        parse_public(public).verify(bytes.fromhex(signature), message)
    except (SigningKeyError, ValueError, InvalidSignature):
        return False
    return True
