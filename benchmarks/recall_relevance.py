"""Recall's relevance: the hit rate of the relevance set the parity suite checks
(tests/providers/test_parity_recall.py: questions an agent would ask, each with the items that
must come first), on the built-in store, alone and hidden among bulk-loaded items.

A question is a hit when its expected items are exactly the first ones recalled; the mean
reciprocal rank of the first expected item is printed too. The second pass adds N bulk items
(``bulk_load``, whose vocabulary shares common words such as "customer", "order", "refund")
to the same namespace first, so the set's items compete with many others.

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/recall_relevance.py [--items N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from support import ROOT, bench_database, record, setup_django

setup_django()

from django.conf import settings  # noqa: E402


def relevance_set() -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    import sys

    sys.path.insert(0, str(ROOT))
    from tests.providers.test_parity_recall import RELEVANCE_ITEMS, RELEVANCE_QUESTIONS

    return RELEVANCE_ITEMS, RELEVANCE_QUESTIONS


def score(provider: Any, scope: Any, stored: dict[str, str],
          questions: list[tuple[str, set[str]]]) -> dict[str, float]:
    hits, ranks, times = 0, [], []
    for question, first in questions:
        started = time.perf_counter()
        result = provider.recall(question, scope=scope, deadline=60)
        times.append((time.perf_counter() - started) * 1000)
        ranked = [stored.get(source.id, "") for source in result.sources]
        hits += set(ranked[:len(first)]) == first
        rank = next((n for n, key in enumerate(ranked, 1) if key in first), None)
        ranks.append(1 / rank if rank else 0.0)
    return {"hit_rate": hits / len(questions), "mrr": statistics.mean(ranks),
            "median_ms": statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000,
                        help="bulk items the set hides among in the second pass")
    args = parser.parse_args()
    settings.DEBUG = False
    items, questions = relevance_set()
    with bench_database("relevance"):
        import bulk_load

        from memadmin.providers.registry import namespace_scope, provider_for

        namespace = bulk_load.bulk_namespace()
        provider = provider_for(namespace.resource.provider)
        scope = namespace_scope(namespace)
        stored = {provider.retain("facts", f"rel-{key}", text, "replace",
                                  operation_id=f"rel-{key}", scope=scope, deadline=60).id: key
                  for key, text in items.items()}
        alone = score(provider, scope, stored, questions)
        bulk_load.bulk_load(args.items)
        # (Bulk rows are stamped up to 90 days back: the set stays the newest, as an agent's
        # latest notes would be; the ranking, not recency, must find them.)
        crowded = score(provider, scope, stored, questions)
    print(f"relevance set: {len(questions)} questions over {len(items)} items "
          "(tests/providers/test_parity_recall.py)")
    print(f"{'pass':<34}{'hit rate':>9}{'MRR':>7}{'median ms':>11}")
    for label, figures in ((f"alone ({len(items)} items)", alone),
                           (f"among {args.items:,} bulk items", crowded)):
        print(f"{label:<34}{figures['hit_rate']:>9.2f}{figures['mrr']:>7.2f}"
              f"{figures['median_ms']:>11.1f}")
    record("recall_relevance", "hit rate, the set alone", round(alone["hit_rate"], 2), "ratio")
    record("recall_relevance", f"hit rate among {args.items:,} bulk items",
           round(crowded["hit_rate"], 2), "ratio")
    record("recall_relevance", f"MRR among {args.items:,} bulk items",
           round(crowded["mrr"], 2), "ratio")


if __name__ == "__main__":
    main()
