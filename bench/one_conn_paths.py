"""The request paths of the one-connection runs (bench/one_conn.c), built from the corpus's
sample files the way bench/lua/common.lua builds them for wrk: the same paths in the same
order, so a one-connection figure and a 64-connection one ask for the same things."""
import os
from urllib.parse import quote

BASE = "/v7"


def enc(s):
    # Lua's urlencode in common.lua keeps letters, digits and - . _ ~
    return quote(s, safe="-._~")


def email_path(email):
    return BASE + "/breach-search?type=email&account=" + enc(email) + "&number_of_records=1"


def domain_path(domain):
    return (BASE + "/breach-search?type=email_domain&account=" + enc(domain)
            + "&number_of_records=100")


def bin_path(b):
    return BASE + "/credit-card-search?query=" + enc("number:" + b + "*") + "&size=20"


def owner_path(word, year):
    q = "owner:%s AND expireDate:[%d-01-01 TO *]" % (word, year)
    return (BASE + "/credit-card-search?query=" + enc(q) + "&sort=" + enc("expireDate,asc")
            + "&size=20")


def _lines(corpus, name):
    with open(os.path.join(corpus, name)) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


# script -> (sample file, path builder of (line, index), the pager's follow probability)
SCRIPTS = {
    "s1_email.lua": ("emails.txt", lambda e, i: email_path(e), None),
    # common.lua's pager starts each thread 7 domains along: thread 1 at the first
    "s2_domain_paging.lua": ("domains.txt", lambda d, i: domain_path(d), 0.5),
    "s4_bin.lua": ("bins.txt", lambda b, i: bin_path(b), None),
    "s5_owner_expiry.lua": ("owners.txt",
                            lambda w, i: owner_path(w, (2025, 2026, 2027, 2028, 2029)[i % 5]),
                            None),
}


def write(corpus, script, out_dir):
    """Writes the paths file of a scenario's script; returns (path, follow probability), or
    None when the script has no one-connection form."""
    if script not in SCRIPTS:
        return None
    sample, build, follow = SCRIPTS[script]
    out = os.path.join(out_dir, "one_conn_" + script.replace(".lua", ".txt"))
    if not os.path.exists(out):
        with open(out, "w") as f:
            for i, line in enumerate(_lines(corpus, sample)):
                f.write(build(line, i) + "\n")
    return out, follow
