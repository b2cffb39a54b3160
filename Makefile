# twinlab — one non-recursive Makefile.
#
#   make                 build build/bin/twinlab
#   make check           build and run the Criterion tests
#   make bench           build and run the benchmarks (tests/bench/)
#   make install         binary, man pages, bash completion (PREFIX, DESTDIR)
#   make V=1             show the commands
#   make SANITIZE=address,undefined   build with sanitizers (own build dir)
#   make DEVELOPER=1     warnings are errors

CC ?= cc
PKG_CONFIG ?= pkg-config
O ?= build

ifneq ($(SANITIZE),)
O := $(O)-san
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# pkg-config module -> Debian package that provides it
pkg_yaml-0.1 := libyaml-dev
pkg_json-c := libjson-c-dev
pkg_criterion := libcriterion-dev
pkg_libmnl := libmnl-dev
pkg_libnetfilter_queue := libnetfilter-queue-dev
pkg_libcgroup := libcgroup-dev
pkg_sqlite3 := libsqlite3-dev
pkg_libmicrohttpd := libmicrohttpd-dev

# $(call need,module): fail with the Debian package name when missing
need = $(if $(shell $(PKG_CONFIG) --exists $(1) && echo y),,$(error \
	pkg-config cannot find '$(1)': install the Debian package '$(pkg_$(1))'))

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wno-missing-field-initializers
ifeq ($(DEVELOPER),1)
WARN += -Werror
endif
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE $(WARN) $(CFLAGS) -MMD -MP -I.
# Symbols bound when the harness starts, not in each forked worker:
# every worker would otherwise resolve the same library calls again.
ALL_LDFLAGS := -Wl,-z,now -Wl,-z,relro $(LDFLAGS)
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

cflags_of = $(shell $(PKG_CONFIG) --cflags $(1))
libs_of = $(shell $(PKG_CONFIG) --libs $(1))

# GLPK (the opt scheduler's solver) and METIS (the split over hosts) ship
# no pkg-config file: their headers are looked for directly.
have_glpk = $(shell printf '\043include <glpk.h>\n' | \
	$(CC) -E -x c - >/dev/null 2>&1 && echo y)
have_metis = $(shell printf '\043include <metis.h>\n' | \
	$(CC) -E -x c - >/dev/null 2>&1 && echo y)
# What the twin library needs at link time.
TWIN_LIBS = $(call libs_of,yaml-0.1) -lglpk -lmetis -lm

EMU_PKGS := libmnl libnetfilter_queue libcgroup sqlite3

