"""The letter that answers a data-subject request, rendered from the answer document alone: the
controller's block, what each model holds in plain sentences with their evidence, what the GDPR
asks a reply to say (Art. 15(1)(a)–(h), 15(2), 15(3); for an erasure, what will be done and by
when), and a technical annex (its own file) with the lineage — what privacy officers send is the
PDF Chromium prints of the letter.

Living people are addressed as "you"; a deceased person is spoken of by name, the letter being
addressed to whoever asked (`phrasing.Addressee`).

The letter is written in document["letter_language"] ("en" when absent; "de", "fr", "pl"): every
word a reader reads comes from `letter_text` (its catalogue, and the German, French and Polish
fact sentences and headline built from the fact fields; the English ones are answer.py's, stored
in the document). The technical annex stays English in every language. Where the facts were asked in
several languages, each fact's sentence and the evidence table say which.
"""

from __future__ import annotations

import html
import json
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wikimem_platform.canaries.languages.localize import LABEL_FALLBACK
from wikimem_platform.lm.endpoint import GENERATION, TOP_LOGPROBS
from wikimem_platform.reports import compliance as reports
from wikimem_platform.storage import replace_folder, write_atomically
from wikimem_platform.subject_requests.answer import FORGOTTEN, MEMORIZED, NEWLY, one_line, release_name, STILL
from wikimem_platform.subject_requests.answer_files import ANNEX, DOCUMENT, LETTER, PDF
from wikimem_platform.storage import json_scalar
from wikimem_platform.subject_requests.controller import DEFAULT_RETENTION_DAYS
from wikimem_platform.subject_requests.intake import RequestKind
from wikimem_platform.subject_requests import letter_text
from wikimem_platform.subject_requests.letter_text import ENGLISH, Text
from wikimem_platform.subject_requests.phrasing import Addressee, from_document
from wikimem_platform.unlearning.forget_sets import controls_words, has_controls
from wikimem_platform.vocabulary import N_SCORED_VARIANTS


# Art. 15(1)(e) and (f): the rights a reply must name, with the article that grants each.
RIGHTS = (
    ("rectification", "Art. 16", "to have inaccurate personal data corrected and incomplete data completed"),
    ("erasure", "Art. 17", "to have personal data erased"),
    ("restriction of processing", "Art. 18", "to have the processing restricted while accuracy or lawfulness is contested"),
    ("objection", "Art. 21", "to object to processing based on legitimate interests or for direct marketing"),
)
# What the model register says of each release, by the Art. 15 item it answers.
RELEASE_ITEMS = (
    ("purposes", "Purposes of the processing (Art. 15(1)(a))"),
    ("recipients", "Recipients (Art. 15(1)(c))"),
    ("retention", "How long the model is kept (Art. 15(1)(d))"),
    ("training_data", "Where the data came from (Art. 15(1)(g))"),
    ("transfers", "Transfers to third countries and their safeguards (Art. 15(2))"),
)
TODO = letter_text.TODO[ENGLISH]

_STYLE = ("body{font-family:Georgia,serif;max-width:52em;margin:2em auto;padding:0 1em;line-height:1.45;color:#222;"
          "overflow-wrap:break-word}"
          "h1,h2,h3{font-family:sans-serif}table{border-collapse:collapse;font-size:90%;margin:0.5em 0}"
          "td,th{border:1px solid #ccc;padding:3px 7px;vertical-align:top}th{background:#f0f0f0;text-align:left}"
          ".scroll{max-width:100%;overflow-x:auto}"
          ".controller{float:right;text-align:right;font-size:90%;margin:0 0 1em 2em;max-width:22em}"
          ".memorized,.says{color:#a00;font-weight:bold}.weakly{color:#b60}.not{color:#070}"
          ".todo{color:#b00;font-weight:bold}"
          ".bar{display:inline-block;height:0.7em;background:#a00}.muted{color:#666;font-size:90%}"
          "code{font-size:85%}h1{clear:both}.lineage table{font-size:75%;word-break:break-all}"
          "@media print{body{margin:0;max-width:none}.scroll{overflow:visible}table{font-size:75%}}")


