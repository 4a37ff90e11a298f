"""Diff two output snapshots (scripts/output_snapshot.sh: the demo's reports, two requests' answers)
file by file, apart from code versions, timestamps, run and request ids, durations, Dagster data
versions (which hash code versions) and the snapshot folders' own paths; JSON files that differ only
in key order are said so.

    .venv/bin/python scripts/compare_snapshots.py BEFORE AFTER [LINES]
"""
import difflib, json, re, sys
from pathlib import Path

A, B = Path(sys.argv[1]), Path(sys.argv[2])
RULES = [
    (re.compile(re.escape(str(A.resolve()))), "<SNAP>"),
    (re.compile(re.escape(str(B.resolve()))), "<SNAP>"),
    (re.compile(r"dsr-\d{8}-[0-9a-f]{6}"), "<REQUEST>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<UUID>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z| UTC)?"), "<TIME>"),
    (re.compile(r'("(?:code_version|code|version|scoring_version|commit|git_commit|source_version|[a-z_]*_version)"\s*:\s*)"[0-9a-f]{7,64}"'), r'\1"<HASH>"'),
    (re.compile(r"\b[0-9a-f]{12}\b"), "<HASH12>"),
    (re.compile(r"<td>[0-9a-f]{64}</td>"), "<td><DATA_VERSION></td>"),  # Dagster data versions hash code versions
    (re.compile(r"\b[0-9a-f]{40}\b"), "<SHA>"),
    (re.compile(r'("(?:seconds|elapsed_s|duration_s|wall_s|seconds_[a-z_]+)"\s*:\s*)[0-9.]+'), r"\1<S>"),
]

def norm(text):
    for rule, repl in RULES:
        text = rule.sub(repl, text)
    return text

def files(root):
    out = {}
    subjects = {}
    for answer in (root / "home/storage/requests").glob("*/answer.json"):
        subjects[answer.parent.name] = json.loads(answer.read_text())["request"]["subject_label"].replace(" ", "_")
    for p in sorted((root / "home/storage").rglob("*")):
        if p.is_file() and p.suffix in {".html", ".json", ".jsonl"} and "parquet" not in p.parts:
            rel = str(p.relative_to(root))
            for folder, subject in subjects.items():
                rel = rel.replace(folder, f"request-of-{subject}")
            out[norm(rel)] = p
    return out

fa, fb = files(A), files(B)
print(f"files: {len(fa)} vs {len(fb)}; only in first: {sorted(set(fa) - set(fb))}; only in second: {sorted(set(fb) - set(fa))}")
same = differ = reordered = 0
for key in sorted(set(fa) & set(fb)):
    ta, tb = norm(fa[key].read_text(errors="replace")), norm(fb[key].read_text(errors="replace"))
    if ta == tb:
        same += 1
        continue
    if key.endswith(".json") and json.loads(ta) == json.loads(tb):
        print(f"--- {key}: the same JSON, keys in another order")
        reordered += 1
        continue
    differ += 1
    raw_same = fa[key].read_bytes() == fb[key].read_bytes()
    diff = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), lineterm="", n=0))
    print(f"--- {key}: {len(diff)} diff lines")
    for line in diff[:int(sys.argv[3]) if len(sys.argv) > 3 else 12]:
        print("   ", line[:300])
print(f"identical after normalization: {same}; same JSON in another key order: {reordered}; different: {differ}")
