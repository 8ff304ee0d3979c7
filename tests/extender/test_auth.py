"""Each node speaks only for itself (``auth.py``), against a fake TokenReview that answers
as the API server does for projected, pod-bound ServiceAccount tokens."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.extender.auth import (
    AUDIENCE,
    NODE_CLAIM,
    ForbiddenError,
    NodeTokens,
    SharedToken,
    UnauthorisedError,
    bearer,
)
from cpumanager.extender.server import ExtenderConfig
from tests.extender.conftest import start_extender
from tests.extender.nodes import make_snapshot, snapshot_document

AGENTS = frozenset({"cpumanager-agent:cpumanager-agent"})


@dataclass
class Issued:
    node: str | None
    audience: str
    expires: float
    user: str = "system:serviceaccount:cpumanager-agent:cpumanager-agent"


@dataclass
class FakeTokenReview:
    """Tokens the fake API server issued; a review authenticates one only if it is known,
    unexpired and issued for one of the asked audiences."""

    now: float = 1_800_000_000.0
    issued: dict[str, Issued] = field(default_factory=dict)
    reviews: int = 0

    def issue(
        self,
        node: str | None,
        *,
        audience: str = AUDIENCE,
        ttl: float = 3600,
        user: str | None = None,
    ) -> str:
        claims = {"exp": int(self.now + ttl), "aud": [audience]}
        payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        token = f"eyJhbGciOiJSUzI1NiJ9.{payload}.sig{len(self.issued)}"
        self.issued[token] = Issued(node, audience, self.now + ttl)
        if user is not None:
            self.issued[token].user = user
        return token

    def __call__(self, token: str, audiences: tuple[str, ...]) -> dict[str, Any]:
        self.reviews += 1
        found = self.issued.get(token)
        if found is None or found.expires <= self.now:
            return {"authenticated": False, "error": "token has expired or is invalid"}
        if found.audience not in audiences:
            return {"authenticated": False, "error": "token audiences is invalid"}
        extra = (
            {}
            if found.node is None
            else {NODE_CLAIM: [found.node], "authentication.kubernetes.io/pod-name": ["x"]}
        )
        return {
            "authenticated": True,
            "audiences": [found.audience],
            "user": {"username": found.user, "extra": extra},
        }


def tokens(review: FakeTokenReview) -> NodeTokens:
    return NodeTokens(review, AGENTS, wall_clock=lambda: review.now)


def test_a_node_may_push_itself_only() -> None:
    review = FakeTokenReview()
    auth = tokens(review)
    token = review.issue("node-a")
    auth.may_push(f"Bearer {token}", "node-a")
    with pytest.raises(ForbiddenError, match="node node-a cannot push node node-b"):
        auth.may_push(f"Bearer {token}", "node-b")


def test_expired_wrong_audience_unknown_and_unbound_tokens_are_refused() -> None:
    review = FakeTokenReview()
    auth = tokens(review)
    expired = review.issue("node-a", ttl=-1)
    with pytest.raises(UnauthorisedError, match="expired"):
        auth.may_push(f"Bearer {expired}", "node-a")
    other = review.issue("node-a", audience="https://kubernetes.default.svc")
    with pytest.raises(UnauthorisedError, match="audiences"):
        auth.may_push(f"Bearer {other}", "node-a")
    with pytest.raises(UnauthorisedError, match="did not authenticate"):
        auth.may_push("Bearer forged.token.here", "node-a")
    unbound = review.issue(None)  # a legacy Secret token: no pod, no node
    with pytest.raises(UnauthorisedError, match="not bound to a pod"):
        auth.may_push(f"Bearer {unbound}", "node-a")
    stranger = review.issue("node-a", user="system:serviceaccount:default:default")
    with pytest.raises(UnauthorisedError, match="not a cpumanager agent"):
        auth.may_push(f"Bearer {stranger}", "node-a")
    with pytest.raises(UnauthorisedError, match="Bearer"):
        auth.may_push("Basic abc", "node-a")
    assert not isinstance(UnauthorisedError("x"), ForbiddenError)


def test_an_answer_that_does_not_name_the_audience_is_refused() -> None:
    """An authenticator that ignores audiences answers without status.audiences: a token
    issued for the API server itself must not pass as one for the extender."""
    review = FakeTokenReview()
    token = review.issue("node-a")

    def unaware(token: str, audiences: tuple[str, ...]) -> dict[str, Any]:
        answer = review(token, audiences)
        answer.pop("audiences", None)
        return answer

    auth = NodeTokens(unaware, AGENTS, wall_clock=lambda: review.now)
    with pytest.raises(UnauthorisedError, match="audience"):
        auth.may_push(f"Bearer {token}", "node-a")


def test_reviews_are_kept_until_the_token_expires() -> None:
    review = FakeTokenReview()
    auth = tokens(review)
    token = review.issue("node-a", ttl=120)
    for _ in range(5):
        auth.may_push(f"Bearer {token}", "node-a")
    assert review.reviews == 1
    review.now += 121  # expired: asked again, refused
    with pytest.raises(UnauthorisedError):
        auth.may_push(f"Bearer {token}", "node-a")
    assert review.reviews == 2


def test_shared_token_and_bearer_parsing() -> None:
    SharedToken(b"t").may_push("Bearer t", "any-node")
    with pytest.raises(UnauthorisedError):
        SharedToken(b"t").may_push("Bearer u", "any-node")
    with pytest.raises(UnauthorisedError, match="no --token-file"):
        SharedToken(None).may_push("Bearer t", "n")
    assert bearer("bearer abc ") == "abc"
    for empty in (b"", b"  "):  # no secret: nothing matches it, not even an empty credential
        for header in ("Bearer ", "Bearer", "bearer  ", ""):
            with pytest.raises(UnauthorisedError):
                SharedToken(empty).may_push(header, "n")


def test_over_http_another_nodes_token_is_403_and_its_own_is_accepted() -> None:
    review = FakeTokenReview()
    config = ExtenderConfig(authenticator=tokens(review))
    ext, server, thread = start_extender(config)
    try:
        token_a = review.issue("a").encode()
        status, text = ext.call(
            "POST", "/v1/nodes/b/snapshot", snapshot_document(make_snapshot("b")), token=token_a
        )
        assert status == 403
        assert "cannot push node b" in text
        assert ext.store.get("b") is None
        status, body = ext.call(
            "POST", "/v1/nodes/a/snapshot", snapshot_document(make_snapshot("a")), token=token_a
        )
        assert (status, body["node"]) == (200, "a")
        expired = review.issue("a", ttl=-5).encode()
        status, _ = ext.call("POST", "/v1/nodes/a/heartbeat", {"digest": "x"}, token=expired)
        assert status == 401
    finally:
        server.should_exit = True
        thread.join(timeout=10)


NODES = st.sampled_from(["a", "b", "c"])


@settings(max_examples=60, deadline=None)
@given(
    issued_for=NODES,
    pushed=NODES,
    lifetime=st.sampled_from([-10.0, 30.0, 3600.0]),
    audience=st.sampled_from([AUDIENCE, "https://kubernetes.default.svc", "other"]),
    later=st.sampled_from([0.0, 60.0, 4000.0]),
)
def test_a_push_is_accepted_exactly_when_the_token_is_the_nodes_own_and_valid(
    issued_for: str, pushed: str, lifetime: float, audience: str, later: float
) -> None:
    review = FakeTokenReview()
    auth = tokens(review)
    token = review.issue(issued_for, audience=audience, ttl=lifetime)
    for _ in range(2):  # a kept review answers as the first did while the token lives
        valid = lifetime > 0 and audience == AUDIENCE
        try:
            auth.may_push(f"Bearer {token}", pushed)
            accepted = True
        except UnauthorisedError:
            accepted = False
        assert accepted == (valid and issued_for == pushed)
        review.now += later
        lifetime -= later