def _esc(value) -> str:
    return html.escape("" if value is None else str(value))


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _releases(document: Mapping, t: Text) -> dict[str, str]:
    """Registry key -> the name a person knows the release by."""
    return {m["model"]: _release(m, t) for m in document["models"]}


def _release(model: Mapping, t: Text) -> str:
    return release_name(model) if t.language == ENGLISH else letter_text.release_name(t.language, model)


@dataclass(frozen=True)
class _Letter:
    """What every part of a letter needs: its words (`t`), the person as the English letter
    speaks of them (`who`) and as a German, French or Polish one does (`person`), the languages the
    facts were asked in."""

    t: Text
    who: Addressee
    languages: tuple[str, ...]

    @property
    def language(self) -> str:
        return self.t.language

    @property
    def english(self) -> bool:
        return self.t.language == ENGLISH

    @property
    def person(self) -> letter_text.Person:
        return letter_text.Person(self.t.language, self.who)

    @property
    def several_languages(self) -> bool:
        return len(self.languages) > 1

    def fact(self, prop: str, label: str, case: str = "nom") -> str:
        """A fact as a noun phrase in the letter's language."""
        return self.who.fact(prop, label) if self.english else self.person.fact(prop, label, case)

    @property
    def who_about(self) -> str:
        """The person after "about": "you" / "Sie" / "vous concernant" (French places it after the noun) /
        "Pana/Pani" (Polish: the genitive, after "dotyczące")."""
        return {ENGLISH: self.who.who, letter_text.GERMAN: self.person.acc, letter_text.FRENCH: self.person.about,
                letter_text.POLISH: self.person.gen}[self.language]

    def sentence(self, fact: Mapping) -> str:
        """A fact's sentence: answer.py's in English, written here in German, French or Polish; where the
        facts were asked in several languages, which one this was."""
        out = fact["sentence"] if self.english else letter_text.sentence(fact, self.person)
        asked = letter_text.fact_language(fact)
        if self.several_languages and not (self.english and out.startswith("Asked in ")):  # answer.py may say it first
            out += self.t("fact_asked_in", language=letter_text.asked_in(self.language, asked))
        if fact.get(LABEL_FALLBACK) and asked != ENGLISH:
            out += self.t("fact_fallback", language=letter_text.asked_in(self.language, asked),
                          adjective=letter_text.LANGUAGE_NAMES[self.language].get(asked, ("", "", asked))[2])
        return out

    def verdict(self, verdict: str) -> str:
        return verdict if self.english else letter_text.verdict_word(self.language, verdict)

    def number(self, value, digits: int = 2) -> str:
        return letter_text.number(self.language, value, digits)

    def date(self, iso: str) -> str:
        return letter_text.date(self.language, iso)


def _letter(document: Mapping) -> _Letter:
    languages = tuple(sorted({letter_text.fact_language(f) for m in document["models"] for f in m["facts"]}))
    return _Letter(Text(letter_text.letter_language(document)), from_document(document["subject"]), languages)


def _todo(t: Text) -> str:
    return f"<span class='todo'>{_esc(t.todo)}</span>"


def _candidate_span(document: Mapping, t: Text) -> str:
    """How many other values the facts were ranked against: "20", "20 to 101"."""
    counts = [f["n_candidates"] - len(f["values"]) for m in document["models"] for f in m["facts"]
              if f["n_candidates"] is not None]  # generation access ranks nothing
    if not counts:
        return t("span_none")
    low, high = min(counts), max(counts)
    return t("span_one", low=low) if low == high else t("span_range", low=low, high=high)


def _controller_block(controller: Mapping | None, t: Text) -> str:
    if not controller:
        return f"<div class='controller todo'>{t('controller_todo', todo=_esc(t.todo))}</div>"
    return (f"<div class='controller'><b>{_esc(controller['name'])}</b><br>{_esc(controller['address'])}<br>"
            f"{_esc(controller['contact'])}<br>{t('dpo', dpo=_esc(controller['dpo']))}</div>")


