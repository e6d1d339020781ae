// Conversions between interpreter Values and Vecs, directed by the static (closed) types.
#pragma once

#include <span>
#include <vector>

#include "exec/host/vec.h"
#include "lang/value.h"

namespace ndp::exec::host {

/// The Vec of the instances `vs`, all of closed type t. Function values raise
/// "functions as values are not supported by the cpu backend".
Vec from_values(lang::TypeContext& types, const lang::Type* t, std::span<const lang::Value> vs);
/// n copies of one value (Lit, Global).
Vec from_value(lang::TypeContext& types, const lang::Type* t, const lang::Value& v, int64_t n);
/// Every instance of v as a Value.
std::vector<lang::Value> to_values(const Vec& v);
/// Instance i of v.
lang::Value to_value(const Vec& v, int64_t i);
/// Instance i of v with every sequence but a string cut to its first `keep` elements, at
/// every depth: what an answer prints (print_length elements a sequence, then `...`) without
/// making a Value of every element of a vector of millions.
lang::Value shown_value(const Vec& v, int64_t i, int64_t keep);

}  // namespace ndp::exec::host
