"""The letter that answers a data-subject request, rendered from the answer document alone: the
controller's block, what each model holds in plain sentences with their evidence, what the GDPR
asks a reply to say (Art. 15(1)(a)–(h), 15(2), 15(3); for an erasure, what will be done and by
when), and a technical annex (its own file) with the lineage — what privacy officers send is the
PDF Chromium prints of the letter.

Living people are addressed as "you"; a deceased person is spoken of by name, the letter being
addressed to whoever asked (`phrasing.Addressee`).
"""

from __future__ import annotations

import html
import json
import math
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wikimem_platform.lm.endpoint import GENERATION, TOP_LOGPROBS, WEIGHTS
from wikimem_platform.reports import compliance as reports
from wikimem_platform.storage import write_atomically
from wikimem_platform.subject_requests.answer import FORGOTTEN, MEMORIZED, NEWLY, one_line, release_name, STILL
from wikimem_platform.subject_requests.answer_files import ANNEX, DOCUMENT, LETTER, PDF
from wikimem_platform.storage import json_scalar
from wikimem_platform.subject_requests.intake import RequestKind
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
TODO = "to be completed by the controller before this letter is sent"

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


def _releases(document: Mapping) -> dict[str, str]:
    """Registry key -> the name a person knows the release by."""
    return {m["model"]: release_name(m) for m in document["models"]}


def _candidate_span(document: Mapping) -> str:
    """How many other values the facts were ranked against: "20", "20 to 101"."""
    counts = [f["n_candidates"] - len(f["values"]) for m in document["models"] for f in m["facts"]
              if f["n_candidates"] is not None]  # generation access ranks nothing
    if not counts:
        return "about 100"
    low, high = min(counts), max(counts)
    return f"{low}" if low == high else f"{low} to {high}"


def _controller_block(controller: Mapping | None) -> str:
    if not controller:
        return (f"<div class='controller todo'>Controller, address, contact, data protection officer and supervisory "
                f"authority: {TODO} (<code>wikimem controller set</code>).</div>")
    return (f"<div class='controller'><b>{_esc(controller['name'])}</b><br>{_esc(controller['address'])}<br>"
            f"{_esc(controller['contact'])}<br>Data protection officer: {_esc(controller['dpo'])}</div>")


def _title(document: Mapping, who: Addressee) -> str:
    erasure = document["request"]["kind"] == RequestKind.ERASURE
    what = "Erasure of" if erasure else "Access to"
    whose = f"the personal data of {who.name}" if who.deceased else "your personal data"
    return f"{what} {whose} (GDPR {'Art. 17' if erasure else 'Art. 15'})"


def _opening(document: Mapping, who: Addressee) -> str:
    subject = document["subject"]
    source = f" (Wikidata {_esc(subject['qid'])})" if subject["qid"] else " (the facts given with the request)"
    n = sum(m["audited"] for m in document["models"])
    person = f"<b>{_esc(subject['label'])}</b>{source}"
    if document["request"]["kind"] == RequestKind.ERASURE:
        text = (f"You asked us to erase the personal data about {person} that the language models we operate may hold "
                "(Art. 17 GDPR). This letter says what we found in each model, which facts we will erase, what we "
                "will do and by when.")
    else:
        text = f"You asked which personal data about {person} the language models we operate hold (Art. 15 GDPR)."
    audited = [m for m in document["models"] if m["audited"]]
    said_only = [m for m in audited if m.get("access") == GENERATION]
    text += (" A language model keeps no records, but it can memorize facts from the texts it was trained on and "
             f"repeat them. We therefore tested every model we operate ({n} release{'s' if n != 1 else ''} audited) "
             f"on each fact known about {_esc(who.who)}: we wrote each fact in {N_SCORED_VARIANTS} different ways")
    if len(said_only) < len(audited):
        text += (f" and checked whether the model prefers the true value over {_candidate_span(document)} other values "
                 "that other people hold, after correcting for how likely the value is in general (WikiMem's "
                 "calibrated ranking)")
    if said_only:
        names = ", ".join(release_name(m) for m in said_only)
        text += (f"{';' if len(said_only) < len(audited) else ','} and where a model answers only with text ({_esc(names)}: "
                 "it gives no probabilities) we asked it to complete each of those sentences and counted how often it "
                 "named the value, against invented people given the same facts")
    text += (". We also asked each model to complete the sentence itself, and to fill in a record of "
             f"{_esc(who.who)} (the name and a few other facts, then the one asked for). Facts a model wrote out are "
             "listed first.")
    if who.deceased:
        text += (f" {_esc(who.name)} has died (date of death: {_esc(who.date_of_death)}); this letter speaks of {_esc(who.name)} by name "
                 "and is addressed to you, who asked. The GDPR does not protect the data of deceased persons "
                 "(Recital 27); we answer in the same form, as national law or our own policy provides.")
    return f"<p>{text}</p>"


