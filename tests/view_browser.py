#!/usr/bin/python3
"""view_browser: the live view's page in a real browser.  Starts Debian's
headless Chromium (software GL: SwiftShader), opens the view's URL (with
its token) and drives the page over the DevTools protocol
(python3-websocket): frames arrive, the canvas is not blank (pixel
statistics of a screenshot with the bodies in view), the time shown
advances, pause stops it, one step advances it by exactly one step, resume
goes on, the page's PNG button writes a frame through sim:render; a request
without the token is refused (403), from the page and from outside.
Prints "ok NAME" or "FAILED NAME: why" per check; exits 0 when all passed,
1 when one failed, 77 when Chromium cannot run here (skip).
  view_browser.py URL [--screenshot PATH] [--kill-browser]
Every wait is bounded (timeouts in seconds below)."""
import base64
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

try:
    import websocket
except ImportError:
    print("skipped: python3-websocket is not installed")
    sys.exit(77)

url = sys.argv[1]
shot = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
failures = 0


def report(name, ok, why=""):
    global failures
    if ok:
        print("ok " + name, flush=True)
    else:
        failures += 1
        print("FAILED %s: %s" % (name, why), flush=True)


def png_pixels(data):
    """(width, height, channels, rows of bytes) of an 8-bit, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and ctype in (2, 6)
            ch = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * ch, [], bytearray(w * ch)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b, c = prev[i], prev[i - ch] if i >= ch else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, ch, rows


class Page:
    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.n = 0

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.n:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m["result"]

    def ev(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def status(self):
        return self.ev("JSON.stringify({frames: window.orrery ? window.orrery.frames : 0, "
                       "s: window.orrery ? window.orrery.status : null, "
                       "err: window.orrery ? window.orrery.error : 'no page'})")

    def wait(self, what, cond, timeout):
        """Polls the page's state until cond(state) holds; the state, or None."""
        end = time.time() + timeout
        while time.time() < end:
            st = json.loads(self.status())
            if cond(st):
                return st
            time.sleep(0.1)
        return None


def main():
    browser = shutil.which("chromium")
    if not browser:
        print("skipped: chromium is not installed")
        return 77
    profile = tempfile.mkdtemp(prefix="orrery-chromium-")
    proc = subprocess.Popen(
        [browser, "--headless", "--no-sandbox", "--use-angle=swiftshader",
         "--enable-unsafe-swiftshader", "--disable-dev-shm-usage", "--no-first-run",
         "--remote-debugging-port=0", "--user-data-dir=" + profile, "--window-size=1100,720",
         "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ws_url, end = None, time.time() + 30
        while time.time() < end and ws_url is None:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                ws_url = m.group(1)
        if not ws_url:
            print("skipped: chromium did not start (no DevTools endpoint)")
            return 77
        port = re.match(r"ws://[^:/]+:(\d+)/", ws_url).group(1)
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port,
                                                   timeout=10))
        page = Page([t for t in targets if t["type"] == "page"][0]["webSocketDebuggerUrl"])
        page.call("Page.enable")
        page.call("Page.navigate", url=url)
        st = page.wait("frames", lambda s: s["frames"] >= 2 and s["s"], 60)
        report("page-loads-frames", st is not None, "no frame within 60 s: " + page.status())
        if st is None:
            return 1
        report("frame-has-bodies", st["s"]["count"] > 0 and st["s"]["n"] >= st["s"]["count"],
               json.dumps(st["s"])[:300])
        t0 = st["s"]["t"]
        st = page.wait("time", lambda s: s["s"]["t"] > t0, 30)
        report("time-advances", st is not None, "t stayed %s" % t0)
        # the canvas in a screenshot: the bodies as lit pixels on the dark
        # background, right of the panel
        time.sleep(0.5)
        png = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
        if shot:
            with open(shot, "wb") as f:
                f.write(png)
        w, h, ch, rows = png_pixels(png)
        lit = total = 0
        levels = set()
        for y in range(0, h, 2):
            row = rows[y]
            for x in range(320, w, 2):
                r, g, b = row[ch * x], row[ch * x + 1], row[ch * x + 2]
                total += 1
                if r + g + b > 120:
                    lit += 1
                    levels.add((r >> 4, g >> 4, b >> 4))
        report("canvas-not-blank", lit >= 100 and lit < 0.6 * total and len(levels) >= 3,
               "%d lit of %d sampled pixels, %d colour levels" % (lit, total, len(levels)))
        print("screenshot: %dx%d, %d lit of %d sampled pixels (%.2f%%), %d colour levels"
              % (w, h, lit, total, 100.0 * lit / max(total, 1), len(levels)))
        # pause: the step stops while frames keep coming
        page.ev("document.getElementById('pause').click()")
        st = page.wait("paused", lambda s: s["s"]["paused"], 15)
        report("pause-shows-paused", st is not None, page.status())
        if st is not None:
            f0, step0, t_p = st["frames"], st["s"]["step"], st["s"]["t"]
            st = page.wait("frames while paused", lambda s: s["frames"] >= f0 + 3, 15)
            report("frames-while-paused", st is not None, page.status())
            time.sleep(1.0)
            st = json.loads(page.status())
            report("pause-stops-time", st["s"]["step"] == step0 and st["s"]["t"] == t_p,
                   "step %s -> %s, t %s -> %s" % (step0, st["s"]["step"], t_p, st["s"]["t"]))
            step0 = st["s"]["step"]
            page.ev("document.getElementById('step1').click()")
            st = page.wait("one step", lambda s: s["s"]["step"] != step0, 15)
            report("step-advances-one", st is not None and st["s"]["step"] == step0 + 1
                   and st["s"]["paused"], page.status())
            time.sleep(1.0)
            st = json.loads(page.status())
            report("step-then-paused", st["s"]["step"] == step0 + 1,
                   "step %s after one step from %s" % (st["s"]["step"], step0))
            page.ev("document.getElementById('png').click()")
            st = page.wait("png", lambda s: (s["s"].get("msg") or "").startswith("PNG frame"), 15)
            report("png-button-writes", st is not None, page.status())
            if st:
                print("page says: " + st["s"]["msg"])
            page.ev("document.getElementById('resume').click()")
            st = page.wait("resume", lambda s: not s["s"]["paused"] and s["s"]["step"] > step0 + 2, 15)
            report("resume-goes-on", st is not None, page.status())
        # the token: refused without it, from the page and from outside
        code = page.ev("fetch('frame?after=0').then(r => r.status)")
        report("page-request-without-token-403", code == 403, "status %s" % code)
        base = url.split("?")[0]
        for path in ("", "frame", "control?cmd=pause", "view.js"):
            try:
                req = urllib.request.Request(base + path, method="POST" if "cmd" in path else "GET")
                urllib.request.urlopen(req, timeout=10)
                report("no-token-403 /" + path, False, "answered 200")
            except urllib.error.HTTPError as e:
                report("no-token-403 /" + path, e.code == 403, "HTTP %d" % e.code)
    finally:
        if "--kill-browser" in sys.argv:
            proc.send_signal(signal.SIGKILL)   # as a browser that dies would
        else:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
