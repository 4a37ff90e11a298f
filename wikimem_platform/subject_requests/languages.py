"""A request in the languages people write in: the person's canaries in each language asked.

A German's facts are most likely memorized in German. `plan_request` plans the person's audit once
per language and keeps the rows apart by a `language` column: English exactly as before; another
language (`canaries.languages`: de, fr, pl) from its hand-written templates, with

- the person's name and the values in that language's labels (the extract's `entity_terms`), the
  true value kept in English where it has none there (`label_fallback`, said in the answer),
  counterfactual values without a label there left out (an English word in a German sentence is
  unlikely for anyone, and would flatter the true value);
- every sentence agreeing with the person's gender (`person_gender`; unknown: the masculine, the
  grammatical default), and the invented controls drawn of that gender;
- h0 the language's "this man" / "this woman" (`LanguagePack.generic_subject`);
- the language's own aliases as the true value's other forms (not the English short forms).

A property the language has no templates for is "not covered" in it, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from wikimem_platform.canaries.languages import check_languages, ENGLISH, pack, PERSON_PROPERTIES
from wikimem_platform.vocabulary import LANGUAGE, MALE
from wikimem_platform.canaries.languages.localize import (
    agreed_templates,
    LABEL_FALLBACK,
    language_aliases,
    language_labels,
    language_templates,
    localize_values,
)
from wikimem_platform.subject_requests.audit import (
    COVERAGE_COLUMNS,
    MIN_ON_DEMAND_POOL,
    NOT_COVERED,
    PersonPlan,
    plan_person_audit,
)
from wikimem_platform.wikimem import typical_names
from wikimem_platform.wikimem.controls import CITIZENSHIP, GENDER

# Countries (and the historical states of the bundled sample) whose people write in a language with
# templates: a request names it by default, after English. Wikidata's "official language" (P37) is
# not in the extract, so the few states a European request mostly concerns are listed here.
COUNTRY_LANGUAGES = {
    # German: Germany, Austria, Liechtenstein, the German Empire, Weimar, Nazi Germany, West and East
    # Germany, Prussia, Austria-Hungary, the Austrian Empire, the Holy Roman Empire
    "Q183": ("de",), "Q40": ("de",), "Q347": ("de",), "Q43287": ("de",), "Q41304": ("de",), "Q7318": ("de",),
    "Q713750": ("de",), "Q16957": ("de",), "Q27306": ("de",), "Q28513": ("de",), "Q131964": ("de",), "Q12548": ("de",),
    # French: France, its kingdoms, empires and republics, Monaco
    "Q142": ("fr",), "Q70972": ("fr",), "Q71084": ("fr",), "Q71092": ("fr",), "Q58296": ("fr",), "Q69461": ("fr",),
    "Q235": ("fr",),
    # both: Switzerland, Belgium (French of its languages with templates), Luxembourg
    "Q39": ("de", "fr"), "Q31": ("fr",), "Q32": ("fr", "de"),
    # Polish: Poland, the Second Republic, the People's Republic, the Commonwealth, Congress Poland
    "Q36": ("pl",), "Q207272": ("pl",), "Q209857": ("pl",), "Q172107": ("pl",), "Q11718": ("pl",),
}


def default_languages(facts: pd.DataFrame) -> list[str]:
    """English, then the languages of the person's countries of citizenship that have templates."""
    countries = facts.loc[facts["property"] == CITIZENSHIP, "value"].astype(str)
    own = [code for country in countries for code in COUNTRY_LANGUAGES.get(country, ())]
    return list(dict.fromkeys([ENGLISH, *own]))


def person_gender(facts: pd.DataFrame, name: str) -> str | None:
    """The person's gender as their canaries agree with it: the facts' sex or gender (P21), else
    what the first name says in the lists of the person's country, else in any country's
    (`typical_names`), else None."""
    stated = facts.loc[facts["property"] == GENDER, "value"].astype(str)
    if len(stated) and stated.iloc[0] in (typical_names.MALE, typical_names.FEMALE):
        return stated.iloc[0]
    tokens = str(name).split()
    if not tokens:
        return None
    countries = facts.loc[facts["property"] == CITIZENSHIP, "value"].astype(str)
    origin = countries.iloc[0] if len(countries) else None
    return typical_names.gender_of(tokens[0], origin) or typical_names.gender_anywhere(tokens[0])


