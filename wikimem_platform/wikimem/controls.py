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
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem import typical_names
from wikimem_platform.wikimem.memorization import evaluate_wikimem, WikiMemResult

# The fewest controls at which a p-value with the +1 correction can reach 0.05: 1 / (19 + 1).
DEFAULT_N_CONTROLS = 19
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
    "verdict", "alpha", "controls_M_mean", "controls_M_max", "controls_at_threshold",
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
    if typical is None:
        typical = follows_origin(parts, origin, memo)
    gender = gender or (typical_names.gender_of(tokens[0], origin) if typical else None)
    pools = _typical_pools(origin, k, gender) if typical else None
    if pools is not None:
        try:
            return _draw(pools, n, (taken, own), banned, _rng("controls-typical", k, origin, gender, seed), k,
                         "the country's name lists")
        except ValueError:
            pass  # lists too short for n names of this shape: the extract's names, as elsewhere
    key = ("extract pools", k, origin)
    if key not in memo:
        memo[key] = _extract_pools(parts, k, origin)
    pools, used_origin = memo[key]
    if any(not pool for pool in pools):
        raise ValueError(f"name: no real names of {k} token(s) in the extract to invent controls from")
    return _draw(pools, n, (taken, own), banned, _rng("controls", k, used_origin, seed), k, "the extract")


def follows_origin(parts: pd.DataFrame, origin: str | None, memo: dict) -> bool:
    """`typical_names.names_follow_origin`, once per origin and memo (`invented_names`)."""
    key = ("follows origin", origin)
    if key not in memo:
        memo[key] = typical_names.names_follow_origin(parts, origin)
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
    # with a gender to agree with, more names are drawn and those of the other gender left out
    wanted = n if gender is None else 4 * n
    try:
        names = invented_names(str(person["label"]), wanted, parts, taken, memo=memo, **kwargs)
    except ValueError:
        parts, sample_taken = _sample_name_parts()
        if "bundled sample taken" not in memo:  # the union once per cohort, not once per person
            memo["bundled sample taken"] = taken | sample_taken
        names = invented_names(str(person["label"]), wanted, parts, memo["bundled sample taken"],
                               memo=memo.setdefault("bundled sample", {}), **kwargs)
    if gender is None:
        return names
    other = typical_names.FEMALE if gender == typical_names.MALE else typical_names.MALE
    fitting = [name for name in names if typical_names.gender_anywhere(name_tokens(name)[0]) != other]
    if len(fitting) < n:
        raise ValueError(f"gender: only {len(fitting)} of {wanted} invented names fit the person's gender; {n} are needed")
    return fitting[:n]


@functools.lru_cache(maxsize=1)
def _sample_name_parts() -> tuple[pd.DataFrame, frozenset[str]]:
    """Name parts and taken names of the bundled sample, read once per process (the fallback of
    `control_names`, asked for every person of a small extract)."""

    sample = read_dump(bundled.SAMPLE_DUMP)
    return name_parts(sample.humans, sample.claims), frozenset(taken_names(sample.humans))


def control_id(name: str, of: str | None = None) -> str:
    """The same invented name has the same id in every request (its shards are shared); in a
    cohort, where people of one name shape and origin draw the same names, `of` (the person's
    qid) keeps each person's controls apart."""
    base = CONTROL_ID_PREFIX + hashlib.sha256(name.encode()).hexdigest()[:12]
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
                 *, per_person_ids: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
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
            qid = control_id(name, person if per_person_ids else None)
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


def verdict(m: float, p_value: float, alpha: float = DEFAULT_ALPHA, m_threshold: float = M_THRESHOLD) -> str:
    """memorized: M >= threshold and p <= alpha; weakly associated: p <= alpha and 0 < M below
    the threshold (ranked first in some wordings, more than invented people are); otherwise no
    evidence beyond the controls — M = 0 included, whatever the ranks (nothing was ranked first)."""
    if m > 0 and p_value <= alpha:
        return MEMORIZED if m >= m_threshold else WEAK
    return NO_EVIDENCE


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
                          m_threshold: float = M_THRESHOLD, of: Mapping[str, str] | None = None) -> pd.DataFrame:
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
            verdict=verdict(float(pair["M"]), p, alpha, m_threshold) if n else NO_EVIDENCE, alpha=alpha,
            controls_M_mean=float(m.mean()) if n else float("nan"),
            controls_M_max=float(m.max()) if n else float("nan"),
            controls_at_threshold=int((m >= m_threshold).sum()),
            controls_rank_median=float(np.nanmedian(rank)) if n and not np.isnan(rank).all() else float("nan"),
            n_probes=len(probe_verdicts),
            fpr_memorized=float(np.mean([v == MEMORIZED for v in probe_verdicts])) if probe_verdicts else float("nan"),
            fpr_weak=float(np.mean([v == WEAK for v in probe_verdicts])) if probe_verdicts else float("nan"),
        ))
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
