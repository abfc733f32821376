"""The outbound policy: every request memadmin makes to another machine goes through here.

Providers, health polls, alert webhooks and whatever comes next (anchors, memory-event
webhooks) build their httpx client with :func:`client` (or :func:`transport`), and forms check a
URL with :func:`check_url`. The rules (like GitLab's "allow requests to the local network" off
by default plus an allow-list, or Grafana's data-source allow-list):

- only ``http`` and ``https``;
- loopback, link-local (169.254.0.0/16, fe80::/10, which includes cloud metadata services),
  unspecified (0.0.0.0/8, ``::``), multicast and reserved addresses are refused;
- private ranges (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10) are allowed: that is where
  self-hosted stores live;
- plain ``http`` to a public address is refused (credentials would cross the internet in clear);
- ``MEMADMIN_OUTBOUND_ALLOW`` (host names, ``*.suffix`` names, IP addresses, CIDRs) lifts all of
  the above but the scheme rule for what it names;
- a name is resolved once, every address it resolves to is checked, and the connection goes to
  a checked address (the TLS server name and ``Host`` stay the original name): no window for
  DNS rebinding between the check and the connect;
- redirects are never followed.

No app imports; the allow-list is read from Django settings when a check runs.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import ssl
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

SETTING = "MEMADMIN_OUTBOUND_ALLOW"
SCHEMES = frozenset({"http", "https"})
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_REFUSED_NETWORKS: tuple[tuple[IPNetwork, str], ...] = tuple(
    (ipaddress.ip_network(net), why) for net, why in [
        ("0.0.0.0/8", "an unspecified address"),
        ("127.0.0.0/8", "a loopback address"),
        ("169.254.0.0/16", "a link-local address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),
        ("::/128", "an unspecified address"),
        ("::1/128", "a loopback address"),
        ("fe80::/10", "a link-local address"),
        ("ff00::/8", "a multicast address"),
    ])

_scheme: contextvars.ContextVar[str] = contextvars.ContextVar("outbound_scheme", default="https")


class OutboundRefused(httpx.ConnectError):
    """The policy refuses this destination. The message names the setting that would allow it
    and never carries anything of the request but the host."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Policy:
    names: frozenset[str]
    suffixes: tuple[str, ...]
    networks: tuple[IPNetwork, ...]

    def allows_name(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return host in self.names or any(host.endswith(suffix) for suffix in self.suffixes)

    def allows_address(self, address: IPAddress) -> bool:
        return any(address in network for network in self.networks)


def parse_allow(entries: Iterable[str]) -> Policy:
    """The policy of ``MEMADMIN_OUTBOUND_ALLOW`` entries; ValueError names a bad entry."""
    names: set[str] = set()
    suffixes: list[str] = []
    networks: list[IPNetwork] = []
    for raw in entries:
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry.startswith("[") and entry.endswith("]"):
            entry = entry[1:-1]
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
            continue
        except ValueError:
            pass
        name = entry[2:] if entry.startswith("*.") else entry
        labels = name.rstrip(".").split(".")
        if not name or not all(label and len(label) <= 63 and label.replace("-", "").isalnum()
                               for label in labels):
            raise ValueError(f"{SETTING}: {raw!r} is neither a host name nor an address or CIDR")
        if entry.startswith("*."):
            suffixes.append("." + name.rstrip("."))
        else:
            names.add(name.rstrip("."))
    return Policy(frozenset(names), tuple(suffixes), tuple(networks))


@lru_cache(maxsize=8)
def _cached_policy(entries: tuple[str, ...]) -> Policy:
    return parse_allow(entries)


def current_policy() -> Policy:
    try:
        from django.conf import settings

        entries = tuple(getattr(settings, SETTING, ()) or ())
    except ImportError:  # pragma: no cover - plain Python use
        entries = ()
    return _cached_policy(entries)


def _address(value: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def refusal(address: IPAddress, *, scheme: str, host: str,
            policy: Policy | None = None) -> str | None:
    """Why the policy refuses connecting to ``address`` (for ``host``), or None."""
    policy = policy or current_policy()
    if policy.allows_name(host) or policy.allows_address(address):
        return None
    for network, why in _REFUSED_NETWORKS:
        if address.version == network.version and address in network:
            return f"{host} is {why}"
    if address.is_multicast or address.is_reserved or address.is_unspecified:
        return f"{host} is a reserved address"
    if scheme == "http" and address.is_global:
        return f"plain http to the public address of {host} (use https)"
    return None


def _refused(reason: str) -> OutboundRefused:
    return OutboundRefused(f"refused by the outbound policy: {reason}; "
                           f"an administrator can allow it with {SETTING}")


def origin_of(url: str) -> str:
    """``scheme://host:port`` of a URL (default ports made explicit, host lower-cased): what a
    credential is bound to. An unparsable URL is its own origin."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = port or {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


def check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise _refused(f"the scheme {scheme or '(none)'!r} is not http or https")


def resolve(host: str, port: int, *, scheme: str) -> list[str]:
    """Resolve ``host`` once and check every address; the addresses to connect to, in order.
    Raises OutboundRefused when any address is refused (a name that also points inside is not
    trusted for its other addresses), httpx.ConnectError when the name does not resolve."""
    check_scheme(scheme)
    literal = _address(host.strip("[]"))
    if literal is not None:
        infos = [str(literal)]
    else:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            raise httpx.ConnectError(f"{host} does not resolve") from None
        infos = list(dict.fromkeys(str(info[4][0]) for info in found))
    policy = current_policy()
    addresses: list[str] = []
    for value in infos:
        address = _address(value)
        if address is None:
            raise _refused(f"{host} resolves to an unusable address")
        reason = refusal(address, scheme=scheme, host=host, policy=policy)
        if reason is not None:
            raise _refused(reason)
        addresses.append(str(address))
    if not addresses:
        raise httpx.ConnectError(f"{host} does not resolve")
    return addresses


def check_url(url: str) -> None:
    """Form-time check of a URL: raises OutboundRefused with a message fit for a form error.

    A name that does not resolve now passes (it is checked again, resolved, at every connect)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise _refused("the URL cannot be parsed") from None
    scheme = parts.scheme.lower()
    check_scheme(scheme)
    host = parts.hostname or ""
    if not host:
        raise _refused("the URL has no host")
    try:
        resolve(host, port or (443 if scheme == "https" else 80), scheme=scheme)
    except OutboundRefused:
        raise
    except httpx.ConnectError:
        return


class _PolicyBackend(httpcore.NetworkBackend):
    """httpcore's sync backend, connecting only to addresses the policy checked."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        addresses = resolve(host, port, scheme=_scheme.get())
        last: Exception | None = None
        for address in addresses:
            try:
                return self._backend.connect_tcp(address, port, timeout=timeout,
                                                 local_address=local_address,
                                                 socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not outbound destinations")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@lru_cache(maxsize=1)
def _verifying_context() -> ssl.SSLContext:
    """The default TLS context (certificates and host names checked against certifi's CA
    bundle), built once per process: loading the bundle costs ~15 ms of CPU, and a webhook
    delivery, an anchor post or an SSO call builds a client each. A client-side context is
    safe to share between threads and connections; httpcore sets its ALPN list at each
    connect, the same ``http/1.1`` for every transport here (none speaks HTTP/2)."""
    return httpx.create_ssl_context(verify=True, trust_env=False)


class OutboundTransport(httpx.HTTPTransport):
    """An httpx transport under the policy: no proxy from the environment, checked addresses
    only, redirects answered as they come (the client never follows them)."""

    def __init__(self, *, limits: httpx.Limits | None = None,
                 socket_options: Sequence[Any] | None = None,
                 verify: Any = True) -> None:
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._pool = httpcore.ConnectionPool(
            ssl_context=(_verifying_context() if verify is True
                         else httpx.create_ssl_context(verify=verify, trust_env=False)),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            socket_options=socket_options,
            network_backend=_PolicyBackend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        scheme = request.url.scheme
        check_scheme(scheme)
        token = _scheme.set(scheme)
        try:
            return super().handle_request(request)
        finally:
            _scheme.reset(token)


def transport(**kwargs: Any) -> OutboundTransport:
    return OutboundTransport(**kwargs)


def client(*, timeout: float | httpx.Timeout = 10.0, **transport_options: Any) -> httpx.Client:
    """An httpx client under the outbound policy (never follows redirects, ignores proxies)."""
    return httpx.Client(transport=OutboundTransport(**transport_options), timeout=timeout,
                        follow_redirects=False, trust_env=False)
