"""When two labels name the same thing: the one comparison used for names and values."""

import re
import unicodedata


def normalize_label(text: str) -> str:
    """Letters and digits as space-separated words, NFKC, casefolded ("U.S.A." ~ "u s a")."""
    text = unicodedata.normalize("NFKC", str(text)).casefold()
    return " ".join(re.findall(r"\w+", text))
