"""Reading settings: a TOML file, the environment and flags, layered over the defaults
of the tree (``tree.py``), each value converted and checked once.

Precedence, lowest first: the defaults < a TOML file (``--config``) < environment
variables (``HEADWAY_<KEY>``) < command-line flags. A bad value raises ``ConfigError``
naming the key and the accepted range; ``validate`` checks what spans several keys.
"""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
import typing
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from headway.errors import ConfigError
from headway.settings.tree import KEYS_BY_NAME, Key, Settings

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def coerce(key: Key, value: Any) -> Any:
    """Convert ``value`` (from TOML, env or a flag) to the key's type and check its range."""
    where = f"{key.section}.{key.name}"
    try:
        if key.kind == "bool":
            if isinstance(value, bool):
                out: Any = value
            elif isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
                out = value.strip().lower() in _TRUE
            else:
                raise ValueError
        elif key.kind == "int":
            if isinstance(value, bool):
                raise ValueError
            out = int(value) if not isinstance(value, float) or value.is_integer() else None
            if out is None:
                raise ValueError
        elif key.kind == "float":
            if isinstance(value, bool):
                raise ValueError
            out = float(value)
            if out != out or out in (float("inf"), float("-inf")):
                raise ValueError
        elif key.kind in ("path", "optpath"):
            if value is None or value == "":
                if key.kind == "path":
                    raise ValueError
                out = None
            else:
                out = Path(str(value)).expanduser()
        elif key.kind == "list":
            if isinstance(value, str):
                out = tuple(v.strip() for v in value.split(",") if v.strip())
            elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                out = tuple(value)
            else:
                raise ValueError
        elif key.kind == "optstr":
            out = None if value is None or value == "" else str(value)
        else:
            if not isinstance(value, str):
                raise ValueError
            out = value
    except (TypeError, ValueError):
        raise ConfigError(where, f"expected {_describe(key)}, got {value!r}") from None
    if key.choices is not None and out not in key.choices:
        raise ConfigError(where, f"must be one of {', '.join(key.choices)}; got {out!r}")
    numeric = isinstance(out, int | float) and not isinstance(out, bool)
    if numeric and (
        (key.min is not None and out < key.min)
        or (key.max is not None and out > key.max)
        or (key.above is not None and out <= key.above)
    ):
        raise ConfigError(where, f"must be {_range(key)}; got {out!r}")
    return out


def _describe(key: Key) -> str:
    kinds = {
        "int": "an integer",
        "float": "a number",
        "bool": "true or false",
        "path": "a path",
        "optpath": "a path",
        "list": "a list of strings",
        "str": "a string",
        "optstr": "a string",
    }
    desc = kinds[key.kind]
    if key.min is not None or key.max is not None or key.above is not None:
        desc += f" {_range(key)}"
    return desc


def _range(key: Key) -> str:
    """The accepted range in words: "from 0 to 3600", "at least 1", "at most 10",
    "greater than 0" (``above``, an exclusive bound); an infinite bound is no bound."""
    low = key.min if key.min is not None and math.isfinite(key.min) else None
    high = key.max if key.max is not None and math.isfinite(key.max) else None
    if key.above is not None:
        more = f" and at most {high:g}" if high is not None else ""
        return f"greater than {key.above:g}{more}"
    if low is None and high is None:
        return "any number"
    if high is None:
        return f"at least {low:g}"
    if low is None:
        return f"at most {high:g}"
    return f"from {low:g} to {high:g}"


#: A settings file is a few kilobytes; anything past this is refused unread.
MAX_CONFIG_BYTES = 1024 * 1024


