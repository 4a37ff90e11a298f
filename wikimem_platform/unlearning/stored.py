"""Export sets from what the platform stored: a release's audit, or a data-subject request's answer."""

from __future__ import annotations

import pandas as pd

from wikimem_platform.subject_requests import inquiry as inq
from wikimem_platform.storage import StoredResults
from wikimem_platform.subject_requests.answer import verify_revisions
from wikimem_platform.subject_requests.answer_files import read_answer
from wikimem_platform.unlearning.export import export_sets, ExportSets, FACT_COLUMNS, known_facts
from wikimem_platform.unlearning.forget_sets import FORGET_COLUMNS, best_true_values, forget_set, has_controls
from wikimem_platform.unlearning.verify import RETAIN_CRITERION, unlearning_manifest
from wikimem_platform.canaries.languages import ENGLISH
from wikimem_platform.vocabulary import LANGUAGE, SCORED_KINDS



def _property_labels(stored: StoredResults) -> dict[str, str]:
    table = stored.table("property_table")
    return dict(zip(table["property"], table["label"])) if table is not None else {}


def release_forget_set(stored: StoredResults, key: str, criterion: str, alpha: float = 1.0,
                       beyond_controls: bool = False) -> pd.DataFrame:
    """The forget set of a release (`forget_sets.forget_set` rows) from its stored scores and
    memorization, with the controls' verdict of each fact where the release's
    `controlled_memorization` is stored (null columns where it is not). beyond_controls: only
    the facts that beat the controls (FileNotFoundError when none were computed for the release);
    by default every fact stays in (`forget_set`: erasure errs on the side of inclusion)."""
    pairs, scores = stored.memorization(key), stored.partition("scores", key)
    if pairs is None or scores is None:
        raise FileNotFoundError(f"no stored scores/memorization for {key}: audit it first")
    controlled = stored.partition("controlled_memorization", key)
    if beyond_controls and (controlled is None or not len(controlled)):
        raise FileNotFoundError(f"no stored controlled_memorization for {key}: materialize it (with n_controls > 0) "
                                "before narrowing the forget set to the facts beyond the controls")
    cues = inq.fact_cues(stored.table("canaries"), pairs["subject_qid"].unique())
    return forget_set(key, pairs, best_true_values(scores, alpha), cues, _property_labels(stored), criterion,
                      controls=controlled, beyond_controls=beyond_controls)


def release_known_facts(stored: StoredResults, key: str, alpha: float = 1.0) -> pd.DataFrame:
    """What a release memorized at threshold in its cohort audit (empty if it was never audited)."""
    pairs, scores = stored.memorization(key), stored.partition("scores", key)
    if pairs is None or scores is None:
        return pd.DataFrame(columns=FACT_COLUMNS)
    return known_facts(pairs, best_true_values(scores, alpha), _property_labels(stored), RETAIN_CRITERION)


def _templates(stored: StoredResults) -> pd.DataFrame:
    templates = stored.table("canary_templates")
    if templates is None:
        raise FileNotFoundError("no stored canary templates: materialize the canaries group first")
    return templates


def release_export(stored: StoredResults, key: str, criterion: str, alpha: float = 1.0,
                   beyond_controls: bool = False) -> ExportSets:
    forget = release_forget_set(stored, key, criterion, alpha, beyond_controls)
    source = {"model": key, "criterion": criterion, **({"beyond_controls": True} if beyond_controls else {})}
    return export_sets(forget, release_known_facts(stored, key, alpha), _templates(stored), stored.partition("scores", key),
                       source=source)


