"""Person inquiries (GDPR Art. 15), read from the stored memorization results.

The platform stores every DataFrame asset as Parquet where the Dagster IO manager puts it
(`resources/io.py`): ``<storage>/parquet/<asset>.parquet`` for the shared tables and
``<storage>/parquet/<asset>/<name@revision>.parquet`` per model release, with ``<storage>`` =
``$DAGSTER_HOME/storage``. An inquiry reads those files only: it never loads a model, so it
answers in seconds and states exactly what was measured (and for which models nothing was).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from wikimem_platform.crm import metrics as crm
from wikimem_platform.labels import find_subjects, fold, query_qid
from wikimem_platform.reports.page_policy import csp_meta
from wikimem_platform.storage import StoredResults, json_scalar
from wikimem_platform.subject_requests.answer_files import stored_answers
from wikimem_platform.wikimem.memorization import memorized
from wikimem_platform.security.urls import redact_url
from wikimem_platform.vocabulary import AT_THRESHOLD, DEFAULT_CRITERION, DEFAULT_CUE_TAU, LENIENT, STRICT


def fact_cues(canaries: pd.DataFrame | None, subject_qids: Iterable[str] | None = None) -> pd.DataFrame:
    """Per (subject_qid, property): the CRM cue of its canaries (empty frame without canaries)."""

    if canaries is None or not len(canaries):
        return pd.DataFrame(columns=["subject_qid", "property", "cue"])
    if subject_qids is not None:
        canaries = canaries[canaries["subject_qid"].isin(list(subject_qids))]
    if not len(canaries):
        return pd.DataFrame(columns=["subject_qid", "property", "cue"])
    return crm.fact_cues(canaries)[["subject_qid", "property", "cue"]]


# --------------------------------------------------------------------------- inquiry

@dataclass
class ModelRef:
    """What an inquiry needs to know about a registered release (no registry import needed)."""

    key: str
    source: str = ""
    variant: str = ""
    family: str | None = None

    @classmethod
    def of(cls, entry) -> ModelRef:
        return cls(entry.key, getattr(entry, "source", ""), getattr(entry, "variant", ""), getattr(entry, "family", None))


def person_inquiry(
    query: str,
    stored: StoredResults,
    models: Sequence[ModelRef],
    criterion: str = DEFAULT_CRITERION,
    cue_tau: float = DEFAULT_CUE_TAU,
) -> dict:
    """What every registered model associates with the person: one answer for an Art. 15 request.

    For each model with stored results: every audited (subject, property) of the person with its
    ground-truth values, M, z*, the memorized flag under `criterion` and the cue flag. Models
    without stored results, and people known to the data but never audited, are said so.
    """
    subjects = stored.table("subjects")
    humans = stored.table("humans")
    matched = find_subjects(query, subjects) if subjects is not None else pd.DataFrame(columns=["qid", "label"])
    known_not_audited = []
    if humans is not None:
        in_data = find_subjects(query, humans)
        known_not_audited = [
            {"qid": q, "label": label} for q, label in zip(in_data["qid"], in_data["label"]) if q not in set(matched["qid"])
        ]
    qids = list(matched["qid"])
    candidates = stored.table("candidates")
    truths = (
        candidates[candidates["is_true"] & candidates["subject_qid"].isin(qids)]
        if candidates is not None else pd.DataFrame(columns=["subject_qid", "property", "value", "value_label"])
    )
    values = {
        key: [{"value": v, "value_label": lbl} for v, lbl in zip(block["value"], block["value_label"])]
        for key, block in truths.groupby(["subject_qid", "property"], sort=True)
    }
    properties = stored.table("property_table")
    property_labels = dict(zip(properties["property"], properties["label"])) if properties is not None else {}
    cues = fact_cues(stored.table("canaries"), qids).set_index(["subject_qid", "property"])["cue"].to_dict() if qids else {}

    answers = []
    for model in models:
        pairs = stored.memorization(model.key)
        entry = {"model": model.key, "source": redact_url(model.source), "variant": model.variant, "family": model.family}
        if pairs is None:
            answers.append({**entry, "audited": False, "facts": []})
            continue
        mine = pairs[pairs["subject_qid"].isin(qids)].sort_values(["subject_qid", "property"])
        flags = memorized(mine, criterion) if len(mine) else pd.Series(dtype=bool)
        facts = []
        for row, flag in zip(mine.to_dict("records"), flags):
            key = (row["subject_qid"], row["property"])
            cue = cues.get(key)
            facts.append({
                "subject_qid": row["subject_qid"],
                "property": row["property"],
                "property_label": property_labels.get(row["property"], row["property"]),
                "values": values.get(key, []),
                "M": json_scalar(row["M"]),
                "z_star": json_scalar(row.get("z_star")),
                "memorized": bool(flag),
                STRICT: bool(row[STRICT]),
                LENIENT: bool(row[LENIENT]),
                AT_THRESHOLD: bool(row[AT_THRESHOLD]),
                "cue": json_scalar(cue),
                "cue_flag": None if cue is None or json_scalar(cue) is None else bool(cue >= cue_tau),
            })
        answers.append({**entry, "audited": True, "n_facts": len(facts), "n_memorized": sum(f["memorized"] for f in facts), "facts": facts})

    requested = request_answers(query, stored.storage_dir)
    requested_qids = {a["subject"]["qid"] for a in requested}
    return {
        "query": query,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "criterion": criterion,
        "cue_tau": cue_tau,
        "subjects": [
            {"qid": r["qid"], "label": r["label"], "cohort": r.get("cohort")} for r in matched.to_dict("records")
        ],
        "known_but_not_audited": [p for p in known_not_audited if p["qid"] not in requested_qids],
        "models": answers,
        "request_answers": requested,
    }


def request_answers(query: str, storage_dir: str | Path) -> list[dict]:
    """The stored answers of data-subject requests about the person the query names (newest
    first): their subject's QID, name or one of its aliases."""
    qid = query_qid(query)
    wanted = fold(query)
    found = []
    for answer in stored_answers(storage_dir):
        subject = answer["subject"]
        names = [subject["label"], *subject.get("aliases", [])]
        if (qid and subject.get("qid") == qid) or any(fold(n) == wanted for n in names):
            found.append(answer)
    return found


