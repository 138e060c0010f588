#!/usr/bin/env bash
# Builds llama.cpp's own `llama-server` from the sources vendored in the llama-cpp-python sdist (from PyPI, version
# and sha256 pinned below), for the real-model test tier (tests/real_model/). Prints the binary's path on stdout;
# progress and figures go to stderr.
#
# The binary is cached in ${XDG_CACHE_HOME:-~/.cache}/langgraph-anytool/llama-server/<sdist sha256>/ and the build
# is skipped when it is there, was built for this CPU (ggml is compiled with -march=native) and runs. The build log,
# the cmake options and the build's wall and CPU times are kept beside it (build.log, build-info.txt).
#
#   bash .ci/llama_server.sh            # → ~/.cache/langgraph-anytool/llama-server/832d…/llama-server
set -euo pipefail

VERSION=0.3.36  # llama-cpp-python; its vendor/llama.cpp is what is built
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
JOBS="${LLAMA_BUILD_JOBS:-$(nproc)}"
PY="${PYTHON:-python3}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/langgraph-anytool/llama-server/$SHA256"
BIN="$CACHE/llama-server"
CMAKE_OPTIONS=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
               -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=ON)
if [ "$(uname -m)" = x86_64 ]; then
    # -march=native turns AMX on where the CPU lists it, but a kernel or hypervisor that does not grant the AMX tile
    # state kills the server with SIGILL at its first matrix product (seen here: "tilezero", exit 132): no AMX
    NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    CMAKE_OPTIONS+=("-DCMAKE_C_FLAGS=$NO_AMX" "-DCMAKE_CXX_FLAGS=$NO_AMX")
fi

say() { echo "llama-server: $*" >&2; }

# the CPU features the native build depends on: a cached binary built for other ones is rebuilt
cpu_flags() { grep -m1 -o '^flags.*' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' | grep -E '^(avx|f16c|fma|sse|bmi|amx)' \
    | sort | tr '\n' ' ' || true; }
CPU="$(uname -m) $(cpu_flags)"

usable() {  # the cached binary is there, built for this CPU, and starts
    [ -x "$BIN" ] && [ -f "$CACHE/build-info.txt" ] && grep -qxF "cpu: $CPU" "$CACHE/build-info.txt" \
        && "$BIN" --version >/dev/null 2>&1
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9  # one build at a time per cache folder
if usable; then
    say "cached: $BIN ($("$BIN" --version 2>&1 | grep -m1 -o 'version: .*' || echo 'version unknown'))"
    echo "$BIN"
    exit 0
fi

for tool in cmake make g++; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        say "installing the compiler tool chain (cmake, make, g++) with apt-get"
        if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi
        $SUDO apt-get update -qq && $SUDO apt-get install -y -qq cmake make g++ >&2
        break
    fi
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
say "downloading the llama-cpp-python $VERSION sdist from PyPI (sha256 $SHA256)"
echo "llama-cpp-python==$VERSION --hash=sha256:$SHA256" > "$WORK/requirements.txt"
"$PY" -m pip download --quiet --no-deps --no-binary :all: --require-hashes -r "$WORK/requirements.txt" \
    -d "$WORK/dl" >&2
SDIST="$WORK/dl/llama_cpp_python-$VERSION.tar.gz"
echo "$SHA256  $SDIST" | sha256sum -c --quiet - >&2
tar -xzf "$SDIST" -C "$WORK" "llama_cpp_python-$VERSION/vendor/llama.cpp"
SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"

say "configuring (cmake ${CMAKE_OPTIONS[*]})"
cmake -S "$SRC" -B "$WORK/build" "${CMAKE_OPTIONS[@]}" > "$CACHE/build.log" 2>&1 || {
    tail -n 40 "$CACHE/build.log" >&2; say "cmake failed (log: $CACHE/build.log)"; exit 1; }

# the compile prints "[ 42%] Building ..." lines: show one line per 10 %, and one a minute while it goes on
progress() {
    local start=$SECONDS last_pct=-10 last_t=$SECONDS pct=0 line rc
    while true; do
        if IFS= read -r -t 15 line; then
            echo "$line" >> "$CACHE/build.log"
            [[ "$line" =~ ^\[\ *([0-9]+)%\] ]] && pct=${BASH_REMATCH[1]}
        else
            rc=$?
            (( rc > 128 )) || break  # end of the output (a timeout is > 128)
        fi
        if (( pct >= last_pct + 10 || SECONDS - last_t >= 60 )); then
            say "compiling: ${pct}% after $(( (SECONDS - start) / 60 ))m$(( (SECONDS - start) % 60 ))s"
            last_pct=$pct last_t=$SECONDS
        fi
    done
}
compile() {
    cmake --build "$WORK/build" --target llama-server -j "$JOBS" 2>&1 | progress
}
say "compiling llama-server with $JOBS jobs, once (about 12 CPU-minutes: ~7 minutes on 2 idle cores, twice that on a
    busy machine); the binary is cached for the next runs"
TIMEFORMAT='%R %U %S'
{ time compile 2>&3 ; } 3>&2 2> "$WORK/time.txt" || {
    tail -n 40 "$CACHE/build.log" >&2; say "the compile failed (log: $CACHE/build.log)"; exit 1; }
read -r wall user sys < <(tail -n 1 "$WORK/time.txt")
install -m 755 "$WORK/build/bin/llama-server" "$BIN.new" && mv -f "$BIN.new" "$BIN"
{
    echo "llama-cpp-python: $VERSION (sdist sha256 $SHA256)"
    echo "cmake: ${CMAKE_OPTIONS[*]}"
    echo "jobs: $JOBS"
    echo "build seconds: wall $wall, user $user, sys $sys"
    echo "cpu: $CPU"
} > "$CACHE/build-info.txt"
say "built in ${wall}s wall, ${user}s user + ${sys}s sys CPU: $BIN"
usable || { say "the built binary does not start: $("$BIN" --version 2>&1 | tail -n 3)"; exit 1; }
echo "$BIN"