def request_export(stored: StoredResults, request_ids: str | list[str], model_key: str | None = None,
                   beyond_controls: bool = False) -> ExportSets:
    """The forget set of one or several answered erasure requests (one release, or every release
    they name), with the release's memorized cohort facts as retain candidates. beyond_controls:
    only the entries that beat the invented-person controls (ValueError when the answers carry
    no controls' verdict: answered without controls, or before forget sets carried it)."""
    ids = [request_ids] if isinstance(request_ids, str) else list(request_ids)
    frames, scores, criteria, wordings = [], [], set(), []
    for request_id in ids:
        answer = read_answer(stored.storage_dir, request_id)
        if answer is None:
            raise FileNotFoundError(f"no stored answer for {request_id}: the request is not answered yet")
        if answer.get("forget_set") is None:
            raise ValueError(f"{request_id} is an {answer['request']['kind']} request: only erasure requests have a forget set")
        found_in = [LANGUAGE] if any(LANGUAGE in entry for entry in answer["forget_set"]) else []
        frames.append(pd.DataFrame(answer["forget_set"], columns=[*FORGET_COLUMNS, *found_in]))
        criteria.add(answer["forget_criterion"])
        request_scores = stored.partition("request_scores", request_id)
        if request_scores is not None and len(request_scores):
            scores.append(request_scores)
        wordings.append(_wordings_in_other_languages(stored.partition("request_canaries", request_id)))
    entries = pd.concat(frames, ignore_index=True)
    if LANGUAGE in entries:
        entries[LANGUAGE] = entries[LANGUAGE].fillna(ENGLISH)
    models = sorted(set(entries["model"])) if model_key is None else [model_key]
    same_fact = ["subject_qid", "property", "value_label", *([LANGUAGE] if LANGUAGE in entries else [])]
    forget = entries[entries["model"].isin(models)].drop_duplicates(same_fact)
    if beyond_controls:
        if not has_controls(forget):
            raise ValueError(f"{', '.join(ids)}: no entry of the forget set was compared with invented people, so none "
                             "can be shown to beat them (answer the request with controls first)")
        forget = forget[forget["beats_controls"].map(lambda b: not pd.isna(b) and bool(b)).astype(bool)]
    known = pd.concat([release_known_facts(stored, key) for key in models], ignore_index=True) if models else None
    all_scores = pd.concat(scores, ignore_index=True) if scores else None
    if all_scores is not None and models:
        all_scores = all_scores[all_scores["model"] == models[0]]
    return export_sets(forget, known if known is not None else pd.DataFrame(columns=FACT_COLUMNS), _templates(stored),
                       all_scores, source={"requests": ids, "models": models, "criterion": "/".join(sorted(criteria)),
                                           **({"beyond_controls": True} if beyond_controls else {})},
                       person_templates=pd.concat(wordings, ignore_index=True))


_WORDING_COLUMNS = ["subject_qid", LANGUAGE, "property", "variant_id", "kind", "template"]


def _wordings_in_other_languages(canaries: pd.DataFrame | None) -> pd.DataFrame:
    """The wordings a request asked its person in other languages than English (agreeing with
    them), one row per (language, property, variant): what their facts are exported with."""
    if canaries is None or LANGUAGE not in canaries:
        return pd.DataFrame(columns=_WORDING_COLUMNS)
    rows = canaries[(canaries[LANGUAGE].fillna(ENGLISH) != ENGLISH) & canaries["kind"].isin(SCORED_KINDS)]
    return rows[_WORDING_COLUMNS].drop_duplicates(["subject_qid", LANGUAGE, "property", "variant_id"]).reset_index(drop=True)


def request_verification(stored: StoredResults, request_id: str, release_key: str,
                         sources: dict[str, str] | None = None) -> dict:
    """The erasure verification of an answered request on `release_key` against the revision of the
    same model audited before it, from the stored answer, request scores and cohort audits.

    sources: release key -> model directory (for an unlearned revision's retain set)."""

    answer = read_answer(stored.storage_dir, request_id)
    if answer is None:
        raise FileNotFoundError(f"no stored answer for {request_id}: the request is not answered yet")
    name = release_key.partition("@")[0]
    revisions = [m for m in answer["models"] if m["audited"] and m["model"].partition("@")[0] == name]
    keys = [m["model"] for m in revisions]
    if release_key not in keys:
        raise FileNotFoundError(f"{release_key} has not audited {request_id} yet: the request sensor audits it once the "
                                "release's own audit has finished (or materialize the request's partition in the UI)")
    at = keys.index(release_key)
    if at == 0:
        raise ValueError(f"{release_key} is the first audited revision of {name} for {request_id}: nothing to compare with")
    before, after = revisions[at - 1], revisions[at]
    scores = stored.partition("request_scores", request_id)
    by_model = {k: scores[scores["model"] == k] for k in (before["model"], after["model"])} if scores is not None else {}
    pairs = {k: p for k in (before["model"], after["model"]) if (p := stored.memorization(k)) is not None}
    manifest = unlearning_manifest((sources or {}).get(release_key))
    retain = {release_key: manifest["retain_facts"]} if manifest else {}
    [check] = verify_revisions([before, after], answer["subject"]["key"], by_model, pairs, retain)
    return check
