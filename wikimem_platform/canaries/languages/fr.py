"""French canary templates and the grammar they need (articles, prepositions, elision, agreement).

Markers (`grammar`), each standing right before a placeholder:

- ``⟦fr:le⟧`` the filler with the definite article it takes: "la France", "le Canada", "les
  États-Unis", "l'Italie", "Israël", "Rome", "Le Caire", "la tuberculose", "l'université de Vienne",
  "le royaume d'Italie", "le Parti socialiste"; a proper name (a person, a city, a brand) stays bare.
- ``⟦fr:du⟧`` "de" + that: "de la France", "du Canada", "des États-Unis", "de l'Italie", "du Caire",
  "de la tuberculose", "du Parti socialiste", "d'Israël", "de Google".
- ``⟦fr:au⟧`` "à" + that: "à la France", "au Canada", "aux États-Unis", "au catholicisme".
- ``⟦fr:de⟧`` "de" of origin ("natif de"): no article before feminine countries and those that
  take "en": "de France", "d'Italie", "d'Iran", but "du Canada", "des États-Unis", "de Cuba",
  "du Caire", "du royaume d'Italie", "de l'Empire ottoman".
- ``⟦fr:à⟧`` "in" a place: "à Rome", "au Caire", "à La Haye", "en France", "en Iran", "au
  Canada", "aux États-Unis", "à Cuba", "en Israël", "dans le royaume d'Italie", "dans l'Empire
  ottoman", "en république populaire de Chine", "sous la dynastie Qing", "au cimetière du
  Père-Lachaise", "à l'université de Vienne", "au Real Madrid".
- ``⟦fr:d'⟧`` "de" elided before a vowel or a mute h, nothing else (people, h0, bare nouns):
  "d'Antoine", "de cet homme", "de Le Corbusier", "d'ambassadeur", "de gardien de but".
- ``⟦fr:que⟧`` "que" elided the same way: "qu'Ahmed", "que cette femme".
- ``⟦fr:date⟧`` a date written by `format_date` with its preposition: "le 11 mars 1952",
  "le 1er mars 1952", "en 1952", "en 500 av. J.-C.".
- ``⟦fr:attr⟧`` an occupation as the attribute of "être": bare ("médecin", "actrice") except a
  head noun that needs an article ("une personnalité religieuse").

What a label is comes from the lexicons below: countries and regions with their gender, number and
preposition (``_PLACES``), head nouns of institutions, states, awards, diseases ... with their
gender and the preposition of place they take (``_HEADS``), suffix rules for other lower-case
common nouns; an unknown capitalised label is a proper name (a city for ``à``: "à X").
"""

from __future__ import annotations

import re

from wikimem_platform.canaries.languages.grammar import DateStyle, FEMALE, LanguagePack, register, written_date

# --------------------------------------------------------------------------------------------
# Elision
# --------------------------------------------------------------------------------------------

_VOWELS = set("aàâäeéèêëiîïoôöuùûüœæ")
_ASPIRATED_H = (
    "hach", "haie", "hain", "haïr", "hall", "halte", "hamac", "hameau", "hamburger", "hamster", "hanche", "hand",
    "hangar", "hanneton", "harcèlement", "hard", "hareng", "haricot", "harpe", "hasard", "hâte", "hausse", "haut",
    "havre", "hennissement", "hernie", "hérisson", "héron", "héros", "hêtre", "hibou", "hiérarchie", "hindi",
    "hip-hop", "hippie", "hit", "hobby", "hockey", "holding", "hollandais", "homard", "hongrois", "honte",
    "hooligan", "hors", "houblon", "housse", "huit", "hurl", "hutte", "haoussa", "heavy", "hurling",
)
"""Words with an aspirated h (no elision): "le hockey", "la harpe", "de Hongrie"."""
_MUTE_H_NAMES = {
    "haïti", "hélène", "hector", "henri", "henriette", "honoré", "hippolyte", "horace", "hortense", "homère",
    "hadrien", "hannibal", "hérodote", "hippocrate", "hercule", "héraclite", "hésiode", "hermès", "héra", "hélios",
    "hilaire", "hyacinthe", "hubert", "hyères", "hébron", "hérat", "hiroshima", "helsinki", "himalaya", "hokkaido",
    "honolulu", "héliopolis", "herculanum", "hérault", "hô", "hugo", "hildegarde", "hermann", "hermione",
}
"""Capitalised names before which "de" elides ("d'Haïti", "d'Homère"); other capitalised names in h
do not ("de Hambourg", "de Hegel", "du Honduras")."""
_Y_ELIDED = {"yves", "yvonne", "yvette", "yvelines", "ypres", "ypérite", "yseult", "ysaÿe"}


def _first_word(text: str) -> str:
    return re.split(r"[\s']", text, maxsplit=1)[0]


def _elides(text: str) -> bool:
    """Whether "de", "que", "le", "la" elide before `text` (a vowel or a mute h)."""
    if not text:
        return False
    first = text[0]
    word = _first_word(text).lower()
    if first.lower() in _VOWELS:
        return word not in {"onze", "onzième", "ouistiti", "ouate"}
    if first in "yY":
        return word in _Y_ELIDED
    if first in "hH":
        if word.startswith(_ASPIRATED_H):
            return False
        if first == "H" and word.split("-")[0] not in _HEADS:
            return word.split("-")[0] in _MUTE_H_NAMES
        return True
    return False


def _elided(word: str, text: str) -> str:
    """ "de" / "que" (+ space) before `text`, elided where it must be: "d'Antoine", "que cet homme"."""
    return f"{word[:-1]}'{text}" if _elides(text) else f"{word} {text}"


# --------------------------------------------------------------------------------------------
# Lexicons
# --------------------------------------------------------------------------------------------

