"""How much CPU the machine's other processes take. A worker polls its command pipe for the
next call only while a core is to spare: on a busy machine each poll takes the CPU from the
gateway that would send that call, and from the machine's other work (bench/RESULTS.md: with
a CPU-bound process beside, polling cost svc a third of its throughput)."""
from __future__ import annotations

import os
import time
from typing import Optional

SAMPLE_SECONDS = 0.25  # /proc counts in ticks of 10 ms: a shorter sample says little
BUSY_CORES = 0.5  # other processes using more than this: no core is to spare


class OtherLoad:
    """Whether processes other than this worker and its gateway kept more than BUSY_CORES of
    the machine's CPU busy over the last sample, read from Linux's /proc at most every
    SAMPLE_SECONDS. Where /proc cannot say (another system), the machine counts as idle."""

    def __init__(self, gateway_pid: int, proc: str = "/proc"):
        self._own_stats = (f"{proc}/{os.getpid()}/stat", f"{proc}/{gateway_pid}/stat")
        self._machine_stat = f"{proc}/stat"
        self._last: Optional[tuple[float, int, int]] = None  # when, the machine's busy ticks, ours
        self._sampled_at = float("-inf")
        self._is_busy = False
        self._ticks_per_second = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def is_busy(self) -> bool:
        now = time.monotonic()
        if now - self._sampled_at >= SAMPLE_SECONDS:
            self._sampled_at = now
            self._sample(now)
        return self._is_busy

    def _sample(self, now: float) -> None:
        try:
            machine = _machine_busy_ticks(self._machine_stat)
            ours = sum(_process_ticks(path) for path in self._own_stats)
        except (OSError, ValueError, IndexError):
            self._is_busy = False
            return
        if self._last is not None:
            then, machine_before, ours_before = self._last
            others = (machine - machine_before) - (ours - ours_before)
            self._is_busy = others / self._ticks_per_second / (now - then) > BUSY_CORES
        self._last = (now, machine, ours)


def _machine_busy_ticks(path: str) -> int:
    """user + nice + system + irq + softirq of /proc/stat's first line (not idle, I/O wait or
    time a hypervisor stole)."""
    with open(path, "rb") as stat:
        fields = stat.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq = (int(field) for field in fields[1:8])
    return user + nice + system + irq + softirq


def _process_ticks(path: str) -> int:
    """utime + stime of /proc/PID/stat (the name in parentheses may hold spaces)."""
    with open(path, "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12])
