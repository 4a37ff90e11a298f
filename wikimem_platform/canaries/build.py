"""The templates table (once per property) and the canary table (one row per subject, property,
variant) — everything scoring needs, no scoring.

Variants per (subject, property): 0 = baseline, 1..10 = paraphrases (exactly 11), then 11 =
the contextualized baseline when the subject has auxiliary facts to tell. WikiMem §4 lists the
contextualized canary as a third type next to baseline and paraphrases, built on the baseline
("... Their number of children is v." instead of "50 Cent's number of children is v."), so it is
an extra row, not one of the 11.

Contextualized templates keep ``{subject}`` (once, in the first context sentence) and ``{value}``
(once, in the last), with the auxiliary values already written in: h, h0 and every S(h) are then
substituted the same way, and the shared-prefix scoring still applies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from wikimem_platform.canaries.encoders import load_encoder, load_nlp
from wikimem_platform.canaries.meaning import filter_pools, MeaningFilterResult, MIN_MEANING_SIMILARITY
from wikimem_platform.canaries.names import similar_names
from wikimem_platform.canaries.paraphrases import distinct_pool, ParaphraseGenerator, rank_pools, RuleBasedParaphraser
from wikimem_platform.canaries.templates import baseline_form, PropertyInfo
from wikimem_platform.canaries.text import (
    classify_shape,
    generic_subject,
    mentions,
    normalize_label,
    pronoun_form,
    render,
)
from wikimem_platform.vocabulary import BASELINE, CONTEXTUALIZED, N_PARAPHRASES, PARAPHRASE

TEMPLATE_COLUMNS = ["property", "variant_id", "kind", "template", "shape", "context_form", "similarity"]
# Pool candidates the meaning filter removed, with the rule and a readable why (canaries.meaning).
DROPPED_COLUMNS = ["property", "template", "rule", "detail", "similarity"]
CANARY_COLUMNS = [
    "subject_qid",
    "subject",
    "subject_aliases",
    "property",
    "property_label",
    "datatype",
    "variant_id",
    "kind",
    "shape",
    "template",
    "subject_generic",
    "subject_similar",
    "ground_truth",
    "ground_truth_labels",
    "context_properties",
    "context_values",
]
# Names restate the subject (and would leak the real name into S(h) sentences); sex or gender
# hardly narrows down who is meant.
DEFAULT_CONTEXT_EXCLUDE = frozenset(
    {"P735", "P734", "P1477", "P1449", "P742", "P1559", "P2561", "P1813", "P1782", "P1950", "P21"}
)


def _property_infos(property_table: pd.DataFrame) -> list[PropertyInfo]:
    return [PropertyInfo.from_record(row) for row in property_table.to_dict("records")]


def build_template_tables(
    property_table: pd.DataFrame,
    *,
    generator: ParaphraseGenerator | None = None,
    nlp=None,
    encode=None,
    n_paraphrases: int = N_PARAPHRASES,
    mmr_lambda: float = 0.6,
    min_relevance: float = 0.6,
    filter_meaning: bool = True,
    min_meaning_similarity: float = MIN_MEANING_SIMILARITY,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(templates, dropped): ``build_templates``' table and the candidates the meaning filter
    removed from the pools (DROPPED_COLUMNS: property, template, rule, detail, similarity).

    The filter runs on the whole pool before ranking, so a dropped wording is replaced by the
    next best candidate that states the same relation and every property keeps
    ``n_paraphrases`` paraphrases (M stays a share of 11 wordings); a property whose filtered
    pool holds fewer raises, like a property whose pool was too small to begin with.
    ``filter_meaning=False`` ranks the unfiltered pool (the wordings before the filter existed).
    """

    nlp = nlp if nlp is not None else load_nlp()
    encode = encode if encode is not None else load_encoder()
    generator = generator if generator is not None else RuleBasedParaphraser(nlp)
    props = _property_infos(property_table)
    bases = [baseline_form(prop, nlp) for prop in props]
    pools = [distinct_pool(b.baseline, generator.candidates(b.baseline, p)) for p, b in zip(props, bases)]
    if filter_meaning:
        filtered = filter_pools(
            [(b.baseline, p, pool) for p, b, pool in zip(props, bases, pools)], nlp, encode,
            min_similarity=min_meaning_similarity,
        )
    else:
        filtered = [MeaningFilterResult(b.baseline, list(pool), []) for b, pool in zip(bases, pools)]
    items = [(b.baseline, f.kept, p.datatype) for p, b, f in zip(props, bases, filtered)]
    ranked = rank_pools(items, encode, nlp, k=n_paraphrases, mmr_lambda=mmr_lambda, min_relevance=min_relevance)
    rows, dropped = [], []
    for prop, base, pool, kept, result in zip(props, bases, pools, filtered, ranked):
        dropped += [(prop.property, d.template, d.rule, d.detail, d.similarity) for d in kept.dropped]
        if len(result.kept) < n_paraphrases:
            reasons = pd.Series([d.rule for d in kept.dropped], dtype=object).value_counts().to_dict()
            raise ValueError(
                f"{prop.property} ({prop.label!r}): only {len(pool)} distinct paraphrase candidates, "
                f"{len(kept.kept)} of them stating the same relation (dropped by rule: {reasons})"
            )
        rows.append((prop.property, 0, BASELINE, base.baseline, base.shape, base.context_form, 1.0))
        for variant_id, index in enumerate(result.kept, start=1):
            template = result.pool[index]
            rows.append(
                (prop.property, variant_id, PARAPHRASE, template, classify_shape(template), None,
                 float(result.relevance[index]))
            )
    return pd.DataFrame(rows, columns=TEMPLATE_COLUMNS), pd.DataFrame(dropped, columns=DROPPED_COLUMNS)