def load_toml(path: Path) -> dict[str, Any]:
    """Flat ``{key: value}`` from a TOML file with one table per section. A file larger
    than ``MAX_CONFIG_BYTES``, or a value Python refuses (an integer of thousands of
    digits), is a ConfigError like any invalid TOML."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError("config", f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError("config", f"{path} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError, UnicodeDecodeError,
        # and int() past its digit limit are all ValueErrors
        message = str(exc).split(";", 1)[0]
        raise ConfigError("config", f"{path} is not valid TOML: {message}") from None
    flat: dict[str, Any] = {}
    sections = {f.name for f in dataclasses.fields(Settings)}
    for sec, table in data.items():
        if sec not in sections or not isinstance(table, dict):
            raise ConfigError(
                sec, f"unknown section in {path}; known: {', '.join(sorted(sections))}"
            )
        for name, value in table.items():
            key = KEYS_BY_NAME.get(name)
            if key is None:
                raise ConfigError(f"{sec}.{name}", f"unknown setting in {path}")
            if key.section != sec:
                raise ConfigError(
                    f"{sec}.{name}",
                    f"{name} belongs in section [{key.section}] of {path}, not [{sec}]",
                )
            flat[name] = value
    return flat


#: ``HEADWAY_*`` variables that are not settings (read by the module named).
NOT_SETTINGS = frozenset(
    {
        "HEADWAY_CRASH_AT",  # headway.crashpoints
        "HEADWAY_TEST_PARSE_SLEEP",  # headway.runtime.parsepool
    }
)


def load_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """Flat ``{key: raw string}`` from ``HEADWAY_<KEY>`` variables; an unknown variable,
    or a value the key refuses, is a ConfigError naming the variable."""
    flat: dict[str, Any] = {}
    for var, value in environ.items():
        if not var.startswith("HEADWAY_") or var in NOT_SETTINGS:
            continue
        key = KEYS_BY_NAME.get(var[len("HEADWAY_") :].lower())
        if key is None:
            raise ConfigError(var, "unknown environment setting")
        try:
            coerce(key, value)
        except ConfigError as exc:  # name the variable the value came from
            message = str(exc).removeprefix(f"{exc.key}: ")
            raise ConfigError(f"{var} ({exc.key})", message) from None
        flat[key.name] = value
    return flat


def build_settings(*layers: Mapping[str, Any]) -> Settings:
    """Settings from flat layers, later layers winning; every value coerced and checked."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update(layer)
    per_section: dict[str, dict[str, Any]] = {}
    for name, value in merged.items():
        key = KEYS_BY_NAME.get(name)
        if key is None:
            raise ConfigError(name, "unknown setting")
        per_section.setdefault(key.section, {})[name] = coerce(key, value)
    hints = typing.get_type_hints(Settings)
    sections = {sec: hints[sec](**vals) for sec, vals in per_section.items()}
    settings = Settings(**sections)
    # a forgotten --recrawl is named first: it explains a revisit bound that looks wrong
    _check_recrawl_given(settings, merged.keys())
    validate(settings)
    return settings


#: Settings that only mean something with ``--recrawl``.
RECRAWL_ONLY = ("revisit_min", "revisit_max", "recrawl_share")


def _check_recrawl_given(settings: Settings, given: Collection[str]) -> None:
    """A recrawl setting given while ``recrawl`` is off and never mentioned is almost
    certainly a forgotten ``--recrawl``: an error naming it. Turning recrawl off on
    purpose (``--no-recrawl``, ``recrawl = false``) keeps the other recrawl settings
    accepted, so a settings file may hold them for runs that turn recrawl on."""
    if settings.recrawl.recrawl or "recrawl" in given:
        return
    for name in RECRAWL_ONLY:
        if name in given:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(
                f"recrawl.{name}",
                f"{flag} has no effect without --recrawl; add --recrawl (or drop {flag})",
            )


_CONTACT = re.compile(r"(https?://\S+|[\w.+-]+@[\w-]+\.[\w.-]+)")


