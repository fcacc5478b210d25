#!/usr/bin/env python3
"""Replies of two breachd builds side by side, on a fixed corpus of requests: every route of
the table and paths around them, each method, with and without keys, CORS preflights and
origins, under two server configurations. Each build serves its own copy of one demo store;
every request goes to both, in turn, and the replies must be the same bytes (status, headers
and body), but for what differs by nature: Date, X-Request-Id, X-RateLimit-Reset, and the
timings and connection counts of /metrics.

    scripts/reply-diff.py BEFORE_BUILD_DIR AFTER_BUILD_DIR

Exits 1 and prints the first differences when any reply differs. Made for issue 30 (one
route table, no reply byte changed). Against a build before the route table, /metrics
differs in one known way: those builds counted a request refused before routing (its head
refused by the guard, e.g. a 413 for a body announced past any limit, or a 503 when no store
connection could be opened) under route="breaches", the first route's number; it is now
counted under route="other", as a request no route took."""
import gzip
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MASKED = {"date", "x-request-id", "x-ratelimit-reset"}


def start(build, db, extra):
    err = tempfile.NamedTemporaryFile(prefix="reply-diff-", delete=False)
    proc = subprocess.Popen([os.path.join(build, "breachd"), "--db", db, "--listen",
                             "127.0.0.1:0", "--threads", "1", *extra],
                            stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.time() + 15
    while time.time() < deadline:
        with open(err.name, "rb") as f:
            m = re.search(rb"-> port (\d+)", f.read())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.02)
    proc.kill()
    raise SystemExit("%s/breachd did not start" % build)


