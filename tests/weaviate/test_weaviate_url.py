"""Store URLs: defaults, options, the API key (never shown again) and clear refusals."""

from __future__ import annotations

import pytest

from commonplace.errors import InvalidURLError
from commonplace_weaviate import parse_url


def test_defaults() -> None:
    settings = parse_url("weaviate://db.example:8080", environ={})
    assert (settings.host, settings.http_port, settings.grpc_port) == ("db.example", 8080, 50051)
    assert (settings.secure, settings.api_key, settings.prefix) == (False, None, "Commonplace")
    assert (settings.timeout, settings.retries, settings.consistency) == (30.0, 5, None)
    assert settings.url == "weaviate://db.example:8080"


def test_tls_defaults_to_port_443_for_both_protocols() -> None:
    settings = parse_url("weaviates://cluster.example", environ={})
    assert (settings.secure, settings.http_port, settings.grpc_port) == (True, 443, 443)
    assert settings.grpc_host == "grpc-cluster.example"
    assert settings.url == "weaviates://cluster.example:443"


def test_options_round_trip_through_the_url() -> None:
    url = (
        "weaviate://10.0.0.1:9000?grpc_port=50052&grpc_host=grpc.internal&prefix=Agent"
        "&timeout=5&connect_timeout=3&retries=7&consistency=QUORUM&replication=3&workers=4"
    )
    settings = parse_url(url, environ={})
    assert (settings.grpc_port, settings.grpc_host, settings.prefix) == (
        50052,
        "grpc.internal",
        "Agent",
    )
    assert (settings.timeout, settings.connect_timeout, settings.retries) == (5.0, 3.0, 7)
    assert (settings.consistency, settings.replication, settings.workers) == ("quorum", 3, 4)
    assert parse_url(settings.url, environ={}) == settings


def test_the_api_key_comes_from_the_url_or_the_environment_and_is_never_shown() -> None:
    from_url = parse_url("weaviate://:s3cr%40t@db:8080", environ={"WEAVIATE_API_KEY": "env"})
    assert from_url.api_key == "s3cr@t"
    from_env = parse_url("weaviate://db:8080", environ={"WEAVIATE_API_KEY": "env-key"})
    assert from_env.api_key == "env-key"
    for settings in (from_url, from_env):
        assert "s3cr" not in settings.url and "env" not in settings.url
        assert "s3cr" not in repr(settings) and "env-key" not in repr(settings)


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("weaviate://", "no host"),
        ("weaviate://db:8080/memories", "no path"),
        ("weaviate://db:8080?colour=blue", "unknown option"),
        ("weaviate://db:8080?prefix=lower", "capitalised"),
        ("weaviate://db:8080?prefix=Bad-Name", "capitalised"),
        ("weaviate://db:8080?timeout=soon", "number of seconds"),
        ("weaviate://db:8080?grpc_port=x", "whole number"),
        ("weaviate://db:99999", "cannot read"),
        ("weaviate://db:8080?consistency=most", "one, quorum, all"),
        ("weaviate://db:8080?retries=0", "retries"),
        ("weaviate://db:8080?prefix=A&prefix=B", "once"),
        ("postgres://db:5432", "not a Weaviate URL"),
        ("weaviate://db:8080?grpc_port=8080", "own port"),
    ],
)
def test_bad_urls_are_refused_with_a_fix(url: str, hint: str) -> None:
    with pytest.raises(InvalidURLError, match=hint):
        parse_url(url, environ={})
