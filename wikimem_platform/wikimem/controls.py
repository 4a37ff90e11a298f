"""Invented-person controls: what the model would say about *anyone* with a person's facts.

A fact ranked first in some wordings is not yet evidence that the model knows the person: with
~100 candidates and 11 wordings that happens by chance for about one fact in ten, and a value
can be guessed from the person's other facts or from the shape of the name. So each audited
person gets N invented people (LMP2's made-up-name controls) who carry the person's facts and
go through the same canaries and candidates; the person's result is then read against theirs:

- `invented_names`: names of the person's shape (number of name tokens): first names (of the
  person's gender where known) and surnames typical of the person's country of citizenship
  (`typical_names`: the Faker library's lists) where the extract's own names follow origin;
  otherwise each token taken at its position from real labels of the extract, from people of
  the person's origin where the extract has enough of them. No control equals an existing label or
  alias (accents and case ignored) and none reuses a token of the person's own name (a shared
  surname can name the person, as a look-alike that kept one does). The draw is seeded by the
  shape, origin (and gender), not by the person, so people of the same shape and origin share controls,
  and with them the controls' sentences in the model's sentence cache.
- `control_rows`: the controls' canaries and candidates — the person's own rows under each
  invented name (ids from the name, so the same control has the same id in every request; per
  person in a cohort, where people of one shape and origin draw the same names);
  `control_people`: the controls as subjects with the person's facts (for an invented person read
  *as a person is*, with look-alike names: the held-out probes of a false-positive rate).
- `compare_with_controls`: per fact, the share of controls at least as extreme as the person
  (M first, then the summed truth rank), the empirical p-value with the +1 correction, the
  verdict at level alpha, and each verdict's false-positive rate measured on held-out probes
  (more invented people, each read against the controls as the person is).

What is compared, and what it costs. The controls are themselves the calibration of the name,
so they need no look-alike names (S(h)) of their own: the person and the controls are compared
on the generic-subject-calibrated score (`COMPARED_ALPHA` = 0: NLL(h0, v) - NLL(h, v)), one
sentence per control, wording and value, while the person's M that sets the verdict's level
keeps WikiMem's S(h) calibration. Only a fact the model ranks first in at least one wording
(M > 0) has evidence to test (`facts_to_compare`); the others are "no evidence" without any
control. A control's sentences depend on its name, the property, the wording and the value —
not on the person — except for the contextualized wording (which states the copied facts) and
the person's true value: people of the same name shape and origin share all the rest through
the model's sentence cache, as they share the h0 sentences. Two more savings, both exact
(`subject_requests.audit`): controls come in doubling rounds (`rounds`) and a fact stops once
its outcome is `settled`; after the first control, each is scored first on a `shortlist` of
values and gets the others only when the shortlist cannot show it weaker than the person.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wikimem_platform.labels import fold
from wikimem_platform.reference import bundled
from wikimem_platform.reference.value_forms import is_form
from wikimem_platform.vocabulary import CONTEXTUALIZED_KINDS
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem import typical_names
from wikimem_platform.wikimem.memorization import evaluate_wikimem, WikiMemResult

# The fewest controls at which a p-value with the +1 correction can reach 0.05: 1 / (19 + 1).
DEFAULT_N_CONTROLS = 19
# A fact that beats the planned controls without a control's margin (`has_room`) gets more, doubling,
# up to this many (a request's default; a cohort audit keeps its n): p can then reach 0.01.
MAX_CONTROLS = 99
# Names that keep one token of the person's (`kin_names`), per token kept: the person's name prior.
KIN_PER_TOKEN = 4
# Held-out invented people that measure each verdict's false-positive rate (see compare_with_controls).
DEFAULT_N_PROBES = 19
DEFAULT_ALPHA = 0.05
# The score the person and the controls are compared on: calibrated by the generic subject only
# (memorization.calibrated_score with alpha = 0), so controls need no look-alike names; over
# every wording, the contextualized one (which states the copied facts) included.
COMPARED_ALPHA = 0.0
# After the first control (every value), a control is first scored on the truth and this many
# values the first one ranks highest (`shortlist`); only one these cannot settle gets every value.
SHORTLIST = 10
M_THRESHOLD = 0.8  # the paper's threshold flag (memorization.M_THRESHOLD)
CITIZENSHIP = "P27"
GENDER = "P21"
# Origin is used when the extract holds at least this many labels of the person's shape from
# it; otherwise names of that shape from everyone (a country with three people in the sample
# gives too few tokens to invent 19 names from).
MIN_ORIGIN_LABELS = 20
CONTROL_ID_PREFIX = "control-"
KIN_ID_PREFIX = "kin-"
KIN_FIRST_PREFIX, KIN_LAST_PREFIX = KIN_ID_PREFIX + "f-", KIN_ID_PREFIX + "l-"  # the first name kept / the surname
# Stored beside the controls' rows (a request's control canaries, candidates and scores), which of
# them are controls and which the person's kin names (`kin_names`, read only for the name prior).
CONTROL_ROLE, CONTROL, KIN, CANDIDATE = "control_role", "control", "name kin", "candidate control"
# On the kin canaries: whether the fact's name prior can be the name's bearers' (`name_prior_backing`).
NAME_PRIOR_BACKED = "name_prior_backed"
# A name token a control may reuse: letters, joined by hyphens or apostrophes ("Jean-Paul",
# "O'Neill"); not "Jr.", "Buckley," or "II".
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")

MEMORIZED = "memorized"
WEAK = "weakly associated"
NO_EVIDENCE = "no evidence beyond what the model would say of anyone with these facts"
VERDICTS = (MEMORIZED, WEAK, NO_EVIDENCE)

# controls_M_*: the controls' M on the compared score (an upper bound for a control settled on
# the shortlist); n_controls: the controls scored for the fact (fewer than asked once settled).
COMPARISON_COLUMNS = [
    "subject_qid", "property", "M", "M_compared", "summed_truth_rank", "n_controls", "controls_as_extreme", "p_value",
    "verdict", "alpha", "p_family", "family", "controls_M_mean", "controls_M_max", "controls_at_threshold",
    "controls_rank_median", "n_probes", "fpr_memorized", "fpr_weak",
]


def name_tokens(name: str) -> list[str]:
    return unicodedata.normalize("NFC", str(name)).split()


def name_parts(humans: pd.DataFrame, claims: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per labelled human: tokens of the label, their count (the shape), origin (the
    first country of citizenship, or None) and the folded first and last tokens
    (`typical_names.names_follow_origin`)."""
    labelled = humans.dropna(subset=["label"])
    origin: dict[str, str] = {}
    if claims is not None and len(claims):
        citizenship = claims[claims["property"] == CITIZENSHIP]
        origin = citizenship.drop_duplicates("qid").set_index("qid")["value"].to_dict()
    tokens = [tuple(name_tokens(label)) for label in labelled["label"]]
    return pd.DataFrame({"qid": labelled["qid"].tolist(), "tokens": tokens,
                         "n_tokens": [len(t) for t in tokens],
                         "origin": [origin.get(q) for q in labelled["qid"]],
                         "first_key": [fold(t[0]) if t else "" for t in tokens],
                         "last_key": [fold(t[-1]) if t else "" for t in tokens]})


