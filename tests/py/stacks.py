# Known functions at known lines for tests/pystacks.t: a thread that
# sleeps in os.read on a pipe, and one that holds the GIL in a busy loop.
import os
import sys
import threading
import time


def worker_read(fd, stop):
    while not stop.is_set():
        os.read(fd, 1)  # WORKER_READ_LINE


def hold_gil(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1  # HOLD_GIL_LINE
    return n


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    r, w = os.pipe()
    stop = threading.Event()
    t = threading.Thread(target=worker_read, args=(r, stop))
    t.start()
    for _ in range(int(seconds * 20)):
        os.write(w, b"x")
        hold_gil(0.05)  # MAIN_CALL_LINE
    stop.set()
    os.write(w, b"x")
    t.join()


if __name__ == "__main__":
    main()
