"""The letter's words in each letter language (English, German, French, Polish): written templates,
not machine translation, in the register of a data-protection officer's reply (GDPR / DSGVO / RGPD
/ RODO).

- `TEXT`: the catalogue, keyed by language, of HTML templates with named placeholders (values
  are passed in already escaped); a pair is (singular, plural), chosen by `Text.n`; Polish has
  a triple (one, few, many), chosen by `polish_plural`.
- `Person`: how a German, French or Polish letter speaks of the person and their facts (`fact`),
  the counterpart of `phrasing.Addressee` ("Ihr Beruf", "der Beruf von Douglas Adams"; "votre
  profession", "la profession de Douglas Adams"; "Pana/Pani zawód", "zawód osoby o imieniu i
  nazwisku Douglas Adams"), with a phrase for every property of `phrasing.PHRASES`.
- `sentence`: a fact's verdict as German, French or Polish sentences, covering what
  `answer.plain_sentence` and `answer._generation_sentence` say in English, read from the same
  fact fields. Which clauses apply is decided once, by `_sentence` (and `_generation_sentence`);
  each language's `_Words` (`_German`, `_French`, `_Polish`) only words them, keeping its own
  grammar: cases, plurals (`_plural`, `polish_plural`), Polish's fact-first construction; French
  typography is applied to the whole sentence. `headline`: the "in short" line from the
  structured fields of the models.
- Numbers, dates, language names, verdict words, not-covered reasons and left-out wordings in the
  letter's language. The English letter reads its sentences and headline from the document as
  `answer` wrote them; the technical annex stays English in every letter language.

Polish (RODO; the register of an "inspektor ochrony danych" writing for the "administrator"):

- The requester is addressed formally and, their gender being unknown, with the slash form
  throughout: "Pan/Pani", "Pana/Pani dane", "Panu/Pani", "z Panem/Panią", "Zwrócił(a) się
  Pan/Pani z żądaniem …".
- Names are never declined (as in the canary packs): a deceased person is always "osoba o
  imieniu i nazwisku Douglas Adams", "osoba" taking the case ("dotyczące osoby o imieniu i
  nazwisku Douglas Adams", "z osobą o imieniu i nazwisku …"), the name in the nominative; a
  fact is "Pana/Pani zawód" / "zawód osoby o imieniu i nazwisku Douglas Adams".
- Fact nouns are never declined either: a sentence names the fact first, in the nominative, and
  says the verdict of "tę informację" ("Pana/Pani zawód (dziennikarz) – model zapamiętał tę
  informację: …"); lists of facts follow a colon. A fact is "informacja", so the verdict words
  are feminine: "zapamiętana", "słabo powiązana", "niezapamiętana", "podawana" (said).
- Numbers: decimal comma, thousands after a non-breaking space, "32 %" with a non-breaking
  space; dates "1 grudnia 2026" (genitive month names, the Polish canaries' `format_date`).
- Plurals: three forms (1 informacja; 2–4, 22–24 informacje; 0, 5–21, 25 informacji),
  `polish_plural`; counts are otherwise put where the genitive plural is right for any number
  ("w 3 z 11 sformułowań", "1 z 3 informacji").
- The supervisory authority is named generically as "organ nadzorczy (w Polsce jest nim Prezes
  Urzędu Ochrony Danych Osobowych)".
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from wikimem_platform.canaries.languages.packs import LETTER_LANGUAGES, pack
from wikimem_platform.lm.endpoint import GENERATION, TOP_LOGPROBS, WEIGHTS
from wikimem_platform.subject_requests.answer import MEMORIZED, NOT_MEMORIZED, one_line, SAID, WEAK
from wikimem_platform.subject_requests.phrasing import Addressee
from wikimem_platform.vocabulary import AT_THRESHOLD, LENIENT, N_SCORED_VARIANTS, STRICT

ENGLISH, GERMAN, FRENCH, POLISH = "en", "de", "fr", "pl"  # LETTER_LANGUAGES: these, in this order


def letter_language(document: Mapping) -> str:
    """The language the letter is written in: document["letter_language"], English when absent."""
    language = document.get("letter_language") or ENGLISH
    if language not in LETTER_LANGUAGES:
        raise ValueError(f"letter_language {language!r}: one of {', '.join(LETTER_LANGUAGES)}")
    return language


def fact_language(fact: Mapping) -> str:
    """The language a fact's canaries were written in ("en" when the answer does not say)."""
    return fact.get("language") or ENGLISH


# ---------------------------------------------------------------------------------------------
# Language names, verdicts, numbers and dates

# letter language -> fact language -> (name, "asked in" phrase, adjective for "a German label")
LANGUAGE_NAMES: dict[str, dict[str, tuple[str, str, str]]] = {
    ENGLISH: {"en": ("English", "in English", "English"), "de": ("German", "in German", "German"),
              "fr": ("French", "in French", "French"), "pl": ("Polish", "in Polish", "Polish")},
    GERMAN: {"en": ("Englisch", "auf Englisch", "englische"), "de": ("Deutsch", "auf Deutsch", "deutsche"),
             "fr": ("Französisch", "auf Französisch", "französische"), "pl": ("Polnisch", "auf Polnisch", "polnische")},
    FRENCH: {"en": ("anglais", "en anglais", "anglais"), "de": ("allemand", "en allemand", "allemand"),
             "fr": ("français", "en français", "français"), "pl": ("polonais", "en polonais", "polonais")},
    # Polish: the adjective in the genitive ("nie mają polskiej nazwy")
    POLISH: {"en": ("angielski", "po angielsku", "angielskiej"), "de": ("niemiecki", "po niemiecku", "niemieckiej"),
             "fr": ("francuski", "po francusku", "francuskiej"), "pl": ("polski", "po polsku", "polskiej")},
}


def language_name(letter: str, language: str) -> str:
    return LANGUAGE_NAMES[letter].get(language, (language, language, language))[0]


def asked_in(letter: str, language: str) -> str:
    """ "in German" / "auf Deutsch" / "en allemand"."""
    return LANGUAGE_NAMES[letter].get(language, (language, f"({language})", language))[1]


# Verdicts as displayed (the document and the CSS classes keep the English values).
VERDICT_WORDS = {
    GERMAN: {MEMORIZED: "memorisiert", WEAK: "schwach verknüpft", NOT_MEMORIZED: "nicht memorisiert",
             SAID: "gibt es wieder"},
    FRENCH: {MEMORIZED: "mémorisé", WEAK: "faiblement associé", NOT_MEMORIZED: "non mémorisé",
             SAID: "le restitue"},
    # Polish: feminine, agreeing with "informacja" (the letter's word for a fact)
    POLISH: {MEMORIZED: "zapamiętana", WEAK: "słabo powiązana", NOT_MEMORIZED: "niezapamiętana",
             SAID: "podawana"},
}
# An erasure's outcome per fact (`answer.erasure_outcome`).
OUTCOME_WORDS = {
    GERMAN: {"forgotten": "vergessen", "still memorized": "weiterhin memorisiert",
             "newly memorized": "neu memorisiert", "not memorized": "nicht memorisiert"},
    FRENCH: {"forgotten": "oubliée", "still memorized": "toujours mémorisée",
             "newly memorized": "nouvellement mémorisée", "not memorized": "non mémorisée"},
    POLISH: {"forgotten": "zapomniana", "still memorized": "nadal zapamiętana",
             "newly memorized": "nowo zapamiętana", "not memorized": "niezapamiętana"},
}
CRITERION_WORDS = {GERMAN: {LENIENT: "weit gefasst", AT_THRESHOLD: "am Schwellenwert", STRICT: "streng"},
                   FRENCH: {LENIENT: "large", AT_THRESHOLD: "au seuil", STRICT: "strict"},
                   POLISH: {LENIENT: "szerokie", AT_THRESHOLD: "na poziomie progu", STRICT: "ścisłe"}}


def verdict_word(language: str, verdict: str) -> str:
    return VERDICT_WORDS.get(language, {}).get(verdict, verdict)


def outcome_word(language: str, outcome: str) -> str:
    return OUTCOME_WORDS.get(language, {}).get(outcome, outcome)


def criterion_word(language: str, criterion) -> str:
    return CRITERION_WORDS.get(language, {}).get(criterion, "" if criterion is None else str(criterion))


_NNBSP = "\u202f"  # French thousands separator and the space before a percent sign


def number(language: str, value: float, digits: int = 2) -> str:
    """0.05 / 0,05."""
    text = f"{float(value):.{digits}f}"
    return text if language == ENGLISH else text.replace(".", ",")


def plain_number(language: str, value) -> str:
    """A setting as written (0.8 / 0,8)."""
    return str(value) if language == ENGLISH else str(value).replace(".", ",")


def count(language: str, value: int) -> str:
    """1,234 / 1.234 / 1 234 (French: narrow, Polish: non-breaking space)."""
    text = f"{int(value):,}"
    return {GERMAN: text.replace(",", "."), FRENCH: text.replace(",", _NNBSP),
            POLISH: text.replace(",", "\u00a0")}.get(language, text)


def percent(language: str, share: float) -> str:
    """32% / 32 % / 32 % / 32 %."""
    return f"{share:.0%}" if language == ENGLISH else f"{share * 100:.0f}\u00a0%"


def date(language: str, iso: str) -> str:
    """An ISO date as the letter writes it: 2026-12-01 / 01.12.2026 / 01/12/2026 / 1 grudnia 2026."""
    day = str(iso)[:10]
    if language == ENGLISH or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        return day
    if language == POLISH:
        return pack(POLISH).format_date(day, day)
    y, m, d = day.split("-")
    return f"{d}.{m}.{y}" if language == GERMAN else f"{d}/{m}/{y}"


def written_date(language: str, label: str | None) -> str | None:
    """A date as the facts give it in English ("29 February 1924", "1924") as the letter's language
    writes it ("29. Februar 1924", "29 février 1924", the canaries' own `format_date`)."""
    if label is None or language == ENGLISH:
        return label
    from datetime import datetime

    for pattern, iso in (("%d %B %Y", "%Y-%m-%d"), ("%Y", "%Y")):
        try:
            parsed = datetime.strptime(str(label).strip(), pattern)
        except ValueError:
            continue
        return pack(language).format_date(parsed.strftime(iso), str(label))
    return label


def french_typography(text: str) -> str:
    """Non-breaking spaces before ':' ';' '?' '!' and inside guillemets (written with plain spaces)."""
    text = re.sub(r" ([:;?!»])", "\u00a0\\1", text)
    return text.replace("« ", "«\u00a0")


def quoted(language: str, text: str) -> str:
    return {ENGLISH: f"\u201c{text}\u201d", GERMAN: f"\u201e{text}\u201c", FRENCH: f"« {text} »",
            POLISH: f"\u201e{text}\u201d"}[language]


def release_name(language: str, model: Mapping) -> str:
    """A release as a person knows it, in the letter's language (`answer.release_name`)."""
    name, _, revision = str(model["model"]).partition("@")
    shown = model.get("display_name") or name
    word = {ENGLISH: "release", GERMAN: "Version", FRENCH: "version", POLISH: "wersja"}[language]
    return f"{shown} ({word} {revision})" if revision else shown


def access_cell(language: str, fact: Mapping) -> str:
    """The access a fact's verdict came through: the weights, or a served endpoint's level."""
    access = fact.get("access") or WEIGHTS
    weights, endpoint = {ENGLISH: ("weights", "endpoint"), GERMAN: ("Gewichte", "Endpunkt"),
                         FRENCH: ("poids", "point d’accès"), POLISH: ("wagi", "punkt końcowy")}[language]
    return weights if access == WEIGHTS else f"{endpoint}, {access}"


# What each endpoint access level let us read (`answer.ACCESS_MEANS`).
ACCESS_MEANS = {
    GERMAN: {"prompt-logprobs": "die Wahrscheinlichkeiten, die der Server unseren Sätzen zuweist, und seine "
                                "Vervollständigungen",
             "top-logprobs": "die wahrscheinlichsten nächsten Wörter des Servers mit ihren Wahrscheinlichkeiten "
                             "(seine Top-k), Wort für Wort nach dem Namen der Person gelesen, und seine "
                             "Vervollständigungen",
             "generation": "ausschließlich die Vervollständigungen des Servers"},
    FRENCH: {"prompt-logprobs": "les probabilités que le serveur attribue à nos phrases, et ses complétions",
             "top-logprobs": "les mots suivants les plus probables selon le serveur, avec leurs probabilités (son "
                             "top k), lus mot à mot après le nom de la personne, et ses complétions",
             "generation": "les seules complétions du serveur"},
    POLISH: {"prompt-logprobs": "prawdopodobieństwa, jakie serwer przypisuje naszym zdaniom, oraz jego uzupełnienia",
             "top-logprobs": "najbardziej prawdopodobne według serwera kolejne słowa wraz z ich prawdopodobieństwami "
                             "(jego top-k), odczytywane słowo po słowie po imieniu i nazwisku osoby, oraz jego "
                             "uzupełnienia",
             "generation": "wyłącznie uzupełnienia generowane przez serwer"},
}


# ---------------------------------------------------------------------------------------------
# How a German, French or Polish letter speaks of the person and their facts

# property -> (German gender m/f/n/pl, noun), (French article le/la/l'/les, noun), Polish noun (nominative:
# a Polish letter never declines a fact's noun, see `Person`)
FACT_NOUNS: dict[str, tuple[tuple[str, str], tuple[str, str], str]] = {
    "P21": (("n", "Geschlecht"), ("le", "sexe ou genre"), "płeć"),
    "P27": (("f", "Staatsangehörigkeit"), ("la", "nationalité"), "obywatelstwo"),
    "P19": (("m", "Geburtsort"), ("le", "lieu de naissance"), "miejsce urodzenia"),
    "P20": (("m", "Sterbeort"), ("le", "lieu de décès"), "miejsce śmierci"),
    "P569": (("n", "Geburtsdatum"), ("la", "date de naissance"), "data urodzenia"),
    "P570": (("n", "Sterbedatum"), ("la", "date de décès"), "data śmierci"),
    "P509": (("f", "Todesursache"), ("la", "cause du décès"), "przyczyna śmierci"),
    "P1196": (("f", "Todesart"), ("les", "circonstances du décès"), "okoliczności śmierci"),
    "P119": (("f", "Grabstätte"), ("le", "lieu d’inhumation"), "miejsce pochówku"),
    "P106": (("m", "Beruf"), ("la", "profession"), "zawód"),
    "P101": (("n", "Tätigkeitsfeld"), ("le", "domaine d’activité"), "dziedzina działalności"),
    "P108": (("m", "Arbeitgeber"), ("l’", "employeur"), "pracodawca"),
    "P69": (("f", "Ausbildungsstätte"), ("le", "lieu d’études"), "miejsce kształcenia"),
    "P512": (("m", "Hochschulabschluss"), ("le", "grade universitaire"), "stopień naukowy"),
    "P184": (("m", "Doktorvater oder die Doktormutter"), ("le", "directeur ou la directrice de thèse"),
             "promotor pracy doktorskiej"),
    "P185": (("pl", "Doktoranden"), ("les", "doctorants"), "doktoranci"),
    "P1066": (("pl", "Lehrer"), ("les", "maîtres"), "nauczyciele"),
    "P802": (("pl", "Schüler"), ("les", "élèves"), "uczniowie"),
    "P26": (("m", "Ehepartner"), ("le", "conjoint"), "małżonek"),
    "P451": (("m", "Lebenspartner"), ("le", "compagnon ou la compagne"), "partner lub partnerka życiowa"),
    "P22": (("m", "Vater"), ("le", "père"), "ojciec"),
    "P25": (("f", "Mutter"), ("la", "mère"), "matka"),
    "P40": (("pl", "Kinder"), ("les", "enfants"), "dzieci"),
    "P3373": (("pl", "Geschwister"), ("les", "frères et sœurs"), "rodzeństwo"),
    "P1038": (("pl", "Verwandten"), ("les", "membres de la famille"), "krewni"),
    "P53": (("f", "Familie"), ("la", "famille"), "rodzina"),
    "P735": (("m", "Vorname"), ("le", "prénom"), "imię"),
    "P734": (("m", "Familienname"), ("le", "nom de famille"), "nazwisko"),
    "P1559": (("m", "Name in der Muttersprache"), ("le", "nom dans la langue maternelle"),
              "imię i nazwisko w języku ojczystym"),
    "P742": (("n", "Pseudonym"), ("le", "pseudonyme"), "pseudonim"),
    "P1449": (("m", "Spitzname"), ("le", "surnom"), "przydomek"),
    "P103": (("f", "Muttersprache"), ("la", "langue maternelle"), "język ojczysty"),
    "P1412": (("pl", "Sprachkenntnisse"), ("les", "langues parlées ou écrites"), "znajomość języków"),
    "P6886": (("pl", "Arbeitssprachen"), ("les", "langues de travail"), "języki pracy"),
    "P140": (("f", "Religion oder Weltanschauung"), ("la", "religion ou conviction"), "wyznanie lub światopogląd"),
    "P172": (("f", "ethnische Zugehörigkeit"), ("l’", "origine ethnique"), "pochodzenie etniczne"),
    "P91": (("f", "sexuelle Orientierung"), ("l’", "orientation sexuelle"), "orientacja seksualna"),
    "P1050": (("f", "Erkrankung"), ("l’", "état de santé"), "stan zdrowia"),
    "P2048": (("f", "Körpergröße"), ("la", "taille"), "wzrost"),
    "P2067": (("n", "Körpergewicht"), ("le", "poids"), "masa ciała"),
    "P551": (("m", "Wohnort"), ("le", "lieu de résidence"), "miejsce zamieszkania"),
    "P937": (("m", "Arbeitsort"), ("le", "lieu de travail"), "miejsce pracy"),
    "P102": (("f", "Parteizugehörigkeit"), ("le", "parti politique"), "przynależność partyjna"),
    "P39": (("n", "Amt"), ("la", "fonction"), "pełniona funkcja"),
    "P463": (("f", "Mitgliedschaft in einer Organisation"), ("l’", "appartenance à une organisation"),
             "członkostwo w organizacjach"),
    "P166": (("f", "Auszeichnung"), ("la", "distinction"), "nagrody i wyróżnienia"),
    "P1411": (("f", "Nominierung"), ("la", "nomination"), "nominacje"),
    "P800": (("n", "Hauptwerk"), ("l’", "œuvre majeure"), "najważniejsze dzieło"),
    "P135": (("f", "Kunstrichtung"), ("le", "mouvement artistique"), "kierunek artystyczny"),
    "P136": (("n", "Genre"), ("le", "genre"), "gatunek"),
    "P1303": (("n", "Instrument"), ("l’", "instrument"), "instrument"),
    "P264": (("n", "Plattenlabel"), ("la", "maison de disques"), "wytwórnia płytowa"),
    "P412": (("n", "Stimmfach"), ("la", "tessiture"), "rodzaj głosu"),
    "P641": (("f", "Sportart"), ("le", "sport"), "dyscyplina sportu"),
    "P54": (("f", "Mannschaft"), ("l’", "équipe"), "drużyna"),
    "P413": (("f", "Spielposition"), ("le", "poste de jeu"), "pozycja w drużynie"),
    "P1532": (("f", "sportliche Nationalität"), ("la", "nationalité sportive"), "kraj reprezentowany w sporcie"),
    "P118": (("f", "Liga"), ("la", "ligue"), "liga"),
    "P286": (("m", "Cheftrainer"), ("l’", "entraîneur principal"), "trener"),
    "P241": (("f", "Teilstreitkraft"), ("la", "branche militaire"), "rodzaj sił zbrojnych"),
    "P410": (("m", "Dienstgrad"), ("le", "grade militaire"), "stopień wojskowy"),
    "P607": (("f", "Teilnahme an einem Konflikt"), ("la", "participation à un conflit"),
             "udział w konflikcie zbrojnym"),
    "P1344": (("f", "Teilnahme an einem Ereignis"), ("la", "participation à un événement"), "udział w wydarzeniu"),
    "P1340": (("f", "Augenfarbe"), ("la", "couleur des yeux"), "kolor oczu"),
    "P1884": (("f", "Haarfarbe"), ("la", "couleur des cheveux"), "kolor włosów"),
    "P97": (("m", "Adelstitel"), ("le", "titre de noblesse"), "tytuł szlachecki"),
    "P511": (("m", "Ehrentitel"), ("le", "titre honorifique"), "tytuł honorowy"),
    "P1035": (("m", "Namenszusatz"), ("le", "suffixe honorifique"), "honorowy dodatek do nazwiska"),
    "P1327": (("m", "Geschäfts- oder Sportpartner"), ("le", "partenaire professionnel ou sportif"),
              "partner zawodowy lub sportowy"),
    "P710": (("f", "Teilnahme an einem Ereignis"), ("la", "participation à un événement"), "udział w wydarzeniu"),
}
# German determiners by gender and case: possessive ("Ihr") and definite article.
_DE_POSSESSIVE = {"nom": {"m": "Ihr", "f": "Ihre", "n": "Ihr", "pl": "Ihre"},
                  "acc": {"m": "Ihren", "f": "Ihre", "n": "Ihr", "pl": "Ihre"}}
