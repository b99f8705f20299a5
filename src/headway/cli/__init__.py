"""The command line and what a person reads (the only place that prints): the commands
(``commands``; their arguments and help: ``parsers``), ``headway console``
(``console``), the live progress line and the run's summary (``progress``),
``headway status`` (``status``) and ``headway demo`` (``demo``). Everything here is fed
typed ``statistics()`` values from below; nothing below imports it."""

from headway.cli.commands import main

__all__ = ["main"]
