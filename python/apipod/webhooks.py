"""Verify svc's job webhooks (Standard Webhooks, https://www.standardwebhooks.com), stdlib only.

    from apipod.webhooks import verify_webhook, WebhookVerificationError

    payload = verify_webhook(secret, request.headers, raw_body)   # the job envelope, as a dict

A delivery carries ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and
``webhook-signature``: space-separated ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``, one
per secret the server signs with (two while a secret is rotated). The secret is ``whsec_`` and
the base64 of its key, as ``svc webhook-secret`` prints it.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Iterable, Mapping, Optional, Union

#: The spec's tolerance: a delivery further than this from now is refused as a possible replay.
TOLERANCE_SECONDS = 5 * 60

_PREFIX = "whsec_"

__all__ = ["TOLERANCE_SECONDS", "WebhookVerificationError", "sign_webhook", "verify_webhook"]


class WebhookVerificationError(ValueError):
    """The delivery is not one signed with the secret, or too old or new."""


def sign_webhook(secret: str, message_id: str, timestamp: int, body: Union[str, bytes]) -> str:
    """The ``v1,...`` signature of one message, as svc sends it."""
    key = base64.b64decode(secret[len(_PREFIX):] if secret.startswith(_PREFIX) else secret)
    data = body.encode("utf-8") if isinstance(body, str) else body
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode("utf-8") + data, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def verify_webhook(
    secret: Union[str, Iterable[str]],
    headers: Mapping[str, str],
    body: Union[str, bytes],
    tolerance: float = TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> Any:
    """Check a delivery and return its JSON payload (the job envelope).

    ``body`` must be the raw body as received: JSON parsed and dumped again would not match.
    ``secret`` may be several. Raises WebhookVerificationError saying what is wrong.
    """
    message_id = _header(headers, "webhook-id")
    timestamp_text = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not timestamp_text.isdigit():
        raise WebhookVerificationError(f"webhook-timestamp is not Unix seconds: {timestamp_text!r}")
    timestamp = int(timestamp_text)
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError(
            f"webhook-timestamp is {int(current - timestamp)} s from now, beyond the {tolerance:g} s tolerance"
            " (a replay, or a wrong clock)"
        )
    presented = [entry for entry in signatures.split(" ") if entry.startswith("v1,")]
    secrets = [secret] if isinstance(secret, str) else list(secret)
    for candidate in secrets:
        expected = sign_webhook(candidate, message_id, timestamp, body)
        if any(hmac.compare_digest(expected, signature) for signature in presented):
            return json.loads(body)
    raise WebhookVerificationError("no webhook-signature matches the secret: a wrong secret, or a body changed since it was signed")


def _header(headers: Mapping[str, str], name: str) -> str:
    # Frameworks differ in the case they give header names.
    value = headers.get(name)
    if value is None:
        value = next((text for key, text in headers.items() if key.lower() == name), None)
    if not value:
        raise WebhookVerificationError(f"the delivery has no {name} header")
    return value