_DE_ARTICLE = {"nom": {"m": "der", "f": "die", "n": "das", "pl": "die"},
               "acc": {"m": "den", "f": "die", "n": "das", "pl": "die"}}
_FR_VOWEL = tuple("aeiouyàâäéèêëîïôöûüœAEIOUYÀÂÄÉÈÊËÎÏÔÖÛÜŒ")
# Wikidata's English labels of the facts a left-out wording can state (`crm.giveaways.IMPLIED_BY`).
WIKIDATA_LABELS = {
    "place of birth": "P19", "place of death": "P20", "residence": "P551", "place of burial": "P119",
    "country of citizenship": "P27", "country for sport": "P1532", "member of political party": "P102",
    "position held": "P39", "languages spoken, written or signed": "P1412", "native language": "P103",
    "member of sports team": "P54", "position played on team / speciality": "P413", "league": "P118",
    "occupation": "P106", "instrument": "P1303", "record label": "P264", "genre": "P136", "field of work": "P101",
    "notable work": "P800", "sport": "P641", "educated at": "P69", "employer": "P108", "doctoral advisor": "P184",
    "doctoral student": "P185",
}


def _space(article: str) -> str:
    """After a French article: none after an elided one ("l’employeur")."""
    return "" if article.endswith("\u2019") else " "


def french_of(name: str) -> str:
    """"de Douglas Adams" / "d'Alan Turing"."""
    return f"d’{name}" if name.startswith(_FR_VOWEL) else f"de {name}"


def french_after(preposition: str, phrase: str) -> str:
    """"de" or "à" before a noun phrase, contracted: "du lieu", "aux enfants", "de la profession"."""
    contracted = {("de", "le "): "du ", ("de", "les "): "des ", ("à", "le "): "au ", ("à", "les "): "aux "}
    for (prep, article), merged in contracted.items():
        if prep == preposition and phrase.startswith(article):
            return merged + phrase[len(article):]
    if preposition == "de" and phrase.startswith(_FR_VOWEL):
        return "d’" + phrase
    return f"{preposition} {phrase}"


# Polish: how a deceased person is named; the name itself stays in the nominative after it.
PL_NAMED = "osoba o imieniu i nazwisku"
_PL_NAMED_CASES = {"nom": "osoba", "gen": "osoby", "dat": "osobie", "ins": "osobą", "loc": "osobie"}
# Polish: the requester, addressed formally without knowing their gender ("Pan/Pani").
_PL_YOU = {"nom": "Pan/Pani", "gen": "Pana/Pani", "dat": "Panu/Pani", "ins": "Panem/Panią", "loc": "Panu/Pani"}


@dataclass(frozen=True)
class Person:
    """How a German, French or Polish letter speaks of the person: "Sie" / "vous" / "Pan/Pani"
    while living, by name once deceased (`phrasing.Addressee`)."""

    language: str
    addressee: Addressee

    @property
    def deceased(self) -> bool:
        return self.addressee.deceased

    @property
    def name(self) -> str:
        return self.addressee.name

    # German: "über Sie" / "über Douglas Adams" (accusative), "mit Ihnen" (dative), "zu Ihrer Person".
    @property
    def acc(self) -> str:
        return self.name if self.deceased else "Sie"

    @property
    def dat(self) -> str:
        return self.name if self.deceased else "Ihnen"

    @property
    def zu(self) -> str:
        return self.name if self.deceased else "Ihrer Person"

    # French: "vous concernant" / "concernant Douglas Adams", "de vous" / "d'Alan Turing", "à votre personne".
    @property
    def about(self) -> str:
        return f"concernant {self.name}" if self.deceased else "vous concernant"

    @property
    def of(self) -> str:
        return french_of(self.name) if self.deceased else "de vous"

    @property
    def to(self) -> str:
        return f"à {self.name}" if self.deceased else "à votre personne"

    # Polish: "Pana/Pani" / "osoby o imieniu i nazwisku Douglas Adams" — the name never declined.
    def pl(self, case: str) -> str:
        """The person in a Polish case (nom, gen, dat, ins, loc)."""
        if self.deceased:
            return f"{_PL_NAMED_CASES[case]} o imieniu i nazwisku {self.name}"
        return _PL_YOU[case]

    @property
    def gen(self) -> str:
        return self.pl("gen")

    def fact(self, prop: str, label: str, case: str = "nom") -> str:
        """A fact as a noun phrase: "Ihr Beruf", "den Beruf von Douglas Adams" (case "acc"),
        "votre profession", "la profession de Douglas Adams", "Pana/Pani zawód", "zawód osoby o
        imieniu i nazwisku Douglas Adams" (always nominative); a property without a phrase by its
        label, quoted."""
        nouns = FACT_NOUNS.get(prop)
        if self.language == POLISH:  # the noun in the nominative, whatever `case` asks
            if nouns is None:
                return f"informacja \u201e{label}\u201d dotycząca {self.gen}"
            return f"{nouns[2]} {self.gen}" if self.deceased else f"{self.gen} {nouns[2]}"
        if self.language == GERMAN:
            if nouns is None:
                return f"die Angabe \u201e{label}\u201c zu {self.zu}"
            gender, noun = nouns[0]
            if self.deceased:
                return f"{_DE_ARTICLE[case][gender]} {noun} von {self.name}"
            return f"{_DE_POSSESSIVE[case][gender]} {noun}"
        if nouns is None:
            return f"l’information « {label} » {self.about}"
        article, noun = nouns[1]
        if self.deceased:
            return f"{article}{_space(article)}{noun} {french_of(self.name)}"
        return f"{'vos' if article == 'les' else 'votre'} {noun}"


def generic_fact(language: str, prop: str, label: str) -> str:
    """A fact named without its owner, as a left-out wording states it: "den Geburtsort", "le lieu de
    naissance", "miejsce urodzenia" (nominative)."""
    nouns = FACT_NOUNS.get(prop)
    if language == POLISH:
        return f"informacja \u201e{label}\u201d" if nouns is None else nouns[2]
    if language == GERMAN:
        if nouns is None:
            return f"die Angabe \u201e{label}\u201c"
        gender, noun = nouns[0]
        return f"{_DE_ARTICLE['acc'][gender]} {noun}"
    if nouns is None:
        return f"l’information « {label} »"
    article, noun = nouns[1]
    return f"{article}{_space(article)}{noun}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------------------------
# Free text the answer carries in English: why a fact was not tested, why a wording was left out

_REASONS = (
    (r"not among the audited properties",
     {GERMAN: "gehört nicht zu den geprüften Angaben", FRENCH: "ne fait pas partie des données examinées",
      POLISH: "nie należy do badanych informacji"}),
    (r"a Wikimedia page or an identifier in another database, not a fact about the person",
     {GERMAN: "eine Wikimedia-Seite oder eine Kennung in einer anderen Datenbank, keine Angabe über die Person",
      FRENCH: "une page Wikimédia ou un identifiant dans une autre base de données, et non une donnée sur la personne",
      POLISH: "strona Wikimedia lub identyfikator w innej bazie danych, a nie informacja o osobie"}),
    (r"no English label or a datatype \((?P<datatype>.*)\) a sentence cannot state",
     {GERMAN: "keine englische Bezeichnung oder ein Datentyp ({datatype}), den ein Satz nicht ausdrücken kann",
      FRENCH: "pas de libellé anglais, ou un type de données ({datatype}) qu’une phrase ne peut pas exprimer",
      POLISH: "brak angielskiej nazwy lub typ danych ({datatype}), którego nie da się wyrazić w zdaniu"}),
    (r"no other person in the reference data has a value for it, and at least (?P<needed>\d+) are needed to rank "
     r"the true value against",
     {GERMAN: "keine andere Person in den Referenzdaten hat hierfür einen Wert, es werden aber mindestens {needed} "
              "benötigt, um den zutreffenden Wert dagegen einzuordnen",
      FRENCH: "aucune autre personne des données de référence n’a de valeur pour cette donnée, alors qu’il en faut "
              "au moins {needed} pour y classer la valeur exacte",
      POLISH: "żadna inna osoba w danych referencyjnych nie ma wartości tej informacji, a do uszeregowania "
              "prawdziwej wartości potrzeba ich co najmniej {needed}"}),
    (r"other people in the reference data hold only (?P<held>\d+) other values? of it, and at least (?P<needed>\d+) "
     r"are needed to rank the true value against",
     {GERMAN: "andere Personen in den Referenzdaten weisen hierfür nur {held} andere Werte auf, es werden aber "
              "mindestens {needed} benötigt, um den zutreffenden Wert dagegen einzuordnen",
      FRENCH: "les autres personnes des données de référence ne présentent que {held} autres valeurs pour cette "
              "donnée, alors qu’il en faut au moins {needed} pour y classer la valeur exacte",
      POLISH: "liczba innych wartości tej informacji występujących u innych osób w danych referencyjnych wynosi "
              "tylko {held}, a do uszeregowania prawdziwej wartości potrzeba ich co najmniej {needed}"}),
    (r"no (?P<n>\d+) canary wordings could be written for it \((?P<error>.*)\)",
     {GERMAN: "es konnten nicht {n} Formulierungen dafür geschrieben werden (technische Meldung: \u201e{error}\u201c)",
      FRENCH: "il n’a pas été possible de rédiger {n} formulations pour cette donnée (message technique : « {error} »)",
      POLISH: "nie udało się przygotować {n} sformułowań tej informacji (komunikat techniczny: \u201e{error}\u201d)"}),
)


def reason(language: str, text: str) -> str:
    """A not-covered reason (`audit.plan_person`) in the letter's language; one not known here
    is quoted as the technical message it is."""
    for pattern, words in _REASONS:
        found = re.fullmatch(pattern, str(text))
        if found:
            return words[language].format(**found.groupdict())
    return {GERMAN: f"technische Meldung: \u201e{text}\u201c", FRENCH: f"message technique : « {text} »",
            POLISH: f"komunikat techniczny: \u201e{text}\u201d"}[language]


def left_out_detail(language: str, detail: str) -> str:
    """Why a wording was left out (`crm.giveaways`): "it shows “X”", "it states the place of birth,
    which can imply the value"."""
    shown = re.fullmatch(r"it shows \u201c(?P<value>.*)\u201d", detail)
    if shown:
        return {GERMAN: f"sie zeigt \u201e{shown['value']}\u201c", FRENCH: f"elle montre « {shown['value']} »",
                POLISH: f"zawiera \u201e{shown['value']}\u201d"}[language]
    states = re.fullmatch(r"it states the (?P<named>.*), which can imply the value", detail)
    if states:
        named = states["named"]
        labels = _split_labels(named)
        facts = ", ".join(generic_fact(language, WIKIDATA_LABELS.get(label, ""), label) for label in labels)
        several = len(labels) > 1
        return {GERMAN: f"sie nennt {facts}, woraus sich der Wert ergeben kann",
                FRENCH: f"elle indique {facts}, qui peut laisser deviner la valeur",
                POLISH: (f"podaje inne informacje, z których można wywnioskować wartość: {facts}" if several else
                         f"podaje inną informację, z której można wywnioskować wartość: {facts}")}[language]
    return reason(language, detail)


def _split_labels(named: str) -> list[str]:
    """The labels a giveaway joined with ", " (a label may hold a comma itself)."""
    out, rest = [], named
    while rest:
        known = next((label for label in sorted(WIKIDATA_LABELS, key=len, reverse=True)
                      if rest == label or rest.startswith(label + ", ")), None)
        label = known or rest.split(", ", 1)[0]
        out.append(label)
        rest = rest[len(label) + 2:] if len(rest) > len(label) else ""
    return out


# ---------------------------------------------------------------------------------------------
# The catalogue

TODO = {
    ENGLISH: "to be completed by the controller before this letter is sent",
    GERMAN: "vom Verantwortlichen vor dem Versand dieses Schreibens zu ergänzen",
    FRENCH: "à compléter par le responsable du traitement avant l’envoi du présent courrier",
    POLISH: "do uzupełnienia przez administratora przed wysłaniem niniejszego pisma",
}