# Countries, regions, states and continents: kind
#   "f" feminine (la France, en France, de France), "m" masculine (le Canada, au Canada, du Canada;
#   before a vowel: l'Iran, en Iran, d'Iran), "pl" plural (les États-Unis, aux, des),
#   "0" no article (Cuba, à Cuba, de Cuba), "0en" no article but "en" (Israël, en Israël, d'Israël),
#   "la" feminine with "à la" (la Barbade, à la Barbade, de la Barbade).
_PLACE_LISTS = {
    "f": """Afrique; Afrique du Sud; Albanie; Algérie; Allemagne; Amérique; Amérique du Nord; Amérique du Sud;
        Amérique latine; Andalousie; Andorre; Angleterre; Antarctique; Aquitaine; Arabie saoudite; Argentine;
        Arménie; Asie; Australie; Autriche; Autriche-Hongrie; Auvergne; Bavière; Belgique; Bessarabie; Biélorussie;
        Birmanie; Bohême; Bolivie; Bosnie; Bosnie-Herzégovine; Bourgogne; Bretagne; Bulgarie; Calabre; Californie;
        Campanie; Caroline du Nord; Caroline du Sud; Castille; Catalogne; Centrafrique; Champagne; Chine;
        Cisjordanie; Colombie; Colombie-Britannique; Corée; Corée du Nord; Corée du Sud; Corse; Côte d'Ivoire;
        Crète; Crimée; Croatie; Dalmatie; Écosse; Égypte; Émilie-Romagne; Érythrée; Espagne; Estonie; Éthiopie;
        Europe; Finlande; Flandre; Floride; France; Franconie; Galice; Galicie; Gambie; Gaule; Géorgie;
        Grande-Bretagne; Grèce; Guadeloupe; Guinée; Guinée-Bissau; Guyane; Hesse; Hongrie; Inde; Indonésie;
        Irlande; Islande; Istrie; Italie; Jamaïque; Jordanie; Judée; Lettonie; Libye; Ligurie; Lituanie; Lombardie;
        Lorraine; Louisiane; Macédoine; Macédoine du Nord; Malaisie; Mandchourie; Martinique; Mauritanie;
        Mésopotamie; Moldavie; Mongolie; Moravie; Namibie; Navarre; Normandie; Norvège; Nouvelle-Calédonie;
        Nouvelle-Écosse; Nouvelle-Galles du Sud; Nouvelle-Zélande; Océanie; Ombrie; Palestine;
        Papouasie-Nouvelle-Guinée; Île-de-France; Pennsylvanie; Perse; Picardie; Pologne; Polynésie; Poméranie; Provence;
        Prusse; RDA; Rhénanie; RFA; Roumanie; Russie; Sardaigne; Saskatchewan; Savoie; Saxe; Serbie; Sibérie;
        Sicile; Sierra Leone; Silésie; Slovaquie; Slovénie; Somalie; Souabe; Suède; Suisse; Syrie; Tanzanie;
        Tasmanie; Tchécoslovaquie; Tchéquie; Tchétchénie; Thaïlande; Thrace; Thuringe; Toscane; Transjordanie;
        Transylvanie; Tunisie; Turquie; Ukraine; Union soviétique; URSS; Valachie; Vénétie; Virginie;
        Virginie-Occidentale; Wallonie; Westphalie; Yougoslavie; Zambie""",
    "m": """Afghanistan; Alabama; Alaska; Alberta; Angola; Arizona; Arkansas; Azerbaïdjan; Bade-Wurtemberg;
        Bangladesh; Bélarus; Belize; Bengale; Bénin; Bhoutan; Botswana; Brabant; Brandebourg; Brésil;
        Burkina Faso; Burundi; Cachemire; Cambodge; Cameroun; Canada; Cap-Vert; Caucase; Chili; Colorado; Congo;
        Connecticut; Costa Rica; Dakota du Nord; Dakota du Sud; Danemark; Delaware; Équateur; Eswatini; Gabon;
        Ghana; Groenland; Guatemala; Guyana; Hainaut; Honduras; Idaho; Illinois; Indiana; Iowa; Irak; Iran;
        Japon; Kansas; Kazakhstan; Kentucky; Kenya; Kirghizistan; Kosovo; Koweït; Kurdistan; Languedoc; Laos;
        Latium; Lesotho; Liban; Liberia; Libéria; Liechtenstein; Luxembourg; Maine; Malawi; Mali; Manitoba;
        Maroc; Maryland; Massachusetts; Mexique; Michigan; Minnesota; Mississippi; Missouri; Montana;
        Monténégro; Mozambique; Myanmar; Nebraska; Népal; Nevada; New Hampshire; New Jersey; Nicaragua; Niger;
        Nigeria; Nigéria; Nouveau-Brunswick; Nouveau-Mexique; Ohio; Oklahoma; Ontario; Oregon; Ouganda;
        Ouzbékistan; Pakistan; Panama; Paraguay; Pays basque; pays de Galles; Pendjab; Pérou; Piémont; Portugal;
        Qatar; Queensland; Rhode Island; Royaume-Uni; Rwanda; Sahara; Sahara occidental; Salvador; Schleswig-Holstein;
        Sénégal; Siam; Soudan; Soudan du Sud; Sri Lanka; Suriname; Swaziland; Tadjikistan; Tchad; Tennessee;
        Texas; Tibet; Timor oriental; Togo; Troisième Reich; Turkménistan; Tyrol; Uruguay; Utah; Vanuatu;
        Vatican; Venezuela; Vermont; Viêt Nam; Vietnam; Wisconsin; Wurtemberg; Wyoming; Yémen; Yukon; Zaïre;
        Zimbabwe""",
    "pl": """Abruzzes; Açores; Antilles; Asturies; Bahamas; Baléares; Balkans; Canaries; Comores;
        Émirats arabes unis; États-Unis; Fidji; Indes; Maldives; Marches; Palaos; Pays-Bas; Philippines; Pouilles;
        Samoa; Seychelles; Tonga""",
    "0": """Antigua-et-Barbuda; Bahreïn; Bornéo; Brunei; Ceylan; Chypre; Cuba; Djibouti; Guernesey; Hawaï;
        Hong Kong; Java; Jersey; Kiribati; Macao; Madagascar; Malte; Maurice; Monaco; Nauru; Oman; Porto Rico;
        Saint-Kitts-et-Nevis; Saint-Marin; Saint-Vincent-et-les-Grenadines; Sainte-Lucie; Sao Tomé-et-Principe;
        São Tomé-et-Principe; Singapour; Sumatra; Tahiti; Taïwan; Taiwan; Terre-Neuve; Trinité-et-Tobago; Tuvalu""",
    "0en": "Haïti; Israël",
    "la": "Barbade; Dominique; Réunion",
}
_PLACES: dict[str, str] = {
    name.strip(): kind for kind, names in _PLACE_LISTS.items() for name in names.split(";") if name.strip()
}

# Head nouns of common-noun labels: gender ("m"/"f"), plural, the preposition of place ("à":
# "à l'université de Vienne", "dans": "dans le royaume d'Italie", "en": "en république
# populaire de Chine", "sous": "sous la dynastie Qing", "sur": "sur l'île de Ré").
_HEAD_LISTS = {
    ("m", "dans"): """arrondissement; bailliage; camp; canton; califat; comté; département; district; duché;
        émirat; empire; état; gouvernorat; grand-duché; ghetto; khanat; land; mandat; oblast; pays; protectorat;
        quartier; reich; royaume; saint-empire; sultanat; territoire; village""",
    ("f", "dans"): """circonscription; cité; colonie; commune; confédération; fédération; municipalité;
        préfecture; principauté; province; région; union; ville; voïvodie""",
    ("f", "en"): "république",
    ("f", "sous"): "dynastie",
    ("f", "sur"): "île",
    ("m", "à"): """aéroport; asile; camp; centre; château; cimetière; club; collège; conservatoire; couvent;
        domaine; gymnase; hospice; hôpital; hôtel; institut; lycée; mausolée; monastère; mont; musée; observatoire;
        palais; panthéon; parc; port; prieuré; sanatorium; séminaire; stade; studio; temple; théâtre; tombeau""",
    ("f", "à"): """abbaye; académie; basilique; bibliothèque; cathédrale; chapelle; clinique; crypte; école;
        église; faculté; institution; maison; nécropole; organisation; prison; synagogue; mosquée; université;
        villa""",
    ("m", None): """accident; arrêt; art; assassinat; cancer; choléra; championnat; chevalier; commandeur;
        conseil; congrès; diabète; diplôme; doctorat; emphysème; festival; film; front; genre; groupe; infarctus;
        journal; label; lion; magazine; ministère; mouvement; oscar; césar; golden; grammy; emmy; opéra; orchestre;
        ordre; ours; paludisme; parlement; parti; prix; rassemblement; roman; sénat; sida; suicide; syndicat;
        syndrome; trophée; tribunal; typhus""",
    ("f", None): """agence; alliance; armée; assemblée; association; banque; bourse; chaîne; chambre; chanson;
        compagnie; congrégation; coupe; cour; crise; croix; démence; entreprise; équipe; fièvre; foi; fondation;
        grippe; langue; légion; ligue; maladie; marine; médaille; musique; noyade; palme; peste; pop; radio;
        revue; rougeole; sélection; société; soul; country; fantasy; station; télévision; tumeur; variole;
        démocratie; nature; bande; voile; guitare; harpe; flûte; basse; contrebasse; cithare; lutte; boxe;
        escrime; course; pétanque; gouvernance; poésie; photographie""",
}
_HEADS: dict[str, tuple[str, str | None]] = {}
for (_gender, _prep), _names in _HEAD_LISTS.items():
    for _name in _names.split(";"):
        if _name.strip():
            _HEADS[_name.strip()] = (_gender, _prep)
# nouns whose suffix rule would err (karaté is masculine, silence too; the -eur nouns that are feminine)
_MASCULINE_NOUNS = {
    "karaté", "comité", "été", "traité", "côté", "pâté", "député", "musée", "lycée", "trophée", "mausolée",
    "apogée", "violoncelle", "magazine", "silence", "stade", "prélude", "site", "rite", "mérite", "monopole",
    "rôle", "pétrole", "symbole", "contrôle", "scandale", "génie", "incendie", "portique", "cantique", "lexique",
    "moine", "domaine", "patrimoine", "cirque", "théâtre", "choléra", "hockey", "blues", "judo", "sumo",
    "taekwondo", "tennis", "cricket", "rugby", "football", "handball", "volley-ball", "basket-ball", "baseball",
    "golf", "ski", "snowboard", "triathlon", "biathlon", "water-polo", "polo", "piano", "orgue", "oud", "luth",
    "clavecin", "hautbois", "tambour", "xylophone", "saxophone", "accordéon", "harmonica", "banjo", "violon",
    "jazz", "rock", "rap", "reggae", "funk", "punk", "hip-hop", "métal", "drame", "thriller", "western", "essai",
    "portrait", "paysage", "islam", "judaïsme", "catholicisme", "christianisme", "protestantisme", "bouddhisme",
    "hindouisme", "sikhisme", "shintoïsme", "taoïsme", "chiisme", "sunnisme", "athéisme", "anglicanisme",
    "espéranto", "latin", "grec", "arabe", "hébreu", "sanskrit", "yiddish", "alpinisme", "cyclisme", "athlétisme",
    "patinage", "aviron", "canoë-kayak", "tir", "kayak", "surf", "curling", "bobsleigh", "vélo", "cinéma",
    "dessin", "design", "journalisme", "droit", "commerce", "génocide", "homicide", "meurtre", "accident",
    "anévrisme", "lymphome", "mélanome", "myélome", "glaucome", "coma", "sepsis", "tétanos", "asthme",
    "alcoolisme", "cholestérol", "empoisonnement", "bombardement", "naufrage", "crash", "duel", "lynchage",
    "basque", "tchèque", "slovaque", "bosniaque", "gaélique", "créole", "celtique", "copte", "malgache",
}
_FEMININE_NOUNS = {
    "tumeur", "douleur", "fleur", "couleur", "valeur", "peur", "sœur", "faveur", "chaleur", "lueur",
    "peinture", "sculpture", "gravure", "littérature", "architecture", "musique", "physique", "chimie",
    "biologie", "philosophie", "histoire", "géographie", "médecine", "théologie", "sociologie", "économie",
    "linguistique", "mathématique", "politique", "science", "science-fiction", "comédie", "tragédie",
    "danse", "mode", "cuisine", "photographie", "vidéo", "radio", "orthodoxie", "cirrhose", "tuberculose",
    "peste", "variole", "septicémie", "pneumonie", "leucémie", "gangrène", "méningite", "péritonite",
    "dysenterie", "insuffisance", "hémorragie", "embolie", "thrombose", "overdose", "décapitation",
    "pendaison", "exécution", "fusillade", "guillotine", "blessure", "chute", "noyade", "asphyxie",
    "malnutrition", "famine", "vieillesse", "trompette", "clarinette", "batterie", "viole", "mandoline",
    "guitare", "basse", "harpe", "flûte", "cornemuse", "voix", "natation", "équitation", "gymnastique",
    "lutte", "boxe", "escrime", "voile", "haltérophilie", "plongée", "randonnée", "escalade", "course",
    "pétanque", "formule",
}
_PLURAL_NOUNS = {"droits", "échecs", "études", "sciences", "lettres", "arts", "beaux-arts", "relations",
                 "mathématiques", "percussions", "fléchettes", "jeux", "soins", "ressources", "témoins", "mots",
                 "courses", "îles", "sports", "quilles", "claviers"}
