"""Where the API may listen: loopback unless the network is asked for in so many words."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

DEFAULT_HOST = "127.0.0.1"
NETWORK_HOST = "0.0.0.0"  # every interface: what --allow-network binds when no host is given


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def is_local_host_header(host_header: str | None, port: int | None) -> bool:
    """Whether a request's Host names this loopback server: localhost or a loopback address, and our port if it gives one.

    Any other name is a page that had its name pointed at 127.0.0.1 (DNS rebinding).
    No Host at all is no browser's request (they always send one): it is let through.
    """
    if host_header is None:
        return True
    try:
        parts = urlsplit("//" + host_header.strip())
        given_port = parts.port
    except ValueError:  # a port that is not a number, or out of range
        return False
    name = parts.hostname or ""
    if given_port is not None and given_port != port:
        return False
    return name == "localhost" or is_loopback(name)


def network_refusal(host: str) -> str:
    return f"refusing to listen on {host}: that opens the API to the network; allow the network explicitly (lokal serve --allow-network) if you mean it"


def network_warning(host: str) -> str:
    return f"WARNING: listening on {host}: anyone who can reach this machine and has the key can use the model"


def url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"
