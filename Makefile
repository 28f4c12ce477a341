# cdsim: make [release] | debug | asan | test | check | bench | fuzz | install PREFIX=... | clean
#
# Sources are found by wildcard: every .c in src/, solvers/ and io/ goes into the
# library (src/main.c is the program), every tests/*.c into the test runner,
# every tests/bench/*.c into the benchmark runner.

PREFIX ?= /usr/local
CC ?= cc
PEER_DATA ?= ../shared/peer-data
PEER_BENCH ?= ../shared/peer-bench

# The flags of the dependencies are read when a compile or link runs (=, not :=), after
# depcheck, which every object waits for (| depcheck below): on a fresh machine the first
# `make` (or `make -j`) installs the dependencies first, then compiles with their flags.
HDF5_CFLAGS = $(shell pkg-config --cflags hdf5 2>/dev/null)
HDF5_LIBS = $(shell pkg-config --libs hdf5 2>/dev/null)
CJSON_CFLAGS = $(shell pkg-config --cflags libcjson 2>/dev/null)
CJSON_LIBS = $(shell pkg-config --libs libcjson 2>/dev/null)
FCLIB_CFLAGS = $(shell pkg-config --cflags fclib 2>/dev/null)
FCLIB_LIBS = $(shell pkg-config --libs fclib 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla -Wcast-qual -Wundef -Werror
CPPFLAGS_ALL = -Isrc -Isolvers -Iio -I/usr/include/suitesparse $(HDF5_CFLAGS) $(CJSON_CFLAGS) $(FCLIB_CFLAGS) \
               -D_DEFAULT_SOURCE -DCDSIM_VERSION='"$(shell cat VERSION)"'
LIBS = -lklu -lamd -lcholmod -lsuitesparseconfig $(FCLIB_LIBS) $(HDF5_LIBS) $(CJSON_LIBS) -lz -lm

# The program (not the tests) links SuiteSparse and HDF5 from the static archives of Debian's
# -dev packages. Their shared libraries bring 44 more with them (the shared HDF5 libcurl and
# its TLS, LDAP and Kerberos stack; CHOLMOD OpenBLAS): loading and relocating them took ~50 ms
# of every run's start (perf stat, `cdsim --version`: 53 -> 6 ms; the sliding cube's whole
# run 83 -> 51 ms), most of a short run in a sweep. CHOLMOD's supernodal code, which cdsim
# never selects, still needs BLAS and LAPACK: the reference ones, static too. What stays shared
# is what those archives call: METIS, the Fortran runtime, OpenMP, szip, zlib, cJSON. Without
# every archive the program links as the tests do.
STATIC_NAMES := klu btf cholmod amd colamd camd ccolamd suitesparseconfig
REF_BLAS = $(shell $(CC) -print-file-name=lapack/liblapack.a) $(shell $(CC) -print-file-name=blas/libblas.a)
HDF5_LDIRS = $(patsubst -L%,%,$(shell pkg-config --libs-only-L hdf5 2>/dev/null))
STATIC_MISSING = $(strip $(foreach l,$(STATIC_NAMES),$(if $(wildcard $(shell $(CC) -print-file-name=lib$(l).a)),,$(l))) \
                         $(if $(filter 2,$(words $(wildcard $(REF_BLAS)))),,lapack/blas) \
                         $(if $(wildcard $(addsuffix /libhdf5.a,$(HDF5_LDIRS))),,hdf5))
PROG_LIBS = $(if $(STATIC_MISSING),$(LIBS), \
  -Wl,-Bstatic $(STATIC_NAMES:%=-l%) $(HDF5_LIBS) -Wl,-Bdynamic $(REF_BLAS) \
  -l:libmetis.so.5 -l:libgfortran.so.5 -l:libgomp.so.1 -lsz $(CJSON_LIBS) -lz -ldl -lm -lpthread)

BUILD ?= build
ifeq ($(BUILD),build-debug)
  OPT := -O0 -g3
else ifeq ($(BUILD),build-asan)
  OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
  OPT := -O2 -g
endif
CFLAGS_ALL := -std=c11 $(OPT) $(WARN) $(CFLAGS)
LDFLAGS_ALL := $(OPT) $(LDFLAGS)

LIB_SRC := $(sort $(filter-out src/main.c,$(wildcard src/*.c solvers/*.c io/*.c)))
TEST_SRC := $(sort $(wildcard tests/*.c))
BENCH_SRC := $(sort $(wildcard tests/bench/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)

.PHONY: all release debug asan test check bench fuzz install clean deps depcheck valgrind

all release: depcheck $(BUILD)/cdsim

debug:
	$(MAKE) BUILD=build-debug all
asan:
	$(MAKE) BUILD=build-asan all

# the dependencies come from Debian; install them when missing (as root), or say how
depcheck:
	@if [ ! -f /usr/include/cjson/cJSON.h ] || [ ! -f /usr/include/suitesparse/cholmod.h ] || [ ! -f /usr/include/zlib.h ] || \
	    ! pkg-config --exists hdf5 || ! pkg-config --exists fclib; then \
	  if [ "$$(id -u)" = 0 ]; then scripts/install-deps; else \
	    echo "missing build dependencies: run 'sudo scripts/install-deps'" >&2; exit 2; fi; \
	fi

deps:
	scripts/install-deps

$(BUILD)/%.o: %.c | depcheck
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CPPFLAGS) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/libcdsim.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/cdsim: $(BUILD)/src/main.o $(BUILD)/libcdsim.a
	$(if $(STATIC_MISSING),@echo "note: no static archive of $(STATIC_MISSING): cdsim links the shared libraries (~50 ms more a run)" >&2)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PROG_LIBS)

$(BUILD)/cdsim-tests: $(TEST_OBJ) $(BUILD)/libcdsim.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

# the benchmarks read the peer collections (tests/peer_data.c, io/problem_file.c) and, when Debian's Siconos numerics
# (libsiconos-numerics-dev, a peer and not a dependency) is installed, compare with its fc3d NSGS
SICONOS_H := $(wildcard /usr/include/siconos/numerics/fc3d_Solvers.h)
$(BENCH_OBJ): CPPFLAGS_ALL += -Itests $(if $(SICONOS_H),-DCD_HAVE_SICONOS -I/usr/include/siconos -I/usr/include/siconos/numerics)
$(BUILD)/cdsim-bench: $(BENCH_OBJ) $(BUILD)/tests/peer_data.o $(BUILD)/libcdsim.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(if $(SICONOS_H),-lsiconos_numerics) $(LIBS)

# the test suite: TEST=substring runs the matching tests only
test: depcheck $(BUILD)/cdsim $(BUILD)/cdsim-tests
	CDSIM_BIN=$(abspath $(BUILD)/cdsim) CDSIM_ROOT=$(CURDIR) CDSIM_PEER_DATA=$(PEER_DATA) \
	  $(BUILD)/cdsim-tests $(TEST)

# the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
check:
	$(MAKE) BUILD=build-asan test

bench: depcheck $(BUILD)/cdsim $(BUILD)/cdsim-bench
	@mkdir -p bench-results
	CDSIM_BIN=$(abspath $(BUILD)/cdsim) CDSIM_ROOT=$(CURDIR) CDSIM_PEER_BENCH=$(PEER_BENCH) CDSIM_PEER_DATA=$(PEER_DATA) \
	  $(BUILD)/cdsim-bench bench-results $(BENCH)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/cdsim/scenes
	install -m 755 $(BUILD)/cdsim $(DESTDIR)$(PREFIX)/bin/cdsim
	install -m 644 scenes/*.json $(DESTDIR)$(PREFIX)/share/cdsim/scenes/

clean:
	rm -rf build build-debug build-asan bench-results

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(BUILD)/src/main.d

# ---- fuzzing (tests/fuzz/README.md): clang + libFuzzer + ASan + UBSan over the library
# sources compiled anew into build-fuzz/; the seed corpus comes from scenes/ at run time.
# Fails when a harness finds a crash (the input is left in build-fuzz/crash-*).
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_DIR := build-fuzz
FUZZ_OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/%.o)
.SECONDARY: $(FUZZ_LIB_OBJ)

$(FUZZ_DIR)/%.o: %.c | depcheck
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS_ALL) -std=c11 $(FUZZ_OPT) -fsanitize=fuzzer-no-link $(WARN) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(CPPFLAGS_ALL) -std=c11 $(FUZZ_OPT) -fsanitize=fuzzer $(WARN) -o $@ $^ $(LIBS)

fuzz: $(FUZZ_DIR)/fuzz_scene $(FUZZ_DIR)/fuzz_step $(FUZZ_DIR)/fuzz_deflate
	@rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds/scene $(FUZZ_DIR)/seeds/step \
	  $(FUZZ_DIR)/corpus/scene $(FUZZ_DIR)/corpus/step
	@for f in scenes/*.json; do b=$$(basename $$f .json); \
	  if [ $$(wc -c < $$f) -le 65536 ]; then cp $$f $(FUZZ_DIR)/seeds/scene/$$b; \
	    { cat $$f; printf '\0/bodies/0/velocity=[1,2,3]\n/dt=0.001\n/steps=3'; } > $(FUZZ_DIR)/seeds/scene/$$b-set; fi; \
	  if [ $$(wc -c < $$f) -le 16384 ]; then cp $$f $(FUZZ_DIR)/seeds/step/$$b; fi; done
	$(FUZZ_DIR)/fuzz_scene -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=20 -rss_limit_mb=4096 \
	  -dict=tests/fuzz/scene.dict -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crash-scene- \
	  $(FUZZ_DIR)/corpus/scene $(FUZZ_DIR)/seeds/scene tests/fuzz/regressions
	$(FUZZ_DIR)/fuzz_step -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=60 -rss_limit_mb=4096 \
	  -dict=tests/fuzz/scene.dict -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crash-step- \
	  $(FUZZ_DIR)/corpus/step $(FUZZ_DIR)/seeds/step tests/fuzz/regressions
	@mkdir -p $(FUZZ_DIR)/corpus/deflate
	$(FUZZ_DIR)/fuzz_deflate -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -timeout=20 -rss_limit_mb=4096 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crash-deflate- $(FUZZ_DIR)/corpus/deflate $(FUZZ_DIR)/seeds/step

-include $(FUZZ_LIB_OBJ:.o=.d)

# one short run of every model under valgrind memcheck (scripts/valgrind-check)
valgrind: $(BUILD)/cdsim
	scripts/valgrind-check $(BUILD)/cdsim
