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
  prefix_.assign(1, 0);
  override_.reset();
  reset(0);
}

void RandState::reset(uint64_t seed) {
  seed_mix_ = mix(seed);
  counts_.clear();  // draws after a reseed must not depend on draws before it
}

void RandState::push_element(uint64_t index) { prefix_.push_back(step(prefix_.back(), index)); }

void RandState::pop_element() { prefix_.pop_back(); }

void RandState::set_path(uint64_t path_hash) { override_ = path_hash; }

void RandState::clear_path() { override_.reset(); }

uint64_t RandState::draw(Span span) {
  uint64_t site = span.begin;
  uint64_t path = override_ ? *override_ : prefix_.back();
  uint64_t c = counts_[{site, path}]++;
  return mix(mix(seed_mix_ ^ path ^ site) ^ c);
}

}  // namespace ndp::lang::eval