_SINGULAR_S = {"blues", "tennis", "infarctus", "typhus", "sida", "tétanos", "sepsis", "herpès", "cours", "concours",
               "discours", "secours", "corps", "temps", "pays", "prix", "palais", "ours", "fonds", "congrès",
               "succès", "procès", "abcès", "virus", "cactus", "campus", "bus", "processus", "rhinocéros",
               "polonais", "anglais", "français", "japonais", "chinois", "danois", "suédois", "finnois", "hongrois",
               "néerlandais", "portugais", "norvégien", "gallois", "écossais", "irlandais", "libanais",
               "taïwanais", "vietnamien", "albanais", "birman", "bengali"}
# States whose head is written lower-case before "de": "Royaume d'Italie" -> "le royaume d'Italie".
_LOWERCASE_BEFORE_DE = {"royaume", "république", "empire", "sultanat", "califat", "émirat", "khanat",
                        "principauté", "duché", "grand-duché", "comté", "protectorat", "dynastie"}
# Capitalised acronyms and names that take an article.
_ARTICLED_NAMES = {
    "ONU": "f", "NASA": "f", "BBC": "f", "UNESCO": "f", "Unesco": "f", "OTAN": "f", "CIA": "f", "UE": "f",
    "OMS": "f", "SNCF": "f", "RAI": "f", "CNN": "f", "SS": "f", "Gestapo": "f", "Wehrmacht": "f",
    "Luftwaffe": "f", "Stasi": "f", "Sorbonne": "f", "UNICEF": "m", "Unicef": "m", "CNRS": "m", "FBI": "m",
    "KGB": "m", "NSDAP": "m", "FMI": "m", "CERN": "m", "MIT": "m", "PSG": "m", "Vatican": "m",
    "Bundestag": "m", "Reichstag": "m", "Kremlin": "m", "Panthéon": "m", "Louvre": "m",
}
_CLUB_TOKENS = {"FC", "CF", "AC", "AS", "SC", "SV", "FK", "SK", "BK", "IF", "CD", "UD", "RC", "OGC", "AFC", "SSC",
                "Club", "Calcio", "Rovers", "Wanderers", "Athletic", "Olympique", "Sporting", "Racing", "Real",
                "Atlético", "Dynamo", "Dinamo", "Spartak", "Lokomotiv", "Borussia", "Bayern", "Ajax", "Benfica",
                "Olympiakos", "Galatasaray", "Fenerbahçe", "Celtic", "Hertha", "Werder", "Eintracht"}
_FEMININE_CLUBS = {"Juventus", "Lazio", "Roma", "Fiorentina", "Sampdoria", "Reggina", "Salernitana", "Ternana"}
_TITLE_HEADS = {"chevalier", "officier", "commandeur", "grand-croix", "grand-officier", "compagnon"}
_DETERMINERS = {"ce", "cet", "cette", "ces", "le", "la", "les", "un", "une", "des", "son", "sa", "ses", "mon",
                "ma", "mes", "leur", "leurs", "notre", "votre"}
_FEMININE_SUFFIXES = ("tion", "sion", "xion", "té", "ie", "ure", "ance", "ence", "ade", "ise", "ose", "ite",
                      "ine", "ette", "elle", "esse", "ique", "ée", "ude", "ale", "ole", "aille", "eille", "ille",
                      "ière", "ace")
_MASCULINE_SUFFIXES = ("isme", "ment", "age", "eau", "oir", "ème", "ome", "aire", "ège")


def _noun_gender(word: str) -> str:
    """Gender of a French common noun: lexicon, then suffix (masculine by default)."""
    word = word.lower()
    if word in _HEADS:
        return _HEADS[word][0]
    if word in _MASCULINE_NOUNS:
        return "m"
    if word in _FEMININE_NOUNS:
        return "f"
    if word.endswith(_MASCULINE_SUFFIXES):
        return "m"
    if word.endswith(_FEMININE_SUFFIXES):
        return "f"
    return "m"


def _is_plural(word: str) -> bool:
    word = word.lower()
    if word in _PLURAL_NOUNS:
        return True
    if word in _SINGULAR_S or word in _HEADS:
        return False
    return word.endswith(("es", "ts", "aux", "eux", "ions", "ns"))


# --------------------------------------------------------------------------------------------
# Classification of a filler
# --------------------------------------------------------------------------------------------


class _Phrase:
    """A filler classified: `kind` "place" (a country or region of _PLACES, with `place` its kind),
    "article" (a capitalised label that starts with its own article: "Le Caire", "Les Misérables"),
    "determined" (starts with a lower-case determiner: h0 "cet homme"), "noun" (takes the definite
    article: common nouns, institutions, states, clubs), "proper" (a name: no article)."""

    __slots__ = ("text", "kind", "place", "gender", "plural", "prep")

    def __init__(self, text: str, kind: str, place: str = "", gender: str = "m", plural: bool = False,
                 prep: str | None = None) -> None:
        self.text, self.kind, self.place, self.gender, self.plural, self.prep = text, kind, place, gender, plural, prep

    def with_article(self) -> str:
        """The nominative with its definite article, if it takes one."""
        if self.kind == "place":
            if self.place in ("0", "0en"):
                return self.text
            if self.place == "pl":
                return f"les {self.text}"
            if self.place == "la":
                return f"la {self.text}"
            return self._article()
        if self.kind == "noun":
            return f"les {self.text}" if self.plural else self._article()
        return self.text

    def _article(self) -> str:
        if _elides(self.text):
            return f"l'{self.text}"
        return f"{'la' if self.gender == 'f' else 'le'} {self.text}"


def _place_kind(text: str) -> str | None:
    if text in _PLACES:
        return text
    # "Irlande du Nord", "Guinée équatoriale", "Royaume-Uni de Grande-Bretagne et d'Irlande"; not "Panama City"
    match = re.match(r"^(\S+(?: \S+)?) (?:du |de |d'|des |[a-zé])", text)
    for candidate in ([match.group(1), match.group(1).split(" ")[0]] if match else []):
        rest = text[len(candidate):]
        if candidate in _PLACES and re.match(r"^ (?:du |de |d'|des |[a-zéèô])", rest):
            return candidate
    return None


def _classify(text: str) -> _Phrase:
    if not text:
        return _Phrase(text, "proper")
    place = _place_kind(text)
    if place is not None:
        kind = _PLACES[place]
        gender = "m" if kind == "m" else "f"
        return _Phrase(text, "place", place=kind, gender=gender, plural=kind == "pl")
    first = _first_word(text)
    lower = first.lower()
    if re.match(r"^(?:Le|La|Les) \S|^L'\S", text):
        return _Phrase(text, "article")
    if lower in _DETERMINERS or text.startswith(("l'", "d'")):
        return _Phrase(text, "determined")
    if text in _ARTICLED_NAMES:
        return _Phrase(text, "noun", gender=_ARTICLED_NAMES[text], prep="à")
    words = text.split()
    if lower in _TITLE_HEADS or text.lower().startswith("grand officier "):  # an order's grade is a title: "le titre de chevalier de la Légion d'honneur"
        return _Phrase(f"titre {_elided('de', text[0].lower() + text[1:])}", "noun", gender="m")
    if lower in _HEADS or text[0].islower():
        gender, prep = _HEADS.get(lower, (_noun_gender(lower), None))
        plural = _is_plural(lower)
        if lower in _LOWERCASE_BEFORE_DE and len(words) > 1 and re.match(r"^(?:de|du|des|d')\b", words[1]):
            text = first.lower() + text[len(first):]
        elif lower in _LOWERCASE_BEFORE_DE and lower == "royaume" and len(words) > 2:
            text = first.lower() + text[len(first):]  # "royaume arabe de Syrie"
        return _Phrase(text, "noun", gender=gender, plural=plural, prep=prep)
    if any(word in _CLUB_TOKENS for word in words[:4]) and len(words) > 1 or first in _FEMININE_CLUBS:
        return _Phrase(text, "noun", gender="f" if first in _FEMININE_CLUBS else "m", prep="à")
    if len(words) >= 3 and first.endswith("s") and words[1] in ("de", "d'", "du") or (
            len(words) >= 2 and first.endswith("s") and words[1].startswith("d'")):
        return _Phrase(text, "noun", plural=True, prep="à")  # "Lakers de Los Angeles", "Canadiens de Montréal"
    if re.search(r"\b(?:Institute|College|Conservatory)\b", text):
        return _Phrase(text, "noun", gender="m", prep="à")
    return _Phrase(text, "proper")