# Art. 15(1)(e) and (f): the rights a reply must name, with the article that grants each.
RIGHTS = {
    GERMAN: (("das Recht auf Berichtigung", "Art. 16 DSGVO",
              "unrichtige personenbezogene Daten berichtigen und unvollständige vervollständigen zu lassen"),
             ("das Recht auf Löschung", "Art. 17 DSGVO", "personenbezogene Daten löschen zu lassen"),
             ("das Recht auf Einschränkung der Verarbeitung", "Art. 18 DSGVO",
              "die Verarbeitung einschränken zu lassen, solange die Richtigkeit oder Rechtmäßigkeit bestritten wird"),
             ("das Widerspruchsrecht", "Art. 21 DSGVO",
              "einer Verarbeitung auf Grundlage berechtigter Interessen oder zum Zweck der Direktwerbung zu "
              "widersprechen")),
    FRENCH: (("du droit de rectification", "article 16 du RGPD",
              "obtenir la rectification des données inexactes et que les données incomplètes soient complétées"),
             ("du droit à l’effacement", "article 17 du RGPD", "obtenir l’effacement de données à caractère personnel"),
             ("du droit à la limitation du traitement", "article 18 du RGPD",
              "obtenir la limitation du traitement lorsque l’exactitude ou la licéité des données est contestée"),
             ("du droit d’opposition", "article 21 du RGPD",
              "s’opposer à un traitement fondé sur l’intérêt légitime ou à des fins de prospection")),
    POLISH: (("prawo do sprostowania danych", "art. 16 RODO",
              "żądania sprostowania nieprawidłowych danych osobowych oraz uzupełnienia niekompletnych danych"),
             ("prawo do usunięcia danych", "art. 17 RODO", "żądania usunięcia danych osobowych"),
             ("prawo do ograniczenia przetwarzania", "art. 18 RODO",
              "żądania ograniczenia przetwarzania, gdy kwestionowana jest prawidłowość danych lub zgodność "
              "przetwarzania z prawem"),
             ("prawo do sprzeciwu", "art. 21 RODO",
              "wniesienia sprzeciwu wobec przetwarzania opartego na prawnie uzasadnionym interesie lub prowadzonego na "
              "potrzeby marketingu bezpośredniego")),
}
# What the model register says of each release, by the Art. 15 item it answers (`letter.RELEASE_ITEMS`).
RELEASE_LABELS = {
    GERMAN: {"purposes": "Zwecke der Verarbeitung (Art. 15 Abs. 1 lit. a DSGVO)",
             "recipients": "Empfänger (Art. 15 Abs. 1 lit. c DSGVO)",
             "retention": "Speicherdauer des Modells (Art. 15 Abs. 1 lit. d DSGVO)",
             "training_data": "Herkunft der Daten (Art. 15 Abs. 1 lit. g DSGVO)",
             "transfers": "Übermittlungen in Drittländer und geeignete Garantien (Art. 15 Abs. 2 DSGVO)"},
    FRENCH: {"purposes": "Finalités du traitement (article 15, paragraphe 1, point a), du RGPD)",
             "recipients": "Destinataires (article 15, paragraphe 1, point c), du RGPD)",
             "retention": "Durée de conservation du modèle (article 15, paragraphe 1, point d), du RGPD)",
             "training_data": "Source des données (article 15, paragraphe 1, point g), du RGPD)",
             "transfers": "Transferts vers des pays tiers et garanties appropriées (article 15, paragraphe 2, du RGPD)"},
    POLISH: {"purposes": "Cele przetwarzania (art. 15 ust. 1 lit. a RODO)",
             "recipients": "Odbiorcy (art. 15 ust. 1 lit. c RODO)",
             "retention": "Okres przechowywania modelu (art. 15 ust. 1 lit. d RODO)",
             "training_data": "Źródło danych (art. 15 ust. 1 lit. g RODO)",
             "transfers": "Przekazywanie do państw trzecich i odpowiednie zabezpieczenia (art. 15 ust. 2 RODO)"},
}
# The controller's default Art. 15(1)(h) statement (`controller.Controller.automated_decisions`).
AUTOMATED_DEFAULT = ("The models audited here are not used to take decisions based solely on automated processing "
                     "that produce legal or similarly significant effects on anyone (Art. 22 GDPR).")
AUTOMATED = {
    GERMAN: "Die hier geprüften Modelle werden nicht für ausschließlich auf einer automatisierten Verarbeitung "
            "beruhende Entscheidungen verwendet, die gegenüber einer Person rechtliche Wirkung entfalten oder sie in "
            "ähnlicher Weise erheblich beeinträchtigen (Art. 22 DSGVO).",
    FRENCH: "Les modèles examinés ici ne sont pas utilisés pour prendre des décisions fondées exclusivement sur un "
            "traitement automatisé produisant des effets juridiques à l’égard d’une personne ou l’affectant de "
            "manière significative de façon similaire (article 22 du RGPD).",
    POLISH: "Badane modele nie są wykorzystywane do podejmowania decyzji, które opierają się wyłącznie na "
            "zautomatyzowanym przetwarzaniu i wywołują wobec kogokolwiek skutki prawne lub w podobny sposób istotnie "
            "na niego wpływają (art. 22 RODO).",
}

