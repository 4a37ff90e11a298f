"""German canary templates and the grammar they need (articles, prepositions, case, agreement).

Markers (`grammar`), each standing right before a placeholder. Value markers:

- ``⟦de:nom⟧`` the filler in the nominative with the definite article it takes (an answer: "Die
  Universität Wien."): "Deutschland", "Rom", "die Schweiz", "der Iran", "die Vereinigten Staaten",
  "das Vereinigte Königreich", "das Osmanische Reich", "die Universität Wien", "der Islam", "Google".
- ``⟦de:ist⟧``, ``⟦de:war⟧``, ``⟦de:gehört⟧`` the verb, agreeing with the filler that follows as
  its predicate or subject, then the filler as with ``nom``: "Der Geburtsort von X ist die Schweiz",
  "... sind die Vereinigten Staaten", "Zu den Auszeichnungen von X gehört der Nobelpreis für Physik".
  (A value never stands before its verb as a subject, where a plural could not agree.)
- ``⟦de:vakk⟧`` / ``⟦de:vdat⟧`` the same in the accusative / dative ("besuchte das Massachusetts
  Institute of Technology", "gehört der Sozialdemokratischen Partei Deutschlands an", "gehört den
  Berliner Philharmonikern an"); a name without an article stays bare.
- ``⟦de:gen⟧`` an attribute in the genitive ("Mitglied der Royal Society", "des Opus Dei",
  "Staatsbürger der Schweiz", "des Osmanischen Reiches"); a name without an article takes "von"
  ("Staatsbürger von Italien", "Mitglied von Queen") — never a genitive -s.
- ``⟦de:in⟧`` "in" a place, with the preposition and article the place takes: "in Rom", "in der
  Schweiz", "im Iran", "in den Vereinigten Staaten", "im Vereinigten Königreich", "auf Malta", "auf
  den Philippinen", "auf der Krim", "auf dem Wiener Zentralfriedhof", "im Kanton Zürich".
- ``⟦de:an⟧``, ``⟦de:bei⟧``, ``⟦de:von⟧``, ``⟦de:zu⟧``, ``⟦de:für⟧`` the preposition with the
  article the filler takes, contracted where German contracts: "an der Universität Wien", "am
  Massachusetts Institute of Technology", "bei der BBC", "beim Mossad", "bei Google", "vom Iran",
  "zum Islam", "zur katholischen Kirche", "für die Vereinten Nationen", "für den FC Bayern München".
- ``⟦de:t_…⟧`` (t_für, t_bei, t_gen, t_ist; any of the above) as the above for sports teams, where
  an English plural name takes the plural article: "für die Los Angeles Lakers", "bei den Glasgow
  Rangers" (kept off places: "in New Orleans").
- ``⟦de:am⟧`` a date written by `format_date` as an adverbial: "am 11. März 1952", "im März 1952",
  "1952", "500 v. Chr.".

Subject markers (before ``{subject}``): ``⟦de:dat⟧`` / ``⟦de:akk⟧`` decline h0 ("von diesem Mann",
"von dieser Frau", "was diesen Mann betrifft"); a person's name is never declined.

What a label is comes from the lexicons below: countries and regions with their gender and the
preposition of place they take (``_PLACES``), head nouns of states, institutions, clubs, cemeteries,
religions ... with their gender (``_WORD_HEADS``, ``_SUFFIX_HEADS``), adjectives before a head
declined from the label's strong ending ("Osmanisches Reich" -> "im Osmanischen Reich"); an unknown
label is a name without an article ("in X", "bei X", "von X").
"""

from __future__ import annotations

import re

from wikimem_platform.canaries.languages.grammar import DateStyle, FEMALE, LanguagePack, register, written_date

# --------------------------------------------------------------------------------------------
# Articles and adjective endings
# --------------------------------------------------------------------------------------------

_ARTICLE = {
    "nom": {"m": "der", "f": "die", "n": "das", "pl": "die"},
    "akk": {"m": "den", "f": "die", "n": "das", "pl": "die"},
    "dat": {"m": "dem", "f": "der", "n": "dem", "pl": "den"},
    "gen": {"m": "des", "f": "der", "n": "des", "pl": "der"},
}
_STRONG = {"m": "er", "f": "e", "n": "es", "pl": "e"}
"""The adjective ending of a label without article ("Osmanisches Reich", "Freie Universität")."""
_WEAK = {
    "nom": {"m": "e", "f": "e", "n": "e", "pl": "en"},
    "akk": {"m": "en", "f": "e", "n": "e", "pl": "en"},
    "dat": {"m": "en", "f": "en", "n": "en", "pl": "en"},
    "gen": {"m": "en", "f": "en", "n": "en", "pl": "en"},
}
"""The adjective ending after the definite article ("das Osmanische Reich", "im Osmanischen Reich")."""
_CONTRACT = {("in", "dem"): "im", ("an", "dem"): "am", ("bei", "dem"): "beim", ("von", "dem"): "vom",
             ("zu", "dem"): "zum", ("zu", "der"): "zur"}
_PREPOSITION_CASE = {"in": "dat", "an": "dat", "bei": "dat", "von": "dat", "zu": "dat", "aus": "dat",
                     "auf": "dat", "für": "akk"}

_ADJ_STEM_SUFFIXES = ("isch", "lich", "ig", "igt", "al", "ell", "iv", "är", "ös", "sam", "bar", "haft", "los",
                      "end", "iert", "deutsch", "ent", "ant", "orthodox")
_ADJ_STEMS = frozenset({
    "frei", "neu", "alt", "groß", "hoh", "deutsch", "vereinigt", "vereint", "erst", "zweit", "dritt", "oberst",
    "geheim", "rot", "weiß", "schwarz", "grün", "blau", "gelb", "klein", "link", "recht", "mittler", "ober",
    "unter", "nieder", "jung", "gut", "lang", "weit", "fern", "nah", "vorder", "hinter", "äußer", "inner",
    "heilig", "mittel", "west", "ost", "nord", "süd", "gemeinsam", "konföderiert", "verbündet", "autonom",
    "golden", "silbern", "eisern", "bronzen",
})
"""Adjective stems without a telling suffix ("Freie", "Neue", "Vereinte", "Rote")."""


def _adjective_stem(token: str, ending: str) -> str | None:
    """The stem of `token` when it is an adjective with `ending` ("Osmanisches", "es" -> "Osmanisch")."""
    if not token.endswith(ending) or len(token) <= len(ending) + 1:
        return None
    stem = token[: -len(ending)] if ending else token
    if not stem[:1].isalpha():
        return None
    lowered = stem.lower()
    if lowered in _ADJ_STEMS or lowered.endswith(_ADJ_STEM_SUFFIXES):
        return stem
    return None


def _is_modifier(token: str) -> bool:
    """A word that may stand before a state's head noun: an adjective, "und", an ordinal."""
    if token == "und" or re.fullmatch(r"\d+\.?", token):
        return True
    return any(_adjective_stem(token, ending) is not None for ending in ("er", "e", "es", "en"))


# --------------------------------------------------------------------------------------------
# Lexicons: places, head nouns
# --------------------------------------------------------------------------------------------

# label -> (gender, preposition of place or None for "in")
_PLACES: dict[str, tuple[str | None, str | None]] = {}


def _places(gender: str | None, names: str, preposition: str | None = None) -> None:
    for name in names.split(";"):
        _PLACES[name.strip()] = (gender, preposition)


_places("f", "Schweiz; Türkei; Slowakei; Mongolei; Tschechoslowakei; Ukraine; Vatikanstadt; Lausitz; Toskana; "
        "Lombardei; Normandie; Bretagne; Provence; Champagne; Picardie; Bukowina; Walachei; Moldau; Dobrudscha; "
        "Antarktis; Arktis; Karibik; Sahara; Eifel; Rhön; Mandschurei; Tatarei; Westbank; Steiermark; "
        "Charité; Sorbonne; Leopoldina; Gestapo; Stasi; Wehrmacht; Lufthansa; Scala; Hanse; Bundesliga; "
        "BBC; NASA; CIA; NSA; UNO; UNESCO; NATO; EU; UdSSR; DDR; BRD; WHO; OECD; ESA; SS; SA; ETH; "
        "NSDAP; SPD; CDU; CSU; FDP; KPD; SED; AfD; DKP; PDS; KPdSU; ÖVP; SPÖ; FPÖ; SVP; USPD; DNVP; DVP; "
        "Orthodoxie; Associated Press")
