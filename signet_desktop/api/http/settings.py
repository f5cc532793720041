"""What the HTTP server needs to know about itself: bind address, token, limits, start time."""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata

from signet_desktop.api.http.ratelimit import RateLimit
from signet_desktop.config.sections import AuthConfig
from signet_desktop.domain.address import DEFAULT_HOST, DEFAULT_PORT

DEFAULT_MAX_BODY_BYTES = 1_048_576  # 1 MiB
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})

log = logging.getLogger(__name__)


def package_version() -> str:
    """The installed signet-desktop version, or 0.0.0 when running from a bare checkout."""
    try:
        return metadata.version("signet-desktop")
    except metadata.PackageNotFoundError:
        return "0.0.0"


class InsecureBindError(ValueError):
    """A non-loopback bind was requested without a bearer token."""


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """The server's own facts. `auth_token` set means every non-health request needs it."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    version: str = field(default_factory=package_version)
    auth_token: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # Per-route body limits by exact path (POST /api/documents takes whole documents);
    # every other route keeps `max_body_bytes`.
    route_body_bytes: Mapping[str, int] = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)
    agents_dir: str = ""
    # Signet's `hybrid` auth mode: callers on a loopback address need no token.
    trust_loopback_clients: bool = False
    # By agent.yaml name (`forget`, `batchForget`, ...); empty = none applied (`local` mode).
    rate_limits: Mapping[str, RateLimit] = field(default_factory=dict)
    # agent.yaml `features:` (Signet's flags), answered at GET /api/features
    features: Mapping[str, bool] = field(default_factory=dict)

    def body_limit(self, path: str) -> int:
        """The body limit of a request to `path`."""
        return self.route_body_bytes.get(path, self.max_body_bytes)

    @property
    def uptime_seconds(self) -> float:
        return max(0.0, time.time() - self.started_at)


def normalise_host(host: str) -> str:
    """Lowercase, without IPv6 brackets or a trailing dot (`[::1]` -> `::1`)."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def is_loopback_host(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 (with or without brackets)."""
    name = normalise_host(host)
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_wildcard_host(host: str) -> bool:
    """True for the all-interfaces binds (0.0.0.0, ::)."""
    return normalise_host(host) in WILDCARD_HOSTS


def check_bind(settings: HttpSettings) -> None:
    """Refuse to serve a non-loopback address without a bearer token."""
    if not is_loopback_host(settings.host) and not settings.auth_token:
        raise InsecureBindError(
            f"refusing to bind {settings.host!r} without auth.token: a non-loopback address "
            "exposes every memory to the network. Set auth.token in agent.yaml (and send "
            "'Authorization: Bearer <token>'), or bind 127.0.0.1."
        )
    if settings.max_body_bytes < 1:
        raise ValueError("max_body_bytes must be positive")


def settings_from_auth(
    auth: AuthConfig,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    agents_dir: str = "",
    version: str | None = None,
    started_at: float | None = None,
    features: Mapping[str, bool] | None = None,
) -> HttpSettings:
    """Map agent.yaml `auth` onto the server: which token (if any) it demands, and from whom.

    `local` on a loopback bind needs no token; `team` demands it from everyone; `hybrid`
    demands it only from non-loopback callers. Any non-loopback bind demands it (and raises
    InsecureBindError without one). `team`/`hybrid` on loopback without a token is logged and
    served without auth, as `local` would be. `auth.rateLimits` apply in `team` and `hybrid`
    only, as in Signet.
    """
    token = auth.token.get_secret_value() if auth.token is not None else None
    needs_token = auth.mode != "local" or not is_loopback_host(host)
    if needs_token and not token and is_loopback_host(host):
        log.warning(
            "auth.mode is %r but auth.token is not set; serving loopback without auth", auth.mode
        )
    settings = HttpSettings(
        host=host,
        port=port,
        version=version or package_version(),
        auth_token=token if needs_token else None,
        started_at=time.time() if started_at is None else started_at,
        agents_dir=agents_dir,
        trust_loopback_clients=auth.mode == "hybrid",
        rate_limits=rate_limits_of(auth),
        features=dict(features or {}),
    )
    check_bind(settings)
    return settings


def rate_limits_of(auth: AuthConfig) -> dict[str, RateLimit]:
    """The limits the gate applies for this `auth` section: none in `local` mode."""
    if auth.mode == "local":
        return {}
    return {
        name: RateLimit(window_seconds=rule.window_ms / 1000, max=rule.max)
        for name, rule in auth.rate_limits.by_name().items()
    }
