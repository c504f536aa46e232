"""A worker polls for its next call only while the machine has a core to spare."""
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from apipod._runtime import machine_load
from apipod._runtime.channel import PollWindow
from apipod._runtime.machine_load import OtherLoad


def write_proc(root: str, machine_busy: int, own: int, gateway: int, gateway_pid: int) -> None:
    """A /proc with the fields OtherLoad reads: the machine's busy ticks, and each process's."""
    with open(os.path.join(root, "stat"), "w") as stat:
        # user nice system idle iowait irq softirq steal: busy is user+nice+system+irq+softirq
        stat.write(f"cpu  {machine_busy - 3} 0 1 99999 50 1 1 7 0 0\ncpu0 1 2 3\n")
    for pid, ticks in ((os.getpid(), own), (gateway_pid, gateway)):
        os.makedirs(os.path.join(root, str(pid)), exist_ok=True)
        with open(os.path.join(root, str(pid), "stat"), "w") as stat:
            fields = ["S"] + ["0"] * 10 + [str(ticks), "0"] + ["0"] * 30
            stat.write(f"{pid} (a name) with spaces) {' '.join(fields)}\n")


class OtherLoadTest(unittest.TestCase):
    def setUp(self):
        self.sample_seconds = machine_load.SAMPLE_SECONDS
        machine_load.SAMPLE_SECONDS = 0.0
        self.addCleanup(setattr, machine_load, "SAMPLE_SECONDS", self.sample_seconds)

    def test_counts_only_what_other_processes_use(self):
        root = tempfile.mkdtemp()
        gateway = os.getpid() + 1
        write_proc(root, machine_busy=1000, own=100, gateway=200, gateway_pid=gateway)
        load = OtherLoad(gateway, proc=root)
        self.assertFalse(load.is_busy())  # one sample says nothing yet
        time.sleep(0.2)
        # ~0.2 s later: 52 ticks more on the machine, 50 of them this worker's and its gateway's
        # (10: half a core at most).
        write_proc(root, machine_busy=1052, own=140, gateway=210, gateway_pid=gateway)
        self.assertFalse(load.is_busy())
        time.sleep(0.2)
        # Then others take 40 ticks in ~0.2 s: about two cores.
        write_proc(root, machine_busy=1092, own=140, gateway=210, gateway_pid=gateway)
        self.assertTrue(load.is_busy())

    def test_a_gateway_busy_most_of_a_core_stops_the_polling_though_nothing_else_runs(self):
        root = tempfile.mkdtemp()
        gateway = os.getpid() + 1
        write_proc(root, machine_busy=1000, own=100, gateway=200, gateway_pid=gateway)
        load = OtherLoad(gateway, proc=root)
        load.is_busy()
        time.sleep(0.2)
        # 30 ticks of the gateway in ~0.2 s (well over 0.75 of a core), none of anything else.
        write_proc(root, machine_busy=1030, own=100, gateway=230, gateway_pid=gateway)
        self.assertTrue(load.is_busy())

    def test_a_cpu_bound_process_beside_makes_the_machine_busy(self):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        self.addCleanup(hog.wait)
        self.addCleanup(hog.kill)
        load = OtherLoad(os.getppid())
        load.is_busy()
        time.sleep(0.5)
        self.assertTrue(load.is_busy())

    def test_without_proc_the_machine_counts_as_idle(self):
        load = OtherLoad(os.getppid(), proc=os.path.join(tempfile.mkdtemp(), "nothing"))
        self.assertFalse(load.is_busy())
        self.assertFalse(load.is_busy())


class FixedLoad:
    def __init__(self, busy: bool):
        self.busy = busy

    def is_busy(self) -> bool:
        return self.busy


class PollWindowOnABusyMachineTest(unittest.TestCase):
    def cpu_seconds_waiting(self, busy: bool) -> float:
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        self.addCleanup(os.close, write_end)
        os.set_blocking(read_end, False)
        window = PollWindow(0.02, FixedLoad(busy))
        timer = threading.Timer(0.03, os.write, (write_end, b"x"))
        started = time.process_time()
        timer.start()
        self.assertEqual(window.read(read_end), b"x")
        timer.join()
        return time.process_time() - started

    def test_polls_while_a_core_is_to_spare_and_sleeps_at_once_when_none_is(self):
        self.assertGreater(self.cpu_seconds_waiting(busy=False), 0.01)  # polled its 20 ms
        self.assertLess(self.cpu_seconds_waiting(busy=True), 0.005)


if __name__ == "__main__":
    unittest.main()
