"""bench/glibc_tunables.py: a child's GLIBC_TUNABLES holds exactly the tunables asked for, whoever asks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import glibc_tunables  # noqa: E402
from lockstep_host import host_env  # noqa: E402


def test_the_tunables_asked_for_and_none_of_the_callers():
    env = glibc_tunables.environment({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "HOME": "/h"}, [glibc_tunables.HUGE_PAGES, glibc_tunables.OWN_PAGES])
    assert env == {"HOME": "/h", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4096"}
    assert "GLIBC_TUNABLES" not in glibc_tunables.environment({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}, [])


def test_a_lockstep_hosts_suffixes_become_its_tunables(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")
    assert host_env("c-wheel+thp+arena1")["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=1:glibc.malloc.hugetlb=1"
    assert "GLIBC_TUNABLES" not in host_env("python+split")


def test_the_loader_takes_each_tunable_in_a_child():
    """Each spelling is one glibc knows: its loader lists the tunable with the value the environment gave it."""
    loader = next((p for p in ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1") if Path(p).exists()), None)
    assert loader, "no glibc dynamic loader found where x86-64 and arm64 Linux keep it: these benches run on glibc Linux"
    for tunable in (glibc_tunables.HUGE_PAGES, glibc_tunables.OWN_PAGES, glibc_tunables.MAIN_ARENA_ONLY):
        name, value = tunable.split("=")
        listed = subprocess.run([loader, "--list-tunables"], env=glibc_tunables.environment({}, [tunable]), capture_output=True, text=True, timeout=30)
        assert listed.returncode == 0, listed.stderr
        assert f"{name}: {hex(int(value))} " in listed.stdout, listed.stdout
