// NESL's object format for write_object / read_object (library.md §13.3).
#pragma once

#include <cstdio>
#include <string>

#include "lang/types.h"
#include "lang/value.h"

namespace ndp::lang::eval {

// Note [Object format]
// A value is written as CMU's flattened (VCODE) representation, one line per vector: every
// sequence level contributes its descriptor, `[ l1 l2 ... ]` (one length per sequence at that
// level), followed by the representation of all its elements back to back; scalars are one
// data vector `( x1 x2 ... )`; a pair writes its first components, then its second ones; a
// datatype value writes its fields. So `[1,2]` is "[ 2 ]\n( 1 2 )\n" and `5` is "( 5 )\n".
// Data: ints and i32 in decimal, chars as their codes, bools T/F, floats with 17 significant
// digits (f32 with 9), so every value round-trips exactly; `inf`/`nan` are spelled that way.
// The static type (the primitive's type argument) drives both directions, which is how empty
// nested sequences keep their shape. Function values cannot be written.

/// The text of `v : t` (t closed); false with a message when `t` holds a function type.
bool write_object_text(const Value& v, const Type* t, TypeContext& types, std::string* text, std::string* error);

/// Reads one value of type `t` from `f`; false with a message on malformed input or EOF.
bool read_object_from(std::FILE* f, const Type* t, TypeContext& types, Value* out, std::string* error);

}  // namespace ndp::lang::eval
