"""End-of-crawl reports (what a person reads, beside ``cli/``): seeds, hosts, MIME
types, response codes, the frontier and the control log of a crawl directory or a
shared crawl, like Heritrix's reports.

- ``build``: the report as values, from crawl log entries and counts (pure).
- ``render``: the report as text, CSV or JSON (pure).
- ``command``: ``headway report``: reads a crawl directory or a shared crawl (IO).
"""
