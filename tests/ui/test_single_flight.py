"""SingleFlight: one read at a time, and an ask during a read runs once more after it."""

from __future__ import annotations

from signet_desktop.ui.tasks import SingleFlight


def test_asks_during_a_read_become_one_more_read_after_it_whichever_way_it_ended() -> None:
    started: list[int] = []
    flight = SingleFlight(lambda: started.append(len(started)))
    flight.ask()
    flight.ask()
    flight.ask()  # three asks while the first read runs
    assert started == [0] and flight.busy
    flight.done()  # the read ended (ok or failed): one more read for the asks meanwhile
    assert started == [0, 1] and flight.busy
    flight.done()
    assert started == [0, 1] and not flight.busy
    flight.ask()
    assert started == [0, 1, 2]
