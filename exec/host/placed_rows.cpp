// A laid-out recursion loop's results in one host buffer (see placed_rows.h).
#include "exec/host/placed_rows.h"

#include <algorithm>

#include "exec/host/parallel_loops.h"
#include "lang/diagnostics.h"

namespace ndp::exec::host {

namespace {

template <class T>
class HostPlacedRows final : public PlacedRows<Vec> {
 public:
  explicit HostPlacedRows(int64_t total) : elems_(total) {}

  void put(const Vec& rows, std::span<const int64_t> at) override {
    NDP_ASSERT(static_cast<int64_t>(at.size()) == rows.size(), "placed rows without a place each");
    const int64_t n = rows.size();
    if (n == 0) return;
    const T* from = rows.elems().template data<T>();
    const int64_t* off = rows.offsets();
    T* to = elems_.data();
    for (size_t i = 0; i < at.size(); ++i)
      NDP_ASSERT(at[i] >= 0 && at[i] + rows.length(static_cast<int64_t>(i)) <= elems_.size(), "a row placed outside the results");
    // Split by elements: the first levels place a few long rows, the last many short ones.
    parallel_run_pieces(n, off, [&](int64_t i, int64_t b, int64_t e) { copy_run(to + at[static_cast<size_t>(i)] + b, from + off[i] + b, e - b); });
  }

  void put_rows_of(const Vec& rows, std::span<const int64_t> which, std::span<const int64_t> at) override {
    NDP_ASSERT(which.size() == at.size(), "placed rows without a place each");
    const auto m = static_cast<int64_t>(which.size());
    if (m == 0) return;
    const T* from = rows.elems().template data<T>();
    const int64_t* off = rows.offsets();
    T* to = elems_.data();
    int64_t total = 0;
    for (size_t k = 0; k < which.size(); ++k) {
      const int64_t i = which[k];
      NDP_ASSERT(i >= 0 && i < rows.size() && at[k] >= 0 && at[k] + off[i + 1] - off[i] <= elems_.size(), "a row placed outside the results");
      total += off[i + 1] - off[i];
    }
    if (total < kParallelGrain) {
      // Few elements (a deep level's finished rows, of zero or one element each): one loop.
      for (size_t k = 0; k < which.size(); ++k) copy_run(to + at[k], from + off[which[k]], off[which[k] + 1] - off[which[k]]);
      return;
    }
    // The chosen rows' offsets among themselves, to split the copy by elements as put does.
    std::vector<int64_t> chosen(static_cast<size_t>(m) + 1, 0);
    for (size_t k = 0; k < which.size(); ++k) chosen[k + 1] = chosen[k] + off[which[k] + 1] - off[which[k]];
    parallel_run_pieces(m, chosen.data(), [&](int64_t k, int64_t b, int64_t e) {
      copy_run(to + at[static_cast<size_t>(k)] + b, from + off[which[static_cast<size_t>(k)]] + b, e - b);
    });
  }

  Vec rows(const lang::Type* t, const std::vector<int64_t>& lengths) override {
    const auto n = static_cast<int64_t>(lengths.size());
    const int64_t total = elems_.size();
    Vec elems = Vec::scalar(t->a, total, elems_.share());
    // Rows of one length stay regular (Note [Uniform buffers]), as the argument's were.
    if (n > 0 && std::all_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l == lengths[0]; }))
      return Vec::seq(t, n, uniform_buffer(lengths[0], n), std::move(elems));
    Buf<int64_t> len(n);
    std::copy(lengths.begin(), lengths.end(), len.data());
    return Vec::seq(t, n, len.share(), std::move(elems));
  }

 private:
  Buf<T> elems_;
};

}  // namespace

std::unique_ptr<PlacedRows<Vec>> placed_rows(const lang::Type* rows_type, int64_t total) {
  if (rows_type == nullptr || rows_type->kind != lang::TypeKind::Seq || !is_flat_scalar(rows_type->a)) return nullptr;
  return with_scalar(rows_type->a->kind, [&](auto tag) -> std::unique_ptr<PlacedRows<Vec>> {
    return std::make_unique<HostPlacedRows<typename decltype(tag)::type>>(total);
  });
}

}  // namespace ndp::exec::host
