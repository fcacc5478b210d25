"""Part of scripts/test-package.sh: breachd started as the service starts it (its user, the
installed configuration file, BREACHD_LISTEN on a free port) finds alice@example.com's one
record with the key in BREACHD_KEY, and stops with status 0 on SIGTERM."""
import json
import os
import re
import subprocess
import urllib.request

p = subprocess.Popen(["/usr/sbin/breachd", "--config", "/etc/breachd/breachd.conf"],
                     env={"PATH": "/usr/bin:/bin", "BREACHD_LISTEN": "127.0.0.1:0"},
                     user="breachd", group="breachd", extra_groups=[], umask=0o077,
                     stderr=subprocess.PIPE)
port = None
while port is None:
    line = p.stderr.readline().decode()
    assert line, "breachd ended before serving"
    m = re.search(r"-> port (\d+)", line)
    port = m and int(m.group(1))
req = urllib.request.Request(
    "http://127.0.0.1:%d/v7/breach-search?type=email&account=alice@example.com" % port,
    headers={"x-api-key": os.environ["BREACHD_KEY"]})
body = json.load(urllib.request.urlopen(req, timeout=10))
assert body["records_found"] == 1, body
p.terminate()
assert p.wait(15) == 0, p.returncode
