"""Names typical of a country, for invented-person controls: the Faker library's person-name
lists (first names by gender, surnames) for the country's locales, Latin script only.

Why. A control must be exchangeable with the person under "the model knows nothing about this
person": whatever the model guesses from the name alone, it must guess for the controls too. A
name such as "Tobias Wenzlaff" says "German" to a model; controls recombined from the extract's
labels say much less when the extract has few people of that country (the bundled sample has
11 Germans), and the person then beats them on citizenship without being known. On Gemma 3 270M
(`tests/e2e/test_gemma_controls.py`) 5 of 10 invented people beat every recombined control on
citizenship, none beat controls named from these lists (Tobias Wenzlaff: M = 0.82, p = 0.5).

When. Only where the extract's own names tell origin (`names_follow_origin`): its people of
that country bear such names more often than everyone else. In the real world they do (bundled
sample: 73 % of its Germans against 35 % of the others, 38 % of its French against 5 %); in a
world whose names were drawn at random across countries — the planted test world ("Grażyna
Peña", British) — they do not (18 % against 16 %), and there the controls must come from that
world's own names, as before.
"""

from __future__ import annotations

import functools
import math
from importlib import import_module

import pandas as pd

from wikimem_platform.labels import fold
from wikimem_platform.vocabulary import FEMALE, MALE

# Country of citizenship (Wikidata id) -> Faker locales whose person names are written in Latin
# letters (an English-language label of a Russian or Japanese person is a transliteration, which
# those locales' names are not). Countries missing here keep the extract's recombined names.
NAME_LOCALES: dict[str, tuple[str, ...]] = {
    "Q183": ("de_DE",), "Q40": ("de_AT",), "Q39": ("de_CH", "fr_CH"), "Q142": ("fr_FR",), "Q31": ("nl_BE", "fr_BE"),
    "Q55": ("nl_NL",), "Q29999": ("nl_NL",), "Q38": ("it_IT",), "Q29": ("es_ES",), "Q45": ("pt_PT",), "Q155": ("pt_BR",), "Q36": ("pl_PL",),
    "Q213": ("cs_CZ",), "Q214": ("sk_SK",), "Q28": ("hu_HU",), "Q218": ("ro_RO",), "Q224": ("hr_HR",), "Q215": ("sl_SI",),
    "Q35": ("da_DK",), "Q34": ("sv_SE",), "Q20": ("no_NO",), "Q33": ("fi_FI",), "Q191": ("et_EE",), "Q211": ("lv_LV",),
    "Q37": ("lt_LT",), "Q27": ("en_IE", "ga_IE"), "Q145": ("en_GB",), "Q30": ("en_US",), "Q664": ("en_NZ",),
    "Q43": ("tr_TR",), "Q96": ("es_MX",), "Q414": ("es_AR",), "Q298": ("es_CL",), "Q739": ("es_CO",), "Q881": ("vi_VN",),
    "Q252": ("id_ID",), "Q1033": ("en_NG", "yo_NG", "ig_NG", "ha_NG"), "Q189": ("is_IS",), "Q114": ("en_KE", "sw"),
    "Q843": ("en_PK",), "Q227": ("az_AZ",), "Q668": ("en_IN",),
}
# The English names a requester writes for these countries in a facts file ("country of
# citizenship: Poland"), so that a country given in words has the name lists a QID has: Wikidata's
# English label first, then the usual short forms (`subject_requests.values.resolve_item_labels`).
COUNTRY_LABELS: dict[str, tuple[str, ...]] = {
    "Q183": ("Germany", "Federal Republic of Germany"), "Q40": ("Austria",), "Q39": ("Switzerland",),
    "Q142": ("France",), "Q31": ("Belgium",), "Q55": ("Netherlands", "the Netherlands", "Holland"),
    "Q29999": ("Kingdom of the Netherlands",),
    "Q38": ("Italy",), "Q29": ("Spain",), "Q45": ("Portugal",), "Q155": ("Brazil",), "Q36": ("Poland",),
    "Q213": ("Czech Republic", "Czechia"), "Q214": ("Slovakia",), "Q28": ("Hungary",), "Q218": ("Romania",),
    "Q224": ("Croatia",), "Q215": ("Slovenia",), "Q35": ("Denmark",), "Q34": ("Sweden",), "Q20": ("Norway",),
    "Q33": ("Finland",), "Q191": ("Estonia",), "Q211": ("Latvia",), "Q37": ("Lithuania",),
    "Q27": ("Ireland", "Republic of Ireland"), "Q145": ("United Kingdom", "UK", "Great Britain", "Britain"),
    "Q30": ("United States of America", "United States", "USA", "US", "America"), "Q664": ("New Zealand",),
    "Q43": ("Turkey", "Türkiye"), "Q96": ("Mexico",), "Q414": ("Argentina",), "Q298": ("Chile",),
    "Q739": ("Colombia",), "Q881": ("Vietnam", "Viet Nam"), "Q252": ("Indonesia",), "Q1033": ("Nigeria",),
    "Q189": ("Iceland",), "Q114": ("Kenya",), "Q843": ("Pakistan",), "Q227": ("Azerbaijan",), "Q668": ("India",),
}
# The lists' names in Faker's locales, and whose names each holds (pl_PL keeps its surnames in
# `unisex_last_names` and `male_last_names`).
FIRST_NAME_LISTS = (("first_names_male", (MALE,)), ("first_names_female", (FEMALE,)), ("first_names", ()))
LAST_NAME_LISTS = (("last_names_male", (MALE,)), ("male_last_names", (MALE,)), ("last_names_female", (FEMALE,)),
                   ("female_last_names", (FEMALE,)), ("unisex_last_names", (MALE, FEMALE)), ("last_names", ()))
