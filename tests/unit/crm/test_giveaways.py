"""Wordings that give the answer away, by hand: the cue rule, the property-pair rule, facts left
untestable, and what `drop` keeps."""

import pandas as pd

from wikimem_platform.crm.giveaways import find_giveaways, IMPLIED, IMPLIED_BY, shows, SHOWN


def canary(prop, variant, template, labels, values, subject="Anna Keller", kind=None, context=()):
    return {"subject_qid": "Q1", "subject": subject, "property": prop, "variant_id": variant,
            "kind": kind or ("baseline" if variant == 0 else "paraphrase" if variant <= 10 else "contextualized"),
            "template": template, "ground_truth": list(values), "ground_truth_labels": list(labels),
            "context_properties": list(context)}


def person(subject="Anna Keller"):
    rows = [canary("P27", v, "{subject}'s country of citizenship is {value}.", ["Germany"], ["Q183"], subject)
            for v in range(11)]
    rows += [canary("P106", v, "{subject} worked as {value}.", ["chemist"], ["Q593644"], subject) for v in range(11)]
    # the contextualized wordings: citizenship after the place of birth (can imply it), occupation
    # after the citizenship (cannot)
    rows.append(canary("P27", 11, "{subject} was born in Munich. Their country of citizenship is {value}.",
                       ["Germany"], ["Q183"], subject, context=["P19"]))
    rows.append(canary("P106", 11, "{subject}'s country of citizenship is Germany. They worked as {value}.",
                       ["chemist"], ["Q593644"], subject, context=["P27"]))
    return pd.DataFrame(rows)


def scores_of(canaries, subject_qid="Q1"):
    """Two candidate rows per wording (the scores' keys are all `drop` reads)."""
    keys = canaries[["property", "variant_id", "kind"]].drop_duplicates()
    return pd.concat([keys.assign(subject_qid=subject_qid, value=v) for v in ("a", "b")], ignore_index=True)


def test_a_context_fact_that_can_imply_the_value_leaves_its_wording_out():
    found = find_giveaways(person(), property_labels={"P19": "place of birth"})
    assert found.wordings[["property", "variant_id", "rule"]].values.tolist() == [["P27", 11, IMPLIED]]
    assert found.untestable == frozenset()
    assert found.removed("P27") == [{"variant_id": 11, "kind": "contextualized", "rule": IMPLIED,
                                     "detail": "it states the place of birth, which can imply the value"}]
    assert found.removed("P106") == []
    # dropped for anyone's scores (the person's and the controls' alike), the rest kept
    scores = pd.concat([scores_of(person()), scores_of(person(), "control-1")], ignore_index=True)
    kept = found.drop(scores)
    assert len(kept) == len(scores) - 4  # two candidate rows of wording 11 of P27, for each subject
    assert not ((kept["property"] == "P27") & (kept["variant_id"] == 11)).any()
    assert ((kept["property"] == "P106") & (kept["variant_id"] == 11)).sum() == 4


def test_the_rule_is_on_the_property_pair():
    assert "P19" in IMPLIED_BY["P27"] and "P27" not in IMPLIED_BY.get("P106", ())
    assert "P54" in IMPLIED_BY["P641"] and "P1303" in IMPLIED_BY["P106"]


def test_a_wording_that_shows_an_alias_of_the_value_is_left_out():
    # the contextualized wording of the occupation states the citizenship under its alias
    frame = person()
    at = (frame["property"] == "P106") & (frame["variant_id"] == 11)
    frame.loc[at, "template"] = "{subject}'s country of citizenship is Deutschland. They worked as {value}."
    frame.loc[at, "ground_truth"] = pd.Series([["Q183"]], index=frame.index[at])
    frame.loc[at, "ground_truth_labels"] = pd.Series([["Germany"]], index=frame.index[at])
    found = find_giveaways(frame, value_aliases={"Q183": ["Deutschland", "FRG"]})
    rows = found.wordings.set_index(["property", "variant_id"])
    assert rows.loc[("P106", 11), "rule"] == SHOWN and rows.loc[("P106", 11), "detail"] == "it shows \u201cDeutschland\u201d"
    # without the alias nothing the wording tells shows "Germany"
    assert ("P106", 11) not in find_giveaways(frame).wordings.set_index(["property", "variant_id"]).index


def test_the_templates_own_words_are_not_read():
    # "profession" begins with "profess", three quarters of "professor": the same for everyone
    frame = pd.DataFrame([canary("P106", v, "{subject}'s profession is {value}.", ["professor"], ["Q121594"])
                          for v in range(11)])
    assert find_giveaways(frame).wordings.empty


def test_shown_means_the_words_not_a_few_letters():
    # a word that begins with three quarters of the value's word shows it
    assert shows("Anna Keller, a German footballer", "Germany")  # "german" = 6 of 7 letters
    assert shows("They speak Slovene.", "Slovenia") and shows("an Italian painter", "Italy")
    assert shows("born in Krakow", "Kraków") and shows("BORN IN KRAKÓW", "krakow")  # accents and case
    # letters inside other words are not the value (CRM's character cue finds "ome" of "Rome" here: 0.75)
    assert not shows("When it comes to Anna Keller, they died in", "Rome")
    assert not shows("a romantic poet", "Rome") and not shows("a screenwriter", "writer")
    # every long word of a value must be there; numbers only whole; short words never count
    assert not shows("Their date of death is 9 November 2001.", "3 November 1908")
    assert shows("born on 3 November 1908", "3 November 1908")
    assert not shows("United Kingdom", "United States of America") and not shows("Go on", "Go")
    assert not shows("born in 1836", "1874")


def test_a_name_that_shows_the_value_leaves_the_fact_untestable():
    # "Chemist" as a family name: every wording of the occupation shows it
    found = find_giveaways(person(subject="Anna Chemist"))
    assert found.untestable == frozenset({"P106"})
    assert len(found.removed("P106")) == 12  # the 11 scored wordings and the contextualized one
    # an untestable fact keeps its rows: its verdict, not a thinner M, says why it is no evidence
    scores = scores_of(person(subject="Anna Chemist"))
    kept = found.drop(scores)
    assert (kept["property"] == "P106").sum() == (scores["property"] == "P106").sum()
    assert not ((kept["property"] == "P27") & (kept["variant_id"] == 11)).any()


def test_no_canaries_no_giveaways():
    found = find_giveaways(pd.DataFrame())
    assert found.wordings.empty and found.drop(None) is None
