"""Running a test once with each HTTP client of the fetch stage (``fetch.http_client``):
a module or package that imports ``http_client`` has each of its tests run with aiohttp
and with libcurl (skipped where pycurl is not installed), and reads the client of the
running test from ``CLIENT[0]``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

#: The HTTP client of the running test.
CLIENT = ["aiohttp"]


@pytest.fixture(autouse=True, params=["aiohttp", "curl"])
def http_client(request: pytest.FixtureRequest) -> Iterator[str]:
    """The HTTP client the test runs with."""
    if request.param == "curl":
        pytest.importorskip("pycurl")
    CLIENT[0] = request.param
    yield request.param
    CLIENT[0] = "aiohttp"