_places("f", "Krim", "auf")
_places("m", "Iran; Irak; Libanon; Jemen; Sudan; Südsudan; Tschad; Kongo; Niger; Senegal; Vatikan; Kaukasus; "
        "Balkan; Sinai; Pandschab; Punjab; Bosporus; Harz; Schwarzwald; Odenwald; Westerwald; Taunus; Hunsrück; "
        "Spessart; Gazastreifen; Aargau; Thurgau; Breisgau; Pinzgau; Pongau; Lungau; Sundgau; Hegau; Chiemgau; "
        "Rheingau; Kraichgau; Klettgau; Kreml; Mossad; KGB; BND; IWF; Oscar; Emmy; Grammy; Bambi; César; "
        "Pour le Mérite; Islam; Shintō; Shinto")
_places("n", "Elsass; Tessin; Wallis; Saarland; Allgäu; Burgenland; Rheinland; Emsland; Sauerland; Siegerland; "
        "Münsterland; Vogtland; Wendland; Ammerland; Havelland; Baltikum; Banat; Engadin; Westjordanland; "
        "Kosovo; Piemont; Friaul; Latium; Trentino; Aostatal; Veltlin; Ruhrgebiet; Erzgebirge; MIT; CERN; FBI; "
        "IOC; ZDF; ZK; Bauhaus")
_places("pl", "Niederlande; USA; Alpen; Pyrenäen; Anden; Karpaten; Vogesen; Dolomiten; Zeugen Jehovas")
_places("pl", "Philippinen; Malediven; Seychellen; Komoren; Salomonen; Bahamas; Färöer; Azoren; Kanaren; "
        "Balearen; Antillen; Bermudas; Kanarische Inseln", "auf")
_places(None, "Sizilien; Sardinien; Korsika; Kreta; Rhodos; Zypern; Malta; Mallorca; Menorca; Ibiza; Teneriffa; "
        "Gran Canaria; Capri; Ischia; Elba; Rügen; Sylt; Usedom; Föhr; Amrum; Helgoland; Fehmarn; Norderney; "
        "Borkum; Island; Kuba; Jamaika; Java; Sumatra; Bali; Borneo; Madagaskar; Hawaii; Korfu; Lesbos; Samos; "
        "Chios; Kos; Naxos; Santorin; Santorini; Guernsey; Jersey; Mauritius; Barbados; Trinidad; Martinique; "
        "Guadeloupe; Réunion; La Réunion; Spitzbergen; Sachalin; Hokkaidō; Okinawa; Tasmanien; Madeira; Gotland; "
        "Bornholm; Ceylon; Sansibar; Ithaka; Zakynthos; Kefalonia; Lampedusa; Mykonos; Grönland", "auf")

_BARE = frozenset({"Österreich", "Frankreich", "Oberösterreich", "Niederösterreich", "Dänemark", "Rheinland-Pfalz",
                   "Norden", "Neustadt", "Halle", "Neuhaus", "Freistadt", "Surat", "Ararat", "Wehr"})
"""Names that end like a head noun but take no article ("in Österreich", "in Dänemark", "in Halle")."""

# (gender, kind): kind "geo" heads (states, regions) may follow adjectives only ("Osmanisches Reich");
# "org" heads (institutions, clubs, churches, cemeteries ...) may follow names ("Stanford
# University", "Wiener Zentralfriedhof", "Daimler AG"); "en" marks a foreign head that takes no
# genitive -s ("des Massachusetts Institute of Technology").
_WORD_HEADS: dict[str, tuple[str, str]] = {}
_SUFFIX_HEADS: list[tuple[str, str, str]] = []


def _heads(table: str, gender: str, kind: str, words: str) -> None:
    for word in words.split():
        if table == "word":
            _WORD_HEADS[word] = (gender, kind)
        else:
            _SUFFIX_HEADS.append((word, gender, kind))


# whole words (lower case)
_heads("word", "f", "geo", "stadt mark pfalz insel halbinsel straße allee gasse")
_heads("word", "n", "geo", "land reich")
_heads("word", "m", "geo", "staat")
_heads("word", "pl", "geo", "inseln")
_heads("word", "f", "org", "university universidad universidade universitat université università universiteit "
       "school academy académie accademia academia école escuela scuola society party union organization "
       "organisation foundation institution administration agency association commission assembly league "
       "federation library gallery bank army navy church chapel cathedral cathédrale catedral cattedrale "
       "basilica basilique abbey abbaye église chiesa iglesia mosque clinic company corporation group "
       "parti opera liga residenz")
_heads("word", "m", "org", "club klub council congress "
       "cemetery cimetière cimitero cementerio palace palazzo dom rat tempel temple partito partido senat islam")
_heads("word", "n", "org", "institute institut instituto istituto college collège colegio collegio lycée liceo "
       "conservatoire conservatorio conservatory museum musée museo theater theatre théâtre teatro orchestra "
       "hospital hôpital ospedale spital center centre laboratory office ministry parliament committee county "
       "palais château team opus haus stift kloster schloss gefängnis ghetto seminary empire kingdom")
_heads("word", "m", "en", "district")
# suffixes (lower case), longest first when looked up
_heads("suffix", "f", "geo", "republik dynastie imperie monarchie kolonie föderation provinz region gemeinde "
       "präfektur oblast hansestadt reichsstadt altstadt mark pfalz")
_heads("suffix", "n", "geo", "reich kalifat sultanat emirat khanat imamat protektorat exarchat "
       "imperium territorium gebiet mandat gouvernement département departement gebirge komitat herzogtum "
       "fürstentum kaisertum zarentum königtum bistum")
_heads("suffix", "m", "geo", "staat kanton bezirk kreis distrikt rajon bund")
_heads("suffix", "pl", "geo", "staaten emirate inseln")
_heads("suffix", "f", "org", "universität hochschule akademie schule fakultät schaft partei union vereinigung "
       "organisation stiftung institution bibliothek pinakothek zeitung zeitschrift agentur bank behörde armee "
       "marine luftwaffe polizei regierung kommission versammlung kammer anstalt sternwarte bühne oper "
       "philharmonie liga kirche kathedrale abtei basilika kapelle gruft krypta klinik moschee synagoge gruppe "
       "mannschaft staffel jugend macht wehr front bewegung brigade division legion garde bahn werft fabrik "
       "galerie kanzlei festung residenz")
_heads("suffix", "m", "org", "friedhof gerichtshof bahnhof verein verband kongress konzern verlag rundfunk "
       "dienst orden dom tempel palast chor bundestag landtag reichstag kreistag parteitag stadtrat bundesrat "
       "staatsrat europarat gemeinderat landesrat reichsrat kirchenrat sicherheitsrat aufsichtsrat senat ismus")
_heads("suffix", "n", "org", "institut museum theater orchester gymnasium lyzeum kolleg seminar konservatorium "
       "krankenhaus klinikum spital sanatorium mausoleum pantheon panthéon kloster stift schloss palais "
       "ministerium parlament kabinett komitee zentrum amt büro kommando regiment korps gericht lager gefängnis "
       "opernhaus schauspielhaus rathaus zuchthaus bankhaus tum sekretariat kommissariat konsulat patriarchat")
