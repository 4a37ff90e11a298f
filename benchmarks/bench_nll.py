"""Naive batched full-sentence NLL vs the prefix-sharing engine, on one WikiMem-like workload.

Workload: subjects x properties x 11 templates x candidates x {h, h0 = "This person",
S(h) = 2 similar names}. Naive and engine run subject by subject, interleaved, so that CPU
noise from other processes hits both alike; the engine keeps one cache across subjects, as a
pipeline would (the h0 sentences are the same for every subject).

    .venv/bin/python benchmarks/bench_nll.py --model smollm2-135m-instruct
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from wikimem_platform.lm.loading import load_model  # noqa: E402
from wikimem_platform.lm.nll import (  # noqa: E402
    DEFAULT_CHUNK_TOKENS,
    TOKENS_PER_SENTENCE,
    score_sentences,
    score_sentences_naive,
)

SUBJECTS = [
    "Albert Einstein", "Marie Curie", "Barack Obama", "Lionel Messi", "William Shakespeare",
    "Frida Kahlo", "Nelson Mandela", "Ada Lovelace", "Pablo Picasso", "Serena Williams",
]

OCCUPATIONS = """physicist, chemist, mathematician, biologist, astronomer, engineer, architect,
painter, sculptor, composer, pianist, violinist, singer, actor, film director, screenwriter,
novelist, poet, journalist, philosopher, historian, economist, lawyer, judge, politician,
diplomat, military officer, soldier, pilot, astronaut, physician, surgeon, nurse, pharmacist,
dentist, veterinarian, teacher, university teacher, librarian, banker, accountant,
businessperson, entrepreneur, farmer, fisherman, carpenter, blacksmith, tailor, baker, chef,
butcher, photographer, fashion designer, dancer, choreographer, footballer, basketball player,
tennis player, swimmer, cyclist, boxer, chess player, racing driver, golfer, athlete, coach,
referee, priest, bishop, monk, missionary, theologian, psychologist, sociologist,
anthropologist, archaeologist, geologist, geographer, botanist, zoologist, computer scientist,
software engineer, statistician, inventor, explorer, sailor, merchant, translator, linguist,
editor, publisher, illustrator, cartoonist, comedian, television presenter, radio host, model,
playwright, conductor, guitarist, drummer, rapper, film producer, activist, trade unionist"""

COUNTRIES = """Germany, France, United States, United Kingdom, Argentina, Poland, South Africa,
Spain, Italy, Portugal, Netherlands, Belgium, Switzerland, Austria, Sweden, Norway, Denmark,
Finland, Iceland, Ireland, Greece, Turkey, Russia, Ukraine, Belarus, Lithuania, Latvia, Estonia,
Czech Republic, Slovakia, Hungary, Romania, Bulgaria, Serbia, Croatia, Slovenia, Bosnia and
Herzegovina, Albania, North Macedonia, Montenegro, Moldova, Georgia, Armenia, Azerbaijan,
Kazakhstan, Uzbekistan, Mongolia, China, Japan, South Korea, North Korea, India, Pakistan,
Bangladesh, Sri Lanka, Nepal, Bhutan, Myanmar, Thailand, Vietnam, Laos, Cambodia, Malaysia,
Singapore, Indonesia, Philippines, Australia, New Zealand, Papua New Guinea, Fiji, Canada,
Mexico, Guatemala, Honduras, Nicaragua, Costa Rica, Panama, Cuba, Jamaica, Haiti, Dominican
Republic, Colombia, Venezuela, Ecuador, Peru, Bolivia, Chile, Paraguay, Uruguay, Brazil, Egypt,
Libya, Tunisia, Algeria, Morocco, Sudan, Ethiopia, Kenya, Uganda, Tanzania, Rwanda, Nigeria,
Ghana, Senegal, Mali, Niger, Cameroon, Angola, Zambia, Zimbabwe, Mozambique, Madagascar, Iran,
Iraq, Syria, Lebanon, Israel, Jordan, Saudi Arabia, Yemen, Oman, Qatar, Kuwait, Afghanistan"""

CITIES = """Ulm, Warsaw, Honolulu, Rosario, Stratford-upon-Avon, Mexico City, Mvezo, London,
Paris, Berlin, Munich, Hamburg, Vienna, Prague, Budapest, Rome, Milan, Naples, Madrid,
Barcelona, Lisbon, Porto, Amsterdam, Brussels, Zurich, Geneva, Copenhagen, Stockholm, Oslo,
Helsinki, Dublin, Edinburgh, Manchester, Liverpool, Athens, Istanbul, Moscow, Saint Petersburg,
Kyiv, Minsk, Vilnius, Riga, Tallinn, Bucharest, Sofia, Belgrade, Zagreb, Ljubljana, Sarajevo,
Tirana, Tbilisi, Yerevan, Baku, Almaty, Tashkent, Beijing, Shanghai, Hong Kong, Tokyo, Osaka,
Kyoto, Seoul, Busan, Mumbai, Delhi, Kolkata, Chennai, Karachi, Lahore, Dhaka, Colombo,
Kathmandu, Bangkok, Hanoi, Manila, Jakarta, Sydney, Melbourne, Auckland, Toronto, Montreal,
Vancouver, New York City, Chicago, Boston, Philadelphia, San Francisco, Los Angeles, Havana,
Bogota, Lima, Santiago, Buenos Aires, Montevideo, Sao Paulo, Rio de Janeiro, Cairo, Alexandria,
Tunis, Algiers, Casablanca, Nairobi, Lagos, Accra, Dakar, Johannesburg, Cape Town, Tehran,
Baghdad, Damascus, Beirut, Jerusalem, Amman, Riyadh"""

PROPERTIES = {
    "occupation": (OCCUPATIONS, [
        "{subject}'s occupation is {value}.",
        "{subject} works as a {value}.",
        "{subject} is a {value} by profession.",
        "The occupation of {subject} is {value}.",
        "{Value} is the occupation of {subject}.",
        "{subject} earned a living as a {value}.",
        "By profession, {subject} is a {value}.",
        "{subject} was employed as a {value}.",
        "{subject}'s job: {value}.",
        "Known as a {value}, {subject} became famous.",
        "{subject} has the profession of {value}.",
    ]),
    "country of citizenship": (COUNTRIES, [
        "{subject} is a citizen of {value}.",
        "{subject}'s country of citizenship is {value}.",
        "{subject} holds citizenship of {value}.",
        "The country of citizenship of {subject} is {value}.",
        "{Value} is the country of citizenship of {subject}.",
        "{subject} has a passport from {value}.",
        "{subject} is a national of {value}.",
        "By nationality, {subject} belongs to {value}.",
        "{subject} was a citizen of {value}.",
        "{Value} granted citizenship to {subject}.",
        "{subject}'s nationality: {value}.",
    ]),
    "place of birth": (CITIES, [
        "{subject} was born in {value}.",
        "{subject}'s place of birth is {value}.",
        "The birthplace of {subject} is {value}.",
        "{Value} is the place of birth of {subject}.",
        "{subject} is a native of {value}.",
        "{subject} came into the world in {value}.",
        "Born in {value}, {subject} grew up there.",
        "{subject}'s hometown is {value}.",
        "{subject} was born in the city of {value}.",
        "{Value} is where {subject} was born.",
        "The place where {subject} was born is {value}.",
    ]),
}
GENERIC_SUBJECT = "This person"


def similar_names(name: str) -> list[str]:
    """Two look-alike names: first and last part spelled backwards ("Enaj Doe", "Jane Eod")."""
    parts = name.split()
    variants = []
    for index in (0, len(parts) - 1):
        changed = list(parts)
        changed[index] = parts[index][::-1].capitalize()
        variants.append(" ".join(changed))
    return variants


def fill(template: str, subject: str, value: str) -> str:
    if not template.startswith("{subject}") and subject == GENERIC_SUBJECT:
        subject = subject.lower()  # "... of this person"
    return template.format(subject=subject, value=value, Value=value[0].upper() + value[1:])


def build_workload(n_subjects: int, n_properties: int, n_candidates: int) -> list[list[list[str]]]:
    """Per subject, per property: every (template, value) sentence for h, h0 and S(h)."""
    if n_subjects > len(SUBJECTS) or n_properties > len(PROPERTIES):
        raise SystemExit(f"at most {len(SUBJECTS)} subjects and {len(PROPERTIES)} properties")
    workload = []
    for subject in SUBJECTS[:n_subjects]:
        variants = [subject, GENERIC_SUBJECT, *similar_names(subject)]
        per_property = []
        for values_text, templates in list(PROPERTIES.values())[:n_properties]:
            values = [v.strip() for v in values_text.replace("\n", " ").split(",")]
            if n_candidates > len(values):
                raise SystemExit(f"at most {len(values)} candidates")
            per_property.append([
                fill(template, variant, value)
                for template in templates
                for value in values[:n_candidates]
                for variant in variants
            ])
        workload.append(per_property)
    return workload


class Clock:
    """Wall and CPU seconds (this process, all threads) accumulated over timed blocks. CPU
    time is the robust one when other processes share the cores."""

    def __init__(self):
        self.wall = self.cpu = 0.0

    def __enter__(self):
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.last_wall = time.perf_counter() - self._wall
        self.last_cpu = time.process_time() - self._cpu
        self.wall += self.last_wall
        self.cpu += self.last_cpu


def tree_size(token_ids: list[list[int]]) -> tuple[int, int, int]:
    """Nodes of the prefix tree of the distinct sequences, its internal nodes (whose children
    are scored: they need lm_head) and its roots."""
    ordered = sorted(set(map(tuple, token_ids)))
    nodes = internal = roots = 0
    previous: tuple[int, ...] = ()
    for i, seq in enumerate(ordered):
        shared = 0
        while shared < min(len(seq), len(previous)) and seq[shared] == previous[shared]:
            shared += 1
        nodes += len(seq) - shared
        roots += shared == 0
        following = ordered[i + 1] if i + 1 < len(ordered) else ()
        is_leaf = following[: len(seq)] != seq
        internal += len(seq) - shared - (1 if is_leaf else 0)
        previous = seq
    return nodes, internal, roots


def measure_rates(lm, token_ids: list[list[int]], rows: int, width: int) -> dict[str, float]:
    """Tokens/s of one large plain causal forward of the model body (rows x width real tokens),
    and rows/s of lm_head + logsumexp; by wall and by CPU time."""
    flat = [t for ids in token_ids for t in ids]
    needed = rows * width
    flat = (flat * (needed // max(len(flat), 1) + 1))[:needed]
    input_ids = torch.tensor(flat).view(rows, width).to(lm.device)
    head = lm.model.get_output_embeddings()
    body, lm_head = Clock(), Clock()
    with torch.inference_mode():
        with body:
            hidden = lm.model.base_model(input_ids=input_ids, use_cache=False).last_hidden_state
        picked = hidden.reshape(-1, hidden.shape[-1])[:512]
        with lm_head:
            for block in picked.split(128):
                torch.logsumexp(head(block).float(), dim=-1)
    return {"body_wall": needed / body.wall, "body_cpu": needed / body.cpu,
            "head_wall": len(picked) / lm_head.wall, "head_cpu": len(picked) / lm_head.cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m-instruct",
                        help="gemma-3-270m | smollm2-135m-instruct | a path (GGUF or HF directory)")
    parser.add_argument("--subjects", type=int, default=4)
    parser.add_argument("--properties", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=101)
    parser.add_argument("--batch-size", type=int, default=64, help="naive: sentences per forward")
    parser.add_argument("--batch-tokens", type=int, default=None,
                        help=f"engine: tree nodes per forward (default batch size x {TOKENS_PER_SENTENCE})")
    parser.add_argument("--chunk-tokens", type=int, default=DEFAULT_CHUNK_TOKENS)
    parser.add_argument("--naive-sample", type=float, default=1.0,
                        help="fraction of each subject's sentences the naive scorer runs on (seeded); "
                             "its time is scaled up to the whole workload (naive cost is per sentence)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--attn", default="sdpa", help="attn_implementation: sdpa | eager")
    parser.add_argument("--skip-naive", action="store_true", help="time the engine only")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    lm = load_model(args.model, batch_size=args.batch_size, attn_implementation=args.attn)
    load_seconds = time.perf_counter() - started
    workload = build_workload(args.subjects, args.properties, args.candidates)
    all_sentences = [s for per_property in workload for slice_ in per_property for s in slice_]
    distinct = list(dict.fromkeys(all_sentences))
    batch_tokens = args.batch_tokens or args.batch_size * TOKENS_PER_SENTENCE
    rng = np.random.default_rng(0)

    print(f"model: {lm.name} ({lm.source}, {lm.fingerprint[:24]}), {type(lm.model).__name__}, "
          f"load {load_seconds:.1f} s, threads {args.threads}, attn {args.attn}, dtype {lm.dtype}")
    print(f"workload: {args.subjects} subjects x {args.properties} properties x 11 templates x "
          f"{args.candidates} candidates x {{h, h0, 2 x S(h)}} = {len(all_sentences):,} sentences "
          f"({len(distinct):,} distinct: h0 sentences repeat across subjects)", flush=True)

    warm = workload[0][0][:8]  # first-call overheads out of the timings
    score_sentences_naive(lm, warm, batch_size=args.batch_size)
    score_sentences(lm, warm, batch_tokens=batch_tokens, chunk_tokens=args.chunk_tokens)

    # Naive and engine alternate per (subject, property) so that load from other processes hits
    # both alike; the engine keeps one cache throughout, as a pipeline would.
    rows = max(1, batch_tokens // args.chunk_tokens)
    naive_clock, engine_clock = Clock(), Clock()
    naive_scaled = {"wall": 0.0, "cpu": 0.0}
    naive_count, max_delta = 0, 0.0
    rates: list[dict[str, float]] = []
    cache: dict[str, float] = {}
    for index, per_property in enumerate(workload):
        for sentences in per_property:
            if not args.skip_naive:
                size = max(1, round(args.naive_sample * len(sentences)))
                sample = np.sort(rng.choice(len(sentences), size=size, replace=False))
                with naive_clock:
                    naive = score_sentences_naive(lm, [sentences[i] for i in sample],
                                                  batch_size=args.batch_size)
                naive_scaled["wall"] += naive_clock.last_wall * len(sentences) / size
                naive_scaled["cpu"] += naive_clock.last_cpu * len(sentences) / size
                naive_count += size
            with engine_clock:
                engine = score_sentences(lm, sentences, cache=cache, batch_tokens=batch_tokens,
                                         chunk_tokens=args.chunk_tokens)
            if not args.skip_naive:
                max_delta = max(max_delta, float(np.abs(naive - engine[sample]).max()))
        rates.append(measure_rates(lm, lm.encode(per_property[0][:400]), rows, args.chunk_tokens))
        print(f"  subject {index + 1}/{len(workload)} (cumulative): naive {naive_clock.wall:.1f} s wall "
              f"(scaled {naive_scaled['wall']:.1f} s wall, {naive_scaled['cpu']:.1f} s CPU), engine "
              f"{engine_clock.wall:.1f} s wall ({engine_clock.cpu:.1f} s CPU); body "
              f"{rates[-1]['body_wall']:.0f} tokens/s wall", flush=True)

    n = len(all_sentences)
    if not args.skip_naive:
        sampled = "" if args.naive_sample >= 1 else (
            f"; timed on a seeded {args.naive_sample:.0%} sample of every (subject, property) "
            f"slice, {naive_count:,} sentences, {naive_clock.wall:.1f} s, scaled to all")
        print(f"naive : {n:,} sentences in {naive_scaled['wall']:8.1f} s = "
              f"{n / naive_scaled['wall']:7.1f} sentences/s wall; {naive_scaled['cpu']:8.1f} s CPU "
              f"(full sentences, batch {args.batch_size}, sorted by length, one forward each{sampled})")
    print(f"engine: {n:,} sentences in {engine_clock.wall:8.1f} s = {n / engine_clock.wall:7.1f} "
          f"sentences/s wall; {engine_clock.cpu:8.1f} s CPU (prefix tree, rows of "
          f"{args.chunk_tokens} inner nodes, {batch_tokens} per forward)")
    if not args.skip_naive:
        print(f"ratio : {naive_scaled['wall'] / engine_clock.wall:.2f}x by wall time, "
              f"{naive_scaled['cpu'] / engine_clock.cpu:.2f}x by CPU time;  max |dNLL| = "
              f"{max_delta:.2e} nats (over the {naive_count:,} sentences scored both ways)")

    nodes, inner, _ = tree_size(lm.encode(distinct))
    naive_tokens = sum(len(ids) for ids in lm.encode(all_sentences))
    median = {key: float(np.median([r[key] for r in rates])) for key in rates[0]}
    print(f"tokens: naive {naive_tokens:,} through the model and lm_head at every position; distinct "
          f"tokens (prefix-tree nodes) {nodes:,}, of which {inner:,} have children (need the "
          f"model and lm_head; leaves are scored from their parent)")
    print(f"rates (median over subjects): body {median['body_wall']:,.0f} tokens/s wall "
          f"({median['body_cpu']:,.0f} per CPU-s) in one {rows}x{args.chunk_tokens} causal forward; "
          f"lm_head+logsumexp {median['head_wall']:,.0f} rows/s wall ({median['head_cpu']:,.0f} per CPU-s)")
    for label, body_tokens in (("all distinct tokens", nodes), ("inner nodes only", inner)):
        wall = body_tokens / median["body_wall"] + inner / median["head_wall"]
        cpu = body_tokens / median["body_cpu"] + inner / median["head_cpu"]
        print(f"ceiling ({label} through the body, lm_head on {inner:,}): {wall:.1f} s = "
              f"{n / wall:.1f} sentences/s wall, {cpu:.1f} CPU-s; engine reaches "
              f"{100 * wall / engine_clock.wall:.0f}% of it by wall, {100 * cpu / engine_clock.cpu:.0f}% by CPU")


if __name__ == "__main__":
    main()