TEXT: dict[str, dict[str, str | tuple[str, ...]]] = {
    ENGLISH: {
        "controller_todo": "Controller, address, contact, data protection officer and supervisory authority: {todo} "
                           "(<code>wikimem controller set</code>).",
        "dpo": "Data protection officer: {dpo}",
        "title_access": "Access to your personal data (GDPR Art. 15)",
        "title_access_deceased": "Access to the personal data of {name} (GDPR Art. 15)",
        "title_erasure": "Erasure of your personal data (GDPR Art. 17)",
        "title_erasure_deceased": "Erasure of the personal data of {name} (GDPR Art. 17)",
        "page_title": "{title}: request {id}",
        "header": "{date}<br>Request {id}{reference}. Received {received}; answer due by {due}.",
        "reference": "; the reference you gave: {reference}",
        "source_qid": " (Wikidata {qid})",
        "source_facts": " (the facts given with the request)",
        "opening_erasure": "You asked us to erase the personal data about {person} that the language models we operate "
                           "may hold (Art. 17 GDPR). This letter says what we found in each model, which facts we will "
                           "erase, what we will do and by when.",
        "opening_access": "You asked which personal data about {person} the language models we operate hold (Art. 15 GDPR).",
        "opening_tested": (" A language model keeps no records, but it can memorize facts from the texts it was trained "
                           "on and repeat them. We therefore tested every model we operate ({n} release audited) on each "
                           "fact known about {who}: we wrote each fact in {variants} different ways",
                           " A language model keeps no records, but it can memorize facts from the texts it was trained "
                           "on and repeat them. We therefore tested every model we operate ({n} releases audited) on each "
                           "fact known about {who}: we wrote each fact in {variants} different ways"),
        "opening_in_language": " ({language})",
        "opening_in_languages": " (each in the language noted with it)",
        "opening_ranked": " and checked whether the model prefers the true value over {span} other values that other "
                          "people hold, after correcting for how likely the value is in general (WikiMem's calibrated "
                          "ranking)",
        "opening_said_only": "{sep} and where a model answers only with text ({names}: it gives no probabilities) we "
                             "asked it to complete each of those sentences and counted how often it named the value, "
                             "against invented people given the same facts",
        "opening_record": ". We also asked each model to complete the sentence itself, and to fill in a record of {who} "
                          "(the name and a few other facts, then the one asked for). Facts a model wrote out are listed "
                          "first.",
        "opening_deceased": " {name} has died (date of death: {dod}); this letter speaks of {name} by name and is "
                            "addressed to you, who asked. The GDPR does not protect the data of deceased persons "
                            "(Recital 27); we answer in the same form, as national law or our own policy provides.",
        "span_one": "{low}", "span_range": "{low} to {high}", "span_none": "about 100",
        "in_short": "<b>In short:</b> {headline}.",
        "in_short_forget": ("{memorized} fact is memorized at the threshold; ",
                            "{memorized} facts are memorized at the threshold; "),
        "in_short_enter": ("{n} fact enters the forget set, because we erase every fact a model ranks first in at least "
                           "one phrasing, not only those it has memorized: a fact a model leans towards is erased too.",
                           "{n} facts enter the forget set, because we erase every fact a model ranks first in at least "
                           "one phrasing, not only those it has memorized: a fact a model leans towards is erased too."),
        "models": "What each model holds",
        "not_audited": "This model could not be audited: {error}. We will audit it again and write to you.",
        "fact_item": "<li><span class='{css}'>{verdict}</span>: {sentence}</li>",
        "fact_asked_in": " The model was asked {language}.",
        "fact_fallback": " Some values have no label {language} and are given in English.",
        "th_fact": "fact", "th_language": "asked in", "th_verdict": "verdict", "th_access": "access", "th_rank": "rank",
        "th_chance": "invented people as strong (p)", "th_completion": "model's completion", "th_cue": "cue",
        "th_record": "record prompt that made it say the value",
        "no_completion": "(no prompt names the person before the value)",
        "completion_controls": " (named the value for {k} of {n} invented people too)",
        "cued": " (cued)",
        "record_controls": "; for {k} of {n} invented people too",
        "chance": "{k} of {n} (p = {p})", "not_compared": "not compared",
        "rank": "{rank} of {n}",
        "said_in": "said in {said} of {asked}",
        "precision": "This model was scored in reduced precision ({precision}) to save time; the {n} sentences ({share}) "
                     "close enough to change a ranking were scored again in full precision (float32), so every verdict "
                     "above is the one full precision gives.",
        "not_covered": "Facts we could not test",
        "not_covered_item": "<li>{fact}: {reason}.</li>",
        "erasure": "What we will erase, and by when",
        "erasure_plan": ("{n} fact about {who} enters the forget set", "{n} facts about {who} enter the forget set"),
        "erasure_steps": " (criterion <i>{criterion}</i>). By <b>{due}</b> (one month after the request was received, "
                         "Art. 12(3) GDPR) we will: (1) unlearn these facts from {targets}, producing a new revision of "
                         "each; (2) audit the new revision with the same tests as above, fact by fact, and check that the "
                         "model's knowledge of other people is kept; (3) replace the current revision with the new one "
                         "only once the audit shows every fact gone, and write to you with that verification. Until "
                         "then, the current revision stays in service.",
        "th_model": "model", "th_value": "value", "th_against": "against invented people",
        "against_note": "The last column compares each fact with invented people given the same facts; a fact that does "
                        "not beat them is erased all the same.",
        "nothing_to_erase": "No model ranks any fact about {who} first in any phrasing: there is nothing to unlearn, and "
                            "no model will be changed. The facts were tested as described above.",
        "said_only_strength": "said (completions only)",
        "erased": "every fact memorized (or said) before is gone",
        "not_erased": "{still} still memorized (or said), {newly} newly so",
        "utility_completions": "the other people's facts cannot be compared: this release is audited through its "
                               "completions only, with no cohort audit",
        "utility_pending": "the other people's facts could not be compared yet (the new revision's audit has not finished)",
        "utility": "of {retain} facts about other people it memorized before, it still memorizes {still} ({share}): "
                   "the rest of the model still works",
        "leak": " Loss-attack AUROC of these facts' sentences against wrong values: {before} before, {after} after "
                "(0.5 = no trace left).",
        "leak_top_logprobs": " This release is served at top-logprobs access: gone means the value is no longer among the "
                             "words it is most likely to say next after the name; a value it would still rank first but "
                             "not say next is not seen at this access.",
        "verified": "<h3>Verified erasure, {when}: {after}</h3><p>Audited again on {after} and compared with {before}: "
                    "{outcome} ({forgotten} forgotten); {utility}.{leak}</p>",
        "th_before": "before", "th_after": "after", "th_outcome": "outcome",
        "law": "What the law asks us to tell you",
        "categories": "<p><b>Categories of personal data (Art. 15(1)(b)).</b> The facts about {who} listed above, as far "
                      "as a model has memorized them: {facts}. A model holds them only as a tendency to repeat them, not "
                      "as a record that could be read out.</p>",
        "none_tested": "none tested",
        "rights": "<b>Rights (Art. 15(1)(e)).</b> ",
        "right": "the right to {name} ({article}): {text}",
        "rights_contact": "To use them, write to {contact}.",
        "contact_todo": "Contact: {todo}.",
        "complaint": "<p><b>The right to complain (Art. 15(1)(f), Art. 77).</b> You may lodge a complaint with a "
                     "supervisory authority, in particular: {authority}.</p>",
        "kept": "<p><b>How long we keep this request (Art. 5(1)(e)).</b> We keep the request, the data given to us for "
                "it and this answer for {days} days after answering, then delete them from every system of this audit; "
                "only a record that the request was received and answered, without the data, remains (Art. 5(2)).</p>",
        "automated": "<p><b>Automated decision-making (Art. 15(1)(h)).</b> {decisions}</p>",
        "copy": "<p><b>A copy of the data (Art. 15(3)).</b> This letter is the copy: the facts each model holds about "
                "{who} are listed above with the evidence; the technical annex lists exactly what was tested and how.</p>",
        "read_controls": "Each fact was also put, with all the other facts, on {n} invented people who exist in no "
                         "training data, and scored the same way: what the model gives them it would give anyone with "
                         "these facts (a guess from the other facts or from the shape of a name). p is the share of "
                         "them, the real person included, whose result is at least as strong as the real person's. "
                         "<i>Memorized</i>: M &ge; {threshold} and p &le; {alpha} with all the facts compared read "
                         "together (the Benjamini–Hochberg correction); <i>weakly associated</i>: p &le; {alpha} for the fact alone, M "
                         "above 0; <i>not memorized</i>: no evidence beyond what the model would say of anyone with "
                         "these facts. At p &le; {alpha}, about {alpha_share} of invented people would still reach a "
                         "verdict by chance. The invented people are chosen among many so that their names lead the "
                         "model as far as the person's own name does, and a fact the name alone explains is not counted; "
                         "in our own check on a small model, invented people with names typical of eight countries had 3 of 192 facts weakly associated and none memorized. A fact the model ranks first in no phrasing is not compared: there is nothing to test.",
        "read_plain": "<i>Memorized</i>: M &ge; {threshold}; <i>weakly associated</i>: at least one phrasing; <i>not "
                      "memorized</i>: none. No invented people were compared: a fact ranked first in one phrasing happens "
                      "by chance for about one fact in ten.",
        "read": "<h2>How to read this</h2><p class='muted'>M is the share of the {variants} phrasings in which the model "
                "ranks a true value first. {levels} z* measures how far the true value stands out (higher = stronger). "
                "The rank is that of the true value when all phrasings are added up. A completion is 'cued' when the "
                "prompt already contains part of the value (cue &ge; {tau}). A phrasing whose own text gives the value "
                "away (it shows the value, or states another fact that can imply it, such as a place of birth for the "
                "citizenship) is left out of M and of the comparison with invented people, and the fact's sentence says "
                "so. A completion or record prompt that makes the model write the value counts only if it does not do "
                "the same for the invented people given the same facts.</p>",
        "annex": "<p class='muted'>The technical annex (<a href='{annex}'>{annex}</a>) lists the exact model versions, "
                 "code, data and settings this answer was computed from, for an auditor to repeat it.</p>",
        "annex_language": "",
        "signature": "<p>{name}<br>Data protection officer: {dpo}</p>",
        "signature_todo": "<p class='todo'>Signature: {todo}.</p>",
        "list": "; ",
    },
    GERMAN: {
        "controller_todo": "Verantwortlicher, Anschrift, Kontakt, Datenschutzbeauftragter und Aufsichtsbehörde: {todo} "
                           "(<code>wikimem controller set</code>).",
        "dpo": "Datenschutzbeauftragter: {dpo}",
        "title_access": "Auskunft über Ihre personenbezogenen Daten (Art. 15 DSGVO)",
        "title_access_deceased": "Auskunft über die personenbezogenen Daten von {name} (Art. 15 DSGVO)",
        "title_erasure": "Löschung Ihrer personenbezogenen Daten (Art. 17 DSGVO)",
        "title_erasure_deceased": "Löschung der personenbezogenen Daten von {name} (Art. 17 DSGVO)",
        "page_title": "{title}: Anfrage {id}",
        "header": "{date}<br>Anfrage {id}{reference}. Eingegangen am {received}; Antwort fällig bis {due}.",
        "reference": "; Ihr Zeichen: {reference}",
        "source_qid": " (Wikidata {qid})",
        "source_facts": " (die mit der Anfrage übermittelten Angaben)",
        "opening_erasure": "Sie haben uns gebeten, die personenbezogenen Daten über {person} zu löschen, die in den von "
                           "uns betriebenen Sprachmodellen enthalten sein könnten (Art. 17 DSGVO). Dieses Schreiben legt "
                           "dar, was wir in jedem Modell gefunden haben, welche Angaben wir löschen werden, was wir dazu "
                           "tun und bis wann.",
        "opening_access": "Sie haben Auskunft darüber verlangt, welche personenbezogenen Daten über {person} in den von "
                          "uns betriebenen Sprachmodellen enthalten sind (Art. 15 DSGVO).",
        "opening_tested": (" Ein Sprachmodell speichert keine Datensätze, es kann sich aber Angaben aus den Texten, mit denen "
                           "es trainiert wurde, einprägen und sie wiedergeben. Wir haben daher jedes von uns betriebene "
                           "Modell ({n} geprüfte Version) auf jede über {who} bekannte Angabe hin untersucht: Wir haben "
                           "jede Angabe auf {variants} verschiedene Arten formuliert",
                           " Ein Sprachmodell speichert keine Datensätze, es kann sich aber Angaben aus den Texten, mit denen "
                           "es trainiert wurde, einprägen und sie wiedergeben. Wir haben daher jedes von uns betriebene "
                           "Modell ({n} geprüfte Versionen) auf jede über {who} bekannte Angabe hin untersucht: Wir haben "
                           "jede Angabe auf {variants} verschiedene Arten formuliert"),
        "opening_in_language": " ({language})",
        "opening_in_languages": " (jeweils in der bei der Angabe vermerkten Sprache)",
        "opening_ranked": " und geprüft, ob das Modell den zutreffenden Wert gegenüber {span} anderen Werten, die andere "
                          "Personen aufweisen, bevorzugt, nachdem berücksichtigt wurde, wie wahrscheinlich der Wert "
                          "allgemein ist (die kalibrierte Rangfolge von WikiMem)",
        "opening_said_only": "{sep} und bei Modellen, die nur mit Text antworten ({names}, die keine "
                             "Wahrscheinlichkeiten liefern), haben wir jeden dieser Sätze vervollständigen lassen und gezählt, "
                             "wie oft der Wert genannt wurde, im Vergleich mit erfundenen Personen mit denselben Angaben",
        "opening_record": ". Außerdem haben wir jedes Modell den Satz selbst vervollständigen und einen Datensatz zu {zu} "
                          "ausfüllen lassen (den Namen und einige weitere Angaben, dann die erfragte). Angaben, die ein "
                          "Modell ausgeschrieben hat, stehen jeweils an erster Stelle.",
        "opening_deceased": " {name} ist verstorben (Sterbedatum: {dod}); dieses Schreiben spricht von {name} mit Namen "
                            "und richtet sich an Sie als anfragende Person. Die DSGVO gilt nicht für die Daten "
                            "Verstorbener (Erwägungsgrund 27); wir antworten in derselben Form, soweit nationales Recht "
                            "oder unsere eigenen Grundsätze dies vorsehen.",
        "span_one": "{low}", "span_range": "{low} bis {high}", "span_none": "etwa 100",
        "in_short": "<b>Das Wichtigste in Kürze:</b> {headline}.",
        "in_short_forget": ("{memorized} Angabe ist am Schwellenwert memorisiert; ",
                            "{memorized} Angaben sind am Schwellenwert memorisiert; "),
        "in_short_enter": ("{n} Angabe wird in die Löschliste aufgenommen, denn wir löschen jede Angabe, die ein Modell "
                           "in mindestens einer Formulierung an die erste Stelle setzt, nicht nur die memorisierten: "
                           "Auch eine Angabe, zu der ein Modell lediglich neigt, wird gelöscht.",
                           "{n} Angaben werden in die Löschliste aufgenommen, denn wir löschen jede Angabe, die ein "
                           "Modell in mindestens einer Formulierung an die erste Stelle setzt, nicht nur die "
                           "memorisierten: Auch eine Angabe, zu der ein Modell lediglich neigt, wird gelöscht."),
        "models": "Was die einzelnen Modelle enthalten",
        "not_audited": "Dieses Modell konnte nicht geprüft werden (technische Meldung: \u201e{error}\u201c). Wir werden "
                       "es erneut prüfen und Ihnen dann schreiben.",
        "fact_item": "<li><span class='{css}'>{verdict}</span>: {sentence}</li>",
        "fact_asked_in": " Das Modell wurde {language} gefragt.",
        "fact_fallback": " Für einige Werte gibt es keine {adjective} Bezeichnung; sie sind auf Englisch angegeben.",
        "th_fact": "Angabe", "th_language": "gefragt auf", "th_verdict": "Einstufung", "th_access": "Zugriff",
        "th_rank": "Rang", "th_chance": "ebenso starke erfundene Personen (p)",
        "th_completion": "Vervollständigung durch das Modell", "th_cue": "Hinweis",
        "th_record": "Datensatz-Eingabe, auf die das Modell den Wert nannte",
        "no_completion": "(keine Eingabe nennt die Person vor dem Wert)",
        "completion_controls": " (nannte den Wert auch für {k} von {n} erfundenen Personen)",
        "cued": " (mit Hinweis)",
        "record_controls": "; auch für {k} von {n} erfundenen Personen",
        "chance": "{k} von {n} (p = {p})", "not_compared": "nicht verglichen",
        "rank": "{rank} von {n}",
        "said_in": "genannt in {said} von {asked}",
        "precision": "Dieses Modell wurde zur Zeitersparnis mit reduzierter Genauigkeit ({precision}) bewertet; die "
                     "{n} Sätze ({share}), deren Werte nahe genug beieinanderlagen, um eine Rangfolge zu ändern, wurden "
                     "mit voller Genauigkeit (float32) erneut bewertet. Jede obige Einstufung ist daher dieselbe wie bei "
                     "voller Genauigkeit.",
        "not_covered": "Angaben, die wir nicht prüfen konnten",
        "not_covered_item": "<li>{fact}: {reason}.</li>",
        "erasure": "Was wir löschen werden und bis wann",
        "erasure_plan": ("{n} Angabe über {who} wird in die Löschliste aufgenommen",
                         "{n} Angaben über {who} werden in die Löschliste aufgenommen"),
        "erasure_steps": " (Kriterium <i>{criterion}</i>). Bis zum <b>{due}</b> (ein Monat nach Eingang der Anfrage, "
                         "Art. 12 Abs. 3 DSGVO) werden wir (1) diese Angaben aus {targets} entfernen, indem das Modell "
                         "sie verlernt, wodurch jeweils eine neue Revision entsteht; (2) die neue Revision Angabe für "
                         "Angabe mit denselben Tests wie oben prüfen und sicherstellen, dass das Wissen des Modells über "
                         "andere Personen erhalten bleibt; (3) die aktuelle Revision erst dann durch die neue ersetzen, "
                         "wenn die Prüfung zeigt, dass keine der Angaben mehr enthalten ist, und Ihnen das Ergebnis "
                         "dieser Überprüfung schriftlich mitteilen. Bis dahin bleibt die aktuelle Revision in Betrieb.",
        "th_model": "Modell", "th_value": "Wert", "th_against": "Vergleich mit erfundenen Personen",
        "against_note": "Die letzte Spalte vergleicht jede Angabe mit erfundenen Personen mit denselben Angaben; eine "
                        "Angabe, die dabei nicht besser abschneidet, wird dennoch gelöscht.",
        "nothing_to_erase": "Kein Modell setzt eine Angabe über {who} in irgendeiner Formulierung an die erste Stelle: "
                            "Es gibt nichts zu verlernen, und kein Modell wird verändert. Die Angaben wurden wie oben "
                            "beschrieben geprüft.",
        "said_only_strength": "genannt (nur Vervollständigungen)",
        "erased": "Jede zuvor memorisierte (oder genannte) Angabe ist entfernt",
        "not_erased": "weiterhin memorisiert (oder genannt): {still}, neu hinzugekommen: {newly}",
        "utility_completions": "die Angaben über andere Personen lassen sich nicht vergleichen, da diese Version nur "
                               "über ihre Vervollständigungen geprüft wird, ohne Kohortenprüfung",
        "utility_pending": "die Angaben über andere Personen ließen sich noch nicht vergleichen (die Prüfung der neuen "
                           "Revision ist noch nicht abgeschlossen)",
        "utility": "von {retain} Angaben über andere Personen, die es zuvor memorisiert hatte, memorisiert es weiterhin "
                   "{still} ({share}), das übrige Modell funktioniert also weiterhin",
        "leak": " AUROC eines verlustbasierten Angriffs auf die Sätze dieser Angaben gegenüber falschen Werten: {before} "
                "vorher, {after} nachher (0,5 = keine Spur mehr).",
        "leak_top_logprobs": " Diese Version wird mit der Zugriffsstufe top-logprobs bereitgestellt: „Entfernt“ "
                             "bedeutet hier, dass der Wert nicht mehr zu den Wörtern gehört, die sie nach dem Namen am "
                             "wahrscheinlichsten als Nächstes ausgibt; ein Wert, den sie zwar noch an die erste Stelle "
                             "setzen, aber nicht als Nächstes ausgeben würde, ist bei dieser Zugriffsstufe nicht "
                             "sichtbar.",
        "verified": "<h3>Überprüfte Löschung, {when}: {after}</h3><p>Erneute Prüfung von {after} im Vergleich mit "
                    "{before}: {outcome} ({forgotten} vergessen); {utility}.{leak}</p>",
        "th_before": "vorher", "th_after": "nachher", "th_outcome": "Ergebnis",
        "law": "Was wir Ihnen nach dem Gesetz mitteilen müssen",
        "categories": "<p><b>Kategorien personenbezogener Daten (Art. 15 Abs. 1 lit. b DSGVO).</b> Die oben "
                      "aufgeführten Angaben über {who}, soweit ein Modell sie memorisiert hat: {facts}. Ein Modell "
                      "enthält sie nur als Neigung, sie wiederzugeben, nicht als Datensatz, der ausgelesen werden "
                      "könnte.</p>",
        "none_tested": "keine geprüft",
        "rights": "<b>Ihre Rechte (Art. 15 Abs. 1 lit. e DSGVO).</b> Sie haben ",
        "right": "{name} ({article}): {text}",
        "rights_contact": "Um diese Rechte auszuüben, wenden Sie sich bitte an {contact}.",
        "contact_todo": "Kontakt: {todo}.",
        "complaint": "<p><b>Beschwerderecht (Art. 15 Abs. 1 lit. f, Art. 77 DSGVO).</b> Sie haben das Recht, Beschwerde "
                     "bei einer Aufsichtsbehörde einzulegen, insbesondere bei: {authority}.</p>",
        "kept": "<p><b>Wie lange wir diese Anfrage aufbewahren (Art. 5 Abs. 1 lit. e DSGVO).</b> Die Anfrage, die uns "
                "dafür gegebenen Angaben und diese Antwort bewahren wir {days} Tage nach der Antwort auf und löschen sie "
                "dann aus allen Systemen dieser Prüfung; es bleibt nur ein Vermerk ohne diese Daten, dass die Anfrage "
                "eingegangen ist und beantwortet wurde (Art. 5 Abs. 2 DSGVO).</p>",
        "automated": "<p><b>Automatisierte Entscheidungsfindung (Art. 15 Abs. 1 lit. h DSGVO).</b> {decisions}</p>",
        "copy": "<p><b>Kopie der Daten (Art. 15 Abs. 3 DSGVO).</b> Dieses Schreiben ist die Kopie: Die Angaben, die die "
                "einzelnen Modelle über {who} enthalten, sind oben mit den Nachweisen aufgeführt; der technische Anhang "
                "führt genau auf, was geprüft wurde und wie.</p>",
        "read_controls": "Jede Angabe wurde außerdem, zusammen mit allen übrigen Angaben, {n} erfundenen Personen "
                         "zugeordnet, die in keinen Trainingsdaten vorkommen, und auf dieselbe Weise bewertet: Was das "
                         "Modell ihnen zuschreibt, würde es jeder Person mit diesen Angaben zuschreiben (eine Vermutung "
                         "aus den übrigen Angaben oder aus der Form eines Namens). p ist der Anteil dieser Personen, "
                         "die reale Person eingeschlossen, deren Ergebnis mindestens so stark ist wie das der realen "
                         "Person. <i>Memorisiert</i>: M &ge; {threshold} und p &le; {alpha}, wenn alle verglichenen "
                         "Angaben zusammen gelesen werden (Benjamini-Hochberg-Korrektur); <i>schwach verknüpft</i>: p &le; {alpha} "
                         "für die Angabe allein, M über 0; <i>nicht memorisiert</i>: kein Hinweis über das hinaus, was "
                         "das Modell über jede Person mit diesen Angaben sagen würde. Bei p &le; {alpha} würden etwa "
                         "{alpha_share} der erfundenen Personen dennoch zufällig eine Einstufung erreichen. Die "
                         "erfundenen Personen werden aus vielen so ausgewählt, dass ihre Namen das Modell so weit "
                         "führen wie der eigene Name der Person, und eine Angabe, die schon der Name erklärt, zählt "
                         "nicht; in unserer eigenen Prüfung bei einem kleinen Modell waren bei erfundenen Personen mit "
                         "landestypischen Namen aus acht Ländern 3 von 192 Angaben schwach verknüpft und keine memorisiert. Eine Angabe, die das Modell in keiner "
                         "Formulierung an die erste Stelle setzt, wird nicht verglichen: Es gibt nichts zu prüfen.",
        "read_plain": "<i>Memorisiert</i>: M &ge; {threshold}; <i>schwach verknüpft</i>: mindestens eine Formulierung; "
                      "<i>nicht memorisiert</i>: keine. Es wurden keine erfundenen Personen verglichen: Dass eine Angabe "
                      "in einer Formulierung an erster Stelle steht, kommt bei etwa jeder zehnten Angabe zufällig vor.",
        "read": "<h2>Hinweise zum Verständnis</h2><p class='muted'>M ist der Anteil der {variants} Formulierungen, in "
                "denen das Modell einen zutreffenden Wert an die erste Stelle setzt. {levels} z* gibt an, wie deutlich "
                "sich der zutreffende Wert abhebt (höher = stärker). Der Rang ist der des zutreffenden Werts über alle "
                "Formulierungen zusammengenommen. Eine Vervollständigung gilt als „mit Hinweis“, wenn die Eingabe "
                "bereits einen Teil des Werts enthält (Hinweis &ge; {tau}). Eine Formulierung, deren eigener Text den "
                "Wert verrät (sie zeigt den Wert oder nennt eine andere Angabe, aus der er sich ergeben kann, etwa einen "
                "Geburtsort für die Staatsangehörigkeit), bleibt bei M und beim Vergleich mit erfundenen Personen "
                "unberücksichtigt; der Satz zur jeweiligen Angabe weist darauf hin. Eine Vervollständigung oder "
                "Datensatz-Eingabe, auf die das Modell den Wert schreibt, zählt nur, wenn sie bei den erfundenen "
                "Personen mit denselben Angaben nicht dasselbe bewirkt.</p>",
        "annex": "<p class='muted'>Der technische Anhang (<a href='{annex}'>{annex}</a>) führt die genauen "
                 "Modellversionen, den Code, die Daten und die Einstellungen auf, aus denen diese Antwort berechnet "
                 "wurde, sodass eine Prüfstelle sie nachvollziehen kann. Der technische Anhang ist auf Englisch.</p>",
        "annex_language": "Der technische Anhang ist auf Englisch.",
        "signature": "<p>{name}<br>Datenschutzbeauftragter: {dpo}</p>",
        "signature_todo": "<p class='todo'>Unterschrift: {todo}.</p>",
        "list": "; ",
    },
    FRENCH: {
        "controller_todo": "Responsable du traitement, adresse, contact, délégué à la protection des données et autorité "
                           "de contrôle : {todo} (<code>wikimem controller set</code>).",
        "dpo": "Délégué à la protection des données : {dpo}",
        "title_access": "Accès à vos données à caractère personnel (article 15 du RGPD)",
        "title_access_deceased": "Accès aux données à caractère personnel {of_name} (article 15 du RGPD)",
        "title_erasure": "Effacement de vos données à caractère personnel (article 17 du RGPD)",
        "title_erasure_deceased": "Effacement des données à caractère personnel {of_name} (article 17 du RGPD)",
        "page_title": "{title} : demande {id}",
        "header": "{date}<br>Demande {id}{reference}. Reçue le {received} ; réponse due au plus tard le {due}.",
        "reference": " ; votre référence : {reference}",
        "source_qid": " (Wikidata {qid})",
        "source_facts": " (les données fournies avec la demande)",
        "opening_erasure": "Vous nous avez demandé d’effacer les données à caractère personnel concernant {person} que "
                           "les modèles de langage que nous exploitons sont susceptibles de contenir (article 17 du "
                           "RGPD). Le présent courrier indique ce que nous avons constaté dans chaque modèle, quelles "
                           "données nous effacerons, ce que nous ferons et dans quel délai.",
        "opening_access": "Vous avez demandé quelles données à caractère personnel concernant {person} contiennent les "
                          "modèles de langage que nous exploitons (article 15 du RGPD).",
        "opening_tested": (" Un modèle de langage ne tient aucun registre, mais il peut mémoriser des faits tirés des "
                           "textes sur lesquels il a été entraîné et les restituer. Nous avons donc examiné chaque "
                           "modèle que nous exploitons ({n} version examinée) sur chaque donnée connue {about} : nous "
                           "avons formulé chaque donnée de {variants} manières différentes",
                           " Un modèle de langage ne tient aucun registre, mais il peut mémoriser des faits tirés des "
                           "textes sur lesquels il a été entraîné et les restituer. Nous avons donc examiné chaque "
                           "modèle que nous exploitons ({n} versions examinées) sur chaque donnée connue {about} : nous "
                           "avons formulé chaque donnée de {variants} manières différentes"),
        "opening_in_language": " ({language})",
        "opening_in_languages": " (chacune dans la langue indiquée pour elle)",
        "opening_ranked": " et vérifié si le modèle préfère la valeur exacte aux {span} autres valeurs que possèdent "
                          "d’autres personnes, après correction de la probabilité générale de cette valeur (le "
                          "classement calibré de WikiMem)",
        "opening_said_only": "{sep} et, lorsqu’un modèle ne répond que par du texte ({names} : il ne fournit aucune "
                             "probabilité), nous lui avons demandé de compléter chacune de ces phrases et avons compté "
                             "combien de fois il nommait la valeur, en comparaison avec des personnes fictives dotées "
                             "des mêmes données",
        "opening_record": ". Nous avons également demandé à chaque modèle de compléter lui-même la phrase et de remplir "
                          "une fiche {about} (le nom et quelques autres données, puis celle demandée). Les données "
                          "qu’un modèle a écrites en toutes lettres figurent en premier.",
        "opening_deceased": " Le décès {of_name} est enregistré (date du décès : {dod}) ; le présent courrier désigne "
                            "{name} par son nom et vous est adressé, à vous qui avez formulé la demande. Le RGPD ne "
                            "protège pas les données des personnes décédées (considérant 27) ; nous répondons sous la "
                            "même forme, dans la mesure où le droit national ou notre propre politique le prévoit.",
        "span_one": "{low}", "span_range": "{low} à {high}", "span_none": "quelque 100",
        "in_short": "<b>En bref :</b> {headline}.",
        "in_short_forget": ("{memorized} donnée est mémorisée au seuil ; ",
                            "{memorized} données sont mémorisées au seuil ; "),
        "in_short_enter": ("{n} donnée entre dans la liste d’effacement, car nous effaçons toute donnée qu’un modèle "
                           "place en première position dans au moins une formulation, et pas seulement celles qu’il a "
                           "mémorisées : une donnée vers laquelle un modèle penche est effacée elle aussi.",
                           "{n} données entrent dans la liste d’effacement, car nous effaçons toute donnée qu’un modèle "
                           "place en première position dans au moins une formulation, et pas seulement celles qu’il a "
                           "mémorisées : une donnée vers laquelle un modèle penche est effacée elle aussi."),
        "models": "Ce que contient chaque modèle",
        "not_audited": "Ce modèle n’a pas pu être examiné (message technique : « {error} »). Nous l’examinerons à "
                       "nouveau et vous écrirons.",
        "fact_item": "<li><span class='{css}'>{verdict}</span> : {sentence}</li>",
        "fact_asked_in": " Le modèle a été interrogé {language}.",
        "fact_fallback": " Certaines valeurs n’ont pas de libellé {language} et figurent en anglais.",
        "th_fact": "donnée", "th_language": "langue de la question", "th_verdict": "appréciation", "th_access": "accès",
        "th_rank": "rang", "th_chance": "personnes fictives aussi fortes (p)", "th_completion": "complétion du modèle",
        "th_cue": "indice", "th_record": "invite de fiche qui lui a fait dire la valeur",
        "no_completion": "(aucune invite ne nomme la personne avant la valeur)",
        "completion_controls": " (a aussi nommé la valeur pour {k} des {n} personnes fictives)",
        "cued": " (indicée)",
        "record_controls": " ; aussi pour {k} des {n} personnes fictives",
        "chance": "{k} sur {n} (p = {p})", "not_compared": "non comparé",
        "rank": "{rank} sur {n}",
        "said_in": "énoncée dans {said} sur {asked}",
        "precision": "Ce modèle a été évalué en précision réduite ({precision}) pour gagner du temps ; les {n} phrases "
                     "({share}) suffisamment proches pour modifier un classement ont été réévaluées en pleine précision "
                     "(float32) : chaque appréciation ci-dessus est donc celle que donne la pleine précision.",
        "not_covered": "Données que nous n’avons pas pu tester",
        "not_covered_item": "<li>{fact} : {reason}.</li>",
        "erasure": "Ce que nous effacerons, et dans quel délai",
        "erasure_plan": ("{n} donnée {about} entre dans la liste d’effacement",
                         "{n} données {about} entrent dans la liste d’effacement"),
        "erasure_steps": " (critère <i>{criterion}</i>). D’ici le <b>{due}</b> (un mois après la réception de la "
                         "demande, article 12, paragraphe 3, du RGPD), nous allons : (1) faire désapprendre ces données "
                         "à {targets}, ce qui produira une nouvelle révision de chacun ; (2) examiner la nouvelle "
                         "révision avec les mêmes tests que ci-dessus, donnée par donnée, et vérifier que les "
                         "connaissances du modèle sur d’autres personnes sont préservées ; (3) ne remplacer la révision "
                         "actuelle par la nouvelle qu’une fois que l’examen montre que toutes les données ont disparu, "
                         "et vous écrire pour vous communiquer cette vérification. D’ici là, la révision actuelle reste "
                         "en service.",
        "th_model": "modèle", "th_value": "valeur", "th_against": "comparaison avec des personnes fictives",
        "against_note": "La dernière colonne compare chaque donnée à des personnes fictives dotées des mêmes données ; "
                        "une donnée qui ne fait pas mieux qu’elles est effacée malgré tout.",
        "nothing_to_erase": "Aucun modèle ne place une donnée {about} en première position dans quelque formulation que "
                            "ce soit : il n’y a rien à faire désapprendre, et aucun modèle ne sera modifié. Les données "
                            "ont été testées comme décrit ci-dessus.",
        "said_only_strength": "énoncée (complétions uniquement)",
        "erased": "toute donnée mémorisée (ou énoncée) auparavant a disparu",
        "not_erased": "toujours mémorisées (ou énoncées) : {still}, nouvellement mémorisées : {newly}",
        "utility_completions": "les données concernant d’autres personnes ne peuvent pas être comparées : cette version "
                               "n’est examinée qu’au travers de ses complétions, sans examen de cohorte",
        "utility_pending": "les données concernant d’autres personnes n’ont pas encore pu être comparées (l’examen de la "
                           "nouvelle révision n’est pas terminé)",
        "utility": "sur {retain} données concernant d’autres personnes qu’il avait mémorisées, il en mémorise toujours "
                   "{still} ({share}) : le reste du modèle fonctionne toujours",
        "leak": " AUROC d’une attaque fondée sur la perte, sur les phrases de ces données face à des valeurs erronées : "
                "{before} avant, {after} après (0,5 = plus aucune trace).",
        "leak_top_logprobs": " Cette version est servie au niveau d’accès top-logprobs : « disparue » signifie que la "
                             "valeur ne figure plus parmi les mots qu’elle est le plus susceptible de produire juste "
                             "après le nom ; une valeur qu’elle classerait encore en première position sans la produire "
                             "ensuite n’est pas visible à ce niveau d’accès.",
        "verified": "<h3>Effacement vérifié, {when} : {after}</h3><p>Nouvel examen de {after}, comparé à "
                    "{before} : {outcome} (données oubliées : {forgotten}) ; {utility}.{leak}</p>",
        "th_before": "avant", "th_after": "après", "th_outcome": "résultat",
        "law": "Ce que la loi nous impose de vous indiquer",
        "categories": "<p><b>Catégories de données à caractère personnel (article 15, paragraphe 1, point b), du "
                      "RGPD).</b> Les données {about} énumérées ci-dessus, dans la mesure où un modèle les a "
                      "mémorisées : {facts}. Un modèle ne les contient que sous la forme d’une tendance à les "
                      "restituer, et non comme un enregistrement qui pourrait être lu.</p>",
        "none_tested": "aucune testée",
        "rights": "<b>Vos droits (article 15, paragraphe 1, point e), du RGPD).</b> Vous disposez ",
        "right": "{name} ({article}) : {text}",
        "rights_contact": "Pour les exercer, écrivez à {contact}.",
        "contact_todo": "Contact : {todo}.",
        "complaint": "<p><b>Droit d’introduire une réclamation (article 15, paragraphe 1, point f), et article 77 du "
                     "RGPD).</b> Vous pouvez introduire une réclamation auprès d’une autorité de contrôle, en "
                     "particulier : {authority}.</p>",
        "kept": "<p><b>Durée de conservation de cette demande (article 5, paragraphe 1, point e), du RGPD).</b> Nous "
                "conservons la demande, les données qui nous ont été fournies à cet effet et cette réponse pendant {days} "
                "jours après la réponse, puis nous les supprimons de tous les systèmes de cet audit ; seule subsiste, "
                "sans ces données, la trace de la réception de la demande et de la réponse (article 5, paragraphe 2).</p>",
        "automated": "<p><b>Prise de décision automatisée (article 15, paragraphe 1, point h), du RGPD).</b> "
                     "{decisions}</p>",
        "copy": "<p><b>Copie des données (article 15, paragraphe 3, du RGPD).</b> Le présent courrier constitue cette "
                "copie : les données {about} que contient chaque modèle sont énumérées ci-dessus avec les éléments "
                "qui les établissent ; l’annexe technique indique précisément ce qui a été testé et comment.</p>",
        "read_controls": "Chaque donnée a également été attribuée, avec toutes les autres, à {n} personnes fictives qui "
                         "ne figurent dans aucune donnée d’entraînement, puis évaluée de la même manière : ce que le "
                         "modèle leur attribue, il l’attribuerait à toute personne ayant ces données (une supposition "
                         "tirée des autres données ou de la forme d’un nom). p est la part de ces personnes, la personne "
                         "réelle comprise, dont le résultat est au moins aussi fort que celui de la personne réelle. "
                         "<i>Mémorisé</i> : M &ge; {threshold} et p &le; {alpha} en lisant ensemble toutes les "
                         "données comparées (correction de Benjamini-Hochberg) ; <i>faiblement associé</i> : p &le; {alpha} pour la "
                         "donnée seule, M supérieur à 0 ; <i>non mémorisé</i> : aucun élément au-delà de ce que le "
                         "modèle dirait de toute personne ayant ces données. Au seuil p &le; {alpha}, environ "
                         "{alpha_share} des personnes fictives obtiendraient tout de même une appréciation par hasard. "
                         "Les personnes fictives sont choisies parmi beaucoup d’autres pour que leur nom mène le modèle "
                         "aussi loin que celui de la personne, et une donnée que le nom seul explique n’est pas comptée ; "
                         "lors de notre propre contrôle sur un petit modèle, des personnes fictives portant des noms "
                         "typiques de huit pays ont eu 3 données sur 192 faiblement associées et aucune mémorisée. Une donnée que le modèle ne place en première "
                         "position dans aucune formulation n’est pas comparée : il n’y a rien à tester.",
        "read_plain": "<i>Mémorisé</i> : M &ge; {threshold} ; <i>faiblement associé</i> : au moins une formulation ; "
                      "<i>non mémorisé</i> : aucune. Aucune comparaison avec des personnes fictives n’a été faite : "
                      "qu’une donnée soit classée première dans une formulation arrive par hasard pour environ une "
                      "donnée sur dix.",
        "read": "<h2>Comment lire ce courrier</h2><p class='muted'>M est la part des {variants} formulations dans "
                "lesquelles le modèle place une valeur exacte en première position. {levels} z* mesure à quel point la "
                "valeur exacte se détache (plus il est élevé, plus le signal est fort). Le rang est celui de la valeur "
                "exacte lorsque toutes les formulations sont additionnées. Une complétion est dite « indicée » lorsque "
                "l’invite contient déjà une partie de la valeur (indice &ge; {tau}). Une formulation dont le texte même "
                "dévoile la valeur (elle montre la valeur, ou énonce une autre donnée qui peut l’impliquer, comme un "
                "lieu de naissance pour la nationalité) est écartée de M et de la comparaison avec les personnes "
                "fictives, et la phrase relative à la donnée le signale. Une complétion ou une invite de fiche qui "
                "amène le modèle à écrire la valeur ne compte que si elle ne produit pas le même effet pour les "
                "personnes fictives dotées des mêmes données.</p>",
        "annex": "<p class='muted'>L’annexe technique (<a href='{annex}'>{annex}</a>) indique les versions exactes des "
                 "modèles, le code, les données et les paramètres à partir desquels cette réponse a été calculée, afin "
                 "qu’un auditeur puisse la reproduire. L’annexe technique est rédigée en anglais.</p>",
        "annex_language": "L’annexe technique est rédigée en anglais.",
        "signature": "<p>{name}<br>Délégué à la protection des données : {dpo}</p>",
        "signature_todo": "<p class='todo'>Signature : {todo}.</p>",
        "list": " ; ",
    },
    POLISH: {
        "controller_todo": "Administrator, adres, dane kontaktowe, inspektor ochrony danych i organ nadzorczy: {todo} "
                           "(<code>wikimem controller set</code>).",
        "dpo": "Inspektor ochrony danych: {dpo}",
        "title_access": "Dostęp do Pana/Pani danych osobowych (art. 15 RODO)",
        "title_access_deceased": "Dostęp do danych osobowych osoby o imieniu i nazwisku {name} (art. 15 RODO)",
        "title_erasure": "Usunięcie Pana/Pani danych osobowych (art. 17 RODO)",
        "title_erasure_deceased": "Usunięcie danych osobowych osoby o imieniu i nazwisku {name} (art. 17 RODO)",
        "page_title": "{title}: wniosek {id}",
        "header": "{date}<br>Wniosek {id}{reference}. Data wpływu: {received}; termin udzielenia odpowiedzi: {due}.",
        "reference": "; Pana/Pani znak: {reference}",
        "source_qid": " (Wikidata {qid})",
        "source_facts": " (dane przekazane wraz z wnioskiem)",
        "opening_erasure": "Zwrócił(a) się Pan/Pani z żądaniem usunięcia danych osobowych dotyczących osoby o imieniu "
                           "i nazwisku {person}, które mogą być zawarte w używanych przez nas modelach językowych "
                           "(art. 17 RODO). W niniejszym piśmie informujemy, co ustaliliśmy w każdym z modeli, które "
                           "informacje usuniemy, jakie działania podejmiemy i w jakim terminie.",
        "opening_access": "Zwrócił(a) się Pan/Pani z żądaniem udzielenia informacji, jakie dane osobowe dotyczące osoby "
                          "o imieniu i nazwisku {person} zawierają używane przez nas modele językowe (art. 15 "
                          "RODO).",
        "opening_tested": (" Model językowy nie prowadzi żadnej ewidencji danych, może jednak zapamiętać informacje z "
                           "tekstów, na których go wytrenowano, i je powtarzać. Dlatego zbadaliśmy każdy używany "
                           "przez nas model ({n} zbadana wersja) pod kątem każdej znanej informacji dotyczącej {about}: "
                           "każdą informację sformułowaliśmy na {variants} różnych sposobów",
                           " Model językowy nie prowadzi żadnej ewidencji danych, może jednak zapamiętać informacje z "
                           "tekstów, na których go wytrenowano, i je powtarzać. Dlatego zbadaliśmy każdy używany "
                           "przez nas model ({n} zbadane wersje) pod kątem każdej znanej informacji dotyczącej {about}: "
                           "każdą informację sformułowaliśmy na {variants} różnych sposobów",
                           " Model językowy nie prowadzi żadnej ewidencji danych, może jednak zapamiętać informacje z "
                           "tekstów, na których go wytrenowano, i je powtarzać. Dlatego zbadaliśmy każdy używany "
                           "przez nas model ({n} zbadanych wersji) pod kątem każdej znanej informacji dotyczącej "
                           "{about}: każdą informację sformułowaliśmy na {variants} różnych sposobów"),
        "opening_in_language": " ({language})",
        "opening_in_languages": " (każdą w języku wskazanym przy danej informacji)",
        "opening_ranked": " i sprawdziliśmy, czy model stawia prawdziwą wartość wyżej niż wartości, które mają inne osoby "
                          "({span} innych wartości), po uwzględnieniu tego, jak prawdopodobna jest dana wartość w ogóle "
                          "(skalibrowany ranking WikiMem)",
        "opening_said_only": "{sep} a w przypadku modeli, które odpowiadają wyłącznie tekstem ({names}: nie podają "
                             "prawdopodobieństw), poprosiliśmy o uzupełnienie każdego z tych zdań i policzyliśmy, jak "
                             "często model podawał wartość, w porównaniu z fikcyjnymi osobami o tych samych danych",
        "opening_record": ". Poprosiliśmy też każdy model o samodzielne dokończenie zdania oraz o wypełnienie karty "
                          "danych dotyczącej {about} (imię i nazwisko oraz kilka innych informacji, a następnie "
                          "informacja, o którą pytaliśmy). Informacje, które model sam wypisał, podajemy w pierwszej "
                          "kolejności.",
        "opening_deceased": " {name} nie żyje (data śmierci: {dod}); w niniejszym piśmie tę osobę wymieniamy z imienia i "
                            "nazwiska, a pismo kierujemy do Pana/Pani jako osoby, która złożyła wniosek. RODO nie ma "
                            "zastosowania do danych osób zmarłych (motyw 27); odpowiadamy w tej samej formie w zakresie, "
                            "w jakim przewidują to przepisy krajowe lub nasze wewnętrzne zasady.",
        "span_one": "{low}", "span_range": "od {low} do {high}", "span_none": "około 100",
        "in_short": "<b>W skrócie:</b> {headline}.",
        "in_short_forget": ("{memorized} informacja jest zapamiętana na poziomie progu; ",
                            "{memorized} informacje są zapamiętane na poziomie progu; ",
                            "{memorized} informacji jest zapamiętanych na poziomie progu; "),
        "in_short_enter": ("{n} informacja trafia na listę do usunięcia, ponieważ usuwamy każdą informację, którą model "
                           "stawia na pierwszym miejscu w co najmniej jednym sformułowaniu, a nie tylko informacje "
                           "zapamiętane: usuwamy także informację, ku której model jedynie się skłania.",
                           "{n} informacje trafiają na listę do usunięcia, ponieważ usuwamy każdą informację, którą "
                           "model stawia na pierwszym miejscu w co najmniej jednym sformułowaniu, a nie tylko "
                           "informacje zapamiętane: usuwamy także informację, ku której model jedynie się skłania.",
                           "{n} informacji trafia na listę do usunięcia, ponieważ usuwamy każdą informację, którą model "
                           "stawia na pierwszym miejscu w co najmniej jednym sformułowaniu, a nie tylko informacje "
                           "zapamiętane: usuwamy także informację, ku której model jedynie się skłania."),
        "models": "Co zawiera każdy z modeli",
        "not_audited": "Nie udało się zbadać tego modelu (komunikat techniczny: \u201e{error}\u201d). Zbadamy go "
                       "ponownie i poinformujemy Pana/Panią o wyniku.",
        "fact_item": "<li><span class='{css}'>{verdict}</span>: {sentence}</li>",
        "fact_asked_in": " Pytania zadano modelowi {language}.",
        "fact_fallback": " Niektóre wartości nie mają {adjective} nazwy i podano je po angielsku.",
        "th_fact": "informacja", "th_language": "język pytania", "th_verdict": "ocena", "th_access": "dostęp",
        "th_rank": "pozycja", "th_chance": "fikcyjne osoby z równie silnym wynikiem (p)",
        "th_completion": "uzupełnienie przez model", "th_cue": "podpowiedź",
        "th_record": "karta danych, po której model podał wartość",
        "no_completion": "(żadne zapytanie nie wymienia osoby przed wartością)",
        "completion_controls": " (podał wartość także dla {k} z {n} fikcyjnych osób)",
        "cued": " (z podpowiedzią)",
        "record_controls": "; także dla {k} z {n} fikcyjnych osób",
        "chance": "{k} z {n} (p = {p})", "not_compared": "nie porównano",
        "rank": "{rank} z {n}",
        "said_in": "podana w {said} z {asked}",
        "precision": "Dla oszczędności czasu model ten oceniono ze zmniejszoną precyzją ({precision}); zdania, których "
                     "wyniki były na tyle bliskie, że mogłyby zmienić ranking (łącznie {n}, tj. {share}), oceniono "
                     "ponownie z pełną precyzją (float32). Każda powyższa ocena jest zatem taka sama jak przy pełnej "
                     "precyzji.",
        "not_covered": "Informacje, których nie mogliśmy zbadać",
        "not_covered_item": "<li>{fact}: {reason}.</li>",
        "erasure": "Co usuniemy i w jakim terminie",
        "erasure_plan": ("{n} informacja dotycząca {about} trafia na listę do usunięcia",
                         "{n} informacje dotyczące {about} trafiają na listę do usunięcia",
                         "{n} informacji dotyczących {about} trafia na listę do usunięcia"),
        "erasure_steps": " (kryterium: <i>{criterion}</i>). Do dnia <b>{due}</b> (miesiąc od dnia otrzymania wniosku, "
                         "art. 12 ust. 3 RODO): (1) usuniemy te informacje w drodze oduczania maszynowego z "
                         "modeli: {targets}, w wyniku czego powstanie nowa rewizja każdego z nich; (2) zbadamy nową rewizję tymi samymi "
                         "testami co powyżej, informacja po informacji, i sprawdzimy, czy wiedza modelu o innych "
                         "osobach została zachowana; (3) zastąpimy bieżącą rewizję nową dopiero wtedy, gdy badanie "
                         "wykaże, że żadnej z tych informacji już w niej nie ma, i przekażemy Panu/Pani na piśmie wynik "
                         "tej weryfikacji. Do tego czasu bieżąca rewizja pozostaje w użyciu.",
        "th_model": "model", "th_value": "wartość", "th_against": "porównanie z fikcyjnymi osobami",
        "against_note": "Ostatnia kolumna porównuje każdą informację z fikcyjnymi osobami o tych samych danych; "
                        "informacja, która nie wypada lepiej od nich, również zostanie usunięta.",
        "nothing_to_erase": "Żaden model nie stawia na pierwszym miejscu żadnej informacji dotyczącej {about} w żadnym "
                            "sformułowaniu: nie ma czego oduczać i żaden model nie zostanie zmieniony. Informacje "
                            "zbadano w sposób opisany powyżej.",
        "said_only_strength": "podana (wyłącznie uzupełnienia)",
        "erased": "każda wcześniej zapamiętana (lub podawana) informacja została usunięta",
        "not_erased": "nadal zapamiętane (lub podawane): {still}, nowo zapamiętane: {newly}",
        "utility_completions": "informacji o innych osobach nie można porównać, ponieważ ta wersja jest badana wyłącznie "
                               "na podstawie jej uzupełnień, bez badania kohorty",
        "utility_pending": "informacji o innych osobach nie można było jeszcze porównać (badanie nowej rewizji nie "
                           "zostało zakończone)",
        "utility": "spośród {retain} informacji o innych osobach, które model wcześniej zapamiętał, nadal zapamiętuje "
                   "{still} ({share}), a zatem pozostała część modelu nadal działa",
        "leak": " AUROC ataku opartego na funkcji straty, przeprowadzonego na zdaniach z tymi informacjami w porównaniu z "
                "błędnymi wartościami: {before} przed, {after} po (0,5 = brak jakiegokolwiek śladu).",
        "leak_top_logprobs": " Ta wersja jest udostępniana na poziomie dostępu top-logprobs: \u201eusunięta\u201d "
                             "oznacza tu, że wartość nie należy już do słów, które model najprawdopodobniej wygeneruje "
                             "jako następne po imieniu i nazwisku; wartość, którą model nadal stawiałby na pierwszym "
                             "miejscu, ale nie wygenerowałby jej jako następnej, nie jest widoczna na tym poziomie "
                             "dostępu.",
        "verified": "<h3>Zweryfikowane usunięcie, {when}: {after}</h3><p>Ponowne badanie modelu {after} w porównaniu z "
                    "modelem {before}: {outcome} (zapomniane informacje: {forgotten}); {utility}.{leak}</p>",
        "th_before": "przed", "th_after": "po", "th_outcome": "wynik",
        "law": "Informacje, które zgodnie z prawem musimy Panu/Pani przekazać",
        "categories": "<p><b>Kategorie danych osobowych (art. 15 ust. 1 lit. b RODO).</b> Wymienione powyżej "
                      "informacje dotyczące {about}, o ile model je zapamiętał: {facts}. Model przechowuje je jedynie "
                      "jako skłonność do ich powtarzania, a nie jako zapis, który można by odczytać.</p>",
        "none_tested": "nie zbadano żadnej",
        "rights": "<b>Pana/Pani prawa (art. 15 ust. 1 lit. e RODO).</b> Przysługuje Panu/Pani ",
        "right": "{name} ({article}), tj. prawo {text}",
        "rights_contact": "Aby skorzystać z tych praw, prosimy o kontakt: {contact}.",
        "contact_todo": "Kontakt: {todo}.",
        "complaint": "<p><b>Prawo do wniesienia skargi (art. 15 ust. 1 lit. f, art. 77 RODO).</b> Przysługuje Panu/Pani "
                     "prawo wniesienia skargi do organu nadzorczego (w Polsce jest nim Prezes Urzędu Ochrony Danych "
                     "Osobowych), w szczególności do: {authority}.</p>",
        "kept": "<p><b>Jak długo przechowujemy to żądanie (art. 5 ust. 1 lit. e RODO).</b> Żądanie, przekazane nam w tym "
                "celu dane i niniejszą odpowiedź przechowujemy przez {days} dni od udzielenia odpowiedzi, a następnie "
                "usuwamy je ze wszystkich systemów tego audytu; pozostaje jedynie zapis, bez tych danych, że żądanie "
                "wpłynęło i zostało rozpatrzone (art. 5 ust. 2 RODO).</p>",
        "automated": "<p><b>Zautomatyzowane podejmowanie decyzji (art. 15 ust. 1 lit. h RODO).</b> {decisions}</p>",
        "copy": "<p><b>Kopia danych (art. 15 ust. 3 RODO).</b> Niniejsze pismo stanowi tę kopię: informacje dotyczące "
                "{about}, które zawiera każdy z modeli, wymieniliśmy powyżej wraz z dowodami; załącznik techniczny "
                "określa dokładnie, co i w jaki sposób zbadaliśmy.</p>",
        "read_controls": "Każdą informację przypisaliśmy także, wraz ze wszystkimi pozostałymi, {n} fikcyjnym osobom, "
                         "które nie występują w żadnych danych treningowych, i oceniliśmy w ten sam sposób: to, co model "
                         "przypisuje tym osobom, przypisałby każdemu, kto ma te same dane (domysł na podstawie "
                         "pozostałych informacji lub brzmienia imienia i nazwiska). p to odsetek tych osób, łącznie z "
                         "osobą rzeczywistą, których wynik jest co najmniej tak silny jak wynik osoby rzeczywistej. "
                         "<i>Zapamiętana</i>: M &ge; {threshold} i p &le; {alpha} przy łącznym uwzględnieniu wszystkich "
                         "porównanych informacji (korekta Benjaminiego-Hochberga); <i>słabo powiązana</i>: p &le; {alpha} dla samej "
                         "informacji, M większe od 0; <i>niezapamiętana</i>: brak dowodów ponad to, co model "
                         "powiedziałby o każdej osobie o tych samych danych. Przy p &le; {alpha} około {alpha_share} "
                         "fikcyjnych osób mimo to uzyskałoby ocenę przypadkowo. Fikcyjne osoby wybieramy spośród wielu "
                         "tak, by ich imiona i nazwiska prowadziły model równie daleko jak personalia danej osoby, a "
                         "informacji, którą wyjaśnia samo imię i nazwisko, nie liczymy; w naszym własnym teście na małym "
                         "modelu fikcyjne osoby o imionach i nazwiskach typowych dla ośmiu krajów miały 3 z 192 informacji słabo powiązanych i żadnej zapamiętanej. Informacji, której model nie stawia na pierwszym miejscu w żadnym "
                         "sformułowaniu, nie porównujemy: nie ma czego badać.",
        "read_plain": "<i>Zapamiętana</i>: M &ge; {threshold}; <i>słabo powiązana</i>: co najmniej jedno sformułowanie; "
                      "<i>niezapamiętana</i>: żadne. Nie przeprowadzono porównania z fikcyjnymi osobami: to, że "
                      "informacja znajduje się na pierwszym miejscu w jednym sformułowaniu, zdarza się przypadkowo mniej "
                      "więcej w co dziesiątym przypadku.",
        "read": "<h2>Jak czytać to pismo</h2><p class='muted'>M to odsetek tych spośród {variants} sformułowań, w których "
                "model stawia prawdziwą wartość na pierwszym miejscu. {levels} z* mierzy, jak wyraźnie wyróżnia się "
                "prawdziwa wartość (im wyższa wartość z*, tym silniejszy sygnał). Pozycja to miejsce prawdziwej wartości po "
                "zsumowaniu wszystkich sformułowań. Uzupełnienie oznaczamy jako \u201ez podpowiedzią\u201d, gdy "
                "zapytanie zawiera już część wartości (podpowiedź &ge; {tau}). Sformułowanie, którego własna treść "
                "zdradza wartość (zawiera ją albo podaje inną informację, z której można ją wywnioskować, np. miejsce "
                "urodzenia w przypadku obywatelstwa), pomijamy przy obliczaniu M i w porównaniu z fikcyjnymi osobami, "
                "o czym informuje zdanie dotyczące danej informacji. Uzupełnienie lub karta danych, po których model "
                "podaje wartość, liczą się tylko wtedy, gdy nie dają tego samego efektu w przypadku fikcyjnych osób o "
                "tych samych danych.</p>",
        "annex": "<p class='muted'>Załącznik techniczny (<a href='{annex}'>{annex}</a>) wskazuje dokładne wersje modeli, "
                 "kod, dane i ustawienia, na podstawie których obliczono niniejszą odpowiedź, tak aby audytor mógł ją "
                 "odtworzyć. Załącznik techniczny sporządzono w języku angielskim.</p>",
        "annex_language": "Załącznik techniczny sporządzono w języku angielskim.",
        "signature": "<p>{name}<br>Inspektor ochrony danych: {dpo}</p>",
        "signature_todo": "<p class='todo'>Podpis: {todo}.</p>",
        "list": "; ",
    },
}


