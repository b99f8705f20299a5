"""The text output's packages are checked at start: one clear error naming the extra."""

from __future__ import annotations

import pytest


def test_a_missing_package_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from headway.errors import ConfigError
    from headway.runtime.factory import check_text_packages
    from headway.settings import Settings, TextSettings

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n: None if n == "trafilatura" else real(n)
    )
    check_text_packages(Settings(text=TextSettings(text=True, text_mode="main")))
    check_text_packages(Settings(text=TextSettings(text=False, text_mode="accurate")))
    with pytest.raises(ConfigError, match=r"pip install 'headway\[accurate\]'"):
        check_text_packages(Settings(text=TextSettings(text=True, text_mode="accurate")))
