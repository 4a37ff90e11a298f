"""What the name studies share (issue 59.4, 59.5): invented people with hand-written names, given
as facts files through the intake path a requester's takes, audited against their controls, and
the error rate and separation read from the verdicts with their intervals.

`tests/data/invented_people.json` holds the names (written by hand, not by the controls'
generator); `requests_on` answers facts files on one model with the request audit's defaults (19
controls matched to the name prior, up to 99 for a fact without margin); `summary` counts per arm."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd
import yaml

from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer import MEMORIZED, model_verdicts, WEAK
from wikimem_platform.subject_requests.audit import audit_person_on_model, person_subject, plan_person_audit
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.controlled_rates import share_ci
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore

INVENTED_PEOPLE = Path(__file__).resolve().parents[1] / "data" / "invented_people.json"
ROW_COLUMNS = ["arm", "name", "country", "property", "M", "verdict", "p_value", "p_ci_high", "p_family", "family",
               "n_controls", "name_prior", "name_prior_share_below", "name_suggests", "completion_hit", "truth_rank",
               "n_candidates", "seconds"]


def invented_people() -> list[dict]:
    return json.loads(INVENTED_PEOPLE.read_text(encoding="utf-8"))["people"]


def facts_file(folder: Path, name: str, facts: dict, languages: Iterable[str] = ("en",)) -> Path:
    """A facts file as a requester writes one (YAML, values in words)."""
    path = folder / f"{len(list(folder.glob('*.yaml'))):03d}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "facts": facts, "languages": list(languages)}, allow_unicode=True),
                    encoding="utf-8")
    return path


def requests_on(lm, documents: Iterable[tuple[str, Path]], world, tmp: Path, settings: dict, *, embed=None,
                seed: int = 0, log: Callable[[str], None] = print) -> pd.DataFrame:
    """Each (arm, facts file) answered on `lm` as the request pipeline does (`intake.load_facts_file`,
    `person_subject`, `plan_person_audit` with controls, `audit_person_on_model`, `model_verdicts`):
    one row per fact (ROW_COLUMNS). world: extract, metadata, property table, templates,
    counterfactual pool (attributes). One sentence cache for the model, as a platform keeps it."""
    store = intake.RequestStore(f"sqlite:///{tmp / 'registry.db'}")
    cache = SentenceNllCache(tmp / "nll.sqlite")
    labels = dict(zip(world.table["property"], world.table["label"]))
    rows = []
    for arm, path in documents:
        started = time.monotonic()
        person = intake.load_facts_file(path, world.metadata, list(world.table["property"]))
        request = store.add(intake.resolve_person(person), "access")
        subject, facts = person_subject(request, world.extract.humans, world.extract.claims, world.metadata)
        plan = plan_person_audit(subject, facts, property_table=world.table, templates=world.templates,
                                 counterfactuals=world.pool, claims=world.extract.claims, humans=world.extract.humans,
                                 metadata=world.metadata, n_controls=controls.DEFAULT_N_CONTROLS, seed=seed)
        audit = audit_person_on_model(lm, plan, ShardStore(tmp / "shards"), cache, settings, log=lambda m: None,
                                      embed=embed)
        verdicts, _ = model_verdicts(audit, plan, labels, embed=embed)
        seconds = time.monotonic() - started
        country = next(iter(person.facts.get("P27", [])), None)
        for fact in verdicts.to_dict("records"):
            rows.append({"arm": arm, "name": person.name, "country": country.label if country else None,
                         **{k: fact.get(k) for k in ROW_COLUMNS if k in fact}, "seconds": seconds})
        said = ", ".join(f"{f['property']} {f['verdict']}" for f in verdicts.to_dict("records"))
        log(f"{arm}: {person.name}: {said} ({seconds:.0f} s)")
    return pd.DataFrame(rows, columns=ROW_COLUMNS)


def summary(rows: pd.DataFrame) -> dict:
    """Per arm: people, facts, memorized, weakly associated, facts the name explains, the share of
    facts memorized or weakly associated with its 95 % CI (people resampled), and the wall time."""
    out = {}
    for arm, block in rows.groupby("arm", sort=False):
        per_person = [(int(b["verdict"].isin([MEMORIZED, WEAK]).sum()), len(b)) for _, b in block.groupby("name")]
        share, low, high = share_ci(per_person)
        weak = int((block["verdict"] == WEAK).sum())
        out[arm] = {"people": len(per_person), "facts": len(block), "memorized": int((block["verdict"] == MEMORIZED).sum()),
                    "weakly_associated": weak, "compared": int(block["n_controls"].notna().sum()),
                    "name_suggests": int(block["name_suggests"].fillna(False).astype(bool).sum()),
                    "share_memorized_or_weak": share, "ci95": [low, high],
                    "weak_ci95_exact": list(controls.p_interval(weak, len(block))),
                    "seconds": float(block.drop_duplicates("name")["seconds"].sum())}
    return out
