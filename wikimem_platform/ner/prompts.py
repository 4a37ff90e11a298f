"""Probe prompts for the NER audit (paper §3.2, Table 2) and the hand-written baselines (Table 3).

The paper had ChatGPT write 100 sentences of each of four sentence types per entity type, each
holding the placeholder MASK. Here a small grammar writes them instead, deterministically and
offline: every (entity type, sentence type) has a few *frames* (sentence skeletons with slots:
the name at the start, in the middle, at the end, as a possessive "MASK's") and every slot a few
fillers; all combinations are drawn in a seeded order, one frame after another, so any count
gets varied positions and lengths. The probes share no skeleton with the training corpus
(`corpus.TRAINING_TEMPLATES`): a probe must ask about a name in words the model never saw it in.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from wikimem_platform.ner.schema import (
    DECLARATIVE,
    ENTITY_TYPES,
    EXCLAMATORY,
    IMPERATIVE,
    INTERROGATIVE,
    LOC,
    MASK,
    ORG,
    PER,
    SENTENCE_TYPES,
)
from wikimem_platform.splits import seeded_draw

PROMPTS_PER_TYPE = 400  # the paper's m per entity type: 100 per sentence type
PROMPT_COLUMNS = ["prompt_id", "entity_type", "sentence_type", "prompt"]

# Baselines (Table 3). ∅-PT is the name alone: the prompt is the placeholder itself.
EMPTY_PROMPT = MASK
ONE_PROMPT = {PER: "My name is MASK.", LOC: "I am at MASK.", ORG: "I work for MASK."}
MIX_PROMPTS = {
    PER: ("My name is MASK.", "I am MASK.", "I am named MASK.", "Here is my name: MASK.", "Call me MASK."),
    LOC: ("I am at MASK.", "I like MASK.", "MASK is a good place.", "Meet at MASK.", "Do you live in MASK?"),
    ORG: ("I work for MASK.", "I like MASK.", "MASK is a good organization.", "See you in MASK.", "Do you know MASK?"),
}

# Fillers shared by the frames of one entity type (a slot name means the same list in every frame).
_SLOTS: dict[str, dict[str, tuple[str, ...]]] = {
    PER: {
        "won": ("won", "organized", "missed", "opened", "chaired"),
        "event": ("meeting", "race", "conference", "debate", "ceremony"),
        "when": ("yesterday", "last week", "on Friday", "this morning"),
        "admire": ("admire", "enjoyed", "remember", "reviewed"),
        "work": ("latest book", "speech", "paintings", "advice", "sense of humor", "new project"),
        "meal": ("dinner", "lunch", "coffee", "breakfast"),
        "doc": ("letter", "contract", "report", "proposal", "song"),
        "signed": ("written", "signed", "reviewed", "approved"),
        "a_adj": ("a talented", "a generous", "an honest", "a brilliant"),
        "role": ("artist", "teacher", "neighbor", "leader", "writer"),
        "lately": ("Lately", "Recently", "This year"),
        "doing": ("working on", "talking about", "writing"),
        "thing": ("a new album", "the budget", "a long novel", "a garden project"),
        "relative": ("sister", "brother", "friend", "colleague", "cousin"),
        "venue": ("airport", "library", "station", "party"),
        "interj": ("Oh", "Wow", "Look", "Hey"),
        "such": ("such a genius", "so kind", "a true gem", "unbelievable", "amazing today"),
        "adj": ("wonderful", "stunning", "brave", "funny"),
        "story": ("speech", "performance", "answer", "story"),
        "gave": ("gave", "delivered", "shared"),
        "did": ("won", "skipped", "organized", "ruined"),
        "verdict": ("is absolutely brilliant", "was a total disaster", "made my day"),
        "bravo": ("what an impressive performance", "what a goal", "that was mind-blowing", "you did it"),
        "feeling": ("wonderful", "strange", "lovely"),
        "achievement": ("the new job", "the award", "the wedding", "the promotion", "winning the race"),
        "again": ("won", "scored", "forgot", "did it"),
        "action": ("pass the salt", "close the window", "sign here", "wait outside", "call me back", "lock the door"),
        "remember": ("lock the door", "bring the tickets", "feed the cat", "send the report", "water the plants"),
        "contact": ("call", "email", "visit", "thank", "invite"),
        "message": ("that dinner is ready", "to meet us at noon", "about the new plan", "the good news",
                    "that the meeting moved"),
        "ask": ("about the budget", "for the keys", "to join the team", "for directions", "about the schedule"),
        "item": ("report", "invoice", "letter", "package"),
        "dest": ("office", "printer", "committee", "front desk"),
        "kindly": ("Kindly", "Please", "Go and"),
        "at": ("at the party", "after lunch", "tomorrow", "before the meeting"),
        "check": ("check", "read", "praise"),
        "give": ("a call", "the keys", "a warm welcome", "my regards", "some time"),
        "disturb": ("disturb", "interrupt", "call"),
        "practice": ("practice playing the guitar", "keep working hard", "try reading every day",
                     "invest in good friends", "take a break"),
        "met": ("met", "seen", "called", "heard from"),
        "went": ("go after the meeting", "study", "grow up", "put the keys", "spend the summer"),
        "read": ("read", "see", "like"),
        "mood": ("worried", "excited", "serious", "happy", "nervous"),
        "topic": ("trip", "budget", "new job", "election"),
        "state": ("late again", "so quiet", "leaving early", "not here", "always so busy"),
        "arrives": ("arrives", "leaves", "finishes", "starts", "gets back"),
        "been": ("working here", "playing piano", "living nearby", "teaching", "writing songs"),
        "offer": ("some tea", "a ride home", "a seat", "more time", "a sandwich"),
        "do": ("win", "skip", "organize", "attend"),
        "these_days": ("these days", "now", "this week", "at the moment"),
    },
    LOC: {
        "event": ("concert", "conference", "festival", "wedding", "summit"),
        "soon": ("next year", "in June", "this fall", "soon"),
        "season": ("summer", "winter", "spring"),
        "vacation": ("vacation", "holidays", "weekend"),
        "known": ("famous", "known", "loved"),
        "feature": ("beaches", "old bridges", "museums", "food", "mountains", "markets"),
        "relative": ("sister", "brother", "friend", "colleague", "cousin"),
        "ago": ("last year", "a decade ago", "recently", "after college"),
        "train": ("train", "flight", "bus", "ferry"),
        "late": ("late", "on time", "early"),
        "prices": ("Rents", "Prices", "Taxes"),
        "risen": ("risen", "fallen", "doubled"),
        "lately": ("this year", "again", "since spring"),
        "fine": ("beautiful", "small", "famous", "quiet"),
        "sight": ("lake", "castle", "village", "forest"),
        "interj": ("Wow", "Oh", "Gosh"),
        "adj": ("beautiful", "crowded", "cold", "quiet", "expensive"),
        "view": ("sunsets", "mountains", "beaches", "streets"),
        "stunning": ("absolutely stunning", "simply magical", "so beautiful"),
        "trip": ("wonderful", "long", "crazy", "memorable"),
        "time": ("summer", "winter", "spring", "autumn", "evening"),
        "lovely": ("such a lovely place", "incredible at night", "full of surprises", "so much fun to visit",
                   "a dream come true"),
        "after": ("", " after all", " at last", " in time"),
        "miss": ("food", "streets", "people", "markets", "air", "music"),
        "cold_time": ("in winter", "in summer", "at night"),
        "gear": ("a coat", "an umbrella", "a map"),
        "food": ("food", "coffee", "bread", "wine"),
        "taste": ("amazing", "terrible", "delicious", "unforgettable"),
        "go": ("Drive", "Fly", "Walk", "Go", "Move", "Hurry"),
        "now": ("now", "tonight", "tomorrow morning", "before noon"),
        "package": ("package", "letter", "invoice", "samples"),
        "speed": ("today", "by express mail", "first thing tomorrow"),
        "room": ("hotel", "room", "table", "flat"),
        "stay": ("the weekend", "two nights", "next week"),
        "visit": ("visit", "avoid", "explore", "leave"),
        "ride": ("train", "bus", "ferry", "night train", "early flight"),
        "meet": ("tomorrow", "tonight", "at noon", "next week", "after work"),
        "travel": ("travel", "drive", "go"),
        "danger": ("in winter", "during the storm", "alone", "at night"),
        "guide": ("guide", "driver", "locals", "hotel staff", "tour guide"),
        "show": ("a map", "some photos", "the old town", "the best parts", "the harbor"),
        "pack": ("a coat", "sunscreen", "good shoes", "an umbrella", "a warm hat"),
        "dish": ("local food", "coffee", "bread", "seafood", "wine", "pastries"),
        "best": ("coffee", "pizza", "hotel", "bookshop", "view", "bakery"),
        "stat": ("population", "capital", "history", "climate", "area", "main language"),
        "live": ("live", "work", "still live", "want to live"),
        "grow": ("grow up", "study", "get married", "spend your childhood"),
        "here": ("here", "the airport", "the coast", "the border", "the capital"),
        "ever": ("", " in winter", " in summer", " at night"),
        "weather": ("cold", "hot", "rainy", "safe", "expensive"),
        "when_q": ("in winter", "at night", "this time of year"),
        "which": ("museum", "market", "park", "church"),
        "first": ("first", "today", "this weekend", "tomorrow"),
        "places": ("hotels", "restaurants", "beaches", "schools", "parks", "museums"),
        "reach": ("drive", "fly", "walk", "get", "cycle"),
        "see": ("visit", "see", "live in"),
        "someday": ("next summer", "someday", "with us"),
        "stop": ("stop", "stay overnight", "have lunch", "refuel"),
        "way": ("home", "back", "to the coast"),
        "worth": ("crowded", "beautiful", "worth visiting"),
        "in_season": ("in summer", "in winter", "in spring"),
        "meal": ("breakfast", "lunch", "dinner"),
    },
    ORG: {
        "excellent": ("excellent", "generous", "modest"),
        "benefits": ("employee benefits", "training programs", "scholarships", "internships"),
        "surged": ("surged", "fell", "doubled"),
        "when": ("last week", "on Monday", "this year", "overnight"),
        "relative": ("sister", "brother", "friend", "colleague", "cousin"),
        "years": ("for years", "since college", "for a decade", "since the summer"),
        "new": ("partnership", "program", "strategy", "president", "policy"),
        "today": ("today", "yesterday", "last month"),
        "report": ("report", "study", "survey", "guide", "statement"),
        "applied": ("applied", "sent my resume", "went for an interview"),
        "past": ("last year", "in the spring", "yesterday"),
        "letter": ("letter", "grant", "call", "notice"),
        "topic": ("project", "merger", "budget", "new rules"),
        "plan": ("plan", "project", "program"),
        "start": ("start", "end", "change"),
        "soon": ("next year", "in May", "soon"),
        "won": ("won", "lost", "rejected"),
        "award": ("award", "contract", "championship", "lawsuit", "election", "tender"),
        "industry": ("industry", "market", "field", "whole sector", "way we shop"),
        "decision": ("brilliant", "terrible", "surprising", "bold", "strange", "smart"),
        "interj": ("Wow", "Oh", "Look"),
        "just": ("hired a hundred people", "bought its rival", "doubled its profits", "closed its offices",
                 "changed its logo"),
        "party": ("party", "conference", "launch", "meeting"),
        "amazing": ("amazing", "chaotic", "fantastic"),
        "anniversary": ("its anniversary", "the new contract", "the record year", "the merger", "the big win"),
        "suffix": ("", " so much", " every day", " again"),
        "grown": ("big", "powerful", "famous", "popular", "careless", "greedy"),
        "trust": ("your data", "your money", "a deadline", "your savings", "a secret"),
        "raised": ("raised", "cut", "changed"),
        "prices": ("prices", "salaries", "rules", "fees"),
        "meeting": ("meeting", "workshop", "briefing"),
        "monday": ("next Monday", "tomorrow", "this afternoon", "on time"),
        "cause": ("support their cause", "help the children", "fund the research"),
        "job": ("a job", "a position", "a grant", "an internship"),
        "deadline": ("today", "before Friday", "this week"),
        "doc": ("resume", "application", "proposal", "complaint"),
        "asap": ("by Friday", "today", "as soon as possible"),
        "contact": ("contact", "email", "call"),
        "about": ("about the refund", "for more details", "before signing", "with questions"),
        "as": ("as a volunteer", "as a member", "as an intern"),
        "next": ("this year", "today", "next month"),
        "sign": ("sign", "accept", "share"),
        "until": ("yet", "without a lawyer", "before checking"),
        "channel": ("social media", "the news", "their website"),
        "rivals": ("its rivals", "the competition", "last year", "similar groups"),
        "ask": ("a refund", "an invoice", "a meeting", "more funding", "a discount"),
        "invest": ("now", "before it grows", "carefully"),
        "regarding": ("about", "regarding"),
        "issue": ("delay", "contract", "new rules", "donation"),
        "office": ("office", "headquarters", "booth", "store"),
        "visit_when": ("tomorrow", "next week", "today"),
        "tell": ("we accept the offer", "to call us back", "the deal is off"),
        "mission": ("mission statement", "annual budget", "main goal", "history"),
        "work": ("work", "still work", "want to work", "volunteer"),
        "hiring": ("hiring", "growing", "closing", "expanding"),
        "now": ("this year", "right now", "again"),
        "head": ("head", "founder", "president", "spokesperson", "chief executive"),
        "announce": ("announce", "cancel", "approve"),
        "thing": ("merger", "new policy", "results", "program"),
        "news": ("new product", "plan", "latest report", "scandal", "offer"),
        "raise": ("raise", "cut", "change"),
        "fees": ("prices", "fees", "rules"),
        "offer": ("offer", "provide"),
        "perk": ("health insurance", "remote work", "training", "scholarships", "parental leave"),
        "whom": ("my friends", "a student", "our team", "my parents"),
        "see": ("see", "like"),
        "ad": ("ad", "announcement", "report"),
        "seen": ("yesterday", "last night", "on TV"),
        "business": ("in business", "hiring", "working on this"),
        "say": ("do", "plan", "say"),
        "climate": ("about climate change", "about the budget", "for its staff"),
        "dept": ("department", "office", "team"),
        "task": ("complaints", "hiring", "refunds"),
    },
}

_FRAMES: dict[str, dict[str, tuple[str, ...]]] = {
    PER: {
        DECLARATIVE: (
            "MASK {won} the {event} {when}.",
            "I {admire} MASK's {work}.",
            "We had {meal} with MASK {when}.",
            "The {doc} was {signed} by MASK.",
            "Everyone agrees that MASK is {a_adj} {role}.",
            "{lately}, MASK has been {doing} {thing}.",
            "My {relative} met MASK at the {venue}.",
        ),
        EXCLAMATORY: (
            "{interj}, MASK, you are {such}!",
            "What a {adj} {story} MASK {gave}!",
            "I can't believe MASK {did} the {event}!",
            "MASK's {work} {verdict}!",
            "Bravo, MASK, {bravo}!",
            "How {feeling} it was to see MASK {when}!",
            "Congratulations to MASK on {achievement}!",
            "{interj}, MASK {again} again!",
        ),
        IMPERATIVE: (
            "MASK, please {action}.",
            "MASK, don't forget to {remember}.",
            "Please {contact} MASK {at}.",
            "Tell MASK {message}.",
            "Ask MASK {ask}.",
            "Send MASK's {item} to the {dest}.",
            "{kindly} introduce me to MASK {at}.",
            "Invite MASK to the {event}.",
            "Remember to {check} MASK's {work}.",
            "Give MASK {give}.",
            "Wait for MASK {at}.",
            "Don't {disturb} MASK {at}.",
            "MASK, {practice}.",
        ),
        INTERROGATIVE: (
            "Can MASK {action}?",
            "Have you {met} MASK {when}?",
            "Where did MASK {went}?",
            "Did you {read} MASK's {work}?",
            "Who invited MASK to the {event}?",
            "Is MASK {mood} about the {topic}?",
            "What project is MASK working on {these_days}?",
            "Why is MASK {state}?",
            "Do you know when MASK {arrives}?",
            "How long has MASK been {been}?",
            "Would MASK like {offer}?",
            "Did MASK {do} the {event}?",
            "Can you tell me where I can find MASK {these_days}?",
        ),
    },
    LOC: {
        DECLARATIVE: (
            "The {event} will be held in MASK {soon}.",
            "We spent our {season} {vacation} in MASK.",
            "MASK is {known} for its {feature}.",
            "My {relative} moved to MASK {ago}.",
            "The {train} from MASK arrived {late}.",
            "{prices} in MASK have {risen} {lately}.",
            "There is a {fine} {sight} near MASK.",
        ),
        EXCLAMATORY: (
            "{interj}, I can't believe how {adj} MASK is!",
            "The {view} in MASK are {stunning}!",
            "What a {trip} trip to MASK that was!",
            "I love MASK in the {time}!",
            "{interj}, MASK is {lovely}!",
            "MASK is {lovely}!",
            "We finally made it to MASK{after}!",
            "How I miss the {miss} of MASK!",
            "Never go to MASK {cold_time} without {gear}!",
            "{interj}, the {food} in MASK was {taste}!",
        ),
        IMPERATIVE: (
            "{go} to MASK {now}.",
            "Send the {package} to MASK {speed}.",
            "Book a {room} in MASK for {stay}.",
            "Please {visit} MASK {now}.",
            "Take the {ride} to MASK.",
            "Meet me in MASK {meet}.",
            "Don't {travel} to MASK {danger}.",
            "Ask the {guide} about MASK.",
            "Show me {show} of MASK.",
            "Remember to pack {pack} for MASK.",
            "Call the office in MASK {now}.",
            "Try the {dish} in MASK.",
            "Stay in MASK for {stay}.",
            "Leave MASK {now}.",
        ),
        INTERROGATIVE: (
            "Where can I find the best {best} in MASK?",
            "What is the {stat} of MASK?",
            "Do you {live} in MASK?",
            "Did you {grow} in MASK?",
            "How far is MASK from {here}?",
            "Have you ever been to MASK{ever}?",
            "Is it {weather} in MASK {when_q}?",
            "When does the {ride} to MASK leave?",
            "Why did your {relative} move to MASK?",
            "Which {which} in MASK should I visit {first}?",
            "Are there any good {places} in MASK?",
            "How long does it take to {reach} to MASK?",
            "Would you like to {see} MASK {someday}?",
            "Can we {stop} in MASK on the way {way}?",
            "Is MASK {worth} {in_season}?",
            "What do people in MASK eat for {meal}?",
            "Who told you about MASK?",
            "Is there a {sight} near MASK?",
        ),
    },
    ORG: {
        DECLARATIVE: (
            "MASK offers {excellent} {benefits}.",
            "The stock price of MASK {surged} {when}.",
            "My {relative} has worked for MASK {years}.",
            "MASK announced a new {new} {today}.",
            "The {report} was published by MASK.",
            "I {applied} to MASK {past}.",
            "We received a {letter} from MASK about the {topic}.",
            "According to MASK, the {plan} will {start} {soon}.",
        ),
        EXCLAMATORY: (
            "I can't believe MASK {won} the {award}!",
            "MASK is revolutionizing the {industry}!",
            "What a {decision} decision by MASK!",
            "{interj}, MASK just {just}!",
            "The {party} at MASK was {amazing}!",
            "Congratulations to MASK on {anniversary}!",
            "I love working with MASK{suffix}!",
            "How {grown} MASK has become!",
            "Never trust MASK with {trust}!",
            "{interj}, MASK {raised} the {prices} again!",
            "{interj}, MASK is hiring again!",
        ),
        IMPERATIVE: (
            "Attend the MASK {meeting} {monday}.",
            "Donate to MASK to {cause}.",
            "Apply for {job} at MASK {deadline}.",
            "Send your {doc} to MASK {asap}.",
            "Please {contact} MASK {about}.",
            "Join MASK {as} {next}.",
            "Read the {report} from MASK.",
            "Don't {sign} anything from MASK {until}.",
            "Follow MASK on {channel}.",
            "Compare MASK with {rivals}.",
            "Ask MASK for {ask}.",
            "Invest in MASK {invest}.",
            "Write to MASK {regarding} the {issue}.",
            "Visit the MASK {office} {visit_when}.",
            "Tell MASK {tell}.",
        ),
        INTERROGATIVE: (
            "How do I apply for {job} at MASK?",
            "What is the {mission} of MASK?",
            "Do you {work} for MASK?",
            "Is MASK {hiring} {now}?",
            "Who is the {head} of MASK?",
            "When did MASK {announce} the {thing}?",
            "Have you heard about MASK's {news}?",
            "Why did MASK {raise} its {fees}?",
            "Does MASK {offer} {perk}?",
            "Can you recommend MASK to {whom}?",
            "Where is the {office} of MASK?",
            "Did you {see} the {ad} by MASK {seen}?",
            "How long has MASK been {business}?",
            "What does MASK {say} {climate}?",
            "Would you trust MASK with {trust}?",
            "Which {dept} of MASK handles {task}?",
        ),
    },
}


def frame_expansions(frame: str, slots: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Every sentence a frame writes: the product of its slots' fillers."""
    fields = [name for _, name, _, _ in string.Formatter().parse(frame) if name]
    choices = [slots[name] for name in fields]
    return [frame.format(**dict(zip(fields, combo))) for combo in itertools.product(*choices)]


