#!/usr/bin/env bash
# The CUDA device check: builds llama-cpp-python with -DGGML_CUDA=on (once, into .cache/wheels-cuda) and a venv
# of its own (.cache/cuda-venv) beside the CPU .venv, then runs bench/offload_check.py through runtimes started
# with that venv: initialize lists the CUDA device, every layer on the GPU (and Auto choosing all of them), a
# greedy reply compared with the CPU's, speculation (prompt lookup and a draft model), a KV restore from disk,
# and the decode/prefill figures. Needs an NVIDIA GPU, its driver and the CUDA toolkit (nvcc).
#
#   scripts/gpu-check.sh [--model PATH] [--draft PATH] [--tokens N]   (arguments go to bench/offload_check.py)
#
# Prints the check's JSON on stdout; exits non-zero when the build fails or a check does.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

say() { printf '\033[1mgpu-check:\033[0m %s\n' "$*" >&2; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    say "no NVIDIA GPU here (nvidia-smi finds none): this check needs one"
    exit 2
fi
if ! command -v nvcc >/dev/null 2>&1; then
    say "nvcc is not on PATH: install the CUDA toolkit (or add its bin/ to PATH, e.g. /usr/local/cuda/bin)"
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    say "set up the CPU environment first: bash scripts/dev.sh test (the check itself runs from .venv)"
    exit 2
fi
nvidia-smi -L >&2

LLAMA_SPEC="llama-cpp-python==0.3.36"
WHEELS=$ROOT/.cache/wheels-cuda
VENV=$ROOT/.cache/cuda-venv
cuda_wheel() { find "$WHEELS" -maxdepth 1 -name 'llama_cpp_python-0.3.36-*.whl' 2>/dev/null | head -n 1; }
# A wheel from before LLAVA_BUILD=ON has no multimodal library (libmtmd, pictures): it is built again.
if [ -n "$(cuda_wheel)" ] && ! .venv/bin/python -c 'import sys, zipfile; sys.exit(not any("mtmd" in n.rsplit("/", 1)[-1] for n in zipfile.ZipFile(sys.argv[1]).namelist() if "/lib/" in n))' "$(cuda_wheel)"; then
    rm -f "$(cuda_wheel)"
    rm -rf "$VENV"
fi

if [ -z "$(cuda_wheel)" ]; then
    say "building llama-cpp-python with CUDA (10-30 minutes, most of it CUDA kernels; once: kept in $WHEELS)"
    mkdir -p "$WHEELS"
    # The CPU flags of scripts/dev.sh, so layers left on the CPU run the same kernels as the CPU build.
    # GGML_CUDA_ARCHITECTURES: only this machine's GPU ("native"), unless the caller names others.
    args="-DLLAVA_BUILD=ON -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
    args="$args -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES:-native}"
    started=$(date +%s)
    # --no-cache-dir: pip's wheel cache is keyed by the source, not by CMAKE_ARGS, so it would hand back
    # the CPU wheel built by scripts/dev.sh (and keep this one for the CPU build to find).
    CMAKE_ARGS="$args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        .venv/bin/python -m pip wheel --quiet --no-cache-dir --no-deps --no-binary llama-cpp-python -w "$WHEELS" "$LLAMA_SPEC"
    say "built in $(($(date +%s) - started)) s"
fi

if ! "$VENV/bin/python" -c 'import llama_cpp, runtime' 2>/dev/null; then
    say "creating $VENV with the CUDA build and Lokal's dependencies"
    .venv/bin/python -m venv --clear "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet "$(cuda_wheel)"
    # Lokal itself, whose llama-cpp-python requirement the CUDA wheel above already meets.
    "$VENV/bin/python" -m pip install --quiet --find-links "$WHEELS" "$ROOT"
fi

backends=$(PYTHONPATH=$ROOT "$VENV/bin/python" -c 'from runtime.llama.devices import gpu_backends; print(" ".join(gpu_backends()))')
if [ "$backends" != "cuda" ]; then
    say "the build in $VENV has GPU backends '$backends', not cuda: remove $WHEELS and $VENV and run again"
    exit 1
fi

say "checking offload, a greedy reply, speculation and a KV restore on the GPU"
PYTHONPATH=$ROOT .venv/bin/python bench/offload_check.py --python "$VENV/bin/python" "$@"
