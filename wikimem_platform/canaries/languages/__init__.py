"""Canaries beyond English: hand-written templates and grammar per language (`grammar`).

- ``pack(code)`` -> the `LanguagePack` of "de", "fr" or "pl" (None for "en": English templates
  are built from the property table by rules).
- ``PERSON_PROPERTIES`` -> the properties every pack writes templates for (the most common
  person properties of Wikidata).
- ``check_languages(codes)`` -> the languages a request names, checked (English and the packed ones).
- ``pack_problems(pack)`` -> what is structurally wrong with a pack's templates (none, for a
  shipped pack: the tests hold every pack to it).
"""

from wikimem_platform.canaries.languages.grammar import (
    agree,
    FEMALE,
    inflect_marked,
    LanguagePack,
)
from wikimem_platform.canaries.languages.packs import (
    check_languages,
    ENGLISH,
    language_name,
    N_WORDINGS,
    pack,
    pack_problems,
    PACKED_LANGUAGES,
    PERSON_PROPERTIES,
    REQUEST_LANGUAGES,
)
from wikimem_platform.vocabulary import MALE

__all__ = [
    "ENGLISH", "FEMALE", "MALE", "N_WORDINGS", "PACKED_LANGUAGES", "PERSON_PROPERTIES", "REQUEST_LANGUAGES",
    "LanguagePack", "agree", "check_languages", "inflect_marked", "language_name", "pack", "pack_problems",
]
