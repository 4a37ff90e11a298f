"""The engine's host side, timed alone: the model replaced by a stub that returns zeros (no
compute), so what is timed is the tree's layout, masks, packing, indexing and path sums — what a
GPU waits for if it is not overlapped. With --baseline-engine (another version of
`wikimem_platform/lm/nll.py`, e.g. `git show 4e72e6f:wikimem_platform/lm/nll.py > /tmp/before.py`)
both are timed in the same run, interleaved, on the paper workload's sharing structure.

    .venv/bin/python benchmarks/bench_host_side.py --baseline-engine /tmp/before.py
"""
import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.bench_gpu import load_engine, paper_workload_ids  # noqa: E402
from wikimem_platform.lm import nll as new  # noqa: E402
from wikimem_platform.lm.loading import LoadedModel  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--baseline-engine", default=None)
parser.add_argument("--people", type=int, default=4)
args = parser.parse_args()
torch.set_num_threads(1)
engines = [("after", new)] if not args.baseline_engine else [("before", load_engine(args.baseline_engine)), ("after", new)]

class Stub(torch.nn.Module):
    """Hidden states of zeros from the body, an 8 x 64 head: no model compute to speak of."""

    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 64, bias=False)
        self.embed = torch.nn.Embedding(64, 8)
        self.config = SimpleNamespace(final_logit_softcapping=None, sliding_window=None, layer_types=None)
        self.calls = 0
    def base_model(self, input_ids, **kw):
        self.calls += 1
        return SimpleNamespace(last_hidden_state=torch.zeros(*input_ids.shape, 8))

    def get_output_embeddings(self):
        return self.head

    def get_input_embeddings(self):
        return self.embed


stub = Stub()
lm = LoadedModel(model=stub, tokenizer=None, name="stub", source="stub", fingerprint="stub", device=torch.device("cpu"),
                 dtype=torch.float32, start_token_ids=[], batch_size=64)
ids = paper_workload_ids(args.people, 64, np.random.default_rng(0))
print(f"{len(ids):,} sentences (paper workload, {args.people} people), 1 thread")
for budget in (2048, 32768):
    for rep in range(2):
        for name, mod in engines:
            stub.calls = 0
            t = time.perf_counter(); mod.score_token_ids(lm, ids, batch_tokens=budget); dt = time.perf_counter() - t
            if rep:  # the second round: both warm
                print(f"budget {budget:6d} {name:6s}: {dt:.2f} s host side for {stub.calls} forwards = "
                      f"{1000 * dt / stub.calls:.1f} ms per forward, {1e6 * dt / len(ids):.1f} us per sentence")