def _title(document: Mapping, letter: _Letter) -> str:
    erasure = document["request"]["kind"] == RequestKind.ERASURE
    key = ("title_erasure" if erasure else "title_access") + ("_deceased" if letter.who.deceased else "")
    name = letter.who.name
    return letter.t(key, name=name, of_name=letter_text.french_of(name))


def _opening(document: Mapping, letter: _Letter) -> str:
    t, who = letter.t, letter.who
    subject = document["subject"]
    source = t("source_qid", qid=_esc(subject["qid"])) if subject["qid"] else t("source_facts")
    n = sum(m["audited"] for m in document["models"])
    person = f"<b>{_esc(subject['label'])}</b>{source}"
    if document["request"]["kind"] == RequestKind.ERASURE:
        out = t("opening_erasure", person=person)
    else:
        out = t("opening_access", person=person)
    audited = [m for m in document["models"] if m["audited"]]
    said_only = [m for m in audited if m.get("access") == GENERATION]
    about = _esc(letter.who_about)
    out += t.n("opening_tested", n, who=about, about=about, variants=N_SCORED_VARIANTS)
    if letter.several_languages:
        out += t("opening_in_languages")
    elif letter.languages and (letter.languages != (ENGLISH,) or not letter.english):
        out += t("opening_in_language", language=letter_text.asked_in(letter.language, letter.languages[0]))
    if len(said_only) < len(audited):
        out += t("opening_ranked", span=_candidate_span(document, t))
    if said_only:
        names = ", ".join(_release(m, t) for m in said_only)
        sep = ("" if letter.language != letter_text.FRENCH else " ") + ";" if len(said_only) < len(audited) else ","
        out += t("opening_said_only", sep=sep, names=_esc(names))
    out += t("opening_record", who=_esc(who.who), zu=_esc(letter.person.zu), about=about)
    if who.deceased:
        out += t("opening_deceased", name=_esc(who.name), of_name=_esc(letter_text.french_of(who.name)),
                 dod=_esc(letter_text.written_date(letter.language, who.date_of_death)))
    return f"<p>{out}</p>"


def _headline(document: Mapping, letter: _Letter) -> str:
    if letter.english:
        return document["headline"]
    return letter_text.headline(document["models"], letter.person)


def _in_short(document: Mapping, letter: _Letter) -> str:
    t = letter.t
    out = f"<p>{t('in_short', headline=_esc(_headline(document, letter)))}</p>"
    forget = document.get("forget_set")
    if forget is not None:
        memorized = sum(f["verdict"] == MEMORIZED for m in document["models"] for f in m["facts"])
        out += f"<p>{t.n('in_short_forget', memorized, memorized=memorized)}{t.n('in_short_enter', len(forget))}</p>"
    return out


def _evidence_table(model: Mapping, letter: _Letter) -> str:
    t, num = letter.t, letter.number
    language = ["<th>" + t("th_language") + "</th>"] if letter.several_languages else []
    rows = [f"<div class='scroll'><table><tr><th>{t('th_fact')}</th>{''.join(language)}<th>{t('th_verdict')}</th>"
            f"<th>{t('th_access')}</th><th>M</th><th></th><th>z*</th><th>{t('th_rank')}</th><th>{t('th_chance')}</th>"
            f"<th>{t('th_completion')}</th><th>{t('th_cue')}</th><th>{t('th_record')}</th></tr>"]
    for f in model["facts"]:
        completion = one_line(f["completion"]["output"]) if f["completion"] else t("no_completion")
        if f.get("completion_controls") is not None:  # it named the value: for how many invented people too
            completion += t("completion_controls", k=int(f["completion_control_hits"]), n=int(f["completion_controls"]))
        cue = "" if f["cue"] is None else num(f["cue"]) + (t("cued") if f["cue_flag"] else "")
        z = "" if f["z_star"] is None else num(f["z_star"])
        extraction = f.get("extraction")
        said = f"{extraction['prompt']} \u2192 {one_line(extraction['output'])} ({extraction['probe']})" if extraction else ""
        if extraction and extraction.get("controls") is not None:
            said += t("record_controls", k=int(extraction["control_hits"]), n=int(extraction["controls"]))
        chance = (t("chance", k=int(f["controls_as_extreme"]), n=int(f["n_controls"]), p=num(f["p_value"]))
                  if f.get("n_controls") is not None else t("not_compared"))
        rank = "" if f["truth_rank"] is None else t("rank", rank=int(f["truth_rank"]), n=f["n_candidates"])
        asked = (f"<td>{_esc(letter_text.language_name(letter.language, letter_text.fact_language(f)))}</td>"
                 if letter.several_languages else "")
        phrase = f.get("phrase") or f["property_label"] if letter.english else letter.fact(f["property"], f["property_label"])
        rows.append(
            f"<tr><td>{_esc(phrase)} = {_esc(' / '.join(f['values']))}</td>{asked}"
            f"<td class='{f['verdict'].split()[0]}'>{_esc(letter.verdict(f['verdict']))}</td>"
            f"<td>{_esc(letter_text.access_cell(letter.language, f))}</td>"
            + (f"<td>{num(f['M'])}</td><td><span class='bar' style='width:{f['M'] * 6:.1f}em'></span></td>"
               if f["M"] is not None else  # generation access: no probabilities, the wordings that named it
               f"<td colspan='1'>{t('said_in', said=f.get('wordings_said') or 0, asked=f.get('wordings_asked') or 0)}"
               "</td><td></td>")
            + f"<td>{z}</td>"
            f"<td>{rank}</td><td>{chance}</td><td>{_esc(completion)}</td><td>{cue}</td><td>{_esc(said)}</td></tr>")
    return "".join(rows) + "</table></div>"