# A world's names follow origin when a country's people bear its typical names more often than
# everyone else: a one-sided binomial test at this level (`names_follow_origin`). Bundled sample:
# Germans 8 of 11 against 35 % of the others (the German first-name list is broad; p = 0.012),
# French 11 of 29 against 5 % (p = 3e-8); planted world: Britons 2 of 11 against 16 % (p = 0.56).
# A world with shuffled names passes it for a country 5 % of the time at most.
MAX_CHANCE = 0.05
# Fewer people of a country than this say nothing either way: the lists are used.
MIN_PEOPLE_TO_JUDGE = 3


@functools.lru_cache(maxsize=None)
def country_names(origin: str | None) -> tuple[dict[str | None, tuple[str, ...]], dict[str | None, tuple[str, ...]]] | None:
    """({gender id or None: first names}, {gender id or None: surnames}) typical of the country,
    sorted (Polish surnames have a male and a female form); None where no locale is known or
    installed."""
    first: dict[str | None, set[str]] = {MALE: set(), FEMALE: set(), None: set()}
    last: dict[str | None, set[str]] = {MALE: set(), FEMALE: set(), None: set()}
    for locale in NAME_LOCALES.get(origin or "", ()):
        try:
            provider = import_module(f"faker.providers.person.{locale}").Provider
        except ModuleNotFoundError:
            continue
        for names, attributes in ((first, FIRST_NAME_LISTS), (last, LAST_NAME_LISTS)):
            for attribute, genders in attributes:
                listed = _listed(provider, attribute)
                for gender in {*genders, None}:
                    names[gender] |= listed
    if not first[None] or not last[None]:
        return None
    return ({gender: tuple(sorted(n)) for gender, n in first.items()},
            {gender: tuple(sorted(n)) for gender, n in last.items()})


def _listed(provider: type, attribute: str) -> set[str]:
    """A list the locale itself defines (a tuple, or a dict of names to weights); not Faker's
    placeholders ("John", "Jane", "Doe") inherited from its base person provider."""
    from faker.providers.person import Provider as Base

    owner = next((cls for cls in provider.__mro__ if attribute in vars(cls)), None)
    names = vars(owner)[attribute] if owner is not None and owner is not Base else ()
    return {str(n) for n in names} if isinstance(names, (list, tuple, dict, set, frozenset)) else set()


def names_follow_origin(parts: pd.DataFrame, origin: str | None) -> bool:
    """Whether the extract's names tell this country (`controls.name_parts`, with its folded first
    and last tokens): its people bear a first name or surname of the country's lists more often
    than everyone else in the extract does, beyond chance (one-sided binomial tail at most
    MAX_CHANCE), or are too few to tell (MIN_PEOPLE_TO_JUDGE). False where the country has no
    lists. In a world whose names were drawn across countries, its people hit the lists no more
    often than others: the planted world's Britons 2 of 11 against 16 % of everyone else."""
    if country_names(origin) is None:
        return False
    chance = origin_chance(parts, origin)
    return chance is None or chance <= MAX_CHANCE