def _in_short(document: Mapping) -> str:
    out = f"<p><b>In short:</b> {_esc(document['headline'])}.</p>"
    forget = document.get("forget_set")
    if forget is not None:
        memorized = sum(f["verdict"] == MEMORIZED for m in document["models"] for f in m["facts"])
        out += (f"<p>{memorized} fact{'s are' if memorized != 1 else ' is'} memorized at the threshold; "
                f"{len(forget)} fact{'s enter' if len(forget) != 1 else ' enters'} the forget set, because we erase "
                "every fact a model ranks first in at least one phrasing, not only those it has memorized: a fact a "
                "model leans towards is erased too.</p>")
    return out


def _evidence_table(model: Mapping) -> str:
    rows = ["<div class='scroll'><table><tr><th>fact</th><th>verdict</th><th>access</th><th>M</th><th></th><th>z*</th><th>rank</th>"
            "<th>invented people as strong (p)</th><th>model's completion</th><th>cue</th>"
            "<th>record prompt that made it say the value</th></tr>"]
    for f in model["facts"]:
        completion = one_line(f["completion"]["output"]) if f["completion"] else "(no prompt names the person before the value)"
        if f.get("completion_controls"):  # it named the value: for how many invented people too
            completion += f" (named the value for {int(f['completion_control_hits'])} of {int(f['completion_controls'])} invented people too)"
        cue = "" if f["cue"] is None else f"{f['cue']:.2f}" + (" (cued)" if f["cue_flag"] else "")
        z = "" if f["z_star"] is None else f"{f['z_star']:.2f}"
        extraction = f.get("extraction")
        said = f"{extraction['prompt']} \u2192 {one_line(extraction['output'])} ({extraction['probe']})" if extraction else ""
        if extraction and extraction.get("controls"):
            said += f"; for {int(extraction['control_hits'])} of {int(extraction['controls'])} invented people too"
        chance = (f"{int(f['controls_as_extreme'])} of {int(f['n_controls'])} (p = {f['p_value']:.2f})" if f.get("n_controls")
                  else "not compared")
        rank = "" if f["truth_rank"] is None else f"{int(f['truth_rank'])} of {f['n_candidates']}"
        rows.append(
            f"<tr><td>{_esc(f.get('phrase') or f['property_label'])} = {_esc(' / '.join(f['values']))}</td>"
            f"<td class='{f['verdict'].split()[0]}'>{_esc(f['verdict'])}</td><td>{_esc(_access_cell(f))}</td>"
            + (f"<td>{f['M']:.2f}</td><td><span class='bar' style='width:{f['M'] * 6:.1f}em'></span></td>"
               if f["M"] is not None else  # generation access: no probabilities, the wordings that named it
               f"<td colspan='1'>said in {f.get('wordings_said') or 0} of {f.get('wordings_asked') or 0}</td><td></td>")
            + f"<td>{z}</td>"
            f"<td>{rank}</td><td>{chance}</td><td>{_esc(completion)}</td><td>{cue}</td><td>{_esc(said)}</td></tr>")
    return "".join(rows) + "</table></div>"


def _access_cell(fact: Mapping) -> str:
    """The access a fact's verdict came through: the weights, or a served endpoint's level."""
    access = fact.get("access") or WEIGHTS
    return access if access == WEIGHTS else f"endpoint, {access}"


