"""A club's settings on a deployment of many clubs: the deployment's, with the club's own
bot token, webhook secret, Slack install and paths (its config and its web address)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr

from bot.domain.club_record import Club
from bot.settings import Settings

CLUB_PATH = "/c/{club}"  # where a club's routes live on the deployment's one HTTP server


def club_path(club_id: str) -> str:
    """The path prefix of a club's routes (its webhook, Slack events, control room)."""
    return CLUB_PATH.format(club=club_id)


def club_config_dir(base: Path, club_id: str) -> Path:
    """A club's config directory: config/clubs/<club>/ when the deployment has one (its own
    channels, roster and grounds), else the deployment's."""
    own = base / "clubs" / club_id
    return own if own.is_dir() else base


def settings_for(club: Club, base: Settings, env: Mapping[str, str]) -> Settings:
    """The deployment's settings with the club's own secrets (resolved now; ClubError
    naming the reference, never the value, when one is missing), config and web address.
    Slack is served over HTTP only: each club's app posts to its own signed events URL."""
    secrets = {field: SecretStr(ref.resolve(env)) for field, ref in club.secrets().items()}
    public = f"{base.web_base.rstrip('/')}{club_path(club.club_id)}"
    return base.model_copy(update={
        "telegram_bot_token": secrets["telegram_token"],
        "telegram_webhook_secret": secrets["telegram_secret"],
        "telegram_webhook_url": f"{public}/telegram" if base.public_url else None,
        "slack_bot_token": secrets["slack_token"],
        "slack_signing_secret": secrets["slack_signing_secret"],
        "slack_app_token": None,
        "public_url": public,
        "config_dir": club_config_dir(base.config_dir, club.club_id),
    })