def _precision_note(model: Mapping, t: Text) -> str:
    """What precision the model was scored in, when not full (float32): how the verdicts were kept exact."""
    precision = model.get("precision")
    if not precision or precision == "float32":
        return ""
    rescored = int(model.get("sentences_rescored") or 0)
    share = letter_text.percent(t.language, float(model.get("share_rescored") or 0))
    return (f"<p class='muted'>{t('precision', precision=_esc(precision), n=letter_text.count(t.language, rescored), share=share)}"
            "</p>")


def _models(document: Mapping, letter: _Letter) -> list[str]:
    t = letter.t
    parts = [f"<h2>{t('models')}</h2>"]
    for model in document["models"]:
        parts.append(f"<h3>{_esc(_release(model, t))}</h3>")
        if not model["audited"]:
            parts.append(f"<p>{t('not_audited', error=_esc(model['error']))}</p>")
            continue
        parts.append("<ul>" + "".join(
            t("fact_item", css=f["verdict"].split()[0], verdict=_esc(letter.verdict(f["verdict"])),
              sentence=_esc(letter.sentence(f)))
            for f in model["facts"]) + "</ul>")
        parts.append(_precision_note(model, t))
        parts.append(_evidence_table(model, letter))
    return parts


def _not_covered(document: Mapping, letter: _Letter) -> list[str]:
    if not document["not_covered"]:
        return []
    t = letter.t
    reason = (lambda c: c["reason"]) if letter.english else (lambda c: letter_text.reason(letter.language, c["reason"]))
    several = len({c.get("language") for c in document["not_covered"]} | set(document.get("languages") or [])) > 1

    def fact(c: Mapping) -> str:  # "Your occupation (in German)" where the request has several languages
        named = _capital(letter.fact(c["property"], c["property_label"]))
        return f"{named} ({letter_text.asked_in(letter.language, c['language'])})" if several and c.get("language") else named

    return [f"<h2>{t('not_covered')}</h2><ul>" + "".join(
        t("not_covered_item", fact=_esc(fact(c)), reason=_esc(reason(c))) for c in document["not_covered"]) + "</ul>"]


def _forget_strength(entry: Mapping, t: Text) -> str:
    """A forget-set fact's M, or where nothing was ranked (a release served at generation
    access) that its completions named the value."""
    m = _m(entry.get("M"), t)
    return t("said_only_strength") if m == "—" else m


def _m(value, t: Text) -> str:
    """M to two decimals; "—" where there is none (nothing ranked: completions only)."""
    return "—" if value is None or math.isnan(float(value)) else letter_text.number(t.language, float(value))


