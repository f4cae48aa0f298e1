"""The fetcher: one egress policy for every page the research job reads.

Every request, and every redirect hop, is checked before it is sent: the scheme is http or
https; the host is on the domain allowlist; the host's addresses — after DNS resolution — are
all globally routable (no private, loopback, link-local, multicast, reserved, shared (CGNAT),
documentation or unspecified address, also not one embedded in IPv6 as mapped, 6to4, Teredo,
NAT64 or IPv4-compatible; loopback only for a host the operator pinned in `resolve` with
`allow_loopback`, which exists for tests); the connection then goes to the checked address, so
a second DNS answer cannot swap it. Bodies over `max_bytes` (declared, sent or decompressed)
are refused, and the whole request — connect, headers, body, every redirect — ends at
`timeout_s`, however slowly a server trickles its bytes.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpcore
import httpx

from footnote.errors import EgressRefused, FetchError

Resolver = Callable[[str, int], list[str]]
"""`resolve(host, port) -> addresses`."""


@dataclass(frozen=True)
class FetchPolicy:
    """What the fetcher may reach."""

    allowed_domains: tuple[str, ...] = ()
    """Hosts (and their subdomains) that may be fetched; `*` allows any public host."""
    allow_loopback: bool = False
    """Allow a loopback address pinned in `resolve` (tests serve the fixture web on 127.0.0.1);
    never one from DNS or written in a URL."""
    resolve: Mapping[str, str] = field(default_factory=dict)
    """Fixed answers, like curl's --resolve: `host` or `*.suffix` → address."""
    max_bytes: int = 5_000_000
    timeout_s: float = 15.0
    max_redirects: int = 5
    user_agent: str = "footnote-research/0.1 (+https://github.com/footnote)"


@dataclass(frozen=True)
class FetchResult:
    """A fetched body with where it ended up and when."""

    url: str
    final_url: str
    status: int
    content_type: str
    body: bytes
    fetched_at: str
    redirects: tuple[str, ...] = ()