# --------------------------------------------------------------------------------------------
# Prepositions
# --------------------------------------------------------------------------------------------


def _de(text: str) -> str:
    """ "de" + a phrase that already has its article: "du Caire", "des États-Unis", "de la France"."""
    for article, contracted in (("le ", "du "), ("Le ", "du "), ("les ", "des "), ("Les ", "des ")):
        if text.startswith(article):
            return contracted + text[len(article):]
    if text.startswith(("la ", "La ", "l'", "L'")):
        return f"de {text}"
    return _elided("de", text)


def _a(text: str) -> str:
    """ "à" + a phrase that already has its article: "au Caire", "aux États-Unis", "à la France"."""
    for article, contracted in (("le ", "au "), ("Le ", "au "), ("les ", "aux "), ("Les ", "aux ")):
        if text.startswith(article):
            return contracted + text[len(article):]
    return f"à {text}"


def _origin(phrase: _Phrase) -> str:
    """ "de" of origin: "de France", "d'Italie", "du Canada", "des États-Unis", "de Cuba"."""
    if phrase.kind == "place":
        if phrase.place in ("f", "0", "0en") or (phrase.place == "m" and _elides(phrase.text)):
            return _elided("de", phrase.text)
    return _de(phrase.with_article())


def _location(phrase: _Phrase) -> str:
    """ "in" a place: "à Rome", "au Caire", "en France", "au Canada", "aux États-Unis", "à Cuba"."""
    text = phrase.text
    if phrase.kind == "place":
        kind = phrase.place
        if kind == "0":
            return f"à {text}"
        if kind == "0en" or kind == "f" or (kind == "m" and _elides(text)):
            return f"en {text}"
        if kind == "la":
            return f"à la {text}"
        return _a(phrase.with_article())
    if phrase.kind == "noun":
        prep = phrase.prep or "dans"
        if prep == "en" and not phrase.plural:
            return f"en {text}"
        if prep in ("à", "en"):
            return _a(phrase.with_article())
        return f"{prep} {phrase.with_article()}"
    return _a(text)  # a city ("à Rome", "au Caire", "à La Haye"), h0, any name


def inflect(tag: str, filler: str) -> str:
    """The filler as it stands after marker `tag` (see the module docstring)."""
    if tag == "d'":
        return _elided("de", filler)
    if tag == "que":
        return _elided("que", filler)
    if tag == "date":
        return _dated(filler)
    if tag == "attr":
        return f"une {filler}" if _first_word(filler).lower() in ("personnalité", "figure") else filler
    phrase = _classify(filler)
    if tag == "le":
        return phrase.with_article()
    if tag == "du":
        return _de(phrase.with_article())
    if tag == "au":
        return _a(phrase.with_article())
    if tag == "de":
        return _origin(phrase)
    if tag == "à":
        return _location(phrase)
    raise ValueError(f"French marker ⟦fr:{tag}⟧: unknown tag")


# --------------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------------

_MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre")
_FULL_DATE = re.compile(r"^(?:1er|\d{1,2}) (?:%s) " % "|".join(_MONTHS))


def format_date(iso: str, english_label: str) -> str:
    """ "1952-03-11" -> "11 mars 1952", "1952-03-01" -> "1er mars 1952", "1952" -> "1952",
    "-0500" -> "500 av. J.-C."; anything else -> the English label."""
    return written_date(iso, english_label, _DATES)


_DATES = DateStyle(months=_MONTHS, era=" av. J.-C.", first_day="1er")


def _dated(text: str) -> str:
    """A written date with its preposition: "le 11 mars 1952", "en mars 1952", "en 1952"."""
    if _FULL_DATE.match(text):
        return f"le {text}"
    if re.match(r"^(?:%s) \d" % "|".join(_MONTHS), text) or re.match(r"^\d{1,4}(?: av\. J\.-C\.)?$", text):
        return f"en {text}"
    return text


# --------------------------------------------------------------------------------------------
# Subject and values
# --------------------------------------------------------------------------------------------


def generic_subject(gender: str | None) -> str:
    """h0: "cette femme" for a woman, "cet homme" otherwise (the templates' default agreement is
    masculine, so a person of unknown gender is "cet homme" as well)."""
    return "cette femme" if gender == FEMALE else "cet homme"


# masculine -> feminine of the head noun of occupations, positions and playing positions
_FEMININE_FORMS = {
    "acteur": "actrice", "adjoint": "adjointe", "agent": "agente", "agriculteur": "agricultrice",
    "ailier": "ailière", "ambassadeur": "ambassadrice", "animateur": "animatrice", "attaquant": "attaquante",
    "auteur": "autrice", "aviateur": "aviatrice", "avocat": "avocate", "banquier": "banquière",
    "boxeur": "boxeuse", "buteur": "buteuse", "chanteur": "chanteuse", "chef": "cheffe",
    "chercheur": "chercheuse", "chirurgien": "chirurgienne", "chroniqueur": "chroniqueuse",
    "collectionneur": "collectionneuse", "comédien": "comédienne", "commandant": "commandante",
    "commerçant": "commerçante", "compositeur": "compositrice", "comte": "comtesse", "conseiller": "conseillère",
    "conservateur": "conservatrice", "coureur": "coureuse", "cuisinier": "cuisinière", "danseur": "danseuse",
    "défenseur": "défenseuse", "député": "députée", "dessinateur": "dessinatrice", "directeur": "directrice",
    "duc": "duchesse", "écrivain": "écrivaine", "éditeur": "éditrice", "éducateur": "éducatrice",
    "électricien": "électricienne", "empereur": "impératrice", "enseignant": "enseignante",
    "entraîneur": "entraîneuse", "entrepreneur": "entrepreneuse", "espion": "espionne", "étudiant": "étudiante",
    "explorateur": "exploratrice", "fermier": "fermière", "fondateur": "fondatrice", "footballeur": "footballeuse",
    "gardien": "gardienne", "gouverneur": "gouverneure", "grimpeur": "grimpeuse", "historien": "historienne",
    "homme": "femme", "illustrateur": "illustratrice", "infirmier": "infirmière", "informaticien": "informaticienne",
    "ingénieur": "ingénieure", "instituteur": "institutrice", "interprète": "interprète", "inventeur": "inventrice",
    "joueur": "joueuse", "journaliste": "journaliste", "juriste": "juriste", "lanceur": "lanceuse",
    "lecteur": "lectrice", "magistrat": "magistrate", "maître": "maîtresse", "marchand": "marchande",
    "mathématicien": "mathématicienne", "meneur": "meneuse", "militant": "militante", "moine": "moniale",
    "monteur": "monteuse", "musicien": "musicienne", "nageur": "nageuse", "ouvrier": "ouvrière",
    "parolier": "parolière", "partisan": "partisane", "passeur": "passeuse", "patineur": "patineuse",
    "paysan": "paysanne", "pharmacien": "pharmacienne", "photographe": "photographe", "physicien": "physicienne",
    "poète": "poétesse", "policier": "policière", "politicien": "politicienne", "premier": "première",
    "présentateur": "présentatrice", "président": "présidente", "prince": "princesse", "producteur": "productrice",
    "professeur": "professeure", "programmeur": "programmeuse", "psychanalyste": "psychanalyste",
    "réalisateur": "réalisatrice", "receveur": "receveuse", "recteur": "rectrice", "rédacteur": "rédactrice",
    "religieux": "religieuse", "résistant": "résistante", "roi": "reine", "romancier": "romancière",
    "rouleur": "rouleuse", "sculpteur": "sculptrice", "secrétaire": "secrétaire", "sénateur": "sénatrice",
    "serveur": "serveuse", "skieur": "skieuse", "sprinteur": "sprinteuse", "surintendant": "surintendante",
    "tennisman": "joueuse de tennis", "théologien": "théologienne", "traducteur": "traductrice",
    "tireur": "tireuse", "vendeur": "vendeuse", "vice-président": "vice-présidente", "voyageur": "voyageuse",
    "compositeur-interprète": "compositrice-interprète",
}
_EXACT_FORMS = {  # label -> (masculine, feminine)
    "personnalité politique": ("homme politique", "femme politique"),
    "personnalité du monde des affaires": ("homme d'affaires", "femme d'affaires"),
    "homme d'affaires": ("homme d'affaires", "femme d'affaires"),
    "homme politique": ("homme politique", "femme politique"),
    "homme d'État": ("homme d'État", "femme d'État"),
}
_STOP_WORDS = {"de", "du", "des", "d'", "à", "au", "aux", "en", "pour", "sur", "dans", "et", "ou", "la", "le", "les",
               "chez", "par", "auprès"}


