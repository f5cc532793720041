"""The suite's xdist scheduler: the tests sorted first go out one at a time, round the workers.

xdist's `load` scheduler starts each worker on a block of consecutive tests (a quarter of its
share: 166 tests each with 8 workers and 5,300 tests) and never moves a test once sent. The
suite sorts its long tests first (tests/conftest.py), so the first worker got nearly all of
them and ran them one after another while the other seven ran out of work: in one run the
others ended at 498 s and the first two at 708 s. Here the first tests are dealt one per
worker in turn, and afterwards a worker is sent one test at a time as it finishes (xdist's
own `check_schedule` with a chunk of 1): the longest-first rule a person would follow.
"""

from __future__ import annotations

from itertools import cycle

from xdist.scheduler import LoadScheduling

# Each worker holds this many tests: the one it runs and the next, so it never waits for the
# controller between two quick tests.
QUEUED_PER_WORKER = 2


class LongestFirstScheduling(LoadScheduling):
    """`load` scheduling with a round-robin start and single-test refills."""

    def schedule(self) -> None:
        """Deal the first tests one per worker in turn (xdist calls this once all collected)."""
        if self.collection is not None or not self.collection_is_completed:
            super().schedule()  # a later call: xdist's own rescheduling of every node
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = next(iter(self.node2collection.values()))
        self.pending[:] = range(len(self.collection))
        self.maxschedchunk = 1
        workers = cycle(self.nodes)
        for _ in range(min(len(self.pending), QUEUED_PER_WORKER * len(self.nodes))):
            self._send_tests(next(workers), 1)
        if not self.pending:
            for node in self.nodes:
                node.shutdown()
