"""Provider parity: ``recall``. Every case runs against every provider kind, contract calls only."""

from __future__ import annotations

import pytest

from memadmin.providers import contract as c
from tests.providers.conftest import DEADLINE
from tests.providers.conftest import RECALL_MAX_BYTES as RESOURCE_MAX_BYTES

HOSTILE_QUERIES = [
    '"unbalanced quote', "'single' \"double\" `back`", "&|!():*<->", "a & b | !c <-> (d:*)",
    "' OR 1=1 --", "'; DROP TABLE memory_memoryitem; --", "\\", "\\\\x00 \\'", "the and of",
    "or", "not", "-", "--", '""', "*", "🎉🦄", "日本語", "tab\tnew\nline\rcr", "nul \x00 byte",
    "lone \ud800 surrogate", "%_%", "$1 ? :name", "x" * 10_000, "walrus " * 2_000, "é" * 10_000,
    "", "   ", None,
]


def recall(provider: c.Provider, text: str | None, scope: c.Scope, **kwargs) -> c.RecallResult:
    return provider.recall(text, scope=scope, deadline=DEADLINE, **kwargs)


def assert_well_formed(result: c.RecallResult, cap: int = RESOURCE_MAX_BYTES) -> None:
    assert isinstance(result, c.RecallResult)
    assert len(result.text.encode("utf-8")) <= cap
    assert len(result.hits) <= c.RECALL_MAX_HITS
    assert len(result.sources) <= c.MAX_SOURCES
    for hit in result.hits:
        assert len(hit.snippet) <= c.SNIPPET_MAX_CHARS
        assert 0.0 <= hit.score <= 1.0


