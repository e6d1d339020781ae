// SplitMix64's finaliser: the mixing function of rand's streams and of hash (Note [rand] in
// lang/eval/rand.h; lang/eval/rand.cpp's RandState::mix is the host's copy).
#pragma once

namespace ndp::runtime::gpu::device {

__device__ inline unsigned long long mix64(unsigned long long x) {
  unsigned long long z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace ndp::runtime::gpu::device