class HttpError(FetchError):
    """The server answered with an error status (4xx/5xx); `result` keeps the response, so a
    paywall or login wall can be recorded, not only logged."""

    def __init__(self, message: str, result: FetchResult) -> None:
        super().__init__(message)
        self.result = result


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    """Whether `host` is one of the allowed domains or a subdomain of one."""
    host = host.lower().rstrip(".")
    for domain in allowed:
        d = domain.lower().strip().lstrip("*.").rstrip(".")
        if domain.strip() == "*" or host == d or host.endswith("." + d):
            return True
    return False


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo client, NAT64, compatible)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or int(ip) >> 32 == 0:  # NAT64, or IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(address: str, allow_loopback: bool) -> str | None:
    """Why a resolved address may not be contacted, or None when it may."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
            address.split("%", 1)[0]
        )
    except ValueError:
        return f"{address!r} is not an IP address"
    inner = embedded_ipv4(ip)
    if inner is not None:
        if ip.is_loopback or ip.is_unspecified:  # ::1 and :: are not IPv4-compatible forms
            pass
        else:
            problem = address_problem(str(inner), allow_loopback)
            return f"{ip} embeds {problem}" if problem else None
    if ip.is_loopback:
        return None if allow_loopback else f"{ip} is a loopback address"
    for attr, what in (
        ("is_unspecified", "unspecified"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_private", "private"),
        ("is_reserved", "reserved"),
    ):
        if getattr(ip, attr):
            return f"{ip} is a {what} address"
    if not ip.is_global:  # shared (100.64/10), benchmarking, documentation, …
        return f"{ip} is not a globally routable address"
    return None


def system_resolver(host: str, port: int) -> list[str]:
    """The machine's DNS answer for `host`."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve {host}: {exc.strerror or exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class _Deadline(threading.local):
    at: float = float("inf")

    def left(self, timeout: float | None) -> float:
        """The smaller of an operation's timeout and what is left of the request's time."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the request's time limit is spent")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write ends by the current request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self.inner, self.deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.deadline.left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:  # fmt: skip
        tls = self.inner.start_tls(ssl_context, server_hostname, self.deadline.left(timeout))
        return _DeadlineStream(tls, self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _DeadlineBackend(httpcore.SyncBackend):
    def __init__(self, deadline: _Deadline) -> None:
        self.deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None) -> httpcore.NetworkStream:  # fmt: skip
        inner = super().connect_tcp(host, port, self.deadline.left(timeout), local_address,
                                    socket_options)  # fmt: skip
        return _DeadlineStream(inner, self.deadline)


def _deadline_transport(deadline: _Deadline) -> httpx.HTTPTransport:
    """httpx's transport over connections bounded by the request deadline (httpx has no
    whole-request timeout: its timeouts are per read, so a server sending one byte a second
    would hold a request forever)."""
    transport = httpx.HTTPTransport(trust_env=False)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False), network_backend=_DeadlineBackend(deadline)
    )  # fmt: skip
    return transport


class Fetcher:
    """GETs URLs under a `FetchPolicy`, following redirects only through checked hops."""

    def __init__(
        self,
        policy: FetchPolicy,
        *,
        resolver: Resolver = system_resolver,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.policy = policy
        self._resolver = resolver
        self._deadline = _Deadline()
        self._client = httpx.Client(
            follow_redirects=False,
            timeout=policy.timeout_s,
            transport=transport or _deadline_transport(self._deadline),
            headers={"User-Agent": policy.user_agent},
            trust_env=False,
        )

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def resolve(self, host: str, port: int) -> str:
        """A checked address for `host` (EgressRefused when any of its addresses is not public;
        loopback only for a host pinned in the policy's `resolve` table, with allow_loopback)."""
        fixed = self._fixed(host)
        addresses = [fixed] if fixed is not None else self._resolver(host, port)
        if not addresses:
            raise FetchError(f"cannot resolve {host}")
        loopback_ok = self.policy.allow_loopback and fixed is not None
        for address in addresses:
            problem = address_problem(address, loopback_ok)
            if problem is not None:
                raise EgressRefused(f"{host} resolves to a forbidden address: {problem}")
        return addresses[0]

    def _fixed(self, host: str) -> str | None:
        table = self.policy.resolve
        if host in table:
            return table[host]
        for pattern, address in table.items():
            if pattern.startswith("*.") and host.endswith(pattern[1:]):
                return address
        return None

    def check_url(self, url: str) -> tuple[str, str, int]:
        """(scheme, host, port) of an allowed URL, else EgressRefused saying why."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise EgressRefused(f"{url}: only http and https may be fetched, not {scheme or '?'}:")
        host = (parts.hostname or "").lower()
        if not host:
            raise EgressRefused(f"{url}: no host")
        if parts.username or parts.password:
            raise EgressRefused(f"{url}: URLs with credentials are not fetched")
        if not host_allowed(host, self.policy.allowed_domains):
            raise EgressRefused(f"{host} is not on the fetch allowlist (research.allowed_domains)")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise EgressRefused(f"{url}: bad port") from None
        return scheme, host, port

    def fetch(self, url: str) -> FetchResult:
        """GET `url`; every hop checked; EgressRefused / FetchError say why not."""
        deadline = time.monotonic() + self.policy.timeout_s
        self._deadline.at = deadline
        try:
            return self._follow(url, deadline)
        finally:
            self._deadline.at = float("inf")

    def _follow(self, url: str, deadline: float) -> FetchResult:
        current, hops = url, []
        for _ in range(self.policy.max_redirects + 1):
            response, body = self._get_checked(current, deadline)
            if response.status_code in (301, 302, 303, 307, 308) and "location" in response.headers:
                hops.append(current)
                current = urljoin(current, response.headers["location"])
                continue
            result = FetchResult(
                url=url,
                final_url=current,
                status=response.status_code,
                content_type=response.headers.get("content-type", "").split(";")[0].strip(),
                body=body,
                fetched_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                redirects=tuple(hops),
            )
            if response.status_code >= 400:
                raise HttpError(f"{current}: HTTP {response.status_code}", result)
            return result
        raise EgressRefused(f"{url}: more than {self.policy.max_redirects} redirects")

    def _get_checked(self, url: str, deadline: float) -> tuple[httpx.Response, bytes]:
        scheme, host, port = self.check_url(url)
        address = self.resolve(host, port)
        parts = urlsplit(url)
        literal = f"[{address}]" if ":" in address else address
        netloc = f"{literal}:{port}"
        target = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
        default_port = port == (443 if scheme == "https" else 80)
        headers = {"Host": host if default_port else f"{host}:{port}"}
        extensions = {"sni_hostname": host} if scheme == "https" else {}
        try:
            request = self._client.build_request(
                "GET", target, headers=headers, extensions=extensions
            )
            response = self._client.send(request, stream=True)
        except httpx.InvalidURL as exc:  # httpx parses a redirect's Location as it reads it
            raise EgressRefused(f"{url}: redirect to an invalid URL refused: {exc}") from None
        except httpx.RemoteProtocolError as exc:
            if "location" in str(exc).lower():
                raise EgressRefused(f"{url}: redirect to an invalid URL refused: {exc}") from None
            raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from None
        except httpx.TimeoutException:
            raise FetchError(f"{url}: timed out after {self.policy.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from None
        try:
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > self.policy.max_bytes:
                raise EgressRefused(
                    f"{url}: {int(declared)} bytes is over the limit of {self.policy.max_bytes}"
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.policy.max_bytes:
                    raise EgressRefused(
                        f"{url}: body over the limit of {self.policy.max_bytes} bytes"
                    )
                if time.monotonic() > deadline:
                    raise FetchError(f"{url}: timed out after {self.policy.timeout_s:g} s")
                chunks.append(chunk)
        except httpx.TimeoutException:
            raise FetchError(f"{url}: timed out after {self.policy.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from None
        finally:
            response.close()
        return response, b"".join(chunks)
