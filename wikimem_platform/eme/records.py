"""Entity-level memorization prompts (Zhou et al. 2024, Definition 1): a record of a person cut
down to the entities that identify it, asking for one more.

- A *fact table* (`FACT_COLUMNS`) holds one row per (person, property): the person's name, the
  property label, the true value labels and their aliases. `facts_from_claims` builds it from the
  extract (claims with value labels), `facts_from_people` from a planted world's manifest.
- `record_prompt`: the attribute-annotated record of the paper (EME compresses a document into
  entity attribute annotations): "name: Ada Lovelace; occupation: mathematician; country of
  citizenship:". The identifying entities N are the name and the first n - 1 other properties
  of the person in a fixed property order; the expected entity E is the target property's value.
- A prompt whose normalized text already contains E or one of its aliases (word boundaries, as
  the CRM hit) is excluded and counted: the model would only have to copy it. Every kept
  prompt carries its CRM cue (`crm.example_cue`), so partial overlaps can still be discounted.
- `sentence_prompt`: the hand-written textual baseline the paper compares against ("The
  occupation of Ada Lovelace is mathematician. The country of citizenship of Ada Lovelace is").
- `split_people` / `fabricate`: who soft prompts may be trained on (never an evaluated person),
  and the paper's fabricated records (Table 1): each target value moved to another training
  person of whom it is not true, so no (person, value) pair of a fabricated record is real.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wikimem_platform.crm.metrics import example_cue
from wikimem_platform.lm.generation import substring_hit
from wikimem_platform.planted.generator import property_labels
from wikimem_platform.planted.training import load_manifest
from wikimem_platform.splits import seeded_draw

FACT_COLUMNS = ["subject_qid", "name", "property", "property_label", "value_labels", "aliases"]
EXAMPLE_COLUMNS = ["subject_qid", "property", "prompt", "joiner", "targets", "cue", "n_identifiers"]
# Default number of identifying entities, the name included (the paper's n; the name and two
# other attributes identify a person in the bundled sample and in the planted world).
DEFAULT_N_IDENTIFIERS = 3
FIELD_SEPARATOR = "; "
# A trained record answer ends its field as the record format does: "... country: Peru;".
FIELD_END = ";"
TEXT_PROMPTS = ("record", "sentence")  # hand-written prompts (no soft prompt), record first


def _labels(value) -> list[str]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if isinstance(v, str) and v]


def facts_from_claims(claims: pd.DataFrame, humans: pd.DataFrame, property_labels: Mapping[str, str],
                      value_aliases: Mapping[str, Sequence[str]] | None = None,
                      properties: Sequence[str] | None = None) -> pd.DataFrame:
    """The fact table of real people: claims (qid, property, value, value_label) whose value has
    a label, names from `humans` (qid, label), property labels from the property table."""
    value_aliases = value_aliases or {}
    use = claims.dropna(subset=["value_label"])
    use = use[use["property"].isin(list(properties if properties is not None else property_labels))]
    names = humans.dropna(subset=["label"]).set_index("qid")["label"]
    use = use[use["qid"].isin(names.index)]
    rows = []
    for (qid, prop), block in use.groupby(["qid", "property"], sort=True):
        values = list(dict.fromkeys(block["value"]))
        rows.append(dict(subject_qid=qid, name=names[qid], property=prop,
                         property_label=property_labels.get(prop, prop),
                         value_labels=list(dict.fromkeys(block["value_label"])),
                         aliases=list(dict.fromkeys(a for v in values for a in value_aliases.get(v, ())))))
    return pd.DataFrame(rows, columns=FACT_COLUMNS)


def facts_from_people(people: Iterable[Mapping], property_labels: Mapping[str, str]) -> pd.DataFrame:
    """The fact table of planted people (manifest records: qid, label, facts[property, value_label])."""
    rows = [dict(subject_qid=p["qid"], name=p["label"], property=f["property"],
                 property_label=property_labels.get(f["property"], f["property"]),
                 value_labels=[f["value_label"]], aliases=[])
            for p in people for f in p["facts"]]
    return pd.DataFrame(rows, columns=FACT_COLUMNS)


def planted_inputs(model_dir) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(fact table, cohorts) of a planted model's people: cohorts has subject_qid, member and
    repetitions; the non-members are the people no soft prompt may be trained on."""

    people = load_manifest(model_dir)["people"]
    cohorts = pd.DataFrame([{"subject_qid": p["qid"], "member": bool(p["member"]),
                             "repetitions": int(p["repetitions"])} for p in people])
    return facts_from_people(people, property_labels()), cohorts


def properties_by_usage(facts: pd.DataFrame) -> list[str]:
    """The fact table's properties, most people first (ties by id): the identifiers' order."""
    counts = facts.groupby("property")["subject_qid"].nunique()
    return sorted(counts.index, key=lambda p: (-counts[p], p))