def build_templates(property_table: pd.DataFrame, **options) -> pd.DataFrame:
    """One baseline and ``n_paraphrases`` paraphrases per property (computed once, not per subject).

    Columns: property, variant_id (0 baseline, 1.. paraphrases in ranking order), kind
    ("baseline" | "paraphrase"), template, shape (baseline: possessive/copular/transitive/fallback;
    paraphrases: their sentence shape), context_form (the baseline with "Their"/"They" for the
    subject, used in context chains; baseline rows only), similarity (MiniLM cosine to the baseline).
    Paraphrases are ranked from the candidates that pass the meaning filter (canaries.meaning).
    ``options`` as for ``build_template_tables`` (generator, nlp, encode, n_paraphrases, ...);
    ``nlp``/``encode`` default to the offline spaCy and MiniLM models. Raises if a property has
    fewer than ``n_paraphrases`` candidates that state its relation.
    """
    return build_template_tables(property_table, **options)[0]


def _stable_pick(options: Sequence[str], *key: object) -> int:
    """A seeded choice that does not depend on row order or Python's hash randomisation."""
    digest = hashlib.sha256("|".join(map(str, key)).encode()).hexdigest()
    return int(digest, 16) % len(options)


def _as_list(value) -> list[str]:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return []
    return [str(v) for v in value]


def _name_words(names: Iterable[str]) -> set[str]:
    return {w for name in names for w in normalize_label(name).split() if len(w) >= 3}


def _leaks(label: str, truth_labels: Sequence[str], name_words: set[str]) -> bool:
    """A context fact that states a target value (either way round) or the subject's name."""
    if any(mentions(label, t) or mentions(t, label) for t in truth_labels):
        return True
    return bool(set(normalize_label(label).split()) & name_words)


def _text(value) -> str | None:
    """A template cell, or None for missing (None/NaN after a Parquet round trip)."""
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class _Fact:
    value: str
    label: str
    labelled: bool  # False when the label is the bare value id (no English label)


def _context_chain(
    facts: dict[str, list[_Fact]],
    target: str,
    order: list[str],
    templates: pd.DataFrame,
    n_context: int,
    seed: int,
    qid: str,
    name_words: set[str],
    exclude: set[str],
) -> tuple[str, list[str], list[str]] | None:
    """(template, properties, values) of the contextualized canary for one target, or None.

    The first fact names the subject ("{subject}'s country of citizenship is Germany."), the
    rest and the target use the baseline's "Their/They" form, as in the paper's example.
    """
    truth = facts[target]
    truth_ids, truth_labels = {f.value for f in truth}, [f.label for f in truth]
    sentences, properties, values = [], [], []
    for aux in order:
        if len(sentences) >= n_context:
            break
        if aux == target or aux in exclude or aux not in templates.index:
            continue
        options = [
            f for f in facts[aux]
            if f.labelled and f.value not in truth_ids and not _leaks(f.label, truth_labels, name_words)
        ]
        if not options:
            continue
        pick = options[_stable_pick([f.value for f in options], seed, qid, aux)]
        template = templates.at[aux, "template"]
        if sentences:
            template = _text(templates.at[aux, "context_form"]) or pronoun_form(template) or template
        sentences.append(render(template, None, pick.label))
        properties.append(aux)
        values.append(pick.value)
    if not sentences:
        return None
    baseline = templates.at[target, "template"]
    closing = _text(templates.at[target, "context_form"]) or pronoun_form(baseline) or baseline
    return " ".join([*sentences, closing]), properties, values