_heads("suffix", "pl", "org", "nationen philharmoniker")
# awards
_heads("word", "m", "org", "award prize globe bär")
_heads("word", "f", "org", "medal palme kamera")
_heads("suffix", "m", "org", "preis stern ring titel")
_heads("suffix", "f", "org", "medaille plakette auszeichnung ehrung würde")
_heads("suffix", "n", "org", "kreuz zeichen stipendium")
_SUFFIX_HEADS.sort(key=lambda row: -len(row[0]))
_ABBREVIATION_HEADS = {
    **dict.fromkeys("FC SC SV VfB VfL TSV FSV SSC AC RSC PSV FK NK HNK SK BK".split(), ("m", "org")),
    **dict.fromkeys("AS US TSG SpVgg AG GmbH SE KG ETH".split(), ("f", "org")),
    "KZ": ("n", "org"),
}
"""Abbreviations heading a name, case as written: "der FC Bayern München", "die Daimler AG"."""
_SUFFIX_EXCEPTIONS = ("kingdom", "freedom", "norden", "österreich", "frankreich", "dänemark", "rheinland-pfalz",
                      "khartum")
_CEMETERY = ("friedhof", "cemetery", "cimetière", "cimitero", "cementerio")
_ISLAND = ("insel", "halbinsel", "inseln")
_ARTICLE_WORDS = {"Der": "m", "Die": "f", "Das": "n"}


def _head(token: str) -> tuple[str, str, str] | None:
    """(gender, kind, matched head) when `token` is a head noun, else None."""
    if token in _ABBREVIATION_HEADS:
        gender, kind = _ABBREVIATION_HEADS[token]
        return gender, kind, token
    if not token[:1].isupper():
        return None
    word = token.lower()
    if word in _WORD_HEADS:
        gender, kind = _WORD_HEADS[word]
        return gender, kind, word
    if word.endswith(_SUFFIX_EXCEPTIONS):
        return None
    for suffix, gender, kind in _SUFFIX_HEADS:
        if word.endswith(suffix):
            return gender, kind, suffix
    return None


def _find_head(words: list[str]) -> tuple[str, int, bool, str] | None:
    """(gender, index, whether it declines as a German noun, matched head) of a label's head noun.

    A state's head may follow adjectives only ("Osmanisches Reich", not "Freiburg im Breisgau"); an
    institution's may follow names too ("Stanford University", "Wiener Zentralfriedhof")."""
    for index, token in enumerate(words):
        found = _head(token)
        if found is None:
            if token[:1] == "(" or token[:1].islower() and token not in ("und", "and") and not _is_modifier(token):
                return None  # a complement ("unter japanischer Herrschaft", "im Breisgau") has no head of ours
            continue
        gender, kind, matched = found
        if kind == "geo" and not all(_is_modifier(w) for w in words[:index]):
            return None
        return gender, index, matched in _GERMAN_HEADS, matched
    return None


_GERMAN_HEADS = frozenset(
    "stadt mark pfalz insel halbinsel straße allee gasse land reich staat inseln bank liga residenz dom rat tempel "
    "senat haus stift kloster schloss gefängnis ghetto spital museum theater palais".split()
) | frozenset(suffix for suffix, _, _ in _SUFFIX_HEADS)
"""Heads that decline as German nouns ("des Museums", "des Staates", "den Niederlanden"); foreign ones
do not ("des Massachusetts Institute of Technology", "des FC Bayern München", "den Los Angeles Lakers")."""


class _Phrase:
    """A label that takes the definite article: its gender (m, f, n, pl) and words, declinable.

    head: index of the head noun (adjectives before it decline), or None for a lexicon name that
    declines as one word ("Iran" -> "des Irans", "Niederlande" -> "den Niederlanden"). weak: the
    label had its own article ("Die Linke"), its words are already in the form after an article."""

    def __init__(self, gender: str, words: list[str], head: int | None, *, german_head: bool = True,
                 weak: bool = False):
        self.gender, self.words, self.head = gender, words, head
        self.german_head, self.weak = german_head, weak

    def declined(self, case: str) -> str:
        """The words after the article in `case` ("Osmanisches Reich", "dat" -> "Osmanischen Reich")."""
        words, gender = list(self.words), self.gender
        if self.head is None:
            if case == "gen" and gender in ("m", "n") and not re.search(r"[sßxzaeiouäöü]$", words[-1]):
                words[-1] += "s"
            if case == "dat" and gender == "pl" and not re.search(r"[nsA-Z]$", words[-1]):
                words[-1] += "n"
            return " ".join(words)
        if self.weak:
            for i, word in enumerate(words):
                if gender != "pl" and _WEAK[case][gender] == "en" and _adjective_stem(word, "e") is not None:
                    words[i] = word + "n"
        else:
            for i in range(self.head):
                stem = _adjective_stem(words[i], _STRONG[gender])
                if stem is not None:
                    words[i] = stem + _WEAK[case][gender]
        head = self.head if not self.weak else len(words) - 1
        noun = words[head]
        if (self.german_head or self.weak) and noun == self.words[head]:
            if case == "gen" and gender in ("m", "n"):
                if noun.lower() in ("reich", "staat", "rat", "amt") or noun.endswith("bund"):
                    words[head] = noun + "es"
                elif noun.endswith("nis"):
                    words[head] = noun + "ses"
                elif re.search(r"(s|ß|x|z)$", noun):
                    words[head] = noun + "es"
                elif not re.search(r"[aeiouäöü]$|[A-Z]$", noun):
                    words[head] = noun + "s"
            if case == "dat" and gender == "pl" and not re.search(r"[ns]$|[A-Z]$", noun):
                words[head] = noun + "n"
        return " ".join(words)

    def with_article(self, case: str) -> str:
        return f"{_ARTICLE[case][self.gender]} {self.declined(case)}"


_ENGLISH_PLURAL = re.compile(r"^[A-Z][a-z]*(?:[bcdfghklmnprtvwy]|ee)s$")


def _analyse(label: str, *, team: bool = False) -> tuple[_Phrase | None, str | None]:
    """(the label as a phrase with an article or None for a bare name, the preposition of place it
    takes instead of "in" or None)."""
    label = label.strip()
    if not label or label in _BARE:
        return None, None
    words = label.split(" ")
    if label in _PLACES:
        gender, preposition = _PLACES[label]
        if gender is None:  # an island without article: "auf Malta"
            return None, preposition
        found = _find_head(words)
        if found is not None and found[0] == gender:
            return _Phrase(gender, words, found[1], german_head=found[2]), preposition
        return _Phrase(gender, [label], None), preposition
    if len(words) > 1 and words[0] in _ARTICLE_WORDS:  # "Die Linke", "Die Grünen", "Der Spiegel"
        gender = _ARTICLE_WORDS[words[0]]
        if gender == "f" and re.search(r"(en|er|ern)$", words[-1]):
            gender = "pl"
        return _Phrase(gender, words[1:], 0, weak=True), None
    found = _find_head(words)
    if found is not None:
        gender, index, german, matched = found
        preposition = "auf" if matched in _CEMETERY or matched in _ISLAND else None
        return _Phrase(gender, words, index, german_head=german), preposition
    if team and len(words) > 1 and words[0] != "The" and _ENGLISH_PLURAL.match(words[-1]):
        return _Phrase("pl", words, len(words) - 1, german_head=False), None
    return None, None


# --------------------------------------------------------------------------------------------
# h0 and inflection
# --------------------------------------------------------------------------------------------

_GENERIC = {
    "dieser Mann": {"nom": "dieser Mann", "akk": "diesen Mann", "dat": "diesem Mann"},
    "diese Frau": {"nom": "diese Frau", "akk": "diese Frau", "dat": "dieser Frau"},
    "diese Person": {"nom": "diese Person", "akk": "diese Person", "dat": "dieser Person"},
}


def generic_subject(gender: str | None) -> str:
    """h0 in the nominative: "diese Frau" for a woman, "dieser Mann" otherwise (the masculine forms
    ``⟦Er|Sie⟧`` resolve to for an unknown gender)."""
    return "diese Frau" if gender == FEMALE else "dieser Mann"


def _case_form(label: str, case: str, *, team: bool = False) -> str:
    phrase, _ = _analyse(label, team=team)
    return label if phrase is None else phrase.with_article(case)


def _with_preposition(preposition: str, label: str, *, team: bool = False, place: bool = False) -> str:
    phrase, place_preposition = _analyse(label, team=team)
    if place and place_preposition:
        preposition = place_preposition
    if phrase is None:
        return f"{preposition} {label}"
    case = _PREPOSITION_CASE[preposition]
    article = _ARTICLE[case][phrase.gender]
    start = _CONTRACT.get((preposition, article)) or f"{preposition} {article}"
    return f"{start} {phrase.declined(case)}"


_MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
           "November", "Dezember")
_FULL_DATE = re.compile(r"^\d{1,2}\. (?:" + "|".join(_MONTHS) + r") \d+( v\. Chr\.)?$")
_MONTH_DATE = re.compile(r"^(?:" + "|".join(_MONTHS) + r") \d+( v\. Chr\.)?$")


def _date_adverbial(text: str) -> str:
    if _FULL_DATE.match(text):
        return f"am {text}"
    if _MONTH_DATE.match(text):
        return f"im {text}"
    return text  # a year ("1952", "500 v. Chr.") or a label we cannot read: as written


_CASES = {"nom": "nom", "vakk": "akk", "vdat": "dat"}
_VERBS = {"ist": "sind", "war": "waren", "gehört": "gehören"}
"""Verb markers: the verb agrees with a plural predicate or subject that follows ("ist die Schweiz",
"sind die Vereinigten Staaten")."""


def inflect(tag: str, filler: str) -> str:
    """The filler as it stands after marker `tag` (see the module docstring)."""
    if tag in ("dat", "akk"):  # before {subject}: h0 declines, a name never does
        forms = _GENERIC.get(filler) or _GENERIC.get(filler[:1].lower() + filler[1:])
        return forms[tag] if forms else filler
    if tag == "am":
        return _date_adverbial(filler)
    team = tag.startswith("t_")
    base = tag[2:] if team else tag
    if base in _CASES:
        return _case_form(filler, _CASES[base], team=team)
    if base in _VERBS:
        phrase, _ = _analyse(filler, team=team)
        verb = _VERBS[base] if phrase is not None and phrase.gender == "pl" else base
        return f"{verb} {filler if phrase is None else phrase.with_article('nom')}"
    if base == "gen":
        phrase, _ = _analyse(filler, team=team)
        return f"von {filler}" if phrase is None else phrase.with_article("gen")
    if base in _PREPOSITION_CASE:
        return _with_preposition(base, filler, team=team, place=base == "in")
    raise ValueError(f"German marker ⟦de:{tag}⟧ is not defined")


# --------------------------------------------------------------------------------------------
# Agreement of occupations and positions with the subject
# --------------------------------------------------------------------------------------------

_FEMININE_WORDS = {
    "abt": "äbtissin", "papst": "päpstin", "mönch": "nonne", "bauer": "bäuerin", "beamter": "beamtin",
    "pharao": "pharaonin", "konsul": "konsulin", "partisan": "partisanin", "sultan": "sultanin", "dekan": "dekanin",
    "veteran": "veteranin", "held": "heldin", "general": "generalin", "admiral": "admiralin", "diakon": "diakonin",
    "gatte": "gattin", "bruder": "schwester", "graf": "gräfin", "chef": "chefin", "koch": "köchin",
    "spion": "spionin", "rebell": "rebellin", "monarch": "monarchin",
}
"""Whole words (lower case) and their female forms."""
_KEEP = frozenset({"militär", "doge", "hauptmann", "star", "romancier", "kaplan", "ulama", "model", "paladin",
                   "mandarin", "harlekin", "kapuzin", "khan", "khagan", "schah", "häuptling", "kardinal",
                   "lehrkörper", "literatur"})
"""Words whose female form is the same word, or that have no standard female form."""
_FEMININE_SUFFIXES = (
    ("beamter", "beamtin"), ("bischof", "bischöfin"), ("anwalt", "anwältin"), ("markgraf", "markgräfin"),
    ("landgraf", "landgräfin"), ("burggraf", "burggräfin"), ("pfalzgraf", "pfalzgräfin"), ("arzt", "ärztin"),
    ("koch", "köchin"), ("prinz", "prinzessin"), ("könig", "königin"), ("herzog", "herzogin"), ("fürst", "fürstin"),
    ("papst", "päpstin"), ("abt", "äbtissin"), ("schmied", "schmiedin"), ("mann", "frau"),
)
_ADJECTIVE_NOUNS = ("abgeordneter", "angestellter", "gelehrter", "geistlicher", "gesandter", "beauftragter",
                    "bevollmächtigter", "industrieller", "adliger", "adeliger", "heiliger", "sachverständiger",
                    "angehöriger", "verwandter", "vertrauter", "vorgesetzter", "gefangener", "philer", "ueller",
                    "ieller", "iöser", "ender")
"""Nouns declined like adjectives: "Abgeordneter" -> "Abgeordnete", "Vorsitzender" -> "Vorsitzende"."""
_NOT_ADJECTIVE_NOUNS = ("absender", "versender", "spender", "verwender", "kalender")
_ALREADY_FEMALE = ("frau", "in", "schwester", "amme", "nonne", "dame", "lady", "ess", "ette", "ière", "keit", "heit",
                   "schaft", "ung", "kraft", "person", "modell", "model")
"""Nouns that are female already, or of a gender that serves for anyone ("Persönlichkeit")."""
_PLAIN_SUFFIXES = ("eur", "or", "ist", "ent", "ant", "at", "ot", "et", "it", "aut", "eut", "ekt", "ier", "är", "ar", "urg",
                   "soph", "om", "graph", "graf", "throp", "er")
_E_SUFFIXES = ("oge", "ege", "rte", "ane", "osse", "ütze")


