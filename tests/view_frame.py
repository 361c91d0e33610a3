#!/usr/bin/python3
"""view_frame: fetches and prints one frame of a live view (tests/test_view.sh).
  view_frame.py URL [--speeds]    prints a fresh frame's status JSON (one
                                  published after the request) on one line;
                                  with --speeds then "speeds" and the speeds
                                  (%.9g), one a line; with --attr the same of
                                  the masses or attribute
  view_frame.py URL control CMD   POSTs a control, prints the HTTP status
  view_frame.py URL load SECONDS CLIENTS
                                  CLIENTS threads pulling frames (and the page,
                                  and requests without the token) for SECONDS;
                                  prints "frames F refused R other O errors E"
  view_frame.py URL raw           sends stdin's bytes (TOKEN: the token, \n:
                                  CRLF) on a connection, prints the status
                                  line(s) of what comes back
  view_frame.py URL trickle N SECONDS
                                  N connections that send a request's first
                                  lines, then a header line every 0.5 s (a
                                  new connection when one is closed); after
                                  1 s, a valid request for the page, retried
                                  while refused, for SECONDS at most: prints
                                  "page 200 after S s, tricklers closed C",
                                  exits 1 without an answer
Exits 1 on a connection error (the run gone)."""
import json
import re
import socket
import struct
import sys
import threading
import time
import urllib.error
import urllib.request

url = sys.argv[1]
base, token = url.split("?")[0], url.split("token=")[1]


def frame(after, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        r = urllib.request.urlopen("%sframe?token=%s&after=%d" % (base, token, after), timeout=10)
        if r.status == 200:
            data = r.read()
            assert data[:4] == b"ORV1"
            jlen, seq, nf = struct.unpack("<III", data[4:16])
            status = json.loads(data[16:16 + jlen])
            status["seq"] = seq
            floats = struct.unpack("<%df" % nf, data[16 + jlen:16 + jlen + 4 * nf])
            return status, floats
    raise RuntimeError("no frame within %d s" % timeout)


def load(seconds, clients):
    counts = {"frames": 0, "refused": 0, "other": 0, "errors": 0}
    kinds = {}
    lock = threading.Lock()

    def client(k):
        end, after = time.time() + seconds, 0
        while time.time() < end:
            try:
                if k % 5 == 4:   # a fifth of them: the page, or no token
                    target = base + ("view.js?token=" + token if k % 2 else "frame?after=0")
                    urllib.request.urlopen(target, timeout=10).read()
                    what = "other"
                else:
                    r = urllib.request.urlopen("%sframe?token=%s&after=%d" % (base, token, after),
                                               timeout=10)
                    data = r.read()
                    if r.status == 200:
                        after = struct.unpack("<I", data[8:12])[0]
                    what = "frames" if r.status == 200 else "other"
            except urllib.error.HTTPError as e:
                what = "refused" if e.code == 403 else "other"
            except Exception as e:
                what = "errors"
                with lock:
                    kinds[type(e).__name__ + ": " + str(e)[:60]] = 1 + kinds.get(
                        type(e).__name__ + ": " + str(e)[:60], 0)
                time.sleep(0.05)
            with lock:
                counts[what] += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("frames %(frames)d refused %(refused)d other %(other)d errors %(errors)d" % counts)
    for k, c in sorted(kinds.items()):
        print("  %d x %s" % (c, k))


def raw():
    host, port = re.match(r"http://([^:/]+):(\d+)/", url).groups()
    data = sys.stdin.read().replace("TOKEN", token).replace("\n", "\r\n").encode()
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(data)
    got = b""
    s.settimeout(3)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except socket.timeout:
        pass
    for line in got.split(b"\r\n"):
        if line.startswith(b"HTTP/"):
            print(line.decode())


def trickle(n, seconds):
    host, port = re.match(r"http://([^:/]+):(\d+)/", url).groups()
    addr = (host, int(port))
    stop = time.time() + seconds + 1
    closed = [0]

    def one():
        while time.time() < stop:
            try:
                s = socket.create_connection(addr, timeout=5)
                s.sendall(b"GET /frame?after=0 HTTP/1.1\r\nHost: x\r\n")
                while time.time() < stop:
                    time.sleep(0.5)
                    s.sendall(b"X-a: b\r\n")
            except OSError:
                closed[0] += 1
                time.sleep(0.05)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    time.sleep(1)
    t0 = time.time()
    while time.time() < t0 + seconds:
        try:
            r = urllib.request.urlopen("%s?token=%s" % (base, token), timeout=t0 + seconds - time.time())
            r.read()
            print("page %d after %.1f s, tricklers closed %d" % (r.status, time.time() - t0, closed[0]))
            return 0
        except (urllib.error.URLError, OSError, ValueError):
            time.sleep(0.1)
    print("page: no answer within %g s, tricklers closed %d" % (seconds, closed[0]))
    return 1


try:
    if len(sys.argv) > 2 and sys.argv[2] == "raw":
        raw()
    elif len(sys.argv) > 4 and sys.argv[2] == "trickle":
        sys.exit(trickle(int(sys.argv[3]), float(sys.argv[4])))
    elif len(sys.argv) > 3 and sys.argv[2] == "control":
        req = urllib.request.Request("%scontrol?token=%s&cmd=%s" % (base, token, sys.argv[3]),
                                     method="POST")
        print(urllib.request.urlopen(req, timeout=10).status)
    elif len(sys.argv) > 4 and sys.argv[2] == "load":
        load(float(sys.argv[3]), int(sys.argv[4]))
    else:
        status, floats = frame(0)                    # the latest, maybe old
        status, floats = frame(status["seq"])        # the next one
        print(json.dumps(status))
        n = len(floats) // 5
        for flag, k in (("--speeds", 3), ("--attr", 4)):
            if flag in sys.argv:
                print(flag[2:])
                for v in floats[k * n:(k + 1) * n]:
                    print("%.9g" % v)
except (urllib.error.URLError, ConnectionError, RuntimeError) as e:
    print("view_frame: %s" % e, file=sys.stderr)
    sys.exit(1)
