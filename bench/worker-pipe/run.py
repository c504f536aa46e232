"""bench/worker-pipe: how long the worker takes to read a large command, beside the floor of
reading the same bytes with no line splitting, in the same run: one large command line (a
call with an image inline), and a call whose long string follows it as a line of its own
(`texts` with `line_bytes`, docs/worker-protocol.md), read both as the worker reads it, into
one buffer of the size it was told, and as a line of 64 KiB reads joined (how it read such a
line before protocol 7). As in svc, the bytes come over a Unix stream socket from another
process, ten commands in a row (a worker reads many, into memory it has used before); each
figure is the reader's CPU time and the wall time per command, medians of the runs.
Usage: python3 bench/worker-pipe/run.py [--megabytes 2,10,40,90] [--runs 5]"""
import argparse
import json
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from apipod._runtime.channel import _Lines, read_commands  # noqa: E402  the readers under test
from apipod._runtime.protocol import CALL_CHANNEL_TYPES  # noqa: E402

READ_SIZE = 1 << 16


COMMANDS = 10


def timed(read, stream: bytes) -> tuple[float, float]:
    """The reader's CPU seconds and wall seconds per command to read COMMANDS of `stream`, written by a child process."""
    reader, writer = socket.socketpair()
    child = os.fork()
    if child == 0:
        reader.close()
        for _ in range(COMMANDS):
            writer.sendall(stream)
        os._exit(0)
    writer.close()
    started, cpu_started = time.perf_counter(), time.process_time()
    read(reader.fileno())
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    os.waitpid(child, 0)
    reader.close()
    return cpu / COMMANDS, elapsed / COMMANDS


def raw_read(descriptor: int) -> None:
    while os.read(descriptor, READ_SIZE):
        pass


def every_line(descriptor: int) -> None:
    lines = _Lines(descriptor, 0.0)
    while lines.next_line():
        pass


def every_command(descriptor: int) -> None:
    for _ in read_commands(descriptor, CALL_CHANNEL_TYPES):
        pass


def text_as_joined_line(descriptor: int) -> None:
    lines = _Lines(descriptor, 0.0)
    while command := lines.next_line():
        json.loads(command)
        text = lines.next_line()
        str(memoryview(text)[:-1], "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", default="2,10,40,90")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    for megabytes in (int(size) for size in options.megabytes.split(",")):
        size = megabytes * 1_000_000
        inline = b'{"type":"call","call":"c-1","endpoint":"/x","arguments":{"image":"' + b"A" * size + b'"}}\n'
        text = b'{"type":"call","call":"c-1","endpoint":"/x","arguments":{"text":""},"texts":["text"],"line_bytes":[%d]}\n' % size
        text += b"A" * size + b"\n"
        results = {name: [] for name in ("inline", "floor", "text", "joined", "text floor")}
        for _ in range(options.runs):
            results["inline"].append(timed(every_line, inline))
            results["floor"].append(timed(raw_read, inline))
            results["text"].append(timed(every_command, text))
            results["joined"].append(timed(text_as_joined_line, text))
            results["text floor"].append(timed(raw_read, text))
        cpu = {name: statistics.median(cpu for cpu, _ in times) * 1000 for name, times in results.items()}
        wall = {name: statistics.median(wall for _, wall in times) * 1000 for name, times in results.items()}
        print(f"{megabytes} MB, reader CPU (wall) in ms: a line {cpu['inline']:.2f} ({wall['inline']:.2f}), "
              f"bare reads {cpu['floor']:.2f} ({wall['floor']:.2f}); a text after its call {cpu['text']:.2f} ({wall['text']:.2f}), "
              f"as a joined line {cpu['joined']:.2f} ({wall['joined']:.2f}), bare reads {cpu['text floor']:.2f} ({wall['text floor']:.2f})")

if __name__ == "__main__":
    main()
