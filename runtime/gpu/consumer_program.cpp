// Consumer programs (Note [Consumer programs] in consumer_program.h): splicing an element
// function into the consumer kernels' PTX.
#include "runtime/gpu/consumer_program.h"

#include <zlib.h>

#include <map>
#include <mutex>

#include <algorithm>
#include <optional>
#include <utility>

#include "runtime/gpu/embedded_images.h"
#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

namespace {

cuda::Status missing(const std::string& what) { return cuda::Status::failure("consumer_program", what); }

/// The position of the first line of `text` at or after `from` that starts with `prefix`.
size_t line_starting(std::string_view text, std::string_view prefix, size_t from = 0) {
  for (size_t at = text.find(prefix, from); at != std::string_view::npos; at = text.find(prefix, at + 1))
    if (at == 0 || text[at - 1] == '\n') return at;
  return std::string_view::npos;
}

/// The name of the entry a line declares (".entry NAME(" or ".visible .entry NAME("), or empty.
std::string_view entry_name(std::string_view line) {
  for (std::string_view lead : {".visible .entry ", ".entry "}) {
    if (line.substr(0, lead.size()) != lead) continue;
    std::string_view rest = line.substr(lead.size());
    return rest.substr(0, rest.find('('));
  }
  return {};
}

}  // namespace

ConsumerKernels consumer_kernels(ConsumerUse use, ndp_op op, ndp_elem_type t) {
  const std::string suffix = std::string(op_name(op)) + "_" + elem_suffix(t);
  switch (use) {
    case ConsumerUse::ReduceOne: return {t, {"ndp_fused_reduce_flat_" + suffix}};
    case ConsumerUse::ReduceSegments: return {t, {"ndp_fused_reduce_seg_" + suffix}};
    case ConsumerUse::ScanOne: return {t, {"ndp_fused_scan_flat_" + suffix}};
    case ConsumerUse::ScanSegments: return {t, {"ndp_fused_scan_seg_" + suffix}};
    case ConsumerUse::Pack: return {NDP_BOOL, {"ndp_fused_pack_counts", sized_name("ndp_fused_pack_", t)}};
  }
  return {t, {}};
}

std::string_view consumer_ptx(ndp_elem_type t) {
  // Unpacked once a type, on first use, and kept for the process.
  static std::mutex mu;
  static std::map<ndp_elem_type, std::string> unpacked;
  const std::string name = std::string("fused_") + elem_suffix(t) + ".ptx";
  for (size_t i = 0; i < kFusedPtxCount; ++i) {
    const EmbeddedImage& img = kFusedPtx[i];
    if (img.name == nullptr || name != img.name) continue;
    if (img.unpacked_size == 0) return {reinterpret_cast<const char*>(img.data), img.size};
    std::lock_guard<std::mutex> lock(mu);
    auto [it, fresh] = unpacked.try_emplace(t);
    if (fresh) {
      it->second.resize(img.unpacked_size);
      uLongf size = img.unpacked_size;
      if (uncompress(reinterpret_cast<Bytef*>(it->second.data()), &size, img.data, img.size) != Z_OK ||
          size != img.unpacked_size)
        it->second.clear();  // a damaged build: no consumer programs (they run unfused)
    }
    return it->second;
  }
  return {};
}

namespace {

/// Where `consumers` declares ndp_elements: [begin, end) of `.extern .func (...) ndp_elements
/// (...);`, or nullopt.
std::optional<std::pair<size_t, size_t>> element_declaration(std::string_view consumers) {
  for (size_t at = line_starting(consumers, ".extern .func"); at != std::string_view::npos;
       at = line_starting(consumers, ".extern .func", at + 1)) {
    size_t end = consumers.find(';', at);
    if (end == std::string_view::npos) return std::nullopt;
    if (consumers.substr(at, end - at).find("ndp_elements") != std::string_view::npos) return std::make_pair(at, end + 1);
  }
  return std::nullopt;
}

/// `text` without the entries `keep` does not name (each ends at a line "}"); found[i] tells
/// whether keep[i] was there.
std::string kept_entries(std::string_view text, std::span<const std::string> keep, std::vector<bool>& found) {
  std::string out;
  out.reserve(text.size());
  found.assign(keep.size(), false);
  bool dropping = false;
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
    std::string_view line = text.substr(at, next - at);
    if (std::string_view name = entry_name(line); !name.empty()) {
      auto k = std::find(keep.begin(), keep.end(), name);
      dropping = k == keep.end();
      if (!dropping) found[static_cast<size_t>(k - keep.begin())] = true;
    }
    if (!dropping) out.append(line);
    if (dropping && line.substr(0, line.find_last_not_of("\r\n") + 1) == "}") dropping = false;
    at = next;
  }
  return out;
}

}  // namespace

cuda::Result<std::string> consumer_program(std::string_view consumers, std::string_view element,
                                           std::span<const std::string> keep) {
  const auto decl = element_declaration(consumers);
  if (!decl) return missing("the consumer kernels' PTX declares no ndp_elements");
  // The element module without its header (.version, .target, .address_size: the consumers').
  size_t header = line_starting(element, ".address_size");
  if (header == std::string_view::npos) return missing("the element function's PTX has no .address_size line");
  const size_t eol = element.find('\n', header);
  std::string definition(eol == std::string_view::npos ? std::string_view() : element.substr(eol + 1));
  if (definition.find("ndp_elements") == std::string::npos) return missing("the element function's PTX defines no ndp_elements");
  // Internal to the program: nothing outside it calls the function, so ptxas need not keep it.
  if (size_t v = line_starting(definition, ".visible .func"); v != std::string::npos) definition.erase(v, 9);

  std::vector<bool> found;
  std::string program = std::string(consumers.substr(0, decl->first)) + definition +
                        kept_entries(consumers.substr(decl->second), keep, found);
  for (size_t i = 0; i < keep.size(); ++i)
    if (!found[i]) return missing("the consumer kernels' PTX has no entry " + keep[i]);
  return program;
}

}  // namespace ndp::runtime::gpu
