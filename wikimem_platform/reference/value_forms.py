"""Other forms of a true value, scored as the same truth (issue 33.5).

WikiMem scores a value by the summed NLL of its sentence, so a value's *form* takes part in its
rank: "United States of America" (5 tokens) pays for every token that "Italy" (1 token) does not,
and a model that completes "... country of citizenship is the United States" can still rank the
truth 15th of 100. Measured on invented people (scripts/value_form_bias.py,
docs/value_form_bias.json): on the raw NLL the truth's summed rank worsens with its label's token
length (Spearman +0.80); the generic-subject calibration (NLL(h0, v) - NLL(h, v)) does not make it
flat but turns it round (-0.26: long labels slightly favoured), and single words carry their own
offsets ("politician" near the bottom for anyone, "political figure" near the top). So a true
value's common short forms and aliases ("United States", "USA") enter the candidate set as extra
members of G, as equivalents do: the truth ranks first when any of its forms beats every
counterfactual.

Where the forms come from: the extract's `value_aliases` table (Wikidata's English aliases of
each value item) first, then the shipped table of common short forms
(`data/value_short_forms.json`, hand-written for the bundled sample, whose `value_aliases` holds
aliases of human values only). The rule (`select_forms`), per true value of a (subject, property):
up to `max_forms` aliases (default 1, `DEFAULT_MAX_FORMS`) in the order given; letters, spaces
and hyphens only (no "U.S.", no digits, no apostrophes), at least `MIN_CHARS` letters, no leading
article ("the US"); never a label already among the candidates (a counterfactual "Italy" stays a
counterfactual, never a form of "Kingdom of Italy"), never an alias of a counterfactual value,
never a form already taken.

A form is a candidate row with `is_true` False and a value id that names its truth
(`form_value`: "Q30#form:USA"), which `memorization.prepare_scores` puts in G. The forms depend
only on the property, the true value and the counterfactual pool, never on the person: the
invented controls (same facts, same pool) get exactly the person's forms, so a fact with more
forms gives the controls the same extra chances it gives the person, and the p-value stays fair.
Their sentences are cached like any other (h0 sentences of a form are shared by everyone). A
wording that shows a form gives the value away, as one showing its label does
(`with_form_aliases`, read by the giveaway rules).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from wikimem_platform.labels import fold
from wikimem_platform.reference import bundled

# Forms scored per true value by default (`select_forms`); 0 scores the label only. The request
# audit's `truth_forms` setting (assets/requests.py) reads this. Why 1 (docs/value_form_bias.json,
# 131 facts of invented people on SmolLM2): one form flattens the truth's rank against its label's
# token length as much as three do (Spearman -0.26 [-0.41, -0.09] before, -0.12 [-0.29, 0.04] with
# one, -0.14 [-0.30, 0.03] with three), while each more form is one more chance for an invented
# person's truth to come first (facts with forms: rank 1 in 0.6 % of wordings before, 3.2 % with
# one form, 5.3 % with three).
DEFAULT_MAX_FORMS = 1
MIN_CHARS = 3
FORM_MARK = "#form:"
SHORT_FORMS = bundled.DATA_DIR / "value_short_forms.json"
_ARTICLES = frozenset({"the", "a", "an"})
_FORM_TEXT = re.compile(r"[^\W\d_]+(?:[ -][^\W\d_]+)*")


def form_value(value: str, form: str) -> str:
    """The candidate id of a form of `value` ("Q30", "USA" -> "Q30#form:USA")."""
    return f"{value}{FORM_MARK}{form}"


def form_of(value) -> str | None:
    """The true value a form's id names, None for any other value."""
    text = str(value)
    return text.split(FORM_MARK, 1)[0] if FORM_MARK in text else None


def is_form(values) -> np.ndarray:
    """Per value: is it a form of a truth (`form_value`)?"""
    return np.array([FORM_MARK in str(v) for v in values], dtype=bool)


@functools.lru_cache(maxsize=1)
def shipped_short_forms() -> dict[str, tuple[str, ...]]:
    """The shipped table of common short forms, value id -> forms (commonest first)."""
    table = json.loads(SHORT_FORMS.read_text(encoding="utf-8"))
    return {value: tuple(forms) for value, forms in table.items() if not value.startswith("_")}


def form_sources(value_aliases: Mapping[str, Sequence[str]] | None = None, shipped: bool = True
                 ) -> dict[str, list[str]]:
    """value id -> its other names: the extract's aliases first, then the shipped short forms."""
    out = {v: list(a) for v, a in (value_aliases or {}).items()}
    if shipped:
        for value, forms in shipped_short_forms().items():
            out[value] = list(dict.fromkeys([*out.get(value, []), *forms]))
    return out