TWIN_SRC := $(wildcard twin/*.c)
EMU_SRC := $(wildcard emu/*.c)
TOOLS_SRC := $(wildcard tools/*.c tools/*/*.c)
TEST_SRC := $(wildcard tests/twin/*.c tests/tools/*.c) tests/lib/tlrun.c \
	tests/lib/ring.c
EMU_TEST_SRC := $(wildcard tests/emu/*.c)
EMU_TEST_LIB := tests/lib/nettest.c tests/lib/tlrun.c tests/lib/clabdep.c
BENCH_SRC := $(wildcard tests/bench/*.c)

TWIN_OBJ := $(TWIN_SRC:%.c=$(O)/%.o)
EMU_OBJ := $(EMU_SRC:%.c=$(O)/%.o)
EMU_TEST_OBJ := $(EMU_TEST_SRC:%.c=$(O)/%.o) $(EMU_TEST_LIB:%.c=$(O)/%.o)
TOOLS_OBJ := $(TOOLS_SRC:%.c=$(O)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(O)/%.o)

TWIN_LIB := $(O)/libtwin.a
EMU_LIB := $(O)/libemu.a
EMU_TESTS := $(O)/tests/emu-tests
TWINLAB := $(O)/bin/twinlab
TWIN_TESTS := $(O)/tests/twin-tests
BENCH_SCHED := $(O)/tests/bench-sched

.PHONY: all check bench clean deps demo
all: $(TWINLAB)

deps:
	$(call need,yaml-0.1)
	$(call need,json-c)
	$(call need,libmnl)
	$(call need,libnetfilter_queue)
	$(call need,libcgroup)
	$(call need,sqlite3)
	$(call need,libmicrohttpd)
	$(if $(have_glpk),,$(error glpk.h not found: install the Debian \
		package 'libglpk-dev'))
	$(if $(have_metis),,$(error metis.h not found: install the Debian \
		package 'libmetis-dev'))

# Learning's arithmetic (twin/fl_model.c) and its data's normals
# (twin/fl_rng.c) are the same bits on every machine: no multiply-add
# fused, whatever the compiler's default; and GCC vectorises their loops
# whatever their trip count (its -O2 model takes only loops that need no
# remainder): SGD 4.5 times as fast here, the normals twice. A square
# root sets no errno there (so it is one instruction, in a vector).
FL_FAST := $(O)/twin/fl_model.o $(O)/twin/fl_rng.o
$(FL_FAST): ALL_CFLAGS += -ffp-contract=off
$(O)/twin/fl_rng.o: ALL_CFLAGS += -fno-math-errno
ifneq ($(shell $(CC) -v 2>&1 | grep -c '^gcc version'),0)
$(FL_FAST): ALL_CFLAGS += -fvect-cost-model=dynamic
endif

$(O)/twin/%.o: twin/%.c | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(call cflags_of,yaml-0.1) -c -o $@ $<

$(O)/emu/%.o: emu/%.c | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(call cflags_of,$(EMU_PKGS)) -c -o $@ $<

$(O)/tools/%.o: tools/%.c | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(call cflags_of,json-c libmicrohttpd) -c -o $@ $<

$(O)/tests/%.o: tests/%.c | deps
	@mkdir -p $(@D)
	$(call need,criterion)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(call cflags_of,criterion json-c) -c -o $@ $<

$(TWIN_LIB): $(TWIN_OBJ)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(EMU_LIB): $(EMU_OBJ)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The version 'twinlab --version' prints: git's description of the
# checkout (tag, commits since, commit; '-dirty' with changes), else
# VERSION as given. The header is rewritten only when it changes.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || \
	echo unknown)
.PHONY: FORCE
$(O)/version.h: FORCE
	@mkdir -p $(@D)
	@v='#define TWINLAB_VERSION "$(VERSION)"'; \
	[ -f $@ ] && [ "$$(cat $@)" = "$$v" ] || echo "$$v" > $@
$(O)/tools/twinlab.o: $(O)/version.h
$(O)/tools/twinlab.o: ALL_CFLAGS += -I$(O)

$(TWINLAB): $(TOOLS_OBJ) $(EMU_LIB) $(TWIN_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call libs_of,json-c libmicrohttpd $(EMU_PKGS)) $(TWIN_LIBS) -lpthread

# the pure parts of tools/ that unit tests call
TOOLS_UNIT_OBJ := $(O)/tools/view/route.o $(O)/tools/clab.o
$(TWIN_TESTS): $(TEST_OBJ) $(TOOLS_UNIT_OBJ) $(EMU_LIB) $(TWIN_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call libs_of,json-c criterion $(EMU_PKGS)) $(TWIN_LIBS) -lpthread

$(EMU_TESTS): $(EMU_TEST_OBJ) $(EMU_LIB) $(TWIN_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call libs_of,json-c criterion $(EMU_PKGS)) $(TWIN_LIBS) -lpthread

$(BENCH_SCHED): $(BENCH_OBJ) $(TWIN_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(TWIN_LIBS)

# The tests find scenarios and the twinlab binary relative to the top.
# Emulation tests need root and run one at a time (they time the kernel);
# without root they are skipped with a notice.
check: $(TWINLAB) $(TWIN_TESTS) $(if $(EMU_TEST_SRC),$(EMU_TESTS))
	TWINLAB=$(abspath $(TWINLAB)) $(TWIN_TESTS) --jobs 2
	@$(MAKE) --no-print-directory install-check
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory fuzz-smoke; \
	else \
		echo "check: fuzzing skipped: $(FUZZ_CC) is not installed"; \
	fi
ifneq ($(EMU_TEST_SRC),)
	@if [ "$$(id -u)" -eq 0 ]; then \
		TWINLAB=$(abspath $(TWINLAB)) $(EMU_TESTS) --jobs 1; \
	else \
		echo "check: emulation tests skipped: they need root"; \
	fi
endif

# ---- install ---------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=]   binary, man pages, bash
#   make uninstall                                completion; and removes them
# The man pages are made by help2man from each command's --help
# (tools/dist/man.sh), so they say what the binary says.
PREFIX ?= /usr/local
MAN_DIR := $(O)/man
VIEW_SHARE = $(DESTDIR)$(PREFIX)/share/twinlab/view
VIEW_LIB := tools/view/node_modules/cytoscape/dist/cytoscape.min.js
INSTALLED = $(DESTDIR)$(PREFIX)/bin/twinlab \
	$(DESTDIR)$(PREFIX)/share/man/man1/twinlab.1 \
	$(DESTDIR)$(PREFIX)/share/man/man1/twinlab-*.1 \
	$(DESTDIR)$(PREFIX)/share/bash-completion/completions/twinlab \
	$(VIEW_SHARE)/page/index.html $(VIEW_SHARE)/page/view.js \
	$(VIEW_SHARE)/page/view.css $(VIEW_SHARE)/$(VIEW_LIB:tools/view/%=%)

$(MAN_DIR)/twinlab.1: $(TWINLAB) tools/dist/man.sh
	@$(if $(Q),echo "  MAN     $(MAN_DIR)")
	$(Q)rm -rf $(MAN_DIR) && bash tools/dist/man.sh $(TWINLAB) $(MAN_DIR)

.PHONY: man install uninstall install-check
man: $(MAN_DIR)/twinlab.1

install: $(TWINLAB) man
	install -D -m 0755 $(TWINLAB) $(DESTDIR)$(PREFIX)/bin/twinlab
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 $(MAN_DIR)/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -D -m 0644 tools/dist/completion.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/twinlab
	install -d $(VIEW_SHARE)/page
	install -m 0644 tools/view/page/index.html tools/view/page/view.js \
		tools/view/page/view.css $(VIEW_SHARE)/page/
	@if [ -f $(VIEW_LIB) ]; then \
		install -D -m 0644 $(VIEW_LIB) \
			$(VIEW_SHARE)/$(VIEW_LIB:tools/view/%=%); \
	else echo "install: $(VIEW_LIB) is not installed (npm ci --prefix" \
		"tools/view): the view will list loads only"; fi

uninstall:
	rm -f $(INSTALLED)
	@rmdir -p $(VIEW_SHARE)/page \
		$(dir $(VIEW_SHARE)/$(VIEW_LIB:tools/view/%=%)) 2>/dev/null || :

# Installed into a scratch DESTDIR: it runs, every command has its page,
# the completion parses; uninstalled: no file is left.
install-check: $(TWINLAB)
	$(Q)rm -rf $(O)/install-test
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(abspath $(O))/install-test PREFIX=/usr >/dev/null
	$(Q)d=$(O)/install-test/usr; $$d/bin/twinlab --version >/dev/null && \
	for c in $$($$d/bin/twinlab help | awk '/^  [a-z]/ { print $$1 }'); do \
		[ $$c = help ] || [ $$c = version ] || \
		grep -q '^\.SH NAME' $$d/share/man/man1/twinlab-$$c.1 || \
		{ echo "install-check: no man page for $$c"; exit 1; }; \
	done && \
	bash -n $$d/share/bash-completion/completions/twinlab && \
	$(MAKE) --no-print-directory uninstall DESTDIR=$(abspath $(O))/install-test PREFIX=/usr >/dev/null && \
	left=$$(find $(O)/install-test -type f) && \
	{ [ -z "$$left" ] || { echo "install-check: uninstall left $$left"; exit 1; }; } && \
	rm -rf $(O)/install-test && echo "install-check: install and uninstall ok"

bench: $(BENCH_SCHED)
	$(BENCH_SCHED)

# opt, mst, kmb and tm on random instances of SteinLib's set B shapes
# (tests/bench/steinlib.py; STEINER_SEEDS draws of the 18): opt's time,
# each heuristic's gap to it. No root.
STEINER_SEEDS ?= 2
.PHONY: bench-steiner
bench-steiner: $(TWINLAB)
	python3 tests/bench/steinlib.py bench $(TWINLAB) $(STEINER_SEEDS)
bench: bench-steiner

# What following an events file costs the twin (tests/bench/events.py):
# 10,000 events, a burst of flows, a staggered load under auto. No root.
.PHONY: bench-events
bench-events: $(TWINLAB)
	python3 tests/bench/events.py $(TWINLAB)
bench: bench-events

# Export as containerlab files (tests/bench/export.py): a 2,001-namespace
# network over 1, 4 and 16 hosts, beside planning it. No root.
.PHONY: bench-export
bench-export: $(TWINLAB)
	python3 tests/bench/export.py $(TWINLAB)
bench: bench-export

# A run split over 2 and 4 hosts (built here, as export splits it) against
# the same run on one host (tests/bench/split.py; root): NSFNET and
# Nobel-Germany, per-task rounds, bytes per link, verdicts.
.PHONY: bench-split bench-split-if-root
bench-split: $(TWINLAB)
	python3 tests/bench/split.py $(TWINLAB)
bench: bench-split-if-root
bench-split-if-root: $(TWINLAB)
	@if [ "$$(id -u)" -eq 0 ]; then python3 tests/bench/split.py $(TWINLAB); \
	else echo "bench: split benchmark skipped: it needs root"; fi

# What the host distorts at each dilation against the monitor's verdict:
# the demo's largest point at N 16-128 against two runs at 256
# (tests/bench/calibrate.py; CALIBRATE_ARGS="--experiment FILE --ns ...").
.PHONY: bench-calibrate bench-calibrate-if-root
bench-calibrate: $(TWINLAB)
	python3 tests/bench/calibrate.py $(TWINLAB) $(CALIBRATE_ARGS)
bench: bench-calibrate-if-root
bench-calibrate-if-root: $(TWINLAB)
	@if [ "$$(id -u)" -eq 0 ]; then \
		python3 tests/bench/calibrate.py $(TWINLAB) $(CALIBRATE_ARGS); \
	else echo "bench: calibration benchmark skipped: it needs root"; fi

# Where a sweep's wall time goes (tests/bench/speed.py; root): the demo's
# sweep SPEED_REPS times, each attempt's host time split into build,
# workers, rounds and teardown, against a baseline binary when given:
#   make bench-speed SPEED_ARGS='--baseline OLD/twinlab --busy'
SPEED_REPS ?= 3
.PHONY: bench-speed bench-speed-if-root
bench-speed: $(TWINLAB)
	python3 tests/bench/speed.py $(TWINLAB) --reps $(SPEED_REPS) $(SPEED_ARGS)
bench: bench-speed-if-root
bench-speed-if-root: $(TWINLAB)
	@if [ "$$(id -u)" -eq 0 ]; then \
		python3 tests/bench/speed.py $(TWINLAB) --reps $(SPEED_REPS) \
			$(SPEED_ARGS); \
	else echo "bench: speed benchmark skipped: it needs root"; fi

# Where the host's CPU goes while a round runs (tests/bench/cpusplit.py;
# root and perf): the demo's 15-local points at dilation CPU_N, CPU_REPS
# times each under `perf record -a`, in CPU-seconds per scenario-second:
# the packets' own work (the limit), the workers', the harness's, and
# everything busy against the packets:
#   make bench-cpu CPU_ARGS='--experiment scenarios/experiments/nsfnet-fig3.yaml'
CPU_N ?= 128
CPU_REPS ?= 3
.PHONY: bench-cpu bench-cpu-if-root
bench-cpu: $(TWINLAB)
	python3 tests/bench/cpusplit.py $(TWINLAB) --dilation $(CPU_N) \
		--reps $(CPU_REPS) $(CPU_ARGS)
bench: bench-cpu-if-root
bench-cpu-if-root: $(TWINLAB)
	@if [ "$$(id -u)" -ne 0 ]; then \
		echo "bench: CPU split skipped: it needs root"; \
	elif ! command -v perf >/dev/null 2>&1; then \
		echo "bench: CPU split skipped: perf is not installed"; \
	else python3 tests/bench/cpusplit.py $(TWINLAB) --dilation $(CPU_N) \
		--reps $(CPU_REPS) $(CPU_ARGS); fi

# A run on a deployment of parts (NSFNET exported for 2 hosts, each node
# built by its own `up --node`, deployed as containerlab would with
# namespaces for containers) against the same network built whole, at
# dilation N (TWINLAB_DEPLOYED_N, default 128); root. Per task and per
# link: "ratios: median, p95, worst"; the test's assertions are the
# targets.
TWINLAB_DEPLOYED_N ?= 128
.PHONY: bench-deployed bench-deployed-if-root
bench-deployed: $(TWINLAB) $(EMU_TESTS)
	TWINLAB_DEPLOYED="scenarios/nsfnet.yaml $(TWINLAB_DEPLOYED_N) 1" \
	TWINLAB=$(abspath $(TWINLAB)) $(EMU_TESTS) --filter 'deployed/*' \
		--verbose 2>&1 | awk '/ratios|host time|PASS|FAIL/ { print } \
		/Assertion Failed/ { n = 3 } n-- > 0 && NF > 2 { print }'
bench: bench-deployed-if-root
bench-deployed-if-root: $(TWINLAB) $(EMU_TESTS)
	@if [ "$$(id -u)" -eq 0 ]; then $(MAKE) --no-print-directory \
		bench-deployed; \
	else echo "bench: deployed benchmark skipped: it needs root"; fi

# Kill points (root): up, run and experiment killed at 60 seeded moments
# (TWINLAB_CHAOS_POINTS, TWINLAB_CHAOS_SEED); `make check` tries 12.
.PHONY: chaos
chaos: $(TWINLAB) $(EMU_TESTS)
	TWINLAB=$(abspath $(TWINLAB)) \
	TWINLAB_CHAOS_POINTS=$${TWINLAB_CHAOS_POINTS:-60} \
		$(EMU_TESTS) --filter 'chaos/*' --verbose

# The delay line alone: throughput and RTT error at 1, 5, 20 and 50 ms (root).
BENCH_DL := $(O)/tests/bench-delayline
$(BENCH_DL): $(O)/tests/bench/delayline/bench_delayline.o \
		$(O)/tests/lib/nettest.o $(EMU_LIB) $(TWIN_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call libs_of,$(EMU_PKGS)) \
		$(TWIN_LIBS) -lpthread
.PHONY: bench-delayline
bench-delayline: $(BENCH_DL)
	$(BENCH_DL)
bench: bench-delayline-if-root
.PHONY: bench-delayline-if-root
bench-delayline-if-root: $(BENCH_DL)
	@if [ "$$(id -u)" -eq 0 ]; then $(BENCH_DL); \
	else echo "bench: delay-line benchmark skipped: it needs root"; fi

# Fidelity (root): the demo's sweep with --dilation auto; per point the
# dilation found faithful, the attempts, CPU per worker and round, and the
# measured / predicted figures. Another experiment: FIDELITY_EXP=file.
BENCH_FID := $(O)/tests/bench-fidelity
FIDELITY_EXP ?= scenarios/experiments/poster-quick.yaml
$(BENCH_FID): $(O)/tests/bench/fidelity/bench_fidelity.o \
		$(O)/tests/lib/nettest.o $(EMU_LIB) $(TWIN_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call libs_of,sqlite3 $(EMU_PKGS)) \
		$(TWIN_LIBS) -lpthread
.PHONY: bench-fidelity bench-fidelity-if-root
bench-fidelity: $(TWINLAB) $(BENCH_FID)
	$(BENCH_FID) $(abspath $(TWINLAB)) $(FIDELITY_EXP)
bench: bench-fidelity-if-root
bench-fidelity-if-root: $(TWINLAB) $(BENCH_FID)
	@if [ "$$(id -u)" -eq 0 ]; then \
		$(BENCH_FID) $(abspath $(TWINLAB)) $(FIDELITY_EXP); \
	else echo "bench: fidelity benchmark skipped: it needs root"; fi

# The default demo: both schedulers' plans of the poster-like testbed
# (JSON, Graphviz) and, as root, a quick version of the poster's sweep on
# the emulation with its report (figures and report.md), under results/demo/.
DEMO_SCENARIO ?= scenarios/poster-testbed.yaml
DEMO_EXPERIMENT ?= scenarios/experiments/poster-quick.yaml
DEMO_DIR ?= results/demo
# the sweep's live view: its address is printed as the sweep starts
# (DEMO_VIEW= runs the demo without it)
DEMO_VIEW ?= --view
demo: $(TWINLAB)
	@mkdir -p $(DEMO_DIR)
	@for s in spff mst; do \
		echo "== plan: $$s"; \
		$(TWINLAB) plan $(DEMO_SCENARIO) --scheduler $$s \
			--dot $(DEMO_DIR)/$$s.dot \
			--json-file $(DEMO_DIR)/$$s.json \
			> $(DEMO_DIR)/$$s.txt || exit 1; \
		head -n 3 $(DEMO_DIR)/$$s.txt; \
		dot -Tsvg -o $(DEMO_DIR)/$$s.svg $(DEMO_DIR)/$$s.dot || \
			echo "demo: warning: Graphviz could not draw $$s.dot"; \
	done
	@if [ "$$(id -u)" -ne 0 ]; then \
		echo "demo: the sweep on the emulation needs root; plans only"; \
	else \
		echo "== sweep on the emulation: $(DEMO_EXPERIMENT)"; \
		rm -rf $(DEMO_DIR)/demo.db $(DEMO_DIR)/demo.db-* \
			$(DEMO_DIR)/demo.db.scenarios $(DEMO_DIR)/demo.db.log; \
		$(TWINLAB) experiment $(DEMO_EXPERIMENT) \
			--db $(DEMO_DIR)/demo.db $(DEMO_VIEW) || exit 1; \
		$(TWINLAB) report $(DEMO_DIR)/demo.db \
			--out $(DEMO_DIR)/report || exit 1; \
	fi
	@echo "plans and pictures: $(abspath $(DEMO_DIR))/{spff,mst}.{txt,json,dot,svg}"

clean:
	rm -rf build build-san

-include $(shell find $(O) -name '*.d' 2>/dev/null)

# libFuzzer harnesses, built with clang straight from the sources (tests/
# fuzz/): the scenario loader, the experiment file, the state file `down` and `clean` act on,
# the numbers a user writes, and a worker's link. `make fuzz [FUZZ_SECONDS=60]` runs each;
# `make fuzz-smoke` runs each briefly (CI, when clang is installed). New
# inputs go to $(FUZZ_DIR)/<name>/corpus, crashes to $(FUZZ_DIR)/crash-*.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_DIR := $(O)/fuzz
FUZZ_NAMES := scenario experiment state args timeline view link
FUZZ_BINS := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz-%)
FUZZ_CFLAGS := -std=c17 -D_GNU_SOURCE $(WARN) -g -O1 -I. \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
# what each harness is built from, and its seeds
FUZZ_SRC_scenario := $(TWIN_SRC)
FUZZ_SRC_experiment := $(TWIN_SRC)
FUZZ_SRC_state := emu/labstate.c $(TWIN_SRC)
FUZZ_SRC_args := tools/args.c
FUZZ_SRC_timeline := $(TWIN_SRC)
FUZZ_SRC_view := tools/view/route.c
FUZZ_SRC_link := emu/remote.c emu/spawn.c emu/worker.c emu/wkkeep.c emu/xfer.c \
	emu/wksock.c emu/traingate.c emu/fleet_check.c $(TWIN_SRC)
FUZZ_SEEDS_scenario := scenarios/*.yaml tests/fuzz/scenario/*
FUZZ_SEEDS_experiment := scenarios/experiments/*.yaml
FUZZ_SEEDS_state := tests/fuzz/state/*
FUZZ_SEEDS_args := tests/fuzz/args/*
FUZZ_SEEDS_timeline := tests/fuzz/timeline/*
FUZZ_SEEDS_view := tests/fuzz/view/*
FUZZ_SEEDS_link := tests/fuzz/link/*

$(FUZZ_DIR)/fuzz-%: tests/fuzz/fuzz_%.c $(TWIN_SRC) emu/labstate.c \
		tools/args.c tools/view/route.c $(FUZZ_SRC_link) $(wildcard twin/*.h emu/*.h tools/*.h tools/*/*.h)
	@mkdir -p $(@D)
	$(call need,yaml-0.1)
	@$(if $(Q),echo "  FUZZCC  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(call cflags_of,yaml-0.1) -o $@ \
		$< $(FUZZ_SRC_$*) $(TWIN_LIBS)

.PHONY: fuzz fuzz-smoke
fuzz: $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do \
		mkdir -p $(FUZZ_DIR)/$$n/corpus $(FUZZ_DIR)/$$n/seed; \
	done
	cp $(FUZZ_SEEDS_scenario) $(FUZZ_DIR)/scenario/seed/
	cp $(FUZZ_SEEDS_experiment) $(FUZZ_DIR)/experiment/seed/
	cp $(FUZZ_SEEDS_state) $(FUZZ_DIR)/state/seed/
	cp $(FUZZ_SEEDS_args) $(FUZZ_DIR)/args/seed/
	cp $(FUZZ_SEEDS_timeline) $(FUZZ_DIR)/timeline/seed/
	cp $(FUZZ_SEEDS_view) $(FUZZ_DIR)/view/seed/
	cp $(FUZZ_SEEDS_link) $(FUZZ_DIR)/link/seed/
	@set -e; for n in $(FUZZ_NAMES); do \
		echo "== fuzz-$$n, $(FUZZ_SECONDS) s"; \
		$(FUZZ_DIR)/fuzz-$$n -max_total_time=$(FUZZ_SECONDS) \
			-timeout=1 -rss_limit_mb=1024 \
			-artifact_prefix=$(FUZZ_DIR)/ \
			$(FUZZ_DIR)/$$n/corpus $(FUZZ_DIR)/$$n/seed; \
	done

fuzz-smoke: $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do \
		rm -rf $(FUZZ_DIR)/$$n/smoke; mkdir -p $(FUZZ_DIR)/$$n/smoke; \
	done
	@cp $(FUZZ_SEEDS_scenario) $(FUZZ_DIR)/scenario/smoke/
	@cp $(FUZZ_SEEDS_experiment) $(FUZZ_DIR)/experiment/smoke/
	@cp $(FUZZ_SEEDS_state) $(FUZZ_DIR)/state/smoke/
	@cp $(FUZZ_SEEDS_args) $(FUZZ_DIR)/args/smoke/
	@cp $(FUZZ_SEEDS_timeline) $(FUZZ_DIR)/timeline/smoke/
	@cp $(FUZZ_SEEDS_view) $(FUZZ_DIR)/view/smoke/
	@cp $(FUZZ_SEEDS_link) $(FUZZ_DIR)/link/smoke/
	@set -e; for n in $(FUZZ_NAMES); do \
		log=$(FUZZ_DIR)/$$n/smoke.log; \
		$(FUZZ_DIR)/fuzz-$$n -max_total_time=$(FUZZ_SMOKE_SECONDS) \
			-seed=1 -timeout=1 -rss_limit_mb=1024 \
			-artifact_prefix=$(FUZZ_DIR)/ \
			$(FUZZ_DIR)/$$n/smoke > $$log 2>&1 || \
			{ tail -40 $$log; echo "fuzz-$$n: FAILED"; exit 1; }; \
		echo "fuzz-$$n: $$(grep -o 'Done [0-9]* runs in [0-9]* second' \
			$$log), no crash"; \
	done

# ---- emulation benchmark (tests/bench/emu/README.md; needs root) ----------
#   make bench-emu [BENCH_EMU_ARGS='--sizes 50,100 --reps 5 --mininet off']
# builds and runs it; `make bench` runs it as well when root, else says so.
BENCH_EMU_SRC := $(wildcard tests/bench/emu/*.c)
BENCH_EMU_OBJ := $(BENCH_EMU_SRC:%.c=$(O)/%.o)
BENCH_EMU := $(O)/tests/bench-emu
BENCH_EMU_ARGS ?=
BENCH_EMU_RUN = $(BENCH_EMU) --twinlab $(TWINLAB) \
	--script tests/bench/emu/mininet_linear.py \
	--csv $(O)/bench-emu.csv $(BENCH_EMU_ARGS)

$(O)/tests/bench/emu/%.o: tests/bench/emu/%.c | deps
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(call cflags_of,libmnl json-c) -c -o $@ $<

$(BENCH_EMU): $(BENCH_EMU_OBJ) $(O)/tests/lib/nettest.o $(EMU_LIB) \
		$(TWIN_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ \
		$(call libs_of,json-c $(EMU_PKGS)) $(TWIN_LIBS) -lpthread

.PHONY: bench-emu bench-emu-if-root
bench-emu: $(TWINLAB) $(BENCH_EMU)
	$(BENCH_EMU_RUN)

bench: bench-emu-if-root
bench-emu-if-root: $(TWINLAB) $(BENCH_EMU)
	@if [ "$$(id -u)" -eq 0 ]; then $(BENCH_EMU_RUN); \
	else echo "bench: emulation benchmark skipped: it needs root" \
		"(run 'make bench-emu' as root)"; fi
