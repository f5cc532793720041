"""The suite's xdist scheduler: the longest tests dealt round the workers, then whole modules.

xdist's `load` scheduler starts each worker on a block of consecutive tests (a quarter of its
share: 166 tests each with 8 workers and 5,300 tests) and never moves a test once sent. The
suite sorts its long tests first (tests/conftest.py), so the first worker got nearly all of
them and ran them one after another while the other seven ran out of work: in one run the
others ended at 498 s and the first two at 708 s. Sending single tests instead balanced the
end, but spread every module over all the workers, each setting up the module's fixtures
(a model loaded, a fact set embedded) again.

So: the first tests (the longest, two per worker) are dealt one at a time, round the workers;
after that a worker is sent the next whole module (the run of pending tests from one file)
whenever it is down to its last test, so it never waits between two quick ones and never
holds a queue another worker could have taken.
"""

from __future__ import annotations

from itertools import cycle

from xdist.scheduler import LoadScheduling
from xdist.workermanage import WorkerController

# The longest tests dealt one by one at the start, per worker: the one it runs and the next.
DEALT_PER_WORKER = 2


def module_of(nodeid: str) -> str:
    """The file part of a test id."""
    return nodeid.split("::", 1)[0]


class LongestFirstScheduling(LoadScheduling):
    """`load` scheduling that deals the first tests singly, then whole modules on demand."""

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
        workers = cycle(self.nodes)
        for _ in range(min(len(self.pending), DEALT_PER_WORKER * len(self.nodes))):
            self._send_tests(next(workers), 1)
        if not self.pending:
            for node in self.nodes:
                node.shutdown()

    def check_schedule(self, node: WorkerController, duration: float = 0) -> None:
        """After each test: a worker down to its last test gets the next module."""
        if node.shutting_down:
            return
        if not self.pending:
            node.shutdown()  # it ends once its queue is done
            return
        if len(self.node2pending[node]) <= 1:
            self._send_tests(node, self._next_module_size())

    def _next_module_size(self) -> int:
        """How many pending tests, from the head, belong to the head's file."""
        assert self.collection is not None
        head = module_of(self.collection[self.pending[0]])
        size = 1
        while size < len(self.pending) and module_of(self.collection[self.pending[size]]) == head:
            size += 1
        return size
