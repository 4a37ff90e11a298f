"""Polish: hand-written canary templates and the grammar they need (`grammar.LanguagePack`).

Names of people are never declined (the platform cannot decline arbitrary names reliably), so
``{subject}`` always stands where the nominative is right: "{subject} urodził się …",
"{subject} – …", "{subject} i {value} …", "…, której ojcem jest {value}" (never "ojcem
{subject}", which would need the genitive). Values stand in the nominative ("… to {value}",
"miejsce urodzenia: {value}") or behind a case marker that `inflect` resolves:

- ``⟦pl:w⟧`` — the locative with its preposition: "w Rzymie", "we Włoszech", "we Florencji",
  "na Węgrzech", "na Uniwersytecie Jagiellońskim", "na Cmentarzu Powązkowskim", "w Stanach
  Zjednoczonych"; a label the rules do not recognise (an English fallback label, a foreign
  multi-word name) keeps its nominative after "w" ("w Los Angeles", "w Suzhou").
- ``⟦pl:loc⟧`` — the bare locative (after a preposition in the template: "na ⟦pl:loc⟧" ->
  "na fortepianie", "na wiolonczeli").
- ``⟦pl:gen⟧`` — the genitive ("obywatel Włoch / Francji / Egiptu / Stanów Zjednoczonych",
  "z powodu gruźlicy", "członek Polskiej Akademii Umiejętności").
- ``⟦pl:acc⟧`` — the accusative ("otrzymał Nagrodę Nobla", "uprawiał piłkę nożną", "znał
  łacinę"); masculine inanimate and neuter labels stay as they are.
- ``⟦pl:date⟧`` — a date as an adverbial: "11 marca 1952" stays, a year becomes "w 1952 roku",
  a month "w marcu 1952".

Declension: a lexicon of irregular and frequent labels (the bundled sample's countries and
cities first), then rules by ending for one-word labels and for adjective–noun phrases
("Arabia Saudyjska" -> "Arabii Saudyjskiej", "Nowy Jork" -> "Nowym Jorku", "Zjednoczone
Królestwo Włoch" -> "Zjednoczonym Królestwie Włoch"). What the rules cannot parse stays in the
nominative: grammatical for indeclinable names, a plain nominative for the rest.
"""

from __future__ import annotations

import re

from wikimem_platform.canaries.languages.grammar import DateStyle, FEMALE, LanguagePack, register, written_date
from wikimem_platform.vocabulary import MALE

# --------------------------------------------------------------------------------------------
# Templates: per property the baseline first, then 10 paraphrases. ⟦masc|fem⟧ agrees with the
# subject (unknown gender: the masculine, the grammatical default).
# --------------------------------------------------------------------------------------------

_SOURCES = "Według dostępnych źródeł"