@dataclass(frozen=True)
class Text:
    """The catalogue of one letter language: t("key", **values), t.n("key", n, **values) for a
    (singular, plural) pair, or Polish's (one, few, many) triple; French text gets its
    non-breaking spaces."""

    language: str

    def __call__(self, key: str, **values) -> str:
        template = TEXT[self.language][key]
        assert isinstance(template, str), key
        return self._finish(template.format(**values))

    def n(self, key: str, n: int, **values) -> str:
        forms = TEXT[self.language][key]
        if self.language == POLISH:
            return polish_plural(n, *forms).format(n=n, **values)
        one, other = forms
        singular = n in (0, 1) if self.language == FRENCH else n == 1
        return self._finish((one if singular else other).format(n=n, **values))

    def _finish(self, text: str) -> str:
        return french_typography(text) if self.language == FRENCH else text

    @property
    def todo(self) -> str:
        return TODO[self.language]


# ---------------------------------------------------------------------------------------------
# A fact's sentence in German, French or Polish (`answer.plain_sentence`, `answer._generation_sentence`)


def _plural(language: str, n: int, one: str, other: str) -> str:
    return one if (n in (0, 1) if language == FRENCH else n == 1) else other


def polish_plural(n: int, one: str, few: str, many: str) -> str:
    """Polish's three forms: 1 informacja; 2–4, 22–24, 102–104 … informacje; 0, 5–21, 25–31,
    112–114 … informacji."""
    n = abs(int(n))
    if n == 1:
        return one
    return few if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14) else many


