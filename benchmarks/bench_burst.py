"""A burst of data-subject requests through the real daemon, against one request alone, in the same run.

Setup (untimed): a fresh SQLite instance in a temporary DAGSTER_HOME with the default dagster.yaml
(the `lm` pool, limit 1, run granularity), the planted model registered (its cached directory; it
is trained first if absent, ~20 min of one core), the reference data built on the planted world,
its `models` partition adopted (no cohort audit run), and a request audit of two properties
without invented controls (`wikimem_audit.yaml`). Then `dagster-daemon run` (sensors + run queue):

- baseline: one request added alone to the idle daemon, timed from its intake to its run's end;
- burst: N requests (default 50, planted people) added at once, timed from their intake to the
  last run's end; with --kill-after K the daemon is SIGKILLed once K of them are answered and
  started again at once (the restart is inside the timed span).

Printed: requests/hour of the burst and of the baseline (3,600 / its seconds), per-request cost
in the burst / the single request's (the ratio), the peak RSS of the daemon process, of its code
server, of one run worker and of them all together (psutil, every 0.5 s), the most model runs
at once (from the run records' start and end times), and whether every request has exactly one
successful run and an answer.

    .venv/bin/python benchmarks/bench_burst.py --out benchmarks/results/bench_burst.txt
    .venv/bin/python benchmarks/bench_burst.py --requests 12 --kill-after 4
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import psutil  # noqa: E402
import yaml  # noqa: E402

PROPERTIES = ["P106", "P27"]
REQUEST_AUDIT = {"ops": {"request_canaries": {"config": {"properties": PROPERTIES, "n_controls": 0}}}}
SENSOR_INTERVAL = "2"
TERMINAL = ("SUCCESS", "FAILURE", "CANCELED")


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


class Home:
    """A fresh instance with the planted model registered and its reference data built."""

    def __init__(self, root: Path, model_dir: Path):
        from validate_planted import planted_data_config

        from sensors.registry import REFERENCE_KEYS
        from wikimem_platform.planted import load_manifest, registry_fields
        from wikimem_platform.registry import Registry

        self.path = root / "home"
        self.path.mkdir()
        shutil.copy(REPO / "dagster.yaml", self.path / "dagster.yaml")
        (self.path / "wikimem_audit.yaml").write_text(yaml.safe_dump(REQUEST_AUDIT))
        self.url = f"sqlite:///{self.path / 'wikimem_registry.db'}"
        self.release = Registry(self.url).register(**registry_fields(model_dir)).key
        config = {**planted_data_config(model_dir=model_dir), "execution": {"config": {"in_process": {}}}}
        (self.path / "reference.json").write_text(json.dumps(config))
        select = ",".join(key.to_user_string() for key in REFERENCE_KEYS)
        with open(self.path / "reference.log", "w") as log:
            code = subprocess.run([_bin("dagster"), "asset", "materialize", "-m", "definitions", "--select", select,
                                   "-c", str(self.path / "reference.json")], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                  env={**os.environ, "DAGSTER_HOME": str(self.path)}).returncode
        if code:
            raise SystemExit(f"reference data failed, see {self.path / 'reference.log'}")
        self.instance.add_dynamic_partitions("models", [self.release])
        self.people = [p["qid"] for p in load_manifest(model_dir)["people"]]

    @property
    def instance(self):
        from dagster import DagsterInstance

        if not hasattr(self, "_instance"):
            os.environ["DAGSTER_HOME"] = str(self.path)
            self._instance = DagsterInstance.get()
        return self._instance

    def add(self, qids: list[str]) -> list[str]:
        from wikimem_platform.storage import StoredResults
        from wikimem_platform.subject_requests import intake

        humans = StoredResults(self.path / "storage").table("humans")
        store = intake.RequestStore(self.url)
        return [store.add(intake.resolve_qid(qid, humans), "access").id for qid in qids]

    def runs(self) -> list:
        from dagster import RunsFilter

        return self.instance.get_run_records(RunsFilter(job_name="request_audit"))


class Peaks(threading.Thread):
    """Peak RSS (MiB) of the daemon process, its code server(s), one run worker and all of them."""

    def __init__(self):
        super().__init__(daemon=True)
        self.daemon_pid, self.stop = None, threading.Event()
        self.peak = {"daemon": 0.0, "code server": 0.0, "run worker": 0.0, "all": 0.0}

    def run(self):
        while not self.stop.wait(0.5):
            with contextlib.suppress(psutil.Error):
                if self.daemon_pid is None:
                    continue
                root = psutil.Process(self.daemon_pid)
                total = 0.0
                for proc in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        rss = proc.memory_info().rss / 2**20
                        total += rss
                        line = " ".join(proc.cmdline())
                        # the code server starts each run worker through multiprocessing (spawn_main)
                        kind = ("daemon" if proc.pid == root.pid else "code server" if "api grpc" in line
                                else "run worker" if "spawn_main" in line or "execute_run" in line else None)
                        if kind:
                            self.peak[kind] = max(self.peak[kind], rss)
                self.peak["all"] = max(self.peak["all"], total)


@contextlib.contextmanager
def daemon(home: Home, log_name: str, peaks: Peaks, groups: list[int]):
    """The daemon in its own process group (its code server and run workers join it); killed here
    alone, so a run it left in flight carries on; main() kills the groups at the end."""
    log = open(home.path / log_name, "w")
    process = subprocess.Popen([_bin("dagster-daemon"), "run", "-w", str(REPO / "workspace.yaml")], cwd=REPO,
                               env={**os.environ, "DAGSTER_HOME": str(home.path), "WIKIMEM_SENSOR_INTERVAL": SENSOR_INTERVAL},
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    peaks.daemon_pid = process.pid
    groups.append(process.pid)
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait(timeout=30)
        log.close()


def wait_ready(home: Home, log_name: str, timeout: float) -> None:
    """Until the daemon's request sensor has been evaluated once (its code server is up): the
    baseline is one request on a running daemon, not the daemon's start."""
    deadline = time.monotonic() + timeout
    while "Sensor subject_request_sensor skipped" not in (home.path / log_name).read_text():
        if time.monotonic() > deadline:
            raise SystemExit(f"the daemon's request sensor never ran; see {home.path / log_name}")
        time.sleep(0.5)