def world_follows_origin(parts: pd.DataFrame) -> bool:
    """Whether the extract's names tell origin at all, over every country with lists and at least
    MIN_PEOPLE_TO_JUDGE people: Fisher's combination of their one-sided tests (`origin_chance`)
    at MAX_CHANCE. For a country with too few people to draw its names from the extract, whose own
    test has little power (the bundled sample's 11 Argentines), the world decides: the bundled
    sample's names tell origin, the planted world's (names drawn across countries) do not."""
    from scipy.stats import chi2

    chances = [c for origin in parts["origin"].dropna().unique() if (c := origin_chance(parts, origin)) is not None]
    if not chances:
        return False
    statistic = -2.0 * sum(math.log(max(c, 1e-300)) for c in chances)
    return float(chi2.sf(statistic, 2 * len(chances))) <= MAX_CHANCE


def origin_chance(parts: pd.DataFrame, origin: str | None) -> float | None:
    """The one-sided binomial tail of `names_follow_origin` (the chance that the country's people
    bear its listed names as often as they do if names did not follow origin); None where the
    country has no lists or fewer than MIN_PEOPLE_TO_JUDGE people."""
    from scipy.stats import binom

    if country_names(origin) is None:
        return None
    first, last = _folded(origin)
    hits = (parts["first_key"].isin(first) | parts["last_key"].isin(last)).to_numpy()
    mine = (parts["origin"] == origin).to_numpy()
    others = parts["origin"].notna().to_numpy() & ~mine
    n = int(mine.sum())
    if n < MIN_PEOPLE_TO_JUDGE:
        return None
    base = float(hits[others].mean()) if others.any() else 0.0
    return float(binom.sf(int(hits[mine].sum()) - 1, n, base))


@functools.lru_cache(maxsize=None)
def _folded(origin: str) -> tuple[frozenset[str], frozenset[str]]:
    first, last = country_names(origin)
    return frozenset(fold(n) for n in first[None]), frozenset(fold(n) for n in last[None])


def gender_of(first_name: str, origin: str | None) -> str | None:
    """MALE or FEMALE where the country's lists hold the first name for one gender only ("Brianna"
    in the United States' female names); None otherwise. For a person whose facts do not state
    it: occupations are guessed differently for men and women, so controls follow the name."""
    lists = country_names(origin)
    if lists is None:
        return None
    first = lists[0]
    male, female = first_name in first[MALE], first_name in first[FEMALE]
    return MALE if male and not female else FEMALE if female and not male else None


def gender_anywhere(first_name: str) -> str | None:
    """MALE or FEMALE where the countries whose lists hold the first name hold it for one gender at
    least three times as often as for the other ("Maria": female in most, male in a few; "Jean":
    male in France, female in English-speaking lists, so None); None where it is not listed. For a
    person whose country has no lists, or whose name is not typical of it: a German or French
    sentence about them must still agree with them ("née", "Schauspielerin")."""
    male, female = _first_names_anywhere()
    key = fold(first_name)
    n_male, n_female = male.get(key, 0), female.get(key, 0)
    if n_male >= 3 * n_female and n_male:
        return MALE
    if n_female >= 3 * n_male and n_female:
        return FEMALE
    return None


@functools.lru_cache(maxsize=1)
def _first_names_anywhere() -> tuple[dict[str, int], dict[str, int]]:
    """Folded first name -> in how many countries' lists it is male, and female."""
    male: dict[str, int] = {}
    female: dict[str, int] = {}
    for origin in NAME_LOCALES:
        lists = country_names(origin)
        if lists is None:
            continue
        for counts, gender in ((male, MALE), (female, FEMALE)):
            for key in {fold(n) for n in lists[0][gender]}:
                counts[key] = counts.get(key, 0) + 1
    return male, female


def pools(origin: str | None, k: int, gender: str | None) -> list[list[str]] | None:
    """Tokens for each of a k-token name's positions — first names (of the person's gender where
    known) first and in the middle, surnames last — or None where the country has no lists or
    k < 2 (a one-word name has no first name and surname to draw)."""
    lists = country_names(origin)
    if lists is None or k < 2:
        return None
    first, last = lists
    given = list(first[gender] or first[None]) if gender in (MALE, FEMALE) else list(first[None])
    family = list(last[gender] or last[None]) if gender in (MALE, FEMALE) else list(last[None])
    return [given, *([given] * (k - 2)), family]
