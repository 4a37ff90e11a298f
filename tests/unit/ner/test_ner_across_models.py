"""The NER across-models table (`ner.across_models`): prompt × (release, split) M-MEM and τ per type."""

import pandas as pd
import pytest

from wikimem_platform import ner


def prompt_scores(dev, test, entity_types=("PER",)) -> pd.DataFrame:
    rows = [{"entity_type": t, "prompt_id": i, "sentence_type": "plain", "prompt": f"p{i}", "m_mem_dev": d, "m_mem_test": s}
            for t in entity_types for i, (d, s) in enumerate(zip(dev, test))]
    return pd.DataFrame(rows)


def test_columns_per_release_and_split_and_tau_by_hand():
    per_model = {"ner-a@main": prompt_scores([0.6, 0.7, 0.8], [0.61, 0.72, 0.83]),
                 "ner-b@main": prompt_scores([0.9, 0.8, 0.7], [0.5, 0.6, 0.55])}
    across = ner.across_models(per_model)
    assert list(across.table.columns) == ["ner-a@main dev", "ner-a@main test", "ner-b@main dev", "ner-b@main test"]
    assert across.table.index.names == ["entity_type", "prompt_id"] and len(across.table) == 3
    assert across.table.loc[("PER", 2), "ner-b@main test"] == 0.55
    tau = across.kendall["PER"]
    assert tau.loc["ner-a@main dev", "ner-a@main test"] == pytest.approx(1.0)
    assert tau.loc["ner-a@main dev", "ner-b@main dev"] == pytest.approx(-1.0)
    # (0.5, 0.6, 0.55) against (0.6, 0.7, 0.8): pairs (0,1) and (0,2) agree, (1,2) disagrees: (2 - 1) / 3
    assert tau.loc["ner-a@main dev", "ner-b@main test"] == pytest.approx(1 / 3)


def test_one_matrix_per_entity_type_in_sorted_order():
    per_model = {"ner-a@main": prompt_scores([0.6, 0.7], [0.6, 0.7], entity_types=("PER", "LOC"))}
    across = ner.across_models(per_model)
    assert list(across.kendall) == ["LOC", "PER"]
    assert across.kendall["LOC"].shape == (2, 2)