def _precision_note(model: Mapping) -> str:
    """What precision the model was scored in, when not full (float32): how the verdicts were kept exact."""
    precision = model.get("precision")
    if not precision or precision == "float32":
        return ""
    rescored = int(model.get("sentences_rescored") or 0)
    return (f"<p class='muted'>This model was scored in reduced precision ({_esc(precision)}) to save time; the "
            f"{rescored:,} sentences ({float(model.get('share_rescored') or 0):.0%}) close enough to change a ranking "
            "were scored again in full precision (float32), so every verdict above is the one full precision gives.</p>")


def _models(document: Mapping) -> list[str]:
    parts = ["<h2>What each model holds</h2>"]
    for model in document["models"]:
        parts.append(f"<h3>{_esc(release_name(model))}</h3>")
        if not model["audited"]:
            parts.append(f"<p>This model could not be audited: {_esc(model['error'])}. We will audit it again and "
                         "write to you.</p>")
            continue
        parts.append("<ul>" + "".join(
            f"<li><span class='{f['verdict'].split()[0]}'>{_esc(f['verdict'])}</span>: {_esc(f['sentence'])}</li>"
            for f in model["facts"]) + "</ul>")
        parts.append(_precision_note(model))
        parts.append(_evidence_table(model))
    return parts


def _not_covered(document: Mapping, who: Addressee) -> list[str]:
    if not document["not_covered"]:
        return []
    return ["<h2>Facts we could not test</h2><ul>" + "".join(
        f"<li>{_esc(_capital(who.fact(c['property'], c['property_label'])))}: {_esc(c['reason'])}.</li>"
        for c in document["not_covered"]) + "</ul>"]


def _forget_strength(entry: Mapping) -> str:
    """A forget-set fact's M, or where nothing was ranked (a release served at generation
    access) that its completions named the value."""
    m = _m(entry.get("M"))
    return "said (completions only)" if m == "—" else m


def _m(value) -> str:
    """M to two decimals; "—" where there is none (nothing ranked: completions only)."""
    return "—" if value is None or math.isnan(float(value)) else f"{float(value):.2f}"


