"""A slow-request flood for the guard's end-to-end test: opens many connections from one
address and sends each a byte a second of a request head that never ends, reopening the ones
the server closes. Runs until killed. Usage: slowloris.py PORT CONNECTIONS"""
import errno
import resource
import socket
import sys
import time

HEAD = b"GET /v7/breaches HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100000


def main():
    port, want = int(sys.argv[1]), int(sys.argv[2])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = min(hard, want + 256) if hard != resource.RLIM_INFINITY else want + 256
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    want = min(want, limit - 64)
    socks = {}  # socket -> bytes sent

    def open_one():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks[s] = 0

    for _ in range(want):
        open_one()
    print("open", len(socks), flush=True)
    while True:
        time.sleep(1.0)
        for s in list(socks):
            try:
                n = s.send(HEAD[socks[s]:socks[s] + 1])
                socks[s] += n
            except OSError as e:
                if e.errno in (errno.EAGAIN, errno.ENOTCONN):
                    continue  # still connecting
                s.close()
                del socks[s]
        for _ in range(min(1000, want - len(socks))):
            open_one()


if __name__ == "__main__":
    main()