def _draw_sentences(entity_type: str, sentence_type: str, n: int, rng: np.random.Generator) -> list[str]:
    """n distinct sentences, frames taken in turn (seeded order), fillers in a seeded order."""
    frames = list(_FRAMES[entity_type][sentence_type])
    pools = []
    for i in rng.permutation(len(frames)):
        expansions = frame_expansions(frames[i], _SLOTS[entity_type])
        pools.append([expansions[j] for j in rng.permutation(len(expansions))])
    chosen: list[str] = []
    seen: set[str] = set()
    for sentence in itertools.chain.from_iterable(itertools.zip_longest(*pools)):
        if sentence is not None and sentence not in seen:
            seen.add(sentence)
            chosen.append(sentence)
            if len(chosen) == n:
                return chosen
    raise ValueError(f"the {entity_type} {sentence_type} grammar writes only {len(chosen)} prompts, asked for {n}")


def _split_count(n_per_type: int) -> list[int]:
    """n_per_type spread over the four sentence types as evenly as possible (first types get the rest)."""
    base, rest = divmod(n_per_type, len(SENTENCE_TYPES))
    return [base + (i < rest) for i in range(len(SENTENCE_TYPES))]


def generate_prompts(n_per_type: int = PROMPTS_PER_TYPE, seed: int = 0,
                     entity_types: Iterable[str] = ENTITY_TYPES) -> pd.DataFrame:
    """The probe prompt set: per entity type `n_per_type` distinct prompts, equally many per
    sentence type; same seed, same prompts. Columns: prompt_id, entity_type, sentence_type, prompt."""
    rows = []
    for t_index, entity_type in enumerate(ENTITY_TYPES):
        if entity_type not in set(entity_types):
            continue
        for s_index, (sentence_type, n) in enumerate(zip(SENTENCE_TYPES, _split_count(n_per_type))):
            rng = np.random.default_rng([seed, t_index, s_index])
            for i, prompt in enumerate(_draw_sentences(entity_type, sentence_type, n, rng)):
                rows.append({"prompt_id": f"{entity_type}-{sentence_type[:3]}-{i:03d}", "entity_type": entity_type,
                             "sentence_type": sentence_type, "prompt": prompt})
    return pd.DataFrame(rows, columns=PROMPT_COLUMNS)


def grammar_size(entity_type: str, sentence_type: str) -> int:
    """How many distinct prompts the grammar can write for one cell (the ceiling of n_per_type / 4)."""
    frames = _FRAMES[entity_type][sentence_type]
    return len({s for frame in frames for s in frame_expansions(frame, _SLOTS[entity_type])})


def fill(prompt: str, name: str) -> tuple[str, int, int]:
    """The prompt with the name in place of MASK, and the name's character span in it."""
    if prompt.count(MASK) != 1:
        raise ValueError(f"a prompt must hold {MASK} exactly once: {prompt!r}")
    start = prompt.index(MASK)
    return prompt[:start] + name + prompt[start + len(MASK):], start, start + len(name)


def mix_prompt(name: str, entity_type: str, seed: int = 0) -> str:
    """Mix-PT: the hand-written prompt drawn for this name (seeded, one of Table 3's five)."""
    options = MIX_PROMPTS[entity_type]
    return options[int(seeded_draw(f"mix|{entity_type}|{name}", seed) * len(options))]