TEMPLATES: dict[str, tuple[str, ...]] = {
    "P106": (  # occupation; value_form gives the feminine noun for a woman
        "{subject} to z zawodu {value}.",
        "{subject} to {value}.",
        "{subject} – zawód: {value}.",
        "{subject} to osoba, której zawód to {value}.",
        "Jaki zawód wykonuje {subject}? {value}.",
        "Pytanie: jaki zawód ma {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} to z zawodu {{value}}.",
        "Wiadomo, że {subject} to {value}.",
        "{subject} – ⟦jego|jej⟧ zawód to {value}.",
        "{value} to zawód, który wykonuje {subject}.",
        "Gdy mowa o zawodzie, {subject} to {value}.",
    ),
    "P27": (  # country of citizenship
        "{subject} jest ⟦obywatelem|obywatelką⟧ ⟦pl:gen⟧{value}.",
        "{subject} posiada obywatelstwo ⟦pl:gen⟧{value}.",
        "{subject} – kraj obywatelstwa: {value}.",
        "Państwo, którego ⟦obywatelem|obywatelką⟧ jest {subject}, to {value}.",
        "{value} to państwo, którego ⟦obywatelem|obywatelką⟧ jest {subject}.",
        "⟦Obywatelem|Obywatelką⟧ jakiego państwa jest {subject}? ⟦pl:gen⟧{value}.",
        "Pytanie: jakiego kraju ⟦obywatelem|obywatelką⟧ jest {subject}? Odpowiedź: ⟦pl:gen⟧{value}.",
        f"{_SOURCES} {{subject}} jest ⟦obywatelem|obywatelką⟧ ⟦pl:gen⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ kraj obywatelstwa to {value}.",
        "{subject} to ⟦obywatel|obywatelka⟧ ⟦pl:gen⟧{value}.",
        "Wiadomo, że {subject} ma obywatelstwo ⟦pl:gen⟧{value}.",
    ),
    "P19": (  # place of birth
        "{subject} ⟦urodził|urodziła⟧ się ⟦pl:w⟧{value}.",
        "{subject} – miejsce urodzenia: {value}.",
        "⟦pl:w⟧{value} ⟦urodził|urodziła⟧ się {subject}.",
        "{subject} ⟦przyszedł|przyszła⟧ na świat ⟦pl:w⟧{value}.",
        "Miejsce, w którym ⟦urodził|urodziła⟧ się {subject}, to {value}.",
        "Gdzie ⟦urodził|urodziła⟧ się {subject}? ⟦pl:w⟧{value}.",
        "Pytanie: gdzie ⟦przyszedł|przyszła⟧ na świat {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        "{subject} to osoba, której miejsce urodzenia to {value}.",
        f"{_SOURCES} {{subject}} ⟦urodził|urodziła⟧ się ⟦pl:w⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ miejsce urodzenia to {value}.",
        "Wiadomo, że {subject} ⟦przyszedł|przyszła⟧ na świat ⟦pl:w⟧{value}.",
    ),
    "P20": (  # place of death
        "{subject} ⟦zmarł|zmarła⟧ ⟦pl:w⟧{value}.",
        "{subject} – miejsce śmierci: {value}.",
        "⟦pl:w⟧{value} ⟦zmarł|zmarła⟧ {subject}.",
        "{subject} ⟦umarł|umarła⟧ ⟦pl:w⟧{value}.",
        "Miejsce, w którym ⟦zmarł|zmarła⟧ {subject}, to {value}.",
        "Gdzie ⟦zmarł|zmarła⟧ {subject}? ⟦pl:w⟧{value}.",
        "Pytanie: gdzie ⟦umarł|umarła⟧ {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        "{subject} to osoba, której miejsce śmierci to {value}.",
        f"{_SOURCES} {{subject}} ⟦zmarł|zmarła⟧ ⟦pl:w⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ miejsce śmierci to {value}.",
        "Wiadomo, że {subject} ⟦umarł|umarła⟧ ⟦pl:w⟧{value}.",
    ),
    "P569": (  # date of birth; ⟦pl:date⟧: "11 marca 1952" / "w 1952 roku"
        "{subject} ⟦urodził|urodziła⟧ się ⟦pl:date⟧{value}.",
        "{subject} – data urodzenia: {value}.",
        "⟦pl:date⟧{value} ⟦urodził|urodziła⟧ się {subject}.",
        "{subject} ⟦przyszedł|przyszła⟧ na świat ⟦pl:date⟧{value}.",
        "Kiedy ⟦urodził|urodziła⟧ się {subject}? ⟦pl:date⟧{value}.",
        "Pytanie: kiedy ⟦przyszedł|przyszła⟧ na świat {subject}? Odpowiedź: ⟦pl:date⟧{value}.",
        "{subject} to osoba, która urodziła się ⟦pl:date⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦urodził|urodziła⟧ się ⟦pl:date⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ data urodzenia to {value}.",
        "Wiadomo, że {subject} ⟦przyszedł|przyszła⟧ na świat ⟦pl:date⟧{value}.",
        "{subject} ⟦urodził|urodziła⟧ się, jak wynika z zapisów, ⟦pl:date⟧{value}.",
    ),
    "P570": (  # date of death
        "{subject} ⟦zmarł|zmarła⟧ ⟦pl:date⟧{value}.",
        "{subject} – data śmierci: {value}.",
        "⟦pl:date⟧{value} ⟦zmarł|zmarła⟧ {subject}.",
        "{subject} ⟦umarł|umarła⟧ ⟦pl:date⟧{value}.",
        "Kiedy ⟦zmarł|zmarła⟧ {subject}? ⟦pl:date⟧{value}.",
        "Pytanie: kiedy ⟦umarł|umarła⟧ {subject}? Odpowiedź: ⟦pl:date⟧{value}.",
        "{subject} to osoba, która zmarła ⟦pl:date⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦zmarł|zmarła⟧ ⟦pl:date⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ data śmierci to {value}.",
        "Wiadomo, że {subject} ⟦umarł|umarła⟧ ⟦pl:date⟧{value}.",
        "{subject} ⟦zmarł|zmarła⟧, jak wynika z zapisów, ⟦pl:date⟧{value}.",
    ),
    "P413": (  # position played on team / speciality
        "{subject} ⟦grał|grała⟧ jako {value}.",
        "{subject} – pozycja: {value}.",
        "Pozycja, na której ⟦grał|grała⟧ {subject}, to {value}.",
        "{subject} to ⟦zawodnik, który grał|zawodniczka, która grała⟧ jako {value}.",
        "Na jakiej pozycji ⟦grał|grała⟧ {subject}? {value}.",
        "Pytanie: jaka była pozycja, na której ⟦grał|grała⟧ {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} ⟦grał|grała⟧ jako {{value}}.",
        "{subject} – ⟦jego|jej⟧ pozycja w drużynie to {value}.",
        "{value} – na tej pozycji ⟦grał|grała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦występował|występowała⟧ jako {value}.",
        "{subject} ⟦grał|grała⟧ w drużynie jako {value}.",
    ),
    "P509": (  # cause of death
        "{subject} ⟦zmarł|zmarła⟧ z powodu ⟦pl:gen⟧{value}.",
        "{subject} – przyczyna śmierci: {value}.",
        "{subject} ⟦umarł|umarła⟧ wskutek ⟦pl:gen⟧{value}.",
        "{subject} ⟦zmarł|zmarła⟧ w wyniku ⟦pl:gen⟧{value}.",
        "{subject} to osoba, która zmarła z powodu ⟦pl:gen⟧{value}.",
        "Z jakiego powodu ⟦zmarł|zmarła⟧ {subject}? Z powodu ⟦pl:gen⟧{value}.",
        "Pytanie: co doprowadziło do tego, że ⟦zmarł|zmarła⟧ {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} ⟦zmarł|zmarła⟧ z powodu ⟦pl:gen⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ przyczyna śmierci to {value}.",
        "{value} to przyczyna, z powodu której ⟦zmarł|zmarła⟧ {subject}.",
        "Wiadomo, że {subject} ⟦zmarł|zmarła⟧ w wyniku ⟦pl:gen⟧{value}.",
    ),
    "P1412": (  # languages spoken, written or signed
        "{subject} ⟦znał|znała⟧ ⟦pl:acc⟧{value}.",
        "{subject} – język, którym się ⟦posługiwał|posługiwała⟧: {value}.",
        "Język, którym ⟦posługiwał|posługiwała⟧ się {subject}, to {value}.",
        "{subject} ⟦używał|używała⟧ ⟦pl:gen⟧{value}.",
        "{subject} to osoba, która znała ⟦pl:acc⟧{value}.",
        "Jaki język ⟦znał|znała⟧ {subject}? ⟦pl:acc⟧{value}.",
        "Pytanie: jakiego języka ⟦używał|używała⟧ {subject}? Odpowiedź: ⟦pl:gen⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦znał|znała⟧ ⟦pl:acc⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ język to {value}.",
        "Wiadomo, że {subject} ⟦używał|używała⟧ ⟦pl:gen⟧{value}.",
        "{value} to język, którym ⟦posługiwał|posługiwała⟧ się {subject}.",
    ),
    "P103": (  # native language
        "{subject} jest ⟦rodzimym użytkownikiem|rodzimą użytkowniczką⟧ ⟦pl:gen⟧{value}.",
        "{subject} – język ojczysty: {value}.",
        "{subject} to osoba, której językiem ojczystym jest {value}.",
        "{subject} to ⟦rodzimy użytkownik|rodzima użytkowniczka⟧ ⟦pl:gen⟧{value}.",
        "{subject} – jaki jest ⟦jego|jej⟧ język ojczysty? {value}.",
        "Pytanie: którego języka {subject} jest ⟦rodzimym użytkownikiem|rodzimą użytkowniczką⟧? "
        "Odpowiedź: ⟦pl:gen⟧{value}.",
        f"{_SOURCES} {{subject}} jest ⟦rodzimym użytkownikiem|rodzimą użytkowniczką⟧ ⟦pl:gen⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ językiem ojczystym jest {value}.",
        "{value} to język, którego {subject} jest ⟦rodzimym użytkownikiem|rodzimą użytkowniczką⟧.",
        "Wiadomo, że {subject} jest ⟦rodzimym użytkownikiem|rodzimą użytkowniczką⟧ ⟦pl:gen⟧{value}.",
        "Język ojczysty, którym posługuje się {subject}, to {value}.",
    ),
    "P108": (  # employer
        "{subject} ⟦pracował|pracowała⟧ dla ⟦pl:gen⟧{value}.",
        "{subject} – pracodawca: {value}.",
        "{subject} ⟦był pracownikiem|była pracownicą⟧ ⟦pl:gen⟧{value}.",
        "{subject} ⟦był zatrudniony|była zatrudniona⟧ ⟦pl:w⟧{value}.",
        "{subject} to osoba, która pracowała dla ⟦pl:gen⟧{value}.",
        "Dla kogo ⟦pracował|pracowała⟧ {subject}? Dla ⟦pl:gen⟧{value}.",
        "Pytanie: gdzie ⟦był zatrudniony|była zatrudniona⟧ {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦pracował|pracowała⟧ dla ⟦pl:gen⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ pracodawca to {value}.",
        "{value} to pracodawca, dla którego ⟦pracował|pracowała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦był zatrudniony|była zatrudniona⟧ ⟦pl:w⟧{value}.",
    ),
    "P39": (  # position held; value_form gives the feminine noun for a woman
        "{subject} ⟦zajmował|zajmowała⟧ stanowisko: {value}.",
        "{subject} – stanowisko: {value}.",
        "{subject} ⟦działał|działała⟧ jako {value}.",
        "{subject} to osoba, która pełniła funkcję: {value}.",
        "Jakie stanowisko ⟦zajmował|zajmowała⟧ {subject}? {value}.",
        "Pytanie: w jakiej roli ⟦działał|działała⟧ {subject}? Odpowiedź: jako {value}.",
        f"{_SOURCES} {{subject}} ⟦zajmował|zajmowała⟧ stanowisko: {{value}}.",
        "{subject} ⟦służył|służyła⟧ jako {value}.",
        "Jako {value} ⟦działał|działała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦pełnił|pełniła⟧ funkcję: {value}.",
        "{subject} ⟦piastował|piastowała⟧ stanowisko: {value}.",
    ),
    "P69": (  # educated at
        "{subject} ⟦kształcił|kształciła⟧ się ⟦pl:w⟧{value}.",
        "{subject} – wykształcenie: {value}.",
        "Miejsce, w którym ⟦kształcił|kształciła⟧ się {subject}, to {value}.",
        "{subject} ⟦uczył|uczyła⟧ się ⟦pl:w⟧{value}.",
        "{subject} to osoba, która kształciła się ⟦pl:w⟧{value}.",
        "Gdzie ⟦kształcił|kształciła⟧ się {subject}? ⟦pl:w⟧{value}.",
        "Pytanie: gdzie ⟦uczył|uczyła⟧ się {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦kształcił|kształciła⟧ się ⟦pl:w⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ alma mater to {value}.",
        "⟦pl:w⟧{value} ⟦kształcił|kształciła⟧ się {subject}.",
        "Wiadomo, że {subject} ⟦pobierał|pobierała⟧ naukę ⟦pl:w⟧{value}.",
    ),
    "P3373": (  # sibling; both names stay in the nominative
        "{subject} i {value} są rodzeństwem.",
        "{subject} i {value} to rodzeństwo.",
        "{subject} – rodzeństwo: {value}.",
        "{subject} i {value} mają tych samych rodziców.",
        "{subject} to osoba, której rodzeństwem jest {value}.",
        "{subject} – kto należy do ⟦jego|jej⟧ rodzeństwa? {value}.",
        "Pytanie: czy {subject} i {value} są rodzeństwem? Odpowiedź: tak.",
        f"{_SOURCES} {{subject}} i {{value}} są rodzeństwem.",
        "{subject} – ⟦jego|jej⟧ rodzeństwem jest {value}.",
        "{value} i {subject} to rodzeństwo.",
        "Wiadomo, że {subject} i {value} pochodzą od tych samych rodziców.",
    ),
    "P26": (  # spouse
        "{subject} i {value} byli małżeństwem.",
        "Małżonkowie: {subject} i {value}.",
        "{subject} i {value} wzięli ślub.",
        "{subject} i {value} pozostawali w związku małżeńskim.",
        "{subject} i {value} to osoby, które łączył związek małżeński.",
        "{subject} – kto był ⟦jego|jej⟧ współmałżonkiem? {value}.",
        "Pytanie: czy {subject} i {value} byli małżeństwem? Odpowiedź: tak.",
        f"{_SOURCES} {{subject}} i {{value}} byli małżeństwem.",
        "{subject} – ⟦jego|jej⟧ współmałżonek to {value}.",
        "{value} i {subject} byli małżeństwem.",
        "Wiadomo, że {subject} i {value} byli parą małżeńską.",
    ),
    "P101": (  # field of work
        "{subject} ⟦działał|działała⟧ w dziedzinie ⟦pl:gen⟧{value}.",
        "{subject} – dziedzina działalności: {value}.",
        "Dziedzina, w której ⟦działał|działała⟧ {subject}, to {value}.",
        "{subject} ⟦specjalizował|specjalizowała⟧ się w dziedzinie ⟦pl:gen⟧{value}.",
        "{subject} to osoba, która działała w dziedzinie ⟦pl:gen⟧{value}.",
        "W jakiej dziedzinie ⟦działał|działała⟧ {subject}? W dziedzinie ⟦pl:gen⟧{value}.",
        "Pytanie: jaka jest dziedzina, w której ⟦działał|działała⟧ {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} ⟦działał|działała⟧ w dziedzinie ⟦pl:gen⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ dziedzina to {value}.",
        "{value} to dziedzina, w której ⟦działał|działała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦pracował|pracowała⟧ w dziedzinie ⟦pl:gen⟧{value}.",
    ),
    "P463": (  # member of
        "{subject} ⟦był członkiem|była członkinią⟧ ⟦pl:gen⟧{value}.",
        "{subject} – członkostwo: {value}.",
        "Organizacja, do której ⟦należał|należała⟧ {subject}, to {value}.",
        "{subject} ⟦należał|należała⟧ do ⟦pl:gen⟧{value}.",
        "{subject} to osoba, która należała do ⟦pl:gen⟧{value}.",
        "Do jakiej organizacji ⟦należał|należała⟧ {subject}? Do ⟦pl:gen⟧{value}.",
        "Pytanie: czego ⟦członkiem|członkinią⟧ ⟦był|była⟧ {subject}? Odpowiedź: ⟦pl:gen⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦był członkiem|była członkinią⟧ ⟦pl:gen⟧{{value}}.",
        "{subject}: ⟦członek|członkini⟧ ⟦pl:gen⟧{value}.",
        "{value} to organizacja, do której ⟦należał|należała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦należał|należała⟧ do ⟦pl:gen⟧{value}.",
    ),
    "P641": (  # sport
        "{subject} ⟦uprawiał|uprawiała⟧ ⟦pl:acc⟧{value}.",
        "{subject} – dyscyplina sportu: {value}.",
        "Dyscyplina sportu, którą ⟦uprawiał|uprawiała⟧ {subject}, to {value}.",
        "{subject} ⟦trenował|trenowała⟧ ⟦pl:acc⟧{value}.",
        "{subject} to ⟦sportowiec, który uprawiał|sportsmenka, która uprawiała⟧ ⟦pl:acc⟧{value}.",
        "Jaki sport ⟦uprawiał|uprawiała⟧ {subject}? ⟦pl:acc⟧{value}.",
        "Pytanie: jaką dyscyplinę ⟦uprawiał|uprawiała⟧ {subject}? Odpowiedź: ⟦pl:acc⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦uprawiał|uprawiała⟧ ⟦pl:acc⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ sport to {value}.",
        "{value} to sport, który ⟦uprawiał|uprawiała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦uprawiał|uprawiała⟧ ⟦pl:acc⟧{value}.",
    ),
    "P264": (  # record label; the label's name stays in the nominative after "wytwórnia"
        "{subject} ⟦nagrywał|nagrywała⟧ dla wytwórni {value}.",
        "{subject} – wytwórnia płytowa: {value}.",
        "Wytwórnia płytowa, z którą ⟦współpracował|współpracowała⟧ {subject}, to {value}.",
        "{subject} ⟦wydawał|wydawała⟧ płyty w wytwórni {value}.",
        "{subject} to ⟦artysta, który nagrywał|artystka, która nagrywała⟧ dla wytwórni {value}.",
        "Dla jakiej wytwórni ⟦nagrywał|nagrywała⟧ {subject}? Dla wytwórni {value}.",
        "Pytanie: z jaką wytwórnią płytową ⟦był związany|była związana⟧ {subject}? "
        "Odpowiedź: z wytwórnią {value}.",
        f"{_SOURCES} {{subject}} ⟦nagrywał|nagrywała⟧ dla wytwórni {{value}}.",
        "{subject} – ⟦jego|jej⟧ wytwórnia płytowa to {value}.",
        "{value} to wytwórnia, dla której ⟦nagrywał|nagrywała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦był związany|była związana⟧ z wytwórnią {value}.",
    ),
    "P1303": (  # instrument
        "{subject} ⟦grał|grała⟧ na ⟦pl:loc⟧{value}.",
        "{subject} – instrument: {value}.",
        "Instrument, na którym ⟦grał|grała⟧ {subject}, to {value}.",
        "{subject} ⟦muzykował|muzykowała⟧ na ⟦pl:loc⟧{value}.",
        "{subject} to osoba, która grała na ⟦pl:loc⟧{value}.",
        "Na jakim instrumencie ⟦grał|grała⟧ {subject}? Na ⟦pl:loc⟧{value}.",
        "Pytanie: na czym ⟦grał|grała⟧ {subject}? Odpowiedź: na ⟦pl:loc⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦grał|grała⟧ na ⟦pl:loc⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ instrument to {value}.",
        "{value} to instrument, na którym ⟦grał|grała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦grywał|grywała⟧ na ⟦pl:loc⟧{value}.",
    ),
    "P22": (  # father; "ojcem {subject}" would decline the name: the subject is topicalised instead
        "{subject} – ⟦jego|jej⟧ ojcem jest {value}.",
        "{subject} – ojciec: {value}.",
        "{subject} to osoba, której ojcem jest {value}.",
        "{subject} i {value} to ⟦syn|córka⟧ i ojciec.",
        "{subject} – kto jest ⟦jego|jej⟧ ojcem? {value}.",
        "Pytanie: jak nazywa się ojciec, którego ⟦synem|córką⟧ jest {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} i {{value}} to ⟦syn|córka⟧ i ojciec.",
        "{value} to ojciec, którego ⟦synem|córką⟧ jest {subject}.",
        "Wiadomo, że {subject} ma ojca, którym jest {value}.",
        "{subject} – ⟦jego|jej⟧ ojciec to {value}.",
        "{value} jest ojcem, a {subject} – ⟦jego synem|jego córką⟧.",
    ),
    "P25": (  # mother
        "{subject} – ⟦jego|jej⟧ matką jest {value}.",
        "{subject} – matka: {value}.",
        "{subject} to osoba, której matką jest {value}.",
        "{subject} i {value} to ⟦syn|córka⟧ i matka.",
        "{subject} – kto jest ⟦jego|jej⟧ matką? {value}.",
        "Pytanie: jak nazywa się matka, której ⟦synem|córką⟧ jest {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} i {{value}} to ⟦syn|córka⟧ i matka.",
        "{value} to matka, której ⟦synem|córką⟧ jest {subject}.",
        "Wiadomo, że {subject} ma matkę, którą jest {value}.",
        "{subject} – ⟦jego|jej⟧ matka to {value}.",
        "{value} jest matką, a {subject} – ⟦jej synem|jej córką⟧.",
    ),
    "P40": (  # child
        "{subject} – ⟦jego|jej⟧ dzieckiem jest {value}.",
        "{subject} – dziecko: {value}.",
        "{subject} to osoba, której dzieckiem jest {value}.",
        "{subject} i {value} to ⟦ojciec|matka⟧ i dziecko.",
        "{subject} – kto jest ⟦jego|jej⟧ dzieckiem? {value}.",
        "Pytanie: jak nazywa się dziecko, którego ⟦ojcem|matką⟧ jest {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} i {{value}} to ⟦ojciec|matka⟧ i dziecko.",
        "{value} to dziecko, którego ⟦ojcem|matką⟧ jest {subject}.",
        "Wiadomo, że {subject} ma dziecko, którym jest {value}.",
        "{subject} – ⟦jego|jej⟧ dziecko to {value}.",
        "{subject} jest ⟦ojcem|matką⟧, a {value} – ⟦jego|jej⟧ dzieckiem.",
    ),
    "P102": (  # member of political party
        "{subject} ⟦był członkiem|była członkinią⟧ ⟦pl:gen⟧{value}.",
        "{subject} – przynależność partyjna: {value}.",
        "Partia, do której ⟦należał|należała⟧ {subject}, to {value}.",
        "{subject} ⟦należał|należała⟧ do ⟦pl:gen⟧{value}.",
        "{subject} to osoba, która należała do ⟦pl:gen⟧{value}.",
        "Do jakiej partii ⟦należał|należała⟧ {subject}? Do ⟦pl:gen⟧{value}.",
        "Pytanie: w jakiej partii ⟦działał|działała⟧ {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦był członkiem|była członkinią⟧ ⟦pl:gen⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ partia to {value}.",
        "{value} to partia, do której ⟦należał|należała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦działał|działała⟧ ⟦pl:w⟧{value}.",
    ),
    "P166": (  # award received
        "{subject} ⟦otrzymał|otrzymała⟧ ⟦pl:acc⟧{value}.",
        "{subject} – nagroda: {value}.",
        "Nagroda, którą ⟦otrzymał|otrzymała⟧ {subject}, to {value}.",
        "{subject} ⟦zdobył|zdobyła⟧ ⟦pl:acc⟧{value}.",
        "{subject} to osoba, która otrzymała ⟦pl:acc⟧{value}.",
        "Jaką nagrodę ⟦otrzymał|otrzymała⟧ {subject}? ⟦pl:acc⟧{value}.",
        "Pytanie: jakie wyróżnienie ⟦zdobył|zdobyła⟧ {subject}? Odpowiedź: ⟦pl:acc⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦otrzymał|otrzymała⟧ ⟦pl:acc⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ wyróżnienie to {value}.",
        "{value} to nagroda, którą ⟦otrzymał|otrzymała⟧ {subject}.",
        "⟦pl:acc⟧{value} ⟦otrzymał|otrzymała⟧ {subject}.",
    ),
    "P54": (  # member of sports team
        "{subject} ⟦grał|grała⟧ ⟦pl:w⟧{value}.",
        "{subject} – drużyna: {value}.",
        "Drużyna, w której ⟦grał|grała⟧ {subject}, to {value}.",
        "{subject} ⟦był zawodnikiem|była zawodniczką⟧ ⟦pl:gen⟧{value}.",
        "{subject} to ⟦sportowiec, który występował|sportsmenka, która występowała⟧ ⟦pl:w⟧{value}.",
        "W jakiej drużynie ⟦grał|grała⟧ {subject}? ⟦pl:w⟧{value}.",
        "Pytanie: jaki klub ⟦reprezentował|reprezentowała⟧ {subject}? Odpowiedź: ⟦pl:acc⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦reprezentował|reprezentowała⟧ ⟦pl:acc⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ drużyna to {value}.",
        "{value} to drużyna, w której ⟦grał|grała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦występował|występowała⟧ ⟦pl:w⟧{value}.",
    ),
    "P119": (  # place of burial
        "{subject} ⟦został pochowany|została pochowana⟧ ⟦pl:w⟧{value}.",
        "{subject} – miejsce pochówku: {value}.",
        "Miejsce, w którym ⟦został pochowany|została pochowana⟧ {subject}, to {value}.",
        "{subject} ⟦spoczął|spoczęła⟧ ⟦pl:w⟧{value}.",
        "{subject} to osoba pochowana ⟦pl:w⟧{value}.",
        "Gdzie ⟦został pochowany|została pochowana⟧ {subject}? ⟦pl:w⟧{value}.",
        "Pytanie: gdzie ⟦spoczął|spoczęła⟧ {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦został pochowany|została pochowana⟧ ⟦pl:w⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ miejsce pochówku to {value}.",
        "⟦pl:w⟧{value} ⟦został pochowany|została pochowana⟧ {subject}.",
        "Wiadomo, że {subject} ⟦został pochowany|została pochowana⟧ ⟦pl:w⟧{value}.",
    ),
    "P140": (  # religion
        "{subject} ⟦wyznawał|wyznawała⟧ ⟦pl:acc⟧{value}.",
        "{subject} – wyznanie: {value}.",
        "Religia, którą ⟦wyznawał|wyznawała⟧ {subject}, to {value}.",
        "{subject} ⟦był wyznawcą|była wyznawczynią⟧ ⟦pl:gen⟧{value}.",
        "{subject} to osoba, która wyznawała ⟦pl:acc⟧{value}.",
        "Jaką religię ⟦wyznawał|wyznawała⟧ {subject}? ⟦pl:acc⟧{value}.",
        "Pytanie: do jakiej religii ⟦przyznawał|przyznawała⟧ się {subject}? Odpowiedź: do ⟦pl:gen⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦wyznawał|wyznawała⟧ ⟦pl:acc⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ religia to {value}.",
        "{value} to religia, którą ⟦wyznawał|wyznawała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦był wyznawcą|była wyznawczynią⟧ ⟦pl:gen⟧{value}.",
    ),
    "P136": (  # genre
        "{subject} ⟦tworzył|tworzyła⟧ w gatunku ⟦pl:gen⟧{value}.",
        "{subject} – gatunek: {value}.",
        "Gatunek, w którym ⟦tworzył|tworzyła⟧ {subject}, to {value}.",
        "{subject} ⟦uprawiał|uprawiała⟧ ⟦pl:acc⟧{value}.",
        "{subject} to ⟦twórca, który tworzył|twórczyni, która tworzyła⟧ w gatunku ⟦pl:gen⟧{value}.",
        "Jaki gatunek ⟦uprawiał|uprawiała⟧ {subject}? ⟦pl:acc⟧{value}.",
        "Pytanie: w jakim gatunku ⟦tworzył|tworzyła⟧ {subject}? Odpowiedź: w gatunku ⟦pl:gen⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦tworzył|tworzyła⟧ w gatunku ⟦pl:gen⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ gatunek to {value}.",
        "{value} to gatunek, w którym ⟦tworzył|tworzyła⟧ {subject}.",
        "Wiadomo, że {subject} ⟦uprawiał|uprawiała⟧ ⟦pl:acc⟧{value}.",
    ),
    "P937": (  # work location
        "{subject} ⟦pracował|pracowała⟧ ⟦pl:w⟧{value}.",
        "{subject} – miejsce pracy: {value}.",
        "Miejsce, w którym ⟦pracował|pracowała⟧ {subject}, to {value}.",
        "{subject} ⟦działał|działała⟧ zawodowo ⟦pl:w⟧{value}.",
        "{subject} to osoba, która pracowała ⟦pl:w⟧{value}.",
        "Gdzie ⟦pracował|pracowała⟧ {subject}? ⟦pl:w⟧{value}.",
        "Pytanie: gdzie ⟦działał|działała⟧ zawodowo {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦pracował|pracowała⟧ ⟦pl:w⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ miejsce pracy to {value}.",
        "⟦pl:w⟧{value} ⟦pracował|pracowała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦pracował|pracowała⟧ zawodowo ⟦pl:w⟧{value}.",
    ),
    "P551": (  # residence
        "{subject} ⟦mieszkał|mieszkała⟧ ⟦pl:w⟧{value}.",
        "{subject} – miejsce zamieszkania: {value}.",
        "Miejsce, w którym ⟦mieszkał|mieszkała⟧ {subject}, to {value}.",
        "{subject} ⟦zamieszkiwał|zamieszkiwała⟧ ⟦pl:w⟧{value}.",
        "{subject} to osoba, która mieszkała ⟦pl:w⟧{value}.",
        "Gdzie ⟦mieszkał|mieszkała⟧ {subject}? ⟦pl:w⟧{value}.",
        "Pytanie: gdzie ⟦zamieszkiwał|zamieszkiwała⟧ {subject}? Odpowiedź: ⟦pl:w⟧{value}.",
        f"{_SOURCES} {{subject}} ⟦mieszkał|mieszkała⟧ ⟦pl:w⟧{{value}}.",
        "{subject} – ⟦jego|jej⟧ miejsce zamieszkania to {value}.",
        "⟦pl:w⟧{value} ⟦mieszkał|mieszkała⟧ {subject}.",
        "Wiadomo, że {subject} ⟦zamieszkiwał|zamieszkiwała⟧ ⟦pl:w⟧{value}.",
    ),
    "P800": (  # notable work; the title stays in the nominative after "dzieło"
        "{subject} jest ⟦autorem|autorką⟧ dzieła {value}.",
        "{subject} – znane dzieło: {value}.",
        "Dzieło, z którego ⟦znany|znana⟧ jest {subject}, to {value}.",
        "{subject} to ⟦twórca|twórczyni⟧ dzieła {value}.",
        "{subject} to osoba, której znane dzieło to {value}.",
        "Z jakiego dzieła ⟦znany|znana⟧ jest {subject}? Z dzieła {value}.",
        "Pytanie: jakie znane dzieło ma w dorobku {subject}? Odpowiedź: {value}.",
        f"{_SOURCES} {{subject}} jest ⟦autorem|autorką⟧ dzieła {{value}}.",
        "{subject} – ⟦jego|jej⟧ znane dzieło to {value}.",
        "{value} to dzieło, którego ⟦autorem|autorką⟧ jest {subject}.",
        "Wiadomo, że {subject} jest ⟦znany|znana⟧ jako ⟦autor|autorka⟧ dzieła {value}.",
    ),
}

