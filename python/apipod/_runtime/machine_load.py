"""How much CPU the machine's other processes and the worker's gateway take. A worker polls
its command pipe for the next call only while a core is to spare and the gateway is not the
bottleneck: on a busy machine each poll takes the CPU from the gateway that would send that
call, and from the machine's other work (bench/RESULTS.md: with a CPU-bound process beside,
polling cost svc a third of its throughput); and a gateway busy most of a core sends calls as
fast as it can, so polling saves the worker a wake-up nobody waits for, while on two cores it
cost ~10 % of the throughput at 16 connections (run 8)."""
from __future__ import annotations

import os
import time
from typing import Optional

SAMPLE_SECONDS = 0.25  # /proc counts in ticks of 10 ms: a shorter sample says little
BUSY_CORES = 0.5  # other processes using more than this: no core is to spare
GATEWAY_BUSY_CORES = 0.75  # a gateway using more than this nears what its one event loop can do


class OtherLoad:
    """Whether processes other than this worker and its gateway kept more than BUSY_CORES of
    the machine's CPU busy over the last sample, or the gateway more than GATEWAY_BUSY_CORES,
    read from Linux's /proc at most every SAMPLE_SECONDS. Where /proc cannot say (another
    system), the machine counts as idle."""

    def __init__(self, gateway_pid: int, proc: str = "/proc"):
        self._own_stat = f"{proc}/{os.getpid()}/stat"
        self._gateway_stat = f"{proc}/{gateway_pid}/stat"
        self._machine_stat = f"{proc}/stat"
        self._last: Optional[tuple[float, int, int, int]] = None  # when, busy ticks: the machine's, ours, the gateway's
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
            ours = _process_ticks(self._own_stat)
            gateway = _process_ticks(self._gateway_stat)
        except (OSError, ValueError, IndexError):
            self._is_busy = False
            return
        if self._last is not None:
            then, machine_before, ours_before, gateway_before = self._last
            per_core = self._ticks_per_second * (now - then)
            others = (machine - machine_before) - (ours - ours_before) - (gateway - gateway_before)
            self._is_busy = others / per_core > BUSY_CORES or (gateway - gateway_before) / per_core > GATEWAY_BUSY_CORES
        self._last = (now, machine, ours, gateway)


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