def _erasure(document: Mapping, who: Addressee) -> list[str]:
    forget = document.get("forget_set")
    if forget is None:
        return []
    releases = _releases(document)
    due = document["request"]["due_at"][:10]
    targets = sorted({releases.get(e["model"], e["model"]) for e in forget})
    parts = ["<h2>What we will erase, and by when</h2>"]
    if forget:
        parts.append(
            f"<p>{len(forget)} fact{'s' if len(forget) != 1 else ''} about {_esc(who.who)} enter{'' if len(forget) != 1 else 's'} "
            f"the forget set (criterion <i>{_esc(document['forget_criterion'])}</i>). By <b>{_esc(due)}</b> (one month "
            "after the request was received, Art. 12(3) GDPR) we will: (1) unlearn these facts from "
            f"{_esc(', '.join(targets))}, producing a new revision of each; (2) audit the new revision with the same "
            "tests as above, fact by fact, and check that the model's knowledge of other people is kept; (3) replace "
            "the current revision with the new one only once the audit shows every fact gone, and write to you with "
            "that verification. Until then, the current revision stays in service.</p>")
        # against invented people given the same facts: only where the answer compared them
        against = has_controls(forget)
        parts.append("<div class='scroll'><table><tr><th>model</th><th>fact</th><th>value</th><th>M</th>"
                     + ("<th>against invented people</th>" if against else "") + "</tr>" + "".join(
            f"<tr><td>{_esc(releases.get(e['model'], e['model']))}</td>"
            f"<td>{_esc(who.fact(e['property'], e['property_label']))}</td><td>{_esc(e['value_label'])}</td>"
            f"<td>{_forget_strength(e)}</td>" + (f"<td>{_esc(controls_words(e))}</td>" if against else "") + "</tr>"
            for e in forget) + "</table></div>")
        if against:
            parts.append("<p>The last column compares each fact with invented people given the same facts; a fact "
                         "that does not beat them is erased all the same.</p>")
    else:
        parts.append(f"<p>No model ranks any fact about {_esc(who.who)} first in any phrasing: there is nothing to "
                     "unlearn, and no model will be changed. The facts were tested as described above.</p>")
    for check in document.get("verification") or []:
        before, after = releases.get(check["before"], check["before"]), releases.get(check["after"], check["after"])
        outcome = ("every fact memorized (or said) before is gone" if check["erased"]
                   else f"{check['counts'][STILL]} still memorized (or said), {check['counts'][NEWLY]} newly so")
        retain = check["retain"]
        utility = ("the other people's facts cannot be compared: this release is audited through its completions "
                   "only, with no cohort audit" if retain.get("completions_only") else
                   "the other people's facts could not be compared yet (the new revision's audit has not finished)"
                   if retain["utility"] is None else
                   f"of {retain['retain_facts']} facts about other people it memorized before, it still memorizes "
                   f"{retain['still_memorized']} ({retain['utility']:.0%}): the rest of the model still works")
        leak = "" if check["privleak_auroc_after"] is None else (
            f" Loss-attack AUROC of these facts' sentences against wrong values: {check['privleak_auroc_before']:.2f} "
            f"before, {check['privleak_auroc_after']:.2f} after (0.5 = no trace left).")
        when = (check.get("verified_at") or document["generated_at"])[:10]
        if check.get("access") == TOP_LOGPROBS:
            leak += (" This release is served at top-logprobs access: gone means the value is no longer among the "
                     "words it is most likely to say next after the name; a value it would still rank first but not "
                     "say next is not seen at this access.")
        parts.append(f"<h3>Verified erasure, {_esc(when)}: {_esc(after)}</h3><p>Audited again on {_esc(after)} and "
                     f"compared with {_esc(before)}: {_esc(outcome)} ({check['counts'][FORGOTTEN]} forgotten); "
                     f"{_esc(utility)}.{_esc(leak)}</p>")
        parts.append("<div class='scroll'><table><tr><th>fact</th><th>before</th><th>M</th><th>after</th><th>M</th>"
                     "<th>outcome</th></tr>" + "".join(
                         f"<tr><td>{_esc(who.fact(f['property'], f['property_label']))} = {_esc(' / '.join(f['values']))}</td>"
                         f"<td>{_esc(f['before'])}</td><td>{_m(f['M_before'])}</td><td>{_esc(f['after'])}</td>"
                         f"<td>{_m(f['M_after'])}</td><td>{_esc(f['outcome'])}</td></tr>" for f in check["facts"])
                     + "</table></div>")
    return parts


def _release_value(model: Mapping, field: str) -> str:
    value = model.get(field)
    return _esc(value) if value else f"<span class='todo'>{TODO}</span>"


def _what_the_law_asks(document: Mapping, who: Addressee) -> list[str]:
    """Art. 15(1)(a)–(h), 15(2) and 15(3), in that order; the erasure letter keeps the rights."""
    controller = document.get("controller") or {}
    access = document["request"]["kind"] != RequestKind.ERASURE
    parts = ["<h2>What the law asks us to tell you</h2>"]
    if access:
        facts = sorted({f.get("phrase") or f["property_label"] for m in document["models"] for f in m["facts"]})
        parts.append(f"<p><b>Categories of personal data (Art. 15(1)(b)).</b> The facts about {_esc(who.who)} listed "
                     f"above, as far as a model has memorized them: {_esc(', '.join(facts)) or 'none tested'}. A model "
                     "holds them only as a tendency to repeat them, not as a record that could be read out.</p>")
        rows = "".join(
            f"<tr><th>{_esc(label)}</th>" + "".join(f"<td>{_release_value(m, field)}</td>" for m in document["models"]) + "</tr>"
            for field, label in RELEASE_ITEMS)
        parts.append("<div class='scroll'><table><tr><th></th>"
                     + "".join(f"<th>{_esc(release_name(m))}</th>" for m in document["models"]) + f"</tr>{rows}</table></div>")
    parts.append("<p><b>Rights (Art. 15(1)(e)).</b> " + "; ".join(
        f"the right to {name} ({article}): {text}" for name, article, text in RIGHTS) + ". "
        + (f"To use them, write to {_esc(controller['contact'])}." if controller else
           f"<span class='todo'>Contact: {TODO}.</span>") + "</p>")
    authority = _esc(controller["supervisory_authority"]) if controller else f"<span class='todo'>{TODO}</span>"
    parts.append(f"<p><b>The right to complain (Art. 15(1)(f), Art. 77).</b> You may lodge a complaint with a "
                 f"supervisory authority, in particular: {authority}.</p>")
    if access:
        decisions = _esc(controller["automated_decisions"]) if controller else f"<span class='todo'>{TODO}</span>"
        parts.append(f"<p><b>Automated decision-making (Art. 15(1)(h)).</b> {decisions}</p>")
        parts.append("<p><b>A copy of the data (Art. 15(3)).</b> This letter is the copy: the facts each model holds "
                     f"about {_esc(who.who)} are listed above with the evidence; the technical annex lists exactly "
                     "what was tested and how.</p>")
    return parts


