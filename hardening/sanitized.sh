#!/usr/bin/env bash
# Run a command against a sanitizer build of codelex (see HARDENING.md):
#   CODELEX_SANITIZE=address,undefined pip install -Ccmake.build-type=RelWithDebInfo ".[test]"
#   hardening/sanitized.sh python -m pytest tests -p no:cacheprovider
# The interpreter is not instrumented, so the ASan runtime must be loaded first, and libstdc++ with it:
# ASan resolves its __cxa_throw interceptor at start-up, and the python binary does not link libstdc++.
set -euo pipefail
cxx="${CXX:-g++}"
asan="$("$cxx" -print-file-name=libasan.so)"
stdcxx="$("$cxx" -print-file-name=libstdc++.so)"
export LD_PRELOAD="$asan $stdcxx${LD_PRELOAD:+ $LD_PRELOAD}"
# Python's allocator and interned objects look like leaks to LeakSanitizer: leaks are not what this checks.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export PYTHONMALLOC=malloc  # every allocation through ASan's malloc: overflows into Python objects are seen too
exec "$@"
