"""Member / non-member text sets for membership inference, with what they actually test.

Every set is a frame with `text`, `label` (True = member), `set_kind` and `set_description`,
plus optional `name`, `value`, `qid`, `property` (used for PII-aware neighbours):

(a) `planted_membership`: a planted model directory (`wikimem_platform.planted`) knows its
    training data. Non-members: the non-members' held-out biographies (people never trained
    on). Members, by default (`members_from="training"`): the members' training documents
    (corpus.jsonl, the text the model was trained on: training membership proper); with
    `members_from="held_out"` the members' fresh held-out biographies (same people and facts,
    new wording: membership of the *person*, not of the text).
(b) `jsonl_membership`: a user-supplied JSONL of {"text": ..., "label": ...}.
(c) `association_membership` (the default when no training data is known): true-fact canaries
    vs the same canaries filled with a counterfactual value. This is an ASSOCIATION test (does
    the model link the person to the true value?), not training membership; `set_kind`
    "association" and its description say so in every output.

Any set can be cut to CRM's MIA windows (`value_windows`, their §4.4 / App. C.2): each text
becomes a window of the model's tokens centred on its personal value; the description says so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform.canaries.text import render
from wikimem_platform.mia.blind import bag_of_words_scores
from wikimem_platform.mia.evaluation import evaluate_available
from wikimem_platform.mia.model_pass import run_attacks
from wikimem_platform.mia.neighbours import pii_neighbours, word_neighbours
from wikimem_platform.planted.training import CORPUS_NAME, HELD_OUT_NAME, load_manifest, MANIFEST_NAME
from wikimem_platform.vocabulary import BASELINE

ASSOCIATION = "association"
ASSOCIATION_DESCRIPTION = "association (not training membership)"
PLANTED_TRAINING = "planted-training"
PLANTED_HELD_OUT = "planted-held-out"
USER_JSONL = "user-jsonl"
DESCRIPTIONS = {
    ASSOCIATION: ASSOCIATION_DESCRIPTION,
    PLANTED_TRAINING: "training membership: members' training documents vs non-members' held-out biographies",
    PLANTED_HELD_OUT: "person membership: members' vs non-members' held-out biographies (fresh wording)",
    USER_JSONL: "user-supplied member / non-member texts",
}
SET_COLUMNS = ["text", "label", "set_kind", "set_description"]


def _finish(frame: pd.DataFrame, kind: str, max_per_class: int | None, seed: int,
            description: str | None = None) -> pd.DataFrame:
    """Dedupe texts (a text both member and non-member is ambiguous: dropped), cap each class
    with a seeded sample, add the kind and its description (the kind's own unless given)."""
    frame = frame[frame["text"].astype(str).str.strip() != ""]
    conflicted = frame.groupby("text")["label"].nunique()
    frame = frame[~frame["text"].isin(conflicted[conflicted > 1].index)].drop_duplicates("text")
    if max_per_class:
        shuffled = frame.sample(frac=1.0, random_state=seed)
        frame = frame.loc[sorted(shuffled.groupby("label", sort=True).head(max_per_class).index)]
    frame = frame.assign(set_kind=kind, set_description=description or DESCRIPTIONS[kind],
                         label=frame["label"].astype(bool))
    rest = [c for c in frame.columns if c not in SET_COLUMNS]
    return frame[SET_COLUMNS + rest].reset_index(drop=True)


def _read_jsonl(path: str | os.PathLike) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def is_planted_model(model_dir: str | os.PathLike | None) -> bool:
    """Whether a directory holds a planted model with its membership files."""
    if not model_dir:
        return False
    path = Path(model_dir)
    return all((path / name).is_file() for name in (MANIFEST_NAME, CORPUS_NAME, HELD_OUT_NAME))


def planted_membership(model_dir: str | os.PathLike, members_from: str = "training",
                       max_per_class: int | None = None, seed: int = 0, values: bool = False) -> pd.DataFrame:
    """Members' training documents (default) or held-out biographies vs non-members' held-out
    biographies of a planted model; `name` is the person's label (for PII neighbours).

    With `values`, each text's `value` is the value label of its person's first planted fact
    (manifest order) that the text states (case-sensitive), None where it states none: the
    personal value a value window centres on. Off by default: a value also turns on the value
    swaps of the PII neighbours, which would change the default set's numbers."""
    path = Path(model_dir)
    manifest = load_manifest(path)
    people = {p["qid"]: p for p in manifest["people"]}
    files = manifest.get("files", {})
    held_out = _read_jsonl(path / files.get("held_out_biographies", HELD_OUT_NAME))
    non_members = [r for r in held_out if not people[r["qid"]]["member"]]
    if members_from == "training":
        members, kind = _read_jsonl(path / files.get("corpus", CORPUS_NAME)), PLANTED_TRAINING
    elif members_from == "held_out":
        members, kind = [r for r in held_out if people[r["qid"]]["member"]], PLANTED_HELD_OUT
    else:
        raise ValueError(f"members_from must be 'training' or 'held_out', got {members_from!r}")
    rows = [dict(text=r["text"], label=label, qid=r["qid"], name=people[r["qid"]]["label"],
                 value=_stated_value(r["text"], people[r["qid"]]["facts"]) if values else None)
            for records, label in ((members, True), (non_members, False)) for r in records]
    return _finish(pd.DataFrame(rows), kind, max_per_class, seed)


def _stated_value(text: str, facts: list[dict]) -> str | None:
    """The value label of the first fact (in the given order) that `text` states, else None."""
    return next((fact["value_label"] for fact in facts if fact["value_label"] in text), None)


VERBATIM_COLUMNS = ["text", "value", "member"]


def planted_verbatim_texts(model_dir: str | os.PathLike) -> pd.DataFrame:
    """CRM's verbatim setting on a planted model: one row per (document, fact of its person whose
    value it states): members' training documents (member True) and non-members' held-out
    biographies (member False), with the value the text before it should lead to."""
    path = Path(model_dir)
    manifest = load_manifest(path)
    people = {p["qid"]: p for p in manifest["people"]}
    files = manifest.get("files", {})
    training = _read_jsonl(path / files.get("corpus", CORPUS_NAME))
    held_out = [r for r in _read_jsonl(path / files.get("held_out_biographies", HELD_OUT_NAME))
                if not people[r["qid"]]["member"]]
    rows = [dict(text=r["text"], value=fact["value_label"], member=member)
            for records, member in ((training, True), (held_out, False)) for r in records
            for fact in people[r["qid"]]["facts"] if fact["value_label"] in r["text"]]
    return pd.DataFrame(rows, columns=VERBATIM_COLUMNS)


def verbatim_texts_from_jsonl(path: str | os.PathLike) -> pd.DataFrame:
    """User-supplied texts for CRM's verbatim setting: JSONL with `text` and `value` (the personal
    value the text states), optionally `label` (member / non-member; default member)."""
    rows = []
    for number, record in enumerate(_read_jsonl(path), start=1):
        if not _text_or_none(record.get("text")) or not _text_or_none(record.get("value")):
            raise ValueError(f"{path}, line {number}: needs non-empty 'text' and 'value' fields")
        rows.append(dict(text=record["text"], value=record["value"], member=_as_label(record.get("label", True))))
    return pd.DataFrame(rows, columns=VERBATIM_COLUMNS)


def _as_label(value) -> bool:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("1", "true", "member", "yes"):
            return True
        if lowered in ("0", "false", "non-member", "nonmember", "no"):
            return False
        raise ValueError(f"unknown label {value!r}")
    if value in (0, 1, True, False):
        return bool(value)
    raise ValueError(f"unknown label {value!r}")


def _text_or_none(value) -> str | None:
    return value if isinstance(value, str) and value else None


def jsonl_membership(path: str | os.PathLike, max_per_class: int | None = None, seed: int = 0,
                     ) -> pd.DataFrame:
    """A JSONL of {"text", "label"} (label 1/0, true/false or "member"/"non-member"); optional
    "name" and "value" keys are kept for PII-aware neighbours."""
    records = _read_jsonl(path)
    for number, record in enumerate(records, start=1):
        if "text" not in record or "label" not in record:
            raise ValueError(f"{path}: line {number} lacks 'text' or 'label'")
    frame = pd.DataFrame(records)
    frame["label"] = [_as_label(v) for v in frame["label"]]
    for column in ("name", "value"):
        values = frame[column] if column in frame else [None] * len(frame)
        frame[column] = pd.Series([_text_or_none(v) for v in values], index=frame.index, dtype=object)
    return _finish(frame, USER_JSONL, max_per_class, seed)


def association_membership(canaries: pd.DataFrame, candidates: pd.DataFrame,
                           kinds: tuple[str, ...] = (BASELINE,), max_per_class: int | None = None,
                           seed: int = 0) -> pd.DataFrame:
    """True-fact canaries (label True) vs the same canaries with a counterfactual value (False).

    Per canary variant of `kinds`: the first ground-truth label as member text and one
    counterfactual value of the pair (seeded draw among the candidates that are not true) as
    non-member text, so both classes share templates and subjects and differ only in the value.
    NOT training membership: see the module docstring.
    """
    rng = np.random.default_rng(seed)
    false = candidates[~candidates["is_true"].astype(bool)]
    pool = {key: list(dict.fromkeys(g["value_label"].astype(str))) for key, g in
            false.groupby(["subject_qid", "property"], sort=False)}
    use = canaries[canaries["kind"].isin(kinds)].sort_values(["subject_qid", "property", "variant_id"])
    if max_per_class and len(use) > max_per_class:  # cap by canary: both texts of a canary stay
        use = use.iloc[np.sort(rng.choice(len(use), size=max_per_class, replace=False))]
    rows = []
    for record in use.to_dict("records"):
        key = (record["subject_qid"], record["property"])
        truths = list(record["ground_truth_labels"])
        counterfactuals = pool.get(key, [])
        if not truths or not counterfactuals:
            continue
        fake = counterfactuals[int(rng.integers(len(counterfactuals)))]
        common = dict(qid=record["subject_qid"], property=record["property"],
                      variant_id=record["variant_id"], name=record["subject"],
                      counterfactual_values=counterfactuals)
        rows.append(dict(text=render(record["template"], record["subject"], truths[0]), label=True,
                         value=truths[0], **common))
        rows.append(dict(text=render(record["template"], record["subject"], fake), label=False,
                         value=fake, **common))
    frame = pd.DataFrame(rows, columns=["text", "label", "value", "qid", "property", "variant_id", "name",
                                        "counterfactual_values"])
    return _finish(frame, ASSOCIATION, max_per_class, seed)


WINDOW_FIELD = "value_windows"
CRM_WINDOW_TOKENS = (50, 150)  # CRM App. C.2: windows of 50 to 150 tokens around the PII
# Why a row gives no window: it has no value, its text does not contain the value, the value
# alone spans more than max_tokens, or the whole text has fewer than min_tokens.
NO_VALUE, VALUE_ABSENT, VALUE_TOO_LONG, TOO_SHORT = "no_value", "value_absent", "value_too_long", "too_short"
DROP_REASONS = (NO_VALUE, VALUE_ABSENT, VALUE_TOO_LONG, TOO_SHORT)


def window_bounds(value, field: str = WINDOW_FIELD) -> tuple[int, int] | None:
    """A value-window option as (min_tokens, max_tokens), None when off (None or empty); a
    ValueError naming `field` unless it is two whole numbers with 0 < min <= max."""
    if value is None or (not isinstance(value, str) and len(value) == 0):
        return None
    bounds = tuple(value) if not isinstance(value, str) else (value,)
    if (len(bounds) != 2 or not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in bounds)
            or not 0 < bounds[0] <= bounds[1]):
        raise ValueError(f"{field} must be [min_tokens, max_tokens] with whole numbers 0 < min_tokens <= "
                         f"max_tokens (e.g. {list(CRM_WINDOW_TOKENS)}), or empty for whole texts; got {value!r}")
    return int(bounds[0]), int(bounds[1])