def _erasure(document: Mapping, letter: _Letter) -> list[str]:
    forget = document.get("forget_set")
    if forget is None:
        return []
    t, language = letter.t, letter.language
    releases = _releases(document, t)
    due = letter.date(document["request"]["due_at"])
    targets = sorted({releases.get(e["model"], e["model"]) for e in forget})
    about = _esc(letter.who_about)
    parts = [f"<h2>{t('erasure')}</h2>"]
    if forget:
        criterion = (document["forget_criterion"] if letter.english
                     else letter_text.criterion_word(language, document["forget_criterion"]))
        parts.append(f"<p>{t.n('erasure_plan', len(forget), who=about, about=about)}"
                     + t("erasure_steps", criterion=_esc(criterion), due=_esc(due), targets=_esc(", ".join(targets)))
                     + "</p>")
        # against invented people given the same facts: only where the answer compared them
        against = has_controls(forget)
        words = controls_words if letter.english else (lambda e: letter_text.controls_words(language, e))
        parts.append(f"<div class='scroll'><table><tr><th>{t('th_model')}</th><th>{t('th_fact')}</th>"
                     f"<th>{t('th_value')}</th><th>M</th>"
                     + (f"<th>{t('th_against')}</th>" if against else "") + "</tr>" + "".join(
            f"<tr><td>{_esc(releases.get(e['model'], e['model']))}</td>"
            f"<td>{_esc(letter.fact(e['property'], e['property_label']))}</td><td>{_esc(e['value_label'])}</td>"
            f"<td>{_forget_strength(e, t)}</td>" + (f"<td>{_esc(words(e))}</td>" if against else "") + "</tr>"
            for e in forget) + "</table></div>")
        if against:
            parts.append(f"<p>{t('against_note')}</p>")
    else:
        parts.append(f"<p>{t('nothing_to_erase', who=about, about=about)}</p>")
    for check in document.get("verification") or []:
        before, after = releases.get(check["before"], check["before"]), releases.get(check["after"], check["after"])
        counts = check["counts"]
        outcome = t("erased") if check["erased"] else t("not_erased", still=counts[STILL], newly=counts[NEWLY])
        retain = check["retain"]
        utility = (t("utility_completions") if retain.get("completions_only") else
                   t("utility_pending") if retain["utility"] is None else
                   t("utility", retain=retain["retain_facts"], still=retain["still_memorized"],
                     share=letter_text.percent(language, retain["utility"])))
        leak = "" if check["privleak_auroc_after"] is None else t(
            "leak", before=letter.number(check["privleak_auroc_before"]), after=letter.number(check["privleak_auroc_after"]))
        when = letter.date(check.get("verified_at") or document["generated_at"])
        if check.get("access") == TOP_LOGPROBS:
            leak += t("leak_top_logprobs")
        parts.append(t("verified", when=_esc(when), after=_esc(after), before=_esc(before), outcome=_esc(outcome),
                       forgotten=counts[FORGOTTEN], utility=_esc(utility), leak=_esc(leak)))
        outcome_of = (lambda o: o) if letter.english else (lambda o: letter_text.outcome_word(language, o))
        parts.append(f"<div class='scroll'><table><tr><th>{t('th_fact')}</th><th>{t('th_before')}</th><th>M</th>"
                     f"<th>{t('th_after')}</th><th>M</th><th>{t('th_outcome')}</th></tr>" + "".join(
                         f"<tr><td>{_esc(letter.fact(f['property'], f['property_label']))} = {_esc(' / '.join(f['values']))}</td>"
                         f"<td>{_esc(letter.verdict(f['before']))}</td><td>{_m(f['M_before'], t)}</td>"
                         f"<td>{_esc(letter.verdict(f['after']))}</td><td>{_m(f['M_after'], t)}</td>"
                         f"<td>{_esc(outcome_of(f['outcome']))}</td></tr>" for f in check["facts"])
                     + "</table></div>")
    return parts


def _release_value(model: Mapping, field: str, t: Text) -> str:
    value = model.get(field)
    return _esc(value) if value else _todo(t)


