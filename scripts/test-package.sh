#!/usr/bin/env bash
# Checks the Debian package `make deb` built (make test-package): its control data and files,
# the unit under systemd-analyze (security exposure 2.0 at most; verify), lintian without an
# error, the commented configuration file accepted by breachd, and, on a machine where
# breachd is not installed (no package, user, /etc/breachd or /var/lib/breachd), a real
# install: the user, the modes, the first-install store, nothing enabled, breachctl and
# breachd run as the service would (READY=1 on $NOTIFY_SOCKET), an upgrade that keeps the
# store, and a purge; what the test created is then removed.
#   usage: scripts/test-package.sh DIR   (DIR holds breachd_*.deb)
set -euo pipefail
dir=${1:?usage: test-package.sh DIR}
deb=$(ls "$dir"/breachd_*.deb | grep -v dbgsym | head -n 1)
fail() { echo "test-package: FAIL: $*" >&2; exit 1; }
ok() { echo "test-package: ok: $*"; }
root=$(mktemp -d /tmp/breachd-pkg-XXXXXX)
trap 'rm -rf "$root"' EXIT

# -- control data and files
info=$(dpkg-deb -I "$deb")
grep -q '^ Package: breachd$' <<<"$info" || fail "package name"
grep -q '^ Depends:.*adduser' <<<"$info" || fail "Depends lacks adduser"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] || fail "architecture"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/breachd/breachd.conf ||
  fail "/etc/breachd/breachd.conf is not a conffile"
files=$(dpkg-deb -c "$deb")
for f in ./usr/sbin/breachd ./usr/bin/breachctl ./usr/share/man/man8/breachd.8.gz \
  ./usr/share/man/man1/breachctl.1.gz ./usr/share/man/man5/breachd.conf.5.gz \
  ./usr/share/bash-completion/completions/breachctl ./lib/systemd/system/breachd.service \
  ./etc/breachd/breachd.conf ./usr/share/doc/breachd/copyright; do
  grep -q " $f\$" <<<"$files" || fail "$f missing from the package"
done
ok "control data, conffile and $(wc -l <<<"$files") entries"

