# breachd build. Every module under src/ is compiled into one static library that the two
# programs and every test link, so tests exercise exactly the code the binaries run.
#
#   make                 build/breachd, build/breachctl
#   make test            unit + end-to-end tests against the build in $(BUILD)
#   make test-pg         the unit tests that need PostgreSQL, the e2e suite on a PostgreSQL store
#   make test-openapi    docs/openapi.json through a published OpenAPI validator (npm)
#   make test-console    the web console in chromium (playwright-core, axe), SQLite and PostgreSQL
#   make test-cluster    two breachd instances on a PostgreSQL primary and its hot standby
#   make test-sanitize   the same suite built with clang, ASan + UBSan, in build-asan/
#   make fuzz-quick      every fuzz target for a few seconds, fuzz_http for 30 (CI)
#   make fuzz            every fuzz target for FUZZ_SECONDS each (long run)
#   make fuzz-http       raw request bytes into a running server for FUZZ_HTTP_SECONDS
#   make check           what CI runs: test, test-sanitize, fuzz-quick
#   make docs            man pages, the commented breachd.conf, bash completion (docgen)
#   make install         the programs and those files; PREFIX=/usr/local, DESTDIR honoured
#   make deb             the Debian package, build/deb/breachd_VERSION_ARCH.deb
#   make test-package    the package built, checked, installed and removed (scripts/)
#   make tsan            unit tests, the concurrency stress test and webhooks under ThreadSanitizer
#   make valgrind        the server's end-to-end suites with breachd under valgrind
#   make bench-cluster   scenario 1 on a primary + hot standby, shared limits (bench/RESULTS.md)
#   make bench-citus     scenarios 1-5 on a Citus coordinator + 2 workers beside one PostgreSQL
#   make bench-jobs      a bulk job of 100,000 emails against 100,000 single searches
#   make bench-size      bytes per record and per card on PostgreSQL (SIZE_N of each)
#   make bench-ranges    Pwned Passwords ranges: load rate, bytes per hash, /range/ vs nginx
#   make bench-watch     watches: import commit to webhook received (1,000 watches, 1M records)
#   make bench-watch-pg  the same on a PostgreSQL store
#   make bench-import    import speed beside its floor: --dry-run, SQLite alone, plain, --bulk
#   make bench-import-pg the same on PostgreSQL: import --bulk beside PostgreSQL alone's load

CC      ?= cc
BUILD   ?= build
SAN     ?=
PKGS    := libmicrohttpd sqlite3 libsodium jansson libpq nettle libcurl zlib libzstd liblzma libidn2

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
# CFLAGS is the user's (optimisation, debug, instrumentation); the flags the code needs are
# kept apart so that overriding CFLAGS on the command line cannot drop them.
CFLAGS  ?= -O2 -g
REQ_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $(WARN) -Isrc \
              $(shell pkg-config --cflags $(PKGS))
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -lbz2 -lpthread -lm

ifeq ($(SAN),1)
REQ_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(SAN),thread)
REQ_CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif

