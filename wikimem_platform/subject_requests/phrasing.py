"""How a letter speaks of a person and their facts.

A letter is addressed to whoever asked: the person themselves ("your place of birth"), or, when
the person has died, someone asking about them (an heir, an estate): then the letter speaks of
the person in the third person by name ("Douglas Adams's place of birth"), never "your".
Facts are named by phrases written per property, not by Wikidata's labels ("educated at" is a
label, "where you studied" a phrase); a property without a phrase is named by its label in
quotation marks, which stays grammatical.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

DATE_OF_DEATH = "P570"

# {poss}: "your" / "Douglas Adams's"; {who}: "you" / "Douglas Adams" (subject or object).
PHRASES: dict[str, str] = {
    "P21": "{poss} sex or gender",
    "P27": "{poss} citizenship",
    "P19": "{poss} place of birth",
    "P20": "{poss} place of death",
    "P569": "{poss} date of birth",
    "P570": "{poss} date of death",
    "P509": "{poss} cause of death",
    "P1196": "{poss} manner of death",
    "P119": "{poss} place of burial",
    "P106": "{poss} occupation",
    "P101": "{poss} field of work",
    "P108": "{poss} employer",
    "P69": "where {who} studied",
    "P512": "{poss} academic degree",
    "P184": "{poss} doctoral advisor",
    "P185": "{poss} doctoral students",
    "P1066": "whom {who} studied under",
    "P802": "{poss} students",
    "P26": "{poss} spouse",
    "P451": "{poss} unmarried partner",
    "P22": "{poss} father",
    "P25": "{poss} mother",
    "P40": "{poss} children",
    "P3373": "{poss} siblings",
    "P1038": "{poss} relatives",
    "P53": "{poss} family",
    "P735": "{poss} given name",
    "P734": "{poss} family name",
    "P1559": "{poss} name in {poss} native language",
    "P742": "{poss} pseudonym",
    "P1449": "{poss} nickname",
    "P103": "{poss} native language",
    "P1412": "{poss} languages, spoken or written",
    "P6886": "{poss} languages of work",
    "P140": "{poss} religion or worldview",
    "P172": "{poss} ethnic group",
    "P91": "{poss} sexual orientation",
    "P1050": "{poss} medical condition",
    "P2048": "{poss} height",
    "P2067": "{poss} body mass",
    "P551": "{poss} place of residence",
    "P937": "{poss} place of work",
    "P102": "{poss} political party",
    "P39": "a position {who} held",
    "P463": "{poss} membership of an organisation",
    "P166": "an award {who} received",
    "P1411": "a nomination {who} received",
    "P800": "{poss} notable work",
    "P135": "{poss} artistic movement",
    "P136": "{poss} genre",
    "P1303": "{poss} instrument",
    "P264": "{poss} record label",
    "P412": "{poss} voice type",
    "P641": "{poss} sport",
    "P54": "a sports team {who} played for",
    "P413": "{poss} playing position",
    "P1532": "{poss} sporting nationality",
    "P118": "{poss} league",
    "P286": "{poss} head coach",
    "P241": "{poss} military branch",
    "P410": "{poss} military rank",
    "P607": "a conflict {who} took part in",
    "P1344": "an event {who} took part in",
    "P1340": "{poss} eye colour",
    "P1884": "{poss} hair colour",
    "P97": "{poss} title of nobility",
    "P511": "{poss} honorific",
    "P1035": "{poss} honorific suffix",
    "P1327": "{poss} partner in business or sport",
    "P710": "an event {who} took part in",
}


@dataclass(frozen=True)
class Addressee:
    """Who the letter speaks of: the requester themselves, or a deceased person by name."""

    name: str
    date_of_death: str | None = None  # as given (extract or facts file); None: living, addressed as "you"

    @property
    def deceased(self) -> bool:
        return self.date_of_death is not None

    @property
    def who(self) -> str:
        return self.name if self.deceased else "you"

    @property
    def possessive(self) -> str:
        return f"{self.name}\u2019s" if self.deceased else "your"

    def fact(self, prop: str, label: str) -> str:
        """A fact as a noun phrase: "your place of birth", "Douglas Adams's cause of death"."""
        template = PHRASES.get(prop)
        if template is not None:
            return template.format(poss=self.possessive, who=self.who)
        return f"what is recorded about {self.who} as \u201c{label}\u201d"


def addressee(subject_label: str, facts: pd.DataFrame | None = None, date_of_death: str | None = None) -> Addressee:
    """The addressee of a request's letter: deceased when a date of death is given or in the facts."""
    if date_of_death is None and facts is not None and len(facts) and "property" in facts:
        dead = facts[facts["property"] == DATE_OF_DEATH]
        if len(dead):
            row = dead.iloc[0]
            date_of_death = str(row["value_label"] if "value_label" in dead and pd.notna(row["value_label"]) else row["value"])
    return Addressee(str(subject_label), date_of_death)


def from_document(subject: Mapping) -> Addressee:
    """The addressee stored with an answer (answer.json's "subject")."""
    return Addressee(str(subject["label"]), subject.get("date_of_death"))
