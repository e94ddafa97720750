"""Where the API may listen: loopback unless the network is asked for in so many words."""

from __future__ import annotations

import ipaddress

DEFAULT_HOST = "127.0.0.1"
NETWORK_HOST = "0.0.0.0"  # every interface: what --allow-network binds when no host is given


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def network_refusal(host: str) -> str:
    return f"refusing to listen on {host}: that opens the API to the network; allow the network explicitly (lokal serve --allow-network) if you mean it"


def network_warning(host: str) -> str:
    return f"WARNING: listening on {host}: anyone who can reach this machine and has the key can use the model"


def url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"
