"""Ground-truth validation: the audit's memorization flags and membership scores vs the manifest.

On a planted model the truth is known: a member's fact was read ``repetitions`` times per
epoch, a non-member's never. Definitions used here (stated, because they decide the numbers):

- *planted* fact = a (subject, property) of a member (repetitions >= 1); *negative* = a
  non-member's (repetitions == 0).
- recall at repetition r = share of the scored planted facts of members with r repetitions
  that the flag marks; ``recall_min_repetitions`` pools r >= the given count (default 4).
- false-positive rate = share of the scored non-members' facts that the flag marks.
- precision = flagged planted facts / all flagged facts (members of every repetition count
  and non-members among the scored subjects).
- membership (loss attack): each person's held-out biography (a fresh text in the training
  shapes, see `planted.held_out_biographies`; `membership.planted_membership(members_from=
  "held_out")`) scored by mean token NLL; members vs non-members, higher score = member
  (score = -loss), AUROC with a bootstrap CI from `mia.evaluate_attack`. (The MIA summary runs
  every attack on the members' training documents instead.)
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from wikimem_platform import mia
from wikimem_platform.mia.membership import is_planted_model
from wikimem_platform.planted.training import load_manifest
from wikimem_platform.vocabulary import CRITERIA

FLAG_COLUMNS = CRITERIA


def ground_truth(source: str | os.PathLike | None) -> dict | None:
    """The planted manifest of a registered model's source, or None for a model without known
    ground truth: a source that is not a planted-model directory (with its manifest, training
    corpus and held-out biographies), e.g. a Hub id, a GGUF file or any other model directory.
    The one place that decides whether a model is a planted one."""
    return load_manifest(source) if is_planted_model(source) else None


def manifest_people(manifest: dict) -> pd.DataFrame:
    """One row per planted person: subject_qid, member, repetitions (manifest order)."""
    return pd.DataFrame([{"subject_qid": p["qid"], "member": bool(p["member"]), "repetitions": int(p["repetitions"])}
                         for p in manifest["people"]], columns=["subject_qid", "member", "repetitions"])


def manifest_facts(manifest: dict) -> pd.DataFrame:
    """One row per planted (person, property): subject_qid, property, value, member, repetitions."""
    rows = [
        {
            "subject_qid": person["qid"],
            "property": fact["property"],
            "true_value": fact["value"],
            "member": bool(person["member"]),
            "repetitions": int(person["repetitions"]),
        }
        for person in manifest["people"]
        for fact in person["facts"]
    ]
    return pd.DataFrame(rows)


def audits_planted_people(pairs: pd.DataFrame, manifest: dict) -> bool:
    """Whether any audited subject is a planted person (none: the model was audited on real
    subjects, and there is no ground truth to compare with)."""
    return bool(pairs["subject_qid"].isin({person["qid"] for person in manifest["people"]}).any())


def join_ground_truth(pairs: pd.DataFrame, manifest: dict) -> pd.DataFrame:
    """The memorization pairs with member / repetitions from the manifest (inner join: only
    planted people count; a subject not in the manifest would mean a wrong data source)."""
    facts = manifest_facts(manifest)
    joined = pairs.merge(facts, on=["subject_qid", "property"], how="left", validate="one_to_one")
    missing = joined["member"].isna()
    if missing.any():
        examples = joined.loc[missing, ["subject_qid", "property"]].head(3).to_dict("records")
        raise ValueError(
            f"{int(missing.sum())} scored (subject, property) pairs are not planted facts, e.g. {examples}: "
            "score the planted model on the planted data source (its manifest's dump)"
        )
    return joined.astype({"member": bool, "repetitions": int})


def flag_rates(joined: pd.DataFrame, flag: str, recall_min_repetitions: int = 4) -> dict:
    """Precision, recall (pooled over repetitions >= ``recall_min_repetitions``) and FPR of one flag."""
    flagged = joined[flag].astype(bool)
    members, non_members = joined["member"], ~joined["member"]
    strong = members & (joined["repetitions"] >= recall_min_repetitions)
    n_flagged = int(flagged.sum())
    return {
        "flag": flag,
        "precision": float((flagged & members).sum() / n_flagged) if n_flagged else float("nan"),
        f"recall_r{recall_min_repetitions}plus": float(flagged[strong].mean()) if strong.any() else float("nan"),
        "false_positive_rate": float(flagged[non_members].mean()) if non_members.any() else float("nan"),
        "flagged": n_flagged,
        "planted_facts_scored": int(members.sum()),
        f"planted_facts_r{recall_min_repetitions}plus_scored": int(strong.sum()),
        "non_member_facts_scored": int(non_members.sum()),
    }


def threshold_sweep(joined: pd.DataFrame, recall_min_repetitions: int = 4) -> pd.DataFrame:
    """Precision, recall and FPR of the flag M >= x for every x that changes it (the observed M
    values): how the choice of threshold trades recall for false positives on this model."""
    rows = []
    for x in sorted(joined["M"].dropna().unique()):
        if x <= 0:
            continue  # M >= 0 flags everything
        rates = flag_rates(joined.assign(flag=joined["M"] >= x - 1e-12), "flag", recall_min_repetitions)
        rows.append({"M_at_least": float(x), **{k: v for k, v in rates.items() if k != "flag"}})
    return pd.DataFrame(rows)


def by_repetitions(joined: pd.DataFrame, flags: tuple[str, ...] = FLAG_COLUMNS) -> pd.DataFrame:
    """Per repetition count (0 = non-members): facts scored and the share each flag marks, mean M."""
    present = [f for f in flags if f in joined]
    table = joined.groupby("repetitions").agg(
        facts=("M", "size"), mean_M=("M", "mean"), **{f"{f}_rate": (f, "mean") for f in present}
    )
    return table.reset_index()


def loss_membership(mean_nll: np.ndarray, member: np.ndarray, n_bootstrap: int = 1000, seed: int = 0) -> dict:
    """The loss attack's evaluation: score = -mean NLL (higher = member)."""
    return mia.evaluate_attack(-np.asarray(mean_nll, dtype=float), np.asarray(member, dtype=bool),
                               n_bootstrap=n_bootstrap, seed=seed)
