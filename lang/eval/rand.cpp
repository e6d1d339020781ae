// Counter-based random numbers: the scheme of Note [rand] in rand.h.
#include "lang/eval/rand.h"

namespace ndp::lang::eval {

uint64_t RandState::mix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void RandState::begin_form() {
  indices_.clear();
  counts_.clear();
  reset(0);
}

void RandState::reset(uint64_t seed) {
  seed_ = seed;
  prefix_.assign(1, mix(seed));
  for (uint64_t i : indices_) prefix_.push_back(mix(prefix_.back() ^ i));
  // Counts restart at every depth: draws after a reseed must not depend on draws before it.
  for (auto& level : counts_) level.clear();
  counts_.resize(indices_.size() + 1);
}

void RandState::push_element(uint64_t index) {
  indices_.push_back(index);
  prefix_.push_back(mix(prefix_.back() ^ index));
  // A path is live only while its element runs, so its counts can live (and die) with it.
  if (counts_.size() < indices_.size() + 1) counts_.resize(indices_.size() + 1);
  counts_[indices_.size()].clear();
}

void RandState::pop_element() {
  indices_.pop_back();
  prefix_.pop_back();
}

uint64_t RandState::draw(Span span) {
  uint64_t site = (static_cast<uint64_t>(span.file) << 32) | span.begin;
  auto& level = counts_[indices_.size()];
  uint64_t c = 0;
  bool found = false;
  // Few distinct sites run inside one element, so a linear scan beats hashing.
  for (auto& [s, n] : level) {
    if (s == site) {
      c = n++;
      found = true;
      break;
    }
  }
  if (!found) level.emplace_back(site, 1);
  return mix(mix(prefix_.back() ^ site) ^ c);
}

}  // namespace ndp::lang::eval
