"""A person's facts, counterfactual values and templates in one language.

- ``language_templates(code, properties)`` -> the pack's templates as a templates table (the
  English one's columns, plus ``language``).
- ``agreed_templates(templates, gender)`` -> the same with every ``⟦masc|fem⟧`` resolved.
- ``language_labels(terms, code)`` / ``language_aliases(terms, code)`` -> value id -> the label /
  the aliases the extract keeps in that language (`wikidata.entities.entity_terms`).
- ``localize_values(frame, code, labels, gender)`` -> rows with ``value_label`` in the language:
  item values by their label there, made to agree with the person (`LanguagePack.value_form`),
  dates as the language writes them, and ``label_fallback`` where an item has no label in it.

Counterfactual values without a label in the language are left out of its candidates rather than
written in English: an English word in a German sentence is unlikely for any person, and would
make the true value look memorized against it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from wikimem_platform.canaries.languages.packs import pack as language_pack
from wikimem_platform.canaries.languages.packs import PERSON_PROPERTIES
from wikimem_platform.canaries.languages.grammar import agree, is_iso_date
from wikimem_platform.vocabulary import BASELINE, PARAPHRASE

LABEL_FALLBACK = "label_fallback"


def language_templates(code: str, properties: Sequence[str] | None = None) -> pd.DataFrame:
    """The pack's 11 wordings of each property (all of `PERSON_PROPERTIES` by default) as a
    templates table: property, variant_id (0 the baseline), kind, template, shape ("question" or
    "declarative"), context_form (baseline rows), similarity (None: hand-written, not ranked by an
    encoder), language. Markup (agreement, markers) is kept: `agreed_templates` resolves the first."""
    language = language_pack(code)
    if language is None:
        raise ValueError(f"language {code!r}: English templates are built from the property table (build_templates)")
    rows = []
    for prop in properties if properties is not None else PERSON_PROPERTIES:
        for variant_id, template in enumerate(language.templates.get(prop, ())):
            rows.append({"property": prop, "variant_id": variant_id, "kind": BASELINE if variant_id == 0 else PARAPHRASE,
                         "template": template, "shape": "question" if "?" in template else "declarative",
                         "context_form": language.context_forms.get(prop) if variant_id == 0 else None,
                         "similarity": None, "language": code})
    columns = ["property", "variant_id", "kind", "template", "shape", "context_form", "similarity", "language"]
    return pd.DataFrame(rows, columns=columns).astype({"variant_id": "int64"})


def agreed_templates(templates: pd.DataFrame, gender: str | None) -> pd.DataFrame:
    """Templates whose ``⟦masc|fem⟧`` agree with a person of `gender` (None: the first form)."""
    out = templates.copy()
    out["template"] = out["template"].map(lambda t: agree(t, gender))
    out["context_form"] = out["context_form"].map(lambda t: agree(t, gender) if isinstance(t, str) else t)
    return out


def language_labels(terms: pd.DataFrame, code: str) -> dict[str, str]:
    """Entity id -> its label in `code` (entities without one are absent)."""
    rows = terms[(terms["language"] == code) & terms["label"].notna()]
    return dict(zip(rows["qid"], rows["label"].astype(str)))


def language_aliases(terms: pd.DataFrame, code: str) -> dict[str, list[str]]:
    """Entity id -> its aliases in `code` (the other forms a true value is scored under)."""
    rows = terms[terms["language"] == code]
    return {qid: [str(a) for a in aliases] for qid, aliases in zip(rows["qid"], rows["aliases"])
            if aliases is not None and len(aliases)}


def localize_values(frame: pd.DataFrame, code: str, labels: dict[str, str], gender: str | None,
                    *, keep_unlabelled: bool = True) -> pd.DataFrame:
    """`frame` (rows with property, value, value_label) with value_label in language `code`.

    An item value takes its label there, in the form that agrees with the person
    (`value_form`: "Schauspielerin", "actrice"); a date is written as the language writes it;
    strings and quantities stay. An item with no label in the language keeps its English label
    with ``label_fallback`` True when `keep_unlabelled`, else its row is dropped."""
    language = language_pack(code)
    if language is None:
        return frame.assign(**{LABEL_FALLBACK: False})
    out, keep = frame.copy(), []
    localized, fallback = [], []
    for prop, value, label in zip(out["property"], out["value"], out["value_label"]):
        value = str(value)
        if value in labels:
            localized.append(language.value_form(prop, labels[value], gender))
            fallback.append(False)
            keep.append(True)
        elif is_iso_date(value):
            localized.append(language.format_date(value, str(label)))
            fallback.append(False)
            keep.append(True)
        elif value[:1] == "Q" and value[1:].isdigit():
            localized.append(label)
            fallback.append(True)
            keep.append(keep_unlabelled)
        else:  # a string or a quantity: written as given
            localized.append(label)
            fallback.append(False)
            keep.append(True)
    out["value_label"] = localized
    out[LABEL_FALLBACK] = fallback
    return out[keep].reset_index(drop=True)
