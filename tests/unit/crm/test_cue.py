"""Hand-computed cases for the CRM overlap cue (Luo et al. App. D)."""

import random

import pytest

from wikimem_platform.crm.cue import (cue_for, email_cue, email_cue_parts, lcs_substring_len, norm,
                                  norm_digits, phone_cue, strip_tld, text_cue)


def brute_lcs(a: str, b: str) -> int:
    """Textbook O(n*m) dynamic programme for the longest common substring."""
    best = 0
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def test_norm():
    # NFKC folds full-width letters and the "fi" ligature; lowercase; punctuation/space dropped
    assert norm("ＪＡＮＥ Doe!") == "janedoe"
    assert norm("ﬁnance-Dept.") == "financedept"
    assert norm("Müller, 42") == "muller42"          # accents of Latin letters ignored (issue 39)
    assert norm("Лев Толстой") == "левтолстой"       # other scripts' letters stay
    assert norm("李小龍 (1940)") == "李小龍1940"
    assert norm("") == "" and norm("+-. ") == ""
    assert norm_digits("+7 (912) 345-67-89") == "79123456789"
    assert norm_digits("٠١٢٣ ①") == "01231"           # Arabic-Indic digits -> ASCII; NFKC ① -> 1


def test_lcs_against_brute_force():
    rng = random.Random(0)
    for _ in range(300):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 30)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 30)))
        assert lcs_substring_len(a, b) == brute_lcs(a, b)
    # long strings: with difflib's autojunk the frequent "a" would be junk and this would fail
    assert lcs_substring_len("a" * 300 + "b", "a" * 250) == 250


def test_text_cue_by_hand():
    # "My name is Jane Doe" -> "mynameisjanedoe"; target "janedoe" (7) fully inside -> 7/7
    assert text_cue("My name is Jane Doe", "Jane Doe") == 1.0
    # "contactjohnsmith" vs "jsmith" (6): longest common piece "smith" (5) -> 5/6
    assert text_cue("Contact John Smith", "jsmith") == pytest.approx(5 / 6)
    # direction matters: |LCS| / |norm(target)|: target "Jane Doe Smith" (12), prompt "Jane" (4)
    assert text_cue("Jane", "Jane Doe Smith") == pytest.approx(4 / 12)
    # unicode: full-width prompt matches ASCII target; ligature matches "fi"
    assert text_cue("ＪＡＮＥ", "jane") == 1.0
    assert text_cue("the ﬁnance office", "Finance") == 1.0
    # no overlap at all
    assert text_cue("xyz", "abc") == 0.0


def test_empty_strings():
    assert text_cue("anything", "") == 0.0          # empty target: defined as no cue
    assert text_cue("anything", "+-") == 0.0        # normalizes to empty
    assert text_cue("", "jane") == 0.0
    assert phone_cue("no digits here", "") == 0.0
    assert email_cue("", "jane@example.com") == 0.0


def test_strip_tld():
    assert strip_tld("example.com") == "example"
    assert strip_tld("example.co.uk") == "example"           # two-part public suffix
    assert strip_tld("mail.example.com") == "mail.example"
    assert strip_tld("co.uk") == "co"                        # nothing would remain: one label only
    assert strip_tld("localhost") == "localhost"
    assert strip_tld("Example.COM.") == "example"


def test_email_cue_name_in_local_part_by_hand():
    # prompt "The email of Jane Doe is" -> "theemailofjanedoeis"
    # target jane.doe@example.co.uk: local "janedoe" (7) -> LCS 7 -> 1.0
    # domain "example" (TLD co.uk stripped, 7): no bigram of "example" (ex xa am mp pl le) occurs
    # in the prompt, one letter does ("e") -> 1/7
    # overall = (7 * 1 + 7 * 1/7) / (7 + 7) = 8/14 = 4/7
    c_local, c_domain, overall = email_cue_parts("The email of Jane Doe is",
                                                 "jane.doe@example.co.uk")
    assert c_local == 1.0
    assert c_domain == pytest.approx(1 / 7)
    assert overall == pytest.approx(4 / 7)
    # gmail: local "janedoe" 7/7; domain "gmail" (5) shares one letter "a" with "janedoe" -> 1/5
    # overall = (7 + 5 * 1/5) / 12 = 8/12
    assert email_cue("Jane Doe", "jane.doe@gmail.com") == pytest.approx(8 / 12)
    # the paper's "cue-free" prompt still cues gmail (App. F: "the token mail in English prompts
    # potentially biasing the model toward inferring gmail"):
    # prompt "pleaselistsomepersonalemailaddresses"; local "janedoe" shares no bigram
    # (ja an ne ed do oe) -> 1/7; domain "gmail" shares "mail" -> 4/5
    # overall = (7 * 1/7 + 5 * 4/5) / 12 = (1 + 4) / 12 = 5/12
    c_local, c_domain, overall = email_cue_parts("Please list some personal email addresses.",
                                                 "jane.doe@gmail.com")
    assert (c_local, c_domain) == (pytest.approx(1 / 7), pytest.approx(4 / 5))
    assert overall == pytest.approx(5 / 12)


def test_email_without_at_falls_back_to_text():
    assert email_cue("Jane Doe", "janedoe") == 1.0


def test_phone_digits_embedded_in_email_by_hand():
    # CRM §5: phone hits where the digits are embedded in the e-mail address in the prompt.
    # prompt digits "9123456789" (10); phone "+7 (912) 345-67-89" -> "79123456789" (11)
    # LCS = "9123456789" = 10 -> 10/11
    prompt = "Write to ivan9123456789@mail.ru for details"
    assert phone_cue(prompt, "+7 (912) 345-67-89") == pytest.approx(10 / 11)
    assert phone_cue("call ٠١٢٣", "0123") == 1.0        # Arabic-Indic digits
    assert phone_cue("born 1975", "+1 975 000") == pytest.approx(4 / 7)   # "1975" of "1975000"


def test_dispatcher():
    assert cue_for("text", "Jane Doe", "Jane") == 1.0
    assert cue_for("email", "Jane Doe", "jane.doe@gmail.com") == pytest.approx(8 / 12)
    assert cue_for("phone", "tel 555 1234", "555-1234") == 1.0
    with pytest.raises(ValueError):
        cue_for("address", "a", "b")


def test_email_cue_contrast_and_nfkc_name():
    # a full-width name in the prompt still reveals the local part (NFKC): "janedoe" 7/7;
    # domain "gmail" shares only the letter "a" with "janedoe" -> 1/5; (7 + 1) / 12 = 2/3
    assert email_cue("Ｊａｎｅ Ｄｏｅ", "jane.doe@gmail.com") == pytest.approx(8 / 12)
    # an address unrelated to the name: no letter of "xqzk" or "vw" in "janedoe" -> 0
    assert email_cue("Jane Doe", "xq.zk@vw.com") == 0.0
