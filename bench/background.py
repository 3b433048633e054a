"""A write never waits for a model: ``add_event`` latency with a slow extractor
configured (queued: ``extract=True`` and a worker) against ``add_event``
without one, side by side; and the queue's throughput with 1 and 4 workers.

    python bench/background.py            # model 2 s a call, 200 writes, 40 jobs
    python bench/background.py --smoke    # model 0.05 s a call, 30 writes, 12 jobs (seconds)

The model is scripted: it sleeps, then proposes what the rule extractor
would. Both stores are SQLite files with the same settings; the writes
alternate between them, so both meet the same machine conditions (the
worker's thread runs beside the queued store's writes all along). Also
printed, as the floor the queue removes: a write that extracts in its own
call. Throughput: each worker has its own connection to one store file and
claims jobs from the one queue; each tip is extracted once (checked).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.extract import Proposal, RuleExtractor, Worker
from branchmem.model import Event, Memory

CONTENT = "我对花生过敏。"


class SlowModel:
    """Sleeps ``delay`` seconds a call, then proposes what the rules do."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.rules = RuleExtractor()
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        with self.lock:
            self.calls[window[-1].id] += 1
        time.sleep(self.delay)
        return self.rules.propose(window, visible)


def latency(folder: Path, writes: int, delay: float) -> None:
    plain, queued = Store(folder / "plain.db"), Store(folder / "queued.db")
    model = SlowModel(delay)
    worker = Worker(queued, model, poll=0.05).start()
    a: list[float] = []
    b: list[float] = []
    parent: str | None = None
    for i in range(writes):
        eid = f"e{i}"
        t0 = time.perf_counter()
        plain.add_event(eid, parent=parent, content=CONTENT)
        t1 = time.perf_counter()
        queued.add_event(eid, parent=parent, content=CONTENT, extract=True)
        t2 = time.perf_counter()
        a.append(t1 - t0)
        b.append(t2 - t1)
        parent = eid
    worker.close(timeout=delay + 5)
    inline = []
    for i in range(3):  # the floor the queue removes: extraction in the caller's call
        t0 = time.perf_counter()
        plain.add_event(f"x{i}", parent=parent, content=CONTENT)
        plain.extract(at=f"x{i}", extractor=model)
        inline.append(time.perf_counter() - t0)
    pa, pb = statistics.median(a), statistics.median(b)
    print(
        f"add_event, extraction queued (model {delay:g} s a call): p50 {pb * 1e3:.3f} ms vs "
        f"{pa * 1e3:.3f} ms without an extractor: {pb / pa:.2f}x (goal <= 1.5x)"
    )
    print(
        f"  extracting in the call instead: p50 {statistics.median(inline) * 1e3:.1f} ms; "
        f"jobs done meanwhile {worker.done} of {writes}"
    )
    plain.close()
    queued.close()


def throughput(folder: Path, jobs: int, delay: float) -> None:
    rates = {}
    for n in (1, 4):
        path = folder / f"queue{n}.db"
        with Store(path) as store:
            store.add_event("root", content="你好")
            for i in range(jobs):
                store.add_event(f"t{i}", parent="root", content=CONTENT, extract=True)
        model = SlowModel(delay)
        stores = [Store(path) for _ in range(n)]
        workers = [Worker(s, model, name=f"w{i}") for i, s in enumerate(stores)]
        threads = [threading.Thread(target=w.drain) for w in workers]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.perf_counter() - t0
        assert model.calls == {f"t{i}": 1 for i in range(jobs)}, "a tip extracted twice"
        assert stores[0].pending() == []
        for s in stores:
            s.close()
        rates[n] = jobs / took
    print(
        f"queue throughput, model {delay:g} s a call, {jobs} jobs: 1 worker "
        f"{rates[1]:.1f} jobs/s, 4 workers {rates[4]:.1f} jobs/s: {rates[4] / rates[1]:.2f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="small and fast (CI)")
    args = ap.parse_args()
    delay, writes, jobs = (0.05, 30, 12) if args.smoke else (2.0, 200, 40)
    folder = Path(tempfile.mkdtemp(prefix="bm-background-"))
    try:
        latency(folder, writes, delay)
        throughput(folder, jobs, delay if args.smoke else 0.2)
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