class TestRecall:
    def test_it_finds_an_item_by_a_word(self, provider, scope, put):
        wanted = put("The walrus keeps the deploy runbook.", "facts", "walrus")
        put("Nothing about marine mammals here.", "facts", "other")

        result = recall(provider, "walrus", scope)

        assert_well_formed(result)
        assert [hit.source for hit in result.hits] == ["facts/walrus.md"]
        assert [source.id for source in result.sources] == [wanted.id]
        assert result.sources[0].title == "facts/walrus.md"
        assert result.sources[0].revision == 1
        assert "The walrus keeps the deploy runbook." in result.text
        assert "marine" not in result.text
        assert result.quarantined == []

    def test_it_returns_at_most_20_hits_whatever_the_limit(self, provider, scope, put):
        for n in range(25):
            put(f"capybara note number {n}", "facts", f"capy-{n}")

        result = recall(provider, "capybara", scope, limit=50)

        assert_well_formed(result)
        assert 1 <= len(result.hits) <= c.RECALL_MAX_HITS
        assert len(result.sources) <= c.RECALL_MAX_HITS

    def test_it_returns_at_most_the_hits_asked_for(self, provider, scope, put):
        for n in range(6):
            put(f"capybara note number {n}", "facts", f"capy-{n}")

        result = recall(provider, "capybara", scope, limit=3)

        assert len(result.hits) == 3
        assert len({hit.source for hit in result.hits}) == 3

    def test_it_keeps_snippets_within_500_characters(self, provider, scope, put):
        filler = "lorem ipsum dolor sit amet " * 60
        put(filler + "the ocelot sleeps here " + filler, "lessons")
        put("ocelot " * 400, "pins")

        result = recall(provider, "ocelot", scope)

        assert len(result.hits) == 2
        assert_well_formed(result)
        assert any("ocelot" in hit.snippet for hit in result.hits)

    def test_it_scores_hits_between_0_and_1(self, provider, scope, put):
        put("heron", "facts", "a")
        put("heron heron heron heron heron heron heron heron", "facts", "b")
        put("a long text that mentions a heron once among many other words", "facts", "c")

        result = recall(provider, "heron", scope)

        assert len(result.hits) == 3
        assert all(0.0 <= hit.score <= 1.0 for hit in result.hits)

    # -- the text budget ------------------------------------------------------------------------

    def test_it_caps_text_at_the_resource_max_bytes(self, provider, scope, put):
        for n in range(4):
            put(f"gecko {n} " + "padding words " * 200, "facts", f"gecko-{n}")

        for max_bytes in (None, RESOURCE_MAX_BYTES * 4, c.RECALL_MAX_BYTES):
            result = recall(provider, "gecko", scope, max_bytes=max_bytes)

            assert_well_formed(result)
            assert len(result.text.encode("utf-8")) > RESOURCE_MAX_BYTES - 4

    def test_it_caps_text_at_a_smaller_max_bytes_on_a_character_boundary(self, provider, scope,
                                                                          put, subtests):
        put("lynx " + "é" * 1500, "facts", "accents")
        put("lynx " + "🦊" * 700, "facts", "foxes")
        put("lynx " + "日本" * 500, "facts", "kanji")
        full = recall(provider, "lynx", scope)
        assert "\ufffd" not in full.text

        for cap in [1, 2, 3, 5, 7, 64, 99, 100, 101, 102, 103, 511, 1000, 1001, 1002, 1003]:
            with subtests.test(max_bytes=cap):
                result = recall(provider, "lynx", scope, max_bytes=cap)

                assert_well_formed(result, cap=cap)
                encoded = result.text.encode("utf-8")
                assert encoded.decode("utf-8") == result.text
                assert "\ufffd" not in result.text
                assert cap - 4 < len(encoded)  # cut at the last whole character, not earlier
                assert full.text.startswith(result.text)

    def test_it_refuses_a_max_bytes_out_of_range(self, provider, scope, subtests):
        for max_bytes in (0, -1, c.RECALL_MAX_BYTES + 1):
            with subtests.test(max_bytes=max_bytes), pytest.raises(c.InvalidRequest):
                recall(provider, "anything", scope, max_bytes=max_bytes)

    # -- any text is accepted -------------------------------------------------------------------

    def test_it_never_raises_on_hostile_query_text(self, provider, scope, put, subtests):
        put("the walrus keeps the runbook", "facts", "walrus")
        put("\"quoted\" & piped | text (with) <-> operators: *", "lessons")

        for text in HOSTILE_QUERIES:
            with subtests.test(text=text if text is None else text[:40]):
                assert_well_formed(recall(provider, text, scope))

    def test_it_matches_nothing_for_stopwords_only(self, provider, scope, put):
        put("the and of", "pins")

        result = recall(provider, "the and of", scope)

        assert_well_formed(result)
        assert result.quarantined == []

    def test_it_recalls_the_most_recent_items_without_text(self, provider, scope, put):
        one = put("first written", "facts", "one")
        two = put("second written", "facts", "two")
        three = put("third written", "facts", "three")
        put("first written, then touched again", "facts", "one")

        for text in (None, "", "   "):
            result = recall(provider, text, scope)

            assert_well_formed(result)
            assert [source.id for source in result.sources] == [one.id, three.id, two.id]
            assert [hit.source for hit in result.hits] == [
                "facts/one.md", "facts/three.md", "facts/two.md"]
            assert "touched again" in result.text

    def test_it_returns_nothing_from_an_empty_namespace(self, provider, scope):
        result = recall(provider, None, scope)

        assert (result.text, result.hits, result.sources, result.quarantined) == ("", [], [], [])

    def test_it_has_no_side_effects(self, provider, scope, put):
        item = put("the walrus", "facts", "walrus")

        recall(provider, "walrus", scope)
        recall(provider, None, scope)

        detail = provider.get_item(item.id, scope=scope, deadline=DEADLINE)
        assert detail.item.revision == 1
        assert len(detail.revisions) == 1
        assert provider.count(c.ItemFilters(), scope=scope, deadline=DEADLINE) == 1

    # -- quarantine -----------------------------------------------------------------------------

    def test_it_shows_quarantined_items_only_as_labels(self, provider, scope, put):
        put("the okapi is a safe animal", "facts", "safe")
        held = put("the okapi secret is hunter2", "facts", "suspicious")
        provider.set_quarantine(held.id, "pending", scope=scope, deadline=DEADLINE)

        for text in ("okapi", "hunter2", None):
            result = recall(provider, text, scope)

            assert result.quarantined == ["facts/suspicious.md"]
            assert "hunter2" not in result.text
            assert all("hunter2" not in hit.snippet for hit in result.hits)
            assert "facts/suspicious.md" not in {hit.source for hit in result.hits}
            assert held.id not in {source.id for source in result.sources}
            assert "facts/suspicious.md" not in {source.title for source in result.sources}

    def test_it_does_not_let_quarantined_items_crowd_out_visible_ones(self, provider, scope,
                                                                       put):
        visible = put("the okapi is a safe animal", "facts", "safe")
        for n in range(30):
            held = put(f"okapi secret number {n}", "facts", f"held-{n}")
            provider.set_quarantine(held.id, "pending", scope=scope, deadline=DEADLINE)

        for text in ("okapi", None):
            result = recall(provider, text, scope, limit=5)

            assert [source.id for source in result.sources] == [visible.id]
            assert "safe animal" in result.text
            assert 1 <= len(result.quarantined) <= c.RECALL_MAX_HITS
            assert "secret" not in result.text

    def test_it_shows_released_items_again(self, provider, scope, put):
        held = put("the okapi secret was a false alarm", "facts", "suspicious")
        provider.set_quarantine(held.id, "pending", scope=scope, deadline=DEADLINE)
        provider.set_quarantine(held.id, "released", scope=scope, deadline=DEADLINE)

        result = recall(provider, "okapi", scope)

        assert result.quarantined == []
        assert [source.id for source in result.sources] == [held.id]
        assert "false alarm" in result.text

    # -- scope ----------------------------------------------------------------------------------

    def test_it_never_shows_items_of_another_scope(self, provider, scope, other_scope, put):
        put("my tapir notes", "facts", "mine")
        theirs = put("their tapir notes, private", "facts", "theirs", into=other_scope)
        quarantined = put("their tapir secret", "facts", "held", into=other_scope)
        provider.set_quarantine(quarantined.id, "pending", scope=other_scope, deadline=DEADLINE)

        for text in ("tapir", "private", None):
            result = recall(provider, text, scope)

            assert "private" not in result.text and "secret" not in result.text
            assert {theirs.id, quarantined.id}.isdisjoint(s.id for s in result.sources)
            assert "facts/theirs.md" not in {hit.source for hit in result.hits}
            assert result.quarantined == []

    def test_a_scope_without_a_real_partition_is_an_invalid_request(self, provider):
        # Both kinds must answer a malformed scope alike (local once said not_found).
        with pytest.raises(c.InvalidRequest):
            recall(provider, "x", c.Scope.of(None))  # type: ignore[arg-type]

    def test_it_answers_not_found_for_an_unknown_partition(self, provider):
        with pytest.raises(c.NotFound):
            recall(provider, "anything", c.Scope.of("ocmem_v1_" + "0" * 32))