def inquiry_html(answer: dict) -> str:
    """The inquiry as a standalone HTML page (no script: prints and archives as is)."""
    esc = html.escape
    people = ", ".join(f"{esc(str(s['label']))} ({esc(s['qid'])})" for s in answer["subjects"]) or "nobody among the audited subjects"
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>" + csp_meta() + "<title>Person inquiry</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px}th{background:#eee}</style></head><body>",
        f"<h1>Person inquiry: {esc(answer['query'])}</h1>",
        f"<p>Matched: {people}. Generated {esc(answer['generated_at'])}; memorized = "
        f"<code>{esc(answer['criterion'])}</code>; cue flag = CRM cue &ge; {answer['cue_tau']}.</p>",
    ]
    if answer["known_but_not_audited"]:
        names = ", ".join(f"{esc(str(p['label']))} ({esc(p['qid'])})" for p in answer["known_but_not_audited"])
        parts.append(f"<p>In the data but not among the audited subjects (no model was tested on them): {names}.</p>")
    for requested in answer.get("request_answers", []):
        req = requested["request"]
        parts.append(f"<p>Data-subject request {esc(req['id'])} ({esc(req['kind'])}) about "
                     f"{esc(requested['subject']['label'])}, answered {esc(requested['generated_at'][:10])}: "
                     f"{esc(requested['headline'])}. Its letter: <code>requests/{esc(req['id'])}/answer.html</code> "
                     "in the instance's storage.</p>")
    for model in answer["models"]:
        parts.append(f"<h2>{esc(model['model'])} <small>({esc(str(model['variant']))})</small></h2>")
        if not model["audited"]:
            parts.append("<p>Not audited yet: no stored memorization results for this release.</p>")
            continue
        if not model["facts"]:
            parts.append("<p>Audited; this person was not among its audited subjects.</p>")
            continue
        rows = []
        for f in model["facts"]:
            values = "; ".join(esc(str(v["value_label"])) for v in f["values"])
            z = "" if f["z_star"] is None else f"{f['z_star']:.2f}"
            cue = "" if f["cue"] is None else f"{f['cue']:.2f}" + (" (cued)" if f["cue_flag"] else "")
            rows.append(
                f"<tr><td>{esc(f['subject_qid'])}</td><td>{esc(str(f['property_label']))} ({esc(f['property'])})</td>"
                f"<td>{values}</td><td>{f['M']:.2f}</td><td>{z}</td><td>{'yes' if f['memorized'] else 'no'}</td><td>{cue}</td></tr>"
            )
        parts.append(
            "<table><tr><th>subject</th><th>property</th><th>true values</th><th>M</th><th>z*</th>"
            f"<th>memorized</th><th>cue</th></tr>{''.join(rows)}</table>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)
