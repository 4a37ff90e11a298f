"""Kendall τ of the wording scores between releases, computed in one place (`wording.release_kendall`)
and read the same way from `across_models` and from the stored across-models table."""

import pandas as pd
import pytest

from wikimem_platform.wikimem import wording

# Three wordings of one property, three releases: b ranks them as a does, c the other way round.
SCORES = {"a@main": [0.6, 0.7, 0.9], "b@main": [0.5, 0.55, 0.8], "c@main": [0.9, 0.8, 0.7]}


def per_release() -> dict[str, pd.DataFrame]:
    return {key: pd.DataFrame({"property": "P19", "variant_id": [0, 1, 2], "kind": ["baseline", "paraphrase", "paraphrase"],
                               "template": ["[X] was born in [Y].", "[X]'s birthplace is [Y].", "[X] came from [Y]."],
                               wording.TRUTH_AUC: values})
            for key, values in SCORES.items()}


def stored_table(per_model) -> pd.DataFrame:
    """What wording_sensitivity_across_models stores."""
    across = wording.across_models(per_model)
    return across.scores.reset_index().merge(across.wordings, on=wording.WORDING_KEYS, how="left")


def test_tau_by_hand():
    tau = wording.release_kendall(pd.DataFrame(SCORES))
    assert tau.loc["a@main", "b@main"] == pytest.approx(1.0)  # same order
    assert tau.loc["a@main", "c@main"] == pytest.approx(-1.0)  # reversed
    assert tau.loc["c@main", "c@main"] == pytest.approx(1.0)
    assert list(tau.index) == list(tau.columns) == list(SCORES)


def test_across_models_and_the_stored_table_give_the_same_tau():
    per_model = per_release()
    across = wording.across_models(per_model)
    pd.testing.assert_frame_equal(across.kendall, wording.release_kendall(pd.DataFrame(SCORES)), check_names=False)
    from_table = wording.kendall_between_releases(stored_table(per_model))
    pd.testing.assert_frame_equal(from_table, across.kendall, check_names=False)


def test_no_tau_without_two_releases():
    assert wording.kendall_between_releases(None) is None
    assert wording.kendall_between_releases(pd.DataFrame(columns=[*wording.WORDING_KEYS, "kind", "template"])) is None
    one = {"a@main": per_release()["a@main"]}
    assert wording.kendall_between_releases(stored_table(one)) is None
    assert wording.across_models(one).kendall.shape == (1, 1)  # the across-models asset still shows it