# -- recall that answers questions --------------------------------------------------------------

#: A small relevance set: the items of a namespace, and questions an agent would ask, each with
#: the item(s) that must come first.
RELEVANCE_ITEMS: dict[str, str] = {
    "refund": "Refund limit: agents may refund up to 200 EUR per order without approval.",
    "double": "Customers who were double charged get the duplicate payment reversed by billing.",
    "c1042": "Customer 1042 prefers to be contacted by email, never by phone.",
    "office": "The Lisbon office opens at eight and closes at six.",
    "deploy": "Deploys happen on Tuesdays after the standup; never deploy on a Friday.",
    **{f"note{n}": f"Customer note {n}: the customer asked about the status of an order."
       for n in range(12)},
}
RELEVANCE_QUESTIONS: list[tuple[str, set[str]]] = [
    ("What is the refund limit per order?", {"refund"}),
    ("Which customer prefers email?", {"c1042"}),
    ("When does the Lisbon office open?", {"office"}),
    ("Can we deploy on a Friday?", {"deploy"}),
    ("I was charged twice, a duplicate payment: who reverses it?", {"double"}),
    # The question the preview once answered with nothing: its three subjects come first.
    ("Customer 1042 says they were double charged, what's the refund limit?",
     {"c1042", "double", "refund"}),
]


class TestAnswers:
    @pytest.fixture
    def stored(self, put) -> dict[str, str]:
        return {put(text, "facts", key).id: key for key, text in RELEVANCE_ITEMS.items()}

    @pytest.mark.parametrize(("question", "first"), RELEVANCE_QUESTIONS)
    def test_it_ranks_the_items_that_answer_a_question_first(self, provider, scope, stored,
                                                             question, first):
        result = recall(provider, question, scope)

        assert_well_formed(result)
        ranked = [stored[source.id] for source in result.sources]
        assert set(ranked[:len(first)]) == first, ranked

    def test_scores_differ_when_relevance_does(self, provider, scope, stored):
        result = recall(provider, RELEVANCE_QUESTIONS[-1][0], scope)

        scores = [hit.score for hit in result.hits]
        assert scores == sorted(scores, reverse=True)
        assert scores[0] > scores[-1]
        # An item matching only the common word ranks below those matching rare ones.
        by_key = {stored[s.id]: h.score for s, h in zip(result.sources, result.hits,
                                                        strict=True)}
        assert by_key["note0"] < min(by_key[k] for k in ("c1042", "double", "refund"))

    def test_it_ranks_newest_first_among_equal_matches(self, provider, scope, put):
        old = put("The heron nests by the river.", "facts", "old")
        new = put("A heron nests near the lake.", "facts", "new")

        result = recall(provider, "Where does the heron nest?", scope)

        assert [s.id for s in result.sources] == [new.id, old.id]
        assert result.hits[0].score == result.hits[1].score

    def test_a_rare_term_is_found_behind_many_newer_common_matches(self, provider, scope, put):
        wanted = put("The customer with the walrus account pays by invoice.", "facts",
                     "walrus")
        for n in range(30):
            put(f"Customer {n} asked about the weather.", "facts", f"common-{n}")

        result = recall(provider, "Which customer has the walrus account?", scope, limit=5)

        assert result.sources[0].id == wanted.id
        assert len(result.sources) == 5

    def test_it_stays_within_the_byte_budget(self, provider, scope, stored):
        result = recall(provider, RELEVANCE_QUESTIONS[-1][0], scope, max_bytes=200)

        assert_well_formed(result, cap=200)
        assert result.text.startswith("[facts/")