def ask(port, method, path, headers, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read() if method != "HEAD" else b""
    hdrs = [(k.lower(), "*" if k.lower() in MASKED else v) for k, v in r.getheaders()]
    c.close()
    if path.startswith("/metrics") and r.status == 200:
        if dict(hdrs).get("content-encoding") == "gzip":
            data = gzip.decompress(data)
            hdrs = [(k, "*" if k == "content-length" else v) for k, v in hdrs]
        data = b"\n".join(l for l in data.split(b"\n")
                          if not re.match(rb"breachd_(request_duration|open_conn)", l))
    return r.status, hdrs, data


def same(a, b):
    """Equal replies; X-RateLimit-Remaining may differ by one (the budget refills
    continuously, and the two servers answer a few milliseconds apart)."""
    if a[0] != b[0] or a[2] != b[2] or len(a[1]) != len(b[1]):
        return False
    for (ka, va), (kb, vb) in zip(a[1], b[1]):
        if ka != kb or (va != vb and not (ka == "x-ratelimit-remaining" and
                                          abs(int(va) - int(vb)) <= 1)):
            return False
    return True


def shown(r):
    return "%d %r\n    %r" % (r[0], r[1], r[2][:3000])


def corpus(key):
    paths = ["/", "/healthz", "/healthz/", "/openapi.json", "/metrics", "/nope", "/v7", "/v7/",
             "/v7/nope", "/v7/breaches", "/v7/breaches/", "/v7/breaches/x", "/v7/breaches/x/y",
             "/v7/breach-search?email=a@example.com", "/v7/breach-search?domain=example.com",
             "/v7/breach-search", "/v7/credit-card-search?q=bin:411111",
             "/v7/credit-card-search", "/v7/usage", "/v7/status", "/v7/changes", "/v7/watches",
             "/v7/watches/1", "/v7/watches/", "/v7/alerts", "/v7/jobs", "/v7/jobs/x",
             "/v7/jobs/x/results", "/v7/jobs/x/y", "/v7/jobs//results", "/range/21BD1",
             "/range/", "/range/21BD1/x", "/range/zz", "/v7/range/21BD1?mode=ntlm",
             "/v7/range/", "/api/v3/breaches", "/api/v3/breaches?domain=x.com",
             "/api/v3/breach/Adobe", "/api/v3/breach/", "/api/v3/breach/a/b",
             "/api/v3/dataclasses", "/api/v3/subscription/status",
             "/api/v3/breachedaccount/a@example.com", "/api/v3/breachedaccount/a%2Fb",
             "/api/v3/breacheddomain/example.com", "/api/v3/nope", "/api/v3", "/api/v3/",
             "/api/v3/breachesx", "/v7/breachesx", "/V7/breaches"]
    keys = [{}, {"x-api-key": key}, {"x-api-key": "bd_wrong"}, {"hibp-api-key": key}]
    for path in paths:
        for method in ["GET", "HEAD", "POST", "DELETE", "PUT", "OPTIONS", "BREW"]:
            for k in keys:
                if method in ("POST", "DELETE") and ("watches" in path or "jobs" in path):
                    for body in [None, b"", b"{}", b"not json", b'{"type":"email"}']:
                        yield method, path, dict(k), body
                else:
                    yield method, path, dict(k), None
        origin = {"Origin": "https://dash.example.com"}
        yield "GET", path, dict(origin, **{"x-api-key": key}), None
        yield "GET", path, {"Origin": "https://evil.example.com", "x-api-key": key}, None
        yield "OPTIONS", path, dict(origin, **{"Access-Control-Request-Method": "POST"}), None
        yield "OPTIONS", path, {"Origin": "https://evil.example.com",
                                "Access-Control-Request-Method": "GET"}, None
        yield "GET", path, {"x-api-key": key, "Accept": "text/csv"}, None
        yield "GET", path, {"x-api-key": key, "If-None-Match": "*"}, None
        yield "GET", path, {"x-api-key": key, "Accept-Encoding": "gzip"}, None
    # a large announced body, refused at its head
    for path in ["/v7/watches", "/v7/jobs", "/v7/breaches", "/healthz", "/api/v3/breaches",
                 "/range/21BD1", "/v7/watches/1"]:
        for method in ["POST", "DELETE", "PUT"]:
            yield method, path, {"x-api-key": key, "Content-Length": "20000000"}, b"x" * 64


def main():
    before, after = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="reply-diff-")
    try:
        db = os.path.join(work, "demo.db")
        subprocess.run([os.path.join(before, "breachctl"), "demo", "--db", db], check=True,
                       capture_output=True)
        key = subprocess.run([os.path.join(before, "breachctl"), "keys", "create", "--name",
                              "diff", "--plan", "enterprise", "--db", db], check=True,
                             capture_output=True).stdout.decode().strip()
        # failed keys from one address are throttled after --auth-fail-limit a minute: the
        # corpus sends many, and the two servers would cross that line a moment apart
        configs = [["--cors-origin", "https://dash.example.com", "--auth-fail-limit", "100000"],
                   ["--range-auth", "none", "--hibp-catalog-auth", "none", "--cors-origin",
                    "*", "--auth-fail-limit", "100000"], []]
        diffs = n = 0
        for ci, extra in enumerate(configs):
            procs = []
            for side, build in (("a", before), ("b", after)):
                copy = os.path.join(work, "%s%d.db" % (side, ci))
                for suffix in ("", ".secret"):
                    shutil.copy(db + suffix, copy + suffix)
                procs.append(start(build, copy, extra))
            try:
                for method, path, headers, body in corpus(key):
                    if body is not None and "Content-Length" not in headers:
                        headers["Content-Length"] = str(len(body))
                    ra = ask(procs[0][1], method, path, headers, body)
                    rb = ask(procs[1][1], method, path, headers, body)
                    n += 1
                    if not same(ra, rb):
                        diffs += 1
                        if diffs <= 10:
                            print("DIFF %s %s %s\n  before %s\n  after  %s" % (
                                method, path, headers, shown(ra), shown(rb)))
                ma = ask(procs[0][1], "GET", "/metrics", {}, None)
                mb = ask(procs[1][1], "GET", "/metrics", {}, None)
                n += 1
                if not same(ma, mb):
                    diffs += 1
                    print("DIFF /metrics after the corpus\n  before %s\n  after  %s" % (
                        shown(ma), shown(mb)))
            finally:
                for p, _ in procs:
                    p.terminate()
                    p.wait()
        print("%d requests, %d replies differ" % (n, diffs))
        return 1 if diffs else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
