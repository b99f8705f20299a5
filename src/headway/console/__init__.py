"""The operator's console: a web page and its JSON API showing a crawl (one node, a
crawl directory, or a shared crawl of many nodes) and steering it through the control
log.

- ``book``: what the node keeps for the console besides its statistics (per-host
  counters, recent problems, seeds, the last hour's history); a counter or two per page.
- ``snapshot``: the console's JSON, built from a running node (bounded top lists), and
  the node's task writing it to ``console.json`` and, in a shared crawl, to Redis.
- ``sources``: where a console reads a crawl from (the node in this process, a crawl
  directory, a shared crawl in Redis) and where its controls go (the control log).
- ``app``: the aiohttp application (the page, ``/api/state``, ``/api/hosts``,
  ``/api/control``) and its safety rules (token, origin, read-only page).
- ``serve``: the console a crawling node serves (``--console-port``); the command
  ``headway console`` is ``cli/console.py``.
- ``static/``: the page itself (HTML, CSS, a small script drawing SVG charts).
"""
