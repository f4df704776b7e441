# skv - one Makefile: `make`, `make check`, `make sanitize`, `make fuzz`, `make report`, `make bench`, `make install`.
# Sources are found by wildcard: lib/*.c is the library, experiments/*.c the
# program (experiments/cli/main.c holds main), tests/test_*.c one cmocka binary each.

CC      ?= gcc
OPT     ?= -O2
# -ffp-contract=off: no silent fma contraction, so every emulated operation
# rounds exactly where the code says and results are the same on any target.
# SAN is set by `make sanitize`; user CFLAGS may add to the required flags.
CFLAGS  ?= $(OPT) -g
override CFLAGS += -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -ffp-contract=off -fopenmp -Ilib $(SAN)
override LDFLAGS += -fopenmp $(SAN)
LDLIBS  += -lmpfr -lgmp -lm
B       ?= build

LIB_SRC  := $(wildcard lib/*.c)
APP_SRC  := $(filter-out experiments/cli/main.c experiments/mpi/%,$(wildcard experiments/*/*.c))
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC:= $(wildcard tests/bench_*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
APP_OBJ  := $(APP_SRC:%.c=$(B)/%.o)
TESTS    := $(TEST_SRC:tests/%.c=$(B)/tests/%)
BENCHES  := $(BENCH_SRC:tests/%.c=$(B)/tests/%)
DEPS_OK  := $(B)/.deps-ok

.PHONY: all check sanitize fuzz report bench clean deps install uninstall
all: $(B)/libskv.a $(B)/skv

# Installs MPFR, GMP, cmocka and gnuplot when a header or tool is missing.
$(DEPS_OK):
	@sh scripts/deps.sh
	@mkdir -p $(B) && touch $@
deps: $(DEPS_OK)

$(B)/%.o: %.c $(wildcard lib/*.h experiments/*/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iexperiments -c -o $@ $<

# A test also depends on the tests' own headers (testutil.h, ref_mpfr.h, ...).
$(B)/tests/%.o: tests/%.c $(wildcard lib/*.h experiments/*/*.h tests/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iexperiments -c -o $@ $<

$(B)/libskv.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libskvapp.a: $(APP_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/skv: $(B)/experiments/cli/main.o $(B)/libskvapp.a $(B)/libskv.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: $(B)/tests/%.o $(B)/libskvapp.a $(B)/libskv.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

# The shared library: the same sources compiled position-independent, with a
# soname that changes only when the ABI does (SOVER).
VERSION := $(shell sed -n 's/^\#define SKV_VERSION "\(.*\)"/\1/p' lib/skv.h)
SOVER   := 0
PIC_OBJ := $(LIB_SRC:%.c=$(B)/pic/%.o)
SO      := $(B)/libskv.so.$(VERSION)

$(B)/pic/%.o: %.c $(wildcard lib/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

# Exported: exactly the functions lib/skv.h declares (scripts/exports.sh).
$(B)/skv.map: lib/skv.h scripts/exports.sh
	@mkdir -p $(B)
	sh scripts/exports.sh lib/skv.h > $@.tmp && mv $@.tmp $@

$(SO): $(PIC_OBJ) $(B)/skv.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libskv.so.$(SOVER) -Wl,--version-script=$(B)/skv.map \
	  -o $@ $(PIC_OBJ) $(LDLIBS)

$(B)/skv.pc: scripts/skv.pc.in lib/skv.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' scripts/skv.pc.in > $@

# The manual page, written from the program's own --help texts.
$(B)/skv.1: $(B)/skv scripts/man.sh
	sh scripts/man.sh $(B)/skv > $@

# make install [PREFIX=/usr/local] [DESTDIR=]: the program, both libraries,
# the header, pkg-config's skv.pc, the man page and the chart scripts (which
# skv report finds in PREFIX/share/skv next to PREFIX/bin/skv).
PREFIX  ?= /usr/local
DESTDIR ?=
D       := $(DESTDIR)$(PREFIX)
install: $(B)/skv $(B)/libskv.a $(SO) $(B)/skv.1
	@rm -f $(B)/skv.pc && $(MAKE) --no-print-directory $(B)/skv.pc PREFIX=$(PREFIX)
	install -d $(D)/bin $(D)/lib/pkgconfig $(D)/include $(D)/share/man/man1 $(D)/share/skv
	install -m 755 $(B)/skv $(D)/bin/skv
	install -m 644 $(B)/libskv.a $(D)/lib/libskv.a
	install -m 755 $(SO) $(D)/lib/libskv.so.$(VERSION)
	ln -sf libskv.so.$(VERSION) $(D)/lib/libskv.so.$(SOVER)
	ln -sf libskv.so.$(SOVER) $(D)/lib/libskv.so
	install -m 644 lib/skv.h $(D)/include/skv.h
	install -m 644 $(B)/skv.pc $(D)/lib/pkgconfig/skv.pc
	install -m 644 $(B)/skv.1 $(D)/share/man/man1/skv.1
	install -m 644 scripts/*.gp $(D)/share/skv/

uninstall:
	rm -f $(D)/bin/skv $(D)/lib/libskv.a $(D)/lib/libskv.so.$(VERSION) $(D)/lib/libskv.so.$(SOVER) \
	  $(D)/lib/libskv.so $(D)/include/skv.h $(D)/lib/pkgconfig/skv.pc $(D)/share/man/man1/skv.1
	rm -f $(addprefix $(D)/share/skv/,$(notdir $(wildcard scripts/*.gp)))
	-rmdir $(D)/share/skv 2>/dev/null

# skv-mpi (experiments/mpi/, the suite across MPI ranks) is built when
# Open MPI's mpicc is found; test_mpi skips, saying why, when it is not.
MPICC    ?= mpicc
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo yes)
MPI_SRC  := $(wildcard experiments/mpi/*.c)
ifeq ($(HAVE_MPI),yes)
all: $(B)/skv-mpi
check: $(B)/skv-mpi
endif

$(B)/experiments/mpi/%.o: experiments/mpi/%.c $(wildcard lib/*.h experiments/*/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Iexperiments -c -o $@ $<

$(B)/skv-mpi: $(MPI_SRC:%.c=$(B)/%.o) $(B)/libskvapp.a $(B)/libskv.a
	$(MPICC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

check: $(TESTS) $(B)/skv $(SO)
	@sh scripts/check-structure.sh
	@sh scripts/check-exports.sh $(SO) lib/skv.h
	@sh scripts/run-tests.sh $(TESTS)

sanitize:
	@$(MAKE) --no-print-directory check B=build-san CFLAGS="-O1 -g" \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

# libFuzzer targets (tests/fuzz/fuzz_*.c, each with a seed corpus in
# tests/fuzz/corpus/NAME/), built with clang and ASan + UBSan against the
# library and the program; `make fuzz` runs each for FUZZ_TIME seconds.
FZ       ?= build-fuzz
FUZZ_TIME ?= 60
FUZZ_CC  ?= clang
FUZZ_FLAGS := -O1 -g -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -ffp-contract=off -fopenmp -Ilib -Iexperiments \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(FZ)/%)
FUZZ_OBJ := $(LIB_SRC:%.c=$(FZ)/%.o) $(APP_SRC:%.c=$(FZ)/%.o)

$(FZ)/%.o: %.c $(wildcard lib/*.h experiments/*/*.h) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@echo "  CC (fuzz) $<"
	@$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FZ)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	@echo "  LD (fuzz) $@"
	@$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz: $(FUZZ_BIN)
	@sh scripts/fuzz.sh $(FUZZ_TIME) $(FUZZ_BIN)

bench: $(BENCHES) $(B)/skv
	@for b in $(BENCHES); do $$b; done

# deps.sh again: gnuplot may have gone since the build stamp was made.
report: $(B)/skv
	@sh scripts/deps.sh
	@sh scripts/report.sh

clean:
	rm -rf build build-san build-fuzz

.SECONDARY:
