"""Only rate limits that are applied are reported: per mode, and per route Signet has."""

from __future__ import annotations

from signet_desktop.api.http.settings import rate_limits_of
from signet_desktop.config.describe import LOCAL_RATE_LIMITS, describe_config
from signet_desktop.config.loader import parse_config_text

APPLIED = {"forget", "modify", "batchForget", "forceDelete", "admin", "repair"}


def test_team_and_hybrid_report_exactly_the_applied_limits() -> None:
    for mode in ("team", "hybrid"):
        loaded = parse_config_text(
            f"auth:\n  mode: {mode}\n  rateLimits:\n    forget:\n      max: 2\n"
        )
        described = describe_config(loaded)
        config = described["config"]
        assert isinstance(config, dict)
        reported = config["auth"]["rateLimits"]
        assert set(reported) == APPLIED
        assert reported["forget"] == {"windowMs": 60_000, "max": 2}
        applied = rate_limits_of(loaded.config.auth)
        assert set(applied) == APPLIED and applied["forget"].max == 2
        assert applied["batchForget"].max == 5 and applied["batchForget"].window_seconds == 60


def test_limits_of_routes_we_do_not_serve_are_listed_as_ignored() -> None:
    text = (
        "auth:\n  mode: team\n  rateLimits:\n"
        "    recallLlm: {max: 1}\n    inferenceGateway: {max: 1}\n"
    )
    loaded = parse_config_text(text)
    assert set(loaded.ignored_keys) >= {
        "auth.rateLimits.recallLlm",
        "auth.rateLimits.inferenceGateway",
    }
    assert not loaded.warnings
    config = describe_config(loaded)["config"]
    assert isinstance(config, dict)
    assert "recallLlm" not in config["auth"]["rateLimits"]
    assert "recallLlm" not in rate_limits_of(loaded.config.auth)


def test_local_mode_reports_no_limit_and_applies_none() -> None:
    default = parse_config_text("")
    described = describe_config(default)
    config = described["config"]
    assert isinstance(config, dict)
    assert "rateLimits" not in config["auth"]
    assert LOCAL_RATE_LIMITS not in described["ignoredKeys"]  # nothing was set, nothing to say
    assert rate_limits_of(default.config.auth) == {}
    configured = parse_config_text("auth:\n  rateLimits:\n    forget: {max: 1}\n")
    assert LOCAL_RATE_LIMITS in describe_config(configured)["ignoredKeys"]
    assert rate_limits_of(configured.config.auth) == {}
