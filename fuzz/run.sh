#!/usr/bin/env bash
# Builds trac's fuzz targets on stable Rust and runs them (see fuzz/README.md).
#
#   fuzz/run.sh build                 build every target
#   fuzz/run.sh seed                  (re)write the seed corpora under fuzz/corpus/
#   fuzz/run.sh run TARGET [ARGS...]  run one target on its corpus (libFuzzer ARGS, e.g.
#                                     -max_total_time=60); crashes land in fuzz/artifacts/TARGET/
#   fuzz/run.sh list                  the targets
#
# Coverage comes from rustc's stable sanitizer-coverage pass (-Cpasses=sancov-module and
# -Cllvm-args=-sanitizer-coverage-*), the engine from libfuzzer-sys (libFuzzer, built with the
# system's C++ compiler): no nightly toolchain, no clang, no cargo-fuzz needed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
triple="$(rustc -vV | sed -n 's/^host: //p')"
targets=(formula spec trace_jsonl trace_text trace_openai trace_anthropic trace_otlp trace_sniff label llm_answer)

build() {
  # --target keeps these flags off build scripts and proc macros (they would not link without
  # libFuzzer's coverage callbacks).
  RUSTFLAGS="${RUSTFLAGS:-} --cfg fuzzing -Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares \
-Cllvm-args=-sanitizer-coverage-stack-depth -Cdebug-assertions -Coverflow-checks" \
    cargo build --release --locked --target "$triple" --bins
}

# Seeds: the repository's fixtures, split per target, plus ../shared traces when present (read
# at run time, never copied into the repository: corpus/ is ignored by git).
seed() {
  python3 "$here/seed.py" "$here/.." "$here/corpus"
}

case "${1:-}" in
  build) build ;;
  seed) seed ;;
  list) printf '%s\n' "${targets[@]}" ;;
  run)
    t="${2:?usage: fuzz/run.sh run TARGET [libFuzzer args]}"
    shift 2
    [ -d "corpus/$t" ] || seed
    mkdir -p "artifacts/$t" "corpus/$t"
    exec "target/$triple/release/$t" -artifact_prefix="artifacts/$t/" \
      -max_len=65536 -timeout=10 -rss_limit_mb=2048 "$@" "corpus/$t"
    ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