def _feminine_adjective(word: str) -> str:
    for masc, fem in (("eux", "euse"), ("if", "ive"), ("éen", "éenne"), ("ien", "ienne"), ("el", "elle"),
                      ("ier", "ière"), ("er", "ère"), ("é", "ée"), ("on", "onne"), ("ic", "ique")):
        if word.endswith(masc):
            return word[: -len(masc)] + fem
    if word.endswith("e") or not word[-1:].isalpha() or word[-1:] in "xy":
        return word
    return word + "e"  # -ais, -ois, -ain, -al, -and, -ant, -ent, -in, -u, -it, -ot ...


def _feminine_word(word: str) -> str | None:
    """Feminine of a (possibly hyphenated) head noun from the lexicon, None when unknown."""
    lower = word.lower()
    if lower in _FEMININE_FORMS:
        fem = _FEMININE_FORMS[lower]
    else:
        parts = lower.split("-")
        if len(parts) < 2 or not all(p in _FEMININE_FORMS for p in parts):
            return None
        fem = "-".join(_FEMININE_FORMS[p] for p in parts)
    return fem[:1].upper() + fem[1:] if word[:1].isupper() else fem


def _gendered_label(label: str, female: bool) -> str:
    if label in _EXACT_FORMS:
        return _EXACT_FORMS[label][1 if female else 0]
    if " ou " in label:  # "acteur ou actrice de cinéma", "chef ou cheffe d'orchestre"
        left, right = label.split(" ou ", 1)
        left_words, right_words = left.split(" "), right.split(" ")
        if female:
            return right
        return " ".join(left_words + right_words[len(left_words):])
    if not female:
        return label
    words = label.split(" ")
    head = _feminine_word(words[0])
    if head is None:
        return label
    out = [head]
    for index, word in enumerate(words[1:], start=1):
        if word in _STOP_WORDS or word.startswith(("d'", "l'")):
            out.extend(words[index:])
            break
        feminine = _feminine_word(word)
        out.append(feminine if feminine is not None else _feminine_adjective(word))
    return " ".join(out)


_GENDERED = frozenset({"P106", "P39", "P413"})


def value_form(prop: str, label: str, gender: str | None) -> str:
    """The value label agreeing with the subject: occupations, positions held and playing positions
    take the masculine or the feminine part of an epicene label ("acteur ou actrice" -> "acteur" /
    "actrice"), "personnalité politique" the usual "homme politique" / "femme politique", a
    masculine label its feminine for a woman ("inventeur" -> "inventrice", "député européen" ->
    "députée européenne"); other properties and unknown nouns are unchanged."""
    if prop not in _GENDERED:
        return label
    return _gendered_label(label, gender == FEMALE)


# --------------------------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------------------------

