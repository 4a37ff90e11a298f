"""The Wikidata dump reader against decompression alone, on a >= 1 GB dump built from real entities.

The dump is built once (cached outside the repository) from the bundled sample's real entities:
the sample's 10,346 entities first, ids kept (so that claims, spouses among them, resolve and
cited values have aliases), then lines with renumbered ids drawn with a fixed seed: a human
(Q42 6 %, Oliver Kahn 14 %, the sample's other humans 80 % of the time) while humans are under
10 % of all lines, else a non-human (the 10 opentapioca items 95 %, value entities 5 %). Lines
average about 9 KB; a full dump's average is of that order (~1.1-1.4 TB of JSON for ~105 M
entities). Written as `.json.gz` (gzip level 6) and, with --plain, as uncompressed `.json`.

Each reader configuration runs in its own process. Peak RSS is that process's peak plus its
largest worker's (`ru_maxrss`), an upper bound of their sum at any moment: nothing samples
while the reader runs (a sampling process takes CPU from the 2-process run's cores but only from
the 1-process run's idle one). CPU seconds are the main process's and its workers' (user +
system), which other jobs on a shared machine do not inflate as much as they inflate wall time.

Decompression alone is measured two ways: `zcat` (GNU gzip, the issue's yardstick) and the
reader's own decompressor (ISA-L's inflate, one stream), several times faster than `zcat`.

The reader keeps the terms (labels, descriptions, aliases) of the default languages
(`entities.DEFAULT_LANGUAGES`); every run also times it English-only (``languages=()``, the
reader before issue 39), alternating with the default on 1 and 2 workers, and prints the
ratios of wall and CPU seconds and the bytes the terms add to the spilled parts.

With --bz2 the same dump is also written as one bzip2 stream (`bzip2 -9`, as the dumps are) and
read three ways: whole by one step (indexed_bzip2 threads), and cut at its blocks into chunks
(`plan_chunks`) read by one process after another or by two processes at once, as two machines
would (each chunk decoded block by block, `bzip2_blocks`), against `bzip2 -dc` alone.

    .venv/bin/python benchmarks/bench_extract.py --out benchmarks/results/bench_extract.txt
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikimem_platform.reference import bundled
from wikimem_platform.wikidata.entities import is_human  # noqa: E402

CACHE = Path(os.environ.get("WIKIMEM_BENCH_CACHE", Path.home() / ".cache" / "wikimem" / "bench_extract"))
HUMAN_SHARE = 0.10
FIRST_NEW_ID = 200_000_000
FULL_DUMP_GZ_BYTES = 115.2 * 2**30  # latest-all.json.gz, May 2023
FULL_DUMP_BZ2_BYTES = 76 * 2**30  # latest-all.json.bz2, May 2023
BZ2_CHUNKS = 8  # the benchmark's .bz2 cut into this many chunks
FULL_DUMP_ENTITIES = 105_000_000
PROJECTION_CORES = 16

_out = None


def say(line: str = "") -> None:
    print(line, flush=True)
    if _out is not None:
        _out.write(line + "\n")
        _out.flush()


def templates() -> dict[str, list[tuple[bytes, bytes, str]]]:
    """Each real entity as (text before its id, text after it, its id), by kind."""
    kinds: dict[str, list[tuple[bytes, bytes, str]]] = {"q42": [], "kahn": [], "human": [], "item": [], "value": []}
    with gzip.open(bundled.SAMPLE_DUMP, "rb") as handle:
        for raw in handle:
            line = raw.strip().rstrip(b",")
            if line in (b"[", b"]", b""):
                continue
            entity = json.loads(line)
            marker = f'"id":"{entity["id"]}"'.encode()
            before, after = line.split(marker, 1)
            pair = (before + b'"id":"', b'"' + after, entity["id"])
            if entity["id"] == "Q42":
                kinds["q42"].append(pair)
            elif entity["id"] == "Q131261":
                kinds["kahn"].append(pair)
            elif is_human(entity):
                kinds["human"].append(pair)
            elif entity.get("claims"):
                kinds["item"].append(pair)
            else:
                kinds["value"].append(pair)
    return kinds


def build_dump(target_bytes: int, plain: bool, seed: int = 0) -> tuple[Path, Path | None, dict]:
    CACHE.mkdir(parents=True, exist_ok=True)
    stem = CACHE / f"dump-v3-{target_bytes // 10**6}MB-seed{seed}"
    gz_path, plain_path, meta_path = stem.with_suffix(".json.gz"), stem.with_suffix(".json"), stem.with_suffix(".meta.json")
    if gz_path.exists() and meta_path.exists() and (not plain or plain_path.exists()):
        return gz_path, plain_path if plain else None, json.loads(meta_path.read_text())
    kinds = templates()
    rng = random.Random(seed)
    started = time.perf_counter()
    written = lines = humans = 0
    plain_handle = open(plain_path, "wb") if plain else None
    with gzip.open(gz_path, "wb", compresslevel=6) as handle:
        def emit(text: bytes) -> None:
            nonlocal written
            handle.write(text)
            if plain_handle:
                plain_handle.write(text)
            written += len(text)

        emit(b"[\n")
        first = True
        for kind in ("q42", "kahn", "human", "item", "value"):  # the sample itself, original ids
            for before, after, original_id in kinds[kind]:
                emit((b"" if first else b",\n") + before + original_id.encode() + after)
                first = False
                lines += 1
                humans += kind in ("q42", "kahn", "human")
        next_id = FIRST_NEW_ID
        while written < target_bytes:
            if humans < HUMAN_SHARE * (lines + 1):  # 10 % of all lines, the sample's own included
                roll = rng.random()
                pool = kinds["q42"] if roll < 0.06 else kinds["kahn"] if roll < 0.20 else kinds["human"]
                humans += 1
            else:
                pool = kinds["item"] if rng.random() < 0.95 else kinds["value"]
            before, after, _ = pool[rng.randrange(len(pool))]
            emit(b",\n" + before + f"Q{next_id}".encode() + after)
            next_id += 1
            lines += 1
        emit(b"\n]\n")
    if plain_handle:
        plain_handle.close()
    meta = {"bytes": written, "gz_bytes": gz_path.stat().st_size, "lines": lines, "humans": humans,
            "build_s": round(time.perf_counter() - started, 1)}
    meta_path.write_text(json.dumps(meta))
    return gz_path, plain_path if plain else None, meta


def cpu_seconds() -> tuple[float, float]:
    """User + system CPU seconds of this process and of its reaped children (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def peak_rss_mb() -> float:
    """This process's peak resident memory plus that of its largest reaped child (Linux: KiB)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_maxrss + children.ru_maxrss) / 1024


def run_one(kind: str, path: str, workers: int) -> dict:
    """One measured configuration, in this (fresh) process; imports are not timed. The fast
    reader's two phases are timed apart: the pass over the dump (`spill_dump`, parallel) and the
    assembly of the frames from its Parquet parts (`assemble_chunks`, one process)."""
    import tempfile

    from wikimem_platform.wikidata.dump_reader import decompressed_pieces, spill_dump
    from wikimem_platform.wikidata.extract import assemble_chunks, read_dump

    started, (main_before, workers_before) = time.perf_counter(), cpu_seconds()
    result: dict = {}
    if kind == "decompress":
        result = {"bytes": sum(len(piece) for piece in decompressed_pieces(Path(path)))}
    elif kind.startswith("chunks"):  # "chunks:i:n": chunks i, i + n, ... of the plan, one after another
        from wikimem_platform.wikidata.dump_reader import plan_chunks, read_chunk

        first, step = map(int, kind.split(":")[1:])
        chunks = plan_chunks(path, Path(path).stat().st_size // BZ2_CHUNKS + 1)[first::step]
        parts = Path(os.environ["BENCH_PARTS"])
        spilled = []
        for chunk in chunks:
            (parts / f"chunk_{chunk.index}").mkdir(parents=True)
            spilled.append(read_chunk(chunk, parts / f"chunk_{chunk.index}", workers=workers))
        result = {"spilled": [(chunk.index, one.to_json()) for chunk, one in zip(chunks, spilled)]}
    elif kind == "full":
        extract = read_dump(path, mode="full")
    else:  # "fast": the default languages' terms; "fast-en": English only, as before issue 39
        from wikimem_platform.wikidata.entities import DEFAULT_LANGUAGES

        languages = () if kind == "fast-en" else DEFAULT_LANGUAGES
        with tempfile.TemporaryDirectory(prefix="bench-extract-") as directory:
            spilled = spill_dump(path, Path(directory), workers=workers, languages=languages)
            parts_bytes = {part: spilled.parts[part].stat().st_size for part in spilled.parts}
            assembly_started, assembly_cpu = time.perf_counter(), cpu_seconds()[0]
            extract = assemble_chunks([spilled], path)
            result = {"assemble_seconds": time.perf_counter() - assembly_started,
                      "assemble_cpu": cpu_seconds()[0] - assembly_cpu, "parts_bytes": parts_bytes}
            sizing_started, sizing_cpu = time.perf_counter(), cpu_seconds()[0]  # not the reader's time or memory
            result["reader_peak_rss_mb"] = peak_rss_mb()
            result["terms_map_bytes"] = terms_map_bytes(spilled.parts["terms"])
            started += time.perf_counter() - sizing_started
            main_before += cpu_seconds()[0] - sizing_cpu
    if kind != "decompress" and not kind.startswith("chunks"):
        result.update({"humans": len(extract.humans), "claims": len(extract.claims), "lines": extract.stats.lines,
                       "value_aliases": len(extract.value_aliases), "terms": len(extract.terms),
                       "terms_per_language": extract.terms["language"].value_counts().to_dict()})
    main_after, workers_after = cpu_seconds()
    return {**result, "seconds": time.perf_counter() - started, "main_cpu": main_after - main_before,
            "workers_cpu": workers_after - workers_before, "peak_rss_mb": result.pop("reader_peak_rss_mb", None) or peak_rss_mb()}


def terms_map_bytes(part: Path) -> int:
    """The spilled terms maps' bytes before Parquet's compression and dictionary encoding (this
    dump repeats its entities, so the compressed part understates a real dump's)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    maps = pq.read_table(part, columns=["terms"])["terms"]
    return int(pc.sum(pc.binary_length(maps)).as_py() or 0)


def measure(kind: str, path: Path, workers: int = 1) -> dict:
    """Run one configuration in a fresh child process (`run_one`)."""
    command = [sys.executable, __file__, "--run-one", kind, str(path), str(workers)]
    child = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if child.returncode != 0:
        raise RuntimeError(f"{command} failed with {child.returncode}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def measure_chunk_steps(path: Path, processes: int) -> dict:
    """The .bz2's chunks read by ``processes`` processes at once (each a share of the chunks, one
    after another, as chunk steps on separate machines), then assembled here: wall seconds of the
    pass and of the assembly, and the extract's size."""
    import tempfile

    from wikimem_platform.wikidata.dump_reader import SpilledExtract
    from wikimem_platform.wikidata.extract import assemble_chunks

    with tempfile.TemporaryDirectory(prefix="bench-extract-chunks-") as parts:
        started = time.perf_counter()
        children = [subprocess.Popen([sys.executable, __file__, "--run-one", f"chunks:{i}:{processes}", str(path), "1"],
                                     stdout=subprocess.PIPE, text=True, env={**os.environ, "BENCH_PARTS": parts})
                    for i in range(processes)]
        answers = [json.loads(child.communicate()[0].strip().splitlines()[-1]) for child in children]
        if any(child.returncode for child in children):
            raise RuntimeError(f"a chunk reader failed: {[child.returncode for child in children]}")
        passed = time.perf_counter() - started
        spilled = sorted((index, SpilledExtract.from_json(text)) for answer in answers for index, text in answer["spilled"])
        extract = assemble_chunks([one for _, one in spilled], path)
        return {"seconds": time.perf_counter() - started, "pass_seconds": passed, "chunks": len(spilled),
                "humans": len(extract.humans), "claims": len(extract.claims),
                "cpu": sum(answer["main_cpu"] + answer["workers_cpu"] for answer in answers),
                "peak_rss_mb": max(answer["peak_rss_mb"] for answer in answers)}


def build_bz2(plain: Path) -> Path:
    """The plain dump as one bzip2 stream (cached)."""
    target = plain.with_suffix(".json.bz2")
    if not target.exists():
        started = time.perf_counter()
        partial = target.with_suffix(".partial")
        subprocess.run(f"bzip2 -9 -c {plain} > {partial}", shell=True, check=True)
        partial.rename(target)
        say(f"(built {target.name} with bzip2 -9 in {time.perf_counter() - started:.0f} s)")
    return target


def bench_bz2(plain: Path, mb: float, full_mb: float, reference_humans: int, repeats: int) -> None:
    """The .bz2 section: decompression alone, the whole file in one step, its chunks in one and
    in two processes, and the projection for the full dump (``full_mb`` of JSON) as .json.bz2
    over cores and machines."""
    path = build_bz2(plain)
    bz2_mb = path.stat().st_size / 1e6
    alone = tool_seconds("bzip2 -dc", path, repeats)
    say(f"bz2: {path.name} ({bz2_mb:.0f} MB, ratio {mb / bz2_mb:.1f}); decompression alone (bzip2 -dc, one core): "
        f"{alone:.1f} s = {mb / alone:.0f} MB/s")
    whole = paired_runs(path, repeats)
    for workers, run in whole.items():
        say(f"reader .json.bz2 whole in one step, {workers} worker{'s' if workers > 1 else ''} (indexed_bzip2 threads): "
            f"{run['seconds']:.1f} s = {mb / run['seconds']:.0f} MB/s = {alone / run['seconds']:.2f}x bzip2 -dc; "
            f"CPU s {run['main_cpu'] + run['workers_cpu']:.1f}; peak RSS {run['peak_rss_mb']:.0f} MB")
    stepped: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(repeats):
        for processes in stepped:
            stepped[processes].append(measure_chunk_steps(path, processes))
    stepped_median = {processes: median(runs) for processes, runs in stepped.items()}
    for processes, run in stepped_median.items():
        if run["humans"] != reference_humans:
            raise RuntimeError(f"the chunks gave {run['humans']} humans, the .json.gz {reference_humans}")
        say(f"reader .json.bz2 in {run['chunks']} chunks at its blocks, {processes} process{'es' if processes > 1 else ''} "
            f"at once (chunk steps, 1 worker each): {run['seconds']:.1f} s (pass {run['pass_seconds']:.1f} s) = "
            f"{mb / run['seconds']:.0f} MB/s = {alone / run['seconds']:.2f}x bzip2 -dc; CPU s {run['cpu']:.1f}; "
            f"peak RSS per process {run['peak_rss_mb']:.0f} MB; {run['humans']:,} humans (as the .json.gz)")
    ratio = stepped_median[1]["seconds"] / stepped_median[2]["seconds"]
    say(f"2 chunk processes / 1 (wall): {ratio:.2f}x")
    per_core = mb / stepped_median[1]["cpu"]  # decode + parse, MB of JSON per CPU second
    # The JSON's size is the .json.gz projection's: this file's bzip2 ratio is higher than a real
    # dump's (~15), its entities being repeated within a block's reach.
    say(f"projection, full dump ({FULL_DUMP_BZ2_BYTES / 2**30:.0f} GiB .json.bz2, ~{full_mb / 1e6:.1f} TB JSON), "
        f"from CPU seconds ({per_core:.0f} MB/s per core, decode and parse): one step on "
        f"{PROJECTION_CORES} cores ~{full_mb / (PROJECTION_CORES * per_core) / 60:.0f} min; chunk steps on 4 machines of "
        f"{PROJECTION_CORES} cores ~{full_mb / (4 * PROJECTION_CORES * per_core) / 60:.0f} min; decompression alone "
        f"(the limit): on {PROJECTION_CORES} cores ~{full_mb / (PROJECTION_CORES * mb / alone) / 60:.0f} min, on one core "
        f"(bzip2 -dc, a single-stream tool) ~{full_mb / (mb / alone) / 3600:.1f} h")


def median(runs: list[dict]) -> dict:
    """The run with the median wall time (one run's jitter on a 2-core machine moves a ratio of
    two ~3 s runs by 0.2)."""
    return sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2]


def median_run(kind: str, path: Path, workers: int = 1, repeats: int = 1) -> dict:
    return median([measure(kind, path, workers) for _ in range(repeats)])


def paired_runs(path: Path, repeats: int) -> dict[int, dict]:
    """The reader with 1 and with 2 workers, run alternately ``repeats`` times each (a shared
    machine's slow minute then slows both, not one), and the median run of each."""
    runs: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(repeats):
        for workers in runs:
            runs[workers].append(measure("fast", path, workers))
    return {workers: median(measured) for workers, measured in runs.items()}


def language_runs(path: Path, repeats: int) -> dict[tuple[str, int], dict]:
    """The reader with the default languages' terms ("fast") and English-only ("fast-en"), on 1 and
    2 workers, run alternately ``repeats`` times each; the median run of each."""
    runs: dict[tuple[str, int], list[dict]] = {(kind, workers): [] for workers in (1, 2) for kind in ("fast-en", "fast")}
    for _ in range(repeats):
        for kind, workers in runs:
            runs[kind, workers].append(measure(kind, path, workers))
    return {key: median(measured) for key, measured in runs.items()}


def bench_languages(path: Path, mb: float, repeats: int) -> None:
    """The cost of the terms table: the default languages against English only, same dump."""
    from wikimem_platform.wikidata.entities import DEFAULT_LANGUAGES

    runs = language_runs(path, repeats)
    for workers in (1, 2):
        english, multilingual = runs["fast-en", workers], runs["fast", workers]
        if (english["humans"], english["claims"]) != (multilingual["humans"], multilingual["claims"]):
            raise RuntimeError("the English columns differ between the two readers")
        for name, run in (("English only", english), (f"languages {','.join(DEFAULT_LANGUAGES)}", multilingual)):
            parts = run["parts_bytes"]
            say(f"reader .json.gz, {workers} worker{'s' if workers > 1 else ''}, {name}: {run['seconds']:.2f} s = "
                f"{mb / run['seconds']:.0f} MB/s; CPU s {run['main_cpu'] + run['workers_cpu']:.2f} "
                f"(assembly {run['assemble_seconds']:.2f} s); peak RSS {run['peak_rss_mb']:.0f} MB; "
                f"spilled parts {sum(parts.values()) / 1e6:.1f} MB (terms {parts.get('terms', 0) / 1e6:.1f} MB; "
                f"{run['terms_map_bytes'] / 1e6:.0f} MB of terms maps before compression); {run['terms']:,} term rows")
        cpu_english = english["main_cpu"] + english["workers_cpu"]
        cpu_multilingual = multilingual["main_cpu"] + multilingual["workers_cpu"]
        say(f"multilingual / English only, {workers} worker{'s' if workers > 1 else ''}: wall "
            f"{multilingual['seconds'] / english['seconds']:.2f}x, CPU seconds {cpu_multilingual / cpu_english:.2f}x, "
            f"assembly {multilingual['assemble_seconds'] / english['assemble_seconds']:.2f}x, spilled bytes "
            f"{sum(multilingual['parts_bytes'].values()) / sum(english['parts_bytes'].values()):.2f}x, peak RSS "
            f"{multilingual['peak_rss_mb'] / english['peak_rss_mb']:.2f}x")
    say(f"term rows per language: {runs['fast', 1]['terms_per_language']}")


def tool_seconds(tool: str, path: Path, repeats: int = 1) -> float:
    """Median wall seconds of a decompressing command (`zcat`, `bzip2 -dc`) writing to /dev/null."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(f"{tool} {path} > /dev/null", shell=True, check=True)
        seconds.append(time.perf_counter() - started)
    return sorted(seconds)[len(seconds) // 2]


def main() -> None:
    global _out
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gb", type=float, default=1.05, help="uncompressed size of the built dump (default 1.05 GB)")
    parser.add_argument("--plain", action="store_true", help="also measure the uncompressed .json (byte-range workers)")
    parser.add_argument("--full", action="store_true", help="also time the reference full parse (slow)")
    parser.add_argument("--bz2", action="store_true",
                        help="also read the dump as .json.bz2: whole, and cut at its blocks into chunk steps")
    parser.add_argument("--out", default=None, help="also write the output to this file")
    parser.add_argument("--repeats", type=int, default=5, help="runs per configuration, the median reported (default 5)")
    parser.add_argument("--languages-only", action="store_true",
                        help="only the .json.gz reader, default languages against English only (no zcat, no projection)")
    parser.add_argument("--run-one", nargs=3, metavar=("KIND", "PATH", "WORKERS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        kind, path, workers = args.run_one
        print(json.dumps(run_one(kind, path, int(workers))))
        return
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        _out = open(args.out, "w")
    load = os.getloadavg()[0]
    say(f"# .venv/bin/python benchmarks/bench_extract.py {' '.join(sys.argv[1:])}   "
        f"({datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, load average {load:.2f} at start; "
        f"each reader figure the median of {args.repeats} runs)")
    gz, plain, meta = build_dump(int(args.gb * 1e9), args.plain or args.bz2)
    mb = meta["bytes"] / 1e6
    say(f"dump: {gz} ({meta['bytes'] / 1e9:.2f} GB JSON, {meta['gz_bytes'] / 1e6:.0f} MB gzip, ratio "
        f"{meta['bytes'] / meta['gz_bytes']:.1f}; {meta['lines']:,} lines, average {meta['bytes'] / meta['lines'] / 1e3:.1f} KB; "
        f"{meta['humans']:,} humans = {meta['humans'] / meta['lines']:.1%}; built in {meta['build_s']} s, cached)")

    if args.languages_only:
        bench_languages(gz, mb, args.repeats)
        if load > 1.0:
            say(f"load average {load:.2f} at start: other jobs shared the cores; compare CPU seconds, and 2 workers "
                f"with 2 workers only")
        return
    zcat = mb / tool_seconds("zcat", gz, args.repeats)
    decompress = median_run("decompress", gz, repeats=args.repeats)
    alone = mb / decompress["seconds"]
    say(f"decompression alone: zcat {zcat:.0f} MB/s; the reader's decompressor (ISA-L inflate, one stream) "
        f"{alone:.0f} MB/s ({decompress['main_cpu']:.1f} CPU s), peak RSS {decompress['peak_rss_mb']:.0f} MB")
    runs = paired_runs(gz, args.repeats)
    for workers, run in runs.items():
        rate = mb / run["seconds"]
        say(f"reader .json.gz, {workers} worker{'s' if workers > 1 else ''}: {run['seconds']:.1f} s = {rate:.0f} MB/s "
            f"= {rate / zcat:.0%} of zcat, {rate / alone:.0%} of inflate alone; {run['humans'] / run['seconds']:,.0f} humans/s; "
            f"CPU s main {run['main_cpu']:.1f} + workers {run['workers_cpu']:.1f}; peak RSS {run['peak_rss_mb']:.0f} MB "
            f"({run['humans']:,} humans, {run['claims']:,} claims, {run['value_aliases']:,} value aliases)")
    bench_languages(gz, mb, args.repeats)
    speedup = runs[1]["seconds"] / runs[2]["seconds"]
    # The limit on 2 cores: Amdahl's, with the one-process assembly as the only serial part and
    # no extra CPU for the hand-over (the extra CPU the 2-process run took is printed beside it).
    one_cpu = runs[1]["main_cpu"] + runs[1]["workers_cpu"]
    two_cpu = runs[2]["main_cpu"] + runs[2]["workers_cpu"]
    serial = runs[1]["assemble_seconds"]
    amdahl = runs[1]["seconds"] / (serial + (runs[1]["seconds"] - serial) / 2)
    say(f"2 workers / 1 worker (wall): {speedup:.2f}x; "
        f"Amdahl's bound with the assembly ({serial:.2f} s of {runs[1]['seconds']:.2f} s) serial and no overhead: "
        f"{amdahl:.2f}x; the pass over the dump alone: {runs[1]['seconds'] - serial:.2f} s vs "
        f"{runs[2]['seconds'] - runs[2]['assemble_seconds']:.2f} s = "
        f"{(runs[1]['seconds'] - serial) / (runs[2]['seconds'] - runs[2]['assemble_seconds']):.2f}x; "
        f"CPU seconds of the 2-process run over one: {two_cpu / one_cpu - 1:+.0%} (hand-over copies, helper start-up)")
    plain_rates = {}
    if args.plain:
        for workers, run in paired_runs(plain, args.repeats).items():
            plain_rates[workers] = mb / run["seconds"]
            say(f"reader .json (byte ranges), {workers} worker{'s' if workers > 1 else ''}: {run['seconds']:.1f} s = "
                f"{plain_rates[workers]:.0f} MB/s; CPU s main {run['main_cpu']:.1f} + workers {run['workers_cpu']:.1f}; "
                f"peak RSS {run['peak_rss_mb']:.0f} MB")
        say(f"2 workers / 1 worker on .json (wall): {plain_rates[2] / plain_rates[1]:.2f}x")
    full_mb = FULL_DUMP_GZ_BYTES * meta["bytes"] / meta["gz_bytes"] / 1e6  # the full dump's JSON, at this gzip ratio
    if args.bz2:
        bench_bz2(plain, mb, full_mb, runs[1]["humans"], args.repeats)
    if args.full:
        run = measure("full", gz)
        say(f"reference full parse (json.loads, two passes): {run['seconds']:.1f} s = {mb / run['seconds']:.0f} MB/s; "
            f"peak RSS {run['peak_rss_mb']:.0f} MB")

    # Projection: the full dump, uncompressed at this file's gzip ratio, on PROJECTION_CORES cores,
    # from CPU seconds (what a quiet core would take). The main process inflates the one gzip
    # stream, hands blocks over (charged with all the extra CPU the 2-process run took over one:
    # pessimistic) and assembles; the parsing (the rest of one process's CPU) spreads over the others.
    decompress_rate = mb / decompress["main_cpu"]
    assemble_cpu = runs[1]["assemble_cpu"]
    parse_rate = mb / max(one_cpu - decompress["main_cpu"] - assemble_cpu, 1e-9)
    feeder_rate = mb / (decompress["main_cpu"] + max(two_cpu - one_cpu, 0.0) + assemble_cpu)
    rate = min(feeder_rate, (PROJECTION_CORES - 1) * parse_rate)
    say(f"projection, full dump ({FULL_DUMP_GZ_BYTES / 2**30:.0f} GiB .json.gz, ~{full_mb / 1e6:.1f} TB JSON at this "
        f"file's ratio, ~{FULL_DUMP_ENTITIES / 1e6:.0f} M entities), {PROJECTION_CORES} cores, from CPU seconds: "
        f"inflate {decompress_rate:.0f} MB/s per core, parsing {parse_rate:.0f} MB/s per core, the feeding process "
        f"{feeder_rate:.0f} MB/s -> {rate:.0f} MB/s = ~{full_mb / rate / 60:.0f} min "
        f"({'bound by the single gzip stream' if rate == feeder_rate else 'bound by the parsers'}); "
        f"decompression alone, one gzip stream (the limit for .json.gz): ~{full_mb / decompress_rate / 60:.0f} min; "
        f"the same JSON uncompressed, in byte ranges (parsers' bound): ~{full_mb / (PROJECTION_CORES * parse_rate) / 60:.0f} min")
    one_share = mb / runs[1]["seconds"] / zcat
    peak = max(run["peak_rss_mb"] for run in runs.values())
    say(f"targets (issue 18): 1 process >= 50% of decompression alone (zcat): {one_share:.0%} "
        f"{'met' if one_share >= 0.5 else 'MISSED'}; 2 processes >= 1.7x one: {speedup:.2f}x "
        f"{'met' if speedup >= 1.7 else 'MISSED'}; peak RSS <= 1 GB: {peak:.0f} MB {'met' if peak <= 1000 else 'MISSED'}")
    if load > 1.0:
        say(f"load average {load:.2f} at start: other jobs shared the cores; wall-clock ratios are pessimistic")


if __name__ == "__main__":
    main()
