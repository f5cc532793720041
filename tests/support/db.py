"""The raw database handle behind a facade, for tests that inspect or damage rows on purpose.

The facade has no public `db`: surfaces go through capability services. Tests that need to
look underneath (count rows, delete a mirror row to prove repair works) come through here,
so the one private access is easy to find.
"""

from __future__ import annotations

from signet_desktop.service.facade import SignetService
from signet_desktop.storage.database import Database


def database_of(service: SignetService) -> Database:
    """The service's database handle (tests only)."""
    return service._db