def plan_request(subject: pd.DataFrame, facts: pd.DataFrame, languages: Sequence[str], *, terms: pd.DataFrame,
                 property_table: pd.DataFrame, templates: pd.DataFrame, counterfactuals: pd.DataFrame,
                 **options) -> PersonPlan:
    """The person's plan in each of `languages` (`plan_person_audit`'s `options` for every one),
    their rows tagged with `language`. English alone gives today's plan, untagged."""
    languages = check_languages(languages)
    if languages == [ENGLISH]:
        return plan_person_audit(subject, facts, property_table=property_table, templates=templates,
                                 counterfactuals=counterfactuals, **options)
    plans = []
    for code in languages:
        if code == ENGLISH:
            plan = plan_person_audit(subject, facts, property_table=property_table, templates=templates,
                                     counterfactuals=counterfactuals, **options)
            plan.canaries[LABEL_FALLBACK] = False
        else:
            plan = _plan_in(code, subject, facts, terms=terms, property_table=property_table,
                            counterfactuals=counterfactuals, **options)
        plans.append((code, plan))
    return _joined(plans)


def _plan_in(code: str, subject: pd.DataFrame, facts: pd.DataFrame, *, terms: pd.DataFrame,
             property_table: pd.DataFrame, counterfactuals: pd.DataFrame, **options) -> PersonPlan:
    """One language's plan: its templates, labels, gender, h0, aliases (module docstring)."""
    language = pack(code)
    person = subject.iloc[0]
    labels = language_labels(terms, code)
    gender = person_gender(facts, str(person["label"])) or MALE  # unknown: the grammatical default
    english = [str(person["label"]), *[str(a) for a in _names(person.get("aliases"))]]
    aliases_there = language_aliases(terms, code)
    own_aliases = aliases_there.get(str(person["qid"]), [])
    name = labels.get(str(person["qid"]), str(person["label"]))
    aliases = [a for a in dict.fromkeys([*own_aliases, *english]) if a != name]
    local_subject = subject.assign(label=name, aliases=[aliases])
    local_facts = localize_values(facts, code, labels, gender)
    fallback = set(local_facts.loc[local_facts[LABEL_FALLBACK], "property"])
    pool = localize_values(counterfactuals, code, labels, gender, keep_unlabelled=False)
    sizes = pool.groupby("property")["value"].nunique()
    with_templates = [p for p in PERSON_PROPERTIES if p in set(property_table["property"])]
    enough = [p for p in with_templates if sizes.get(p, 0) >= MIN_ON_DEMAND_POOL]
    table = property_table[property_table["property"].isin(enough)]
    wanted = options.pop("properties", ()) or ()
    plan = plan_person_audit(
        local_subject, local_facts.drop(columns=LABEL_FALLBACK), property_table=table,
        templates=agreed_templates(language_templates(code, enough), gender), counterfactuals=pool,
        properties=wanted, on_demand=False, shipped_forms=False, generic=language.generic_subject(gender),
        gender=gender, value_aliases=aliases_there, **_without(options, "value_aliases", "on_demand"))
    plan.canaries[LABEL_FALLBACK] = plan.canaries["property"].isin(fallback)

    def reason(prop: str, given: str) -> str:
        if prop not in PERSON_PROPERTIES:
            return f"no {language.name} templates for it"
        if prop in with_templates and prop not in enough:
            return (f"fewer than {MIN_ON_DEMAND_POOL} other values of it have a {language.name} label to rank the "
                    "true value against")
        return given  # as in English: not among the audited properties, no value to rank against, ...

    missing = plan.coverage["coverage"] == NOT_COVERED
    plan.coverage.loc[missing, "reason"] = [
        reason(p, given) for p, given in zip(plan.coverage.loc[missing, "property"], plan.coverage.loc[missing, "reason"])]
    plan.subject = subject  # the person as the request knows them; the canaries carry the name in the language
    plan.facts = facts
    return plan


def _joined(plans: list[tuple[str, PersonPlan]]) -> PersonPlan:
    """Several languages' plans as one, every frame's rows tagged with their language."""
    def tagged(name: str) -> pd.DataFrame | None:
        frames = [getattr(plan, name).assign(**{LANGUAGE: code}) for code, plan in plans
                  if getattr(plan, name) is not None]
        return pd.concat(frames, ignore_index=True) if frames else None

    first = plans[0][1]
    coverage = tagged("coverage")
    return PersonPlan(first.subject, first.facts, tagged("canaries"), tagged("candidates"),
                      coverage if coverage is not None else pd.DataFrame(columns=[*COVERAGE_COLUMNS, LANGUAGE]),
                      tagged("control_canaries"), tagged("control_candidates"), tagged("kin_canaries"),
                      tagged("kin_candidates"))


def _without(options: dict, *names: str) -> dict:
    return {k: v for k, v in options.items() if k not in names}


def _names(value) -> list[str]:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return []
    return [str(v) for v in value]