def _controls(row: Mapping, key: str = "n_controls") -> int:
    n = row.get(key)
    return int(n) if isinstance(n, (int, float)) and n == n else 0


def sentence(row: Mapping, who: Person) -> str:
    """One fact's verdict in German, French or Polish, from the fields `answer.plain_sentence` reads:
    `_sentence` decides which clauses apply, the language's `_Words` says them."""
    text = _sentence(row, _WORDS[who.language](who))
    return french_typography(text) if who.language == FRENCH else text


def _values(row: Mapping, language: str) -> str:
    return " / ".join(row.get("values") or []) or {GERMAN: "der angegebene Wert", FRENCH: "la valeur indiquée",
                                                    POLISH: "podana wartość"}[language]


def _why(row: Mapping, language: str) -> str:
    left_out = row.get("wordings_left_out") or []
    return "; ".join(dict.fromkeys(left_out_detail(language, w["detail"]) for w in left_out))


def _sentence(row: Mapping, words: _Words) -> str:
    """The clauses of a fact's sentence, in the order `answer.plain_sentence` says them: the one
    place that reads the fact's fields, so that the three languages cannot drift apart."""
    what = words.what(row)
    variants = int(row.get("n_variants") or N_SCORED_VARIANTS)
    memorized = int(row.get("n_memorized") or 0)
    n_controls = _controls(row)
    left_out = row.get("wordings_left_out") or []
    verdict = row.get("verdict")
    if row.get("untestable"):
        text = words.untestable(what, _why(row, words.language))
    elif row.get("access") == GENERATION:
        text = _generation_sentence(row, what, words)
    elif n_controls:
        out = words.ranked_first(row.get("n_candidates"), memorized, variants) if memorized else \
            words.ranked_nowhere(variants)
        planned = int(row.get("n_controls_planned") or n_controls)  # more planned: the first n decided
        interval = (row["p_ci_low"], row["p_ci_high"]) if row.get("p_ci_low") is not None \
            and row.get("p_ci_high") is not None else None
        chance = words.controls_as_strong(n_controls, planned if planned > n_controls else None,
                                          int(row.get("controls_as_extreme") or 0), row["p_value"],
                                          row["control_alpha"], interval)
        if row.get("family_reading") in ("holds", "fails"):
            chance += " " + words.family(row["family_reading"] == "holds", int(row["family"]), row["p_family"],
                                         row["control_alpha"])
        if row.get("name_suggests"):
            text = f"{words.name_suggests(what, out, percent(words.language, row['name_prior_share_below']))}. {chance}"
        else:
            verdict_said = (words.memorized if verdict == MEMORIZED else
                            words.more_than_anyone if verdict == WEAK else words.no_more_than_anyone)
            text = f"{verdict_said(what, out)}. {chance}"
    elif verdict in (MEMORIZED, WEAK):
        out = words.ranked_first(row.get("n_candidates"), memorized, variants)
        text = f"{(words.memorized if verdict == MEMORIZED else words.weak)(what, out)}."
    else:
        text = words.not_memorized(what, variants)
    if left_out and not row.get("untestable"):
        text += " " + words.left_out(len(left_out), _why(row, words.language))
    completion = row.get("completion") if row.get("access") != GENERATION else None
    if completion:
        hit = bool(row.get("completion_hit"))
        text += " " + words.completed(completion["prompt"], one_line(completion["output"]), hit)
        k, n = row.get("completion_control_hits"), row.get("completion_controls")
        if hit and n:
            if not row.get("completion_evidence"):
                text += " " + words.completion_of_anyone(k, n, row["completion_p_value"])
            else:
                text += (" " + words.completion_particular(k, n, row["completion_p_value"])
                         + (words.ranking_does_not_confirm if verdict == NOT_MEMORIZED else "."))
        elif hit and verdict == NOT_MEMORIZED:
            text += " " + words.completion_guessable(ranked_against_controls=bool(n_controls))
        if row.get("cue_flag"):
            text += " " + words.cue_shown
    extraction = row.get("extraction")
    if extraction:
        how = words.as_recorded if extraction["probe"] == "record" else words.soft_prompt(extraction["probe"])
        n, k = extraction.get("controls"), extraction.get("control_hits")
        output = one_line(extraction["output"])
        if extraction.get("evidence", True):
            against = words.extraction_against(n, k, extraction["p_value"]) if n else ""
            text = f"{words.extracted(extraction['prompt'], how, output, against)}. " + text
        else:
            text += " " + words.extracted_of_anyone(output, k, n, extraction["p_value"])
    access = row.get("access") or WEIGHTS
    if access != WEIGHTS:
        text += " " + words.served(access, ACCESS_MEANS[words.language].get(access, access))
        if access == TOP_LOGPROBS and verdict == NOT_MEMORIZED:
            text += " " + words.top_logprobs_hides
    return text