TEMPLATES: dict[str, tuple[str, ...]] = {
    "P106": (
        "{subject} est ⟦fr:attr⟧{value}.",
        "De profession, {subject} est ⟦fr:attr⟧{value}.",
        "{subject} exerce la profession ⟦fr:d'⟧{value}.",
        "{subject} est quelqu'un qui exerce le métier ⟦fr:d'⟧{value}.",
        "Quelle est la profession ⟦fr:d'⟧{subject} ? {value}.",
        "Q : Quel métier exerce {subject} ? R : {value}.",
        "D'après les sources publiques, {subject} est ⟦fr:attr⟧{value}.",
        "On sait ⟦fr:que⟧{subject} est ⟦fr:attr⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦fr:attr⟧{value} de profession.",
        "{value}, tel est le métier ⟦fr:d'⟧{subject}.",
        "Le métier ⟦fr:d'⟧{subject} est celui ⟦fr:d'⟧{value}.",
    ),
    "P27": (
        "Le pays de nationalité ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} est ⟦citoyen|citoyenne⟧ ⟦fr:du⟧{value}.",
        "{subject} a la citoyenneté ⟦fr:du⟧{value}.",
        "{subject} est une personne dont le pays de nationalité est ⟦fr:le⟧{value}.",
        "De quel pays {subject} est-⟦il|elle⟧ ⟦citoyen|citoyenne⟧ ? ⟦fr:du⟧{value}.",
        "Q : Quel est le pays de nationalité ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, {subject} est ⟦citoyen|citoyenne⟧ ⟦fr:du⟧{value}.",
        "Il est établi ⟦fr:que⟧{subject} est ⟦ressortissant|ressortissante⟧ ⟦fr:du⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ possède la citoyenneté ⟦fr:du⟧{value}.",
        "C'est ⟦fr:du⟧{value} ⟦fr:que⟧{subject} est ⟦citoyen|citoyenne⟧.",
        "La nationalité ⟦fr:d'⟧{subject} est celle ⟦fr:du⟧{value}.",
    ),
    "P19": (
        "{subject} est ⟦né|née⟧ ⟦fr:à⟧{value}.",
        "Le lieu de naissance ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} a vu le jour ⟦fr:à⟧{value}.",
        "{subject} est ⟦natif|native⟧ ⟦fr:de⟧{value}.",
        "{subject} est une personne dont le lieu de naissance est ⟦fr:le⟧{value}.",
        "Où {subject} est-⟦il|elle⟧ ⟦né|née⟧ ? ⟦fr:à⟧{value}.",
        "Q : Quel est le lieu de naissance ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "D'après les sources publiques, {subject} est ⟦né|née⟧ ⟦fr:à⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦né|née⟧ ⟦fr:à⟧{value}.",
        "C'est ⟦fr:à⟧{value} ⟦fr:que⟧{subject} est ⟦né|née⟧.",
        "La naissance ⟦fr:d'⟧{subject} a eu lieu ⟦fr:à⟧{value}.",
    ),
    "P20": (
        "{subject} est ⟦mort|morte⟧ ⟦fr:à⟧{value}.",
        "Le lieu de décès ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} est ⟦décédé|décédée⟧ ⟦fr:à⟧{value}.",
        "{subject} est une personne dont le lieu de décès est ⟦fr:le⟧{value}.",
        "Où {subject} est-⟦il|elle⟧ ⟦mort|morte⟧ ? ⟦fr:à⟧{value}.",
        "Q : Quel est le lieu de décès ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, {subject} est ⟦mort|morte⟧ ⟦fr:à⟧{value}.",
        "Il est établi ⟦fr:que⟧{subject} est ⟦décédé|décédée⟧ ⟦fr:à⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦mort|morte⟧ ⟦fr:à⟧{value}.",
        "C'est ⟦fr:à⟧{value} ⟦fr:que⟧{subject} est ⟦mort|morte⟧.",
        "La mort ⟦fr:d'⟧{subject} est survenue ⟦fr:à⟧{value}.",
    ),
    "P569": (
        "{subject} est ⟦né|née⟧ ⟦fr:date⟧{value}.",
        "La naissance ⟦fr:d'⟧{subject} a eu lieu ⟦fr:date⟧{value}.",
        "{subject} a vu le jour ⟦fr:date⟧{value}.",
        "{subject} est une personne qui a vu le jour ⟦fr:date⟧{value}.",
        "Quand {subject} est-⟦il|elle⟧ ⟦né|née⟧ ? ⟦fr:date⟧{value}.",
        "Q : Quelle est la date de naissance ⟦fr:d'⟧{subject} ? R : {value}.",
        "D'après les sources publiques, {subject} est ⟦né|née⟧ ⟦fr:date⟧{value}.",
        "On sait ⟦fr:que⟧{subject} est ⟦venu|venue⟧ au monde ⟦fr:date⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦né|née⟧ ⟦fr:date⟧{value}.",
        "C'est ⟦fr:date⟧{value} ⟦fr:que⟧{subject} est ⟦né|née⟧.",
        "Date de naissance ⟦fr:d'⟧{subject} : {value}.",
    ),
    "P570": (
        "{subject} est ⟦mort|morte⟧ ⟦fr:date⟧{value}.",
        "Le décès ⟦fr:d'⟧{subject} a eu lieu ⟦fr:date⟧{value}.",
        "{subject} est ⟦décédé|décédée⟧ ⟦fr:date⟧{value}.",
        "{subject} est une personne dont le décès est survenu ⟦fr:date⟧{value}.",
        "Quand {subject} est-⟦il|elle⟧ ⟦mort|morte⟧ ? ⟦fr:date⟧{value}.",
        "Q : Quelle est la date de décès ⟦fr:d'⟧{subject} ? R : {value}.",
        "Selon les sources publiques, {subject} est ⟦mort|morte⟧ ⟦fr:date⟧{value}.",
        "Il est établi ⟦fr:que⟧{subject} est ⟦décédé|décédée⟧ ⟦fr:date⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦mort|morte⟧ ⟦fr:date⟧{value}.",
        "C'est ⟦fr:date⟧{value} ⟦fr:que⟧{subject} est ⟦mort|morte⟧.",
        "Date de décès ⟦fr:d'⟧{subject} : {value}.",
    ),
    "P413": (
        "{subject} joue au poste ⟦fr:d'⟧{value}.",
        "Le poste ⟦fr:d'⟧{subject} est celui ⟦fr:d'⟧{value}.",
        "{subject} évolue au poste ⟦fr:d'⟧{value}.",
        "{subject} est quelqu'un qui occupe le poste ⟦fr:d'⟧{value}.",
        "À quel poste joue {subject} ? Au poste ⟦fr:d'⟧{value}.",
        "Q : Quel est le poste ⟦fr:d'⟧{subject} ? R : {value}.",
        "D'après les sources publiques, {subject} joue au poste ⟦fr:d'⟧{value}.",
        "On sait ⟦fr:que⟧{subject} évolue au poste ⟦fr:d'⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ joue au poste ⟦fr:d'⟧{value}.",
        "C'est au poste ⟦fr:d'⟧{value} que joue {subject}.",
        "{subject} occupe le poste ⟦fr:d'⟧{value}.",
    ),
    "P509": (
        "La cause de la mort ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} est ⟦mort|morte⟧ ⟦fr:du⟧{value}.",
        "{subject} a succombé ⟦fr:au⟧{value}.",
        "{subject} est une personne dont la mort est due ⟦fr:au⟧{value}.",
        "De quoi {subject} est-⟦il|elle⟧ ⟦mort|morte⟧ ? ⟦fr:du⟧{value}.",
        "Q : Quelle est la cause du décès ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, {subject} est ⟦décédé|décédée⟧ des suites ⟦fr:du⟧{value}.",
        "Il est établi que la mort ⟦fr:d'⟧{subject} a été causée par ⟦fr:le⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ a été ⟦emporté|emportée⟧ par ⟦fr:le⟧{value}.",
        "C'est ⟦fr:le⟧{value} qui a causé la mort ⟦fr:d'⟧{subject}.",
        "Le décès ⟦fr:d'⟧{subject} est dû ⟦fr:au⟧{value}.",
    ),
    "P1412": (
        "{subject} s'exprime en {value}.",
        "Parmi les langues que pratique {subject} figure ⟦fr:le⟧{value}.",
        "{subject} fait usage ⟦fr:du⟧{value}.",
        "{subject} est une personne dont l'une des langues est ⟦fr:le⟧{value}.",
        "Quelle langue {subject} pratique-t-⟦il|elle⟧ ? ⟦fr:le⟧{value}.",
        "Q : En quelle langue {subject} s'exprime-t-⟦il|elle⟧ ? R : en {value}.",
        "D'après les sources publiques, {subject} s'exprime en {value}.",
        "On sait ⟦fr:que⟧{subject} pratique ⟦fr:le⟧{value}.",
        "Quant à {subject}, l'une de ses langues est ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} fait partie des langues que pratique {subject}.",
        "Pour s'exprimer, {subject} utilise notamment ⟦fr:le⟧{value}.",
    ),
    "P103": (
        "La langue maternelle ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} a pour langue maternelle ⟦fr:le⟧{value}.",
        "{subject} a pour langue natale ⟦fr:le⟧{value}.",
        "{subject} est une personne dont la langue maternelle est ⟦fr:le⟧{value}.",
        "Quelle est la langue maternelle ⟦fr:d'⟧{subject} ? C'est ⟦fr:le⟧{value}.",
        "Q : Langue maternelle ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, la langue maternelle ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} a pour langue maternelle ⟦fr:le⟧{value}.",
        "Quant à {subject}, sa langue maternelle est ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} est la langue maternelle ⟦fr:d'⟧{subject}.",
        "La première langue apprise par {subject} est ⟦fr:le⟧{value}.",
    ),
    "P108": (
        "L'employeur ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} travaille pour ⟦fr:le⟧{value}.",
        "{subject} est ⟦employé|employée⟧ par ⟦fr:le⟧{value}.",
        "{subject} est une personne dont l'employeur est ⟦fr:le⟧{value}.",
        "Pour qui {subject} travaille-t-⟦il|elle⟧ ? Pour ⟦fr:le⟧{value}.",
        "Q : Qui emploie {subject} ? R : ⟦fr:le⟧{value}.",
        "D'après les sources publiques, {subject} travaille pour ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} est ⟦salarié|salariée⟧ ⟦fr:du⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ a pour employeur ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} emploie {subject}.",
        "{subject} fait partie du personnel ⟦fr:du⟧{value}.",
    ),
    "P39": (
        "{subject} a occupé la fonction ⟦fr:d'⟧{value}.",
        "{subject} a été ⟦fr:attr⟧{value}.",
        "{subject} a exercé les fonctions ⟦fr:d'⟧{value}.",
        "{subject} est une personne qui a occupé le poste ⟦fr:d'⟧{value}.",
        "Quelle fonction {subject} a-t-⟦il|elle⟧ occupée ? Celle ⟦fr:d'⟧{value}.",
        "Q : Quel poste {subject} a-t-⟦il|elle⟧ occupé ? R : {value}.",
        "Selon les sources publiques, {subject} a occupé la fonction ⟦fr:d'⟧{value}.",
        "Il est établi ⟦fr:que⟧{subject} a été ⟦fr:attr⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ a occupé le poste ⟦fr:d'⟧{value}.",
        "C'est la fonction ⟦fr:d'⟧{value} qu'a occupée {subject}.",
        "Parmi les fonctions occupées par {subject} figure celle ⟦fr:d'⟧{value}.",
    ),
    "P69": (
        "{subject} a fait ses études ⟦fr:à⟧{value}.",
        "{subject} a étudié ⟦fr:à⟧{value}.",
        "{subject} a été ⟦formé|formée⟧ ⟦fr:à⟧{value}.",
        "{subject} est une personne qui a fréquenté ⟦fr:le⟧{value}.",
        "Où {subject} a-t-⟦il|elle⟧ fait ses études ? ⟦fr:à⟧{value}.",
        "Q : Quel établissement {subject} a-t-⟦il|elle⟧ fréquenté ? R : ⟦fr:le⟧{value}.",
        "D'après les sources publiques, {subject} a étudié ⟦fr:à⟧{value}.",
        "On sait ⟦fr:que⟧{subject} a fait ses études ⟦fr:à⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ a suivi ses études ⟦fr:à⟧{value}.",
        "C'est ⟦fr:à⟧{value} ⟦fr:que⟧{subject} a fait ses études.",
        "{subject} est ⟦un ancien élève|une ancienne élève⟧ ⟦fr:du⟧{value}.",
    ),
    "P3373": (
        "{subject} est ⟦le frère|la sœur⟧ ⟦fr:d'⟧{value}.",
        "{subject} compte {value} parmi ses frères et sœurs.",
        "La fratrie ⟦fr:d'⟧{subject} comprend {value}.",
        "{subject} est une personne dont la fratrie comprend {value}.",
        "De qui {subject} est-⟦il|elle⟧ ⟦le frère|la sœur⟧ ? ⟦fr:d'⟧{value}.",
        "Q : Qui fait partie de la fratrie ⟦fr:d'⟧{subject} ? R : {value}.",
        "Selon les sources publiques, {subject} est ⟦le frère|la sœur⟧ ⟦fr:d'⟧{value}.",
        "On sait ⟦fr:que⟧{subject} et {value} sont de la même fratrie.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦le frère|la sœur⟧ ⟦fr:d'⟧{value}.",
        "{value} compte parmi les frères et sœurs ⟦fr:d'⟧{subject}.",
        "Parmi les frères et sœurs ⟦fr:d'⟧{subject} figure {value}.",
    ),
    "P26": (
        "{subject} est ⟦marié|mariée⟧ à {value}.",
        "Le conjoint ⟦fr:d'⟧{subject} est {value}.",
        "{subject} est ⟦l'époux|l'épouse⟧ ⟦fr:d'⟧{value}.",
        "{subject} est quelqu'un dont le conjoint est {value}.",
        "À qui {subject} est-⟦il|elle⟧ ⟦marié|mariée⟧ ? À {value}.",
        "Q : Qui est le conjoint ⟦fr:d'⟧{subject} ? R : {value}.",
        "D'après les sources publiques, {subject} est ⟦marié|mariée⟧ à {value}.",
        "Il est établi ⟦fr:que⟧{subject} est ⟦marié|mariée⟧ à {value}.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦marié|mariée⟧ à {value}.",
        "C'est à {value} ⟦fr:que⟧{subject} est ⟦marié|mariée⟧.",
        "{subject} est ⟦uni|unie⟧ par les liens du mariage à {value}.",
    ),
    "P101": (
        "Le domaine d'activité ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} travaille dans le domaine ⟦fr:du⟧{value}.",
        "{subject} a pour domaine d'activité ⟦fr:le⟧{value}.",
        "{subject} est une personne dont le domaine d'activité est ⟦fr:le⟧{value}.",
        "Dans quel domaine {subject} travaille-t-⟦il|elle⟧ ? Dans celui ⟦fr:du⟧{value}.",
        "Q : Quel est le domaine d'activité ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, {subject} travaille dans le domaine ⟦fr:du⟧{value}.",
        "On sait ⟦fr:que⟧{subject} se consacre ⟦fr:au⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ est ⟦actif|active⟧ dans le domaine ⟦fr:du⟧{value}.",
        "C'est dans le domaine ⟦fr:du⟧{value} que travaille {subject}.",
        "L'activité ⟦fr:d'⟧{subject} relève du domaine ⟦fr:du⟧{value}.",
    ),
    "P463": (
        "{subject} est membre ⟦fr:du⟧{value}.",
        "{subject} fait partie ⟦fr:du⟧{value}.",
        "{subject} compte parmi les membres ⟦fr:du⟧{value}.",
        "{subject} est une personne qui appartient ⟦fr:au⟧{value}.",
        "De quelle organisation {subject} est-⟦il|elle⟧ membre ? ⟦fr:du⟧{value}.",
        "Q : À quelle organisation appartient {subject} ? R : ⟦fr:au⟧{value}.",
        "D'après les sources publiques, {subject} est membre ⟦fr:du⟧{value}.",
        "Il est établi ⟦fr:que⟧{subject} fait partie ⟦fr:du⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ est membre ⟦fr:du⟧{value}.",
        "⟦fr:le⟧{value} compte {subject} parmi ses membres.",
        "{subject} a le statut de membre ⟦fr:du⟧{value}.",
    ),
    "P641": (
        "{subject} pratique ⟦fr:le⟧{value}.",
        "Le sport ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} est ⟦un sportif|une sportive⟧ qui pratique ⟦fr:le⟧{value}.",
        "{subject} est une personne dont le sport est ⟦fr:le⟧{value}.",
        "Quel sport {subject} pratique-t-⟦il|elle⟧ ? ⟦fr:le⟧{value}.",
        "Q : Quelle discipline sportive pratique {subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, {subject} pratique ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} s'adonne ⟦fr:au⟧{value}.",
        "Quant à {subject}, son sport est ⟦fr:le⟧{value}.",
        "C'est ⟦fr:le⟧{value} que pratique {subject}.",
        "La discipline sportive ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
    ),
    "P264": (
        "La maison de disques ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} est sous contrat avec ⟦fr:le⟧{value}.",
        "{subject} enregistre chez ⟦fr:le⟧{value}.",
        "{subject} est une personne dont le label discographique est ⟦fr:le⟧{value}.",
        "Chez quel label {subject} enregistre-t-⟦il|elle⟧ ? Chez ⟦fr:le⟧{value}.",
        "Q : Quelle est la maison de disques ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "D'après les sources publiques, {subject} est sous contrat avec ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} publie ses disques chez ⟦fr:le⟧{value}.",
        "Quant à {subject}, son label discographique est ⟦fr:le⟧{value}.",
        "C'est ⟦fr:le⟧{value} qui édite les disques ⟦fr:d'⟧{subject}.",
        "{subject} est ⟦signé|signée⟧ chez ⟦fr:le⟧{value}.",
    ),
    "P1303": (
        "L'instrument ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} a pour instrument ⟦fr:le⟧{value}.",
        "L'instrument de musique ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} est une personne dont l'instrument est ⟦fr:le⟧{value}.",
        "Quel est l'instrument ⟦fr:d'⟧{subject} ? C'est ⟦fr:le⟧{value}.",
        "Q : Quel est l'instrument de musique ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, l'instrument ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} a pour instrument ⟦fr:le⟧{value}.",
        "Quant à {subject}, son instrument est ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} est l'instrument ⟦fr:d'⟧{subject}.",
        "En musique, l'instrument ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
    ),
    "P22": (
        "Le père ⟦fr:d'⟧{subject} est {value}.",
        "{subject} a pour père {value}.",
        "Le nom du père ⟦fr:d'⟧{subject} est {value}.",
        "{subject} est une personne dont le père est {value}.",
        "Qui est le père ⟦fr:d'⟧{subject} ? C'est {value}.",
        "Q : Comment s'appelle le père ⟦fr:d'⟧{subject} ? R : {value}.",
        "Selon les sources publiques, le père ⟦fr:d'⟧{subject} est {value}.",
        "On sait ⟦fr:que⟧{subject} a pour père {value}.",
        "Quant à {subject}, son père est {value}.",
        "{value} est le père ⟦fr:d'⟧{subject}.",
        "{subject} est ⟦né|née⟧ d'un père nommé {value}.",
    ),
    "P25": (
        "La mère ⟦fr:d'⟧{subject} est {value}.",
        "{subject} a pour mère {value}.",
        "Le nom de la mère ⟦fr:d'⟧{subject} est {value}.",
        "{subject} est une personne dont la mère est {value}.",
        "Qui est la mère ⟦fr:d'⟧{subject} ? C'est {value}.",
        "Q : Comment s'appelle la mère ⟦fr:d'⟧{subject} ? R : {value}.",
        "Selon les sources publiques, la mère ⟦fr:d'⟧{subject} est {value}.",
        "On sait ⟦fr:que⟧{subject} a pour mère {value}.",
        "Quant à {subject}, sa mère est {value}.",
        "{value} est la mère ⟦fr:d'⟧{subject}.",
        "{subject} est ⟦né|née⟧ d'une mère nommée {value}.",
    ),
    "P40": (
        "{subject} a pour enfant {value}.",
        "{subject} est ⟦le père|la mère⟧ ⟦fr:d'⟧{value}.",
        "{subject} a un enfant nommé {value}.",
        "{subject} est une personne dont {value} est l'enfant.",
        "Qui est un enfant ⟦fr:d'⟧{subject} ? {value}.",
        "Q : Qui compte parmi les enfants ⟦fr:d'⟧{subject} ? R : {value}.",
        "D'après les sources publiques, {subject} a pour enfant {value}.",
        "On sait ⟦fr:que⟧{subject} est ⟦le père|la mère⟧ ⟦fr:d'⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ a pour enfant {value}.",
        "{value} est un enfant ⟦fr:d'⟧{subject}.",
        "Parmi les enfants ⟦fr:d'⟧{subject} figure {value}.",
    ),
    "P102": (
        "{subject} est membre ⟦fr:du⟧{value}.",
        "Le parti politique ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} milite au sein ⟦fr:du⟧{value}.",
        "{subject} est une personne qui appartient ⟦fr:au⟧{value}.",
        "À quel parti {subject} appartient-⟦il|elle⟧ ? ⟦fr:au⟧{value}.",
        "Q : De quel parti politique {subject} est-⟦il|elle⟧ membre ? R : ⟦fr:du⟧{value}.",
        "D'après les sources publiques, {subject} est membre ⟦fr:du⟧{value}.",
        "On sait ⟦fr:que⟧{subject} est ⟦affilié|affiliée⟧ ⟦fr:au⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ fait partie ⟦fr:du⟧{value}.",
        "⟦fr:le⟧{value} compte {subject} parmi ses membres.",
        "{subject} a pour parti politique ⟦fr:le⟧{value}.",
    ),
    "P166": (
        "{subject} a reçu ⟦fr:le⟧{value}.",
        "{subject} s'est vu décerner ⟦fr:le⟧{value}.",
        "{subject} est ⟦lauréat|lauréate⟧ ⟦fr:du⟧{value}.",
        "{subject} est une personne qui a obtenu ⟦fr:le⟧{value}.",
        "Quelle distinction {subject} a-t-⟦il|elle⟧ reçue ? ⟦fr:le⟧{value}.",
        "Q : Quelle récompense a été décernée à {subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, {subject} a reçu ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} a été ⟦récompensé|récompensée⟧ par ⟦fr:le⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ a obtenu ⟦fr:le⟧{value}.",
        "Parmi les distinctions reçues par {subject} figure ⟦fr:le⟧{value}.",
        "{subject} compte ⟦fr:le⟧{value} parmi ses distinctions.",
    ),
    "P54": (
        "{subject} joue pour ⟦fr:le⟧{value}.",
        "{subject} fait partie de l'effectif ⟦fr:du⟧{value}.",
        "{subject} est membre ⟦fr:du⟧{value}.",
        "{subject} est une personne qui évolue sous les couleurs ⟦fr:du⟧{value}.",
        "Pour quelle équipe {subject} joue-t-⟦il|elle⟧ ? Pour ⟦fr:le⟧{value}.",
        "Q : Dans quelle équipe évolue {subject} ? R : ⟦fr:le⟧{value}.",
        "D'après les sources publiques, {subject} joue pour ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} porte les couleurs ⟦fr:du⟧{value}.",
        "Quant à {subject}, son équipe est ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} compte {subject} dans son effectif.",
        "{subject} défend les couleurs ⟦fr:du⟧{value}.",
    ),
    "P119": (
        "{subject} est ⟦inhumé|inhumée⟧ ⟦fr:à⟧{value}.",
        "Le lieu de sépulture ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} repose ⟦fr:à⟧{value}.",
        "{subject} est une personne dont la tombe se trouve ⟦fr:à⟧{value}.",
        "Où {subject} est-⟦il|elle⟧ ⟦enterré|enterrée⟧ ? ⟦fr:à⟧{value}.",
        "Q : Où se trouve la sépulture ⟦fr:d'⟧{subject} ? R : ⟦fr:à⟧{value}.",
        "Selon les sources publiques, {subject} est ⟦enterré|enterrée⟧ ⟦fr:à⟧{value}.",
        "On sait ⟦fr:que⟧{subject} a été ⟦inhumé|inhumée⟧ ⟦fr:à⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ repose ⟦fr:à⟧{value}.",
        "C'est ⟦fr:à⟧{value} que repose {subject}.",
        "La dernière demeure ⟦fr:d'⟧{subject} se trouve ⟦fr:à⟧{value}.",
    ),
    "P140": (
        "La religion ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} a pour religion ⟦fr:le⟧{value}.",
        "{subject} adhère ⟦fr:au⟧{value}.",
        "{subject} est une personne dont la religion est ⟦fr:le⟧{value}.",
        "Quelle est la religion ⟦fr:d'⟧{subject} ? C'est ⟦fr:le⟧{value}.",
        "Q : À quelle religion {subject} appartient-⟦il|elle⟧ ? R : ⟦fr:au⟧{value}.",
        "Selon les sources publiques, la religion ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} se réclame ⟦fr:du⟧{value}.",
        "Quant à {subject}, sa religion est ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} est la religion ⟦fr:d'⟧{subject}.",
        "Sur le plan religieux, {subject} se rattache ⟦fr:au⟧{value}.",
    ),
    "P136": (
        "Le genre artistique ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} œuvre dans ⟦fr:le⟧{value}.",
        "{subject} a pour genre artistique ⟦fr:le⟧{value}.",
        "{subject} est une personne dont le genre artistique est ⟦fr:le⟧{value}.",
        "Dans quel genre {subject} travaille-t-⟦il|elle⟧ ? Dans ⟦fr:le⟧{value}.",
        "Q : Quel est le genre artistique ⟦fr:d'⟧{subject} ? R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, le genre artistique ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} œuvre dans le genre ⟦fr:du⟧{value}.",
        "Quant à {subject}, son genre artistique est ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} est le genre artistique ⟦fr:d'⟧{subject}.",
        "L'œuvre ⟦fr:d'⟧{subject} relève ⟦fr:du⟧{value}.",
    ),
    "P937": (
        "{subject} travaille ⟦fr:à⟧{value}.",
        "Le lieu de travail ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} exerce son activité ⟦fr:à⟧{value}.",
        "{subject} est une personne dont le lieu de travail est ⟦fr:le⟧{value}.",
        "Où {subject} travaille-t-⟦il|elle⟧ ? ⟦fr:à⟧{value}.",
        "Q : Où se situe le lieu de travail ⟦fr:d'⟧{subject} ? R : ⟦fr:à⟧{value}.",
        "D'après les sources publiques, {subject} travaille ⟦fr:à⟧{value}.",
        "On sait ⟦fr:que⟧{subject} exerce ⟦fr:à⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ travaille ⟦fr:à⟧{value}.",
        "C'est ⟦fr:à⟧{value} que travaille {subject}.",
        "L'activité professionnelle ⟦fr:d'⟧{subject} se déroule ⟦fr:à⟧{value}.",
    ),
    "P551": (
        "{subject} réside ⟦fr:à⟧{value}.",
        "Le lieu de résidence ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "{subject} habite ⟦fr:à⟧{value}.",
        "{subject} est une personne dont le domicile se trouve ⟦fr:à⟧{value}.",
        "Où {subject} réside-t-⟦il|elle⟧ ? ⟦fr:à⟧{value}.",
        "Q : Où vit {subject} ? R : ⟦fr:à⟧{value}.",
        "Selon les sources publiques, {subject} réside ⟦fr:à⟧{value}.",
        "On sait ⟦fr:que⟧{subject} vit ⟦fr:à⟧{value}.",
        "Quant à {subject}, ⟦il|elle⟧ habite ⟦fr:à⟧{value}.",
        "C'est ⟦fr:à⟧{value} que réside {subject}.",
        "{subject} est ⟦domicilié|domiciliée⟧ ⟦fr:à⟧{value}.",
    ),
    "P800": (
        "Une œuvre notable ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "Parmi les œuvres principales ⟦fr:d'⟧{subject} figure ⟦fr:le⟧{value}.",
        "{subject} est ⟦connu|connue⟧ notamment pour ⟦fr:le⟧{value}.",
        "{subject} est une personne dont l'une des œuvres marquantes est ⟦fr:le⟧{value}.",
        "Quelles sont les œuvres notables ⟦fr:d'⟧{subject} ? Entre autres, ⟦fr:le⟧{value}.",
        "Q : Citez une œuvre majeure ⟦fr:d'⟧{subject}. R : ⟦fr:le⟧{value}.",
        "Selon les sources publiques, une œuvre notable ⟦fr:d'⟧{subject} est ⟦fr:le⟧{value}.",
        "On sait ⟦fr:que⟧{subject} compte ⟦fr:le⟧{value} parmi ses œuvres majeures.",
        "Quant à {subject}, l'une de ses œuvres principales est ⟦fr:le⟧{value}.",
        "⟦fr:le⟧{value} figure parmi les œuvres notables ⟦fr:d'⟧{subject}.",
        "L'œuvre ⟦fr:d'⟧{subject} comprend notamment ⟦fr:le⟧{value}.",
    ),
}

