// The primitive table (lang/prims.def) and the runtime error messages (lang/runtime_errors.def):
// the columns agree with each other and with the signatures, and the messages are distinct.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lang/core.h"
#include "lang/runtime_errors.h"

using namespace ndp::lang;
using core::PrimEffect;
using core::PrimFamily;
using core::PrimId;
using core::PrimIdentity;
using core::PrimOperator;

namespace {

std::vector<PrimId> all_prims() {
  std::vector<PrimId> ids;
  for (size_t i = 0; i < static_cast<size_t>(PrimId::Count_); ++i) ids.push_back(static_cast<PrimId>(i));
  return ids;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string name(PrimId id) { return core::prim_info(id).name; }
std::string signature(PrimId id) { return core::prim_info(id).type; }
bool folds(PrimFamily f) { return f == PrimFamily::Scan || f == PrimFamily::Reduce || f == PrimFamily::Combine; }

}  // namespace

TEST_CASE("exactly the scans, reductions and combines have an operator") {
  for (PrimId id : all_prims()) {
    INFO(name(id));
    CHECK(folds(core::prim_family(id)) == (core::prim_operator(id) != PrimOperator::None));
  }
}

TEST_CASE("each operator has one scan, one reduction and one combine, named after it") {
  std::map<PrimOperator, std::vector<PrimId>> scans, reductions, combines;
  for (PrimId id : all_prims()) {
    if (core::is_scan(id)) scans[core::prim_operator(id)].push_back(id);
    if (core::is_reduction(id)) reductions[core::prim_operator(id)].push_back(id);
    if (core::is_combine(id)) combines[core::prim_operator(id)].push_back(id);
  }
  for (PrimOperator op : {PrimOperator::Plus, PrimOperator::Mult, PrimOperator::Max, PrimOperator::Min,
                          PrimOperator::And, PrimOperator::Or, PrimOperator::Xor}) {
    INFO("operator " << static_cast<int>(op));
    REQUIRE(scans[op].size() == 1);
    REQUIRE(reductions[op].size() == 1);
    REQUIRE(combines[op].size() == 1);
    // plus_scan and plus_combine share their stem; the reductions have their own names.
    std::string scan = name(scans[op][0]);
    REQUIRE(ends_with(scan, "_scan"));
    CHECK(name(combines[op][0]) == scan.substr(0, scan.size() - 5) + "_combine");
    CHECK(core::prim_identity(scans[op][0]) == core::prim_identity(reductions[op][0]));
  }
  CHECK(scans.size() == 7);
  CHECK(core::prim_operator(PrimId::Sum) == PrimOperator::Plus);
  CHECK(core::prim_operator(PrimId::AnyRed) == PrimOperator::Or);
  CHECK(core::prim_operator(PrimId::Parity) == PrimOperator::Xor);
}

TEST_CASE("the operator agrees with the signature's type class") {
  for (PrimId id : all_prims()) {
    if (!folds(core::prim_family(id))) continue;
    INFO(name(id) << " : " << signature(id));
    switch (core::prim_operator(id)) {
      case PrimOperator::Plus: case PrimOperator::Mult: CHECK(ends_with(signature(id), "(a in number)")); break;
      case PrimOperator::Max: case PrimOperator::Min: CHECK(ends_with(signature(id), "(a in ordinal)")); break;
      case PrimOperator::And: case PrimOperator::Or: case PrimOperator::Xor:
        CHECK(ends_with(signature(id), "(a in logical)"));
        break;
      case PrimOperator::None: FAIL("a fold without an operator"); break;
    }
  }
}

TEST_CASE("scans and reductions start from their operator's identity; nothing else has one") {
  const std::map<PrimOperator, PrimIdentity> identity_of = {
      {PrimOperator::Plus, PrimIdentity::Zero},    {PrimOperator::Mult, PrimIdentity::One},
      {PrimOperator::Max, PrimIdentity::Lowest},   {PrimOperator::Min, PrimIdentity::Highest},
      {PrimOperator::And, PrimIdentity::AllOnes},  {PrimOperator::Or, PrimIdentity::Zero},
      {PrimOperator::Xor, PrimIdentity::Zero}};
  for (PrimId id : all_prims()) {
    INFO(name(id));
    if (core::is_scan(id) || core::is_reduction(id))
      CHECK(core::prim_identity(id) == identity_of.at(core::prim_operator(id)));
    else
      CHECK(core::prim_identity(id) == PrimIdentity::None);
  }
}

TEST_CASE("the family agrees with the signature") {
  for (PrimId id : all_prims()) {
    const core::PrimInfo& p = core::prim_info(id);
    INFO(p.name << " : " << p.type);
    bool mentions_sequences = signature(id).find('[') != std::string::npos;
    switch (p.family) {
      case PrimFamily::Elementwise:
      case PrimFamily::Random: CHECK_FALSE(mentions_sequences); break;
      case PrimFamily::Scan:
        CHECK(p.arity == 1);
        CHECK(signature(id).rfind("[a] -> [a]", 0) == 0);
        break;
      case PrimFamily::Reduce:
        CHECK(p.arity == 1);
        CHECK(signature(id).rfind("[a] -> a ", 0) == 0);
        break;
      case PrimFamily::Combine:
        CHECK(p.arity == 3);
        CHECK(signature(id).rfind("([a], [int], [a]) -> [a]", 0) == 0);
        break;
      // On sequences, or on whole values of any type (identity, eql, hash).
      case PrimFamily::Sequence: CHECK((mentions_sequences || ends_with(p.type, "(a in any)"))); break;
      case PrimFamily::Io: break;
    }
  }
  // The elementwise family is what the backends compile into kernels: scalar in, scalar out.
  CHECK(core::is_elementwise(PrimId::Add));
  CHECK(core::is_elementwise(PrimId::Select));
  CHECK(core::is_elementwise(PrimId::ToF32));
  CHECK_FALSE(core::is_elementwise(PrimId::Rand));  // it reads and advances the random state
  CHECK_FALSE(core::is_elementwise(PrimId::Length));
}

TEST_CASE("effects: what CSE and call merging may not touch") {
  for (PrimId id : all_prims()) {
    INFO(name(id));
    PrimFamily f = core::prim_family(id);
    PrimEffect e = core::prim_effect(id);
    // Random numbers are always ordered (the per-site draw counts); only I/O is otherwise.
    if (f == PrimFamily::Random) CHECK(e == PrimEffect::Ordered);
    if (f != PrimFamily::Random && f != PrimFamily::Io) CHECK(e == PrimEffect::Pure);
    CHECK(core::prim_has_effect(id) == (e == PrimEffect::Ordered));
  }
  CHECK(core::prim_effect(PrimId::RuntimeErrorPrim) == PrimEffect::Raises);
  CHECK(core::prim_effect(PrimId::StreamConst) == PrimEffect::Pure);  // a constant: nullstr, stdin, ...
  for (PrimId id : {PrimId::PrintChar, PrimId::PrintString, PrimId::Error, PrimId::ReadChar, PrimId::WriteObject,
                    PrimId::OpenInFile, PrimId::CloseFile, PrimId::ShellCommand, PrimId::GetEnv, PrimId::Spawn}) {
    INFO(name(id));
    CHECK(core::prim_has_effect(id));
  }
}

TEST_CASE("runtime error messages are distinct sentences") {
  std::set<std::string> seen;
  for (size_t i = 0; i < static_cast<size_t>(RuntimeErrorId::Count_); ++i) {
    std::string text = message(static_cast<RuntimeErrorId>(i));
    INFO(text);
    CHECK(seen.insert(text).second);
    CHECK(!text.empty());
    CHECK(text.back() == '.');
  }
}

TEST_CASE("runtime error messages: CMU's texts, and arguments filled in") {
  CHECK(message(RuntimeErrorId::SeqRefBounds, int64_t{5}, size_t{3}) ==
        "Sequence reference (a[i]) out of bounds: index 5, length 3.");
  CHECK(std::string(message(RuntimeErrorId::DivideByZero)) == "Divide by zero.");
  CHECK(message(RuntimeErrorId::ApplyToEachLengthMismatch, 3, 2) == "Length mismatch in an apply-to-each: lengths 3 and 2.");
  CHECK(message(RuntimeErrorId::GatherBounds, -1, 2) == "Index out of bounds for function ->: index -1, length 2.");
  CHECK(message(RuntimeErrorId::Undefined, "FOO") == "FOO is undefined.");
  CHECK(message(RuntimeErrorId::NoBody, "F") == "No body for function F.");
  CHECK(message(RuntimeErrorId::CombineLengthMismatch, "PLUS_COMBINE") == "Length mismatch in function PLUS_COMBINE.");
  CHECK(message(RuntimeErrorId::CombineBounds, "MAX_COMBINE", int64_t{-1}, size_t{2}, int64_t{5}) ==
        "Index out of bounds for function MAX_COMBINE: index -1 at position 2, length 5.");
}