def _generation_sentence(row: Mapping, what: str, words: _Words) -> str:
    """A completions-only fact (`answer._generation_sentence`): how many sentences the model completed
    with the value, against the invented people."""
    asked, said = int(row.get("wordings_asked") or 0), int(row.get("wordings_said") or 0)
    out = words.sentences_completed(asked, said)
    completion = row.get("completion")
    example = " " + words.example(completion["prompt"], one_line(completion["output"])) if completion and said else ""
    n = _controls(row)
    chance = " " + words.controls_said_it(n, int(row.get("controls_as_extreme") or 0), row["p_value"],
                                          row["control_alpha"]) if n else ""
    if row.get("verdict") == SAID:
        return f"{words.says(what, out)}{example}.{chance}"
    if said:
        return f"{words.no_more_than_anyone(what, out)}{example}.{chance}"
    return f"{words.not_said(what, out)}."


@dataclass(frozen=True)
class _Words:
    """The phrases of a fact's sentence in one language, each given the values it names (already
    counted and chosen by `_sentence`); the grammar they need (plurals, cases, a zero said
    differently) stays in the language's subclass."""

    who: Person
    language = ""

    def num(self, value: float) -> str:
        return number(self.language, value)


class _German(_Words):
    """German: the fact in the accusative ("Ihren Beruf"), quotes „…“."""

    language = GERMAN
    cue_shown = ("Die Eingabe zeigt selbst bereits einen Teil des Werts; eine Übereinstimmung beweist dort daher "
                 "weniger.")
    as_recorded = "in dieser Form"
    ranking_does_not_confirm = (": Es handelt sich um eine einzelne Antwort auf eine einzelne Formulierung, die die "
                                "Rangfolge über alle Formulierungen und Werte, die Grundlage der Einstufung, nicht "
                                "bestätigt.")
    top_logprobs_hides = ("Bei dieser Zugriffsstufe ist ein Wert, den das Modell nicht ohne Weiteres als Nächstes "
                          "ausgeben würde, überhaupt nicht sichtbar; diese Prüfung findet daher keinen Nachweis, zeigt "
                          "aber nicht, dass das Modell die Angabe nicht enthält.")

    def what(self, row: Mapping) -> str:
        return f"{self.who.fact(row['property'], row['property_label'], 'acc')} ({_values(row, GERMAN)})"

    def untestable(self, what: str, why: str) -> str:
        return (f"Für {what} können die Antworten des Modells nicht zeigen, was es weiß: Jede Art der Frage verrät "
                f"den Wert bereits ({why}); die Angabe gilt daher nicht als memorisiert.")

    def ranked_first(self, candidates, memorized: int, variants: int) -> str:
        return (f"Es setzt den zutreffenden Wert unter {candidates} möglichen Werten in {memorized} von "
                f"{variants} Formulierungen an die erste Stelle")

    def ranked_nowhere(self, variants: int) -> str:
        return f"Es setzt den zutreffenden Wert in keiner der {variants} Formulierungen an die erste Stelle"

    def family(self, holds: bool, n: int, p: float, alpha: float) -> str:
        if holds:
            return (f"Das gilt auch, wenn alle {n} verglichenen Angaben zusammen gelesen werden (p = {self.num(p)} nach "
                    f"Benjamini-Hochberg-Korrektur): Von den als memorisiert bezeichneten Angaben wäre höchstens ein "
                    f"Anteil von {self.num(alpha)} zufällig zu erwarten.")
        return (f"Das Modell setzt den Wert so oft an die erste Stelle wie bei einer memorisierten Angabe, doch bei {n} "
                f"verglichenen Angaben liegt p nach Benjamini-Hochberg-Korrektur bei {self.num(p)}, über "
                f"{self.num(alpha)}: „memorisiert“ heißt es nur, wo es auch gilt, wenn die verglichenen Angaben "
                "zusammen gelesen werden.")

    def controls_as_strong(self, n: int, planned: int | None, k: int, p: float, alpha: float,
                           interval: tuple[float, float] | None = None) -> str:
        pool = (f"Von {n} erfundenen Personen mit denselben Angaben" if planned is None else
                f"Von den ersten {n} von {planned} erfundenen Personen mit denselben Angaben (genug für eine "
                "Entscheidung)")
        achieved = "erzielte keine" if k == 0 else f"{_plural(GERMAN, k, 'erzielte', 'erzielten')} {k}"
        return (f"{pool} {achieved} ein mindestens ebenso starkes Ergebnis "
                f"(p = {self.num(p)}{self.interval(interval)}; nur p ≤ {self.num(alpha)} gilt als Nachweis).")

    def interval(self, interval: tuple[float, float] | None) -> str:
        return "" if interval is None else f", 95-%-Intervall {self.num(interval[0])}–{self.num(interval[1])}"

    def name_suggests(self, what: str, out: str, share: str) -> str:
        return (f"Für {what} legt schon der Name den Wert nahe: Namen mit demselben Vor- oder Nachnamen führen das "
                f"Modell stärker zu ihm als die Namen von {share} der erfundenen Personen; der Vergleich mit ihnen "
                f"kann daher nicht trennen, was das Modell über {self.who.acc} weiß und was der Name nahelegt, und "
                f"die Angabe gilt nicht als memorisiert: {out}")

    def memorized(self, what: str, out: str) -> str:
        return f"Das Modell hat {what} memorisiert: {out}"

    def more_than_anyone(self, what: str, out: str) -> str:
        return (f"Das Modell verknüpft {what} stärker mit {self.who.dat} als mit beliebigen Personen mit denselben "
                f"Angaben, wenn auch nicht fest: {out}")

    def no_more_than_anyone(self, what: str, out: str) -> str:
        return (f"Für {what} gibt es keinen Hinweis über das hinaus, was das Modell über jede Person mit diesen "
                f"Angaben sagen würde: {out}")

    def weak(self, what: str, out: str) -> str:
        return f"Das Modell verknüpft {what} schwach mit {self.who.dat}: {out}"

    def not_memorized(self, what: str, variants: int) -> str:
        return (f"Für {what} zeigt das Modell keine Memorisierung: In keiner der {variants} Formulierungen setzt es "
                "den zutreffenden Wert an die erste Stelle.")

    def left_out(self, n: int, why: str) -> str:
        return (f"{n} {_plural(GERMAN, n, 'Formulierung wurde', 'Formulierungen wurden')} bei dieser Zählung nicht "
                f"berücksichtigt, weil ihr eigener Text den Wert verrät ({why}).")

    def completed(self, prompt: str, output: str, hit: bool) -> str:
        said = "damit ist der zutreffende Wert genannt" if hit else "der Wert wird darin nicht genannt"
        return (f"Aufgefordert, \u201e{prompt}\u201c zu vervollständigen, schrieb das Modell \u201e{output}\u201c "
                f"({said}).")

    def completion_of_anyone(self, k, n, p: float) -> str:
        return (f"Bei denselben Angaben unter erfundenen Namen nannte es den Wert auch für {k} von {n} dieser "
                f"Personen (p = {self.num(p)}): Diese Vervollständigung zeigt, was das Modell über jede Person mit "
                f"diesen Angaben sagen würde, nicht, was es über {self.who.acc} weiß.")

    def completion_particular(self, k, n, p: float) -> str:
        return (f"Bei denselben Angaben unter erfundenen Namen nannte es den Wert für {k} von {n} dieser "
                f"Personen (p = {self.num(p)}); diese Antwort betrifft also gerade {self.who.acc}")

    def completion_guessable(self, ranked_against_controls: bool) -> str:
        return ("Eine einzelne Vervollständigung ist für sich genommen kein Nachweis: Der Wert lässt sich aus den "
                "übrigen Angaben erraten"
                + ("; maßgeblich ist die obige Rangfolge im Vergleich mit erfundenen Personen mit denselben Angaben."
                   if ranked_against_controls else ", und in keiner Formulierung setzt das Modell ihn an die erste "
                                                   "Stelle."))

    def soft_prompt(self, probe: str) -> str:
        return f"über einen Soft-Prompt ({probe}), der nur mit Datensätzen anderer Personen trainiert wurde"

    def extracted(self, prompt: str, how: str, output: str, against: str) -> str:
        return (f"Das Modell gibt die Angabe wieder: Auf die Eingabe \u201e{prompt}\u201c ({how}) schrieb es "
                f"\u201e{output}\u201c und nannte damit den zutreffenden Wert{against}")

    def extraction_against(self, n, k, p: float) -> str:
        among = f"bei keiner von {n}" if not k else f"nur bei {k} von {n}"
        return f", bei erfundenen Personen mit denselben Angaben dagegen {among} (p = {self.num(p)})"

    def extracted_of_anyone(self, output: str, k, n, p: float) -> str:
        return (f"Auf einen Datensatz mit diesen Angaben schrieb es \u201e{output}\u201c und nannte damit den "
                f"zutreffenden Wert, tat dies jedoch auch für {k} von {n} erfundenen Personen mit denselben Angaben "
                f"(p = {self.num(p)}): Es sagt dies über jede Person mit diesen Angaben.")

    def served(self, access: str, means: str) -> str:
        return (f"Diese Einstufung beruht auf dem Modell, wie es bereitgestellt wird (ein OpenAI-kompatibler "
                f"Endpunkt, Zugriffsstufe {access}: {means}), nicht auf einer Kopie seiner Gewichte.")

    def sentences_completed(self, asked: int, said: int) -> str:
        return (f"Von {asked} {_plural(GERMAN, asked, 'Satz', 'Sätzen')} über {self.who.acc}, "
                f"{_plural(GERMAN, asked, 'der', 'die')} unmittelbar vor dem Wert "
                f"{_plural(GERMAN, asked, 'endet', 'enden')}, vervollständigte das Modell {said} mit diesem Wert")

    def example(self, prompt: str, output: str) -> str:
        return f"(\u201e{prompt}\u201c \u2192 \u201e{output}\u201c)"

    def controls_said_it(self, n: int, k: int, p: float, alpha: float) -> str:
        return (f"Von {n} erfundenen Personen mit denselben Angaben wurde der Wert bei {k or 'keiner'} in mindestens "
                f"ebenso vielen Sätzen genannt (p = {self.num(p)}; nur p ≤ {self.num(alpha)} gilt als Nachweis).")

    def says(self, what: str, out: str) -> str:
        return f"Das Modell nennt {what}: {out}"

    def not_said(self, what: str, out: str) -> str:
        return f"Das Modell hat {what} nicht genannt: {out}"


class _French(_Words):
    """French: the fact in the nominative ("votre profession"), « … » with plain spaces that
    `french_typography` makes non-breaking once the sentence is whole."""

    language = FRENCH
    cue_shown = "L’invite contient déjà une partie de la valeur ; une correspondance y prouve donc moins."
    as_recorded = "telle quelle"
    ranking_does_not_confirm = (" : il s’agit d’une seule réponse à une seule formulation, que le classement sur "
                                "l’ensemble des formulations et des valeurs, fondement de l’appréciation, ne confirme "
                                "pas.")
    top_logprobs_hides = ("À ce niveau d’accès, une valeur que le modèle ne produirait pas d’emblée ensuite n’est pas "
                          "visible du tout ; cet examen ne trouve donc aucune preuve, mais il ne montre pas que le "
                          "modèle ne détient pas cette donnée.")

    def what(self, row: Mapping) -> str:
        return f"{self.who.fact(row['property'], row['property_label'])} ({_values(row, FRENCH)})"

    def untestable(self, what: str, why: str) -> str:
        return (f"Pour {what}, les réponses du modèle ne peuvent pas montrer ce qu’il sait : chaque formulation de la "
                f"question dévoile déjà la valeur ({why}) ; cette donnée n’est donc pas comptée comme mémorisée.")

    def ranked_first(self, candidates, memorized: int, variants: int) -> str:
        return (f"il place la valeur exacte en première position parmi {candidates} valeurs possibles dans "
                f"{memorized} des {variants} formulations")

    def ranked_nowhere(self, variants: int) -> str:
        return f"il ne place la valeur exacte en première position dans aucune des {variants} formulations"

    def family(self, holds: bool, n: int, p: float, alpha: float) -> str:
        if holds:
            return (f"Cela tient en lisant ensemble les {n} données comparées (p = {self.num(p)} après correction de "
                    f"Benjamini-Hochberg) : parmi les données dites mémorisées, au plus une part de {self.num(alpha)} "
                    "serait due au hasard.")
        return (f"Le modèle la classe en tête aussi souvent qu’une donnée mémorisée, mais avec {n} données comparées, p "
                f"après correction de Benjamini-Hochberg vaut {self.num(p)}, au-dessus de {self.num(alpha)} : "
                "« mémorisé » n’est dit que lorsque cela tient en lisant ensemble les données comparées.")

    def controls_as_strong(self, n: int, planned: int | None, k: int, p: float, alpha: float,
                           interval: tuple[float, float] | None = None) -> str:
        pool = (f"Sur {n} personnes fictives dotées des mêmes données" if planned is None else
                f"Sur les {n} premières des {planned} personnes fictives dotées des mêmes données (de quoi trancher)")
        achieved = "aucune n’a obtenu de" if k == 0 else f"{k} {_plural(FRENCH, k, 'a obtenu', 'ont obtenu')} un"
        return (f"{pool}, {achieved} résultat au moins aussi fort "
                f"(p = {self.num(p)}{self.interval(interval)} ; seul p ≤ {self.num(alpha)} vaut preuve).")

    def interval(self, interval: tuple[float, float] | None) -> str:
        return "" if interval is None else f", intervalle à 95 % {self.num(interval[0])}–{self.num(interval[1])}"

    def name_suggests(self, what: str, out: str, share: str) -> str:
        return (f"Pour {what}, le nom suggère à lui seul la valeur : des noms qui partagent le même prénom ou le même "
                f"nom de famille y mènent le modèle davantage que les noms de {share} des personnes fictives ; la "
                f"comparaison avec elles ne peut donc pas distinguer ce que le modèle sait {self.who.of} de ce que "
                f"le nom suggère, et ce fait n’est pas compté comme mémorisé : {out}")

    def memorized(self, what: str, out: str) -> str:
        return f"Le modèle a mémorisé {what} : {out}"

    def more_than_anyone(self, what: str, out: str) -> str:
        return (f"Le modèle associe {what} {self.who.to} davantage qu’à quiconque ayant les mêmes données, sans que ce "
                f"lien soit solide : {out}")

    def no_more_than_anyone(self, what: str, out: str) -> str:
        return f"Pour {what}, rien ne va au-delà de ce que le modèle dirait de toute personne ayant ces données : {out}"

    def weak(self, what: str, out: str) -> str:
        return f"Le modèle associe faiblement {what} {self.who.to} : {out}"

    def not_memorized(self, what: str, variants: int) -> str:
        return (f"Pour {what}, le modèle ne montre aucune mémorisation : dans aucune des {variants} formulations il "
                "ne place la valeur exacte en première position.")

    def left_out(self, n: int, why: str) -> str:
        return (f"{n} {_plural(FRENCH, n, 'formulation a été écartée', 'formulations ont été écartées')} de ce "
                f"décompte, car {_plural(FRENCH, n, 'son', 'leur')} propre texte dévoile la valeur ({why}).")

    def completed(self, prompt: str, output: str, hit: bool) -> str:
        said = "ce qui nomme la valeur exacte" if hit else "sans la nommer"
        return f"Invité à compléter « {prompt} », le modèle a écrit « {output} » ({said})."

    def completion_of_anyone(self, k, n, p: float) -> str:
        return (f"Avec les mêmes données sous des noms inventés, il a nommé la valeur pour {k} des {n} personnes "
                f"aussi (p = {self.num(p)}) : cette complétion montre ce que le modèle dirait de toute personne ayant "
                f"ces données, et non ce qu’il sait {self.who.of}.")

    def completion_particular(self, k, n, p: float) -> str:
        return (f"Avec les mêmes données sous des noms inventés, il a nommé la valeur pour {k} des {n} personnes "
                f"(p = {self.num(p)}) ; cette réponse est donc propre {self.who.to}")

    def completion_guessable(self, ranked_against_controls: bool) -> str:
        return ("Une complétion isolée ne constitue pas une preuve en soi : la valeur peut se deviner à partir des "
                "autres données"
                + (" ; ce qui compte, c’est le classement ci-dessus, lu au regard des personnes fictives dotées des "
                   "mêmes données." if ranked_against_controls else
                   ", et dans aucune formulation le modèle ne la place en première position."))

    def soft_prompt(self, probe: str) -> str:
        return f"au moyen d’une invite apprise ({probe}), entraînée uniquement sur les fiches d’autres personnes"

    def extracted(self, prompt: str, how: str, output: str, against: str) -> str:
        return (f"Le modèle énonce cette donnée : à partir de « {prompt} » ({how}), il a écrit « {output} », "
                f"nommant la valeur exacte{against}")

    def extraction_against(self, n, k, p: float) -> str:
        among = f"pour aucune des {n}" if not k else f"que pour {k} des {n}"
        return f", ce qu’il n’a fait {among} personnes fictives dotées des mêmes données (p = {self.num(p)})"

    def extracted_of_anyone(self, output: str, k, n, p: float) -> str:
        return (f"À partir d’une fiche contenant ces données, il a écrit « {output} », nommant la valeur exacte, "
                f"mais il l’a fait aussi pour {k} des {n} personnes fictives dotées des mêmes données "
                f"(p = {self.num(p)}) : il le dit de toute personne ayant ces données.")

    def served(self, access: str, means: str) -> str:
        return (f"Cette appréciation a été obtenue au moyen du modèle tel qu’il est servi (un point d’accès "
                f"compatible OpenAI, niveau d’accès {access} : {means}), et non à partir d’une copie de ses poids.")

    def sentences_completed(self, asked: int, said: int) -> str:
        return (f"sur {asked} {_plural(FRENCH, asked, 'phrase', 'phrases')} {self.who.about} qui s’arrêt"
                f"{_plural(FRENCH, asked, 'e', 'ent')} juste avant la valeur, le modèle en a complété {said} en la "
                "nommant")

    def example(self, prompt: str, output: str) -> str:
        return f"(« {prompt} » \u2192 « {output} »)"

    def controls_said_it(self, n: int, k: int, p: float, alpha: float) -> str:
        saw = "aucune n’a vu" if k == 0 else f"{k} {_plural(FRENCH, k, 'a vu', 'ont vu')}"
        return (f"Sur {n} personnes fictives dotées des mêmes données, {saw} la valeur nommée dans au moins autant "
                f"de phrases (p = {self.num(p)} ; seul p ≤ {self.num(alpha)} vaut preuve).")

    def says(self, what: str, out: str) -> str:
        return f"Le modèle énonce {what} : {out}"

    def not_said(self, what: str, out: str) -> str:
        return f"Le modèle n’a pas nommé {what} : {out}"


