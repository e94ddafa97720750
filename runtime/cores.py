"""How many threads a decode runs on by default: the runtime's choice, and what the window says it will be."""

import os
from pathlib import Path

import psutil

CGROUP_MOUNT = Path("/sys/fs/cgroup")
OWN_CGROUPS = Path("/proc/self/cgroup")


def default_threads() -> int:
    """A thread per physical core, and no more than the cores this process may run on (`taskset`, a container's
    cpuset) or the CPU time its cgroups allow (`docker run --cpus`), rounded. A decode's threads meet at a barrier
    after each layer: a thread more than the cores it gets waits a whole time slice there (bench/confined_decode.py)."""
    cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):  # Linux; macOS and Windows have no per-process core mask to read here
        cores = min(cores, len(os.sched_getaffinity(0)))
    quota = cpu_quota()
    if quota is not None:  # rounded: at 1.5 CPUs' worth, one thread and two decoded level (the same bench)
        cores = min(cores, int(quota + 0.5))
    return max(1, cores)


def cpu_quota(own_cgroups: Path = OWN_CGROUPS, mount: Path = CGROUP_MOUNT) -> float | None:
    """CPUs' worth of time this process's cgroups allow it (`docker run --cpus 1.5`: 1.5), the tightest quota on
    the way from its own cgroup up to the root, cgroup v2 or v1; None where none is set or none can be read."""
    try:
        lines = own_cgroups.read_text().splitlines()
    except OSError:
        return None
    quotas: list[float] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # the v2 hierarchy
            quotas += [q for folder in _folders(mount, path) if (q := _v2_quota(folder)) is not None]
        elif "cpu" in controllers.split(","):
            quotas += [q for folder in _folders(mount / "cpu", path) if (q := _v1_quota(folder)) is not None]
    return min(quotas, default=None)


def _folders(mount: Path, path: str) -> list[Path]:
    """The cgroup's folder and each above it up to the mount. A container names its cgroup by the host's path
    but mounts its own cgroup as the root: where the path is not there, the mount alone."""
    here = mount / path.lstrip("/")
    if not here.is_dir():
        return [mount]
    return [here, *[p for p in here.parents if p == mount or mount in p.parents]]


def _v2_quota(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError, ZeroDivisionError):
        return None


def _v1_quota(folder: Path) -> float | None:
    try:
        quota, period = (int((folder / name).read_text()) for name in ("cpu.cfs_quota_us", "cpu.cfs_period_us"))
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None
