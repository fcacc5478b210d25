"""Processes, CPU accounting and the servers a bench run starts beside breachd (nginx, psql):
the helpers bench/run.py, bench/ranges.py and the other scripts share. Standard library
only."""
import os
import platform
import re
import socket
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    """Runs cmd, returns (stdout text, stderr text, returncode)."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return p.stdout, p.stderr, p.returncode


def first_line(cmd):
    try:
        out, err, _ = sh(cmd)
        return (out or err).strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


class Child:
    """A child process whose CPU time we can read (wait4 gives its rusage)."""

    def __init__(self, cmd, env=None, stdout=None, stderr=None, cwd=None):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=stderr, cwd=cwd)

    def wait(self):
        _, status, ru = os.wait4(self.p.pid, 0)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        self.wall = time.monotonic() - self.t0
        self.user, self.sys = ru.ru_utime, ru.ru_stime
        self.maxrss_kib = ru.ru_maxrss
        return self.p.returncode


def run_child(cmd, out_path, env=None, cwd=None):
    """Runs cmd with stdout and stderr into out_path; returns the finished Child."""
    with open(out_path, "wb") as f:
        c = Child(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, cwd=cwd)
        c.wait()
    with open(out_path, "rb") as f:
        c.output = f.read().decode(errors="replace")
    return c


def proc_status(pid):
    """VmRSS, VmHWM, RssAnon, RssFile (KiB) and Threads of a live process."""
    d = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "Threads"):
                d[k] = int(v.split()[0])
    # PSS counts a page once however many mappings share it: SQLite maps the store once
    # per connection (one per thread), and VmRSS counts a page once per mapping.
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            m = re.search(r"^Pss:\s+(\d+)", f.read(), re.M)
            d["Pss"] = int(m.group(1)) if m else None
    except OSError:
        d["Pss"] = None
    return d


def proc_cpu_seconds(pid):
    """CPU time (user + system, all threads) of pid and its child processes (nginx's
    workers), so far."""
    total = 0
    pids = [pid]
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            pids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    for q in pids:
        try:
            with open("/proc/%d/stat" % q) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[11], fields[12] are utime, stime (the 14th and 15th of the whole line).
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def machine_cpu():
    """(task busy s, irq + softirq s, steal s) of the whole machine so far, all cores.
    Loopback traffic is largely softirq work, which is not charged to any process."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    tck = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return (user + nice + system) / tck, (irq + softirq) / tck, steal / tck


def all_tasks_cpu():
    """{pid: (comm, cpu ticks)} for every process now."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        out[int(d)] = (comm, int(fields[11]) + int(fields[12]))
    return out


def top_others(before, after, exclude, seconds):
    """The other processes that used the most CPU between two all_tasks_cpu() snapshots
    (processes born and gone in between are missed: they are in the unattributed rest)."""
    tck = os.sysconf("SC_CLK_TCK")
    use = {}
    for pid, (comm, t) in after.items():
        if pid in exclude:
            continue
        d = t - before.get(pid, (comm, 0))[1]
        if d > 0:
            use[comm] = use.get(comm, 0) + d
    top = sorted(use.items(), key=lambda kv: -kv[1])[:3]
    return ", ".join("%s %.2f" % (c, t / tck / seconds) for c, t in top
                     if t / tck / seconds >= 0.02)


def proc_parent(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def pg_uri_db(uri, name):
    """A libpq URI with its database replaced by name."""
    m = re.match(r"(postgres(?:ql)?://[^/?]*)(/[^?]*)?(\?.*)?$", uri)
    if not m:
        raise SystemExit("bench: cannot read the PostgreSQL URI %r" % uri)
    return m.group(1) + "/" + name + (m.group(3) or "")


def psql(uri, sql):
    """One SQL command through psql; returns its unaligned output, exits on failure."""
    out, err, rc = sh(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", uri,
                       "-c", sql])
    if rc != 0:
        raise SystemExit("psql %s: %s" % (sql, (err or out).strip()))
    return out.strip()


def is_pg(db):
    return db.startswith(("postgresql://", "postgres://"))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_nginx(work, body, threads, content_type=None):
    """nginx serving body as a static file from work/nginx, with threads workers and the
    extra headers of nginx.conf.in (content_type: another Content-Type than JSON's);
    returns (process, port)."""
    prefix = os.path.join(work, "nginx")
    for d in ("www", "tmp"):
        os.makedirs(os.path.join(prefix, d), exist_ok=True)
    # Started as root, nginx's workers run as nobody: they must be able to reach the file
    # (the work directory is private, 0700, from mkdtemp; the store secret in it stays 0600).
    os.chmod(work, 0o711)
    os.chmod(prefix, 0o755)
    os.chmod(os.path.join(prefix, "www"), 0o755)
    with open(os.path.join(prefix, "www", "body.json"), "wb") as f:
        f.write(body)
    port = free_port()
    with open(os.path.join(BENCH, "nginx.conf.in")) as f:
        conf = (f.read().replace("@PREFIX@", prefix).replace("@PORT@", str(port))
                .replace("@WORKERS@", str(threads)))
    if content_type:
        conf = conf.replace('"application/json; charset=utf-8"', '"%s"' % content_type)
    return run_nginx(prefix, conf, (port,)), port


def run_nginx(prefix, conf, ports):
    """Starts nginx with conf (written to prefix/nginx.conf) and waits until it listens on
    every one of ports; returns the process."""
    path = os.path.join(prefix, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    p = subprocess.Popen(["nginx", "-p", prefix + "/", "-c", path, "-e",
                          os.path.join(prefix, "error.log")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not all(wait_port(port, p) for port in ports):
        p.kill()
        p.wait()
        raise SystemExit("nginx did not start; see %s/error.log" % prefix)
    return p


def wait_port(port, proc, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def machine_info():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem_kib = int(line.split()[1])
    osname = "unknown"
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M)
            osname = m.group(1) if m else osname
    except OSError:
        pass
    commit = first_line(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"])
    dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "src"])[0]
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "mem_gib": round(mem_kib / 1048576, 1),
        "kernel": platform.release(),
        "os": osname,
        "wrk": first_line(["wrk", "-v"]).split(" [")[0],
        "nginx": first_line(["nginx", "-v"]).replace("nginx version: ", ""),
        "cc": first_line(["cc", "--version"]),
        "sqlite": first_line(["pkg-config", "--modversion", "sqlite3"]),
        "libmicrohttpd": first_line(["pkg-config", "--modversion", "libmicrohttpd"]),
        "commit": commit + (" (src/ modified locally)" if dirty.strip() else ""),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
    }
