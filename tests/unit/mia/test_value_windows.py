"""CRM's MIA windows (issue 17.9): texts cut to a token window centred on the personal value,
checked by hand on SmolLM2's real tokenizer (every word below is one token of it)."""

import json

import pandas as pd
import pytest

from wikimem_platform.mia import membership as mb

LEFT = "red green blue black white brown pink grey gold"   # 9 tokens
RIGHT = "one two three four five six seven eight nine"      # 9 tokens
COLOURS = LEFT.split() + RIGHT.split()


@pytest.fixture(scope="module")
def tokenizer(smollm2):
    """SmolLM2's fast tokenizer. Real model: the windows below were worked out by hand on its
    vocabulary (every word one token); the tests that use it are `slow`."""
    words = f"{LEFT} Paris {RIGHT}"
    assert len(smollm2.tokenizer(words, add_special_tokens=False)["input_ids"]) == 19   # one token a word
    return smollm2.tokenizer


def windows(tokenizer, rows, min_tokens, max_tokens):
    frame = pd.DataFrame(rows, columns=["text", "value"])
    return mb.value_windows(frame, tokenizer, min_tokens, max_tokens)


@pytest.mark.slow
def test_windows_grow_symmetrically_and_borrow_at_the_edges(tokenizer):
    middle = f"{LEFT} Paris {RIGHT}"
    rows = [(middle, "Paris"),                                                   # 9 tokens each side
            ("red Paris one two three four five six seven eight nine", "Paris"),  # 1 token on the left
            ("red green blue black white brown pink Paris one", "Paris"),         # 1 token on the right
            ("gold Paris one", "Paris"),                                          # shorter than max: whole
            ("red green blue Kingdom of Italy one two three", "Kingdom of Italy")]  # 3-token value
    got, counts = windows(tokenizer, rows, 3, 7)
    assert got["text"].tolist() == [
        "pink grey gold Paris one two three",       # 3 + 1 + 3
        "red Paris one two three four five",        # the left has 1: the right gives 5
        "blue black white brown pink Paris one",    # the right has 1: the left gives 5
        "gold Paris one",
        "green blue Kingdom of Italy one two"]      # 2 + 3 + 2
    assert got["window_tokens"].tolist() == [7, 7, 7, 3, 7]
    assert counts == {"formed": 5, "cut": 4, "dropped_no_value": 0, "dropped_value_absent": 0,
                      "dropped_value_too_long": 0, "dropped_too_short": 0}
    # an odd spare token goes to the right; each window is original characters holding its value
    odd, _ = windows(tokenizer, [(middle, "Paris")], 1, 6)
    assert odd["text"].tolist() == ["grey gold Paris one two three"]
    for (text, value), window in zip(rows, got["text"]):
        assert value in window and window in text


@pytest.mark.slow
def test_rows_without_a_window_are_dropped_and_counted(tokenizer):
    rows = [("Paris one", "Paris"),                                  # 2 tokens < min 3
            ("red green Kingdom of Italy one two", "Kingdom of Italy"),  # 3-token value > max 2
            (f"{LEFT} Paris", "paris"),                              # case-sensitive: absent
            (f"{LEFT} Paris", None),                                 # no value
            (f"{LEFT} Paris", "Paris")]
    got, counts = windows(tokenizer, rows, 2, 2)      # "Paris one" fits; the 3-token value does not
    assert got["text"].tolist() == ["Paris one", "gold Paris"] and got.index.tolist() == [0, 4]
    assert counts == {"formed": 2, "cut": 1, "dropped_no_value": 1, "dropped_value_absent": 1,
                      "dropped_value_too_long": 1, "dropped_too_short": 0}
    got, counts = windows(tokenizer, rows, 3, 3)      # now "Paris one" is too short; the value fits
    assert got["text"].tolist() == ["Kingdom of Italy", "grey gold Paris"]
    assert counts == {"formed": 2, "cut": 2, "dropped_no_value": 1, "dropped_value_absent": 1,
                      "dropped_value_too_long": 0, "dropped_too_short": 1}


@pytest.mark.slow
def test_crm_windows_of_50_to_150_tokens(tokenizer):
    long_words = [COLOURS[i % len(COLOURS)] for i in range(400)]
    long_words[100] = "Paris"
    rows = [(" ".join(long_words), "Paris"),
            (" ".join(long_words[40:100] + ["Paris"]), "Paris"),   # 61 tokens: the whole text
            (" ".join(long_words[60:100] + ["Paris"]), "Paris")]   # 41 tokens: too short
    got, counts = windows(tokenizer, rows, *mb.CRM_WINDOW_TOKENS)
    assert got["window_tokens"].tolist() == [150, 61]
    assert got["text"].iloc[0] == " ".join(long_words[100 - 74:100 + 76])   # 74 left, 75 right
    assert got["text"].iloc[1] == rows[1][0]
    retokenized = tokenizer(got["text"].tolist(), add_special_tokens=False)["input_ids"]
    assert [len(ids) for ids in retokenized] == [150, 61]
    assert (counts["formed"], counts["cut"], counts["dropped_too_short"]) == (2, 1, 1)


