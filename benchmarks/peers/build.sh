#!/usr/bin/env bash
# Build the low-rank SDP programs psdbench runs as peers: LoRADS (with our --solFile patch) and SDPLR,
# from their public repositories at pinned commits, into $PREFIX/bin (default benchmarks/peers/build/bin).
#
#   bash benchmarks/peers/build.sh
#   export PATH="$PWD/benchmarks/peers/build/bin:$PATH"      # or PSDBENCH_LORADS=... PSDBENCH_SDPLR=...
#
# Idempotent: a source tree is fetched again only when missing or at another commit; make only rebuilds
# what changed.  Needs git, gcc, make, cmake, BLAS/LAPACK and ARPACK (Debian: libopenblas-dev
# liblapack-dev libarpack2-dev; installed with apt-get when run as root, else the command is printed).
# env: PREFIX, JOBS (default 1), LORADS_URL / SDPLR_URL (another clone of the same repositories).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=${PREFIX:-$HERE/build}
JOBS=${JOBS:-1}
NICE="nice -n 10"
LORADS_URL=${LORADS_URL:-https://github.com/COPT-Public/LoRADS.git}
LORADS_COMMIT=be44317e64e7aace3c0061265d836ea9281021db   # 2025-02-16 "update cmake"; CMake project LoRADS_v_2_0_1-alpha
SDPLR_URL=${SDPLR_URL:-https://github.com/sburer/sdplr.git}
SDPLR_COMMIT=6866be46ac64aef7043e21dd79f26df83b953280    # 2023-12-14, SDPLR 1.03-beta (tag 1.03-beta = 2369c3d) + blegat's lib/ and quadratic fixes

# ------------------------------------------------------------------ system packages
missing=()
for p in git gcc make cmake libopenblas-dev liblapack-dev libarpack2-dev; do
  if command -v dpkg >/dev/null 2>&1; then dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  elif [[ $p == git || $p == gcc || $p == make || $p == cmake ]]; then command -v "$p" >/dev/null || missing+=("$p"); fi
done
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    echo "missing: ${missing[*]}; install them first, e.g. sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

mkdir -p "$PREFIX/src" "$PREFIX/bin"

# ------------------------------------------------------------------ sources at the pinned commits
# fetch <url> <commit> <dir>: the tree of <commit> in <dir> (a shallow fetch of the commit, else a full one)
fetch() {
  local url=$1 commit=$2 dir=$3
  if [[ -f $dir/.peer_commit && $(cat "$dir/.peer_commit") == "$commit" ]]; then return 0; fi
  rm -rf "$dir" && git init -q "$dir"
  git -C "$dir" fetch -q --depth 1 "$url" "$commit" 2>/dev/null || git -C "$dir" fetch -q "$url"
  git -C "$dir" -c advice.detachedHead=false checkout -q "$commit"
  echo "$commit" > "$dir/.peer_commit"
  echo "fetched $url @ $commit -> $dir"
}

# LoRADS + psdbench's patch (adds --solFile PATH: upstream LoRADS writes no solution)
L=$PREFIX/src/lorads
if [[ ! -f $L/.peer_commit || $(cat "$L/.peer_commit") != "$LORADS_COMMIT+solfile" ]]; then
  rm -f "$L/.peer_commit"
  fetch "$LORADS_URL" "$LORADS_COMMIT" "$L"
  (cd "$L" && patch -s -p1 < "$HERE/lorads-solfile.patch")
  echo "$LORADS_COMMIT+solfile" > "$L/.peer_commit"
  rm -rf "$L/build"
fi
fetch "$SDPLR_URL" "$SDPLR_COMMIT" "$PREFIX/src/sdplr"

# ------------------------------------------------------------------ LoRADS (CMake; BLAS, LAPACK, ARPACK)
mkdir -p "$L/build"
[[ -f $L/build/Makefile ]] || (cd "$L/build" && $NICE cmake .. -DCMAKE_BUILD_TYPE=Release >/dev/null)
$NICE make -s -C "$L/build" -j"$JOBS"
ln -sf "$L/build/LoRADS_v_2_0_1-alpha" "$PREFIX/bin/lorads"

# ------------------------------------------------------------------ SDPLR 1.03-beta
# Its Makefile.inc links -lgfortran, which Debian has no development link for without gfortran; it is not
# needed (liblapack.so.3 pulls libgfortran.so.5 itself), so LIBS is overridden.
S=$PREFIX/src/sdplr
$NICE make -s -C "$S/gsl-1.5/poly" -j"$JOBS"
$NICE make -s -C "$S/source" -j"$JOBS" sdplr LIBS="-lgsl -llapack -lblas -lm"
ln -sf "$S/sdplr" "$PREFIX/bin/sdplr"

# ------------------------------------------------------------------ check: LoRADS takes --solFile
if "$PREFIX/bin/lorads" "$PREFIX/none.dat-s" --solFile "$PREFIX/none.sol" 2>&1 | grep -q "unrecognized option"; then
  echo "the LoRADS build has no --solFile: the patch did not apply" >&2; exit 1
fi
echo "built: $PREFIX/bin/lorads (LoRADS $LORADS_COMMIT + lorads-solfile.patch), $PREFIX/bin/sdplr (SDPLR $SDPLR_COMMIT)"
echo "use:   export PATH=\"$PREFIX/bin:\$PATH\"   (or PSDBENCH_LORADS=$PREFIX/bin/lorads PSDBENCH_SDPLR=$PREFIX/bin/sdplr)"
