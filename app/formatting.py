"""How sizes read in the window and on the command line.

"MB" always means 10^6 bytes (decimal units, as file managers show sizes); where Lokal counts in powers of
two (the KV store's figures, GPU memory on the command line) it says MiB or GiB. These constants are the
only divisors for either."""

KB, MB, GB = 10**3, 10**6, 10**9
MIB, GIB = 2**20, 2**30


def human_size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < KB or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= KB
    return f"{n:.1f} TB"
