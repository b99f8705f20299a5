"""A control stored as one JSON record (the Redis control log's form): written by
``encode_record``, read back by ``control_from_json``; a record this version cannot read
is None, never a crash."""

from __future__ import annotations

import pytest

from headway.control.log import Control, ControlKind, control_from_json, encode_record


def test_a_record_reads_back_as_the_control_it_was() -> None:
    text = encode_record(ControlKind.OPT_OUT, {"domain": "a.test"}, None, "cli bob@h", 5.0)
    assert text == (
        '{"args":{"domain":"a.test"},"at":5.0,"kind":"opt-out","node":null,"origin":"cli bob@h"}'
    )
    assert control_from_json(3, text) == Control(
        3, ControlKind.OPT_OUT, None, {"domain": "a.test"}, "cli bob@h", 5.0
    )


def test_missing_optional_fields_read_as_their_defaults() -> None:
    back = control_from_json(1, b'{"kind":"pause","node":""}')
    assert back == Control(1, ControlKind.PAUSE, None, {}, "", 0.0)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        "7",
        '{"node":null}',  # no kind
        '{"kind":"reboot"}',  # a kind this version does not know
        '{"kind":"pause","args":[1]}',  # arguments not an object
        '{"kind":"pause","at":"noon"}',
        '{"kind":"pause","at":null}',
    ],
)
def test_a_record_this_version_cannot_read_is_none(text: str) -> None:
    assert control_from_json(1, text) is None
