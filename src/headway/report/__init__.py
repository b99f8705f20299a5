"""End-of-crawl reports (what a person reads, beside ``cli/``): seeds, hosts, MIME
types, response codes, the frontier and the control log of a crawl directory or a
shared crawl, like Heritrix's reports.

- ``build``: the report as values, from crawl log entries and counts (pure).
- ``render``: the report as text, CSV or JSON (pure).
- ``politeness``: the politeness ledger as values, per host, from crawl log entries (pure);
  ``ledger_render``: the ledger as text or JSON (pure).
- ``headway.cli.report``: ``headway report`` (``--politeness``): reads a crawl directory
  or a shared crawl (IO).
"""
