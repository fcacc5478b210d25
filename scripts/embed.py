#!/usr/bin/env python3
"""Writes a C file that holds FILE's bytes as `const char NAME[]` (NUL-terminated) and its
length as `const size_t NAME_len`, for documents compiled into the programs (the OpenAPI
document served at /openapi.json).

    python3 scripts/embed.py NAME FILE HEADER > out.c"""
import sys

name, path, header = sys.argv[1:4]
data = open(path, "rb").read()
out = ['/* Generated from %s by scripts/embed.py: do not edit. */' % path,
       '#include "%s"' % header, "", "const char %s[] = {" % name]
for i in range(0, len(data), 16):
    out.append("    " + " ".join("0x%02x," % b for b in data[i:i + 16]))
out += ["    0x00};", "const size_t %s_len = %d;" % (name, len(data)), ""]
sys.stdout.write("\n".join(out))
