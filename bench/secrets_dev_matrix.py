"""Dev-split stress for the scrubber: every dev format, fresh values, in every context.

    PYTHONPATH=. .venv/bin/python bench/secrets_dev_matrix.py [--per 2] [--misses]

The corpus (`bench/secrets_corpus`) plants each value in one context, so a class of
29 values may hold no dev value a rule misses while its held-out third does. This
draws `--per` fresh values (its own seed, not the corpus's) of each format of the dev
providers only (`held_out` in `bench/secrets_index_eval.py`) and plants each in every
context that fits it, then scrubs the text directly (no index): misses by context, and
with `--misses` which format in which context. Held-out providers never appear here.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter

from bench.secrets_corpus.generate import formats, value
from bench.secrets_corpus.plant import CONTEXTS, _fits, _label
from bench.secrets_index_eval import held_out
from bot.ingest.secrets import scrub

SEED = "codecite-secrets-dev-matrix"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per", type=int, default=2, help="values drawn per format")
    parser.add_argument("--misses", action="store_true", help="list each value kept")
    args = parser.parse_args()
    rng = random.Random(SEED)
    total: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    misses: list[str] = []
    for fmt in (f for f in formats() if not held_out(f.provider)):
        for _ in range(args.per):
            drawn, secrets = value(fmt, rng)
            for context in (c for c in CONTEXTS if _fits(c, fmt)):
                path, text = CONTEXTS[context][1](fmt.name, drawn, _label(fmt), "a canary")
                out = scrub(text, path).text
                total[context] += 1
                if any(secret in out for secret in secrets):
                    kept[context] += 1
                    misses.append(f"{context}: {fmt.provider}/{fmt.kind} ({fmt.shape})")
    for context in CONTEXTS:
        share = kept[context] / max(1, total[context])
        print(f"{context:24} {kept[context]:4} / {total[context]:5}  {share:6.1%}")
    print(f"{'all':24} {sum(kept.values()):4} / {sum(total.values()):5}")
    if args.misses:
        print("\n".join(sorted(set(misses))))


if __name__ == "__main__":
    main()
