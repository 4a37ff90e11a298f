"""Web presence and the well-known / lesser-known cohorts of subjects."""

from __future__ import annotations

import numpy as np
import pandas as pd

WEB_PRESENCE_SIGNALS = ("sitelinks", "article_length", "page_views")
WELL_KNOWN, LESSER_KNOWN = "well-known", "lesser-known"
SUBJECTS_COLUMNS = ["qid", "label", "aliases", "cohort", "web_presence", "cohort_rank"]


def add_web_presence(humans: pd.DataFrame, signals: pd.DataFrame | None = None) -> pd.DataFrame:
    """Attach the web-presence signals and their composite score.

    Each known signal is turned into a percentile rank among the humans where it is known
    (log scale does not matter for ranks); the score is the mean of the known ranks. A human
    with no known signal gets NaN — unknown, never 'low'. ``signals`` (qid, sitelinks,
    article_length, page_views) fills what the dump does not carry; the dump's own sitelinks
    win where both exist.
    """
    out = humans.copy()
    for column in WEB_PRESENCE_SIGNALS:
        if column not in out:
            out[column] = pd.array([pd.NA] * len(out), dtype="Int64")
    if signals is not None and len(signals):
        side = signals.drop_duplicates("qid").set_index("qid")
        for column in WEB_PRESENCE_SIGNALS:
            if column in side:
                filler = out["qid"].map(side[column])
                out[column] = out[column].astype("Float64").fillna(filler.astype("Float64")).astype("Int64")
    ranks = pd.DataFrame({c: out[c].astype("Float64").rank(pct=True) for c in WEB_PRESENCE_SIGNALS})
    out["web_presence"] = ranks.mean(axis=1, skipna=True).astype("float64")
    return out


def draw_cohorts(
    humans: pd.DataFrame,
    eligible_qids: set[str] | None = None,
    size: int = 100,
    seed: int = 0,
    pool_factor: float = 1.0,
) -> pd.DataFrame:
    """Top-``size`` and bottom-``size`` subjects by web presence, disjoint and reproducible.

    Only humans with a known web presence (and, if given, in ``eligible_qids``: e.g. with at
    least one probed property) are drawn. With ``pool_factor`` > 1 each cohort is a seeded
    sample of ``size`` from the top / bottom ``size * pool_factor``; ties are broken by a
    seeded random key so reruns give the same subjects.
    """
    known = humans[humans["web_presence"].notna()]
    if eligible_qids is not None:
        known = known[known["qid"].isin(eligible_qids)]
    pool = int(round(size * pool_factor))
    if 2 * pool > len(known):
        raise ValueError(
            f"Cannot draw two disjoint cohorts of {size} from pools of {pool}: only {len(known)} "
            "subjects have a known web presence. Lower the cohort size or the pool factor."
        )
    rng = np.random.default_rng(seed)
    ordered = known.assign(_tie=rng.random(len(known))).sort_values(
        ["web_presence", "_tie"], ascending=[False, True], ignore_index=True
    )
    top, bottom = ordered.head(pool), ordered.tail(pool)
    if pool > size:
        top = top.sample(n=size, random_state=seed)
        bottom = bottom.sample(n=size, random_state=seed + 1)
    frames = []
    for cohort, members in ((WELL_KNOWN, top), (LESSER_KNOWN, bottom)):
        members = members.sort_values(["web_presence", "_tie"], ascending=[False, True])
        frames.append(members.assign(cohort=cohort, cohort_rank=np.arange(1, len(members) + 1)))
    subjects = pd.concat(frames, ignore_index=True)
    return subjects[SUBJECTS_COLUMNS]