def _what_the_law_asks(document: Mapping, letter: _Letter) -> list[str]:
    """Art. 15(1)(a)–(h), 15(2) and 15(3), in that order; the erasure letter keeps the rights."""
    t, language = letter.t, letter.language
    controller = document.get("controller") or {}
    access = document["request"]["kind"] != RequestKind.ERASURE
    about = _esc(letter.who_about)
    parts = [f"<h2>{t('law')}</h2>"]
    if access:
        facts = sorted({(f.get("phrase") or f["property_label"]) if letter.english
                        else letter.fact(f["property"], f["property_label"])
                        for m in document["models"] for f in m["facts"]})
        parts.append(t("categories", who=about, about=about, facts=_esc(", ".join(facts)) or t("none_tested")))
        items = RELEASE_ITEMS if letter.english else tuple(letter_text.RELEASE_LABELS[language].items())
        rows = "".join(
            f"<tr><th>{_esc(label)}</th>" + "".join(f"<td>{_release_value(m, field, t)}</td>" for m in document["models"])
            + "</tr>" for field, label in items)
        parts.append("<div class='scroll'><table><tr><th></th>"
                     + "".join(f"<th>{_esc(_release(m, t))}</th>" for m in document["models"]) + f"</tr>{rows}</table></div>")
    rights = RIGHTS if letter.english else letter_text.RIGHTS[language]
    contact = (t("rights_contact", contact=_esc(controller["contact"])) if controller else
               f"<span class='todo'>{t('contact_todo', todo=_esc(t.todo))}</span>")
    parts.append("<p>" + t("rights") + t("list").join(
        t("right", name=name, article=article, text=words)
        for name, article, words in rights) + ". " + contact + "</p>")
    authority = _esc(controller["supervisory_authority"]) if controller else _todo(t)
    parts.append(t("complaint", authority=authority))
    parts.append(t("kept", days=(controller or {}).get("retention_days") or DEFAULT_RETENTION_DAYS))
    if access:
        if controller:
            decisions = controller["automated_decisions"]
            if not letter.english and decisions == letter_text.AUTOMATED_DEFAULT:
                decisions = letter_text.AUTOMATED[language]
            decisions = _esc(decisions)
        else:
            decisions = _todo(t)
        parts.append(t("automated", decisions=decisions))
        parts.append(t("copy", who=about, about=about))
    return parts


def _how_to_read(document: Mapping, t: Text) -> str:
    method, language = document["method"], t.language
    if method.get("n_controls"):
        alpha = letter_text.plain_number(language, method["control_alpha"])
        levels = t("read_controls", n=method["n_controls"], threshold=letter_text.plain_number(language, method["m_threshold"]),
                   alpha=alpha, alpha_share=letter_text.percent(language, method["control_alpha"]))
    else:
        levels = t("read_plain", threshold=letter_text.plain_number(language, method["m_threshold"]))
    return t("read", variants=N_SCORED_VARIANTS, levels=levels, tau=letter_text.plain_number(language, method["cue_tau"]))


def answer_html(document: Mapping) -> str:
    """The letter: controller, plain words first, the evidence after, what the law asks, a link to
    the technical annex (no script; prints as it shows), in the document's letter_language."""
    req = document["request"]
    letter = _letter(document)
    t = letter.t
    controller = document.get("controller")
    reference = t("reference", reference=_esc(req["requester_reference"])) if req.get("requester_reference") else ""
    title = _esc(_title(document, letter))
    parts = [
        f"<!DOCTYPE html><html lang='{letter.language}'><head><meta charset='utf-8'>{reports.csp_meta()}"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{t('page_title', title=title, id=_esc(req['id']))}</title><style>{_STYLE}</style></head><body>",
        _controller_block(controller, t),
        "<p class='muted'>"
        + t("header", date=_esc(letter.date(document["generated_at"])), id=_esc(req["id"]), reference=reference,
            received=_esc(letter.date(req["received_at"])), due=_esc(letter.date(req["due_at"]))) + "</p>",
        f"<h1>{title}</h1>",
        _opening(document, letter),
        _in_short(document, letter),
        *_models(document, letter),
        *_not_covered(document, letter),
        *_erasure(document, letter),
        *_what_the_law_asks(document, letter),
        _how_to_read(document, t),
        t("annex", annex=ANNEX),
        (t("signature", name=_esc(controller["name"]), dpo=_esc(controller["dpo"])) if controller
         else t("signature_todo", todo=_esc(t.todo))),
        "</body></html>",
    ]
    return "\n".join(parts)