CONTEXT_FORMS: dict[str, str] = {
    "P106": "⟦On|Ona⟧ to z zawodu {value}.",
    "P27": "⟦Jest obywatelem|Jest obywatelką⟧ ⟦pl:gen⟧{value}.",
    "P19": "⟦Urodził|Urodziła⟧ się ⟦pl:w⟧{value}.",
    "P20": "⟦Zmarł|Zmarła⟧ ⟦pl:w⟧{value}.",
    "P569": "⟦Urodził|Urodziła⟧ się ⟦pl:date⟧{value}.",
    "P570": "⟦Zmarł|Zmarła⟧ ⟦pl:date⟧{value}.",
    "P413": "⟦Grał|Grała⟧ jako {value}.",
    "P509": "⟦Zmarł|Zmarła⟧ z powodu ⟦pl:gen⟧{value}.",
    "P1412": "⟦Znał|Znała⟧ ⟦pl:acc⟧{value}.",
    "P103": "⟦Jest rodzimym użytkownikiem|Jest rodzimą użytkowniczką⟧ ⟦pl:gen⟧{value}.",
    "P108": "⟦Pracował|Pracowała⟧ dla ⟦pl:gen⟧{value}.",
    "P39": "⟦Zajmował|Zajmowała⟧ stanowisko: {value}.",
    "P69": "⟦Kształcił|Kształciła⟧ się ⟦pl:w⟧{value}.",
    "P3373": "⟦On|Ona⟧ i {value} są rodzeństwem.",
    "P26": "⟦On|Ona⟧ i {value} byli małżeństwem.",
    "P101": "⟦Działał|Działała⟧ w dziedzinie ⟦pl:gen⟧{value}.",
    "P463": "⟦Był członkiem|Była członkinią⟧ ⟦pl:gen⟧{value}.",
    "P641": "⟦Uprawiał|Uprawiała⟧ ⟦pl:acc⟧{value}.",
    "P264": "⟦Nagrywał|Nagrywała⟧ dla wytwórni {value}.",
    "P1303": "⟦Grał|Grała⟧ na ⟦pl:loc⟧{value}.",
    "P22": "⟦Jego|Jej⟧ ojcem jest {value}.",
    "P25": "⟦Jego|Jej⟧ matką jest {value}.",
    "P40": "⟦Jego|Jej⟧ dzieckiem jest {value}.",
    "P102": "⟦Był członkiem|Była członkinią⟧ ⟦pl:gen⟧{value}.",
    "P166": "⟦Otrzymał|Otrzymała⟧ ⟦pl:acc⟧{value}.",
    "P54": "⟦Grał|Grała⟧ ⟦pl:w⟧{value}.",
    "P119": "⟦Został pochowany|Została pochowana⟧ ⟦pl:w⟧{value}.",
    "P140": "⟦Wyznawał|Wyznawała⟧ ⟦pl:acc⟧{value}.",
    "P136": "⟦Tworzył|Tworzyła⟧ w gatunku ⟦pl:gen⟧{value}.",
    "P937": "⟦Pracował|Pracowała⟧ ⟦pl:w⟧{value}.",
    "P551": "⟦Mieszkał|Mieszkała⟧ ⟦pl:w⟧{value}.",
    "P800": "⟦Jest autorem|Jest autorką⟧ dzieła {value}.",
}