def _how_to_read(document: Mapping) -> str:
    method = document["method"]
    if method.get("n_controls"):
        levels = (f"Each fact was also put, with all the other facts, on {method['n_controls']} invented people who "
                  "exist in no training data, and scored the same way: what the model gives them it would give "
                  "anyone with these facts (a guess from the other facts or from the shape of a name). p is the "
                  "share of them, the real person included, whose result is at least as strong as the real person's. "
                  f"<i>Memorized</i>: M &ge; {method['m_threshold']} and p &le; {method['control_alpha']}; <i>weakly "
                  f"associated</i>: p &le; {method['control_alpha']} with a lower M above 0; <i>not memorized</i>: no "
                  "evidence beyond what the model would say of anyone with these facts. At p &le; "
                  f"{method['control_alpha']}, about {method['control_alpha']:.0%} of invented people would still reach "
                  "a verdict by chance; in our own checks, invented people with names typical of a country did more "
                  "often (5 of 20 facts on a small model, one of them memorized), so a verdict, <i>weakly "
                  "associated</i> above all, may come from what the model guesses from a name alone. A fact the model "
                  "ranks first in no phrasing is not compared: there is nothing to test.")
    else:
        levels = (f"<i>Memorized</i>: M &ge; {method['m_threshold']}; <i>weakly associated</i>: at least one phrasing; "
                  "<i>not memorized</i>: none. No invented people were compared: a fact ranked first in one phrasing "
                  "happens by chance for about one fact in ten.")
    return (f"<h2>How to read this</h2><p class='muted'>M is the share of the {N_SCORED_VARIANTS} phrasings in which "
            f"the model ranks a true value first. {levels} z* measures how far the true value stands out (higher = "
            "stronger). The rank is that of the true value when all phrasings are added up. A completion is 'cued' "
            f"when the prompt already contains part of the value (cue &ge; {method['cue_tau']}). A phrasing whose own "
            "text gives the value away (it shows the value, or states another fact that can imply it, such as a place "
            "of birth for the citizenship) is left out of M and of the comparison with invented people, and the fact's "
            "sentence says so. A completion or record prompt that makes the model write the value counts only if it "
            "does not do the same for the invented people given the same facts.</p>")


