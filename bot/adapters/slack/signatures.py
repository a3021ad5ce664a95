"""Slack request signatures: Bolt's check, with a malformed timestamp refused (401), not a 500."""

from __future__ import annotations

from slack_bolt.middleware.request_verification.async_request_verification import (
    AsyncRequestVerification,
)
from slack_sdk.signature import SignatureVerifier


class StrictSignatureVerifier(SignatureVerifier):
    """slack-sdk's verifier; a timestamp that is not a whole number is simply invalid."""

    def is_valid(self, body: str | bytes, timestamp: str | None,
                 signature: str | None) -> bool:
        """True only for a fresh request signed with the signing secret."""
        try:
            return super().is_valid(body, timestamp, signature)
        except (ValueError, OverflowError):  # int('abc'), or a number too large for a float
            return False


class StrictRequestVerification(AsyncRequestVerification):
    """Bolt's request verification middleware over StrictSignatureVerifier."""

    def __init__(self, signing_secret: str) -> None:
        super().__init__(signing_secret)
        self._verifier = StrictSignatureVerifier(signing_secret)