def value_windows(frame: pd.DataFrame, tokenizer, min_tokens: int = CRM_WINDOW_TOKENS[0],
                  max_tokens: int = CRM_WINDOW_TOKENS[1]) -> tuple[pd.DataFrame, dict[str, int]]:
    """CRM's MIA windows (App. C.2): each row's `text` cut to a contiguous window of the
    tokenizer's tokens around its `value` (first occurrence, case-sensitive).

    The window holds every token overlapping the value and grows symmetrically around it up to
    `max_tokens` (as much context as allowed; an odd spare token goes right); where one side of
    the text runs out, the other side gives the rest. The window is the original characters
    from its first token's start to its last token's end (not detokenized), edge whitespace
    stripped. Rows giving no window of `min_tokens`..`max_tokens` tokens are dropped, counted by
    reason (DROP_REASONS). Returns (kept rows with `window_tokens`, the count of tokens the
    window has in the text's own tokenization; counts {"formed", "cut", "dropped_<reason>"}),
    "cut" counting the windows shorter than their text. A fast tokenizer is needed (its offsets).
    """
    window_bounds((min_tokens, max_tokens), "(min_tokens, max_tokens)")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{WINDOW_FIELD} needs a fast tokenizer (character offsets); got {type(tokenizer).__name__}")
    texts = frame["text"].astype(str).tolist()
    values = [_text_or_none(v) for v in frame.get("value", pd.Series(None, index=frame.index, dtype=object))]
    offsets = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"] if texts else []
    counts = dict.fromkeys(("formed", "cut", *(f"dropped_{reason}" for reason in DROP_REASONS)), 0)
    kept, windows, sizes = [], [], []
    for row, (text, value, spans) in enumerate(zip(texts, values, offsets)):
        start = text.find(value) if value else -1
        spans = np.asarray(spans, dtype=int).reshape(-1, 2)
        inside = np.flatnonzero((spans[:, 0] < start + len(value or "")) & (spans[:, 1] > start)) if start >= 0 else []
        if value is None:
            reason = NO_VALUE
        elif start < 0 or not len(inside):
            reason = VALUE_ABSENT
        elif inside[-1] + 1 - inside[0] > max_tokens:
            reason = VALUE_TOO_LONG
        elif len(spans) < min_tokens:
            reason = TOO_SHORT
        else:
            reason = None
        if reason:
            counts[f"dropped_{reason}"] += 1
            continue
        first, end = int(inside[0]), int(inside[-1]) + 1
        spare = max_tokens - (end - first)
        left = min(first, spare // 2)
        right = min(len(spans) - end, spare - left)
        left = min(first, spare - right)                 # borrow what the right side lacked
        first, end = first - left, end + right
        kept.append(row)
        windows.append(text[spans[first, 0]:spans[end - 1, 1]].strip())
        sizes.append(end - first)
        counts["formed"] += 1
        counts["cut"] += int(end - first < len(spans))
    out = frame.iloc[kept].copy()
    out["text"] = windows
    out["window_tokens"] = pd.Series(sizes, index=out.index, dtype=int)
    return out, counts


_cut_value_windows = value_windows  # membership_set's option of the same name shadows it


def window_description(description: str, min_tokens: int, max_tokens: int) -> str:
    return f"{description}; texts cut to {min_tokens}-{max_tokens}-token windows centred on the personal value"


SET_KINDS = ("auto", "planted", "jsonl", "association")


def membership_set(kind: str, model_source: str, *, jsonl_path: str = "", planted_members_from: str = "training",
                   canaries: pd.DataFrame | None = None, candidates: pd.DataFrame | None = None,
                   audited_pairs: pd.DataFrame | None = None, association_kinds: tuple[str, ...] = (BASELINE,),
                   max_per_class: int | None = None, seed: int = 0,
                   value_windows: tuple[int, int] | list[int] | None = None, tokenizer=None) -> pd.DataFrame:
    """The member / non-member texts for one model: ``kind`` "auto" picks the planted sets for a
    planted model directory, else the user's JSONL if given, else the association sets built
    from the canaries of the audited (subject_qid, property) pairs.

    ``value_windows`` (min_tokens, max_tokens), e.g. CRM's (50, 150), cuts every text to its
    value window in `tokenizer`'s tokens (see `value_windows`) before the per-class cap; the
    planted texts then carry their values. The counts of windows and of rows dropped by reason
    are in ``frame.attrs["value_windows"]``.
    """
    if kind not in SET_KINDS:
        raise ValueError(f"set_kind must be one of {', '.join(SET_KINDS)}, got {kind!r}")
    bounds = window_bounds(value_windows)
    if bounds and tokenizer is None:
        raise ValueError(f"{WINDOW_FIELD} needs the model's tokenizer")
    cap = None if bounds else max_per_class
    if kind == "auto":
        kind = "planted" if is_planted_model(model_source) else "jsonl" if jsonl_path else "association"
    if kind == "planted":
        frame = planted_membership(model_source, planted_members_from, cap, seed, values=bool(bounds))
    elif kind == "jsonl":
        frame = jsonl_membership(jsonl_path, cap, seed)
    else:
        if canaries is None or candidates is None:
            raise ValueError("association sets need the canaries and candidates")
        if audited_pairs is not None:
            canaries = canaries.merge(audited_pairs[["subject_qid", "property"]].drop_duplicates(),
                                      on=["subject_qid", "property"], how="inner")
        frame = association_membership(canaries, candidates, tuple(association_kinds), cap, seed)
    if not bounds:
        return frame
    windows, counts = _cut_value_windows(frame, tokenizer, *bounds)
    members = int(windows["label"].sum())
    if not members or members == len(windows):
        dropped = ", ".join(f"{reason} {counts[f'dropped_{reason}']}" for reason in DROP_REASONS
                            if counts[f"dropped_{reason}"])
        raise ValueError(f"{WINDOW_FIELD} {list(bounds)} left {members} members and {len(windows) - members} "
                         f"non-members of {len(frame)} texts (dropped: {dropped or 'none'}); lower min_tokens "
                         "or use longer texts that state their value")
    set_kind = frame["set_kind"].iloc[0]
    finished = _finish(windows.drop(columns=["set_kind", "set_description"]), set_kind, max_per_class, seed,
                       window_description(DESCRIPTIONS[set_kind], *bounds))
    finished.attrs[WINDOW_FIELD] = counts
    return finished


def pii_neighbour_texts(frame: pd.DataFrame, n: int = 5, seed: int = 0) -> list[list[str]]:
    """PII-aware neighbours (CRM App. C.1) per row: the row's `name` swapped for other names of
    the set, its `value` for other values (its `counterfactual_values` if present, else the
    set's other values); [] where neither occurs in the text."""

    names = [x for x in dict.fromkeys(map(_text_or_none, frame.get("name", []))) if x]
    values = [x for x in dict.fromkeys(map(_text_or_none, frame.get("value", []))) if x]
    out = []
    for i, record in enumerate(frame.to_dict("records")):
        name, value = _text_or_none(record.get("name")), _text_or_none(record.get("value"))
        own_values = record.get("counterfactual_values")
        value_pool = list(own_values) if own_values is not None and len(own_values) else values
        value_pool = [v for v in value_pool if v != value] or values
        name_pool = [x for x in names if x != name]
        if name and not name_pool:
            name = None
        if value and not [v for v in value_pool if v != value]:
            value = None
        try:
            out.append(pii_neighbours(record["text"], name, value, name_pool, value_pool, n=n, seed=seed + i))
        except ValueError:
            out.append([])
    return out


def reference_corpus_texts(humans: pd.DataFrame, limit: int | None = 20000) -> list[str]:
    """DC-PDD's reference corpus from the people table (e.g. the bundled sample's humans):
    "label, description." per person; a text source independent of the canaries scored."""
    descriptions = humans.get("description", pd.Series(None, index=humans.index))
    texts = [f"{label}, {desc}." if isinstance(desc, str) and desc else str(label)
             for label, desc in zip(humans["label"], descriptions)]
    return texts[:limit] if limit else texts


def recall_shots(labels, shots: int, seed: int = 0) -> tuple[list[int], list[int]]:
    """Which texts make ReCaLL's non-member prefix and Con-ReCall's member prefix: `shots` of
    each class, seeded; none of a class that would keep fewer than 2 texts to evaluate."""
    labels = np.asarray(labels).astype(bool)
    rng = np.random.default_rng([seed, 17])
    picked = []
    for is_member in (False, True):
        indices = np.flatnonzero(labels == is_member)
        enough = shots > 0 and len(indices) >= shots + 2
        picked.append(sorted(int(i) for i in rng.choice(indices, size=shots, replace=False)) if enough else [])
    return picked[0], picked[1]


def run_mia(lm, membership: pd.DataFrame, *, reference_lm=None, k: float = 0.2,
            n_neighbours: int = 5, reference_corpus: list[str] | None = None,
            n_bootstrap: int = 1000, seed: int = 0, prefix_shots: int = 3, gradient_norm: bool = True,
            samia_samples: int = 5, progress=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every attack on a membership set: (per-text scores, one row per attack).

    One token-probability pass of `lm` over the texts, their lowercased forms and their
    neighbours (word perturbations, and PII-aware swaps where the set has names or values); the
    reference attack when `reference_lm` is given, DC-PDD when `reference_corpus` is; ReCaLL and
    Con-ReCall with prefixes of `prefix_shots` non-member and member texts of the set (scored
    NaN themselves, so no text is judged with itself in the prefix); the gradient norm; SaMIA
    (`samia_samples` sampled continuations of each text's first half); and the
    model-free bag-of-words baseline (`bag_of_words`: high means the split itself is shifted).
    The attack table carries the set's `set_kind` and `set_description` (e.g. "association (not
    training membership)").
    """

    texts = membership["text"].tolist()
    labels = membership["label"].to_numpy(dtype=bool)
    neighbours = word_neighbours(texts, n=n_neighbours, seed=seed) if n_neighbours else None
    has_pii = n_neighbours and (membership.get("name", pd.Series(dtype=object)).notna().any()
                                or membership.get("value", pd.Series(dtype=object)).notna().any())
    pii = pii_neighbour_texts(membership, n=n_neighbours, seed=seed) if has_pii else None
    nonmember_shots, member_shots = recall_shots(labels, prefix_shots, seed)
    scores = run_attacks(
        lm, texts, k=k, reference_lm=reference_lm, neighbours=neighbours, pii_neighbours_=pii,
        reference_corpus=reference_corpus, progress=progress, gradient_norm=gradient_norm,
        samia_samples=samia_samples, seed=seed,
        nonmember_shots=[texts[i] for i in nonmember_shots], member_shots=[texts[i] for i in member_shots],
    )
    for column in ("recall", "con_recall"):
        if column in scores:
            scores.loc[nonmember_shots + member_shots, column] = np.nan
    scores["bag_of_words"] = bag_of_words_scores(texts, labels, seed=seed)
    scores.insert(0, "label", labels)
    table = evaluate_available(scores.drop(columns=["label"]), scores["label"], n_bootstrap, seed)
    kind = membership["set_kind"].iloc[0] if len(membership) else ""
    table["set_kind"] = kind
    table["set_description"] = membership["set_description"].iloc[0] if len(membership) else ""
    return scores, table