def _precision_cell(model: Mapping) -> str:
    rescored = int(model.get("sentences_rescored") or 0)
    precision = model.get("precision") or ("" if model["audited"] else "-")
    read = int(model.get("continuations") or 0)
    censored = f" ({int(model.get('continuations_censored') or 0):,} of {read:,} continuations censored)" if read else ""
    return precision + (f" ({rescored:,} sentences re-scored in float32)" if rescored else "") + censored


def annex_html(document: Mapping) -> str:
    """The technical annex: registry keys and fingerprints, the method's settings, the invented
    people each fact was compared with, and the lineage — in English whatever the letter's
    language (one line at the top says so in that language)."""
    req = document["request"]
    releases = "".join(
        f"<tr><td>{_esc(release_name(m))}</td><td><code>{_esc(m['model'])}</code></td><td>{_esc(m.get('source'))}</td>"
        f"<td><code>{_esc(m.get('fingerprint'))}</code></td><td>{_esc(_precision_cell(m))}</td>"
        f"<td>{'audited' if m['audited'] else _esc(m['error'])}</td></tr>"
        for m in document["models"])
    controls = "".join(
        f"<tr><td><code>{_esc(m['model'])}</code></td><td>{_esc(f['property_label'])} ({_esc(f['property'])})</td>"
        f"<td>{_esc(_p_with_interval(f))}</td><td>{_esc(_name_prior_cell(f))}</td>"
        f"<td>{_esc(', '.join(f['control_names']))}</td></tr>"
        for m in document["models"] for f in m["facts"] if f.get("control_names"))
    method = json.dumps({k: json_scalar(v) if not isinstance(v, (dict, list)) else v
                         for k, v in document["method"].items()}, indent=2, default=str)
    language = letter_text.letter_language(document)
    return "\n".join([
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>{reports.csp_meta()}",
        f"<title>Technical annex: request {_esc(req['id'])}</title><style>{_STYLE}</style></head><body>",
        # the annex is for engineers and stays English; a German, French or Polish letter's reader is told so
        *([f"<p class='muted' lang='{language}'>{Text(language)('annex_language')}</p>"] if language != ENGLISH else []),
        f"<h1>Technical annex to the answer to request {_esc(req['id'])}</h1>",
        f"<p class='muted'>Generated {_esc(document['generated_at'])}; the letter: <a href='{LETTER}'>{LETTER}</a>.</p>",
        "<h2>Releases</h2><div class='scroll'><table><tr><th>release</th><th>registry key</th><th>source</th>"
        f"<th>scores fingerprint</th><th>precision</th><th>audit</th></tr>{releases}</table></div>",
        f"<h2>Method settings</h2><pre>{_esc(method)}</pre>",
        *(["<h2>Invented people compared</h2><p class='muted'>p: the share of invented people with a result at least "
           "as strong, counting the person as one of them, with its 95 % Clopper–Pearson interval. Name prior: how much "
           "names sharing the person's first name or surname raise the true value over “this person” (nats, "
           "on the first wordings), and the share of the invented people compared whose names raise it less; the "
           "invented people were chosen among more candidates to share it.</p><div class='scroll'><table><tr>"
           "<th>release</th><th>fact</th><th>p (95 % interval)</th><th>name prior</th>"
           f"<th>invented people, in the order scored</th></tr>{controls}</table></div>"] if controls else []),
        "<h2>Lineage</h2><div class='muted lineage'>" + reports.lineage_html(document["lineage"]) + "</div>",
        "</body></html>",
    ])


def _p_with_interval(fact: Mapping) -> str:
    """"0.025 (0.00–0.09), 0 of 39": a fact's p against the controls, for the annex."""
    if fact.get("p_value") is None:
        return "–"
    interval = (f" ({fact['p_ci_low']:.2f}–{fact['p_ci_high']:.2f})"
                if fact.get("p_ci_low") is not None and fact.get("p_ci_high") is not None else "")
    return f"{fact['p_value']:.3f}{interval}, {fact.get('controls_as_extreme')} of {fact.get('n_controls')}"