def record_prompt(name: str, identifiers: Sequence[tuple[str, str]], target_label: str) -> str:
    """"name: {name}; {label}: {value}; ...; {target_label}:" (the answer follows after a space)."""
    fields = [f"name: {name}", *(f"{label}: {value}" for label, value in identifiers), f"{target_label}:"]
    return FIELD_SEPARATOR.join(fields)


def sentence_prompt(name: str, identifiers: Sequence[tuple[str, str]], target_label: str) -> str:
    """The hand-written baseline: one plain sentence per identifier, then the open question."""
    known = [f"The {label} of {name} is {value}." for label, value in identifiers]
    return " ".join([*known, f"The {target_label} of {name} is"])


PROMPT_BUILDERS = {"record": record_prompt, "sentence": sentence_prompt}


def entity_examples(facts: pd.DataFrame, n_identifiers: int = DEFAULT_N_IDENTIFIERS,
                    property_order: Sequence[str] | None = None, style: str = "record",
                    ) -> tuple[pd.DataFrame, int]:
    """One prompt per (person, target property) and how many were excluded for showing E.

    Identifiers: the name and the first n_identifiers - 1 of the person's *other* properties in
    `property_order` (default: the properties by how many people have them, most first), each
    with its first value label. Targets: every true value label and alias of the target.
    """
    if n_identifiers < 1:
        raise ValueError(f"n_identifiers must be >= 1 (the name), got {n_identifiers}")
    if style not in PROMPT_BUILDERS:
        raise ValueError(f"unknown prompt style {style!r}; choose from {sorted(PROMPT_BUILDERS)}")
    build = PROMPT_BUILDERS[style]
    if property_order is None:
        property_order = properties_by_usage(facts)
    rank = {p: i for i, p in enumerate(property_order)}
    rows, excluded = [], 0
    for qid, person in facts.groupby("subject_qid", sort=True):
        person = person.assign(_rank=person["property"].map(rank).fillna(len(rank))).sort_values("_rank")
        records = person.to_dict("records")
        for target in records:
            others = [r for r in records if r["property"] != target["property"] and _labels(r["value_labels"])]
            identifiers = [(r["property_label"], _labels(r["value_labels"])[0]) for r in others[:n_identifiers - 1]]
            targets = list(dict.fromkeys([*_labels(target["value_labels"]), *_labels(target["aliases"])]))
            if not targets:
                continue
            prompt = build(target["name"], identifiers, target["property_label"])
            if substring_hit(prompt, targets):
                excluded += 1
                continue
            rows.append(dict(subject_qid=qid, property=target["property"], prompt=prompt, joiner=" ",
                             targets=targets, cue=example_cue(prompt, targets),
                             n_identifiers=1 + len(identifiers)))
    return pd.DataFrame(rows, columns=EXAMPLE_COLUMNS), excluded


# --------------------------------------------------------------------------- who trains, who is evaluated

def split_people(qids: Iterable[str], train_share: float = 0.5, seed: int = 0,
                 never_train: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(training people, evaluated people): a seeded split by person. `never_train` people (e.g.
    the subjects of a request, or a planted world's non-members) are always evaluated."""
    if not 0.0 <= train_share < 1.0:
        raise ValueError(f"train_share must be in [0, 1), got {train_share}")
    blocked = set(never_train)
    qids = sorted(set(qids))
    train = [q for q in qids if q not in blocked and seeded_draw(q, seed) < train_share]
    chosen = set(train)
    return train, [q for q in qids if q not in chosen]


def fabricate(facts: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Fabricated records (Zhou et al., Table 1): per property, the values of the people in
    `facts` are reassigned among them so that nobody keeps a value that is true of them.

    People whose value cannot be moved (every other holder shares it) are dropped for that
    property. Returns a fact table of the same people with shuffled value labels (no aliases).
    """
    rng = np.random.default_rng(seed)
    true_labels = {(q, p): set(_labels(v)) for q, p, v in facts[["subject_qid", "property", "value_labels"]].itertuples(index=False)}
    out = []
    for prop, block in facts.groupby("property", sort=True):
        block = block.reset_index(drop=True)
        values = [_labels(v)[0] for v in block["value_labels"]]
        order = rng.permutation(len(block))
        pool = [values[i] for i in order]
        assigned: list[str | None] = [None] * len(block)
        # Greedy derangement: each person takes the first pooled value not true of them.
        for i, qid in enumerate(block["subject_qid"]):
            for j, candidate in enumerate(pool):
                if candidate not in true_labels[(qid, prop)]:
                    assigned[i] = pool.pop(j)
                    break
        for i, value in enumerate(assigned):
            if value is not None:
                row = block.iloc[i].to_dict()
                out.append({**row, "value_labels": [value], "aliases": []})
    return pd.DataFrame(out, columns=FACT_COLUMNS)
