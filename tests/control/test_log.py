"""The control values (pure): argument checks by table, the state folded from a log."""

from __future__ import annotations

from typing import Any

import pytest

from headway.control.log import Control, ControlKind, check_args, control_from_row, describe
from headway.control.state import ControlState, fold
from headway.errors import ControlError
from headway.policy.overrides import HostOverride


@pytest.mark.parametrize(
    ("kind", "args", "node", "want"),
    [
        ("pause", {}, None, {}),
        ("stop", {}, "n1", {}),
        ("add-seeds", {"urls": [" https://a.example/ ", "b.example"]}, None,
         {"urls": ["https://a.example/", "b.example"]}),
        ("opt-out", {"domain": "WWW.Example.ORG."}, None, {"domain": "www.example.org"}),
        ("opt-out", {"domain": "https://shop.example.com/x"}, None, {"domain": "shop.example.com"}),
        ("host-override", {"host": "A.example:8080", "delay": 2}, None,
         {"host": "a.example:8080", "delay": 2.0}),
        ("host-override", {"host": "a.example", "budget": 0, "concurrency": 2}, None,
         {"host": "a.example", "budget": 0, "concurrency": 2}),
        ("host-exclude", {"host": "10.0.0.1"}, None, {"host": "10.0.0.1"}),
        ("host-clear", {"host": "a.example"}, None, {"host": "a.example"}),
    ],
)  # fmt: skip
def test_good_arguments_are_normalized(
    kind: str, args: dict[str, Any], node: str | None, want: dict[str, Any]
) -> None:
    assert check_args(kind, args, node) == want