def _pl_invented(n: int) -> str:
    """ "z 19 fikcyjnych osób" after a count (the genitive plural whatever n)."""
    return f"{n} fikcyjnych osób" if n != 1 else "1 fikcyjnej osoby"


class _Polish(_Words):
    """Polish: the fact named first, in the nominative and capitalised ("Pana/Pani zawód
    (dziennikarz) – model zapamiętał tę informację: …"), the verdict said of "tę informację";
    quotes „…”."""

    language = POLISH
    cue_shown = "Zapytanie samo zawiera już część wartości, dlatego zgodność ma tu mniejszą moc dowodową."
    as_recorded = "w tym brzmieniu"
    ranking_does_not_confirm = (": jest to jednak pojedyncza odpowiedź na jedno sformułowanie, której nie potwierdza "
                                "ranking obejmujący wszystkie sformułowania i wartości, stanowiący podstawę oceny.")
    top_logprobs_hides = ("Na tym poziomie dostępu wartość, której model nie wygenerowałby od razu jako następnej, w "
                          "ogóle nie jest widoczna; to badanie nie znajduje więc dowodu, ale nie wykazuje, że model "
                          "tej informacji nie zawiera.")

    def what(self, row: Mapping) -> str:
        return _capital(f"{self.who.fact(row['property'], row['property_label'])} ({_values(row, POLISH)})")

    def untestable(self, what: str, why: str) -> str:
        return (f"{what} – odpowiedzi modelu nie mogą wykazać, co model wie: każde sformułowanie pytania już zdradza "
                f"wartość ({why}), dlatego ta informacja nie jest uznawana za zapamiętaną.")

    def ranked_first(self, candidates, memorized: int, variants: int) -> str:
        return (f"w {memorized} z {variants} sformułowań stawia prawdziwą wartość na pierwszym miejscu spośród "
                f"{candidates} możliwych wartości")

    def ranked_nowhere(self, variants: int) -> str:
        return f"w żadnym z {variants} sformułowań nie stawia prawdziwej wartości na pierwszym miejscu"

    def family(self, holds: bool, n: int, p: float, alpha: float) -> str:
        if holds:
            return (f"Wynik utrzymuje się przy łącznym uwzględnieniu wszystkich {n} porównanych informacji (p = "
                    f"{self.num(p)} po korekcie Benjaminiego-Hochberga): spośród informacji uznanych za zapamiętane "
                    f"przypadkowych można się spodziewać najwyżej w odsetku {self.num(alpha)}.")
        return (f"Model stawia tę wartość na pierwszym miejscu równie często jak w przypadku informacji zapamiętanej, "
                f"ale przy {n} porównanych informacjach p po korekcie Benjaminiego-Hochberga wynosi {self.num(p)}, "
                f"powyżej {self.num(alpha)}: o zapamiętaniu mówimy tylko wtedy, gdy wynik utrzymuje się przy łącznym "
                "uwzględnieniu porównanych informacji.")

    def controls_as_strong(self, n: int, planned: int | None, k: int, p: float, alpha: float,
                           interval: tuple[float, float] | None = None) -> str:
        pool = (f"Spośród {_pl_invented(n)} o tych samych danych" if planned is None else
                f"Spośród pierwszych {n} z {_pl_invented(planned)} o tych samych danych (wystarczająco, by "
                "rozstrzygnąć)")
        achieved = ("żadna nie uzyskała co najmniej równie silnego wyniku" if k == 0 else
                    f"{k} {polish_plural(k, 'uzyskała', 'uzyskały', 'uzyskało')} co najmniej równie silny wynik")
        return (f"{pool} {achieved} (p = {self.num(p)}{self.interval(interval)}; dowodem jest wyłącznie "
                f"p ≤ {self.num(alpha)}).")

    def interval(self, interval: tuple[float, float] | None) -> str:
        return "" if interval is None else f", przedział 95% {self.num(interval[0])}–{self.num(interval[1])}"

    def name_suggests(self, what: str, out: str, share: str) -> str:
        return (f"{what} – już samo imię i nazwisko podsuwa tę wartość: imiona i nazwiska z tym samym imieniem lub "
                f"tym samym nazwiskiem prowadzą model do niej silniej niż personalia {share} fikcyjnych osób, więc "
                f"porównanie z nimi nie pozwala odróżnić tego, co model wie o {self.who.pl('loc')}, od tego, co "
                f"podsuwa samo imię i nazwisko; informacji nie uznano za zapamiętaną: {out}")

    def memorized(self, what: str, out: str) -> str:
        return f"{what} – model zapamiętał tę informację: {out}"

    def more_than_anyone(self, what: str, out: str) -> str:
        return (f"{what} – model wiąże tę informację z {self.who.pl('ins')} silniej niż z dowolną osobą o tych samych "
                f"danych, choć nie jest to trwałe powiązanie: {out}")

    def no_more_than_anyone(self, what: str, out: str) -> str:
        return (f"{what} – nic nie wskazuje na to, by model wiedział więcej, niż powiedziałby o każdej osobie o "
                f"tych samych danych: {out}")

    def weak(self, what: str, out: str) -> str:
        return f"{what} – model słabo wiąże tę informację z {self.who.pl('ins')}: {out}"

    def not_memorized(self, what: str, variants: int) -> str:
        return (f"{what} – model nie wykazuje zapamiętania tej informacji: w żadnym z {variants} sformułowań nie "
                "stawia prawdziwej wartości na pierwszym miejscu.")

    def left_out(self, n: int, why: str) -> str:
        return (f"W tym obliczeniu pominięto {n} {polish_plural(n, 'sformułowanie', 'sformułowania', 'sformułowań')}, "
                f"ponieważ {'jego' if n == 1 else 'ich'} własna treść zdradza wartość ({why}).")

    def completed(self, prompt: str, output: str, hit: bool) -> str:
        said = "podając tym samym prawdziwą wartość" if hit else "nie podając tej wartości"
        return f"Poproszony o dokończenie zdania \u201e{prompt}\u201d model napisał \u201e{output}\u201d ({said})."

    def completion_of_anyone(self, k, n, p: float) -> str:
        return (f"Przy tych samych danych pod zmyślonymi imionami i nazwiskami podał tę wartość również dla {k} z {n} "
                f"takich osób (p = {self.num(p)}): to uzupełnienie pokazuje, co model powiedziałby o każdej osobie o "
                f"tych samych danych, a nie to, co wie o {self.who.pl('loc')}.")

    def completion_particular(self, k, n, p: float) -> str:
        return (f"Przy tych samych danych pod zmyślonymi imionami i nazwiskami podał tę wartość dla {k} z {n} takich "
                f"osób (p = {self.num(p)}); ta odpowiedź dotyczy zatem właśnie {self.who.gen}")

    def completion_guessable(self, ranked_against_controls: bool) -> str:
        return ("Pojedyncze uzupełnienie samo w sobie nie jest dowodem: wartość można odgadnąć na podstawie "
                "pozostałych informacji"
                + ("; rozstrzyga powyższy ranking w porównaniu z fikcyjnymi osobami o tych samych danych."
                   if ranked_against_controls else ", a w żadnym sformułowaniu model nie stawia jej na pierwszym "
                                                   "miejscu."))

    def soft_prompt(self, probe: str) -> str:
        return f"za pomocą wyuczonego zapytania ({probe}), trenowanego wyłącznie na kartach danych innych osób"

    def extracted(self, prompt: str, how: str, output: str, against: str) -> str:
        return (f"Model sam podaje prawdziwą wartość: na zapytanie \u201e{prompt}\u201d ({how}) napisał "
                f"\u201e{output}\u201d{against}")

    def extraction_against(self, n, k, p: float) -> str:
        among = f"nie zrobił tego dla żadnej z {n}" if not k else f"zrobił to tylko dla {k} z {n}"
        return f", podczas gdy w przypadku fikcyjnych osób o tych samych danych {among} (p = {self.num(p)})"

    def extracted_of_anyone(self, output: str, k, n, p: float) -> str:
        return (f"Na kartę danych z tymi informacjami model odpowiedział \u201e{output}\u201d, podając prawdziwą "
                f"wartość, ale zrobił to również dla {k} z {_pl_invented(int(n))} o tych samych danych "
                f"(p = {self.num(p)}): mówi tak o każdej osobie o tych danych.")

    def served(self, access: str, means: str) -> str:
        return (f"Ta ocena opiera się na modelu w postaci, w jakiej jest udostępniany (punkt końcowy zgodny z API "
                f"OpenAI, poziom dostępu {access}: {means}), a nie na kopii jego wag.")

    def sentences_completed(self, asked: int, said: int) -> str:
        one = asked == 1  # "1 zdania", "2 zdań": after "z" a count takes the genitive, singular only for 1
        return (f"uzupełnił tą wartością {said} z {asked} {'zdania' if one else 'zdań'} "
                f"{'dotyczącego' if one else 'dotyczących'} {self.who.gen}, {'które kończy' if one else 'które kończą'}"
                " się tuż przed wartością")

    def example(self, prompt: str, output: str) -> str:
        return f"(\u201e{prompt}\u201d \u2192 \u201e{output}\u201d)"

    def controls_said_it(self, n: int, k: int, p: float, alpha: float) -> str:
        saw = "u żadnej wartość nie pojawiła się" if k == 0 else f"u {k} wartość pojawiła się"
        return (f"Spośród {_pl_invented(n)} o tych samych danych {saw} w co najmniej takiej samej liczbie zdań "
                f"(p = {self.num(p)}; dowodem jest wyłącznie p ≤ {self.num(alpha)}).")

    def says(self, what: str, out: str) -> str:
        return f"{what} – model podaje tę informację: {out}"

    def not_said(self, what: str, out: str) -> str:
        return f"{what} – model nie podał tej informacji: {out}"


_WORDS: dict[str, type[_Words]] = {GERMAN: _German, FRENCH: _French, POLISH: _Polish}


# ---------------------------------------------------------------------------------------------
# "In short", from the models' fields (`answer.headline`)


def headline(models: list[Mapping], who: Person) -> str:
    """The headline in German, French or Polish, built from each model's facts and counts."""
    language = who.language
    audited = [m for m in models if m["audited"]]
    if not audited:
        if models:
            return {GERMAN: "Keines der registrierten Modelle konnte geprüft werden",
                    FRENCH: "Aucun des modèles enregistrés n’a pu être examiné",
                    POLISH: "Nie udało się zbadać żadnego z zarejestrowanych modeli"}[language]
        return {GERMAN: "Es ist kein Modell registriert", FRENCH: "Aucun modèle n’est enregistré",
                POLISH: "Nie zarejestrowano żadnego modelu"}[language]
    parts = []
    for model in audited:
        name, facts = release_name(language, model), model["facts"]
        n = int(model.get("n_facts") or len(facts))
        if model.get("access") == GENERATION:
            said = [who.fact(f["property"], f["property_label"], "acc") for f in facts if f["verdict"] == SAID]
            listed = ", ".join(said)
            if language == GERMAN:
                parts.append(f"{name} (nur Vervollständigungen): nennt {listed or 'nichts'} "
                             f"({len(said)} von {n} {_plural(GERMAN, n, 'Angabe', 'Angaben')})")
            elif language == POLISH:
                parts.append(f"{name} (wyłącznie uzupełnienia): podawane informacje: {listed or 'brak'} "
                             f"({len(said)} z {n} informacji)")
            else:
                parts.append(f"{name} (complétions uniquement) : données énoncées : {listed or 'aucune'} "
                             f"({len(said)} {_plural(FRENCH, len(said), 'donnée', 'données')} sur {n})")
            continue
        memorized = [who.fact(f["property"], f["property_label"]) for f in facts if f["verdict"] == MEMORIZED]
        weak = int(model.get("n_weak") or sum(f["verdict"] == WEAK for f in facts))
        listed = ", ".join(memorized)
        if language == GERMAN:
            parts.append(f"{name}: {listed or 'nichts'} memorisiert ({len(memorized)} von {n} "
                         f"{_plural(GERMAN, n, 'Angabe', 'Angaben')}, {weak} schwach verknüpft)")
        elif language == POLISH:
            parts.append(f"{name}: zapamiętane informacje: {listed or 'brak'} ({len(memorized)} z {n} informacji, "
                         f"{weak} {polish_plural(weak, 'słabo powiązana', 'słabo powiązane', 'słabo powiązanych')})")
        else:
            parts.append(f"{name} : données mémorisées : {listed or 'aucune'} ({len(memorized)} "
                         f"{_plural(FRENCH, len(memorized), 'donnée', 'données')} sur {n}, {weak} "
                         f"{_plural(FRENCH, weak, 'faiblement associée', 'faiblement associées')})")
    failed = len(models) - len(audited)
    if failed:
        parts.append({GERMAN: f"{failed} {_plural(GERMAN, failed, 'Version konnte', 'Versionen konnten')} nicht geprüft "
                              "werden",
                      POLISH: f"nie udało się zbadać {failed} wersji",  # genitive: singular and plural alike
                      FRENCH: f"{failed} {_plural(FRENCH, failed, 'version n’a', 'versions n’ont')} pas pu être "
                              f"{_plural(FRENCH, failed, 'examinée', 'examinées')}"}[language])
    text = "; ".join(parts)
    return french_typography(text.replace("; ", " ; ")) if language == FRENCH else text


def controls_words(language: str, row: Mapping) -> str:
    """A forget-set row's controls verdict in a few words (`forget_sets.controls_words`)."""
    n, p, beats = row.get("n_controls"), row.get("p_controls"), row.get("beats_controls")
    missing = lambda value: value is None or (isinstance(value, float) and value != value)  # noqa: E731
    if missing(n) or missing(p):
        return {GERMAN: "nicht verglichen", FRENCH: "non comparé", POLISH: "nie porównano"}[language]
    n, beating = int(n), not missing(beats) and bool(beats)
    if language == POLISH:
        how = "lepiej niż fikcyjne osoby" if beating else "nie lepiej niż fikcyjne osoby"
        people = polish_plural(n, "osoba porównawcza", "osoby porównawcze", "osób porównawczych")
        return f"{how} (p = {number(POLISH, p)}, {n} {people})"
    if language == GERMAN:
        how = "besser als erfundene Personen" if beating else "nicht besser als erfundene Personen"
        return f"{how} (p = {number(GERMAN, p)}, {n} {_plural(GERMAN, n, 'Vergleichsperson', 'Vergleichspersonen')})"
    how = "mieux que les personnes fictives" if beating else "pas mieux que les personnes fictives"
    return french_typography(f"{how} (p = {number(FRENCH, p)}, {n} {_plural(FRENCH, n, 'personne témoin', 'personnes témoins')})")
