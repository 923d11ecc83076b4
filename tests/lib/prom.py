"""The Prometheus HTTP API, for the Python of the shell tests that run a real
Prometheus (tests/lib/daemon.sh's start_prometheus). Import it with

    import os, sys
    sys.path.insert(0, os.environ["TCX_TESTLIB"])
    import prom

(daemon.sh exports TCX_TESTLIB, this directory).
"""
import json
import time
import urllib.parse
import urllib.request


class Prom:
    def __init__(self, base):
        self.base = base

    def get(self, path, **q):
        """GET an /api/v1 path: its "data"; SystemExit unless "success"."""
        url = self.base + path + ("?" + urllib.parse.urlencode(q) if q else "")
        with urllib.request.urlopen(url, timeout=5) as r:
            d = json.load(r)
        if d.get("status") != "success":
            raise SystemExit("%s: %s" % (url, d))
        return d["data"]

    def query(self, q, at=None):
        """The instant vector of q (now, or at the Unix time at)."""
        args = {"query": q}
        if at is not None:
            args["time"] = "%.3f" % at
        return self.get("/api/v1/query", **args)["result"]

    def values(self, q, labels, at=None):
        """{tuple of the values of labels: value} of q's instant vector."""
        return {tuple(r["metric"].get(k, "") for k in labels): float(r["value"][1])
                for r in self.query(q, at)}

    def target_errors(self):
        """(the active targets, [(health, lastError)] of those not up or with an error)."""
        t = self.get("/api/v1/targets", state="active")["activeTargets"]
        return t, [(x["health"], x["lastError"]) for x in t
                   if x["health"] != "up" or x["lastError"]]

    def healthy(self):
        """Some target is active, and every one is up with no scrape error."""
        t, errs = self.target_errors()
        return bool(t) and not errs


def wait(seconds, ready, what):
    """Calls ready() every 0.2 s until it returns a true value (returned);
    SystemExit naming what (a string, or a function giving one) after seconds."""
    deadline = time.time() + seconds
    while True:
        got = ready()
        if got:
            return got
        if time.time() > deadline:
            raise SystemExit("not within %g s: %s" % (seconds, what() if callable(what) else what))
        time.sleep(0.2)
