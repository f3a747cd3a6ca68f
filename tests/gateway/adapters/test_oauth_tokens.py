"""JWT access tokens checked against an issuer's keys, fetched over real HTTP from a loopback issuer.

Each refusal is a token an attacker could send: expired, for another server, from another issuer,
unsigned, tampered, signed with HMAC keyed by the public key, signed by a key the issuer does not
publish. The keys' cache is driven by a clock the test moves, never by waiting.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from gateway.adapters.oauth import JwtVerifier, KeySet, MappedToken, claim_at
from gateway.settings.sections import OAuthSettings

from .oauth_support import (
    Issuer,
    ec_key,
    hmac_with_public_key,
    rsa_key,
    serve_issuer,
    tampered,
    unsigned,
)

RESOURCE = "http://127.0.0.1:8765/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with serve_issuer(rsa_key("k1"), ec_key("e1")) as served:
        yield served


def verifier(issuer: Issuer, clock: Clock | None = None, **options: Any) -> JwtVerifier:
    settings = OAuthSettings.model_validate({"issuer": issuer.url, **options})
    return JwtVerifier(settings, RESOURCE, KeySet(settings, clock or Clock()))


def verify(check: JwtVerifier, token: str) -> Any:
    return anyio.run(check.verify_token, token)


def test_a_good_token_names_its_principal_roles_and_scopes(issuer: Issuer) -> None:
    found = verify(verifier(issuer), issuer.sign(issuer.claims(RESOURCE)))
    assert isinstance(found, MappedToken)
    assert (found.principal, found.roles, found.scopes) == ("alice", ["admin"], ["mcp:tools"])
    assert found.token == ""  # the token itself is not kept
    assert issuer.fetched == ["/.well-known/openid-configuration", "/jwks"]


def test_an_es256_token_and_an_audience_list_are_accepted(issuer: Issuer) -> None:
    token = issuer.sign(issuer.claims(["other", RESOURCE]), issuer.keys[1])
    assert isinstance(verify(verifier(issuer), token), MappedToken)


def test_claim_names_are_configurable_and_reach_into_objects(issuer: Issuer) -> None:
    claims = issuer.claims(
        RESOURCE, email="alice@example.com", realm_access={"roles": ["ops", 7]}, roles=None
    )
    check = verifier(issuer, principal_claim="email", roles_claim="realm_access.roles")
    found = verify(check, issuer.sign(claims))
    assert (found.principal, found.roles) == ("alice@example.com", ["ops"])
    assert claim_at({"https://example.com/roles": "a b"}, "https://example.com/roles") == "a b"


def _refused(issuer: Issuer) -> dict[str, str]:
    good = issuer.claims(RESOURCE)
    stranger = rsa_key("k1")  # the same kid as the issuer's key, another key
    return {
        "expired": issuer.sign(issuer.claims(RESOURCE, exp=int(good["iat"]) - 120)),
        "not yet valid": issuer.sign(issuer.claims(RESOURCE, nbf=int(good["iat"]) + 3600)),
        "without exp": issuer.sign(issuer.claims(RESOURCE, exp=None)),
        "for another server": issuer.sign(issuer.claims("http://127.0.0.1:9999/mcp")),
        "without aud": issuer.sign(issuer.claims(RESOURCE, aud=None)),
        "from another issuer": issuer.sign(issuer.claims(RESOURCE, iss="https://evil.example.com")),
        "unsigned (alg none)": unsigned(good),
        "tampered payload": tampered(issuer.sign(good), sub="mallory", roles=["admin"]),
        "tampered signature": issuer.sign(good)[:-6] + "AAAAAA",
        "hmac keyed with the public key": hmac_with_public_key(good, issuer.keys[0]),
        "signed by a key the issuer does not publish": issuer.sign(good, stranger),
        "naming no principal": issuer.sign(issuer.claims(RESOURCE, sub=None)),
        "not a jwt": "opaque-token-0123456789",
    }


REFUSALS = list(_refused(Issuer([rsa_key("k1")], url="http://127.0.0.1")))


@pytest.mark.parametrize("case", REFUSALS)
def test_bad_tokens_are_refused(issuer: Issuer, case: str, caplog: pytest.LogCaptureFixture) -> None:
    token = _refused(issuer)[case]
    assert verify(verifier(issuer), token) is None
    assert token not in caplog.text


def test_algorithms_the_operator_did_not_allow_are_refused(issuer: Issuer) -> None:
    token = issuer.sign(issuer.claims(RESOURCE), issuer.keys[1])  # ES256
    assert verify(verifier(issuer, algorithms=["RS256"]), token) is None


def test_settings_refuse_none_hmac_and_keys_fetched_in_clear() -> None:
    refused: tuple[dict[str, list[str]], ...] = (
        {"algorithms": ["none"]},
        {"algorithms": ["HS256"]},
        {"algorithms": []},
    )
    for bad in refused:
        with pytest.raises(ValueError):
            OAuthSettings.model_validate({"issuer": "https://auth.example.com", **bad})
    with pytest.raises(ValueError, match="must use https"):
        OAuthSettings.model_validate({"issuer": "http://auth.example.com"})
    with pytest.raises(ValueError, match="must use https"):
        OAuthSettings.model_validate({"issuer": "https://auth.example.com", "jwks_uri": "http://10.0.0.1/k"})


def test_made_up_key_ids_cost_one_fetch_per_floor(issuer: Issuer) -> None:
    clock = Clock()
    check = verifier(issuer, clock)
    good = issuer.claims(RESOURCE)
    assert verify(check, issuer.sign(good)) is not None
    for n in range(20):
        assert verify(check, issuer.sign(good, rsa_key(f"made-up-{n}"))) is None
    assert issuer.fetched.count("/jwks") == 1  # the floor (60 s) has not passed
    clock.now += 60
    assert verify(check, issuer.sign(good, rsa_key("made-up-again"))) is None
    assert issuer.fetched.count("/jwks") == 2


def test_a_rotated_key_is_fetched_when_a_token_names_it(issuer: Issuer) -> None:
    clock = Clock()
    check = verifier(issuer, clock)
    assert verify(check, issuer.sign(issuer.claims(RESOURCE))) is not None
    rotated = rsa_key("k2")
    issuer.keys = [rotated]
    clock.now += 61
    assert verify(check, issuer.sign(issuer.claims(RESOURCE), rotated)) is not None
    # The old key is gone from the issuer, so from the cache too.
    assert verify(check, issuer.sign(issuer.claims(RESOURCE), rsa_key("k1"))) is None


def test_keys_are_kept_while_the_issuer_is_unreachable(issuer: Issuer) -> None:
    clock = Clock()
    check = verifier(issuer, clock, jwks_max_age_seconds=300)
    token = issuer.sign(issuer.claims(RESOURCE))
    assert verify(check, token) is not None
    check.keys.settings = check.keys.settings.model_copy(update={"jwks_uri": "http://127.0.0.1:1/jwks"})
    clock.now += 301  # past the keys' age: a refetch is tried, fails, and the keys held stay in use
    assert verify(check, token) is not None


def test_a_token_just_past_exp_is_accepted_within_the_leeway(issuer: Issuer) -> None:
    token = issuer.sign(issuer.claims(RESOURCE, exp=int(time.time()) - 5))
    found = verify(verifier(issuer), token)
    assert found is not None and found.expires_at >= time.time()  # so the SDK's own check lets it by too
    assert verify(verifier(issuer, leeway_seconds=0), token) is None


@pytest.mark.parametrize(
    "document",
    [{"issuer": "https://evil.example.com"}, {"jwks_uri": "http://keys.example.com/jwks"}],
    ids=["naming another issuer", "keys in clear"],
)
def test_a_discovery_document_that_cannot_be_trusted_yields_no_keys(
    issuer: Issuer, document: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    issuer.discovery = document
    assert verify(verifier(issuer), issuer.sign(issuer.claims(RESOURCE))) is None
    assert "/jwks" not in issuer.fetched
    assert "could not fetch the signing keys" in caplog.text