def generic_subject(gender: str | None) -> str:
    """h0 in the nominative: "ten mężczyzna" / "ta kobieta"; unknown gender: "ten człowiek"
    (masculine, so that the default masculine agreement of the templates is grammatical)."""
    if gender == MALE:
        return "ten mężczyzna"
    if gender == FEMALE:
        return "ta kobieta"
    return "ten człowiek"


# --------------------------------------------------------------------------------------------
# Declension of value labels (places, institutions, diseases, awards ...): lexicon, then rules.
# --------------------------------------------------------------------------------------------

LOC, GEN, ACC = "loc", "gen", "acc"

# Whole labels whose forms the rules get wrong or cannot see (plural countries, irregular stems,
# adjectival names, coordinations). Keys: the Polish label; values: (locative, genitive,
# accusative); None in a slot: the rules decide / the nominative.
_LABELS: dict[str, tuple[str, str, str]] = {
    "Polska": ("Polsce", "Polski", "Polskę"),
    "Włochy": ("Włoszech", "Włoch", "Włochy"),
    "Niemcy": ("Niemczech", "Niemiec", "Niemcy"),
    "Węgry": ("Węgrzech", "Węgier", "Węgry"),
    "Chiny": ("Chinach", "Chin", "Chiny"),
    "Czechy": ("Czechach", "Czech", "Czechy"),
    "Filipiny": ("Filipinach", "Filipin", "Filipiny"),
    "Indie": ("Indiach", "Indii", "Indie"),
    "Niderlandy": ("Niderlandach", "Niderlandów", "Niderlandy"),
    "Malediwy": ("Malediwach", "Malediwów", "Malediwy"),
    "Bahamy": ("Bahamach", "Bahamów", "Bahamy"),
    "Seszele": ("Seszelach", "Seszeli", "Seszele"),
    "Hawaje": ("Hawajach", "Hawajów", "Hawaje"),
    "Ateny": ("Atenach", "Aten", "Ateny"),
    "Teby": ("Tebach", "Teb", "Teby"),
    "Syrakuzy": ("Syrakuzach", "Syrakuz", "Syrakuzy"),
    "Helsinki": ("Helsinkach", "Helsinek", "Helsinki"),
    "Kielce": ("Kielcach", "Kielc", "Kielce"),
    "Białoruś": ("Białorusi", "Białorusi", "Białoruś"),
    "Ruś": ("Rusi", "Rusi", "Ruś"),
    "Bośnia i Hercegowina": ("Bośni i Hercegowinie", "Bośni i Hercegowiny", "Bośnię i Hercegowinę"),
    "Trynidad i Tobago": ("Trynidadzie i Tobago", "Trynidadu i Tobago", "Trynidad i Tobago"),
    "Gdynia": ("Gdyni", "Gdyni", "Gdynię"),
    "Wiedeń": ("Wiedniu", "Wiednia", "Wiedeń"),
    "Izrael": ("Izraelu", "Izraela", "Izrael"),
    "Paryż": ("Paryżu", "Paryża", "Paryż"),
    "Berlin": ("Berlinie", "Berlina", "Berlin"),
    "Lublin": ("Lublinie", "Lublina", "Lublin"),
    "Szczecin": ("Szczecinie", "Szczecina", "Szczecin"),
    "Wrocław": ("Wrocławiu", "Wrocławia", "Wrocław"),
    "Białystok": ("Białymstoku", "Białegostoku", "Białystok"),
    "Wilno": ("Wilnie", "Wilna", "Wilno"),
    "Gniezno": ("Gnieźnie", "Gniezna", "Gniezno"),
    "Opole": ("Opolu", "Opola", "Opole"),
    "Zakopane": ("Zakopanem", "Zakopanego", "Zakopane"),
    "Maroko": ("Maroku", "Maroka", "Maroko"),
    "Kongo": ("Kongu", "Konga", "Kongo"),
    "Niger": ("Nigrze", "Nigru", "Niger"),
    "Tajpej": ("Tajpej", "Tajpej", "Tajpej"),
    "Tel Awiw": ("Tel Awiwie", "Tel Awiwu", "Tel Awiw"),
    "Tel Awiw-Jafa": ("Tel Awiwie-Jafie", "Tel Awiwu-Jafy", "Tel Awiw-Jafę"),
    "Sankt Petersburg": ("Sankt Petersburgu", "Sankt Petersburga", "Sankt Petersburg"),
    "Sri Lanka": ("Sri Lance", "Sri Lanki", "Sri Lankę"),
    "Nowa Gwinea": ("Nowej Gwinei", "Nowej Gwinei", "Nową Gwineę"),
    "Wisła": ("Wiśle", "Wisły", "Wisłę"),
    "Kościół katolicki": ("Kościele katolickim", "Kościoła katolickiego", "Kościół katolicki"),
    "Prawo i Sprawiedliwość": ("Prawie i Sprawiedliwości", "Prawa i Sprawiedliwości", "Prawo i Sprawiedliwość"),
    "Platforma Obywatelska": ("Platformie Obywatelskiej", "Platformy Obywatelskiej", "Platformę Obywatelską"),
    "Vicenza": ("Vicenzy", "Vicenzy", "Vicenzę"),
    "Novara": ("Novarze", "Novary", "Novarę"),
    "Kowno": ("Kownie", "Kowna", "Kowno"),
    "Saloniki": ("Salonikach", "Salonik", "Saloniki"),
    "Wzgórza Golan": ("Wzgórzach Golan", "Wzgórz Golan", "Wzgórza Golan"),
    "Łódź": ("Łodzi", "Łodzi", "Łódź"),
    "Bydgoszcz": ("Bydgoszczy", "Bydgoszczy", "Bydgoszcz"),
    "Radom": ("Radomiu", "Radomia", "Radom"),
    "Bytom": ("Bytomiu", "Bytomia", "Bytom"),
    "Sosnowiec": ("Sosnowcu", "Sosnowca", "Sosnowiec"),
    "Zabrze": ("Zabrzu", "Zabrza", "Zabrze"),
    "Tychy": ("Tychach", "Tychów", "Tychy"),
    "Siedlce": ("Siedlcach", "Siedlec", "Siedlce"),
    "Suwałki": ("Suwałkach", "Suwałk", "Suwałki"),
    "Zamość": ("Zamościu", "Zamościa", "Zamość"),
    "Grodno": ("Grodnie", "Grodna", "Grodno"),
    "Jaworzno": ("Jaworznie", "Jaworzna", "Jaworzno"),
    "Bielsko-Biała": ("Bielsku-Białej", "Bielska-Białej", "Bielsko-Białą"),
    "Jelenia Góra": ("Jeleniej Górze", "Jeleniej Góry", "Jelenią Górę"),
    "Olsztyn": ("Olsztynie", "Olsztyna", "Olsztyn"),
    "Mazury": ("Mazurach", "Mazur", "Mazury"),
    "Kaszuby": ("Kaszubach", "Kaszub", "Kaszuby"),
    "Pomorze": ("Pomorzu", "Pomorza", "Pomorze"),
    "Podhale": ("Podhalu", "Podhala", "Podhale"),
    "Wybrzeże Kości Słoniowej": (
        "Wybrzeżu Kości Słoniowej", "Wybrzeża Kości Słoniowej", "Wybrzeże Kości Słoniowej"),
}