# -- the unit
dpkg-deb -x "$deb" "$root"
unit=$root/lib/systemd/system/breachd.service
score=$(systemd-analyze security --offline=yes "$unit" 2>/dev/null |
  sed -n 's/.*Overall exposure level for breachd.service: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "systemd-analyze security gave no score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "exposure $score > 2.0"
ok "systemd-analyze security --offline=yes: $score"
# verified on this machine's units, with ExecStart naming the extracted program (the
# installed unit itself is verified after the install below)
sed "s|/usr/sbin/breachd|$root/usr/sbin/breachd|" "$unit" >"$root/breachd.service"
verify=$(systemd-analyze verify --man=no "$root/breachd.service" 2>&1 || echo "exit status $?")
[ -z "$verify" ] || fail "systemd-analyze verify: $verify"
ok "systemd-analyze verify"
grep -qx 'Type=notify' "$unit" || fail "Type=notify"

# -- lintian: no error (warnings are printed)
lintian --fail-on error "$deb" || fail "lintian found an error"
ok "lintian without error"

# -- the commented configuration file as breachd reads it (store and address overridden)
conf=$root/etc/breachd/breachd.conf
grep -q '^db = /var/lib/breachd/breachd.db$' "$conf" || fail "conffile's store"
[ "$(grep -c '^#[a-z-]* = ' "$conf")" -ge 25 ] || fail "conffile lists too few settings"
"$root/usr/bin/breachctl" init --config none --db "$root/s.db" 2>/dev/null
out=$(timeout 20 "$root/usr/sbin/breachd" --config "$conf" --db "$root/s.db" \
  --listen 127.0.0.1:0 2>&1 & pid=$!; sleep 1; kill -TERM $pid; wait $pid; echo "exit $?")
grep -q 'serving http://127.0.0.1:0' <<<"$out" && grep -q 'exit 0' <<<"$out" ||
  fail "breachd with the package's configuration file: $out"
ok "breachd starts with the package's configuration file"

# -- a real install, only where nothing of breachd exists
if dpkg-query -W breachd >/dev/null 2>&1 || getent passwd breachd >/dev/null ||
  [ -e /etc/breachd ] || [ -e /var/lib/breachd ] || [ "$(id -u)" -ne 0 ]; then
  echo "test-package: breachd is present on this machine (or not root): install not tried"
  exit 0
fi
pg_started=
cleanup() {
  if [ -n "$pg_started" ]; then
    runuser -u postgres -- dropdb --if-exists breachd >/dev/null 2>&1 || true
    runuser -u postgres -- dropuser --if-exists breachd >/dev/null 2>&1 || true
    pg_ctlcluster 15 main stop || true
  fi
  dpkg --purge breachd >/dev/null 2>&1 || true
  rm -rf /var/lib/breachd /etc/breachd /var/log/breachd
  getent passwd breachd >/dev/null && deluser --quiet --system breachd >/dev/null 2>&1 || true
  getent group breachd >/dev/null && delgroup --quiet --system breachd >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >/dev/null
[ "$(getent passwd breachd | cut -d: -f6,7)" = "/var/lib/breachd:/usr/sbin/nologin" ] ||
  fail "user breachd: $(getent passwd breachd)"
[ "$(stat -c '%a %U' /var/lib/breachd)" = "700 breachd" ] || fail "/var/lib/breachd mode"
for f in breachd.db breachd.secret; do
  [ "$(stat -c '%a %U' /var/lib/breachd/$f)" = "600 breachd" ] || fail "$f: $(stat -c '%a %U' /var/lib/breachd/$f)"
done
[ "$(stat -c '%a %U %G' /etc/breachd/breachd.conf)" = "640 root breachd" ] || fail "conffile mode"
[ ! -e /etc/systemd/system/multi-user.target.wants/breachd.service ] || fail "service enabled"
ok "installed: user, /var/lib/breachd 0700, store and secret 0600, conffile 0640, not enabled"
verify=$(systemd-analyze verify --man=no /lib/systemd/system/breachd.service 2>&1 || echo "exit $?")
[ -z "$verify" ] || fail "systemd-analyze verify of the installed unit: $verify"
ok "systemd-analyze verify of the installed unit"
stats=$(runuser -u breachd -- env -u BREACHD_CONFIG breachctl stats)
[ "$stats" = "total: 0 breach records, 0 cards" ] || fail "breachctl stats: $stats"
ok "breachctl stats from the configuration file alone"
out=$(runuser -u nobody -- env -u BREACHD_CONFIG breachctl stats 2>&1 || true)
[ "$out" = "usage: breachctl stats --db PATH" ] || fail "breachctl as a user who cannot read the file: $out"
ok "breachctl as another user passes over the file it cannot read"
python3 - <<'EOF' || fail "breachd as the service runs it"
import os, socket, subprocess, tempfile
d = tempfile.mkdtemp()
os.chmod(d, 0o755)
path = os.path.join(d, "notify")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
s.settimeout(15)
env = {"PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": path, "BREACHD_LISTEN": "127.0.0.1:0"}
p = subprocess.Popen(["/usr/sbin/breachd", "--config", "/etc/breachd/breachd.conf"], env=env,
                     user="breachd", group="breachd", extra_groups=[], umask=0o077)
msg = s.recv(4096).decode()
assert msg.startswith("READY=1\n"), msg
p.terminate()
assert p.wait(15) == 0, p.returncode
assert s.recv(4096).decode() == "STOPPING=1"
print("test-package: ok: READY=1 and STOPPING=1 on $NOTIFY_SOCKET")
EOF
# -- docs/OPERATIONS.md's "Running on PostgreSQL" steps, literally, where Debian's cluster
# 15/main is installed and down (it is started for them and stopped again): every command
# of the steps' code blocks is run as written (sudo -u USER as runuser when sudo is absent),
# but for installing PostgreSQL and enabling the service; the db and secret lines go into
# the configuration file as step 3 says.
ops=$(dirname "$0")/../docs/OPERATIONS.md
if command -v pg_ctlcluster >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q '^15 *main .* down '; then
  pg_ctlcluster 15 main start
  pg_started=1
  command -v sudo >/dev/null || sudo() {
    if [ "$1" = -u ]; then local u=$2; shift 2; runuser -u "$u" -- "$@"; else "$@"; fi
  }
  work=$(mktemp -d /tmp/breachd-pgdoc-XXXXXX)
  chmod 755 "$work"
  cp "$(dirname "$0")/../tests/e2e/fixtures/breaches.jsonl" "$work/breaches.jsonl"
  echo '{"breach_uuid":"11111111-1111-4111-8111-111111111111","email":"alice@example.com"}' \
    >"$work/records.jsonl"
  chmod 644 "$work"/*.jsonl
  steps=$(awk '/^## Running on PostgreSQL/,/^Without the package/' "$ops" | grep '^       ')
  [ "$(grep -c . <<<"$steps")" -ge 9 ] || fail "OPERATIONS.md's PostgreSQL steps not found"
  key=
  while IFS= read -r line; do
    cmd=${line#       }
    case $cmd in
    *"apt install"* | *systemctl*) ;;
    "db = "* | "secret = "*)
      k=${cmd%% =*}
      sed -i "s|^$k = .*|$cmd|" /etc/breachd/breachd.conf ;;
    *"keys create"*) key=$(cd "$work" && eval "$cmd" 2>/dev/null) || fail "step: $cmd" ;;
    *) (cd "$work" && eval "$cmd") >/dev/null 2>&1 || fail "step: $cmd" ;;
    esac
  done <<<"$steps"
  stats=$(runuser -u breachd -- env -u BREACHD_CONFIG breachctl stats | tail -n 1)
  [ "$stats" = "total: 1 breach records, 0 cards" ] || fail "after the PostgreSQL steps: $stats"
  BREACHD_KEY=$key python3 "$(dirname "$0")/test-package-search.py" ||
    fail "breachd on the PostgreSQL store"
  ok "OPERATIONS.md's PostgreSQL steps, as written: a record found with the key they made"
  runuser -u postgres -- dropdb breachd
  runuser -u postgres -- dropuser breachd
  pg_ctlcluster 15 main stop
  pg_started=
  rm -rf "$work"
fi

before=$(stat -c '%i %Y' /var/lib/breachd/breachd.secret)
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >/dev/null
[ "$(stat -c '%i %Y' /var/lib/breachd/breachd.secret)" = "$before" ] || fail "upgrade touched the secret"
ok "an upgrade leaves the store and its secret alone"
dpkg --purge breachd >/dev/null
[ ! -e /etc/breachd/breachd.conf ] || fail "purge left the conffile"
ok "purged"