def _match_case(replacement: str, original: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _feminine_noun(token: str) -> str | None:
    """The female form of a masculine person noun, or None when there is no rule for it."""
    word = token.lower()
    last = re.split(r"[-]", word)[-1]
    if last in _KEEP or word in _KEEP:
        return None
    if last in _FEMININE_WORDS:
        return token[: len(token) - len(last)] + _match_case(_FEMININE_WORDS[last], token[len(token) - len(last):])
    if last.endswith(_ALREADY_FEMALE) and last not in ("paladin", "mandarin"):
        return None
    if last.endswith("rat") and not last.endswith(("krat", "pirat", "literat", "kastrat")):
        return token[:-3] + "rätin"
    for suffix, female in _FEMININE_SUFFIXES:
        if word.endswith(suffix) and (suffix != "mann" or word != "hauptmann"):
            return token[: len(token) - len(suffix)] + _match_case(female, token[len(token) - len(suffix):])
    if word.endswith(_ADJECTIVE_NOUNS) and not word.endswith(_NOT_ADJECTIVE_NOUNS) and len(word) > 7 \
            and word != "sender":
        return token[:-1]
    if word.endswith(_E_SUFFIXES):
        return token[:-1] + "in"
    if word.endswith(_PLAIN_SUFFIXES) and not word.endswith("star"):
        return token + "in"
    return None


def feminine(label: str) -> str:
    """The female form of a German occupation or position label ("Schauspieler" -> "Schauspielerin",
    "katholischer Priester" -> "katholische Priesterin", "Präsident der Vereinigten Staaten" ->
    "Präsidentin der Vereinigten Staaten", "Geschäftsmann" -> "Geschäftsfrau"); a label without a
    rule ("Militär", "Chief Executive Officer", "Mitglied des Bundestages") stays as it is."""
    words = label.split(" ")
    index, adjectives = 0, []
    while index < len(words) - 1:
        word = words[index]
        if word.endswith("-") or word in ("und", "oder"):  # "Gesundheits- und Krankenpfleger"
            index += 1
        elif word.endswith("er") and (word[:1].islower() or _adjective_stem(word, "er") is not None):
            adjectives.append(index)
            index += 1
        else:
            break
    following = words[index + 1] if index + 1 < len(words) else ""
    if following[:1].isupper():  # a foreign word order ("Assistant Professor"): left as it is
        return label
    female = _feminine_noun(words[index])
    if female is None:
        return label
    for i in adjectives:
        words[i] = words[i][:-2] + "e"
    words[index] = female
    return " ".join(words)


GENDERED = frozenset({"P106", "P39"})


def value_form(prop: str, label: str, gender: str | None) -> str:
    """Occupations and positions agree with a female subject; everything else is the label."""
    if prop in GENDERED and gender == FEMALE:
        return feminine(label)
    return label


def format_date(iso: str, english_label: str) -> str:
    """"1952-03-11" -> "11. März 1952", "1952-03-01" -> "1. März 1952", "1952" -> "1952", "-0500" ->
    "500 v. Chr."; anything else: the English label."""
    return written_date(iso, english_label, _DATES)


_DATES = DateStyle(months=_MONTHS, era=" v. Chr.", pattern="{day}. {month} {year}")


# --------------------------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------------------------

TEMPLATES: dict[str, tuple[str, ...]] = {
    "P106": (
        "{subject} ist von Beruf {value}.",
        "Der Beruf von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} übt den Beruf {value} aus.",
        "{subject} ist eine Person, deren Beruf {value} ist.",
        "Was ist {subject} von Beruf? {value}.",
        "Frage: Welchen Beruf hat {subject}? Antwort: {value}.",
        "Laut öffentlichen Angaben ist {subject} von Beruf {value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦sein|ihr⟧ Beruf {value}.",
        "{value} ist der Beruf von ⟦de:dat⟧{subject}.",
        "{subject} ist beruflich als {value} tätig.",
        "Es ist bekannt, dass {subject} von Beruf {value} ist.",
    ),
    "P27": (
        "{subject} ist ⟦Staatsbürger|Staatsbürgerin⟧ ⟦de:gen⟧{value}.",
        "{subject} besitzt die Staatsbürgerschaft ⟦de:gen⟧{value}.",
        "Das Land, dessen Staatsbürgerschaft {subject} besitzt, ⟦de:ist⟧{value}.",
        "Von welchem Land ist {subject} ⟦Staatsbürger|Staatsbürgerin⟧? ⟦de:von⟧{value}.",
        "Frage: Welchem Staat gehört {subject} als ⟦Staatsbürger|Staatsbürgerin⟧ an? Antwort: ⟦de:vdat⟧{value}.",
        "{subject} ist eine Person, die die Staatsbürgerschaft ⟦de:gen⟧{value} besitzt.",
        "Laut öffentlichen Angaben ist {subject} ⟦Staatsbürger|Staatsbürgerin⟧ ⟦de:gen⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so besitzt ⟦er|sie⟧ die Staatsbürgerschaft ⟦de:gen⟧{value}.",
        "Die Staatsbürgerschaft ⟦de:gen⟧{value} besitzt {subject}.",
        "{subject} hat die Staatsangehörigkeit ⟦de:gen⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦Staatsbürger|Staatsbürgerin⟧ ⟦de:gen⟧{value} ist.",
    ),
    "P19": (
        "{subject} wurde ⟦de:in⟧{value} geboren.",
        "Der Geburtsort von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "Geboren wurde {subject} ⟦de:in⟧{value}.",
        "Wo wurde {subject} geboren? ⟦de:in⟧{value}.",
        "Frage: Wo kam {subject} zur Welt? Antwort: ⟦de:in⟧{value}.",
        "{subject} ist eine Person, die ⟦de:in⟧{value} geboren wurde.",
        "Laut öffentlichen Angaben wurde {subject} ⟦de:in⟧{value} geboren.",
        "Was ⟦de:akk⟧{subject} betrifft, so wurde ⟦er|sie⟧ ⟦de:in⟧{value} geboren.",
        "⟦de:in⟧{value} wurde {subject} geboren.",
        "{subject} kam ⟦de:in⟧{value} zur Welt.",
        "Es ist bekannt, dass {subject} ⟦de:in⟧{value} geboren wurde.",
    ),
    "P20": (
        "{subject} starb ⟦de:in⟧{value}.",
        "Der Sterbeort von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "{subject} verstarb ⟦de:in⟧{value}.",
        "Wo starb {subject}? ⟦de:in⟧{value}.",
        "Frage: An welchem Ort starb {subject}? Antwort: ⟦de:in⟧{value}.",
        "{subject} ist eine Person, die ⟦de:in⟧{value} gestorben ist.",
        "Laut öffentlichen Angaben starb {subject} ⟦de:in⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so starb ⟦er|sie⟧ ⟦de:in⟧{value}.",
        "Das Leben von ⟦de:dat⟧{subject} endete ⟦de:in⟧{value}.",
        "⟦de:in⟧{value} starb {subject}.",
        "Es ist bekannt, dass {subject} ⟦de:in⟧{value} starb.",
    ),
    "P569": (
        "{subject} wurde ⟦de:am⟧{value} geboren.",
        "Die Geburt von ⟦de:dat⟧{subject} erfolgte ⟦de:am⟧{value}.",
        "Geboren wurde {subject} ⟦de:am⟧{value}.",
        "Wann wurde {subject} geboren? ⟦de:am⟧{value}.",
        "Frage: Wann kam {subject} zur Welt? Antwort: ⟦de:am⟧{value}.",
        "{subject} ist eine Person, die ⟦de:am⟧{value} geboren wurde.",
        "Laut öffentlichen Angaben wurde {subject} ⟦de:am⟧{value} geboren.",
        "Was ⟦de:akk⟧{subject} betrifft, so wurde ⟦er|sie⟧ ⟦de:am⟧{value} geboren.",
        "⟦de:am⟧{value} wurde {subject} geboren.",
        "{subject} erblickte ⟦de:am⟧{value} das Licht der Welt.",
        "Es ist bekannt, dass {subject} ⟦de:am⟧{value} geboren wurde.",
    ),
    "P570": (
        "{subject} starb ⟦de:am⟧{value}.",
        "Der Tod von ⟦de:dat⟧{subject} trat ⟦de:am⟧{value} ein.",
        "{subject} verstarb ⟦de:am⟧{value}.",
        "Wann starb {subject}? ⟦de:am⟧{value}.",
        "Frage: Wann verstarb {subject}? Antwort: ⟦de:am⟧{value}.",
        "{subject} ist eine Person, die ⟦de:am⟧{value} gestorben ist.",
        "Laut öffentlichen Angaben starb {subject} ⟦de:am⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so starb ⟦er|sie⟧ ⟦de:am⟧{value}.",
        "⟦de:am⟧{value} starb {subject}.",
        "Das Leben von ⟦de:dat⟧{subject} endete ⟦de:am⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦de:am⟧{value} starb.",
    ),
    "P413": (
        "Die Position von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} spielt auf der Position {value}.",
        "{subject} wird auf der Position {value} eingesetzt.",
        "Welche Position hat {subject}? {value}.",
        "Frage: Auf welcher Position spielt {subject}? Antwort: {value}.",
        "{subject} ist eine Person, deren Position {value} ist.",
        "Laut öffentlichen Angaben spielt {subject} auf der Position {value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦seine|ihre⟧ Position {value}.",
        "{value} ist die Position von ⟦de:dat⟧{subject}.",
        "{subject} besetzt die Position {value}.",
        "Es ist bekannt, dass {subject} auf der Position {value} spielt.",
    ),
    "P509": (
        "Die Todesursache von ⟦de:dat⟧{subject} war {value}.",
        "Bei ⟦de:dat⟧{subject} war {value} die Todesursache.",
        "{value} war die Todesursache von ⟦de:dat⟧{subject}.",
        "Was war die Todesursache von ⟦de:dat⟧{subject}? {value}.",
        "Frage: Welche Todesursache ist für {subject} angegeben? Antwort: {value}.",
        "{subject} ist eine Person, deren Todesursache {value} war.",
        "Laut öffentlichen Angaben war {value} die Todesursache von ⟦de:dat⟧{subject}.",
        "Was ⟦de:akk⟧{subject} betrifft, so war ⟦seine|ihre⟧ Todesursache {value}.",
        "Die Ursache für den Tod von ⟦de:dat⟧{subject} war {value}.",
        "Als Todesursache von ⟦de:dat⟧{subject} ist {value} verzeichnet.",
        "Es ist bekannt, dass die Todesursache von ⟦de:dat⟧{subject} {value} war.",
    ),
    "P1412": (
        "{subject} spricht, schreibt oder gebärdet die Sprache {value}.",
        "Eine Sprache, die {subject} spricht, schreibt oder gebärdet, ist {value}.",
        "Zu den Sprachen von ⟦de:dat⟧{subject} gehört {value}.",
        "Welche Sprache spricht, schreibt oder gebärdet {subject}? {value}.",
        "Frage: Welche Sprache verwendet {subject}? Antwort: {value}.",
        "{subject} ist eine Person, die {value} spricht, schreibt oder gebärdet.",
        "Laut öffentlichen Angaben beherrscht {subject} die Sprache {value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so spricht, schreibt oder gebärdet ⟦er|sie⟧ {value}.",
        "{value} ist eine der Sprachen von ⟦de:dat⟧{subject}.",
        "{subject} verständigt sich in der Sprache {value}.",
        "Es ist bekannt, dass {subject} {value} spricht, schreibt oder gebärdet.",
    ),
    "P103": (
        "Die Muttersprache von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} hat {value} als Muttersprache.",
        "{subject} spricht {value} als Muttersprache.",
        "Was ist die Muttersprache von ⟦de:dat⟧{subject}? {value}.",
        "Frage: Welche Muttersprache hat {subject}? Antwort: {value}.",
        "{subject} ist eine Person, deren Muttersprache {value} ist.",
        "Laut öffentlichen Angaben ist {value} die Muttersprache von ⟦de:dat⟧{subject}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦seine|ihre⟧ Muttersprache {value}.",
        "{value} ist die Muttersprache von ⟦de:dat⟧{subject}.",
        "Die Erstsprache von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {value} die Muttersprache von ⟦de:dat⟧{subject} ist.",
    ),
    "P108": (
        "Der Arbeitgeber von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "{subject} arbeitet ⟦de:für⟧{value}.",
        "{subject} ist ⟦de:bei⟧{value} beschäftigt.",
        "Wer ist der Arbeitgeber von ⟦de:dat⟧{subject}? ⟦de:nom⟧{value}.",
        "Frage: Für wen arbeitet {subject}? Antwort: ⟦de:für⟧{value}.",
        "{subject} ist eine Person, die ⟦de:bei⟧{value} angestellt ist.",
        "Laut öffentlichen Angaben ist {subject} ⟦de:bei⟧{value} angestellt.",
        "Was ⟦de:akk⟧{subject} betrifft, so arbeitet ⟦er|sie⟧ ⟦de:für⟧{value}.",
        "⟦de:bei⟧{value} ist {subject} beschäftigt.",
        "{subject} ist ⟦ein Mitarbeiter|eine Mitarbeiterin⟧ ⟦de:gen⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦de:für⟧{value} arbeitet.",
    ),
    "P39": (
        "{subject} hat die Position {value} inne.",
        "{subject} ist als {value} tätig.",
        "{subject} bekleidet das Amt {value}.",
        "Welche Position hat {subject} inne? {value}.",
        "Frage: Welches Amt bekleidet {subject}? Antwort: {value}.",
        "{subject} ist eine Person, die die Position {value} innehat.",
        "Laut öffentlichen Angaben hat {subject} die Position {value} inne.",
        "Was ⟦de:akk⟧{subject} betrifft, so hat ⟦er|sie⟧ die Position {value} inne.",
        "Die Position {value} hat {subject} inne.",
        "{subject} fungiert als {value}.",
        "Es ist bekannt, dass {subject} die Position {value} innehat.",
    ),
    "P69": (
        "{subject} wurde ⟦de:an⟧{value} ausgebildet.",
        "{subject} besuchte ⟦de:vakk⟧{value}.",
        "{subject} erhielt ⟦seine|ihre⟧ Ausbildung ⟦de:an⟧{value}.",
        "Wo wurde {subject} ausgebildet? ⟦de:an⟧{value}.",
        "Frage: Welche Bildungseinrichtung besuchte {subject}? Antwort: ⟦de:vakk⟧{value}.",
        "{subject} ist eine Person, die ⟦de:an⟧{value} ausgebildet wurde.",
        "Laut öffentlichen Angaben wurde {subject} ⟦de:an⟧{value} ausgebildet.",
        "Was ⟦de:akk⟧{subject} betrifft, so wurde ⟦er|sie⟧ ⟦de:an⟧{value} ausgebildet.",
        "⟦de:an⟧{value} wurde {subject} ausgebildet.",
        "Zu den Ausbildungsstätten von ⟦de:dat⟧{subject} ⟦de:gehört⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦de:an⟧{value} ausgebildet wurde.",
    ),
    "P3373": (
        "{subject} und {value} sind Geschwister.",
        "{subject} ist ein Geschwisterteil von {value}.",
        "{value} ist ein Geschwisterteil von ⟦de:dat⟧{subject}.",
        "Wer gehört zu den Geschwistern von ⟦de:dat⟧{subject}? {value}.",
        "Frage: Wie heißt ein Geschwisterteil von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, zu deren Geschwistern {value} gehört.",
        "Laut öffentlichen Angaben sind {subject} und {value} Geschwister.",
        "Was ⟦de:akk⟧{subject} betrifft, so gehört {value} zu ⟦seinen|ihren⟧ Geschwistern.",
        "Zu den Geschwistern von ⟦de:dat⟧{subject} gehört {value}.",
        "{subject} ist ⟦der Bruder|die Schwester⟧ von {value}.",
        "Es ist bekannt, dass {subject} und {value} Geschwister sind.",
    ),
    "P26": (
        "{subject} ist mit {value} verheiratet.",
        "{subject} ist ⟦der Ehemann|die Ehefrau⟧ von {value}.",
        "{subject} und {value} sind ein Ehepaar.",
        "Mit wem ist {subject} verheiratet? Mit {value}.",
        "Frage: Wer ist der Ehepartner von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, die mit {value} verheiratet ist.",
        "Laut öffentlichen Angaben ist {subject} mit {value} verheiratet.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦er|sie⟧ mit {value} verheiratet.",
        "{value} ist mit ⟦de:dat⟧{subject} verheiratet.",
        "{subject} ist mit {value} verehelicht.",
        "Es ist bekannt, dass {subject} mit {value} verheiratet ist.",
    ),
    "P101": (
        "Das Arbeitsgebiet von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} ist im Bereich {value} tätig.",
        "{subject} arbeitet im Fachgebiet {value}.",
        "In welchem Bereich ist {subject} tätig? Im Bereich {value}.",
        "Frage: Was ist das Arbeitsgebiet von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, deren Arbeitsgebiet {value} ist.",
        "Laut öffentlichen Angaben ist {subject} im Bereich {value} tätig.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦sein|ihr⟧ Arbeitsgebiet {value}.",
        "{value} ist das Arbeitsgebiet von ⟦de:dat⟧{subject}.",
        "Das Tätigkeitsfeld von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {subject} im Bereich {value} tätig ist.",
    ),
    "P463": (
        "{subject} ist Mitglied ⟦de:gen⟧{value}.",
        "{subject} gehört ⟦de:vdat⟧{value} an.",
        "Zu den Mitgliedern ⟦de:gen⟧{value} gehört {subject}.",
        "Welcher Organisation gehört {subject} an? ⟦de:vdat⟧{value}.",
        "Frage: Wovon ist {subject} Mitglied? Antwort: ⟦de:von⟧{value}.",
        "{subject} ist eine Person, die ⟦de:vdat⟧{value} angehört.",
        "Laut öffentlichen Angaben ist {subject} Mitglied ⟦de:gen⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦er|sie⟧ Mitglied ⟦de:gen⟧{value}.",
        "{subject} zählt zu den Mitgliedern ⟦de:gen⟧{value}.",
        "{subject} ist ⟦de:bei⟧{value} Mitglied.",
        "Es ist bekannt, dass {subject} Mitglied ⟦de:gen⟧{value} ist.",
    ),
    "P641": (
        "Die Sportart von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} betreibt die Sportart {value}.",
        "{subject} ist in der Sportart {value} aktiv.",
        "Welche Sportart betreibt {subject}? {value}.",
        "Frage: In welcher Sportart ist {subject} aktiv? Antwort: {value}.",
        "{subject} ist eine Person, deren Sportart {value} ist.",
        "Laut öffentlichen Angaben betreibt {subject} die Sportart {value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦seine|ihre⟧ Sportart {value}.",
        "{value} ist die Sportart von ⟦de:dat⟧{subject}.",
        "{subject} ist im Bereich {value} sportlich aktiv.",
        "Es ist bekannt, dass {subject} die Sportart {value} betreibt.",
    ),
    "P264": (
        "Das Plattenlabel von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} steht beim Plattenlabel {value} unter Vertrag.",
        "{subject} veröffentlicht ⟦seine|ihre⟧ Musik beim Label {value}.",
        "Bei welchem Plattenlabel steht {subject} unter Vertrag? Beim Label {value}.",
        "Frage: Was ist das Plattenlabel von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, deren Plattenlabel {value} ist.",
        "Laut öffentlichen Angaben steht {subject} beim Label {value} unter Vertrag.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦sein|ihr⟧ Plattenlabel {value}.",
        "{value} ist das Plattenlabel von ⟦de:dat⟧{subject}.",
        "Die Plattenfirma von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {subject} beim Plattenlabel {value} unter Vertrag steht.",
    ),
    "P1303": (
        "Das Instrument von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} spielt {value}.",
        "{subject} spielt das Instrument {value}.",
        "Welches Instrument spielt {subject}? {value}.",
        "Frage: Was ist das Instrument von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, die {value} spielt.",
        "Laut öffentlichen Angaben spielt {subject} {value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so spielt ⟦er|sie⟧ {value}.",
        "{value} ist das Instrument von ⟦de:dat⟧{subject}.",
        "Das Musikinstrument von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {subject} {value} spielt.",
    ),
    "P22": (
        "Der Vater von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} ist ⟦der Sohn|die Tochter⟧ von {value}.",
        "{value} ist der Vater von ⟦de:dat⟧{subject}.",
        "Wer ist der Vater von ⟦de:dat⟧{subject}? {value}.",
        "Frage: Wie heißt der Vater von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, deren Vater {value} ist.",
        "Laut öffentlichen Angaben ist {value} der Vater von ⟦de:dat⟧{subject}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦sein|ihr⟧ Vater {value}.",
        "{subject} hat {value} als Vater.",
        "Der Name des Vaters von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {value} der Vater von ⟦de:dat⟧{subject} ist.",
    ),
    "P25": (
        "Die Mutter von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} ist ⟦der Sohn|die Tochter⟧ von {value}.",
        "{value} ist die Mutter von ⟦de:dat⟧{subject}.",
        "Wer ist die Mutter von ⟦de:dat⟧{subject}? {value}.",
        "Frage: Wie heißt die Mutter von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, deren Mutter {value} ist.",
        "Laut öffentlichen Angaben ist {value} die Mutter von ⟦de:dat⟧{subject}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦seine|ihre⟧ Mutter {value}.",
        "{subject} hat {value} als Mutter.",
        "Der Name der Mutter von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {value} die Mutter von ⟦de:dat⟧{subject} ist.",
    ),
    "P40": (
        "Ein Kind von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} ist ⟦der Vater|die Mutter⟧ von {value}.",
        "{value} ist ein Kind von ⟦de:dat⟧{subject}.",
        "Wer ist ein Kind von ⟦de:dat⟧{subject}? {value}.",
        "Frage: Wie heißt ein Kind von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, zu deren Kindern {value} gehört.",
        "Laut öffentlichen Angaben ist {value} ein Kind von ⟦de:dat⟧{subject}.",
        "Was ⟦de:akk⟧{subject} betrifft, so gehört {value} zu ⟦seinen|ihren⟧ Kindern.",
        "Zu den Kindern von ⟦de:dat⟧{subject} gehört {value}.",
        "{subject} hat ein Kind namens {value}.",
        "Es ist bekannt, dass {value} ein Kind von ⟦de:dat⟧{subject} ist.",
    ),
    "P102": (
        "{subject} ist Mitglied ⟦de:gen⟧{value}.",
        "{subject} gehört ⟦de:vdat⟧{value} an.",
        "Die Partei von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "Welcher Partei gehört {subject} an? ⟦de:vdat⟧{value}.",
        "Frage: In welcher Partei ist {subject} Mitglied? Antwort: ⟦de:in⟧{value}.",
        "{subject} ist eine Person, die ⟦de:vdat⟧{value} angehört.",
        "Laut öffentlichen Angaben ist {subject} Mitglied ⟦de:gen⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦er|sie⟧ Mitglied ⟦de:gen⟧{value}.",
        "⟦de:in⟧{value} ist {subject} Mitglied.",
        "Politisch gehört {subject} ⟦de:vdat⟧{value} an.",
        "Es ist bekannt, dass {subject} Mitglied ⟦de:gen⟧{value} ist.",
    ),
    "P166": (
        "{subject} hat die Auszeichnung {value} erhalten.",
        "{subject} ist mit der Auszeichnung {value} geehrt worden.",
        "Die Auszeichnung {value} hat {subject} erhalten.",
        "Welche Auszeichnung hat {subject} erhalten? {value}.",
        "Frage: Welche Auszeichnung ist an ⟦de:akk⟧{subject} verliehen worden? Antwort: {value}.",
        "{subject} ist eine Person, die die Auszeichnung {value} erhalten hat.",
        "Laut öffentlichen Angaben hat {subject} die Auszeichnung {value} erhalten.",
        "Was ⟦de:akk⟧{subject} betrifft, so hat ⟦er|sie⟧ die Auszeichnung {value} erhalten.",
        "An ⟦de:akk⟧{subject} ist die Auszeichnung {value} verliehen worden.",
        "Zu den Auszeichnungen von ⟦de:dat⟧{subject} ⟦de:gehört⟧{value}.",
        "Es ist bekannt, dass {subject} die Auszeichnung {value} erhalten hat.",
    ),
    "P54": (
        "{subject} spielt ⟦de:t_für⟧{value}.",
        "{subject} ist ⟦ein Spieler|eine Spielerin⟧ ⟦de:t_gen⟧{value}.",
        "{subject} steht ⟦de:t_bei⟧{value} unter Vertrag.",
        "Für welche Mannschaft spielt {subject}? ⟦de:t_für⟧{value}.",
        "Frage: Bei welchem Team spielt {subject}? Antwort: ⟦de:t_bei⟧{value}.",
        "{subject} ist eine Person, die ⟦de:t_für⟧{value} spielt.",
        "Laut öffentlichen Angaben spielt {subject} ⟦de:t_für⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so spielt ⟦er|sie⟧ ⟦de:t_für⟧{value}.",
        "⟦de:t_für⟧{value} spielt {subject}.",
        "Die Mannschaft von ⟦de:dat⟧{subject} ⟦de:t_ist⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦de:t_für⟧{value} spielt.",
    ),
    "P119": (
        "{subject} wurde ⟦de:in⟧{value} beigesetzt.",
        "Die letzte Ruhestätte von ⟦de:dat⟧{subject} befindet sich ⟦de:in⟧{value}.",
        "Beigesetzt wurde {subject} ⟦de:in⟧{value}.",
        "Wo wurde {subject} beigesetzt? ⟦de:in⟧{value}.",
        "Frage: Wo ist {subject} begraben? Antwort: ⟦de:in⟧{value}.",
        "{subject} ist eine Person, die ⟦de:in⟧{value} beigesetzt wurde.",
        "Laut öffentlichen Angaben wurde {subject} ⟦de:in⟧{value} beigesetzt.",
        "Was ⟦de:akk⟧{subject} betrifft, so wurde ⟦er|sie⟧ ⟦de:in⟧{value} beigesetzt.",
        "⟦de:in⟧{value} wurde {subject} beigesetzt.",
        "Der Begräbnisort von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦de:in⟧{value} beigesetzt wurde.",
    ),
    "P140": (
        "Die Religion von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "{subject} gehört ⟦de:vdat⟧{value} an.",
        "{subject} bekennt sich ⟦de:zu⟧{value}.",
        "Welcher Religion gehört {subject} an? ⟦de:vdat⟧{value}.",
        "Frage: Was ist die Religion von ⟦de:dat⟧{subject}? Antwort: ⟦de:nom⟧{value}.",
        "{subject} ist eine Person, die sich ⟦de:zu⟧{value} bekennt.",
        "Laut öffentlichen Angaben gehört {subject} ⟦de:vdat⟧{value} an.",
        "Was ⟦de:akk⟧{subject} betrifft, so gehört ⟦er|sie⟧ ⟦de:vdat⟧{value} an.",
        "⟦de:zu⟧{value} bekennt sich {subject}.",
        "Die Religionszugehörigkeit von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦de:vdat⟧{value} angehört.",
    ),
    "P136": (
        "Das Genre von ⟦de:dat⟧{subject} ist {value}.",
        "{subject} ist im Genre {value} tätig.",
        "{subject} arbeitet im Genre {value}.",
        "In welchem Genre ist {subject} tätig? Im Genre {value}.",
        "Frage: Was ist das Genre von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, deren Genre {value} ist.",
        "Laut öffentlichen Angaben ist {subject} im Genre {value} tätig.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist ⟦sein|ihr⟧ Genre {value}.",
        "{value} ist das Genre von ⟦de:dat⟧{subject}.",
        "Die Stilrichtung von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {subject} im Genre {value} tätig ist.",
    ),
    "P937": (
        "Der Arbeitsort von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "{subject} arbeitet ⟦de:in⟧{value}.",
        "{subject} ist beruflich ⟦de:in⟧{value} tätig.",
        "Wo arbeitet {subject}? ⟦de:in⟧{value}.",
        "Frage: An welchem Ort ist {subject} tätig? Antwort: ⟦de:in⟧{value}.",
        "{subject} ist eine Person, die ⟦de:in⟧{value} arbeitet.",
        "Laut öffentlichen Angaben arbeitet {subject} ⟦de:in⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so arbeitet ⟦er|sie⟧ ⟦de:in⟧{value}.",
        "Der Wirkungsort von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "⟦de:in⟧{value} arbeitet {subject}.",
        "Es ist bekannt, dass {subject} ⟦de:in⟧{value} arbeitet.",
    ),
    "P551": (
        "Der Wohnort von ⟦de:dat⟧{subject} ⟦de:ist⟧{value}.",
        "{subject} wohnt ⟦de:in⟧{value}.",
        "{subject} lebt ⟦de:in⟧{value}.",
        "Wo wohnt {subject}? ⟦de:in⟧{value}.",
        "Frage: Wo hat {subject} ⟦seinen|ihren⟧ Wohnsitz? Antwort: ⟦de:in⟧{value}.",
        "{subject} ist eine Person, die ⟦de:in⟧{value} wohnt.",
        "Laut öffentlichen Angaben wohnt {subject} ⟦de:in⟧{value}.",
        "Was ⟦de:akk⟧{subject} betrifft, so wohnt ⟦er|sie⟧ ⟦de:in⟧{value}.",
        "⟦de:in⟧{value} wohnt {subject}.",
        "{subject} hat ⟦seinen|ihren⟧ Wohnsitz ⟦de:in⟧{value}.",
        "Es ist bekannt, dass {subject} ⟦de:in⟧{value} wohnt.",
    ),
    "P800": (
        "Ein bedeutendes Werk von ⟦de:dat⟧{subject} ist {value}.",
        "Zu den bedeutenden Werken von ⟦de:dat⟧{subject} gehört {value}.",
        "{value} ist ein bedeutendes Werk von ⟦de:dat⟧{subject}.",
        "Was ist ein bedeutendes Werk von ⟦de:dat⟧{subject}? {value}.",
        "Frage: Welches bedeutende Werk stammt von ⟦de:dat⟧{subject}? Antwort: {value}.",
        "{subject} ist eine Person, zu deren bedeutenden Werken {value} gehört.",
        "Laut öffentlichen Angaben ist {value} ein bedeutendes Werk von ⟦de:dat⟧{subject}.",
        "Was ⟦de:akk⟧{subject} betrifft, so ist {value} eines ⟦seiner|ihrer⟧ bedeutenden Werke.",
        "Das bedeutende Werk {value} stammt von ⟦de:dat⟧{subject}.",
        "Ein Hauptwerk von ⟦de:dat⟧{subject} ist {value}.",
        "Es ist bekannt, dass {value} ein bedeutendes Werk von ⟦de:dat⟧{subject} ist.",
    ),
}

CONTEXT_FORMS: dict[str, str] = {
    "P106": "⟦Er|Sie⟧ ist von Beruf {value}.",
    "P27": "⟦Er|Sie⟧ ist ⟦Staatsbürger|Staatsbürgerin⟧ ⟦de:gen⟧{value}.",
    "P19": "⟦Er|Sie⟧ wurde ⟦de:in⟧{value} geboren.",
    "P20": "⟦Er|Sie⟧ starb ⟦de:in⟧{value}.",
    "P569": "⟦Er|Sie⟧ wurde ⟦de:am⟧{value} geboren.",
    "P570": "⟦Er|Sie⟧ starb ⟦de:am⟧{value}.",
    "P413": "⟦Seine|Ihre⟧ Position ist {value}.",
    "P509": "⟦Seine|Ihre⟧ Todesursache war {value}.",
    "P1412": "⟦Er|Sie⟧ spricht, schreibt oder gebärdet die Sprache {value}.",
    "P103": "⟦Seine|Ihre⟧ Muttersprache ist {value}.",
    "P108": "⟦Sein|Ihr⟧ Arbeitgeber ⟦de:ist⟧{value}.",
    "P39": "⟦Er|Sie⟧ hat die Position {value} inne.",
    "P69": "⟦Er|Sie⟧ wurde ⟦de:an⟧{value} ausgebildet.",
    "P3373": "⟦Er|Sie⟧ und {value} sind Geschwister.",
    "P26": "⟦Er|Sie⟧ ist mit {value} verheiratet.",
    "P101": "⟦Sein|Ihr⟧ Arbeitsgebiet ist {value}.",
    "P463": "⟦Er|Sie⟧ ist Mitglied ⟦de:gen⟧{value}.",
    "P641": "⟦Seine|Ihre⟧ Sportart ist {value}.",
    "P264": "⟦Sein|Ihr⟧ Plattenlabel ist {value}.",
    "P1303": "⟦Sein|Ihr⟧ Instrument ist {value}.",
    "P22": "⟦Sein|Ihr⟧ Vater ist {value}.",
    "P25": "⟦Seine|Ihre⟧ Mutter ist {value}.",
    "P40": "Ein Kind von ⟦ihm|ihr⟧ ist {value}.",
    "P102": "⟦Er|Sie⟧ ist Mitglied ⟦de:gen⟧{value}.",
    "P166": "⟦Er|Sie⟧ hat die Auszeichnung {value} erhalten.",
    "P54": "⟦Er|Sie⟧ spielt ⟦de:t_für⟧{value}.",
    "P119": "⟦Er|Sie⟧ wurde ⟦de:in⟧{value} beigesetzt.",
    "P140": "⟦Seine|Ihre⟧ Religion ⟦de:ist⟧{value}.",
    "P136": "⟦Sein|Ihr⟧ Genre ist {value}.",
    "P937": "⟦Sein|Ihr⟧ Arbeitsort ⟦de:ist⟧{value}.",
    "P551": "⟦Sein|Ihr⟧ Wohnort ⟦de:ist⟧{value}.",
    "P800": "Ein bedeutendes Werk von ⟦ihm|ihr⟧ ist {value}.",
}

PACK = register(LanguagePack(
    code="de",
    name="German",
    native_name="Deutsch",
    templates=TEMPLATES,
    context_forms=CONTEXT_FORMS,
    generic_subject=generic_subject,
    inflect=inflect,
    value_form=value_form,
    format_date=format_date,
))

__all__ = ["CONTEXT_FORMS", "PACK", "TEMPLATES", "feminine", "format_date", "generic_subject", "inflect",
           "value_form"]
