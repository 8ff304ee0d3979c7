"""Who may push a node's snapshot: each node speaks only for itself.

An agent sends its pod's projected ServiceAccount token (audience ``cpumanager-extender``,
short-lived, rotated by the kubelet). The extender asks the API server (TokenReview, with
that audience) who it is. A push for node N is accepted only when the API server says:

* the token is valid now (not expired, not revoked: a token bound to a deleted pod fails),
  and was issued for the extender's audience (a token meant for anything else fails);
* the user is one of the agents' ServiceAccounts (``system:serviceaccount:NS:NAME``);
* the token is bound to a pod on node N: the ``authentication.kubernetes.io/node-name``
  extra the API server adds for pod-bound tokens (Kubernetes 1.30 and later).

So a node's credential is worth one node: a compromised node can lie about itself only,
which its kubelet could do anyway. Reviews are kept (by the token's SHA-256) until the
token's own expiry or :data:`KEEP_SECONDS`, whichever is sooner, so the API server sees one
review per agent per rotation or five minutes, not one per push.

:class:`SharedToken` is the one-secret mode for a single machine or a test bench: any holder
may push any node, so deploy/ does not use it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from cpumanager.errors import CpuManagerError

__all__ = [
    "refused_push",
    "AUDIENCE",
    "NODE_CLAIM",
    "Authenticator",
    "ForbiddenError",
    "NodeTokens",
    "SharedToken",
    "UnauthorisedError",
    "bearer",
]

AUDIENCE = "cpumanager-extender"
NODE_CLAIM = "authentication.kubernetes.io/node-name"
KEEP_SECONDS = 300.0
_KEPT_LIMIT = 100_000


class UnauthorisedError(CpuManagerError):
    """The credential does not allow this push (one line: why)."""


class ForbiddenError(UnauthorisedError):
    """A valid credential of another node (answered with 403)."""


class Authenticator(Protocol):
    def may_push(self, authorization: str, node: str) -> None:
        """Return when the ``Authorization`` header's holder may push ``node``; raise
        :class:`UnauthorisedError` otherwise."""
        ...


def bearer(authorization: str) -> str:
    """The token of an ``Authorization: Bearer`` header; UnauthorisedError when there is none."""
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 16384:
        msg = "send Authorization: Bearer <the pod's projected ServiceAccount token>"
        raise UnauthorisedError(msg)
    return token


class SharedToken:
    """One secret for every node (not per-node: see the module docstring)."""

    def __init__(self, token: bytes | None) -> None:
        # An empty secret would match an empty credential ("Bearer "): it is no secret.
        self._token = token.strip() or None if token is not None else None

    def may_push(self, authorization: str, node: str) -> None:
        if self._token is None:
            msg = "pushes are refused: the extender has no --token-file"
            raise UnauthorisedError(msg)
        # The scheme in any case (RFC 9110); the token compared in constant time.
        scheme, _, credentials = authorization.encode("latin-1", "replace").partition(b" ")
        good = hmac.compare_digest(credentials.strip(), self._token)
        if scheme.lower() != b"bearer" or not good:
            msg = "send Authorization: Bearer <the shared token>"
            raise UnauthorisedError(msg)


def _expiry(token: str) -> float | None:
    """The ``exp`` claim of a JWT, read without checking it (the review checked the token;
    this only bounds how long the review is kept)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, TypeError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None


class NodeTokens:
    """Projected ServiceAccount tokens checked by TokenReview (module docstring).

    ``review(token, audiences)`` returns the TokenReview's status (``kube_api.KubeApi.
    token_review``); ``service_accounts``: the agents' ``NAMESPACE:NAME`` pairs;
    ``wall_clock``: epoch seconds (token expiry is in epoch seconds).
    """

    def __init__(
        self,
        review: Callable[[str, tuple[str, ...]], Mapping[str, Any]],
        service_accounts: frozenset[str],
        *,
        audience: str = AUDIENCE,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._review = review
        self._users = frozenset(f"system:serviceaccount:{sa}" for sa in service_accounts)
        self._audience = audience
        self._clock = wall_clock
        self._lock = threading.Lock()
        self._kept: dict[bytes, tuple[str, float]] = {}

    def node_of(self, token: str) -> str:
        """The node the token speaks for; UnauthorisedError when the API server says otherwise."""
        key = hashlib.sha256(token.encode("utf-8", "replace")).digest()
        now = self._clock()
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[1] > now:
                return kept[0]
        status = self._review(token, (self._audience,))
        node = self._judge(status)
        expires = _expiry(token)
        until = now + KEEP_SECONDS if expires is None else min(expires, now + KEEP_SECONDS)
        with self._lock:
            if len(self._kept) >= _KEPT_LIMIT:
                self._kept = {k: v for k, v in self._kept.items() if v[1] > now}
                if len(self._kept) >= _KEPT_LIMIT:
                    self._kept.clear()
            self._kept[key] = (node, until)
        return node

    def _judge(self, status: Mapping[str, Any]) -> str:
        if status.get("authenticated") is not True:
            error = " ".join(str(status.get("error") or "invalid or expired token").split())
            msg = f"the API server did not authenticate the token ({error[:200]})"
            raise UnauthorisedError(msg)
        # An audience-aware API server names the asked audience in status.audiences; an
        # answer without it (an authenticator that ignores audiences) proves nothing.
        audiences = status.get("audiences")
        if not isinstance(audiences, list) or self._audience not in audiences:
            msg = f"the API server did not confirm the token is for audience {self._audience}"
            raise UnauthorisedError(msg)
        user = status.get("user")
        user = user if isinstance(user, dict) else {}
        name = user.get("username")
        if name not in self._users:
            msg = f"{name!s:.120} is not a cpumanager agent's ServiceAccount"
            raise UnauthorisedError(msg)
        extra = user.get("extra")
        claim = extra.get(NODE_CLAIM) if isinstance(extra, dict) else None
        if not isinstance(claim, list) or len(claim) != 1 or not isinstance(claim[0], str):
            msg = (
                "the token is not bound to a pod on a node (no node-name claim): mount a "
                "projected ServiceAccount token (Kubernetes 1.30 or later)"
            )
            raise UnauthorisedError(msg)
        return claim[0]

    def may_push(self, authorization: str, node: str) -> None:
        speaks_for = self.node_of(bearer(authorization))
        if speaks_for != node:
            msg = f"a token of node {speaks_for!s:.100} cannot push node {node!s:.100}"
            raise ForbiddenError(msg)


def refused_push(auth: Authenticator, authorization: str, node: str) -> tuple[int, str, str] | None:
    """None when the push may go on, else (HTTP status, pushes metric outcome, one line):
    401 for a missing or bad credential, 403 for another node's, 503 when the API server
    could not be asked (the agent retries)."""
    try:
        auth.may_push(authorization, node)
    except UnauthorisedError as exc:
        status = 403 if isinstance(exc, ForbiddenError) else 401
        return status, "unauthorised", f"unauthorised: {exc}"
    except CpuManagerError as exc:
        return 503, "auth-unavailable", f"cannot check the credential now: {exc}"
    return None
