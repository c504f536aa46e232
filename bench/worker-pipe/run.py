"""bench/worker-pipe: how long the worker takes to read one large command line (a call with an
image inline), beside the floor of reading the same bytes with no line splitting, in the
same run. Usage: python3 bench/worker-pipe/run.py [--megabytes 10,40,90] [--runs 3]"""
import argparse
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from apipod._runtime.channel import _read_lines  # noqa: E402  the reader under test

READ_SIZE = 1 << 16


def timed(read, line: bytes) -> float:
    read_end, write_end = os.pipe()

    def write():
        for start in range(0, len(line), 1 << 20):
            os.write(write_end, line[start:start + (1 << 20)])
        os.close(write_end)

    writer = threading.Thread(target=write)
    started = time.perf_counter()
    writer.start()
    read(read_end)
    elapsed = time.perf_counter() - started
    writer.join()
    os.close(read_end)
    return elapsed


def raw_read(descriptor: int) -> None:
    while os.read(descriptor, READ_SIZE):
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", default="10,40,90")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    for megabytes in (int(size) for size in options.megabytes.split(",")):
        line = b'{"type":"call","call":"c-1","endpoint":"/x","arguments":{"image":"' + b"A" * (megabytes << 20) + b'"}}\n'
        lines, floor = [], []
        for _ in range(options.runs):
            lines.append(timed(lambda descriptor: list(_read_lines(descriptor, 0.0)), line))
            floor.append(timed(raw_read, line))
        reading, bare = statistics.median(lines), statistics.median(floor)
        print(f"{megabytes} MB line: read as a line {reading * 1000:.0f} ms, bare reads {bare * 1000:.0f} ms, ratio {reading / bare:.2f}x")


if __name__ == "__main__":
    main()