def wait_answered(home: Home, ids: list[str], count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        done = {r.dagster_run.tags.get("wikimem/request") for r in home.runs() if r.dagster_run.status.value == "SUCCESS"}
        if len(done & set(ids)) >= count:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"{len(done & set(ids))}/{count} answered after {timeout:.0f}s; logs in {home.path}")
        time.sleep(0.5)


def most_at_once(records) -> int:
    """The most runs whose [start, end] intervals overlap at one moment."""
    events = sorted([(r.start_time, 1) for r in records if r.start_time]
                    + [(r.end_time, -1) for r in records if r.start_time and r.end_time], key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="requests in the burst")
    parser.add_argument("--kill-after", type=int, default=None, help="SIGKILL the daemon once this many are answered (default: N/3; 0: never)")
    parser.add_argument("--model-dir", type=Path, default=None, help="planted model directory (default: the cache)")
    parser.add_argument("--timeout", type=float, default=4 * 3600)
    parser.add_argument("--out", type=Path, default=None, help="also write the lines here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary DAGSTER_HOME")
    args = parser.parse_args()
    os.umask(0o077)  # the instance is requesters' data: the code location refuses a readable one (issue 60)
    kill_after = args.requests // 3 if args.kill_after is None else args.kill_after
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    from wikimem_platform.planted import default_planted_dir, train_planted_model

    model_dir = args.model_dir or train_planted_model(default_planted_dir())
    load = os.getloadavg()[0]
    say(f"# .venv/bin/python benchmarks/bench_burst.py {shlex.join(sys.argv[1:])}   ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{os.cpu_count()} cores, load average {load:.2f} at start)")
    root = Path(tempfile.mkdtemp(prefix="wikimem-burst-"))
    groups: list[int] = []
    try:
        started = time.monotonic()
        home = Home(root, model_dir)
        if len(home.people) < args.requests + 1:
            raise SystemExit(f"--requests: at most {len(home.people) - 1} (the planted world's people, one kept for the baseline)")
        say(f"setup (untimed): planted model {home.release}, reference data and instance in {time.monotonic() - started:.0f} s; "
            f"request audit {', '.join(PROPERTIES)}, no controls; dagster.yaml: pool lm limit 1, run granularity")
        peaks = Peaks()
        peaks.start()
        with daemon(home, "daemon-1.log", peaks, groups) as first:
            wait_ready(home, "daemon-1.log", args.timeout)
            [alone] = home.add(home.people[:1])
            t0 = time.monotonic()
            wait_answered(home, [alone], 1, args.timeout)
            single = time.monotonic() - t0
            say(f"baseline: one request alone on the idle daemon: {single:.1f} s intake to answer = {3600 / single:.0f} requests/hour")
            baseline_peaks = dict(peaks.peak)

            ids = home.add(home.people[1:args.requests + 1])
            t0 = time.monotonic()
            killed = None
            if kill_after:
                wait_answered(home, ids, kill_after, args.timeout)
                first.send_signal(signal.SIGKILL)  # the daemon process alone: its code server and run workers live on
                first.wait(timeout=30)
                killed = time.monotonic() - t0
            else:
                wait_answered(home, ids, len(ids), args.timeout)
                burst = time.monotonic() - t0
        if killed is not None:
            with daemon(home, "daemon-2.log", peaks, groups):
                wait_answered(home, ids, len(ids), args.timeout)
                burst = time.monotonic() - t0
                time.sleep(3 * int(SENSOR_INTERVAL))  # later ticks: nothing launched twice
        peaks.stop.set()
        records = home.runs()
        per_request = {}
        for record in records:
            per_request.setdefault(record.dagster_run.tags.get("wikimem/request"), []).append(record.dagster_run.status.value)
        # a run the kill left STARTING fails at its start timeout and is launched again (dagster.yaml
        # run_monitoring + run_retries): exactly one success still, the failed start counted apart
        failed_starts = [r.dagster_run.run_id for r in records if r.dagster_run.status.value == "FAILURE"
                         and r.dagster_run.tags.get("dagster/failure_reason") == "START_TIMEOUT"]
        exactly_once = (all(per_request.get(i, []).count("SUCCESS") == 1 for i in [alone, *ids])
                        and sum(len(v) for v in per_request.values()) == len(per_request) + len(failed_starts)
                        and set(per_request) == {alone, *ids})
        from wikimem_platform.subject_requests.answer_files import read_answer

        whole = sum(1 for i in ids if (a := read_answer(home.path / "storage", i)) and a["models"]
                    and all(f.get("verdict") for m in a["models"] for f in m["facts"]))
        burst_records = [r for r in records if r.dagster_run.tags.get("wikimem/request") in set(ids)]
        run_seconds = sorted(r.end_time - r.start_time for r in burst_records if r.start_time and r.end_time)
        spans = sorted((r.start_time, r.end_time) for r in burst_records if r.start_time and r.end_time)
        idle = [b[0] - a[1] for a, b in zip(spans, spans[1:])]
        say(f"burst: {len(ids)} requests added at once: {burst:.1f} s intake to the last answer = {3600 * len(ids) / burst:.0f} requests/hour"
            + (f"; daemon SIGKILLed at {killed:.1f} s ({kill_after} answered) and started again" if killed is not None else ""))
        say(f"  per request {burst / len(ids):.1f} s in the burst vs {single:.1f} s alone: ratio {burst / len(ids) / single:.2f} "
            f"(throughput {3600 * len(ids) / burst:.0f} vs {3600 / single:.0f} requests/hour, {single * len(ids) / burst:.2f}x)")
        say(f"  run worker wall per run: median {run_seconds[len(run_seconds) // 2]:.1f} s (min {run_seconds[0]:.1f}, max {run_seconds[-1]:.1f}); "
            f"between one run's end and the next one's start: median {sorted(idle)[len(idle) // 2]:.1f} s" if run_seconds and idle else "  no run times")
        say(f"  most model runs at once: {most_at_once(records)} (lm pool limit 1); exactly one successful run per request: "
            f"{exactly_once} ({len(records)} runs for {len(per_request)} requests, {len(failed_starts)} of them a start "
            f"the kill left unfinished, failed at its timeout and launched again); whole answers {whole}/{len(ids)}")
        say("peak RSS (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in peaks.peak.items())
            + " (baseline alone: " + ", ".join(f"{k} {v:.0f}" for k, v in baseline_peaks.items()) + ")")
        say(f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