def validate(settings: Settings) -> None:
    """Checks that involve more than one key, or the meaning of a value."""
    raw = settings.identity.user_agent
    ua = raw.strip()
    # the value as sent: a trailing line break is one too
    bad = next((c for c in raw if c != "\t" and (c < " " or c == "\x7f")), None)
    if bad is not None:
        what = "a line break" if bad in "\r\n" else f"the control character {bad!r}"
        raise ConfigError(
            "identity.user_agent",
            f"contains {what}, which no HTTP header may carry (every request would fail); "
            'give it on one line, e.g. "mybot/1.0 (+https://example.org/bot)"',
        )
    if not ua:
        raise ConfigError(
            "identity.user_agent",
            "a User-Agent with a contact URL or e-mail is required (--user-agent): sites "
            "must be able to tell who crawls them and how to reach you, "
            'e.g. "mybot/1.0 (+https://example.org/bot)"',
        )
    if not _CONTACT.search(ua):
        raise ConfigError(
            "identity.user_agent",
            f"{ua!r} carries no contact URL or e-mail; add one, "
            'e.g. "mybot/1.0 (+https://example.org/bot)"',
        )
    if not re.match(r"^[A-Za-z_-]", ua):
        raise ConfigError("identity.user_agent", "must start with the crawler's product token")
    parse_host_limits(settings.politeness.host_limit)
    store = settings.frontier.store
    d = settings.distributed
    if store:
        from headway.frontier.backends import check_store

        check_store(store)  # ConfigError naming frontier.store
    if d.crawl_id is not None and not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", d.crawl_id):
        raise ConfigError(
            "distributed.crawl_id", f"use letters, digits, '.', '_' and '-'; got {d.crawl_id!r}"
        )
    if d.crawl_id is not None and not store:
        raise ConfigError(
            "distributed.crawl_id",
            "names a shared crawl in a redis store: give --store redis://... too (the "
            "embedded store holds the one crawl of its --out directory)",
        )
    f = settings.fetch
    if f.connect_timeout > f.total_timeout or f.read_timeout > f.total_timeout:
        raise ConfigError(
            "fetch.total_timeout", "must be at least connect_timeout and read_timeout"
        )
    from headway.fetch.resolver import parse_resolve_rules

    parse_resolve_rules(f.resolve)  # ConfigError naming fetch.resolve
    if f.proxy is not None and not re.match(r"^https?://", f.proxy):
        raise ConfigError("fetch.proxy", f"must be an http:// or https:// URL; got {f.proxy!r}")
    from headway.fetch.clients import check_client

    check_client(f.http_client)  # ConfigError naming fetch.http_client
    r = settings.recrawl
    if r.revisit_min > r.revisit_max:
        raise ConfigError(
            "recrawl.revisit_max",
            f"must be at least revisit_min ({r.revisit_min:g} s); got {r.revisit_max:g} s",
        )
    for pattern_key in ("include", "exclude"):
        for pattern in getattr(settings.scope, pattern_key):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"scope.{pattern_key}", f"bad regex {pattern!r}: {exc}") from None


def parse_host_limits(items: tuple[str, ...]) -> dict[str, int]:
    """``HOST=N`` / ``*.SUFFIX=N`` ceilings, lower-cased keys; ConfigError on a bad item."""
    out: dict[str, int] = {}
    for item in items:
        pattern, sep, value = item.partition("=")
        pattern = pattern.strip().lower()
        try:
            ceiling = int(value)
        except ValueError:
            ceiling = 0
        if not sep or not pattern or pattern in ("*", "*.") or not 1 <= ceiling <= 64:
            raise ConfigError(
                "politeness.host_limit",
                f"expected HOST=N or *.SUFFIX=N with N in [1, 64]; got {item!r}",
            )
        out[pattern] = ceiling
    return out


def settings_from_sources(
    config: Path | None, environ: Mapping[str, str], flags: Mapping[str, Any]
) -> Settings:
    """The full precedence chain: defaults < TOML < env < flags. A bad value that a flag
    gave is named by that flag (``--delay: ...``), as the person typed it; from the file
    it is named by its key (``politeness.delay``), from the environment by the variable."""
    file_layer = load_toml(config) if config is not None else {}
    try:
        return build_settings(file_layer, load_env(environ), flags)
    except ConfigError as exc:
        raise named_as_given(exc, flags) from None


def named_as_given(exc: ConfigError, flags: Mapping[str, Any]) -> ConfigError:
    """``exc`` named by the flag that gave the bad value (``--delay: ...``) when a flag gave
    it (``flags``: setting name -> value, for the flags given), else ``exc`` itself. The
    checks made after the settings are built (files, ports, the store) go through here too,
    so every bad flag value is named the way the person typed it."""
    section, _, name = exc.key.partition(".")
    key = KEYS_BY_NAME.get(name)
    if key is None or key.section != section or name not in flags:
        return exc
    message = str(exc).removeprefix(f"{exc.key}: ")
    return ConfigError(key.flag, message)