CONTEXT_FORMS: dict[str, str] = {
    "P106": "⟦Il|Elle⟧ est ⟦fr:attr⟧{value}.",
    "P27": "Son pays de nationalité est ⟦fr:le⟧{value}.",
    "P19": "⟦Il|Elle⟧ est ⟦né|née⟧ ⟦fr:à⟧{value}.",
    "P20": "⟦Il|Elle⟧ est ⟦mort|morte⟧ ⟦fr:à⟧{value}.",
    "P569": "⟦Il|Elle⟧ est ⟦né|née⟧ ⟦fr:date⟧{value}.",
    "P570": "⟦Il|Elle⟧ est ⟦mort|morte⟧ ⟦fr:date⟧{value}.",
    "P413": "⟦Il|Elle⟧ joue au poste ⟦fr:d'⟧{value}.",
    "P509": "La cause de sa mort est ⟦fr:le⟧{value}.",
    "P1412": "⟦Il|Elle⟧ s'exprime en {value}.",
    "P103": "Sa langue maternelle est ⟦fr:le⟧{value}.",
    "P108": "Son employeur est ⟦fr:le⟧{value}.",
    "P39": "⟦Il|Elle⟧ a occupé la fonction ⟦fr:d'⟧{value}.",
    "P69": "⟦Il|Elle⟧ a fait ses études ⟦fr:à⟧{value}.",
    "P3373": "⟦Il|Elle⟧ est ⟦le frère|la sœur⟧ ⟦fr:d'⟧{value}.",
    "P26": "⟦Il|Elle⟧ est ⟦marié|mariée⟧ à {value}.",
    "P101": "Son domaine d'activité est ⟦fr:le⟧{value}.",
    "P463": "⟦Il|Elle⟧ est membre ⟦fr:du⟧{value}.",
    "P641": "⟦Il|Elle⟧ pratique ⟦fr:le⟧{value}.",
    "P264": "Sa maison de disques est ⟦fr:le⟧{value}.",
    "P1303": "Son instrument est ⟦fr:le⟧{value}.",
    "P22": "Son père est {value}.",
    "P25": "Sa mère est {value}.",
    "P40": "⟦Il|Elle⟧ a pour enfant {value}.",
    "P102": "⟦Il|Elle⟧ est membre ⟦fr:du⟧{value}.",
    "P166": "⟦Il|Elle⟧ a reçu ⟦fr:le⟧{value}.",
    "P54": "⟦Il|Elle⟧ joue pour ⟦fr:le⟧{value}.",
    "P119": "⟦Il|Elle⟧ est ⟦inhumé|inhumée⟧ ⟦fr:à⟧{value}.",
    "P140": "Sa religion est ⟦fr:le⟧{value}.",
    "P136": "Son genre artistique est ⟦fr:le⟧{value}.",
    "P937": "⟦Il|Elle⟧ travaille ⟦fr:à⟧{value}.",
    "P551": "⟦Il|Elle⟧ réside ⟦fr:à⟧{value}.",
    "P800": "Une de ses œuvres notables est ⟦fr:le⟧{value}.",
}

PACK = register(LanguagePack(
    code="fr",
    name="French",
    native_name="français",
    templates=TEMPLATES,
    context_forms=CONTEXT_FORMS,
    generic_subject=generic_subject,
    inflect=inflect,
    value_form=value_form,
    format_date=format_date,
))
