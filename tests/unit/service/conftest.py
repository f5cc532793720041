"""Service fixtures: an event bus and a subscription that sees everything published on it."""

from __future__ import annotations

import pytest

from signet_desktop.service.events import EventBus, Subscription


@pytest.fixture
def bus() -> EventBus:
    return EventBus()


@pytest.fixture
def events(bus: EventBus) -> Subscription:
    return bus.subscribe(agent_id=None)
