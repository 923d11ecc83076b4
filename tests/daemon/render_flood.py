"""Clients of tests/daemon/render_flood.sh, one role each:

    render_flood.py scrape PORT SECONDS      Prometheus: OpenMetrics + gzip, every second
    render_flood.py head PORT SECONDS SRC    HEAD, 20 a second, across the four variants
                                             (text, OpenMetrics, each with and without gzip)
    render_flood.py cycle PORT SECONDS SRC   GET, as fast as answers come, on 4 connections,
                                             all asking for one variant a second, the next
                                             one the next second (a quarter of the gzip
                                             bodies decompressed)

SRC: the source address. A scrape and a HEAD must get 200; a cycling GET
200 or 429 (with a Retry-After). A 200 has the Content-Type of its variant
and, for a GET, its whole body (gzip that decompresses, ending as its
format ends); a HEAD's is empty. Prints what it got, one JSON line."""
import gzip
import http.client
import json
import sys
import threading
import time

PROM = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
        "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
VARIANTS = [  # name, Accept, Accept-Encoding, Content-Type
    ("text", "text/plain", "identity", "text/plain; version=0.0.4"),
    ("text_gz", "text/plain", "gzip", "text/plain; version=0.0.4"),
    ("om", "application/openmetrics-text;version=1.0.0", "identity", "application/openmetrics-text"),
    ("om_gz", PROM, "gzip", "application/openmetrics-text"),
]


def conn(port, src):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(src, 0) if src else None)


def check(role, name, ctype, method, r, body, unzip=True):
    if role == "cycle" and r.status == 429:
        if not r.getheader("Retry-After", "").isdigit():
            raise SystemExit("cycle %s: 429 without a Retry-After" % name)
        return
    if r.status != 200:
        raise SystemExit("%s %s: %d %r" % (role, name, r.status, body[:200]))
    if not r.getheader("Content-Type", "").startswith(ctype):
        raise SystemExit("%s %s: Content-Type %r" % (role, name, r.getheader("Content-Type")))
    if method == "HEAD":
        if body:
            raise SystemExit("HEAD %s: a body of %d bytes" % (name, len(body)))
        return
    if name.endswith("_gz") and not unzip:
        if body[:2] != b"\x1f\x8b" or len(body) < 18:
            raise SystemExit("%s %s: not a gzip body (%d bytes)" % (role, name, len(body)))
        return
    text = gzip.decompress(body) if name.endswith("_gz") else body
    end = b"\n# EOF\n" if name.startswith("om") else b"\n"
    if not text.endswith(end) or b"\ntc_exporter_collections_total " not in text:
        raise SystemExit("%s %s: a body that is not whole (%d bytes)" % (role, name, len(body)))


def run(role, port, seconds, src, first, got, lock):
    method = "HEAD" if role == "head" else "GET"
    pause = {"scrape": 1.0, "head": 0.05, "cycle": 0.0}[role]
    c = conn(port, src)
    end = time.monotonic() + seconds
    i = first
    while time.monotonic() < end:
        t0 = time.monotonic()
        # cycle: a different variant every second, never the same two seconds in a row
        k = int(time.monotonic()) if role == "cycle" else i
        name, accept, enc, ctype = VARIANTS[3] if role == "scrape" else VARIANTS[k % 4]
        i += 1
        c.request(method, "/metrics", headers={"Accept": accept, "Accept-Encoding": enc})
        r = c.getresponse()
        body = r.read()
        # cycle: every answer checked, a quarter of the gzip ones decompressed
        # (decompressing each would keep the client too busy to load the daemon)
        check(role, name, ctype, method, r, body, role != "cycle" or i % 4 == 0)
        with lock:
            key = "%s %d" % (name, r.status)
            got[key] = got.get(key, 0) + 1
        if r.will_close:
            c.close()
            c = conn(port, src)
        time.sleep(max(0.0, pause - (time.monotonic() - t0)))


def main():
    role, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    src = sys.argv[4] if len(sys.argv) > 4 else None
    got, lock, failed = {}, threading.Lock(), []

    def one(first):
        try:
            run(role, port, seconds, src, first, got, lock)
        except BaseException as e:  # noqa: B036 (SystemExit too: reported below)
            failed.append(str(e))

    threads = [threading.Thread(target=one, args=(k,)) for k in range(4 if role == "cycle" else 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise SystemExit(failed[0])
    print(json.dumps(got, sort_keys=True))


main()
