"""One thread runs the model, one batch at a time; requests wait in a bounded queue.

Each turn the worker takes the oldest waiting request and every later one that can share its
model call (the same batching key: beam size and n-best for translations), up to
``batch_items`` sentences, runs them as one batch, and hands each request its own slice of the
results, so a request never sees another's output. A batch that fails is retried one request
at a time, so that one bad request fails alone. fairseq's hub interface is not made for
concurrent calls (its generator and incremental state are per call, the model is shared), which
is why nothing else touches the model.
"""

import logging
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional

logger = logging.getLogger(__name__)

Run = Callable[[Hashable, list[Any]], list[Any]]


class QueueFull(Exception):
    """More requests are waiting than the server accepts (--max-waiting)."""


@dataclass
class Job:
    key: Hashable
    items: list[Any]
    future: Future = field(default_factory=Future)


class Batcher:
    def __init__(self, run: Run, batch_items: int, max_waiting: int) -> None:
        self.run, self.batch_items, self.max_waiting = run, batch_items, max_waiting
        self.waiting: deque[Job] = deque()
        self.condition = threading.Condition()
        self.stopping = False
        self.thread: Optional[threading.Thread] = None
        self.counts = {"requests": 0, "batches": 0, "sentences": 0, "failed": 0}

    def submit(self, key: Hashable, items: list[Any]) -> Future:
        """Queue a request; its future gets the results of ``items``, in order."""
        job = Job(key, items)
        with self.condition:
            if len(self.waiting) >= self.max_waiting:
                raise QueueFull(f"{len(self.waiting)} requests are waiting already (rnnsearch-serve --max-waiting)")
            self.waiting.append(job)
            self.condition.notify()
        return job.future

    def start(self) -> None:
        self.thread = threading.Thread(target=self.work, name="rnnsearch-serve model", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Finish the waiting requests, then end the worker."""
        with self.condition:
            self.stopping = True
            self.condition.notify()
        if self.thread is not None:
            self.thread.join()

    def stats(self) -> dict[str, int]:
        with self.condition:
            return {**self.counts, "waiting": len(self.waiting)}

    def work(self) -> None:
        while True:
            with self.condition:
                while not self.waiting and not self.stopping:
                    self.condition.wait()
                if not self.waiting:
                    return
                group = self.take()
            # a request given up while it waited (its future cancelled) is dropped; the others
            # can no longer be cancelled, so their results always find them
            group = [job for job in group if job.future.set_running_or_notify_cancel()]
            if group:
                self.execute(group)

    def take(self) -> list[Job]:
        """The oldest job and the later ones with its key, within ``batch_items`` items (lock held)."""
        first = self.waiting.popleft()
        group, size = [first], len(first.items)
        for job in list(self.waiting):
            if job.key == first.key and size + len(job.items) <= self.batch_items:
                self.waiting.remove(job)
                group.append(job)
                size += len(job.items)
        return group

    def execute(self, group: list[Job]) -> None:
        try:
            results = self.run(group[0].key, [item for job in group for item in job.items])
        except Exception as error:
            if len(group) > 1:
                for job in group:
                    self.execute([job])
                return
            logger.exception("a request failed")
            self.count(failed=1)
            group[0].future.set_exception(error)
            return
        self.count(requests=len(group), batches=1, sentences=len(results))
        start = 0
        for job in group:
            job.future.set_result(results[start : start + len(job.items)])
            start += len(job.items)

    def count(self, **increments: int) -> None:
        with self.condition:
            for name, value in increments.items():
                self.counts[name] += value
