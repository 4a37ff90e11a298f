"""The calibration study (issue 17.5) on a hand-built scores table, every number computed by hand.

Subject A (the positive group) knows its fact T and so do its one-part look-alikes (as "Obama"
carries United States); its all-part look-alikes know nothing. Subject B knows nothing. Candidates
T (true), X, Y; two scored wordings with the same numbers, plus one contextualized wording for A
that must not count.

A, per wording:      T     X     Y
  NLL(h)             5     9     9
  NLL(h0)           10    10    10
  one-part h~      4,4   9,9  10,10   (mean 4, 9, 10)
  all-part h~    10,10 10,10  10,10
  s, NLL(h) alone   -5    -9    -9   -> T first
  s, alpha = 0       5     1     1   -> T first
  s, alpha=.5 one    5-3=2  1-.5=.5  1-0=1   -> T first
  s, alpha=1 one    4-5=-1  9-9=0  10-9=1    -> T last (rank 3): calibration cancels it
  s, alpha=.5 all    5-0=5  1     1   -> T first;  alpha=1 all: 10-5=5, 1, 1 -> T first
B, per wording: NLL(h) T 9, X 8, Y 10; NLL(h0) 10 each; one-part 9,9 each; all-part 10,10 each:
  every setting puts X first, T second (beating Y): M = 0, truth confidence 1/2.
"""

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.canaries.names import all_parts_similar_names, similar_names
from wikimem_platform.wikimem import calibration
from wikimem_platform.wikimem.calibration import (
    ALL_PARTS,
    calibration_study,
    DISAGREEMENT,
    flag_disagreements,
    GENERIC,
    NAME,
    ONE_PART,
    PAPER_SETTING,
    RAW_M,
)
from wikimem_platform.wikimem.memorization import evaluate_wikimem

KNOWS = {"T": (5, [4, 4], [10, 10]), "X": (9, [9, 9], [10, 10]), "Y": (9, [10, 10], [10, 10])}
KNOWS_NOTHING = {"T": (9, [9, 9], [10, 10]), "X": (8, [9, 9], [10, 10]), "Y": (10, [9, 9], [10, 10])}
# Contextualized: T first by far under every setting (it must not count).
OBVIOUS = {"T": (1, [10, 10], [10, 10]), "X": (9, [9, 9], [10, 10]), "Y": (9, [9, 9], [10, 10])}


def rows(subject: str, variant_id: int, kind: str, numbers: dict) -> list[dict]:
    return [{"subject_qid": subject, "property": "P27", "variant_id": variant_id, "kind": kind, "value": value,
             "value_label": value, "is_true": value == "T", "nll_h": float(h), "nll_h0": 10.0,
             "nll_similar": [float(x) for x in one], "nll_similar_all_parts": [float(x) for x in every]}
            for value, (h, one, every) in numbers.items()]


def hand_scores(with_c: bool = False) -> pd.DataFrame:
    table = [*rows("A", 0, "baseline", KNOWS), *rows("A", 1, "paraphrase", KNOWS),
             *rows("A", 2, "contextualized", OBVIOUS),
             *rows("B", 0, "baseline", KNOWS_NOTHING), *rows("B", 1, "paraphrase", KNOWS_NOTHING)]
    if with_c:  # C: raw memorizes in one of its two wordings, calibrated in none
        table += [*rows("C", 0, "baseline", KNOWS), *rows("C", 1, "paraphrase", KNOWS_NOTHING)]
    return pd.DataFrame(table)


def test_settings_separate_the_groups_except_the_paper_default_here():
    study = calibration_study(hand_scores(), {"A": "well-known", "B": "lesser-known"}, positive="well-known")
    table = study.settings.set_index("setting")
    assert list(table.index) == [s.name for s in calibration.SETTINGS]
    pairs = study.pairs.set_index(["setting", "subject_qid"])
    for setting in table.index:
        assert pairs.loc[(setting, "A"), "n_variants"] == 2  # the contextualized wording left out
        assert pairs.loc[(setting, "B"), "M"] == 0.0
        assert pairs.loc[(setting, "B"), "truth_confidence"] == 0.5
        assert table.loc[setting, "rank1_rate_negative"] == 0.0
    cancelled = PAPER_SETTING
    assert pairs.loc[(cancelled, "A"), "M"] == 0.0 and pairs.loc[(cancelled, "A"), "truth_confidence"] == 0.0
    assert table.loc[cancelled, "M_auroc"] == 0.5  # M = 0 for both: a tie
    assert table.loc[cancelled, "confidence_auroc"] == 0.0  # A's truth beats nothing, B's beats Y
    assert table.loc[cancelled, "rank1_rate_positive"] == 0.0 and table.loc[cancelled, "is_default"]
    for setting in table.index.drop(cancelled):
        assert pairs.loc[(setting, "A"), "M"] == 1.0
        assert table.loc[setting, ["M_auroc", "confidence_auroc", "rank1_rate_positive", "rank1_rate_gap"]].tolist() \
            == [1.0, 1.0, 1.0, 1.0]
    # Five settings tie at 1.0 on both AUROCs: the first in the table's order wins.
    assert study.best == "NLL(h) alone" and table["separates_best"].sum() == 1
    assert (study.positive, study.negative) == ("well-known", "lesser-known")
    variants = study.variants.set_index(["setting", "subject_qid", "variant_id"])
    assert variants.loc[(cancelled, "A", 0), "truth_rank"] == 3 and variants.loc[("alpha=1 all-parts", "A", 1), "truth_rank"] == 1


