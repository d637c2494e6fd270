#!/usr/bin/env bash
# Builds CMU PocketSphinx (Debian's sphinxbase + pocketsphinx source packages) to WebAssembly with
# Debian's emscripten, links ps-shim.c, and writes the .wasm, its JavaScript glue and the trimmed US
# English acoustic model into gpu-worker/models/pocketsphinx/. Needs root on a Debian bookworm
# machine (it adds a deb-src entry and installs emscripten, bison, dpkg-dev, pocketsphinx-en-us).
#
# Reproducible: the same bytes on every run (fixed SOURCE_DATE_EPOCH, build paths mapped away with
# -ffile-prefix-map, sources pinned by the Debian versions below). Run it twice and compare:
#   gpu-worker/recogniser/build/build-pocketsphinx-wasm.sh && sha256sum gpu-worker/models/pocketsphinx/*
#
# Usage: build-pocketsphinx-wasm.sh [--no-apt]   (WORK=/tmp/... picks the scratch folder)
set -euo pipefail
started=$(date +%s)
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="$repo/gpu-worker/models/pocketsphinx"
work="${WORK:-/tmp/venus-pocketsphinx-build}"
# The versions this was proven with; apt-get source fetches exactly these (bookworm).
SPHINXBASE_VERSION="0.8+5prealpha+1-16"
POCKETSPHINX_VERSION="0.8+5prealpha+1-15"
export SOURCE_DATE_EPOCH=1700000000
export LC_ALL=C TZ=UTC
jobs="${JOBS:-2}"

if [ "${1:-}" != "--no-apt" ]; then
  export DEBIAN_FRONTEND=noninteractive
  if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/; then
    # Same mirror and suites as the binary entry, source packages only.
    cat >/etc/apt/sources.list.d/venus-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends emscripten bison dpkg-dev make pocketsphinx-en-us >/dev/null
fi

rm -rf "$work"
mkdir -p "$work"
cd "$work"
apt-get source -qq --download-only "sphinxbase=$SPHINXBASE_VERSION" "pocketsphinx=$POCKETSPHINX_VERSION" 2>/dev/null
dpkg-source -q -x sphinxbase_*.dsc sphinxbase
dpkg-source -q -x pocketsphinx_*.dsc pocketsphinx
# Our patches on top of Debian's (each says what it changes and why).
for p in "$here"/patches/*.patch; do
  patch -s -p1 -d pocketsphinx <"$p"
done

# Debian's patches touch configure.ac / Makefile.am, which would make make rerun aclocal and
# automake (different versions than the tarball's): mark the generated files as newer.
for d in sphinxbase pocketsphinx; do
  find "$d" \( -name aclocal.m4 \) -exec touch {} +
  find "$d" \( -name configure -o -name Makefile.in -o -name config.h.in -o -name '*.h.in' \) -exec touch {} +
done

# emcc 3.1.6 runs its JavaScript optimiser on Debian's node modules (acorn).
export NODE_PATH=/usr/share/nodejs
# Map the scratch folder away so no path of this machine ends up in the binary.
# -msimd128: WebAssembly SIMD (Node 12+, every current browser engine), used by the codebook patch
# (patches/ptm-mgau-four-codewords-simd.patch). The compiler's own vectorisation elsewhere does not
# reorder floating-point sums: checked, the same hypotheses, path scores and frame counts on 208
# utterances as the build without it (gpu-worker/recogniser/README.md).
flags="-O3 -msimd128 -ffile-prefix-map=$work=. -fdebug-prefix-map=$work=. -g0"

(
  cd sphinxbase
  emconfigure ./configure -q --host=wasm32-unknown-linux-gnu --disable-shared --enable-static \
    --without-python --without-lapack --disable-threads YACC="bison -y" CFLAGS="$flags" >/dev/null
  emmake make -s -j"$jobs" -C src/libsphinxbase >/dev/null
)
(
  cd pocketsphinx
  emconfigure ./configure -q --host=wasm32-unknown-linux-gnu --disable-shared --enable-static \
    --without-python --with-sphinxbase="$work/sphinxbase" CFLAGS="$flags" >/dev/null
  emmake make -s -j"$jobs" -C src/libpocketsphinx >/dev/null
)

cp "$here/ps-shim.c" "$work/ps-shim.c"
# Synchronous compilation: Node 20 has fetch(), and the 3.1.6 glue would fetch() the .wasm path;
# the caller passes the bytes as wasmBinary instead. FORCE_FILESYSTEM: the model is written into
# MEMFS from JavaScript. The factory is named so the glue reads as what it is.
exports='_venus_ps_open,_venus_ps_open_phones,_venus_ps_set_grammar,_venus_ps_start,_venus_ps_process,_venus_ps_in_speech,_venus_ps_end,_venus_ps_hyp,_venus_ps_score,_venus_ps_frames,_venus_ps_prob,_venus_ps_close,_venus_ps_cepstra,_venus_ps_process_cep,_venus_ps_set_cmn,_venus_ps_get_cmn,_malloc,_free'
emcc $flags ps-shim.c \
  -I sphinxbase/include -I pocketsphinx/include \
  pocketsphinx/src/libpocketsphinx/.libs/libpocketsphinx.a sphinxbase/src/libsphinxbase/.libs/libsphinxbase.a \
  -sMODULARIZE=1 -sEXPORT_NAME=createPocketSphinx -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1 \
  -sWASM_ASYNC_COMPILATION=0 -sFORCE_FILESYSTEM=1 -sEXIT_RUNTIME=0 \
  -sEXPORTED_FUNCTIONS="$exports" -sEXPORTED_RUNTIME_METHODS=FS,UTF8ToString,stringToUTF8,lengthBytesUTF8 \
  -o pocketsphinx.cjs

mkdir -p "$out"
install -m 644 pocketsphinx.wasm "$out/pocketsphinx.wasm"
install -m 644 pocketsphinx.cjs "$out/pocketsphinx.cjs"
model=/usr/share/pocketsphinx/model/en-us/en-us
mkdir -p "$out/en-us"
for f in mdef sendump means variances transition_matrices feat.params noisedict README; do
  cp "$model/$f" "$out/en-us/$f"
done
cp /usr/share/doc/pocketsphinx-en-us/copyright "$out/en-us/debian-copyright"
# The full CMUdict, compressed without a timestamp (-n) so the bytes are the same on every machine.
gzip -9 -n -c /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict > "$out/cmudict-en-us.dict.gz"
# Only the listing of what went in, with versions; the dictionary is cut by make-dictionary.ts.
{
  echo "sphinxbase $(dpkg-parsechangelog -l sphinxbase/debian/changelog -S Version)"
  echo "pocketsphinx $(dpkg-parsechangelog -l pocketsphinx/debian/changelog -S Version)"
  echo "pocketsphinx-en-us $(dpkg-query -W -f='${Version}' pocketsphinx-en-us)"
  echo "emscripten $(dpkg-query -W -f='${Version}' emscripten)"
} >"$out/BUILD-VERSIONS"
echo "built in $(($(date +%s) - started)) s -> $out"
