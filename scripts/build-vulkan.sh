#!/usr/bin/env bash
# The Vulkan variant of llama-cpp-python, for the GPU tests (tests/gpu) on machines without a GPU: llama.cpp's
# Vulkan backend runs on Mesa's lavapipe, a Vulkan device that runs on the CPU. Built once into
# .cache/wheels-vulkan (about 20 minutes on 2 cores, most of it shaders) and installed, with the runtime's
# dependencies, into a venv of its own, .cache/vulkan-venv, beside the CPU .venv the rest of Lokal uses.
# scripts/dev.sh test runs it; safe to run again: what is built stays built.
#
#   scripts/build-vulkan.sh PYTHON    (PYTHON: the interpreter to create the venv with, e.g. .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${1:-$ROOT/.venv/bin/python}

say() { printf '\033[1mlokal setup:\033[0m %s\n' "$*" >&2; }

debs_installed() {
    for deb in "$@"; do
        dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q 'install ok installed' || return 1
    done
}

vulkan_debs="mesa-vulkan-drivers libvulkan-dev glslc spirv-headers"
# shellcheck disable=SC2086
if ! debs_installed $vulkan_debs; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing Vulkan's loader, headers, shader compiler and lavapipe for the GPU tests"
        apt-get update -qq && apt-get install -y -qq $vulkan_debs >/dev/null
    else
        say "the GPU tests (tests/gpu) need: apt-get install $vulkan_debs"
        exit 1
    fi
fi

LLAMA_SPEC="llama-cpp-python==0.3.36"
WHEELS=$ROOT/.cache/wheels-vulkan
VENV=$ROOT/.cache/vulkan-venv
vulkan_wheel() { find "$WHEELS" -maxdepth 1 -name 'llama_cpp_python-0.3.36-*.whl' 2>/dev/null | head -n 1; }
# A wheel from before LLAVA_BUILD=ON has no multimodal library (libmtmd, pictures): it is built again.
if [ -n "$(vulkan_wheel)" ] && ! "$PY" -c 'import sys, zipfile; sys.exit(not any("mtmd" in n.rsplit("/", 1)[-1] for n in zipfile.ZipFile(sys.argv[1]).namelist() if "/lib/" in n))' "$(vulkan_wheel)"; then
    rm -f "$(vulkan_wheel)"
    rm -rf "$VENV"
fi

if [ -z "$(vulkan_wheel)" ]; then
    # The CPU flags of scripts/dev.sh: layers left on the CPU run the same kernels as in the CPU build.
    args="-DLLAVA_BUILD=ON -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_VULKAN=ON"
    # llama.cpp's Vulkan backend needs Vulkan-Hpp with vk::LayerSettingEXT (1.3.275 or newer); Debian 12 has
    # 1.3.239. Then Debian 13's headers, and the SPIR-V headers that go with them, are unpacked from their .debs
    # into .cache/vulkan-headers, not installed: the system's loader and glslc stay as they are.
    if ! grep -rqs LayerSettingEXT /usr/include/vulkan/; then
        HEADERS=$ROOT/.cache/vulkan-headers
        say "this system's Vulkan headers are too old for llama.cpp (no vk::LayerSettingEXT): building against Debian 13's, unpacked into $HEADERS"
        if [ ! -f "$HEADERS/root/usr/include/vulkan/vulkan.hpp" ]; then
            mkdir -p "$HEADERS/lists/partial" "$HEADERS/cache/archives/partial" "$HEADERS/debs" "$HEADERS/root"
            echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$HEADERS/sources.list"
            apt_trixie=(apt-get -o "Dir::Etc::SourceList=$HEADERS/sources.list" -o Dir::Etc::SourceParts=/nonexistent
                -o "Dir::State::Lists=$HEADERS/lists" -o "Dir::Cache=$HEADERS/cache")
            "${apt_trixie[@]}" update -qq
            (cd "$HEADERS/debs" && "${apt_trixie[@]}" download libvulkan-dev spirv-headers 2>/dev/null)
            for deb in "$HEADERS"/debs/*.deb; do dpkg -x "$deb" "$HEADERS/root"; done
        fi
        args="$args -DVulkan_INCLUDE_DIR=$HEADERS/root/usr/include -DSPIRV-Headers_DIR=$HEADERS/root/usr/share/cmake/SPIRV-Headers"
    fi
    say "building llama-cpp-python with Vulkan for the GPU tests (about 20 minutes on 2 cores; once: kept in $WHEELS)"
    mkdir -p "$WHEELS"
    started=$(date +%s)
    # --no-cache-dir: pip's wheel cache is keyed by the source, not by CMAKE_ARGS, so it would hand back the CPU
    # wheel scripts/dev.sh built (and keep this one where the CPU build would find it).
    CMAKE_ARGS="$args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        "$PY" -m pip wheel --quiet --no-cache-dir --no-deps --no-binary llama-cpp-python -w "$WHEELS" "$LLAMA_SPEC"
    say "the Vulkan build took $(($(date +%s) - started)) s"
fi

if ! "$VENV/bin/python" -c 'import llama_cpp, aiohttp, numpy' 2>/dev/null; then
    say "creating $VENV: the Vulkan build and the runtime's dependencies"
    "$PY" -m venv --clear "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet "$(vulkan_wheel)"
    # Lokal's dependencies (its llama-cpp-python requirement is the Vulkan wheel above); the tests run this
    # tree's code in it through PYTHONPATH (tests/vulkan_helpers.py).
    "$VENV/bin/python" -m pip install --quiet --find-links "$ROOT/.cache/wheels" "$ROOT"
fi

# A dependency added to pyproject.toml after the venv was made (concurrent-log-handler, the document readers) is
# installed now: the runtime of the Vulkan build otherwise dies at its first import of it.
if ! "$VENV/bin/python" -c '
import importlib.metadata as md, re, sys, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
missing = []
for dep in deps:
    try:
        md.version(re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0])
    except md.PackageNotFoundError:
        missing.append(dep)
sys.exit(", ".join(missing) or None)'; then
    say "installing the runtime dependencies $VENV lacks"
    "$VENV/bin/python" -m pip install --quiet --find-links "$ROOT/.cache/wheels" "$ROOT"
fi