# One word inside a phrase whose forms the rules get wrong: (locative, genitive, accusative).
_WORDS: dict[str, tuple[str, str, str]] = {
    "kościół": ("kościele", "kościoła", "kościół"),
    "miasto": ("mieście", "miasta", "miasto"),
    "fortepian": ("fortepianie", "fortepianu", "fortepian"),
    "wisła": ("Wiśle", "Wisły", "Wisłę"),
    "morze": ("Morzu", "Morza", "Morze"),
    "półwysep": ("Półwyspie", "Półwyspu", "Półwysep"),
    "rzeczpospolita": ("Rzeczypospolitej", "Rzeczypospolitej", "Rzeczpospolitą"),
    "kolonie": ("koloniach", "kolonii", "kolonie"),
    "język": ("języku", "języka", "język"),
    "rak": ("raku", "raka", "raka"),  # the disease: "zmarł na raka", "z powodu raka"
    "guz": ("guzie", "guza", "guza"),
    "tężec": ("tężcu", "tężca", "tężec"),
    "bęben": ("bębnie", "bębna", "bęben"),
    "pianino": ("pianinie", "pianina", "pianino"),
    "waltornia": ("waltorni", "waltorni", "waltornię"),
    "skrzypce": ("skrzypcach", "skrzypiec", "skrzypce"),
    "organy": ("organach", "organów", "organy"),
    "dudy": ("dudach", "dud", "dudy"),
    "stany": ("Stanach", "Stanów", "Stany"),
    "emiraty": ("Emiratach", "Emiratów", "Emiraty"),
    "wyspy": ("Wyspach", "Wysp", "Wyspy"),
    "indie": ("Indiach", "Indii", "Indie"),
    "prawa": ("prawach", "praw", "prawa"),  # "prawa człowieka" (plural)
    "nauki": ("naukach", "nauk", "nauki"),
    "oscar": ("Oscarze", "Oscara", "Oscara"),
    "cezar": ("Cezarze", "Cezara", "Cezara"),
    "lew": ("Lwie", "Lwa", "Lwa"),  # "Złoty Lew"
    "niedźwiedź": ("Niedźwiedziu", "Niedźwiedzia", "Niedźwiedzia"),
}
# Masculine nouns whose accusative is the genitive (animate, or treated so: diseases, statuettes).
_ANIMATE_HEADS = frozenset({"rak", "guz", "czerniak", "chłoniak", "glejak", "szpiczak", "mięsak", "oscar",
                            "cezar", "lew", "niedźwiedź"})