def build_canaries(
    subjects: pd.DataFrame,
    claims: pd.DataFrame,
    property_table: pd.DataFrame,
    templates: pd.DataFrame | None = None,
    n_context: int = 4,
    seed: int = 0,
    n_similar: int = 2,
    context_exclude: Iterable[str] = DEFAULT_CONTEXT_EXCLUDE,
) -> pd.DataFrame:
    """One row per (subject, property, variant) for every subject fact whose property is in the table.

    ``subjects``: qid, label[, aliases]; ``claims``: qid, property, datatype, value, value_label;
    ``property_table``: property, label, ..., n_humans; ``templates``: build_templates' output
    (built here from the property table when None). Per (subject, property): variants 0..10 from
    the templates, plus variant 11 (kind "contextualized") with up to ``n_context`` true facts
    about the subject prepended: other properties, most used (n_humans) first, one value each
    chosen with ``seed`` (the same value whatever the target, unless it would leak). A context
    fact never is a target value, never mentions one (or is mentioned by one) and never contains
    a word of the subject's name (S(h) sentences would carry the real name). Subjects without
    another usable fact get no contextualized row.
    Columns: CANARY_COLUMNS. ``subject_generic`` is h0 for the row's template, ``subject_similar``
    S(h); ``ground_truth``/``ground_truth_labels`` list every true value (ids, English labels).
    """
    table = property_table.copy()
    if "n_humans" not in table:
        table["n_humans"] = 0
    table = table.sort_values(["n_humans", "property"], ascending=[False, True], kind="stable")
    prop_order = {p: i for i, p in enumerate(table["property"])}
    prop_labels = dict(zip(table["property"], table["label"]))
    prop_types = dict(zip(table["property"], table["datatype"]))
    if templates is None:
        used = set(claims.loc[claims["qid"].isin(subjects["qid"]), "property"])
        templates = build_templates(table[table["property"].isin(used)])
    templates = templates.sort_values(["property", "variant_id"], kind="stable")
    variants = {
        p: list(g[["variant_id", "kind", "shape", "template"]].itertuples(index=False, name=None))
        for p, g in templates.groupby("property", sort=False)
    }
    baselines = templates[templates["kind"] == BASELINE].set_index("property")
    if "context_form" not in baselines:
        baselines["context_form"] = None
    next_variant = int(templates["variant_id"].max()) + 1 if len(templates) else 1
    exclude = set(context_exclude)

    rows_of = claims[claims["qid"].isin(subjects["qid"]) & claims["property"].isin(variants)]
    rows_of = rows_of.dropna(subset=["value"]).drop_duplicates(["qid", "property", "value"])
    facts: dict[str, dict[str, list[_Fact]]] = {}
    datatypes: dict[tuple[str, str], str] = {}
    for qid, prop, datatype, value, label in rows_of[["qid", "property", "datatype", "value", "value_label"]].itertuples(
        index=False, name=None
    ):
        labelled = isinstance(label, str) and bool(label)
        facts.setdefault(qid, {}).setdefault(prop, []).append(_Fact(str(value), label if labelled else str(value), labelled))
        datatypes.setdefault((qid, prop), datatype)

    rows = []
    for subject in subjects.to_dict("records"):
        qid, name = subject["qid"], subject.get("label")
        if not isinstance(name, str) or not name or qid not in facts:
            continue
        own = {prop: sorted(values, key=lambda f: f.value) for prop, values in facts[qid].items()}
        aliases = _as_list(subject.get("aliases"))
        similar = similar_names(name, n=n_similar, avoid=aliases)
        name_words = _name_words([name])
        order = sorted(own, key=lambda p: (prop_order.get(p, len(prop_order)), p))
        for prop in order:
            truth = facts[qid][prop]  # claims order: the first listed value first
            common = {
                "subject_qid": qid,
                "subject": name,
                "subject_aliases": aliases,
                "property": prop,
                "property_label": prop_labels.get(prop, prop),
                "datatype": datatypes[(qid, prop)] or prop_types.get(prop),
                "subject_similar": similar,
                "ground_truth": [f.value for f in truth],
                "ground_truth_labels": [f.label for f in truth],
            }
            for variant_id, kind, shape, template in variants[prop]:
                rows.append(
                    {**common, "variant_id": int(variant_id), "kind": kind, "shape": shape, "template": template,
                     "subject_generic": generic_subject(template), "context_properties": [], "context_values": []}
                )
            chain = (
                _context_chain(own, prop, order, baselines, n_context, seed, qid, name_words, exclude)
                if n_context > 0 else None
            )
            if chain is not None:
                template, context_properties, context_values = chain
                rows.append(
                    {**common, "variant_id": next_variant, "kind": CONTEXTUALIZED, "shape": CONTEXTUALIZED,
                     "template": template, "subject_generic": generic_subject(template),
                     "context_properties": context_properties, "context_values": context_values}
                )
    out = pd.DataFrame(rows, columns=CANARY_COLUMNS)
    return out.astype({"variant_id": "int64"})
