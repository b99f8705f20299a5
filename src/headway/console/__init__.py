"""The operator's console: a web page and its JSON API showing a crawl (one node, a
crawl directory, or a shared crawl of many nodes) and steering it through the control
log.

What a console shows is built by the node (``runtime/book.py``, ``runtime/snapshot.py``);
this package only reads it, serves it and sends controls, so it sits above ``runtime``.

- ``sources``: where a console reads a crawl from (the node in this process, a crawl
  directory, a shared crawl in Redis) and where its controls go (the control log).
- ``app``: the aiohttp application (the page, ``/api/state``, ``/api/hosts``,
  ``/api/control``) and its safety rules (token, origin, read-only page).
- ``serve``: the console a crawling node serves (``--console-port``); the command
  ``headway console`` is ``cli/console.py``.
- ``static/``: the page itself (HTML, CSS, a small script drawing SVG charts).
"""