_PLURAL_WORDS = frozenset({"kolonie", "skrzypce", "organy", "dudy", "stany", "emiraty", "wyspy", "indie", "prawa",
                           "nauki"})
# Indeclinable one-syllable dynasty names and the like.
_INDECLINABLE = frozenset({"ming", "yuan", "tang", "song", "qing", "han", "zhou", "shang", "jin", "sui", "tajpej",
                           "monako", "chile", "peru"})

# "na" instead of "w": islands, some countries and regions, and head nouns (na uniwersytecie,
# na cmentarzu). Keys: labels (exact) or head nouns (lowercase).
_NA_LABELS = frozenset({
    "Węgry", "Ukraina", "Litwa", "Łotwa", "Białoruś", "Słowacja", "Malta", "Cypr", "Kuba", "Islandia",
    "Madagaskar", "Filipiny", "Sri Lanka", "Tajwan", "Jamajka", "Haiti", "Sycylia", "Sardynia", "Korsyka",
    "Kreta", "Rodos", "Majorka", "Teneryfa", "Madera", "Grenlandia", "Alaska", "Floryda", "Hawaje", "Bahamy",
    "Malediwy", "Seszele", "Mauritius", "Bali", "Jawa", "Sumatra", "Borneo", "Kaukaz", "Syberia", "Pomorze",
    "Śląsk", "Mazury", "Kaszuby", "Podhale", "Wołyń", "Wawel", "Manhattan", "Dominikana", "Barbados",
    "Zanzibar", "Capri", "Elba", "Korfu", "Cejlon", "Tasmania", "Nowa Gwinea", "Okinawa", "Hokkaido",
    "Bliski Wschód", "Daleki Wschód", "Wzgórza Golan", "Wybrzeże Kości Słoniowej", "Kapitol", "Montmartre",
    "Lesbos", "Ischia", "Gotlandia",
})
_NA_HEADS = frozenset({
    "uniwersytet", "politechnika", "wydział", "cmentarz", "wyspa", "wyspy", "półwysep", "stadion", "ulica",
    "plac", "wzgórze", "nekropolia", "wyżyna", "nizina", "morze",
})
# Common nouns that head a name ("Uniwersytet Warszawski", "Republika Wenecka", "Cmentarz
# Père-Lachaise"): with one of them first, a phrase is declined even without an adjective.
_HEAD_NOUNS = frozenset({
    "królestwo", "republika", "imperium", "cesarstwo", "księstwo", "kalifat", "sułtanat", "emirat",
    "dynastia", "związek", "federacja", "konfederacja", "państwo", "okręg", "prowincja", "województwo",
    "region", "hrabstwo", "departament", "gmina", "powiat", "miasto", "wieś", "stan", "terytorium",
    "uniwersytet", "politechnika", "akademia", "instytut", "szkoła", "kolegium", "liceum", "gimnazjum",
    "seminarium", "konserwatorium", "muzeum", "biblioteka", "cmentarz", "kościół", "katedra", "bazylika",
    "opactwo", "klasztor", "kaplica", "krypta", "mauzoleum", "nekropolia", "panteon", "partia",
    "organizacja", "towarzystwo", "stowarzyszenie", "nagroda", "order", "krzyż", "medal", "zakon", "armia",
    "teatr", "opera", "filharmonia", "orkiestra", "zespół", "klub", "wytwórnia", "radio", "telewizja",
    "gazeta", "agencja", "ministerstwo", "bank", "szpital", "rada", "sejm", "senat", "kongres",
    "parlament", "wydział", "wyspa", "wyspy", "półwysep", "stadion", "reprezentacja", "choroba", "zapalenie",
    "niewydolność", "marskość", "rak", "guz", "udar", "zawał", "gorączka", "dur", "ospa", "piłka", "gitara",
    "język", "muzyka", "teoria", "analiza", "sztuka", "literatura", "prawa", "nauki", "stany", "emiraty",
    "indie", "dzielnica", "rejon", "obwód", "kraj", "ziemia", "oscar", "zatrzymanie", "zatrucie", "zakażenie",
    "stwardnienie", "wypadek", "wylew", "nowotwór", "samobójstwo", "zabójstwo", "egzekucja", "pandemia",
    "epidemia", "infekcja", "rana", "odmiana", "rzeczpospolita", "kolonie", "morze", "port",
    "legia", "lech", "górnik", "ruch", "polonia", "arka", "jagiellonia", "lechia", "korona", "odra", "widzew",
    "wisła", "dialekt", "fantastyka", "powieść", "poezja", "literatura",
})

_VOWELS = set("aeiouyąęó")
_POLISH_LETTERS = frozenset("abcdefghijklmnoprstuwyzząćęłńóśźż")
_FOREIGN = re.compile(
    r"th|sh|ph|ee|zh|gh$|(?:ck|ay|ey|oy|ow|ya|ian|ic|ón|land|tion|sion|ness|ment|sis|itis)$"
)  # spellings of English (fallback labels) and of other languages: such words are not declined
_ADJ_STEMS = re.compile(
    r"^(?:wielk|now|star|mał|święt|wysok|zjednoczon|dawn|górn|doln|złot|zielon|niepodległ|woln)(?:i|y|a|e|ie)$"
)
_ADJ = re.compile(
    r"(?:(?:sk|ck|dzk|cz)(?:i|a|ie)"  # -ski -ska -skie, -cki ..., -czy? (handled by "cz")
    r"|ow(?:y|a|e)"  # -owy -owa -owe
    r"|[bcćdfghjklłmnprstwzźżś]n(?:y|a|e)"  # -ny -na -ne after a consonant: -alny, -yjny, -czny
    r"|(?:dn|tn)i(?:a|e)?"  # soft -ni: wschodni, zachodnia, ostatni
    r"|[rilnw]cz(?:y|a|e)|[ąę]c(?:y|a|e)|(?:czon|dzon)(?:y|a|e)|(?:iw|yw)(?:y|a|e)|an(?:y|e))$"
)


def _is_adjective(word: str) -> bool:
    low = word.lower()
    if len(low) < 4 or not _looks_polish(word) or low in _WORDS or low in _INDECLINABLE:
        return False
    return bool(_ADJ_STEMS.match(low) or _ADJ.search(low))


def _looks_polish(word: str) -> bool:
    """Whether the rules may decline a word: letters only (a hyphen allowed), no spelling that
    Polish does not use, not an acronym."""
    bare = word.replace("-", "")
    if not bare or not bare.isalpha() or (len(bare) > 1 and bare.isupper()):
        return False
    low = word.lower()
    return set(low.replace("-", "")) <= _POLISH_LETTERS and not _FOREIGN.search(low)


def _noun_class(word: str) -> str:
    """'f', 'm', 'n' or 'pl' by the ending (what the rules need for agreement)."""
    low = word.lower()
    if low in _PLURAL_WORDS or low.endswith(("ice", "yce")):
        return "pl"
    if low.endswith("a") or low.endswith("ść"):
        return "f"
    if low.endswith(("o", "um", "e")):
        return "n"
    return "m"