@pytest.mark.parametrize(
    ("kind", "args", "node", "message"),
    [
        ("jump", {}, None, "unknown control 'jump'"),
        ("opt-out", {"domain": "x.example"}, "n1", "applies to the whole crawl"),
        ("pause", {}, "bad node", "bad node id"),
        ("pause", {"why": "x"}, None, "pause takes no why"),
        ("add-seeds", {"urls": []}, None, "at least one URL"),
        ("add-seeds", {"urls": "https://a.example/"}, None, "at least one URL"),
        ("add-seeds", {"urls": ["ftp://a.example/"]}, None, "not an http or https URL"),
        ("add-seeds", {"urls": ["not a url"]}, None, "not a URL"),
        ("opt-out", {"domain": "bad domain"}, None, "opt-out needs a domain"),
        ("host-override", {"host": "a.example"}, None, "needs --delay, --budget or --concurrency"),
        ("host-override", {"host": "a.example", "delay": -1}, None, "delay must be from 0"),
        ("host-override", {"host": "a.example", "delay": "1"}, None, "delay must be a number"),
        ("host-override", {"host": "a.example", "budget": 1.5}, None, "budget must be a whole"),
        ("host-override", {"host": "a.example", "concurrency": 0}, None, "at least 1"),
        ("host-exclude", {"host": "a/b"}, None, "not a host name"),
        ("host-exclude", {"host": "a.example:99999"}, None, "bad port"),
        ("host-exclude", {}, None, "a host is needed"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    kind: str, args: dict[str, Any], node: str | None, message: str
) -> None:
    with pytest.raises(ControlError) as err:
        check_args(kind, args, node)
    assert message in str(err.value) and "\n" not in str(err.value)


def c(seq: int, kind: str, node: str | None = None, **args: Any) -> Control:
    return Control(seq, ControlKind(kind), node, args, "test", float(seq))


LOG = [
    c(1, "pause"),
    c(2, "add-seeds", urls=["https://a.example/", "https://b.example/"]),
    c(3, "resume", "n2"),
    c(4, "host-override", host="a.example", delay=3.0),
    c(5, "host-override", host="a.example", budget=10),
    c(6, "host-exclude", host="b.example"),
    c(7, "opt-out", domain="c.example"),
    c(8, "add-seeds", urls=["https://b.example/", "https://d.example/"]),
    c(9, "stop", "n2"),
    c(10, "opt-out", domain="c.example"),
    c(11, "host-clear", host="b.example"),
]


@pytest.mark.parametrize(
    ("node", "upto", "paused", "stop_seq"),
    [
        ("n1", 1, True, None),
        ("n1", 11, True, None),  # the resume and stop were for n2
        ("n2", 3, False, None),
        ("n2", 11, False, 9),
        (None, 11, True, 9),  # the crawl: paused as a whole, a stop was given
    ],
)
def test_pause_and_stop_follow_the_controls_addressed_to_the_node(
    node: str | None, upto: int, paused: bool, stop_seq: int | None
) -> None:
    st = fold(ControlState(), LOG[:upto], node=node)
    assert st.seq == upto and st.paused is paused
    assert (st.stop.seq if st.stop else None) == stop_seq


def test_seeds_optout_and_overrides_are_folded_once_in_order() -> None:
    st = fold(ControlState(), reversed(LOG), node="n1")  # order of arrival does not matter
    assert st.seeds == ("https://a.example/", "https://b.example/", "https://d.example/")
    assert st.optout == ("c.example",)
    assert dict(st.hosts) == {"a.example": HostOverride(delay=3.0, budget=10)}
    mid = fold(ControlState(), LOG[:6], node="n1")
    assert dict(mid.hosts)["b.example"] == HostOverride(exclude=True)


def test_folding_in_steps_equals_folding_at_once_and_skips_what_was_applied() -> None:
    whole = fold(ControlState(), LOG, node="n2")
    step = ControlState()
    for i in range(0, len(LOG), 3):
        step = fold(step, LOG[: i + 3], node="n2")  # overlapping batches
    assert step == whole


def test_a_row_of_an_unknown_kind_is_skipped_not_a_crash() -> None:
    assert control_from_row(1, "reboot", None, "{}", "x", 0.0) is None
    assert control_from_row(1, "pause", None, "not json", "x", 0.0) is None
    back = control_from_row(2, "pause", "", "{}", "x", 1.0)
    assert back == Control(2, ControlKind.PAUSE, None, {}, "x", 1.0)


@pytest.mark.parametrize(
    ("control", "line"),
    [
        (c(1, "pause"), "#1 pause (every node) by test"),
        (c(2, "stop", "n1"), "#2 stop node n1 by test"),
        (
            c(3, "host-override", host="a.example", delay=2.5, budget=3),
            "#3 host-override a.example: delay 2.5, budget 3 by test",
        ),
        (
            c(4, "add-seeds", urls=["u1", "u2", "u3", "u4"]),
            "#4 add-seeds u1 u2 u3 and 1 more by test",
        ),
        (c(5, "opt-out", domain="x.example"), "#5 opt-out x.example by test"),
        (
            c(6, "host-override", host="a.example", budget=2_000_000, delay=0.25),
            "#6 host-override a.example: delay 0.25, budget 2000000 by test",
        ),
    ],
)  # fmt: skip
def test_describe(control: Control, line: str) -> None:
    assert describe(control) == line


def test_exclude_controls_take_a_regular_expression_and_fold_once_each() -> None:
    assert check_args("exclude", {"regex": r"/calendar/\d{4}"}) == {"regex": r"/calendar/\d{4}"}
    for bad, message in [
        ({"regex": "(unclosed"}, "exclude: bad regular expression '(unclosed'"),
        ({"regex": ""}, "exclude needs a regular expression"),
        ({"regex": "x" * 2001}, "exclude needs a regular expression"),
        ({"regex": "a", "host": "b"}, "exclude"),
    ]:
        with pytest.raises(ControlError) as info:
            check_args("exclude", bad)
        assert message in str(info.value) and "\n" not in str(info.value)
    log = [
        Control(i + 1, ControlKind.EXCLUDE, None, {"regex": r}, "cli t@h", 0.0)
        for i, r in enumerate(["/a", "/b", "/a"])
    ]
    assert fold(ControlState(), log, node="n1").exclude == ("/a", "/b")
    assert describe(log[1]) == "#2 exclude /b by cli t@h"
