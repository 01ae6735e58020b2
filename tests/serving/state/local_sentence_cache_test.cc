// The sentence cache in the process (serving/state/local_sentence_cache.h): keys, the byte
// bound, LRU order, statistics.
#include "serving/state/local_sentence_cache.h"

#include <gtest/gtest.h>

namespace mtserve {
namespace {

TranslationResult Result(const std::string& text) {
  TranslationResult r;
  r.source_tokens = 4;
  Hypothesis h;
  h.text = text;
  h.ids = {5, 6, 0};
  h.token_log_probs = {-1, -2, -3};
  h.score = -6;
  r.hypotheses.push_back(h);
  return r;
}

TEST(LocalSentenceCacheTest, KeysDifferByModelOptionsAndSource) {
  DecodingOptions greedy;
  DecodingOptions beam;
  beam.beam_size = 4;
  const std::vector<int> ids = {1, 2, 0};
  const std::string key = *SentenceCacheKey("a", greedy, ids);
  EXPECT_EQ(*SentenceCacheKey("a", greedy, ids), key);
  EXPECT_NE(*SentenceCacheKey("b", greedy, ids), key);
  EXPECT_NE(*SentenceCacheKey("a", beam, ids), key);
  EXPECT_NE(*SentenceCacheKey("a", greedy, {1, 3, 0}), key);
  DecodingOptions longer = greedy;
  longer.max_length = 20;
  EXPECT_NE(*SentenceCacheKey("a", longer, ids), key);
  // A result without alignments cannot answer a request for them.
  DecodingOptions aligned = greedy;
  aligned.return_alignment = true;
  EXPECT_NE(*SentenceCacheKey("a", aligned, ids), key);
  // Nor does a translation with the whole vocabulary answer one with the shortlist.
  DecodingOptions whole = greedy;
  whole.shortlist = false;
  EXPECT_NE(*SentenceCacheKey("a", whole, ids), key);
}

TEST(LocalSentenceCacheTest, SamplingIsCachedOnlyWithASeed) {
  DecodingOptions sampling;
  sampling.sampling_topk = 10;
  EXPECT_FALSE(SentenceCacheKey("a", sampling, {1, 0}).has_value());
  sampling.seed = 7;
  const std::optional<std::string> seven = SentenceCacheKey("a", sampling, {1, 0});
  ASSERT_TRUE(seven.has_value());
  sampling.seed = 8;
  EXPECT_NE(*SentenceCacheKey("a", sampling, {1, 0}), *seven);
}

TEST(LocalSentenceCacheTest, HitsGiveBackWhatWasInsertedAndAreCounted) {
  LocalSentenceCache cache(1 << 20);
  EXPECT_FALSE(cache.Lookup("a").has_value());
  cache.Insert("a", Result("Hund"));
  const std::optional<TranslationResult> hit = cache.Lookup("a");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->hypotheses[0].text, "Hund");
  EXPECT_EQ(hit->hypotheses[0].ids, (std::vector<int>{5, 6, 0}));
  EXPECT_FLOAT_EQ(hit->hypotheses[0].score, -6);
  const SentenceCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.entries, 1);
  EXPECT_GT(stats.bytes, 0);
}

// Entries beyond the bound push out the least recently used; a lookup makes an entry recent.
TEST(LocalSentenceCacheTest, StaysWithinItsBytesDroppingTheLeastRecentlyUsed) {
  LocalSentenceCache probe(1 << 20);
  probe.Insert("k0", Result("x"));
  const int64_t entry = probe.stats().bytes;
  LocalSentenceCache cache(3 * entry + entry / 2);  // Room for three entries.
  cache.Insert("k0", Result("x"));
  cache.Insert("k1", Result("x"));
  cache.Insert("k2", Result("x"));
  ASSERT_TRUE(cache.Lookup("k0").has_value());  // k1 is now the least recently used.
  cache.Insert("k3", Result("x"));
  EXPECT_EQ(cache.stats().entries, 3);
  EXPECT_LE(cache.stats().bytes, 3 * entry + entry / 2);
  EXPECT_TRUE(cache.Lookup("k0").has_value());
  EXPECT_FALSE(cache.Lookup("k1").has_value());
  EXPECT_TRUE(cache.Lookup("k2").has_value());
  EXPECT_TRUE(cache.Lookup("k3").has_value());
}

TEST(LocalSentenceCacheTest, ZeroBytesCachesNothing) {
  LocalSentenceCache cache(0);
  cache.Insert("a", Result("Hund"));
  EXPECT_FALSE(cache.Lookup("a").has_value());
  EXPECT_EQ(cache.stats().entries, 0);
}

}  // namespace
}  // namespace mtserve