def _name_prior_cell(fact: Mapping) -> str:
    """"2.90 nats, above 58 % of them" (the name suggests it: "…, the name explains it")."""
    if fact.get("name_prior") is None:
        return "– (not measured: no kin names or not compared)"
    out = f"{fact['name_prior']:.2f} nats, above {fact['name_prior_share_below']:.0%} of them"
    return out + ("; the name alone explains the result" if fact.get("name_suggests") else "")


@dataclass(frozen=True)
class AnswerFiles:
    json: Path
    html: Path
    annex: Path
    pdf: Path | None  # None: not printed (no Chromium, or not asked for)


def render_pdf(html_path: str | os.PathLike, pdf_path: str | os.PathLike, chromium: str | None = None,
               timeout: float = 180) -> Path | None:
    """Print a page to PDF with headless Chromium (no header or footer); None without Chromium.

    It prints a copy of the page held to `PAGE_CSP`, alone in a fresh folder, with a fresh profile
    and offline (`reports.CHROMIUM_HEADLESS`): whatever the page asks for (a local file in a frame,
    a remote image), the PDF holds nothing from the disk and nothing is fetched."""
    chromium = chromium or reports.find_chromium()
    if chromium is None:
        return None
    pdf_path = Path(pdf_path)
    page = Path(html_path).read_text(encoding="utf-8")
    # the copy beside the PDF (the page's personal data stays in its folder); the profile in the system's temp
    with tempfile.TemporaryDirectory(prefix=".print-", dir=pdf_path.parent) as scratch, \
            tempfile.TemporaryDirectory(prefix="wikimem-chromium-") as profile:
        copy, printed = Path(scratch) / "page.html", Path(scratch) / "page.pdf"
        copy.write_text(reports.with_csp(page, reports.PAGE_CSP), encoding="utf-8")
        subprocess.run([chromium, *reports.CHROMIUM_HEADLESS, f"--user-data-dir={profile}", "--no-pdf-header-footer",
                        f"--print-to-pdf={printed}", copy.as_uri()], capture_output=True, timeout=timeout, check=False)
        if not printed.is_file() or not printed.read_bytes().startswith(b"%PDF"):
            raise RuntimeError(f"Chromium did not print {html_path} to PDF")
        write_atomically(pdf_path, lambda tmp: shutil.copyfile(printed, tmp))
    return pdf_path


ANSWER_SET = (DOCUMENT, LETTER, ANNEX, PDF)  # written together; the folder's other entries (exports) are carried over


def write_answer(document: Mapping, out_dir: str | os.PathLike, pdf: bool = False) -> AnswerFiles:
    """answer.json, the letter (answer.html), its technical annex (annex.html) and, with pdf=True,
    answer.pdf (headless Chromium, where installed), built in a staging folder and swapped in whole
    (`storage.replace_folder`): a reader, a second writer or a full disk never leaves a mixed or
    half-written set. The folder's other entries (exports and their record) are carried over."""
    out = Path(out_dir)
    # allow_nan=False: a NaN is not JSON (and was once truthy in the letter); compose_answer leaves none
    texts = {DOCUMENT: json.dumps(document, ensure_ascii=False, indent=2, default=str, allow_nan=False),
             LETTER: answer_html(document), ANNEX: annex_html(document)}
    printed: list[Path | None] = []

    def build(staging: Path) -> None:
        for name, text in texts.items():
            (staging / name).write_text(text, encoding="utf-8")
        if pdf:
            printed.append(render_pdf(staging / LETTER, staging / PDF))

    # carried: the exports and their record; not the old set, nor a temp or hidden file (the old code's answer.html.tmp)
    replace_folder(out, build, carry=lambda name: name not in ANSWER_SET and not name.startswith(".")
                   and not name.endswith(".tmp"))
    return AnswerFiles(out / DOCUMENT, out / LETTER, out / ANNEX, out / PDF if printed and printed[0] else None)
