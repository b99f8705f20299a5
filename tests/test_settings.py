"""Settings: precedence, validation messages naming the key and range."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.errors import ConfigError
from headway.settings import KEYS, build_settings, load_env, settings_from_sources

UA = "bot/1.0 (+https://example.org/bot)"


def test_defaults_are_polite() -> None:
    s = build_settings({"user_agent": UA})
    assert s.politeness.delay == 1.0
    assert s.politeness.max_per_host == 1
    assert s.fetch.max_body == 256 * 1024
    assert s.frontier.host_budget == 10_000
    assert s.scope.max_url_length == 2083
    assert s.scope.scope == "seed-domains"
    assert s.parsers >= 1


@pytest.mark.parametrize("ua", ["", "   ", "mybot/1.0", "mybot (contact me)"])
def test_user_agent_without_contact_is_refused(ua: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_settings({"user_agent": ua})
    assert err.value.key == "identity.user_agent"


@pytest.mark.parametrize("ua", [UA, "bot/2 (ops@example.org)", "x-bot (+http://a.example/)"])
def test_user_agent_with_contact_is_accepted(ua: str) -> None:
    assert build_settings({"user_agent": ua}).identity.user_agent == ua


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("delay", -1, "politeness.delay: must be from 0 to 3600"),
        ("delay", "soon", "politeness.delay: expected a number"),
        ("max_pages", -1, "crawl.max_pages: must be at least 0; got -1"),
        ("max_pages", "many", "crawl.max_pages: expected an integer at least 0, got"),
        ("max_per_host", 0, "politeness.max_per_host: must be from 1 to 64"),
        (
            "scope",
            "everything",
            "scope.scope: must be one of seed-domains, seed-hosts, prefix, open",
        ),
        ("allow_loopback", "maybe", "fetch.allow_loopback: expected true or false"),
        ("concurrency", 2.5, "fetch.concurrency: expected an integer"),
        ("include", ["("], "scope.include: bad regex"),
        ("proxy", "socks://x", "fetch.proxy: must be an http:// or https:// URL"),
        ("nonsense", 1, "nonsense: unknown setting"),
        ("crawl_id", "x", "distributed.crawl_id: names a shared crawl in a redis store"),
    ],
)
def test_bad_values_name_the_key_and_range(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_settings({"user_agent": UA, key: value})
    assert message in str(err.value)


def test_precedence_defaults_toml_env_flags(tmp_path: Path) -> None:
    cfg = tmp_path / "crawl.toml"
    cfg.write_text(
        f'[identity]\nuser_agent = "{UA}"\n[politeness]\ndelay = 2.0\nmax_per_host = 2\n'
        "[fetch]\nconcurrency = 10\n"
    )
    env = {"HEADWAY_MAX_PER_HOST": "3", "HEADWAY_CONCURRENCY": "20", "PATH": "/bin"}
    s = settings_from_sources(cfg, env, {"concurrency": 30})
    assert s.politeness.delay == 2.0  # from the file
    assert s.politeness.max_per_host == 3  # env beats the file
    assert s.fetch.concurrency == 30  # flags beat env
    assert s.fetch.total_timeout == 30.0  # default


def test_toml_errors_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[politeness\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        settings_from_sources(bad, {}, {"user_agent": UA})
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("[politeness]\nconcurrency = 3\n")
    with pytest.raises(ConfigError) as err:
        settings_from_sources(wrong, {}, {"user_agent": UA})
    assert "politeness.concurrency: concurrency belongs in section [fetch]" in str(err.value)
    assert "not [politeness]" in str(err.value)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("[politeness]\nconcurency = 3\n")
    with pytest.raises(ConfigError, match=r"politeness\.concurency: unknown setting"):
        settings_from_sources(unknown, {}, {"user_agent": UA})
    with pytest.raises(ConfigError, match="cannot read"):
        settings_from_sources(tmp_path / "missing.toml", {}, {"user_agent": UA})


def test_unknown_environment_setting_is_an_error() -> None:
    with pytest.raises(ConfigError, match="HEADWAY_DELAYY"):
        load_env({"HEADWAY_DELAYY": "1"})


@pytest.mark.parametrize(
    ("var", "value", "message"),
    [
        ("HEADWAY_DELAY", "soon", "HEADWAY_DELAY (politeness.delay): expected a number"),
        ("HEADWAY_DELAY", "-2", "HEADWAY_DELAY (politeness.delay): must be from 0 to 3600"),
        ("HEADWAY_QUIET", "maybe", "HEADWAY_QUIET (output.quiet): expected true or false"),
    ],
)
def test_bad_environment_value_names_the_variable(var: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        settings_from_sources(None, {var: value}, {"user_agent": UA})
    assert message in str(err.value)


def test_unbounded_range_reads_as_words() -> None:
    from headway.settings.sources import coerce
    from headway.settings.tree import Key

    key = Key("politeness", "delay", "float", 1.0, "", 0.0, float("inf"), None)
    with pytest.raises(ConfigError) as err:
        coerce(key, -1)
    assert "must be at least 0; got -1" in str(err.value)
    assert "inf" not in str(err.value)


def test_every_key_has_help_and_a_unique_flag() -> None:
    flags = [k.flag for k in KEYS]
    assert len(flags) == len(set(flags))
    assert all(k.help for k in KEYS)


def test_host_limit_overrides_parse_and_validate() -> None:
    from headway.settings import parse_host_limits

    assert parse_host_limits(("Big.Example=4", "*.cdn.example=8")) == {
        "big.example": 4,
        "*.cdn.example": 8,
    }
    for bad in ("noequals", "x=0", "x=65", "*=2", "=3", "x=lots"):
        with pytest.raises(ConfigError, match=r"politeness\.host_limit"):
            build_settings({"user_agent": UA, "host_limit": [bad]})


def test_recrawl_is_off_by_default_with_documented_bounds() -> None:
    r = build_settings({"user_agent": UA}).recrawl
    assert (r.recrawl, r.revisit_min, r.revisit_max, r.recrawl_share) == (
        False,
        86_400.0,
        2_592_000.0,
        0.5,
    )
    short = build_settings(
        {"user_agent": UA, "recrawl": True, "revisit_min": "0.5", "revisit_max": 3}
    ).recrawl
    assert (short.revisit_min, short.revisit_max) == (0.5, 3.0)
    # turned off on purpose (e.g. a settings file kept for recrawl runs): accepted
    off = build_settings({"user_agent": UA, "recrawl": False, "revisit_min": 60}).recrawl
    assert (off.recrawl, off.revisit_min) == (False, 60.0)


@pytest.mark.parametrize(
    ("values", "key", "message"),
    [
        ({"revisit_min": 0}, "recrawl.revisit_min", "greater than 0"),
        ({"revisit_max": "0"}, "recrawl.revisit_max", "greater than 0"),
        ({"revisit_min": -1}, "recrawl.revisit_min", "greater than 0"),
        ({"revisit_min": 10, "revisit_max": 5}, "recrawl.revisit_max", "at least revisit_min"),
        ({"revisit_min": "soon"}, "recrawl.revisit_min", "expected a number greater than 0"),
        ({"recrawl_share": 1.5}, "recrawl.recrawl_share", "from 0 to 1"),
        ({"recrawl": "maybe"}, "recrawl.recrawl", "true or false"),
    ],
)
def test_recrawl_settings_are_checked(values: dict[str, object], key: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        build_settings({"user_agent": UA, "recrawl": True, **values})
    assert err.value.key == key
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("revisit_min", 60), ("revisit_max", 1e7), ("revisit_max", 5), ("recrawl_share", 1)],
)
def test_a_recrawl_setting_without_recrawl_is_an_error(name: str, value: float) -> None:
    # a forgotten --recrawl: the setting would be silently ignored
    with pytest.raises(ConfigError, match="without --recrawl; add --recrawl") as err:
        build_settings({"user_agent": UA, name: value})
    assert err.value.key == f"recrawl.{name}"
    assert "\n" not in str(err.value)