_HARD_LOC = (  # masculine hard stems: locative ending by the final consonant(s)
    ("st", "ście"), ("t", "cie"), ("d", "dzie"), ("r", "rze"), ("ł", "le"), ("n", "nie"), ("m", "mie"),
    ("s", "sie"), ("z", "zie"), ("p", "pie"), ("b", "bie"), ("f", "fie"), ("w", "wie"),
)
_FEM_LOC = (  # feminine -a: locative ending after the stem's last consonant(s)
    ("sta", "ście"), ("ta", "cie"), ("da", "dzie"), ("ra", "rze"), ("ła", "le"), ("sa", "sie"), ("za", "zie"),
    ("na", "nie"), ("ma", "mie"), ("wa", "wie"), ("ba", "bie"), ("pa", "pie"), ("fa", "fie"), ("ka", "ce"),
    ("ga", "dze"), ("cha", "sze"),
)
_SOFT_FEM = ("cza", "sza", "rza", "ża", "dża", "dza", "ica", "yca", "nza")


def _noun_form(word: str, case: str) -> str | None:
    """One noun in a case; the word itself where it does not change; None where the rules do not
    know (a foreign spelling, an ending Polish does not decline so)."""
    low = word.lower()
    if low in _WORDS:
        form = _WORDS[low][(LOC, GEN, ACC).index(case)]
        return word[:1] + form[1:] if word[:1].isupper() else form[:1].lower() + form[1:]
    if low in _INDECLINABLE:
        return word
    if not _looks_polish(word):
        return None
    if low.endswith(("ice", "yce")):  # plural town names: Katowice -> Katowicach / Katowic
        return {LOC: word[:-1] + "ach", GEN: word[:-1], ACC: word}[case]
    if low.endswith("a"):
        if case == ACC:
            return word[:-1] + "ę"
        if low.endswith("ia") or low.endswith(("ea", "ua")):
            return word[:-1] + "i"
        if low.endswith("ja"):
            return word[:-2] + "i" if low[-3:-2] in _VOWELS else word[:-1] + "i"
        if low.endswith("la"):
            return word[:-1] + "i"
        if low.endswith(_SOFT_FEM):
            return word[:-1] + "y"
        if low.endswith("ca"):  # a foreign -ca read [ka]: Casablanca -> Casablance / Casablanki
            return word[:-2] + ("ce" if case == LOC else "ki")
        if low[-2:-1] in _VOWELS:
            return None
        if case == GEN:
            return word[:-1] + ("i" if low.endswith(("ka", "ga")) else "y")
        for ending, replacement in _FEM_LOC:
            if low.endswith(ending):
                return word[: -len(ending)] + replacement
        return None
    if low.endswith("ść"):  # niewydolność, marskość
        return word if case == ACC else word[:-1] + "ci"
    if low.endswith("um") or low.endswith(("o", "e", "i", "u", "y")):
        if low.endswith(("stwo", "ctwo", "owo", "ewo")):  # Królestwo, Kosowo, malarstwo
            return {LOC: word[:-1] + "ie", GEN: word[:-1] + "a", ACC: word}[case]
        if low.endswith(("enie", "anie", "ęcie", "ycie", "icie", "ucie")):  # zapalenie, zatrucie
            return {LOC: word[:-1] + "u", GEN: word[:-1] + "a", ACC: word}[case]
        return word  # -um and foreign vowel endings: indeclinable (Monachium, Aleppo, Chile, Suzhou)
    # masculine, ending in a consonant
    if case == ACC:
        if low in _ANIMATE_HEADS or low.endswith("iak"):
            return _noun_form(word, GEN)
        return word
    if case == GEN and (low in _ANIMATE_HEADS or low.endswith("iak")):  # czerniaka, chłoniaka
        return word + "a"
    if low.endswith("ek") and len(low) > 4 and low[-3] not in _VOWELS:  # Damaszek -> Damaszku
        return word[:-2] + "ku"
    if low.endswith(("k", "g", "ch")):
        if case == GEN and low.endswith(("sk", "burg")):  # Gdańska, Mińska, Hamburga
            return word + "a"
        return word + "u"
    if low.endswith("ów"):  # Kraków -> Krakowie / Krakowa
        return word[:-2] + ("owie" if case == LOC else "owa")
    for soft, stem in (("ń", "ni"), ("ś", "si"), ("ź", "zi"), ("ć", "ci")):
        if low.endswith(soft):
            return word[:-1] + stem + ("u" if case == LOC else "a")
    if low.endswith(("l", "j", "ż", "sz", "cz", "rz", "c", "dz", "dż")):
        return word + "u"
    if case == GEN:  # foreign names and places: -u (Egiptu, Rzymu, Londynu)
        return word + "u" if low[-1] in "tdrłnmszpbfw" else None
    for ending, replacement in _HARD_LOC:
        if low.endswith(ending):
            return word[: -len(ending)] + replacement
    return None


def _adjective_form(word: str, case: str, head_class: str) -> str:
    """An adjective agreeing with its head noun (its own ending gives the gender; a final -e
    is neuter or, with a plural head, plural)."""
    low = word.lower()
    if low.endswith("a"):  # feminine: -ej (-iej after k, g and soft n), accusative -ą
        if case == ACC:
            return word[:-1] + "ą"
        if low.endswith(("ka", "ga")):
            return word[:-1] + "iej"
        return (word[:-2] + "i" if low.endswith("ia") else word[:-1]) + "ej"
    if case == ACC:  # inanimate masculine, neuter, non-personal plural: the nominative
        return word
    soft = low.endswith(("ki", "gi", "kie", "gie", "ni", "nie"))
    if head_class == "pl":  # zjednoczone -> zjednoczonych, arabskie -> arabskich
        return (word[:-1] if low.endswith("e") else word) + ("ch" if soft else "ych")
    if low.endswith("ie"):  # rosyjskie, wschodnie (neuter)
        return word[:-1] + ("m" if case == LOC else "ego")
    if low.endswith("e"):  # zjednoczone (neuter)
        return word[:-1] + ("ym" if case == LOC else "ego")
    if low.endswith("i"):  # abbasydzki, wschodni
        return word + ("m" if case == LOC else "ego")
    return word[:-1] + ("ym" if case == LOC else "ego")  # -y


def _animate_acc(head: str) -> bool:
    low = head.lower()
    return low in _ANIMATE_HEADS or (low.endswith("iak") and _noun_class(head) == "m")


def _decline(label: str, case: str) -> str | None:
    """The label in the case, or None where the rules do not parse it (the caller keeps the
    nominative)."""
    if label in _LABELS:
        return _LABELS[label][(LOC, GEN, ACC).index(case)]
    main, tail = label, ""
    for cut in (" (", ", "):
        if cut in main:
            index = main.index(cut)
            main, tail = main[:index], main[index:] + tail
    words = main.split(" ")
    if len(words) > 1 and re.fullmatch(r"[IVXL]+", words[0]):  # "I Republika Austriacka"
        rest = _decline(" ".join(words[1:]), case)
        return None if rest is None else f"{words[0]} {rest}{tail}"
    if len(words) == 1:
        form = _noun_form(words[0], case)
        return None if form is None else form + tail
    head = 0
    while head < len(words) - 1 and _is_adjective(words[head]):
        head += 1
    end = head + 1
    while end < len(words) and _is_adjective(words[end]):
        end += 1
    head_word = words[head]
    if not (head or end > head + 1 or head_word.lower() in _HEAD_NOUNS):
        return None
    noun = _noun_form(head_word, case)
    if noun is None:
        return None
    head_class = _noun_class(head_word)
    adjective_case = GEN if case == ACC and head_class == "m" and _animate_acc(head_word) else case
    forms = [_adjective_form(w, adjective_case, head_class) for w in words[:head]]
    forms.append(noun)
    forms += [_adjective_form(w, adjective_case, head_class) for w in words[head + 1 : end]]
    return " ".join(forms + words[end:]) + tail


def _preposition(label: str, locative: str) -> str:
    """'w', 'we' or 'na' before the locative of a label (by the label, or by its head noun:
    "na Starym Cmentarzu", "na Uniwersytecie Warszawskim")."""
    words = label.split(" ")
    index = 0
    while index < len(words) - 1 and _is_adjective(words[index]):
        index += 1
    head = words[index].lower()
    if label in _NA_LABELS or head in _NA_HEADS:
        return "na"
    low = locative.lower()
    if len(low) > 1 and (low[0] in "wf" and low[1] not in _VOWELS or low.startswith("lw")):
        return "we"  # we Włoszech, we Francji, we Wrocławiu, we Lwowie
    return "w"


_MONTHS = ("stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września",
           "października", "listopada", "grudnia")
_MONTHS_NOMINATIVE = ("styczeń", "luty", "marzec", "kwiecień", "maj", "czerwiec", "lipiec", "sierpień",
                      "wrzesień", "październik", "listopad", "grudzień")
_MONTHS_LOCATIVE = ("styczniu", "lutym", "marcu", "kwietniu", "maju", "czerwcu", "lipcu", "sierpniu",
                    "wrześniu", "październiku", "listopadzie", "grudniu")
_BCE = " p.n.e."