@pytest.mark.parametrize("bounds", [(150, 50), (0, 150), (-5, 10), (50,), (50, 150, 200), (50.5, 150), "50"])
def test_bad_window_bounds_name_the_field(bounds):
    with pytest.raises(ValueError, match="value_windows must be"):
        mb.window_bounds(bounds)
    assert mb.window_bounds(None) is None and mb.window_bounds([]) is None
    assert mb.window_bounds([50, 150]) == (50, 150) == mb.window_bounds((50, 150))


def test_mia_summary_config_refuses_bad_windows():
    from assets.summaries import MiaSummaryConfig

    assert MiaSummaryConfig().value_windows == []   # off by default: the whole texts, numbers unchanged
    assert MiaSummaryConfig(value_windows=[50, 150]).value_windows == [50, 150]
    with pytest.raises(ValueError, match="value_windows must be"):
        MiaSummaryConfig(value_windows=[150, 50])


@pytest.fixture
def planted_dir(tmp_path):
    """A planted directory's membership files whose people have facts (no weights needed)."""
    facts = lambda *values: [dict(property=f"P{i}", value_label=v) for i, v in enumerate(values)]  # noqa: E731
    people = [dict(qid="Q1", label="Ann Lee", member=True, facts=facts("Lima", "rabbi")),
              dict(qid="Q2", label="Bo Chan", member=False, facts=facts("Mosul", "poet"))]
    (tmp_path / "manifest.json").write_text(json.dumps({"people": people}))
    lines = lambda records: "".join(json.dumps(r) + "\n" for r in records)  # noqa: E731
    (tmp_path / "corpus.jsonl").write_text(lines([
        dict(qid="Q1", text=f"{LEFT} Ann Lee was a rabbi in Lima. {RIGHT}"),   # Lima: first fact stated
        dict(qid="Q1", text=f"{LEFT} Ann Lee was a rabbi. {RIGHT}"),           # only the second fact
        dict(qid="Q1", text="Ann Lee, a rabbi.")]))                            # too short for 8 tokens
    (tmp_path / "held_out_biographies.jsonl").write_text(lines([
        dict(qid="Q1", text=f"{LEFT} Ann Lee of Lima. {RIGHT}"),
        dict(qid="Q2", text=f"{LEFT} Bo Chan, a poet of Mosul. {RIGHT}"),
        dict(qid="Q2", text=f"{LEFT} Bo Chan. {RIGHT}")]))                     # states no fact
    return tmp_path


@pytest.mark.slow
def test_planted_sets_cut_to_value_windows(planted_dir, tokenizer):
    plain = mb.membership_set("planted", str(planted_dir))
    assert plain["value"].isna().all()              # off: no values (PII neighbours unchanged)
    valued = mb.planted_membership(planted_dir, values=True)
    assert valued.set_index("text")["value"].fillna("(none)").to_dict() == {
        f"{LEFT} Ann Lee was a rabbi in Lima. {RIGHT}": "Lima", f"{LEFT} Ann Lee was a rabbi. {RIGHT}": "rabbi",
        "Ann Lee, a rabbi.": "rabbi", f"{LEFT} Bo Chan, a poet of Mosul. {RIGHT}": "Mosul",
        f"{LEFT} Bo Chan. {RIGHT}": "(none)"}
    cut = mb.membership_set("planted", str(planted_dir), value_windows=[8, 8], tokenizer=tokenizer)
    # 8 tokens: the value's, then 3 left and the rest right ("Mosul" is 2 tokens: 3 left, 3 right)
    assert cut["text"].tolist() == ["a rabbi in Lima. one two three", "Lee was a rabbi. one two three",
                                    "a poet of Mosul. one two"]
    assert (cut["window_tokens"] == 8).all() and cut["label"].sum() == 2
    assert (cut["set_description"] == mb.window_description(mb.DESCRIPTIONS[mb.PLANTED_TRAINING], 8, 8)).all()
    assert "windows" in cut["set_description"].iloc[0]
    assert cut.attrs[mb.WINDOW_FIELD] == {"formed": 3, "cut": 3, "dropped_no_value": 1, "dropped_value_absent": 0,
                                          "dropped_value_too_long": 0, "dropped_too_short": 1}
    capped = mb.membership_set("planted", str(planted_dir), value_windows=[8, 8], tokenizer=tokenizer, max_per_class=1)
    assert capped["label"].tolist().count(True) == 1 and len(capped) == 2     # capped after windowing
    with pytest.raises(ValueError, match="needs the model's tokenizer"):
        mb.membership_set("planted", str(planted_dir), value_windows=[8, 8])
    with pytest.raises(ValueError, match=r"left 0 members and 0 non-members of 5 texts \(dropped: no_value 1, too_short 4\)"):
        mb.membership_set("planted", str(planted_dir), value_windows=[50, 150], tokenizer=tokenizer)


def test_run_mia_reports_the_window_description(planted_dir, tiny_lm):
    """The description follows the cut set through the attacks: plumbing, any model's (a tiny one)."""
    cut = mb.membership_set("planted", str(planted_dir), value_windows=[8, 8], tokenizer=tiny_lm.tokenizer)
    _, table = mb.run_mia(tiny_lm, cut, n_neighbours=0, n_bootstrap=10, prefix_shots=0, gradient_norm=False,
                          samia_samples=0)
    assert (table["set_description"] == cut["set_description"].iloc[0]).all()
    assert "windows" in table["set_description"].iloc[0]