MAINS   := src/breachd.c src/breachctl.c src/docgen.c
LIBSRC  := $(filter-out $(MAINS),$(shell find src -name '*.c' | sort))
LIBOBJ  := $(LIBSRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/openapi_doc.o
LIB     := $(BUILD)/libbreachd.a
UNITSRC := $(sort $(wildcard tests/unit/test_*.c))
UNITBIN := $(UNITSRC:tests/unit/%.c=$(BUILD)/tests/%)
DEPS    := $(LIBOBJ:.o=.d) $(MAINS:%.c=$(BUILD)/obj/%.d) $(UNITSRC:%.c=$(BUILD)/obj/%.d)

.SECONDARY:

.PHONY: all test test-pg unit e2e test-sanitize fuzz fuzz-quick fuzz-http check clean bench bench-mhd-floor bench-quick bench-growth bench-cluster bench-citus format \
        tsan valgrind

all: $(BUILD)/breachd $(BUILD)/breachctl

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(REQ_CFLAGS) -MMD -MP -c $< -o $@

# docs/openapi.json compiled in (served at /openapi.json; tests/e2e checks every response
# against it).
$(BUILD)/gen/openapi_doc.c: docs/openapi.json scripts/embed.py
	@mkdir -p $(dir $@)
	python3 scripts/embed.py bd_openapi_json $< http/openapi.h > $@

$(BUILD)/obj/gen/openapi_doc.o: $(BUILD)/gen/openapi_doc.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(REQ_CFLAGS) -c $< -o $@

# The web console (console/: pages, scripts, styles) compiled into http/console.c, which
# includes the table the generator writes (it refuses JavaScript over 150 KB in all), so a
# changed page rebuilds that one object.
CONSOLE_FILES := $(sort $(wildcard console/*))
$(BUILD)/gen/console_assets.inc: $(CONSOLE_FILES) scripts/embed_console.py
	@mkdir -p $(dir $@)
	python3 scripts/embed_console.py $(CONSOLE_FILES) > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/src/http/console.o: $(BUILD)/gen/console_assets.inc
$(BUILD)/obj/src/http/console.o: REQ_CFLAGS += -I$(BUILD)/gen

# The version (debian/changelog's first entry) and the commit, compiled into core/version.c;
# the header is rewritten only when they change, so a new commit rebuilds one object. The
# temporary file is the shell's own: make test and make test-pg run side by side on one BUILD.
VERSION := $(shell sed -n '1s/^breachd (\([^)-]*\).*/\1/p' debian/changelog 2>/dev/null)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
.PHONY: FORCE
$(BUILD)/gen/bd_build_info.h: FORCE
	@mkdir -p $(dir $@)
	@t=$@.tmp.$$$$; \
	printf '#define BD_VERSION "%s"\n#define BD_COMMIT "%s"\n' '$(or $(VERSION),unknown)' \
	  '$(or $(COMMIT),unknown)' > $$t; \
	if cmp -s $$t $@; then rm -f $$t; else mv $$t $@; fi
$(BUILD)/obj/src/core/version.o: $(BUILD)/gen/bd_build_info.h
$(BUILD)/obj/src/core/version.o: REQ_CFLAGS += -I$(BUILD)/gen

$(LIB): $(LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/breachd: $(BUILD)/obj/src/breachd.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/breachctl: $(BUILD)/obj/src/breachctl.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# What is generated from the programs' one description of their options (src/cli/help.c):
# the man pages, the commented configuration file and breachctl's bash completion.
$(BUILD)/docgen: $(BUILD)/obj/src/docgen.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

MANPAGES := $(BUILD)/man/breachd.8 $(BUILD)/man/breachctl.1 $(BUILD)/man/breachd.conf.5
$(BUILD)/man/%.8 $(BUILD)/man/%.1: $(BUILD)/docgen
	@mkdir -p $(dir $@)
	$(BUILD)/docgen man $* > $@
$(BUILD)/man/breachd.conf.5: $(BUILD)/docgen
	@mkdir -p $(dir $@)
	$(BUILD)/docgen man breachd.conf > $@
$(BUILD)/breachd.conf: $(BUILD)/docgen
	$(BUILD)/docgen conf > $@
$(BUILD)/breachctl.bash-completion: $(BUILD)/docgen
	$(BUILD)/docgen completion > $@

.PHONY: docs
docs: $(MANPAGES) $(BUILD)/breachd.conf $(BUILD)/breachctl.bash-completion

# make install [PREFIX=/usr/local] [DESTDIR=...]: the programs, the man pages, the bash
# completion, and (when absent) the commented configuration file.
PREFIX  ?= /usr/local
SYSCONFDIR ?= /etc
.PHONY: install
install: all docs
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 \
	  $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(SYSCONFDIR)/breachd
	install -m 0755 $(BUILD)/breachd $(DESTDIR)$(PREFIX)/sbin/breachd
	install -m 0755 $(BUILD)/breachctl $(DESTDIR)$(PREFIX)/bin/breachctl
	install -m 0644 $(BUILD)/man/breachd.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0644 $(BUILD)/man/breachctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 $(BUILD)/man/breachd.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 $(BUILD)/breachctl.bash-completion \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/breachctl
	test -e $(DESTDIR)$(SYSCONFDIR)/breachd/breachd.conf || \
	  install -m 0640 $(BUILD)/breachd.conf $(DESTDIR)$(SYSCONFDIR)/breachd/breachd.conf

# make deb: breachd_VERSION_ARCH.deb (debian/, debhelper) in $(BUILD)/deb/, built by
# dpkg-buildpackage -us -uc -b from a copy of the working tree's files (tracked and new, not
# ignored), so the tree itself gets no build products; COMMIT is this tree's.
DEBROOT := $(BUILD)/deb
.PHONY: deb test-package
deb:
	rm -rf $(DEBROOT) && mkdir -p $(DEBROOT)/breachd-$(VERSION)
	git ls-files -z --cached --others --exclude-standard | grep -zv '^build' | \
	  xargs -0 tar cf - | tar xf - -C $(DEBROOT)/breachd-$(VERSION)
	cd $(DEBROOT)/breachd-$(VERSION) && COMMIT=$(COMMIT) dpkg-buildpackage -us -uc -b
	@ls $(DEBROOT)/*.deb

# The package checked: built, its files, modes and scripts inspected, the unit judged by
# systemd-analyze (security exposure 2.0 at most, verify), lintian without an error, and
# installed into a scratch root (dpkg --root) for its first-install store
# (scripts/test-package.sh).
test-package: deb
	scripts/test-package.sh $(DEBROOT)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The programs and every unit test binary, built once before suites run side by side
# (scripts/test.sh), so that no two suites build the same file at once.
.PHONY: build-tests
build-tests: all docs $(UNITBIN)

unit: $(UNITBIN)
	@set -e; for t in $(UNITBIN); do echo "== $$t"; $$t; done

e2e: all docs
	python3 tests/e2e/run.py --build $(BUILD)

test: unit e2e

# docs/openapi.json through a published OpenAPI validator (npm, pinned in tests/openapi);
# the e2e suite checks every response against the same document.
.PHONY: test-openapi npm-deps
test-openapi: npm-deps
	cd tests/openapi && node validate.mjs ../../docs/openapi.json

# The npm packages the tests run, at the versions their package-lock.json files pin: the
# OpenAPI validator and the published HIBP client library (tests/e2e/test_hibp_client.py),
# the console's browser driver, and the SMTP server of the email alerts' test (tests/smtp).
npm-deps:
	cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error
	cd tests/hibp-client && npm ci --no-audit --no-fund --loglevel=error
	cd tests/console && npm ci --no-audit --no-fund --loglevel=error
	cd tests/smtp && npm ci --no-audit --no-fund --loglevel=error

# The web console (console/) in a real browser: Debian's chromium driven by playwright-core,
# axe-core's accessibility rules (both pinned in tests/console/package-lock.json), on a
# SQLite store and on a throwaway PostgreSQL cluster (tests/console/run.mjs). The SQLite run
# writes the screenshots of docs/console/.
.PHONY: test-console
test-console: all
	cd tests/console && npm ci --no-audit --no-fund --loglevel=error
	CONSOLE_SCREENSHOTS=1 node tests/console/run.mjs $(BUILD)
	scripts/pg-cluster.sh run sh -c 'BREACHD_STORE=pg node tests/console/run.mjs $(BUILD)'

# The unit tests that need a server (the store contract suites, test_*_contract, run their
# PostgreSQL half; test_pg_* run at all) and the e2e suite on a PostgreSQL store: a
# throwaway cluster of the tests' own (scripts/pg-cluster.sh), removed however the run ends.
PGUNITBIN := $(filter %_contract %/test_pg_store %/test_pg_copy %/test_pg_cards,$(UNITBIN))
test-pg: all $(UNITBIN)
	scripts/pg-cluster.sh run sh -c 'set -e; for t in $(PGUNITBIN); do echo "== $$t"; $$t; done; \
	  BREACHD_STORE=pg python3 tests/e2e/run.py --build $(BUILD)'

# Many instances on one corpus (tests/cluster): a throwaway primary and a streaming-
# replication hot standby of it (scripts/pg-cluster.sh run-standby), breachd instances on
# each; both clusters removed however the run ends.
.PHONY: test-cluster
test-cluster: all
	scripts/pg-cluster.sh run-standby python3 tests/cluster/run.py --build $(BUILD)

# The e2e suite on a Citus cluster (issue 37): a coordinator and two workers
# (scripts/citus-cluster.sh run; Citus built once from ../shared/citus into a cache), every
# test's database made on each node and laid out by `breachctl init`; then the readiness
# test against the cluster's own plans.
# The tests' tables have 8 shards each (4 per worker), not Citus's default of 32 that
# `make bench-citus` keeps: every layout, routing and fan-out path is the same with 8, and
# each of the suite's hundreds of stores is made, loaded and erased on a quarter of the
# shards (`breachctl init` 1.2 s -> 0.3 s on this machine).
CITUS_TEST_SHARDS ?= 8
.PHONY: test-citus
test-citus: all
	BREACHD_CITUS_SHARDS=$(CITUS_TEST_SHARDS) scripts/citus-cluster.sh run sh -c 'BREACHD_STORE=pg python3 tests/e2e/run.py --build $(BUILD) && \
	  BREACHD_BUILD=$(BUILD) python3 tests/cluster/test_citus_ready.py -v'

# BREACHD_INSTRUMENTED tells tests that memory growth is the tool's, not ours. Both stores:
# the unit and e2e suites on SQLite, then the PostgreSQL ones on a throwaway cluster, then
# the cluster tests (primary + standby).
# The three suites run side by side (scripts/run-together.sh): they mostly wait.
SANMAKE := BREACHD_INSTRUMENTED=1 $(MAKE) BUILD=build-asan SAN=1 CC=clang
test-sanitize:
	$(MAKE) BUILD=build-asan SAN=1 CC=clang -j2 build-tests
	scripts/run-together.sh asan-sqlite '$(SANMAKE) test' asan-pg '$(SANMAKE) test-pg' \
	  asan-cluster '$(SANMAKE) test-cluster'

# Fuzz targets: the library is rebuilt with coverage instrumentation in build-fuzz/.
FUZZSRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZBIN     := $(FUZZSRC:tests/fuzz/%.c=build-fuzz/%)
FUZZ_SECONDS ?= 600
FUZZ_QUICK  ?= 15
FUZZ_HTTP_QUICK ?= 30
FUZZ_HTTP_SECONDS ?= 300
FUZZFLAGS   := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1

# The library is brought up to date first every time (a phony step), so a change in src/
# relinks every target instead of leaving a stale one.
.PHONY: fuzz-lib
fuzz-lib:
	$(MAKE) BUILD=build-fuzz CC=clang CFLAGS="$(FUZZFLAGS)" build-fuzz/libbreachd.a

build-fuzz/%: tests/fuzz/%.c fuzz-lib
	clang $(REQ_CFLAGS) -fsanitize=fuzzer,address,undefined -g -O1 -o $@ $< \
	  build-fuzz/libbreachd.a $(LDLIBS)

# One run per target, so `make -j2 fuzz-quick` keeps both cores busy (scripts/test.sh does).
# A finding fails the target (the log's tail is shown either way; a pipe into tail would
# hide the fuzzer's exit status).
FUZZQUICKRUNS := $(FUZZBIN:build-fuzz/%=fuzz-quick-%)
.PHONY: fuzz-quick $(FUZZQUICKRUNS)
fuzz-quick: $(FUZZQUICKRUNS)
$(FUZZQUICKRUNS): fuzz-quick-%: build-fuzz/%
	@n=$*; mkdir -p build-fuzz/corpus/$$n; \
	  t=$(FUZZ_QUICK); [ $$n = fuzz_http ] && t=$(FUZZ_HTTP_QUICK); \
	  if build-fuzz/$$n -max_total_time=$$t -dict=tests/fuzz/$$n.dict -artifact_prefix=build-fuzz/ \
	    build-fuzz/corpus/$$n tests/fuzz/corpus/$$n > build-fuzz/$$n.log 2>&1; then \
	    echo "== $$n ($${t}s): $$(tail -n 1 build-fuzz/$$n.log)"; \
	  else tail -n 40 build-fuzz/$$n.log; echo "fuzz-quick: $$n found a problem"; exit 1; fi

# The server's whole request path (libmicrohttpd, guard, routing, handlers) on raw bytes.
fuzz-http: build-fuzz/fuzz_http
	mkdir -p build-fuzz/corpus/fuzz_http
	build-fuzz/fuzz_http -max_total_time=$(FUZZ_HTTP_SECONDS) -dict=tests/fuzz/fuzz_http.dict \
	  -artifact_prefix=build-fuzz/ build-fuzz/corpus/fuzz_http tests/fuzz/corpus/fuzz_http

fuzz: $(FUZZBIN)
	@set -e; for f in $(FUZZBIN); do n=$$(basename $$f); mkdir -p build-fuzz/corpus/$$n; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -dict=tests/fuzz/$$n.dict -artifact_prefix=build-fuzz/ \
	    build-fuzz/corpus/$$n tests/fuzz/corpus/$$n; done

check: test test-sanitize fuzz-quick

tsan:
	$(MAKE) BUILD=build-tsan SAN=thread CC=clang -j2 all
	$(MAKE) BUILD=build-tsan SAN=thread CC=clang unit
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" BREACHD_STRESS_SECONDS=15 BREACHD_INSTRUMENTED=1 \
	  python3 tests/e2e/run.py --build build-tsan test_robustness.py
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" BREACHD_INSTRUMENTED=1 \
	  python3 tests/e2e/run.py --build build-tsan test_import.py
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" BREACHD_INSTRUMENTED=1 \
	  python3 tests/e2e/run.py --build build-tsan test_watches.py

VALGRIND := valgrind --quiet --error-exitcode=99 --leak-check=full \
            --errors-for-leak-kinds=definite --show-leak-kinds=definite
valgrind: all
	BREACHD_INSTRUMENTED=1 BREACHD_WRAPPER="$(VALGRIND)" python3 tests/e2e/run.py --build $(BUILD) 'test_[crs]*.py'

# Benchmark (not part of test or check): corpus, timed import, wrk scenarios against
# build/breachd, the nginx ceiling and the idle-connection memory check; writes
# bench/RESULTS.md. See bench/README.md. Both also run the imports and scenarios on a
# PostgreSQL store (a throwaway cluster): bench-quick takes about six minutes, bench about
# ten plus the PostgreSQL imports (BENCH_ARGS=--no-pg skips that part).
# PostgreSQL alone executing one statement, the floor under the PostgreSQL targets
$(BUILD)/pg_floor: bench/pg_floor.c
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(shell pkg-config --libs libpq) -lpthread

# libmicrohttpd alone answering one fixed reply, the floor under the SQLite scenario-1 target
$(BUILD)/mhd_floor: bench/mhd_floor.c
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(shell pkg-config --libs libmicrohttpd) \
	  -lpthread

# SQLite alone answering scenario 1's lookup in a loop (bench/sqlite_floor.c)
$(BUILD)/sqlite_floor: bench/sqlite_floor.c
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(shell pkg-config --libs sqlite3)

# One connection, one request at a time, each timed (the one-connection runs of bench/run.py)
$(BUILD)/one_conn: bench/one_conn.c
	@mkdir -p $(dir $@)
	$(CC) $(REQ_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

bench: all $(BUILD)/pg_floor $(BUILD)/one_conn
	bench/install-bench-deps.sh
	python3 bench/run.py --label full --records 1000000 --cards 1000000 \
	  --duration 20 --warmup 5 --ratio-runs 3 --build $(BUILD) $(BENCH_ARGS)

# Scenario 1 beside nginx and libmicrohttpd alone (bench/mhd_floor.py), on the store of a
# kept bench run: make bench-mhd-floor WORKDIR=/tmp/dir (bench/run.py --workdir /tmp/dir)
bench-mhd-floor: all $(BUILD)/mhd_floor
	bench/install-bench-deps.sh
	python3 bench/mhd_floor.py --workdir $(WORKDIR) --build $(BUILD) $(BENCH_ARGS)

bench-quick: all $(BUILD)/pg_floor $(BUILD)/one_conn
	bench/install-bench-deps.sh
	python3 bench/run.py --label quick --records 50000 --cards 50000 \
	  --duration 6 --warmup 2 --ratio-runs 3 --build $(BUILD) $(BENCH_ARGS)

# The growth targets: at 10M records and 10M cards against the full run's figures in
# RESULTS.md, scenarios 1 and 4 at 64 connections and every scenario's one-connection p50
# and p99 (issue 31), on SQLite and on PostgreSQL. About 45 minutes and 60 GB in /tmp; both
# stores are built with import --bulk only (a plain import of 10M lines takes hours). The
# generated corpus (~7 minutes, 9 GB) is kept for the next run.
bench-growth: all $(BUILD)/one_conn
	bench/install-bench-deps.sh
	python3 bench/run.py --label growth --records 10000000 --cards 10000000 \
	  --duration 20 --warmup 5 --ratio-runs 3 --bulk-only --compare-with full \
	  --corpus /tmp/breachd-bench-corpus-10m --build $(BUILD)

# Issue 15: scenario 1 on a PostgreSQL primary with a hot standby: one breachd, one with
# --shared-limits, and one or two (primary + standby) behind nginx, alternating; writes the
# cluster section of bench/RESULTS.md. About 6 minutes.
bench-cluster: all $(BUILD)/one_conn
	bench/install-bench-deps.sh
	python3 bench/cluster.py --records 1000000 --cards 1000 --duration 10 --warmup 3 \
	  --ratio-runs 3 --build $(BUILD) $(BENCH_ARGS)

# Issue 37: scenarios 1-5 against breachd on a Citus coordinator with two workers
# (scripts/citus-cluster.sh, Citus built once into its cache) beside breachd on one
# PostgreSQL server, CITUS_N records and CITUS_N cards imported into each, the stores
# alternating each round; rows and bytes per shard and the shards each request touches.
# Writes the citus section of bench/RESULTS.md. About 12 minutes at the default size.
CITUS_N ?= 200000
bench-citus: all $(BUILD)/one_conn
	bench/install-bench-deps.sh
	python3 bench/citus.py --records $(CITUS_N) --cards $(CITUS_N) --duration 10 --warmup 2 \
	  --rounds 3 --build $(BUILD) $(BENCH_ARGS)

# Bytes per record and per card in a PostgreSQL store of SIZE_N of each (docs/SCALING.md's
# capacity plan): about 2 minutes at 1M, 25 at 10M.
SIZE_N ?= 1000000
.PHONY: bench-size
bench-size: all
	scripts/pg-cluster.sh run python3 bench/store_size.py --n $(SIZE_N) --build $(BUILD)

# Issue 16: Pwned Passwords ranges (bench/ranges.py). A generated sorted download of
# RANGES_N SHA-1 hashes whose buckets are as full as RANGES_DENSITY hashes would make them
# (so sizes at 100M are measured without a 100M load), loaded into SQLite (timed; bytes per
# hash), then GET /range/ against nginx serving the median answer, alternating, and one
# connection's latency: about 2 minutes (the download, 440 MB in /tmp, is kept for reuse).
# bench-ranges-pg loads a download at HIBP's density (4,096 prefixes filled with 900
# hashes each: RANGES_PG_N hashes as full as RANGES_PG_DENSITY would make them) into a
# throwaway PostgreSQL cluster, serves /range/ from the store and then from the local
# snapshot (--range-snapshot-dir), each against nginx serving the median answer, and
# measures PostgreSQL alone executing the range statement (bench/pg_floor.c) beside the
# first: about 6 minutes.
RANGES_N ?= 10000000
RANGES_DENSITY ?= 100000000
RANGES_PG_N ?= 3686400
RANGES_PG_DENSITY ?= 943718400
.PHONY: bench-ranges bench-ranges-pg
bench-ranges: all
	bench/install-bench-deps.sh
	python3 bench/ranges.py --hashes $(RANGES_N) --density-of $(RANGES_DENSITY) --build $(BUILD)

bench-ranges-pg: all $(BUILD)/pg_floor
	bench/install-bench-deps.sh
	scripts/pg-cluster.sh run sh -c 'python3 bench/ranges.py --hashes $(RANGES_PG_N) \
	  --density-of $(RANGES_PG_DENSITY) --build $(BUILD) --no-sqlite --pg-http --pg-snapshot \
	  --pg-vacuum --pg-uri "$$BREACHD_PG_URI"'

# Watches: import commit to webhook received, 1,000 watches and an import of 1M records on a
# SQLite store (bench/watch_latency.py); writes the watch section of bench/RESULTS.md.
WATCH_RECORDS ?= 1000000
WATCH_COUNT ?= 1000
.PHONY: bench-watch
bench-watch: all
	python3 bench/watch_latency.py --records $(WATCH_RECORDS) --watches $(WATCH_COUNT) \
	  --build $(BUILD) --results bench/RESULTS.md

# Issue 18: import speed (1M records, 1M cards) beside what reading and parsing alone and
# SQLite alone (inserting rows that are already prepared) take on this machine; writes the
# import-1000000 section of bench/RESULTS.md. About 5 minutes (corpus generated once into
# /tmp). bench-import-10m: the same at 10M records (about 15 minutes; cards: KINDS=records,cards).
.PHONY: bench-import bench-import-10m
KINDS ?= records
bench-import: all
	python3 bench/import_limits.py --records 1000000 --cards 1000000 --build $(BUILD) \
	  --results bench/RESULTS.md
bench-import-10m: all
	python3 bench/import_limits.py --records 10000000 --cards 10000000 --kinds $(KINDS) \
	  --build $(BUILD) --results bench/RESULTS.md

# The same on PostgreSQL (issue 32): import --bulk of 1M records and 1M cards into a throwaway
# cluster beside PostgreSQL alone rebuilding the tables it wrote, 3 rounds (about 6 minutes).
.PHONY: bench-import-pg
bench-import-pg: all
	python3 bench/import_pg.py --records 1000000 --cards 1000000 --build $(BUILD) \
	  --results bench/RESULTS.md

# What other records layouts would buy: SQLite's own floor for the current schema, integer
# keys, and one lookup table (bench/import_variants.py; about 5 minutes).
.PHONY: bench-import-variants
bench-import-variants: all
	python3 bench/import_variants.py --build $(BUILD) --results bench/RESULTS.md

# The same on a PostgreSQL store, a throwaway cluster (the watch-pg section).
.PHONY: bench-watch-pg
bench-watch-pg: all
	scripts/pg-cluster.sh run sh -c 'python3 bench/watch_latency.py --records $(WATCH_RECORDS) \
	  --watches $(WATCH_COUNT) --build $(BUILD) --results bench/RESULTS.md --pg-uri "$$BREACHD_PG_URI"'

# Bulk jobs: N breach-search requests for N emails over one keep-alive connection against
# one job of the same emails (submit to done), median of JOBS_RUNS, on a store of
# JOBS_RECORDS records (bench/jobs_bench.py; target: the job 20 times faster). About 3
# minutes at 1M; the corpus is kept in /tmp/breachd-bench-corpus-jobs for the next run.
# bench-jobs-pg runs the same against a throwaway PostgreSQL cluster.
JOBS_RECORDS ?= 1000000
JOBS_EMAILS ?= 100000
JOBS_RUNS ?= 3
.PHONY: bench-jobs bench-jobs-pg
bench-jobs: all
	python3 bench/jobs_bench.py --records $(JOBS_RECORDS) --emails $(JOBS_EMAILS) \
	  --runs $(JOBS_RUNS) --build $(BUILD) --corpus /tmp/breachd-bench-corpus-jobs

bench-jobs-pg: all
	scripts/pg-cluster.sh run sh -c 'python3 bench/jobs_bench.py --records $(JOBS_RECORDS) \
	  --emails $(JOBS_EMAILS) --runs $(JOBS_RUNS) --build $(BUILD) \
	  --corpus /tmp/breachd-bench-corpus-jobs --store-uri "$$BREACHD_PG_URI" --label postgresql'

# A/B (issue 14: a refactor must cost SQLite nothing measurable): scenarios 1, 4 and 5 served
# by the breachd of BASE (any git revision, built in a temporary worktree that is removed
# afterwards) and by this tree's $(BUILD)/breachd, alternating, on one store imported once by
# this tree's breachctl; writes the ab (or ab-quick) section of bench/RESULTS.md. The
# baseline is built with this make's CC and CFLAGS (its own make, so that make -n stays dry).
#   make bench-ab BASE=<rev>         1M + 1M, 20 s runs, 3 rounds: about 11 minutes
#   make bench-ab-quick BASE=<rev>   50k + 50k, 6 s runs: about 3 minutes
# BENCH_ARGS adds bench/run.py flags (later ones win), e.g. BENCH_ARGS='--results /tmp/r.md'.
.PHONY: bench-ab bench-ab-quick
ifneq ($(filter bench-ab bench-ab-quick,$(MAKECMDGOALS)),)
ifeq ($(strip $(BASE)),)
$(error BASE is missing: make $(filter bench-ab bench-ab-quick,$(MAKECMDGOALS)) BASE=<git rev> (the baseline, e.g. BASE=HEAD~1 or BASE=main))
endif
endif

# $(call bench_ab,label,records,cards,duration,warmup)
bench_ab = set -e; \
	rev=$$(git rev-parse --verify --short=12 '$(BASE)^{commit}'); \
	dir=/tmp/breachd-bench-base-$$rev; \
	git worktree remove --force "$$dir" 2>/dev/null || rm -rf "$$dir"; \
	git worktree prune; \
	trap 'git worktree remove --force "$$dir"' EXIT; \
	git worktree add --detach "$$dir" "$$rev"; \
	MAKEFLAGS= $(MAKE) -C "$$dir" -j$$(nproc) BUILD=build CC='$(CC)' CFLAGS='$(CFLAGS)' all; \
	python3 bench/run.py --label $(1) --records $(2) --cards $(3) \
	  --duration $(4) --warmup $(5) --ratio-runs 3 --baseline-build "$$dir/build" \
	  --baseline-label "$(BASE) ($$rev)" --build $(BUILD) $(BENCH_ARGS)

bench-ab: all $(BUILD)/one_conn
	bench/install-bench-deps.sh
	@$(call bench_ab,ab,1000000,1000000,20,5)

bench-ab-quick: all $(BUILD)/one_conn
	bench/install-bench-deps.sh
	@$(call bench_ab,ab-quick,50000,50000,6,2)

format:
	clang-format -i $$(find src tests -name '*.[ch]')

clean:
	rm -rf build build-asan build-fuzz build-tsan build-clang

-include $(DEPS)
