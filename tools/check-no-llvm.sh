#!/usr/bin/env bash
# Fails when BINARY holds an LLVM symbol or one of the front end, the code generator or the
# driver: what an AOT-compiled program links (exec/ and runtime/) must have none of them
# (architecture.md, "Folders and dependency direction"). Run by the unit suite on
# tests/unit_exec_llvm_free.
#   tools/check-no-llvm.sh BINARY
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BINARY" >&2
  exit 2
fi
binary=$1
# Defined and undefined symbols alike: an undefined one is a dependency on a shared library.
symbols=$(nm -C "$binary") || { echo "nm could not read $binary" >&2; exit 2; }
[ -n "$symbols" ] || { echo "no symbols in $binary (stripped?): nothing to check" >&2; exit 2; }
status=0
for namespace in 'llvm::' 'ndp::frontend::' 'ndp::codegen::' 'ndp::driver::'; do
  found=$(grep -F -- "$namespace" <<< "$symbols" || true)
  [ -n "$found" ] || continue
  status=1
  echo "$binary holds $(wc -l <<< "$found") $namespace symbols, such as:"
  head -3 <<< "$found" | sed 's/^/  /'
done
if [ $status -ne 0 ]; then
  echo "exec/ and runtime/ must link without LLVM, the front end, codegen/ and driver/"
  exit 1
fi
echo "$binary: no llvm::, ndp::frontend::, ndp::codegen:: or ndp::driver:: symbols"