def acceptable(form: str) -> bool:
    """Letters, single spaces and hyphens only, at least MIN_CHARS letters, no leading article
    ("USA", "United States" yes; "U.S.", "US", "the US", "Lou Gehrig's disease" no: the sentence
    supplies its own article, and punctuation is how one form is written, not another form)."""
    form = str(form).strip()
    return (bool(_FORM_TEXT.fullmatch(form)) and sum(c.isalpha() for c in form) >= MIN_CHARS
            and form.split()[0].casefold() not in _ARTICLES)


def select_forms(label: str, aliases: Sequence[str], blocked: set[str] = frozenset(),
                 max_forms: int = DEFAULT_MAX_FORMS) -> list[str]:
    """Up to `max_forms` of `aliases` (in order) to score as the value labelled `label`.

    blocked: folded labels no form may equal (`labels.fold`: "Edith Piaf" is "Édith Piaf"): the
    candidates' labels and the counterfactual values' aliases. A form equal to the label or to an earlier form is skipped.
    """
    taken = set(blocked) | {fold(label)}
    out: list[str] = []
    for alias in aliases:
        if len(out) >= max_forms:
            break
        key = fold(alias)
        if not acceptable(alias) or key in taken:
            continue
        taken.add(key)
        out.append(str(alias).strip())
    return out


def with_truth_forms(candidates: pd.DataFrame, sources: Mapping[str, Sequence[str]],
                     max_forms: int = DEFAULT_MAX_FORMS) -> pd.DataFrame:
    """`candidates` (CANDIDATE_COLUMNS) with each true value's forms appended after its pair's rows.

    sources: value id -> other names (`form_sources`). Per (subject, property), nothing but that
    pair's candidates decides the forms, so two subjects with the same true values and pool
    (a person and their controls) get the same forms. Idempotent: existing form rows are kept,
    none added twice.
    """
    if max_forms <= 0 or candidates.empty or not sources:
        return candidates
    base = candidates[~is_form(candidates["value"])]
    rows = []
    for (subject, prop), block in base.groupby(["subject_qid", "property"], sort=False):
        truth = block["is_true"].to_numpy(dtype=bool)
        wrong = block.loc[~truth]
        blocked = {fold(x) for x in block["value_label"].astype(str)}
        blocked |= {fold(a) for v in wrong["value"] for a in sources.get(v, ())}
        for value, label in zip(block.loc[truth, "value"], block.loc[truth, "value_label"].astype(str)):
            forms = select_forms(label, sources.get(value, ()), blocked, max_forms)
            blocked |= {fold(f) for f in forms}
            rows += [(subject, prop, form_value(value, f), f, False) for f in forms]
    if not rows:
        return candidates
    added = pd.DataFrame(rows, columns=["subject_qid", "property", "value", "value_label", "is_true"])
    have = set(candidates["value"][is_form(candidates["value"])].astype(str) + "|" + candidates["subject_qid"].astype(str))
    added = added[[f"{v}|{s}" not in have for v, s in zip(added["value"], added["subject_qid"])]]
    out = pd.concat([candidates, added.reindex(columns=candidates.columns)], ignore_index=True)
    order = {k: i for i, k in enumerate(dict.fromkeys(zip(candidates["subject_qid"], candidates["property"])))}
    return out.assign(_pair=[order[k] for k in zip(out["subject_qid"], out["property"])]) \
        .sort_values("_pair", kind="stable").drop(columns="_pair").reset_index(drop=True)


def without_forms(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of a candidates or scores table that are not forms (the truth under its label only); a
    table without value ids (labels only) has no forms."""
    if "value" not in frame.columns:
        return frame.reset_index(drop=True)
    return frame[~is_form(frame["value"])].reset_index(drop=True)


def with_form_aliases(value_aliases: Mapping[str, Sequence[str]] | None, candidates: pd.DataFrame | None
                      ) -> dict[str, list[str]]:
    """`value_aliases` plus the forms scored in `candidates`, as aliases of their true value: a
    wording whose text shows a form ("America Smith" for "USA"'s "America") gives the value away
    as showing the label would (`crm.giveaways`)."""
    out = {v: list(a) for v, a in (value_aliases or {}).items()}
    if candidates is None or not len(candidates):
        return out
    forms = candidates[is_form(candidates["value"])]
    for value, label in zip(forms["value"], forms["value_label"]):
        truth = form_of(value)
        out[truth] = list(dict.fromkeys([*out.get(truth, []), str(label)]))
    return out
