"""The runtime decodes on a thread per core it may run on, and no more than its cgroups' CPU quota allows: a thread
beyond them stalls every layer of a decode (runtime/cores.py; bench/confined_decode.py measures both)."""

import os

from runtime import cores
from runtime.cores import cpu_quota, default_threads

NEEDS_TWO = "default_threads() is {n} here (physical cores by psutil, the core mask, a CPU quota): this test needs two or more"


def test_threads_follow_the_cores_this_process_may_run_on(every_core):
    mask = sorted(every_core)
    assert default_threads() >= 2, NEEDS_TWO.format(n=default_threads())
    os.sched_setaffinity(0, mask[:1])  # as `taskset -c 0 lokal` or a container's cpuset would
    assert default_threads() == 1
    os.sched_setaffinity(0, mask[:2])
    assert default_threads() == 2


def test_threads_follow_a_cpu_quota_rounded(every_core, monkeypatch):
    monkeypatch.setattr(cores, "cpu_quota", lambda: None)
    unlimited = default_threads()
    assert unlimited >= 2, NEEDS_TWO.format(n=unlimited)
    for quota, threads in ((1.0, 1), (0.3, 1), (1.4, 1), (1.5, 2), (64.0, unlimited)):
        monkeypatch.setattr(cores, "cpu_quota", lambda quota=quota: quota)
        assert default_threads() == threads, quota


def test_the_quota_is_read_from_cgroup_v2_and_v1_the_tightest_on_the_way_up(tmp_path):
    own, mount = tmp_path / "self-cgroup", tmp_path / "v2"
    worker = mount / "app" / "worker"
    worker.mkdir(parents=True)
    own.write_text("0::/app/worker\n")
    assert cpu_quota(own, mount) is None  # no cpu.max anywhere: no quota
    (worker / "cpu.max").write_text("max 100000\n")
    (mount / "app" / "cpu.max").write_text("150000 100000\n")
    assert cpu_quota(own, mount) == 1.5  # set above the process's own cgroup
    (worker / "cpu.max").write_text("50000 100000\n")
    assert cpu_quota(own, mount) == 0.5
    # A container names its cgroup by the host's path and mounts its own as the root.
    own.write_text("0::/docker/4f1c\n")
    (mount / "cpu.max").write_text("200000 100000\n")
    assert cpu_quota(own, mount) == 2.0

    v1 = tmp_path / "v1"
    group = v1 / "cpu" / "batch"
    group.mkdir(parents=True)
    own.write_text("4:memory:/batch\n3:cpu,cpuacct:/batch\n")
    (group / "cpu.cfs_period_us").write_text("100000\n")
    (group / "cpu.cfs_quota_us").write_text("-1\n")
    assert cpu_quota(own, v1) is None
    (group / "cpu.cfs_quota_us").write_text("250000\n")
    assert cpu_quota(own, v1) == 2.5

    (worker / "cpu.max").write_text("garbage\n")
    own.write_text("0::/app/worker\n")
    assert cpu_quota(own, mount) == 1.5, "an unreadable file is no quota; the one above still counts"
    assert cpu_quota(tmp_path / "no-such-file", mount) is None
