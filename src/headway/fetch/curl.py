"""libcurl as the fetch stage's HTTP client (``fetch.http_client = "curl"``, the
``curl`` extra): an ``HttpClient`` beside the aiohttp ``Fetcher``, sharing its
``FetchCore``, whose exchange runs in libcurl, driven by the event loop
(``fetch/curlloop.py``), so that connection set-up, TLS and HTTP parsing stay in C
(``docs/performance.md``, *libcurl in the crawl*). The crawler's client's bounds hold
(the table in ``docs/hostile-web.md``, *The same bounds with libcurl*):

- URL checks, credentials, IP literals, request headers and the result are the
  shared ``FetchCore``'s; names go through the crawler's resolver and its allowed address is
  pinned per transfer (``CURLOPT_RESOLVE``); every socket libcurl opens passes the
  guard (the proxy's excepted);
- one call, one request: libcurl's own resend on a new connection is refused before
  it leaves (``CURLOPT_PREREQFUNCTION``, where ``sent_at`` is taken); a kept
  connection the server closed while idle (a TLS close libcurl misses) is left for a
  new one before any request goes out on it (``Sockets.closed``);
- the body is kept up to its limit; a header line over ``MAX_HEADER_LINE`` bytes or
  more than ``MAX_HEADER_FIELDS`` fields is invalid (``Transfer``, ``curltransfer.py``;
  libcurl itself refuses heads over 300 KB); time-outs: connect by libcurl, between
  reads by a timer reset on every read, the whole exchange by the caller; no proxy from
  the environment;
- TLS verified against the system's authorities plus ``ca_file``; sessions kept per
  host as the crawler's own client keeps them, spread over libcurl share handles
  (``SessionShares``: one holds about 25 hosts); the keep-alive is in whole seconds
  (under one, no reuse); the crawler's handshake counters are not kept.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from yarl import URL

from headway.errors import ConfigError
from headway.fetch.core import CoreClient, FetchConfig, FetchCore
from headway.fetch.exchange import Exchange
from headway.fetch.resolver import AddressRefused, CrawlResolver
from headway.fetch.result import Headers
from headway.fetch.tls import MAX_SESSIONS
from headway.policy.outcome import Outcome

try:
    import pycurl

    from headway.fetch.curlloop import CurlLoop, HandedSocket, SessionShares, Sockets
    from headway.fetch.curltransfer import Transfer, transfer_outcome
except ImportError:  # the curl extra is not installed
    pycurl = None

__all__ = ["CurlFetcher", "system_authorities"]

#: Bundles of the system's certificate authorities, where Linux distributions keep them.
_BUNDLES = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu, Alpine
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL
    "/etc/ssl/ca-bundle.pem",  # openSUSE
    "/etc/ssl/cert.pem",  # macOS, BSDs
)


def system_authorities() -> Path | None:
    """The system's bundle of certificate authorities (those Python's ``ssl`` loads by
    default); None when none is found."""
    paths = ssl.get_default_verify_paths()
    for name in (paths.cafile, paths.openssl_cafile, *_BUNDLES):
        if name and Path(name).is_file():
            return Path(name)
    return None


class CurlFetcher(CoreClient):
    """The libcurl client (``HttpClient``; see the module docstring)."""

    def __init__(self, config: FetchConfig) -> None:
        if pycurl is None:
            raise ConfigError(
                "fetch.http_client",
                "'curl' needs pycurl, which is not installed (README, The HTTP client)",
            )
        self._core = FetchCore(config, self._transport)
        self._config = config
        self._resolver: CrawlResolver | None = None
        self._curl: CurlLoop | None = None
        self._shares: SessionShares | None = None
        self._share_of: dict[Any, Any] = {}  # handle -> the share it uses
        self._loop: asyncio.AbstractEventLoop | None = None
        self._running: dict[Any, Transfer] = {}
        self._sockets = Sockets()
        self._ca_copy: Path | None = None  # the authorities' file made for ca_file
        self._free: list[Any] = []
        self._options: list[tuple[int, Any]] = []
        self._proxy_entry: list[str] = []

    async def __aenter__(self) -> Self:
        assert pycurl is not None
        cfg = self._config
        proxy = URL(cfg.proxy) if cfg.proxy else None
        self._resolver = self._core.new_resolver()
        self._loop = asyncio.get_running_loop()
        self._curl = CurlLoop(self._loop, self._finish)
        # idle connections are bounded by their age, as the crawler's client's are
        self._curl.multi.setopt(pycurl.M_MAXCONNECTS, max(1000, 4 * cfg.max_connections))
        # TLS sessions kept for as many hosts as the crawler's own client keeps
        self._shares = SessionShares(MAX_SESSIONS)
        authorities = self._authorities()
        protocols = pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS
        self._options = [
            (pycurl.NOSIGNAL, 1),
            # bodies handed over in 64 KiB pieces (16 KiB by default): a quarter of the
            # Python calls per page (0.95 -> 0.59 ms a fetch of the real mix, kept alive)
            (pycurl.BUFFERSIZE, 65536),
            (pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1),
            (pycurl.PROTOCOLS, protocols),
            (pycurl.REDIR_PROTOCOLS, protocols),
            (pycurl.FOLLOWLOCATION, 0),
            (pycurl.HTTP_CONTENT_DECODING, 0),  # the body is decoded by the crawler
            (pycurl.SSL_VERIFYPEER, 1),
            (pycurl.SSL_VERIFYHOST, 2),
            (pycurl.CONNECTTIMEOUT_MS, max(1, int(cfg.connect_timeout * 1000))),
            # a backstop: the caller's time-out ends the exchange first
            (pycurl.TIMEOUT_MS, int((cfg.total_timeout + 5) * 1000)),
            # libcurl counts the keep-alive in whole seconds; under one, none is kept
            (pycurl.MAXAGE_CONN, max(1, round(cfg.keepalive))),
            (pycurl.FORBID_REUSE, int(cfg.keepalive < 1)),
            (pycurl.PROXY, cfg.proxy or ""),  # "": no proxy, whatever the environment says
            (pycurl.OPENSOCKETFUNCTION, self._open_socket),
        ]
        if authorities is not None:  # else libcurl's own default bundle
            # a file, not a blob: libcurl keeps the store it builds from a file for
            # the next connections; from a blob it builds one per connection (ms each)
            self._options.append((pycurl.CAINFO, str(authorities)))
        if proxy is not None and proxy.raw_host:
            # the proxy's name through the crawler's resolver too (its overrides)
            port = proxy.port or 80
            address = await self._resolver.resolve(proxy.raw_host, port)
            self._proxy_entry = [f"+{proxy.raw_host}:{port}:{address[0]['host']}"]
        return self

    def describe(self) -> str:
        assert pycurl is not None
        return str(pycurl.version)  # "PycURL/7.49.0 libcurl/8.23.0 OpenSSL/3.6.5 ..."

    def _authorities(self) -> Path | None:
        """The file of the authorities to trust: the system's, or with ``ca_file`` both
        in a file of this fetcher's (removed when it closes)."""
        system, extra = system_authorities(), self._config.ca_file
        if extra is None:
            return system
        with tempfile.NamedTemporaryFile(
            "wb", prefix="headway-ca-", suffix=".pem", delete=False
        ) as f:
            if system is not None:
                f.write(system.read_bytes() + b"\n")
            f.write(extra.read_bytes())  # readable: checked when the fetcher was made
        self._ca_copy = Path(f.name)
        return self._ca_copy

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for c in list(self._running):
            self._abort(c, None)
        for handle in self._free:
            handle.close()
        self._free.clear()
        self._share_of.clear()
        if self._curl is not None:
            self._curl.close()
            self._curl = None
        if self._shares is not None:
            self._shares.close()
            self._shares = None
        if self._ca_copy is not None:
            self._ca_copy.unlink(missing_ok=True)
            self._ca_copy = None
        self._core.close()

    # -- one exchange

    async def _transport(
        self, target: URL, ex: Exchange, max_body: int, extra: Headers
    ) -> tuple[Outcome | None, str | None]:
        """This client's ``Transport``: the exchange through libcurl."""
        if self._curl is None or self._resolver is None:
            raise RuntimeError("Fetcher used outside 'async with'")
        try:
            async with asyncio.timeout(self._config.total_timeout):
                pin = await self._pin(target)
                return await self._transfer(str(target), ex, max_body, pin, self._tls_share(target))
        except TimeoutError as exc:
            return Outcome.TIMEOUT, f"TimeoutError: {exc}"
        except AddressRefused as exc:
            return Outcome.BLOCKED_ADDRESS, str(exc)
        except OSError as exc:  # the resolver's: a name unknown, no answer
            return Outcome.DNS_ERROR, f"DNS: {exc}"

    async def _pin(self, target: URL) -> list[str]:
        """``CURLOPT_RESOLVE`` entries: the address the crawler's resolver allowed for
        the target (none through a proxy, which resolves it), and the proxy's."""
        if self._config.proxy:
            return self._proxy_entry
        host = target.raw_host or ""
        port = target.port or (443 if target.scheme == "https" else 80)
        if ":" in host:  # an IPv6 literal, checked by the guard already
            return []
        assert self._resolver is not None
        address = await self._resolver.resolve(host, port)
        ip = address[0]["host"]
        # "+": an entry that ages out of libcurl's DNS cache (each transfer sets its own)
        return [f"+{host}:{port}:[{ip}]" if ":" in ip else f"+{host}:{port}:{ip}"]

    def _tls_share(self, target: URL) -> Any:
        """The share holding the TLS sessions of ``target``'s host (None over HTTP)."""
        if target.scheme != "https" or self._shares is None:
            return None
        return self._shares.share_for(f"{target.raw_host}:{target.port or 443}")

    async def _transfer(
        self, url: str, ex: Exchange, max_body: int, pin: list[str], share: Any
    ) -> tuple[Outcome | None, str | None]:
        """Run one transfer; (None, None) when it ended well, else its outcome. When
        the kept connection libcurl chose turned out closed before the request was
        sent, the transfer runs once more on a new connection: the server has seen no
        request yet."""
        transfer = await self._run(url, ex, max_body, pin, share, fresh=False)
        if transfer.stale:
            transfer = await self._run(url, ex, max_body, pin, share, fresh=True)
        return transfer_outcome(transfer)

    async def _run(
        self, url: str, ex: Exchange, max_body: int, pin: list[str], share: Any, fresh: bool
    ) -> Transfer:
        assert pycurl is not None and self._loop is not None
        c = self._free.pop() if self._free else self._new_handle()
        transfer = Transfer(ex, max_body, self._loop, self._sockets)
        if share is not None and self._share_of.get(c) is not share:
            if c in self._share_of:
                c.unsetopt(pycurl.SHARE)  # pycurl: one share at a time
            c.setopt(pycurl.SHARE, share)
            self._share_of[c] = share
        c.setopt(pycurl.FRESH_CONNECT, int(fresh))
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.HTTPHEADER, [f"{k}: {v}" for k, v in ex.request_headers])
        c.setopt(pycurl.RESOLVE, pin)
        c.setopt(pycurl.WRITEFUNCTION, transfer.write)
        c.setopt(pycurl.HEADERFUNCTION, transfer.header)
        c.setopt(pycurl.PREREQFUNCTION, transfer.prereq)
        c.setopt(pycurl.SOCKOPTFUNCTION, transfer.opened)
        self._running[c] = transfer
        assert self._curl is not None
        self._curl.multi.add_handle(c)
        transfer.timer = self._loop.call_later(self._config.read_timeout, self._check_read, c)
        try:
            await transfer.done
        finally:
            # the caller's time-out, or a cancellation (the handle may already run the
            # next transfer: it went back to the free list when this one ended)
            if self._running.get(c) is transfer:
                self._abort(c, None)
        return transfer

    def _new_handle(self) -> Any:
        assert pycurl is not None
        c = pycurl.Curl()
        for option, value in self._options:
            c.setopt(option, value)
        return c

    def _open_socket(self, purpose: int, address: Any) -> HandedSocket | None:
        """libcurl is about to connect to ``address``: the guard sees it first."""
        host = address.addr[0]
        proxy = self._config.proxy
        if not proxy and self._core.guard.refusal(host) is not None:
            return None  # libcurl: could not connect
        return HandedSocket(socket.socket(address.family, address.socktype, address.protocol))

    # -- ends of a transfer

    def _check_read(self, c: Any) -> None:
        """The read time-out: nothing read for ``read_timeout`` seconds ends it."""
        transfer = self._running.get(c)
        if transfer is None or self._loop is None:
            return
        if transfer.ex.sent_at is None:  # still connecting: libcurl's connect time-out
            transfer.timer = self._loop.call_later(self._config.read_timeout, self._check_read, c)
            return
        due = transfer.last_read + self._config.read_timeout
        if self._loop.time() >= due:
            self._abort(c, (pycurl.E_OPERATION_TIMEDOUT, "read time-out") if pycurl else None)
        else:
            transfer.timer = self._loop.call_at(due, self._check_read, c)

    def _abort(self, c: Any, error: tuple[int, str] | None) -> None:
        """End a running transfer from outside libcurl (its connection is closed)."""
        assert self._curl is not None
        self._curl.multi.remove_handle(c)
        self._finish(c, error)

    def _finish(self, c: Any, error: tuple[int, str] | None) -> None:
        assert pycurl is not None
        transfer = self._running.pop(c)
        if transfer.timer is not None:
            transfer.timer.cancel()
        if error is not None:
            transfer.errno, transfer.errtext = error
            transfer.os_errno = int(c.getinfo(pycurl.OS_ERRNO) or 0)
        callbacks = (
            pycurl.WRITEFUNCTION,
            pycurl.HEADERFUNCTION,
            pycurl.PREREQFUNCTION,
            pycurl.SOCKOPTFUNCTION,
        )
        for option in callbacks:
            c.unsetopt(option)  # the transfer is not kept alive by its handle
        self._free.append(c)
        if not transfer.done.done():
            transfer.done.set_result(None)