def test_best_setting_breaks_ties_by_the_confidence_auroc():
    table = pd.DataFrame({"setting": ["a", "b", "c"], "M_auroc": [0.8, 0.9, 0.9], "confidence_auroc": [1.0, 0.7, 0.75]})
    assert calibration.best_setting(table) == "c"
    table["M_auroc"] = [np.nan, 0.5, 0.5]
    assert calibration.best_setting(table) == "c"


def test_each_name_variants_own_rank1_share():
    study = calibration_study(hand_scores(), {"A": "member", "B": "non-member"}, positive="member")
    hits = study.lookalikes.set_index(["subject_qid", "name_kind", "lookalike_index"])
    # A: its own name ranks T first in both wordings; so do both one-part look-alikes (T at 4);
    # h0 and the all-part look-alikes tie all three (10 each): max rank 3, never a hit.
    expected_a = {(NAME, 0): 2, (GENERIC, 0): 0, (ONE_PART, 0): 2, (ONE_PART, 1): 2, (ALL_PARTS, 0): 0, (ALL_PARTS, 1): 0}
    for (kind, index), n_rank1 in expected_a.items():
        row = hits.loc[("A", kind, index)]
        assert (row["n_variants"], row["n_rank1"], row["n_rank1_shared"]) == (2, n_rank1, n_rank1), (kind, index)
        assert row["rank1_share"] == n_rank1 / 2 and row["name_rank1_share"] == 1.0
    assert hits.loc["B", "n_rank1"].eq(0).all()  # B: X has the lowest NLL(h); the look-alikes tie
    summary = study.lookalike_summary.set_index(["group", "name_kind", "lookalike_index"])
    assert summary.loc[("member", ONE_PART, 0), "share_of_name_hits"] == 1.0  # alpha = 1 cancels all of it
    assert summary.loc[("member", ALL_PARTS, 1), "share_of_name_hits"] == 0.0
    assert summary.loc[("member", NAME, 0), "rank1_share"] == 1.0
    assert np.isnan(summary.loc[("non-member", NAME, 0), "share_of_name_hits"])  # no hit to share


def test_disagreement_flag_at_half_the_wordings():
    result = evaluate_wikimem(hand_scores(with_c=True), alpha=1.0)
    flagged = flag_disagreements(result.candidates, result.pairs).set_index("subject_qid")
    # A: M_raw 1 (both wordings), M 0; C: M_raw 1/2, M 0 (the gap equals the constant); B: 0 and 0.
    assert flagged[RAW_M].to_dict() == {"A": 1.0, "B": 0.0, "C": 0.5}
    assert flagged["M"].to_dict() == {"A": 0.0, "B": 0.0, "C": 0.0}
    assert flagged[DISAGREEMENT].to_dict() == {"A": True, "B": False, "C": True}
    stricter = flag_disagreements(result.candidates, result.pairs, gap=0.75).set_index("subject_qid")
    assert stricter[DISAGREEMENT].to_dict() == {"A": True, "B": False, "C": False}
    assert len(flagged) == len(result.pairs) and set(result.pairs.columns) < {*flagged.columns, "subject_qid"}


def test_bad_groups_and_missing_lookalikes_are_named():
    with pytest.raises(ValueError, match="positive='famous'"):
        calibration_study(hand_scores(), {"A": "member", "B": "non-member"}, positive="famous")
    with pytest.raises(ValueError, match="exactly two groups"):
        calibration_study(hand_scores(), {"A": "member", "B": "member"}, positive="member")
    with pytest.raises(KeyError, match="nll_similar_all_parts"):
        calibration_study(hand_scores().drop(columns=["nll_similar_all_parts"]), {"A": "m", "B": "n"}, positive="m")


def test_all_parts_look_alikes_keep_no_part_of_the_name():
    assert all_parts_similar_names("Barack Obama") == ["Kcarab Amabo", "Arackb Bamao"]
    assert similar_names("Barack Obama") == ["Kcarab Obama", "Barack Amabo"]  # the paper's: one part kept
    for name, aliases in [("Barack Obama", ["Barack Hussein Obama", "Obama"]), ("John F. Kennedy", ["JFK"]),
                          ("José María Aznar", []), ("Ab Ba", []), ("Anna Otto", []), ("Madonna", []), ("X", [])]:
        looks = all_parts_similar_names(name, n=3, avoid=aliases)
        assert len(looks) == 3 and len(set(looks)) == 3, looks
        original = {t.casefold() for n in [name, *aliases] for t in n.split()}
        for look in looks:
            assert look not in [name, *aliases]
            assert len(look.split()) == len(name.split())
            assert not {t.casefold() for t in look.split()} & original, (name, look)  # "Ab Ba" -> not "Ba Ab"
    assert all_parts_similar_names("Barack Obama", n=2) == all_parts_similar_names(" Barack  Obama ", n=2)