def _date_adverbial(text: str) -> str:
    """A formatted date as it stands after a verb: a full date unchanged ("11 marca 1952"), a
    year "w 1952 roku", a month "w marcu 1952" (BCE: "w 44 roku p.n.e.")."""
    bce = text.endswith(_BCE)
    core = text[: -len(_BCE)] if bce else text
    suffix = _BCE if bce else ""
    if re.fullmatch(r"\d{1,4}", core):
        return f"w {core} roku{suffix}"
    parts = core.split(" ")
    if len(parts) == 2 and parts[0] in _MONTHS_NOMINATIVE and parts[1].isdigit():
        month = _MONTHS_LOCATIVE[_MONTHS_NOMINATIVE.index(parts[0])]
        return f"{_preposition(month, month)} {month} {parts[1]}{suffix}"
    return text


def inflect(tag: str, filler: str) -> str:
    """The filler after a ``⟦pl:tag⟧`` marker: "w" (locative with w/we/na), "loc" (bare
    locative), "gen", "acc" (declined where the lexicon or the rules know the label, else the
    nominative) or "date" (an adverbial of time)."""
    if tag == "date":
        return _date_adverbial(filler)
    if tag == "w":
        form = _decline(filler, LOC) or filler
        return f"{_preposition(filler, form)} {form}"
    if tag in (LOC, GEN, ACC):
        return _decline(filler, tag) or filler
    raise ValueError(f"unknown Polish inflection tag {tag!r} (known: w, loc, gen, acc, date)")


# --------------------------------------------------------------------------------------------
# Values agreeing with the subject: occupations and positions in the feminine.
# --------------------------------------------------------------------------------------------

# Masculine label -> the standard feminine, where it is not produced by the rules below or where
# the rules would be wrong. A label mapped to itself keeps the masculine for women (no standard
# feminine: "sędzia", "oficer", "profesor" ...).
_FEMININE: dict[str, str] = {
    "polityk": "polityczka",
    "dramaturg": "dramaturg",
    "członek": "członkini",
    "sędzia": "sędzia",
    "oficer": "oficer",
    "profesor": "profesor",
    "docent": "docent",
    "kupiec": "kupiec",
    "muzyk": "muzyk",
    "mąż stanu": "mąż stanu",
    "biznesmen": "bizneswoman",
    "sportowiec": "sportsmenka",
    "naukowiec": "naukowczyni",
    "śpiewak": "śpiewaczka",
    "pływak": "pływaczka",
    "skrzypek": "skrzypaczka",
    "król": "królowa",
    "cesarz": "cesarzowa",
    "książę": "księżna",
    "poseł": "posłanka",
    "model": "modelka",
    "Ulem": "Ulem",
    "kadi": "kadi",
    "mufti": "mufti",
    "rabin": "rabinka",
    "eunuch": "eunuch",
    "cieśla": "cieśla",
    "inżynier": "inżynierka",
    "reżyser": "reżyserka",
    "oficer marynarki": "oficer marynarki",
    "prezbiter": "prezbiter",
    "ksiądz": "ksiądz",
    "biskup": "biskup",
    "arcybiskup": "arcybiskup",
    "papież": "papież",
    "kanonik": "kanonik",
    "proboszcz": "proboszcz",
    "szambelan": "szambelan",
    "generał": "generał",
    "pułkownik": "pułkownik",
    "żołnierz": "żołnierka",
    "prezydent": "prezydent",  # offices: the masculine title is the usual one for women
    "premier": "premier",
    "minister": "minister",
    "pracownik": "pracownica",
    "uczony": "uczona",
    "duchowny": "duchowna",
    "projektant": "projektantka",
    "rebeliant": "rebeliantka",
    "reporter": "reporterka",
    "fotoreporter": "fotoreporterka",
    "operator": "operatorka",
    "kolekcjoner": "kolekcjonerka",
    "bloger": "blogerka",
    "konferansjer": "konferansjerka",
    "komentator": "komentatorka",
    "edukator": "edukatorka",
    "popularyzator": "popularyzatorka",
    "kapłan": "kapłanka",
    "strzelec": "strzelczyni",
    "skoczek": "skoczkini",
    "filantrop": "filantropka",
    "bibliofil": "bibliofilka",
    "poliglota": "poliglotka",
    "senator": "senatorka",
    "burmistrz": "burmistrzyni",
    "prezes": "prezeska",
    "dyrektor": "dyrektorka",
    "gubernator": "gubernatorka",
    "ambasador": "ambasadorka",
    "kurator": "kuratorka",
    "aktor": "aktorka",
    "autor": "autorka",
    "kompozytor": "kompozytorka",
    "redaktor": "redaktorka",
    "ilustrator": "ilustratorka",
    "rektor": "rektorka",
    "lektor": "lektorka",
    "konserwator": "konserwatorka",
    "producent": "producentka",
    "prezenter": "prezenterka",
    "dyrygent": "dyrygentka",
    "partyzant": "partyzantka",
    "student": "studentka",
    "emigrant": "emigrantka",
    "adwokat": "adwokatka",
    "literat": "literatka",
    "architekt": "architektka",
    "dyplomata": "dyplomatka",
    "poeta": "poetka",
    "astronauta": "astronautka",
    "lekkoatleta": "lekkoatletka",
    "filozof": "filozofka",
    "astronom": "astronomka",
    "menedżer": "menedżerka",
    "bankier": "bankierka",
    "tancerz": "tancerka",
    "funkcjonariusz": "funkcjonariuszka",
    "misjonarz": "misjonarka",
    "władca": "władczyni",
    "monarcha": "monarchini",
    "wyznawca": "wyznawczyni",
}

_FEMININE_RULES = (  # masculine ending -> feminine ending, first match wins
    ("arz", "arka"), ("graf", "grafka"), ("ista", "istka"), ("ysta", "ystka"), ("log", "lożka"), ("nik", "niczka"),
    ("ik", "iczka"), ("yk", "yczka"), ("acz", "aczka"), ("iciel", "icielka"), ("yciel", "ycielka"),
    ("wca", "wczyni"), ("rca", "rczyni"), ("ca", "czyni"), ("eta", "etka"), ("ata", "atka"), ("uta", "utka"),
)


def _feminine_noun(word: str) -> str | None:
    """The feminine of one masculine person noun, or None (keep the masculine)."""
    if word in _FEMININE:
        return _FEMININE[word]
    low = word.lower()
    if not _looks_polish(word):
        return None
    for ending, replacement in _FEMININE_RULES:
        if low.endswith(ending):
            return word[: -len(ending)] + replacement
    return None


def _feminine_adjective(word: str) -> str:
    low = word.lower()
    if low.endswith(("ki", "gi")):
        return word[:-1] + "a"
    if low.endswith("i"):  # soft: średni -> średnia
        return word + "a"
    return word[:-1] + "a"  # -y


def _feminine_phrase(phrase: str) -> str:
    """"aktor filmowy" -> "aktorka filmowa", "Islamski prawnik" -> "Islamska prawniczka",
    "lekarz stomatolog" -> "lekarka stomatolog", "członek personelu wojskowego" -> "członkini
    personelu wojskowego"; a head without a feminine keeps the whole phrase."""
    if phrase in _FEMININE:
        return _FEMININE[phrase]
    words = phrase.split(" ")
    head = 0
    while head < len(words) - 1 and _is_masculine_adjective(words[head]):
        head += 1
    feminine = _feminine_noun(words[head])
    if feminine is None or feminine == words[head]:
        return phrase
    end = head + 1
    while end < len(words) and _is_masculine_adjective(words[end]):
        end += 1
    out = [_feminine_adjective(w) for w in words[:head]] + [feminine]
    out += [_feminine_adjective(w) for w in words[head + 1 : end]]
    return " ".join(out + words[end:])


def _is_masculine_adjective(word: str) -> bool:
    return word.lower().endswith(("y", "i")) and _is_adjective(word)


def value_form(prop: str, label: str, gender: str | None) -> str:
    """Occupations (P106) and positions (P39) in the feminine for a woman ("pisarz" ->
    "pisarka", "aktor filmowy" -> "aktorka filmowa", "polityk" -> "polityczka"; coordinated
    labels part by part: "piosenkarz i autor piosenek" -> "piosenkarka i autorka piosenek");
    everything else, and every label for a man or an unknown gender, unchanged."""
    if gender != FEMALE or prop not in GENDERED:
        return label
    if label in _FEMININE:
        return _FEMININE[label]
    return " i ".join(_feminine_phrase(part) for part in label.split(" i "))


GENDERED = frozenset({"P106", "P39"})


def format_date(iso: str, english_label: str) -> str:
    """ "1952-03-11" -> "11 marca 1952", "1952-03-01" -> "1 marca 1952", "1952" -> "1952",
    "-0044-03-15" -> "15 marca 44 p.n.e.", "1952-03" (or day 00) -> "marzec 1952"; anything
    else: the English label unchanged."""
    return written_date(iso, english_label, _DATES)


_DATES = DateStyle(months=_MONTHS, era=_BCE, months_alone=_MONTHS_NOMINATIVE)


PACK = register(LanguagePack(
    code="pl",
    name="Polish",
    native_name="polski",
    templates=TEMPLATES,
    context_forms=CONTEXT_FORMS,
    generic_subject=generic_subject,
    inflect=inflect,
    value_form=value_form,
    format_date=format_date,
))