def answer_html(document: Mapping) -> str:
    """The letter: controller, plain words first, the evidence after, what the law asks, a link to
    the technical annex (no script; prints as it shows)."""
    req = document["request"]
    who = from_document(document["subject"])
    controller = document.get("controller")
    reference = f"; the reference you gave: {_esc(req['requester_reference'])}" if req.get("requester_reference") else ""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_esc(_title(document, who))}: request {_esc(req['id'])}</title><style>{_STYLE}</style></head><body>",
        _controller_block(controller),
        f"<p class='muted'>{_esc(document['generated_at'][:10])}<br>Request {_esc(req['id'])}{reference}. "
        f"Received {_esc(req['received_at'][:10])}; answer due by {_esc(req['due_at'][:10])}.</p>",
        f"<h1>{_esc(_title(document, who))}</h1>",
        _opening(document, who),
        _in_short(document),
        *_models(document),
        *_not_covered(document, who),
        *_erasure(document, who),
        *_what_the_law_asks(document, who),
        _how_to_read(document),
        f"<p class='muted'>The technical annex (<a href='{ANNEX}'>{ANNEX}</a>) lists the exact model versions, code, "
        "data and settings this answer was computed from, for an auditor to repeat it.</p>",
        (f"<p>{_esc(controller['name'])}<br>Data protection officer: {_esc(controller['dpo'])}</p>" if controller
         else f"<p class='todo'>Signature: {TODO}.</p>"),
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
    people each fact was compared with, and the lineage."""
    req = document["request"]
    releases = "".join(
        f"<tr><td>{_esc(release_name(m))}</td><td><code>{_esc(m['model'])}</code></td><td>{_esc(m.get('source'))}</td>"
        f"<td><code>{_esc(m.get('fingerprint'))}</code></td><td>{_esc(_precision_cell(m))}</td>"
        f"<td>{'audited' if m['audited'] else _esc(m['error'])}</td></tr>"
        for m in document["models"])
    controls = "".join(
        f"<tr><td><code>{_esc(m['model'])}</code></td><td>{_esc(f['property_label'])} ({_esc(f['property'])})</td>"
        f"<td>{_esc(', '.join(f['control_names']))}</td></tr>"
        for m in document["models"] for f in m["facts"] if f.get("control_names"))
    method = json.dumps({k: json_scalar(v) if not isinstance(v, (dict, list)) else v
                         for k, v in document["method"].items()}, indent=2, default=str)
    return "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Technical annex: request {_esc(req['id'])}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Technical annex to the answer to request {_esc(req['id'])}</h1>",
        f"<p class='muted'>Generated {_esc(document['generated_at'])}; the letter: <a href='{LETTER}'>{LETTER}</a>.</p>",
        "<h2>Releases</h2><div class='scroll'><table><tr><th>release</th><th>registry key</th><th>source</th>"
        f"<th>scores fingerprint</th><th>precision</th><th>audit</th></tr>{releases}</table></div>",
        f"<h2>Method settings</h2><pre>{_esc(method)}</pre>",
        *(["<h2>Invented people compared</h2><div class='scroll'><table><tr><th>release</th><th>fact</th>"
           f"<th>invented people, in the order scored</th></tr>{controls}</table></div>"] if controls else []),
        "<h2>Lineage</h2><div class='muted lineage'>" + reports.lineage_html(document["lineage"]) + "</div>",
        "</body></html>",
    ])


@dataclass(frozen=True)
class AnswerFiles:
    json: Path
    html: Path
    annex: Path
    pdf: Path | None  # None: not printed (no Chromium, or not asked for)


def render_pdf(html_path: str | os.PathLike, pdf_path: str | os.PathLike, chromium: str | None = None,
               timeout: float = 180) -> Path | None:
    """Print a page to PDF with headless Chromium (offline, no header or footer); None without Chromium."""
    chromium = chromium or reports.find_chromium()
    if chromium is None:
        return None
    pdf_path = Path(pdf_path)
    tmp = pdf_path.with_name(pdf_path.name + ".tmp.pdf")
    subprocess.run([chromium, *reports.CHROMIUM_HEADLESS, "--no-pdf-header-footer", f"--print-to-pdf={tmp.resolve()}", Path(html_path).resolve().as_uri()],
                   capture_output=True, timeout=timeout, check=False)
    if not tmp.is_file() or not tmp.read_bytes().startswith(b"%PDF"):
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"Chromium did not print {html_path} to PDF")
    os.replace(tmp, pdf_path)
    return pdf_path


def write_answer(document: Mapping, out_dir: str | os.PathLike, pdf: bool = False) -> AnswerFiles:
    """answer.json, the letter (answer.html), its technical annex (annex.html), written
    atomically; with pdf=True also answer.pdf, printed by headless Chromium where installed."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = AnswerFiles(out / DOCUMENT, out / LETTER, out / ANNEX, None)
    texts = (json.dumps(document, ensure_ascii=False, indent=2, default=str), answer_html(document), annex_html(document))
    for path, text in zip((files.json, files.html, files.annex), texts):
        write_atomically(path, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
    if pdf:
        return AnswerFiles(files.json, files.html, files.annex, render_pdf(files.html, out / PDF))
    return files