def taken_names(humans: pd.DataFrame) -> set[str]:
    """Every label and alias of the extract, folded: no control may be a real person's name."""
    taken = {fold(label) for label in humans["label"].dropna()}
    if "aliases" in humans.columns:
        for aliases in humans["aliases"]:
            if isinstance(aliases, (list, tuple, np.ndarray)):
                taken.update(fold(a) for a in aliases if isinstance(a, str))
    return taken


def _rng(*key) -> np.random.Generator:
    digest = hashlib.sha256(repr(key).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _position_pools(labels: pd.DataFrame, k: int) -> list[list[str]]:
    """Tokens seen at each of k positions (first, middle ones pooled, last), sorted."""
    first = {t[0] for t in labels["tokens"]}
    last = {t[-1] for t in labels["tokens"]}
    middle = {tok for t in labels["tokens"] for tok in t[1:-1]}
    pools = []
    for position in range(k):
        seen = first if position == 0 else last if position == k - 1 else middle
        pools.append(sorted(t for t in seen if _WORD.fullmatch(t)))
    return pools


def invented_names(name: str, n: int, parts: pd.DataFrame, taken: set[str], *, origin: str | None = None,
                   avoid: Iterable[str] = (), seed: int = 0, gender: str | None = None,
                   typical: bool | None = None, memo: dict | None = None) -> list[str]:
    """`n` invented names of `name`'s shape: first names (of `gender`, from the facts or else from
    the first name, where known) and surnames typical of the person's country (`typical_names`)
    where the extract's names follow origin, else each token drawn from real labels of the
    extract at its position.

    parts: `name_parts` of the extract; taken: `taken_names` of it (plus anything else no
    control may be called); avoid: the person's name and aliases (their tokens are not reused);
    typical: whether to use the country's typical names (default: whether `parts`' names follow
    origin); memo: a dict kept across the people of one cohort, for the same `parts` — the pools
    depend on the shape, origin and gender only, so they are built once, not per person.
    Raises ValueError, naming the shape, when the extract cannot give n distinct names.
    """
    tokens = name_tokens(name)
    if not tokens:
        raise ValueError("name: empty; a control needs the person's name to copy its shape")
    k = max(len(tokens), 1)
    memo = {} if memo is None else memo
    banned = {fold(t) for own in [name, *avoid] for t in name_tokens(own)}
    own = {fold(own) for own in [name, *avoid]}
    for pools, key, source in _pool_choices(tokens, parts, origin, gender, typical, memo):
        if source == TYPICAL_SOURCE:
            try:
                return _draw(pools, n, (taken, own), banned, _rng(*key, seed), k, source)
            except ValueError:
                continue  # lists too short for n names of this shape: the extract's names, as elsewhere
        if any(not pool for pool in pools):
            raise ValueError(f"name: no real names of {k} token(s) in the extract to invent controls from")
        return _draw(pools, n, (taken, own), banned, _rng(*key, seed), k, source)
    raise AssertionError("the extract's pools are always a choice")  # pragma: no cover


TYPICAL_SOURCE, EXTRACT_SOURCE = "the country's name lists", "the extract"


def _pool_choices(tokens: Sequence[str], parts: pd.DataFrame, origin: str | None, gender: str | None,
                  typical: bool | None, memo: dict) -> list[tuple[Sequence[Sequence[str]], tuple, str]]:
    """The name pools a control of this shape may come from, in the order tried — the country's
    lists where they are used (`follows_origin`), then the extract's tokens — each with the key of
    its seeded draw and its source (`invented_names`, `kin_names`)."""
    k = max(len(tokens), 1)
    if typical is None:
        typical = follows_origin(parts, origin, memo)
    gender = gender or (typical_names.gender_of(tokens[0], origin) if typical else None)
    choices = []
    pools = _typical_pools(origin, k, gender) if typical else None
    if pools is not None:
        choices.append((pools, ("controls-typical", k, origin, gender), TYPICAL_SOURCE))
    key = ("extract pools", k, origin)
    if key not in memo:
        memo[key] = _extract_pools(parts, k, origin)
    pools, used_origin = memo[key]
    choices.append((pools, ("controls", k, used_origin), EXTRACT_SOURCE))
    return choices


def kin_names(name: str, n_each: int, parts: pd.DataFrame, taken: set[str], *, origin: str | None = None,
              avoid: Iterable[str] = (), seed: int = 0, gender: str | None = None, typical: bool | None = None,
              memo: dict | None = None) -> tuple[list[str], list[str]]:
    """Names that keep one token of the person's name and draw the others from the pools the
    controls come from (`_pool_choices`): (`n_each` with the person's first name, `n_each` with
    their surname) — "Marek Nowak", "Tomasz Zieliński" for "Marek Zieliński". What the model makes
    of them is what the person's *name* tells it — its origin, its gender — without the person:
    the name prior the controls must share (`name_prior`). None for a one-word name; none is a
    real person's name or the person's own. Seeded by the name, so a re-run draws the same."""
    tokens = name_tokens(name)
    if len(tokens) < 2 or n_each <= 0:
        return [], []
    memo = {} if memo is None else memo
    own = {fold(own) for own in [name, *avoid]}
    usable = [(pools, key) for pools, key, _ in _pool_choices(tokens, parts, origin, gender, typical, memo)
              if all(pools)]
    if not usable:
        return [], []
    pools, key = usable[0]
    rng = _rng("kin", *key, fold(name), seed)
    out: list[str] = []
    sides = []
    for kept in (0, len(tokens) - 1):  # the first name kept, then the surname
        drawn: list[str] = []
        for _ in range(200 * n_each):
            if len(drawn) == n_each:
                break
            picks = [tokens[i] if i == kept else pool[int(rng.integers(len(pool)))] for i, pool in enumerate(pools)]
            candidate = " ".join(picks)
            folded = fold(candidate)
            if folded in taken or folded in own or candidate in drawn or candidate in out \
                    or any(fold(picks[i]) == fold(tokens[i]) for i in range(len(tokens)) if i != kept):
                continue
            drawn.append(candidate)
        out += drawn
        sides.append(drawn)
    return sides[0], sides[1]


def follows_origin(parts: pd.DataFrame, origin: str | None, memo: dict) -> bool:
    """Whether to draw the controls from the country's name lists, once per origin and memo
    (`invented_names`): where its people bear them (`typical_names.names_follow_origin`), and where
    the extract has too few of them (under MIN_ORIGIN_LABELS) to draw names of that origin from
    its own labels and the world's names tell origin (`typical_names.world_follows_origin`) —
    rather than names from everywhere, which a name typical of the country beats on it."""
    key = ("follows origin", origin)
    if key not in memo:
        follows = typical_names.names_follow_origin(parts, origin)
        if not follows and typical_names.country_names(origin) is not None \
                and int((parts["origin"] == origin).sum()) < MIN_ORIGIN_LABELS:
            if "world follows origin" not in memo:
                memo["world follows origin"] = typical_names.world_follows_origin(parts)
            follows = memo["world follows origin"]
        memo[key] = follows
    return memo[key]


@functools.lru_cache(maxsize=None)
def _typical_pools(origin: str | None, k: int, gender: str | None) -> tuple[tuple[str, ...], ...] | None:
    """The country's lists per position (`typical_names.pools`), single words only."""
    pools = typical_names.pools(origin, k, gender)
    return None if pools is None else tuple(tuple(sorted(t for t in pool if _WORD.fullmatch(t))) for pool in pools)


def _extract_pools(parts: pd.DataFrame, k: int, origin: str | None) -> tuple[list[list[str]], str | None]:
    """Tokens per position from the extract's names of shape k (of the person's origin where it
    has MIN_ORIGIN_LABELS of them), and the origin used. They do not depend on the person, only
    which draws are skipped does: people of the same shape and origin get the same controls, bar
    those with their tokens."""
    same_shape = parts[parts["n_tokens"] == k] if k > 1 else parts[parts["n_tokens"] >= 1]
    if k > 1 and len(same_shape) < MIN_ORIGIN_LABELS:  # rare shape: tokens from two-token-or-longer names
        same_shape = parts[parts["n_tokens"] >= 2]
    used_origin = None
    if origin is not None:
        local = same_shape[same_shape["origin"] == origin]
        if len(local) >= MIN_ORIGIN_LABELS:
            same_shape, used_origin = local, origin
    pools = _position_pools(same_shape, k) if k > 1 else [
        sorted({t for ts in same_shape["tokens"] for t in ts if _WORD.fullmatch(t)})]
    return pools, used_origin


def _draw(pools: Sequence[Sequence[str]], n: int, forbidden: tuple[set[str], ...], banned: set[str],
          rng: np.random.Generator, k: int, source: str) -> list[str]:
    """n distinct names, a token from each pool, none in a forbidden set (the extract's names, the
    person's own: not merged, the first is large), none with a banned token."""
    out: list[str] = []
    seen: set[str] = set()
    for _ in range(200 * n if all(pools) else 0):
        if len(out) == n:
            break
        picks = [pool[int(rng.integers(len(pool)))] for pool in pools]
        candidate = " ".join(picks)
        key = fold(candidate)
        folded = {fold(p) for p in picks}
        if any(key in names for names in forbidden) or key in seen or len(folded) < len(picks) or folded & banned:
            continue
        seen.add(key)
        out.append(candidate)
    if len(out) < n:
        raise ValueError(f"name: only {len(out)} invented names of {k} token(s) could be made "
                         f"from {source}; {n} controls were asked for")
    return out


def control_names(subject: pd.DataFrame, facts: pd.DataFrame, humans: pd.DataFrame, claims: pd.DataFrame,
                  n: int, seed: int = 0, *, parts: pd.DataFrame | None = None, taken: set[str] | None = None,
                  memo: dict | None = None, gender: str | None = None) -> list[str]:
    """n invented names for the person (`invented_names`): name parts from the extract,
    or from the bundled sample when the extract cannot give n names of the person's shape (a small
    or planted extract whose every first-name / surname pair is somebody). parts / taken / memo:
    the extract's `name_parts`, `taken_names` and a pool memo, when kept for a cohort.
    gender: the gender the person's sentences agree with (a German or French canary); the controls
    are then of that gender: drawn from the country's lists of it where they are used, and
    otherwise no name whose first name is known to be of the other gender (`typical_names.gender_anywhere`)."""
    label, kwargs, parts, taken, memo = _name_context(subject, facts, humans, claims, seed, parts, taken, memo, gender)
    # with a gender to agree with, more names are drawn and those of the other gender left out
    wanted = n if gender is None else 4 * n
    try:
        names = invented_names(label, wanted, parts, taken, memo=memo, **kwargs)
    except ValueError:
        parts, sample_taken = _sample_name_parts()
        if "bundled sample taken" not in memo:  # the union once per cohort, not once per person
            memo["bundled sample taken"] = taken | sample_taken
        names = invented_names(label, wanted, parts, memo["bundled sample taken"],
                               memo=memo.setdefault("bundled sample", {}), **kwargs)
    fitting = _of_gender(names, gender)
    if len(fitting) < n:
        raise ValueError(f"gender: only {len(fitting)} of {wanted} invented names fit the person's gender; {n} are needed")
    return fitting[:n]


def person_kin(subject: pd.DataFrame, facts: pd.DataFrame, humans: pd.DataFrame, claims: pd.DataFrame,
               n_each: int = KIN_PER_TOKEN, seed: int = 0, *, gender: str | None = None,
               parts: pd.DataFrame | None = None, taken: set[str] | None = None,
               memo: dict | None = None) -> tuple[list[str], list[str]]:
    """`kin_names` of the person (first name kept, surname kept), from the pools `control_names`
    draws their controls from (the bundled sample's where the extract's cannot give the controls),
    of the person's gender where the sentences agree with one; ([], []) for a one-word name.
    parts / taken / memo: as `control_names`'s (one `name_parts` of the extract per plan or cohort)."""
    label, kwargs, parts, taken, memo = _name_context(subject, facts, humans, claims, seed, parts, taken, memo, gender)
    try:
        invented_names(label, 1, parts, taken, memo=memo, **kwargs)  # the extract can give names of this shape
    except ValueError:
        parts, sample_taken = _sample_name_parts()
        if "bundled sample taken" not in memo:
            memo["bundled sample taken"] = taken | sample_taken
        taken, memo = memo["bundled sample taken"], memo.setdefault("bundled sample", {})
    first, last = kin_names(label, 4 * n_each if gender else n_each, parts, taken, memo=memo, **kwargs)
    return first[:n_each], _of_gender(last, gender)[:n_each]  # the first name kept is the person's: their gender


def name_prior_backing(subject: pd.DataFrame, facts: pd.DataFrame, humans: pd.DataFrame, claims: pd.DataFrame,
                       parts: pd.DataFrame | None = None, memo: dict | None = None) -> dict[str, bool]:
    """Per property of the person's facts: whether what the kin names tell the model of its value
    can be a prior the name's *bearers* taught it, rather than the model's memory of the person
    reaching their name's words. Kin keep one word of the person's name; a model that memorized
    "Begoña Mai, born in Tianjin" also leads "Begoña Pfeiffer" there (the planted model: 6 of 11
    members read 16 times had facts the name was taken to explain, all four of one member's). Backed
    where the world's names tell origin (`typical_names.world_follows_origin`: "Giulia" leads to
    Italy because Italians bear it), or where another person of the extract who shares the first
    name or the surname holds the value (a famous namesake the model may know), or where the extract
    cannot tell whether its names follow origin (no country with lists has enough people to judge:
    a prior is then kept, as the safe side for a private person). Unbacked, a name prior above the
    controls is the person's own memory, not evidence against it (`name_priors`)."""
    memo = {} if memo is None else memo
    parts = name_parts(humans, claims) if parts is None else parts
    if "world judged" not in memo:
        memo["world judged"] = any(typical_names.origin_chance(parts, origin) is not None
                                   for origin in parts["origin"].dropna().unique())
    if memo["world judged"] and "world follows origin" not in memo:
        memo["world follows origin"] = typical_names.world_follows_origin(parts)
    properties = list(dict.fromkeys(facts["property"]))
    if not memo["world judged"] or memo["world follows origin"]:
        return dict.fromkeys(properties, True)
    person = subject.iloc[0]
    tokens = name_tokens(str(person["label"]))
    if not tokens:
        return dict.fromkeys(properties, False)
    first, last = fold(tokens[0]), fold(tokens[-1])
    namesakes = set(parts.loc[((parts["first_key"] == first) | (parts["last_key"] == last))
                              & (parts["qid"] != person["qid"]), "qid"])
    held = claims[claims["qid"].isin(namesakes)]
    held = set(zip(held["property"], held["value"].astype(str)))
    return {prop: any((prop, str(v)) in held for v in facts.loc[facts["property"] == prop, "value"])
            for prop in properties}


def _name_context(subject, facts, humans, claims, seed, parts, taken, memo, gender):
    """What every draw of names for a person needs: (label, invented_names' keyword arguments,
    name parts, taken names, memo) — the origin from the citizenship, the gender from the facts."""
    person = subject.iloc[0]
    origin = facts.loc[facts["property"] == CITIZENSHIP, "value"]
    stated = facts.loc[facts["property"] == GENDER, "value"]
    given = person.get("aliases")
    aliases = [a for a in given if isinstance(a, str)] if isinstance(given, (list, tuple, np.ndarray)) else []
    taken = taken_names(humans) if taken is None else taken
    parts = name_parts(humans, claims) if parts is None else parts
    memo = {} if memo is None else memo
    origin = origin.iloc[0] if len(origin) else None
    # whether names tell origin is a property of the person's world (the extract), also when the
    # bundled sample lends the name parts
    kwargs = dict(origin=origin, avoid=aliases, seed=seed,
                  gender=gender or (stated.iloc[0] if len(stated) else None), typical=follows_origin(parts, origin, memo))
    return str(person["label"]), kwargs, parts, taken, memo


def _of_gender(names: list[str], gender: str | None) -> list[str]:
    """The names whose first name is not known to be of the other gender (all of them without one)."""
    if gender is None:
        return names
    other = typical_names.FEMALE if gender == typical_names.MALE else typical_names.MALE
    return [name for name in names if typical_names.gender_anywhere(name_tokens(name)[0]) != other]


@functools.lru_cache(maxsize=1)
def _sample_name_parts() -> tuple[pd.DataFrame, frozenset[str]]:
    """Name parts and taken names of the bundled sample, read once per process (the fallback of
    `control_names`, asked for every person of a small extract)."""

    sample = read_dump(bundled.SAMPLE_DUMP)
    return name_parts(sample.humans, sample.claims), frozenset(taken_names(sample.humans))


def control_id(name: str, of: str | None = None, prefix: str = CONTROL_ID_PREFIX) -> str:
    """The same invented name has the same id in every request (its shards are shared); in a
    cohort, where people of one name shape and origin draw the same names, `of` (the person's
    qid) keeps each person's controls apart. Kin names (`kin_names`) have KIN_ID_PREFIX."""
    base = prefix + hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{base}-of-{of}" if of else base


def control_people(subject: pd.DataFrame, facts: pd.DataFrame, names: Sequence[str]
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(subjects, facts) of the controls: each invented name with a copy of the person's facts
    (claims rows, `qid` replaced); subjects have the person's columns, no aliases or description."""
    person = subject.iloc[0]
    rows = [{**person.to_dict(), "qid": control_id(n), "label": n, "aliases": [], "description": None,
             "control_of": person["qid"]} for n in names]
    subjects = pd.DataFrame(rows, columns=list(dict.fromkeys([*subject.columns, "qid", "label", "aliases", "description", "control_of"])))
    if "in_wikidata" in subjects.columns:
        subjects["in_wikidata"] = False
    copies = [facts.assign(qid=control_id(n)) for n in names]
    control_facts = pd.concat(copies, ignore_index=True) if copies else facts.iloc[:0]
    return subjects, control_facts


def control_rows(canaries: pd.DataFrame, candidates: pd.DataFrame, names: Mapping[str, Sequence[str]],
                 *, per_person_ids: bool = False, prefix: str = CONTROL_ID_PREFIX) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(canaries, candidates) of the controls: each person's own rows with the person's name
    replaced by each invented name — the same wordings (the contextualized one states the copied
    facts), the same true values and counterfactuals — without aliases or look-alike names (the
    controls are compared on the generic-subject score, `COMPARED_ALPHA`).

    names: person qid -> invented names, in the order they are to be scored. Rows carry
    `control_of` (the person) and `control_rank` (the name's place in that order).
    per_person_ids: ids of the form `control_id(name, of=person)`, needed when several people
    share names (a cohort); a request keeps `control_id(name)`, the same in every request."""
    canary_frames, candidate_frames = [], []
    for person, chosen in names.items():
        own_canaries = canaries[canaries["subject_qid"] == person]
        own_candidates = candidates[candidates["subject_qid"] == person]
        for rank, name in enumerate(chosen):
            qid = control_id(name, person if per_person_ids else None, prefix)
            canary_frames.append(own_canaries.assign(
                subject_qid=qid, subject=name, subject_aliases=[[] for _ in range(len(own_canaries))],
                subject_similar=[[] for _ in range(len(own_canaries))], control_of=person, control_rank=rank))
            candidate_frames.append(own_candidates.assign(subject_qid=qid, control_of=person))
    extra = {"control_of": pd.Series(dtype=str), "control_rank": pd.Series(dtype="int64")}
    out_canaries = (pd.concat(canary_frames, ignore_index=True) if canary_frames
                    else canaries.iloc[:0].assign(**extra))
    out_candidates = (pd.concat(candidate_frames, ignore_index=True) if candidate_frames
                      else candidates.iloc[:0].assign(control_of=pd.Series(dtype=str)))
    return out_canaries, out_candidates


def controls_of(control_canaries: pd.DataFrame) -> dict[str, str]:
    """control qid -> the person it is a control of (`control_rows`)."""
    if control_canaries is None or not len(control_canaries):
        return {}
    return dict(zip(control_canaries["subject_qid"], control_canaries["control_of"]))


# --------------------------------------------------------------------------- the person against them

def _as_extreme(m: np.ndarray, rank: np.ndarray, m0, rank0) -> np.ndarray:
    """Controls at least as extreme as (m0, rank0) — scalars, or one per control: higher M, or the
    same M and a truth summed rank at least as good (1 = first). A missing rank counts as last; a
    missing m0 (no person to compare with) is never matched."""
    rank = np.where(np.isnan(rank), np.inf, rank)
    m0 = np.asarray(m0, dtype=float)
    rank0 = np.asarray(np.nan if rank0 is None else rank0, dtype=float)
    rank0 = np.where(np.isnan(rank0), np.inf, rank0)
    return (m > m0 + 1e-12) | ((np.abs(m - m0) <= 1e-12) & (rank <= rank0))


def verdict(m: float, p_value: float, alpha: float = DEFAULT_ALPHA, m_threshold: float = M_THRESHOLD,
            p_family: float | None = None) -> str:
    """memorized: M >= threshold and the adjusted p (`family_adjusted`, over the person's compared
    facts; None: the fact alone) <= alpha; weakly associated: p <= alpha and 0 < M (ranked first in some
    wordings, more than invented people are), below the threshold or beyond the controls for this
    fact only; otherwise no evidence beyond the controls — M = 0 included, whatever the ranks."""
    if m > 0 and p_value <= alpha:
        strong = m >= m_threshold and (p_value if p_family is None else p_family) <= alpha
        return MEMORIZED if strong else WEAK
    return NO_EVIDENCE


def family_adjusted(p_values: Iterable[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values, in the given order (`scipy.stats.false_discovery_control`):
    the i-th smallest of m times m / i, kept monotone. Calling a fact memorized when its adjusted p
    is at most alpha keeps the expected share of a letter's "memorized" facts that are chance at
    alpha, and for a person the model knows nothing of (every fact null) the chance that *any*
    fact is called memorized — however many were compared. Unlike a family-wise correction it does
    not cost a person with many memorized facts their verdicts. [0.0375, 1.0] -> [0.075, 1.0];
    [0.01, 0.04, 0.03] -> [0.03, 0.04, 0.04]."""
    from scipy.stats import false_discovery_control

    p = np.asarray(list(p_values), dtype=float)
    return false_discovery_control(p, method="bh").tolist() if len(p) else []


def p_value(as_extreme: int, n_controls: int) -> float:
    """Empirical p-value with the +1 correction (Davison & Hinkley; North et al. 2002): the person
    counts as one of the exchangeable draws, so p >= 1 / (n + 1) and never 0."""
    return (1 + as_extreme) / (1 + n_controls)


def compared(scores: pd.DataFrame, embed=None, value_aliases=None) -> WikiMemResult:
    """The compared statistic of a scores table (the person's or controls'): WikiMem at
    `COMPARED_ALPHA` over every wording, the contextualized one included."""
    return evaluate_wikimem(scores, alpha=COMPARED_ALPHA, embed=embed, value_aliases=value_aliases,
                            include_contextualized=True)


def shortlist(scored: WikiMemResult, of: Mapping[str, str], k: int = SHORTLIST) -> dict[tuple[str, str], set[str]]:
    """Per (person, property) — `of` maps a control to its person: the true values and the k
    wrong values a control scored on every value puts highest (compared score summed over
    wordings) — the likeliest to beat the truth for the person's other controls too.

    Exact, not an approximation: a control's M and summed rank on the truth + shortlist are
    bounds (M can only fall and the rank only grow with more values), so a control they show to
    be less extreme than the person is less extreme; any other gets every value
    (`control_scoring.score_controls`)."""
    summed = scored.summed.assign(_person=lambda f: f["subject_qid"].map(of))
    out = {}
    for (person, prop), block in summed.groupby(["_person", "property"]):
        wrong = block[~block["is_g"]].sort_values("s_sum", ascending=False)["value"].head(k)
        out[(person, prop)] = set(block.loc[block["is_g"], "value"]) | set(wrong)
    return out


def facts_to_compare(pairs: pd.DataFrame) -> list[str]:
    """Properties of `pair_metrics` rows that need controls: those with M > 0. A fact the model
    never ranks first has no evidence to test, and its verdict is "no evidence" without any."""
    return sorted(set(pairs.loc[pairs["M"].to_numpy(dtype=float) > 0, "property"]))


def with_compared(levels: pd.DataFrame, compared: pd.DataFrame) -> pd.DataFrame:
    """`levels` (pair_metrics with WikiMem's calibration: M sets the verdict's level) with the
    compared statistic of the same pairs (`COMPARED_ALPHA`): M_compared and summed_truth_rank."""
    keys = ["subject_qid", "property"]
    other = compared[keys + ["M", "summed_truth_rank"]].rename(columns={"M": "M_compared"})
    return levels.drop(columns=["summed_truth_rank", "M_compared"], errors="ignore").merge(other, on=keys, how="left")


def rounds(n: int) -> list[int]:
    """How many controls are scored after each round, doubling: 1, 3, 7, 15, ..., n. A fact stops
    as soon as its outcome is settled (`settled`), so a fact that invented people match costs a
    few controls, and only one that beats them all costs n (Besag & Clifford 1991)."""
    out, size = [], 1
    while not out or out[-1] < n:
        out.append(min(n, (out[-1] if out else 0) + size))
        size *= 2
    return out


def extension_rounds(n: int, max_controls: int) -> list[int]:
    """After the n planned controls, how many are scored after each further round, doubling
    (2n + 1: 39, 79, ...) up to max_controls: for facts that beat the planned controls without room
    (`has_room`). [] where max_controls <= n."""
    out, size = [], n
    while size < max_controls:
        size = min(max_controls, 2 * size + 1)
        out.append(size)
    return out


def has_room(as_extreme: int, n_controls: int, alpha: float = DEFAULT_ALPHA) -> bool:
    """p <= alpha with more than one control's margin: still p <= alpha had one more control been
    as extreme, (k + 2) / (n + 1) <= alpha. With 19 controls and alpha = 0.05 a fact that beats
    all of them is at the floor (p = 0.05) and has none: one control fewer beaten and it is not
    evidence. Such a fact gets more controls (`extension_rounds`, up to MAX_CONTROLS) before it
    is called: with 39 that beat none, p = 0.025 and the margin holds."""
    return p_value(as_extreme + 1, n_controls) <= alpha


def p_interval(as_extreme: int, n_controls: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson interval of the chance that an invented person with these facts does at least
    as well as the person, from k of n controls: how uncertain the p-value (k + 1) / (n + 1) is
    (with 19 controls and k = 0: 0 to 0.18)."""
    from scipy.stats import beta

    if n_controls <= 0:
        return float("nan"), float("nan")
    tail = (1 - level) / 2
    low = 0.0 if as_extreme == 0 else float(beta.ppf(tail, as_extreme, n_controls - as_extreme + 1))
    high = 1.0 if as_extreme == n_controls else float(beta.ppf(1 - tail, as_extreme + 1, n_controls - as_extreme))
    return low, high


def settled(as_extreme: int, n_controls: int, alpha: float = DEFAULT_ALPHA) -> bool:
    """True once `as_extreme` controls already put p above alpha with all `n_controls` scored:
    (1 + k) / (1 + n) > alpha. The remaining controls cannot change the verdict; the p-value
    then reported is (1 + k) / (1 + scored), larger still (with 19 controls and alpha = 0.05,
    one control as extreme settles it: p >= 0.10)."""
    return p_value(as_extreme, n_controls) > alpha


def as_extreme(person_pairs: pd.DataFrame, control_pairs: pd.DataFrame, of: Mapping[str, str] | None = None) -> pd.Series:
    """Per control pair (control_pairs' index): at least as extreme as its person's pair of the
    same property (on the compared statistic)? One person: `of` None; several (a cohort): `of`
    maps each control's qid to its person's."""
    who = person_pairs["subject_qid"].astype(str).to_numpy() if of is not None else np.full(len(person_pairs), "")
    level = "M_compared" if "M_compared" in person_pairs else "M"
    reference = pd.DataFrame({
        "_who": who, "property": person_pairs["property"].to_numpy(),
        "_m0": person_pairs[level].to_numpy(dtype=float),
        "_r0": (person_pairs["summed_truth_rank"].to_numpy(dtype=float) if "summed_truth_rank" in person_pairs
                else np.full(len(person_pairs), np.nan)),
    }).drop_duplicates(["_who", "property"])
    theirs = (control_pairs["subject_qid"].map(of).fillna("").astype(str).to_numpy() if of is not None
              else np.full(len(control_pairs), ""))
    keys = pd.DataFrame({"_who": theirs, "property": control_pairs["property"].to_numpy()})
    joined = keys.merge(reference, on=["_who", "property"], how="left")
    m, rank = _m_and_rank(control_pairs)
    return pd.Series(_as_extreme(m, rank, joined["_m0"].to_numpy(), joined["_r0"].to_numpy()),
                     index=control_pairs.index, dtype=bool)


def _m_and_rank(pairs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The compared M (M_compared where given, else M) and the truth's summed rank of
    `pair_metrics` rows (rank NaN when not computed)."""
    m = pairs["M_compared" if "M_compared" in pairs else "M"].to_numpy(dtype=float)
    rank = pairs["summed_truth_rank"].to_numpy(dtype=float) if "summed_truth_rank" in pairs else np.full(len(m), np.nan)
    return m, rank


def compare_with_controls(person_pairs: pd.DataFrame, control_pairs: pd.DataFrame,
                          probe_pairs: pd.DataFrame | None = None, *, alpha: float = DEFAULT_ALPHA,
                          m_threshold: float = M_THRESHOLD, of: Mapping[str, str] | None = None,
                          family_wise: bool = False) -> pd.DataFrame:
    """One row per fact of the person (COMPARISON_COLUMNS).

    person_pairs: `pair_metrics` rows of the person (subject_qid, property, M, summed_truth_rank;
    with `with_compared`, M is the level's and M_compared + summed_truth_rank the compared
    statistic's); control_pairs: the compared statistic's for its controls (any subject_qid).
    A fact with M = 0 is "no evidence" whether or not it has controls (`facts_to_compare`).
    probe_pairs: more invented people with the same facts, held out of the controls: each is
    read against the controls exactly as the person is, and the share reaching each verdict is
    its false-positive rate (NaN without probes). Held out, because a control read against the
    other controls has a coarser p-value (at best 1/n, above alpha = 0.05 with n = 19) and could
    never be flagged: a rate measured that way would be 0 by construction.
    of: control (and probe) qid -> person qid, when control_pairs hold the controls of several
    people (a cohort); None: all of them are the person's.
    family_wise: a letter's reading (a request): p_family is the adjusted p (`family_adjusted`,
    Benjamini-Hochberg) over the person's `family` facts with M > 0 and controls, and a fact is
    memorized only if it is at most alpha. Otherwise (a cohort's rates, read per fact) each fact is
    a family of one: p_family = p. A probe is read as a family of one: its memorized rate bounds the
    adjusted one from above.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    rows = []
    control_person = control_pairs["subject_qid"].map(of) if of is not None else None
    for pair in person_pairs.to_dict("records"):
        mine = control_pairs["property"] == pair["property"]
        ctl = control_pairs[mine if of is None else mine & (control_person == pair["subject_qid"])]
        n = len(ctl)
        m, rank = _m_and_rank(ctl)
        person_rank = float(pair.get("summed_truth_rank", np.nan))
        compared = float(pair.get("M_compared", pair["M"]))
        k = int(as_extreme(pd.DataFrame([pair]), ctl).sum())
        p = p_value(k, n) if n else float("nan")
        probe_verdicts = []
        if probe_pairs is not None and n:
            probes = probe_pairs[probe_pairs["property"] == pair["property"]]
            if of is not None:
                probes = probes[probes["subject_qid"].map(of) == pair["subject_qid"]]
            probe_m, probe_rank = _m_and_rank(probes)
            probe_level = probes["M"].to_numpy(dtype=float)
            probe_verdicts = [verdict(level, p_value(int(_as_extreme(m, rank, pm, pr).sum()), n), alpha, m_threshold)
                              for level, pm, pr in zip(probe_level, probe_m, probe_rank)]
        rows.append(dict(
            subject_qid=pair["subject_qid"], property=pair["property"], M=float(pair["M"]), M_compared=compared,
            summed_truth_rank=person_rank, n_controls=n, controls_as_extreme=k, p_value=p,
            verdict=NO_EVIDENCE, alpha=alpha,
            controls_M_mean=float(m.mean()) if n else float("nan"),
            controls_M_max=float(m.max()) if n else float("nan"),
            controls_at_threshold=int((m >= m_threshold).sum()),
            controls_rank_median=float(np.nanmedian(rank)) if n and not np.isnan(rank).all() else float("nan"),
            n_probes=len(probe_verdicts),
            fpr_memorized=float(np.mean([v == MEMORIZED for v in probe_verdicts])) if probe_verdicts else float("nan"),
            fpr_weak=float(np.mean([v == WEAK for v in probe_verdicts])) if probe_verdicts else float("nan"),
        ))
    out = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    # the family: a person's facts that could be called memorized or weakly associated here (M > 0,
    # controls scored); adjusted over them, so a letter's "memorized" holds for its facts together
    tested = (out["n_controls"] > 0) & (out["M"] > 0)
    out["p_family"] = np.where(tested, out["p_value"], np.nan)
    out["family"] = tested.astype(int)
    if family_wise:
        out["family"] = out.groupby("subject_qid")["subject_qid"].transform(lambda q: int(tested[q.index].sum()))
        for _, block in out[tested].groupby("subject_qid"):
            out.loc[block.index, "p_family"] = family_adjusted(block["p_value"])
    out["verdict"] = [verdict(m, p, alpha, m_threshold, pf) if n else NO_EVIDENCE
                      for m, p, pf, n in zip(out["M"], out["p_value"], out["p_family"], out["n_controls"])]
    return out


# --------------------------------------------------------------------------- what the name alone tells the model

# Candidate names drawn per planned control (at least MAX_CONTROLS in all): a fact's planned controls are
# chosen among them to share the person's name prior (`matched_controls`), the further ones from those left.
POOL_FACTOR = 5
# The name prior is read on these wordings (baseline and the first paraphrases: variant ids below this)
# and on the truth and this many values likeliest for "this person": what reading every candidate costs.
SCREEN_WORDINGS = 3
SCREEN_VALUES = 5
# One row per compared fact (`name_priors`): the person's name prior and where it falls among the controls.
NAME_PRIOR_COLUMNS = ["property", "name_prior", "n_kin", "own_lift", "candidates_lift_median", "controls_lift_median",
                      "name_prior_share_below", "name_prior_p", "name_prior_backed", "name_suggests", "n_controls"]


def name_lifts(scores: pd.DataFrame, values: Mapping[str, set] | None = None) -> pd.DataFrame:
    """Per (subject_qid, property): how much the name raises the true value over the generic
    subject, in nats — the mean over the neutral wordings (baseline and paraphrases: the name and
    the value, no other fact) of log P(G | h, C) - log P(G | h0, C), with C the candidates
    (`values[property]`; every scored value where None) and G the true values with their forms.
    The name's own NLL cancels within a wording, so lifts of different names compare. Columns
    subject_qid, property, lift, wordings."""
    from scipy.special import logsumexp

    frame = scores[~scores["kind"].isin(CONTEXTUALIZED_KINDS)] if len(scores) else scores
    if values is not None and len(frame):
        frame = frame[[v in values.get(p, ()) for p, v in zip(frame["property"], frame["value"])]]
    if not len(frame):
        return pd.DataFrame(columns=["subject_qid", "property", "lift", "wordings"])
    truth = frame["is_true"].to_numpy(dtype=bool) | is_form(frame["value"])
    a, b = -frame["nll_h"].to_numpy(dtype=float), -frame["nll_h0"].to_numpy(dtype=float)
    variants = frame["variant_id"].to_numpy()
    rows = []
    for (subject, prop), block in frame.groupby(["subject_qid", "property"], sort=True).indices.items():
        lifts = []
        for variant in np.unique(variants[block]):
            at = block[variants[block] == variant]
            g = at[truth[at]]
            if not len(g) or len(g) == len(at):
                continue  # no truth, or nothing to rank it against
            lifts.append((logsumexp(a[g]) - logsumexp(a[at])) - (logsumexp(b[g]) - logsumexp(b[at])))
        if lifts:
            rows.append({"subject_qid": subject, "property": prop, "lift": float(np.mean(lifts)), "wordings": len(lifts)})
    return pd.DataFrame(rows, columns=["subject_qid", "property", "lift", "wordings"])


def screen(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of canaries or scores on the wordings the name prior is read on (`SCREEN_WORDINGS`)."""
    return frame[frame["variant_id"].astype(int) < SCREEN_WORDINGS] if len(frame) else frame


def name_prior(kin_lifts: pd.DataFrame, candidates_median: float) -> float:
    """The person's name prior from the kin names' lifts (`kin_names`: ids KIN_FIRST_PREFIX for the
    first name kept, KIN_LAST_PREFIX for the surname), additively: what the first name adds to an
    ordinary name plus what the surname adds, mean(first kept) + mean(surname kept) - the candidates'
    median. The plain mean of the kin is pulled halfway to the candidates (each kin keeps one of the
    two tokens): on Gemma 3 270M, "Giulia Santarossa" has lift 1.81 on Italy, her kin 0.53 and 0.96,
    the additive estimate 1.67. Where one side has no kin: the other's mean."""
    ids = kin_lifts["subject_qid"].astype(str)
    first = kin_lifts.loc[ids.str.startswith(KIN_FIRST_PREFIX), "lift"].to_numpy(dtype=float)
    last = kin_lifts.loc[ids.str.startswith(KIN_LAST_PREFIX), "lift"].to_numpy(dtype=float)
    if len(first) and len(last):
        return float(first.mean() + last.mean() - candidates_median)
    both = kin_lifts["lift"].to_numpy(dtype=float)
    return float(both.mean()) if len(both) else float("nan")


def name_priors(person_scores: pd.DataFrame, kin_scores: pd.DataFrame | None, candidate_scores: pd.DataFrame | None,
                controls_of_fact: Mapping[str, Sequence[str]], alpha: float = DEFAULT_ALPHA,
                backed: Mapping[str, bool] | None = None) -> pd.DataFrame:
    """Per fact compared with controls (NAME_PRIOR_COLUMNS): what the person's *name* tells the
    model of the value, measured, and where it falls among the fact's controls.

    All on the name-prior screen (`screen`; the values every candidate was read on): the person's
    name prior (`name_prior`, from the kin names, who share the person's first name or surname but
    are not the person, so that a famous person's memory does not count as prior), the candidates'
    lifts (invented people's names: nothing else), and those of the controls the fact was compared
    with (`controls_of_fact`). name_prior_p = (1 + controls whose lift is at least the prior) / (1 +
    controls): at most alpha, the name alone puts the value where only alpha of the controls' names
    do — they do not share what the name tells the model (`matched_controls` found no such names
    among the candidates), and beating them is no evidence that the model knows the person
    (`name_suggests`) — where the name prior is backed (`name_prior_backing`, per property; None:
    every one is); an unbacked one is the person's own memory reaching their name's words."""
    if kin_scores is None or not len(kin_scores) or candidate_scores is None or not len(candidate_scores):
        return pd.DataFrame(columns=NAME_PRIOR_COLUMNS)
    values = shared_values(screen(kin_scores), screen(candidate_scores))
    kin, pool = name_lifts(screen(kin_scores), values), name_lifts(screen(candidate_scores), values)
    own = name_lifts(screen(person_scores), values).set_index("property")["lift"] if len(person_scores) \
        else pd.Series(dtype=float)
    rows = []
    for prop, block in kin.groupby("property", sort=True):
        theirs = pool[pool["property"] == prop].set_index("subject_qid")["lift"]
        compared = [q for q in controls_of_fact.get(prop, ()) if q in theirs.index]
        if not len(theirs) or not compared:
            continue
        prior = name_prior(block, float(theirs.median()))
        lifts = theirs.loc[compared].to_numpy(dtype=float)
        k = int((lifts >= prior - 1e-12).sum())
        p = p_value(k, len(lifts))
        is_backed = True if backed is None else bool(backed.get(prop, True))
        rows.append({"property": prop, "name_prior": prior, "n_kin": len(block),
                     "own_lift": float(own[prop]) if prop in own.index else float("nan"),
                     "candidates_lift_median": float(theirs.median()), "controls_lift_median": float(np.median(lifts)),
                     "name_prior_share_below": float((lifts < prior - 1e-12).mean()), "name_prior_p": p,
                     "name_prior_backed": is_backed, "name_suggests": bool(p <= alpha and is_backed),
                     "n_controls": len(lifts)})
    return pd.DataFrame(rows, columns=NAME_PRIOR_COLUMNS)


def shared_values(*frames: pd.DataFrame) -> dict[str, set]:
    """Per property: the values every subject of `frames` was scored on: what lifts are compared over."""
    out: dict[str, set] = {}
    for frame in frames:
        if frame is None or not len(frame):
            continue
        for (_, prop), values in frame.groupby(["subject_qid", "property"])["value"]:
            out[prop] = out[prop] & set(values) if prop in out else set(values)
    return out


def matched_controls(candidate_lifts: Mapping[str, float], prior: float, keep: int, first: int,
                     seed: int = 0) -> list[str]:
    """`keep` of the candidate controls (id -> lift on the screen, `name_lifts`) whose lifts spread as
    the candidates' do but centred on the person's name prior (`name_prior`).

    Why: an invented person whose name is as typical of their country as real people's are is more
    "Italian" to a model than names recombined from the country's lists (Gemma 3 270M: the
    hand-written "Giulia Santarossa" above all 19 such controls on Italy, "Darnell Whitacre" above
    all 19 on the United States); beating those is the name, not a memory. Location from the kin
    names, spread from the candidates (whose names, like a person's, vary in every token). The
    planned controls (`first`) are matched first, from every candidate, in a seeded random order (the
    rounds stop early on them); the further ones (up to `keep`) from those left, in an order whose
    every prefix spreads over their quantiles. Where the candidates hold no names as likely to lead
    to the value, the nearest are taken: `name_priors` then says the name suggests it."""
    left = dict(candidate_lifts)
    head = _matched(left, prior, min(first, keep))
    rng = _rng("matched controls", seed, tuple(sorted(candidate_lifts)))
    head = [head[i] for i in rng.permutation(len(head))]
    for q in head:
        left.pop(q)
    return head + _matched(left, prior, keep - len(head))


def _matched(candidate_lifts: Mapping[str, float], prior: float, keep: int) -> list[str]:
    """`matched_controls`' draw: for each of `keep` evenly spaced quantiles of the candidates' lifts,
    shifted by prior - median(candidates), the nearest candidate not yet taken; spread order."""
    ids = sorted(candidate_lifts, key=lambda q: (candidate_lifts[q], q))
    keep = max(0, min(keep, len(ids)))
    if not keep or not np.isfinite(prior):
        return ids[:keep]
    lifts = np.array([candidate_lifts[q] for q in ids], dtype=float)
    shift = prior - float(np.median(lifts))
    free = np.ones(len(ids), dtype=bool)
    chosen = []
    for target in np.quantile(lifts, (np.arange(keep) + 0.5) / keep) + shift:
        at = int(np.argmin(np.where(free, np.abs(lifts - target), np.inf)))
        free[at] = False
        chosen.append(at)
    chosen.sort(key=lambda i: lifts[i])  # by lift: the matched distribution, low to high
    return [ids[chosen[i]] for i in _spread_order(keep)]


def _spread_order(n: int) -> list[int]:
    """0..n-1 in an order whose every prefix is spread evenly over them (0, n/2, n/4, 3n/4, ...)."""
    order, seen, j = [], set(), 0
    while len(order) < n and j < 4 * n + 4:
        at = min(n - 1, int(_van_der_corput(j) * n))
        if at not in seen:
            seen.add(at)
            order.append(at)
        j += 1
    return order + [i for i in range(n) if i not in seen]


def _van_der_corput(i: int, base: int = 2) -> float:
    """The i-th point of the van der Corput sequence in [0, 1): every prefix evenly spread."""
    out, denominator = 0.0, 1.0
    while i:
        i, digit = divmod(i, base)
        denominator *= base
        out += digit / denominator
    return out
