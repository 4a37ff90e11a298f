"""Reference unlearning on the planted model: NPO and gradient ascent forget three members' facts
(the truth no longer ranks first among the world's values) and keep most of the others'."""

import pytest

from wikimem_platform.lm.loading import load_model
from wikimem_platform.lm.nll import score_sentences
from wikimem_platform.planted import generate_world
from wikimem_platform.unlearning.methods import unlearn, UnlearnConfig, unlearned_revision, UNLEARNING_MANIFEST
from tests.support.criteria import criterion
from tests.support.trained import planted_world_config

LABELS = {"P106": "occupation", "P27": "country of citizenship", "P19": "place of birth", "P108": "employer"}
# Wordings never used in the training biographies (their shapes live in planted/shapes.py).
WORDINGS = ("{name}'s {label} is {value}.", "The {label} of {name} is {value}.")


def sentences(person, value_of) -> list[str]:
    return [w.format(name=person.label, label=LABELS.get(f.property, f.property), value=value_of(f))
            for f in person.facts for w in WORDINGS]


def ranked_first(lm, people, vocabulary) -> dict[tuple[str, str], bool]:
    """Per (person, property): does the true value have the lowest NLL among the world's values,
    in every wording? (Plain NLL: what the unlearning is meant to change.)"""
    out = {}
    for person in people:
        for fact in person.facts:
            values = [v.label for v in vocabulary[fact.property]]
            wins = []
            for wording in WORDINGS:
                texts = [wording.format(name=person.label, label=LABELS.get(fact.property, fact.property), value=v) for v in values]
                nll = score_sentences(lm, texts)
                wins.append(values[int(nll.argmin())] == fact.value_label)
            out[(person.qid, fact.property)] = all(wins)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("method", ["npo", "gradient_ascent"])
def test_unlearning_forgets_three_members_and_keeps_the_rest(planted_model, tmp_path, method):
    world = generate_world(planted_world_config())
    most_read = [p for p in world.members if p.repetitions == 16]
    forget_people, retain_people = most_read[:3], most_read[3:]
    before_lm = load_model(str(planted_model), device="cpu")
    before_forget = ranked_first(before_lm, forget_people, world.vocabulary)
    before_retain = ranked_first(before_lm, retain_people, world.vocabulary)
    assert sum(before_forget.values()) >= 8  # the planted facts are there to forget (12 facts)

    forget_texts = [t for p in forget_people for t in sentences(p, lambda f: f.value_label)]
    retain_texts = [t for p in retain_people for t in sentences(p, lambda f: f.value_label)]
    # what the ranking above reads for the retain people: every wording with every value
    ranking = [w.format(name=p.label, label=LABELS.get(f.property, f.property), value=v.label)
               for p in retain_people for f in p.facts for w in WORDINGS for v in world.vocabulary[f.property]]
    result = unlearn(planted_model, forget_texts, retain_texts, tmp_path / method,
                     UnlearnConfig(method=method, seed=0), forget_sha256="ab" * 32, log=lambda m: None,
                     ranking_texts=ranking)
    assert (result.model_dir / UNLEARNING_MANIFEST).is_file() and (result.model_dir / "manifest.json").is_file()
    assert result.manifest["config"]["method"] == method and result.manifest["forget_sha256"] == "ab" * 32

    after_lm = load_model(str(result.model_dir), device="cpu")
    after_forget = ranked_first(after_lm, forget_people, world.vocabulary)
    after_retain = ranked_first(after_lm, retain_people, world.vocabulary)
    # every forgotten fact lost its first rank
    criterion(f"unlearning ({method}): forgotten facts still ranked first", sum(after_forget.values()), "==", 0,
              context=after_forget)
    kept = [after_retain[k] for k, was in before_retain.items() if was]
    criterion(f"unlearning ({method}): retain facts still ranked first", sum(kept) / len(kept), ">=", 0.9, n=len(kept))


def test_config_is_validated_and_revisions_name_the_method():
    with pytest.raises(ValueError, match="npo, gradient_ascent"):
        UnlearnConfig(method="fine-tune").validate()
    assert unlearned_revision("abc123", "f" * 64, "gradient_ascent") == "abc123-gradientascent-ffffffff"
    with pytest.raises(ValueError, match="nll\\+kl, nll"):
        UnlearnConfig(retain_loss="kl").validate()
    with pytest.raises(ValueError, match="kl_weight"):
        UnlearnConfig(kl_weight=-1).validate()


def test_the_ranking_kl_needs_the_sentences_an_audit_ranks(tmp_path):
    """retain_loss 'nll+kl' without ranking texts is refused before any model is loaded."""
    with pytest.raises(ValueError, match="ranking_texts"):
        unlearn(tmp_path / "no-model", ["a forget text"], ["a retain text"], tmp_path / "out", UnlearnConfig())


def test_ranking_texts_fill_every_retain_wording_with_every_value_for_the_person_and_look_alikes():
    import pandas as pd

    from wikimem_platform.canaries.names import similar_names
    from wikimem_platform.unlearning.export import FACT_COLUMNS, ExportSets, PropertyQuestions, ranking_texts

    def facts(rows):
        return pd.DataFrame([dict(zip(["subject_qid", "subject_label", "property", "value_label"], r),
                                  property_label="occupation", value="Q", M=1.0) for r in rows]).reindex(columns=FACT_COLUMNS)

    sets = ExportSets(forget=facts([("Q1", "Ada Lovelace", "P106", "mathematician")]),
                      retain=facts([("Q2", "Tomasz Gómez", "P106", "chemist")]),
                      questions={"P106": PropertyQuestions("", (), ("{subject}'s occupation is {value}.",
                                                                    "{value} is {subject}'s job."))},
                      perturbed={("Q1", "P106", "en"): ["poet"]}, source={})
    texts = ranking_texts(sets)
    names = ["Tomasz Gómez", *similar_names("Tomasz Gómez")]
    assert len(names) == 3 and len(texts) == 2 * 3 * 3  # wordings x values x names
    assert "Tomasz Gómez's occupation is mathematician." in texts and "Poet is Tomasz Gómez's job." in texts
    assert f"{names[1]}'s occupation is chemist." in texts
    assert not any("Ada Lovelace" in t for t in texts)  # only retain people are kept
