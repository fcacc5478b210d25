#!/usr/bin/env python3
"""Writes the C text that compiles the web console (console/: HTML, CSS, JavaScript modules,
SVG) into breachd, included by src/http/console.c: the table bd_console_assets of
http/console.h, one row per file with its path below /console/, its media type and its
bytes. Refuses a file of another kind, a name
a URL would have to escape, and JavaScript over 150 KB in all (issue 34's budget).

    python3 scripts/embed_console.py console/* > console_assets.inc"""
import os
import re
import sys

TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml",
         ".png": "image/png", ".ico": "image/x-icon"}
JS_MAX = 150 * 1024

files = sorted(p for p in sys.argv[1:] if os.path.isfile(p))
out = ["/* Generated from console/ by scripts/embed_console.py: do not edit. */", ""]
rows, js = [], 0
for i, path in enumerate(files):
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    if ext not in TYPES or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        sys.exit("embed_console: %s: not a console file (%s)" % (path, ", ".join(TYPES)))
    data = open(path, "rb").read()
    if ext == ".js":
        js += len(data)
    out.append("static const unsigned char f%d[] = {" % i)
    for j in range(0, len(data), 20):
        out.append("    " + ",".join(str(b) for b in data[j:j + 20]) + ",")
    out.append("    0};")
    rows.append('    {"%s", "%s", f%d, %d},' % (name, TYPES[ext], i, len(data)))
if js > JS_MAX:
    sys.exit("embed_console: %d bytes of JavaScript, over the budget of %d" % (js, JS_MAX))
out += ["", "const bd_console_asset bd_console_assets[] = {"] + rows + ["    {0, 0, 0, 0}};",
        "const size_t bd_console_assets_n = %d;" % len(rows), ""]
sys.stdout.write("\n".join(out))
