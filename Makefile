# orrery: direct N-body simulation with kernels compiled at run time.
#   make            build build/orrery (kernel sources embedded)
#   make run        run the main job (the default scenario; GPU when there is one)
#   make test       build and run every test (GPU tests skip without a GPU)
#   make gpu-test   run the built GPU tests only, without rebuilding
#   make deps       install what is missing (Debian packages; as root)
#   make sanitize-test  the CPU suite built with ASan + UBSan into build-san/
#   make fuzz       the file readers under libFuzzer (clang), FUZZ_SECONDS each
#                   (make deps installs clang only for this: tools/deps.sh fuzz)

CUDA_PATH ?= /usr/local/cuda
CC        ?= cc
BUILD     ?= build
# core/ by layer, bottom up (docs/ARCHITECTURE.md): base, kernel, engine, tune,
# ranks, integrate, physics, sim, io, cli.  Every source file of a layer is in
# the library but cli/cli.c (the command line: it talks to the user).
CORE_DIRS := base kernel engine tune ranks integrate physics sim io cli

# Expanded when used (after tools/deps.sh has run), not when the Makefile is read.
LUA_CFLAGS = $(shell pkg-config --cflags lua5.4 2>/dev/null)
LUA_LIBDIR = $(shell pkg-config --variable=libdir lua5.4 2>/dev/null)
LUA_STATIC = $(if $(LUA_LIBDIR),$(LUA_LIBDIR)/liblua5.4.a,-llua5.4)
# libhdf5 (Debian's serial build) and libpng, for snapshots and frames.
HDF5_CFLAGS = $(shell pkg-config --cflags hdf5 2>/dev/null || echo -I/usr/include/hdf5/serial)
HDF5_LIBS   = $(shell pkg-config --libs hdf5 2>/dev/null || echo -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5)
PNG_CFLAGS  = $(shell pkg-config --cflags libpng 2>/dev/null)
PNG_LIBS    = $(shell pkg-config --libs libpng 2>/dev/null || echo -lpng)
# FFmpeg's libraries (Debian's), for movies (core/io/movie.c: MP4, H.264 by libx264).
AV_PKGS     = libavformat libavcodec libswscale libavutil
AV_CFLAGS   = $(shell pkg-config --cflags $(AV_PKGS) 2>/dev/null)
AV_LIBS     = $(shell pkg-config --libs $(AV_PKGS) 2>/dev/null || echo -lavformat -lavcodec -lswscale -lavutil)
# Open MPI's <mpi.h>, for core/ranks/comm.c's types only: libmpi.so.40 is opened
# with dlopen at run time, never linked.
MPI_CFLAGS  = $(shell pkg-config --cflags ompi-c 2>/dev/null || echo -I/usr/lib/x86_64-linux-gnu/openmpi/include)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
            -Wno-unused-parameter -pthread $(SANITIZE)
# Instrumentation for every object and link (make sanitize-test sets it).
SANITIZE ?=
# core/ sees its own headers only (it never includes the Lua layer's); lua/ adds its own.
# Headers are included by their bare names ("engine.h"), from every layer's folder.
CPPFLAGS += -D_GNU_SOURCE $(foreach d,$(CORE_DIRS),-iquote core/$(d)) -iquote $(BUILD)/gen -I$(CUDA_PATH)/include $(LUA_CFLAGS) \
            $(HDF5_CFLAGS) $(PNG_CFLAGS) $(AV_CFLAGS)
LDLIBS   += $(LUA_STATIC) -lcjson -lxxhash $(HDF5_LIBS) $(PNG_LIBS) $(AV_LIBS) -lmicrohttpd \
            -ldl -lm -pthread

VERSION  := 0.1.0

# Every source file of a layer is in the library but cli/cli.c (the command
# line: it talks to the user).
CORE_SRC := $(filter-out core/cli/cli.c,$(sort $(foreach d,$(CORE_DIRS),$(wildcard core/$(d)/*.c))))
CORE_HDR := $(foreach d,$(CORE_DIRS),$(wildcard core/$(d)/*.h))
CORE_OBJ := $(CORE_SRC:core/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/ksrc_embed.o
KSRC     := $(sort $(wildcard kernels_src/*.h kernels_src/*.cu kernels_src/*.c kernels_src/forces/*.h kernels_src/fields/*.h))

# The Lua layer (one C file per module or type) and its Lua-side library,
# embedded like the kernel sources and installed in package.preload.
LUA_SRC  := lua/lorrery.c lua/lsim.c lua/lbuffer.c lua/lic.c lua/lrun.c lua/lforce.c lua/lfield.c lua/lio.c lua/lsource.c \
            lua/lvoice.c lua/lfewbody.c lua/lview.c
LUA_OBJ  := $(LUA_SRC:lua/%.c=$(BUILD)/obj/lua/%.o) $(BUILD)/obj/lua_embed.o $(BUILD)/obj/view_embed.o
LUA_LIB  := $(sort $(wildcard lua/orrery/*.lua))

# The program: main() (lua/main.c) runs the command line's own commands
# (core/cli/cli.c, not part of the library: it talks to the user) plus the Lua
# layer's run.
MAIN_OBJ := $(BUILD)/obj/lua/main.o $(BUILD)/obj/cli/cli.o

TESTS    := test_kcache test_rtc test_kspec test_cpu test_hostcc test_ic test_sim test_tune test_law test_field test_gpu \
            test_snapshot test_render test_comm test_nccl test_diag test_kepler \
            test_movie test_view
TEST_BIN := $(TESTS:%=$(BUILD)/tests/%)

.PHONY: gpu-sanitize all run test gpu-test deps clean bundle sanitize-test fuzz
all: $(BUILD)/orrery

$(BUILD)/.deps: tools/deps.sh
	@bash tools/deps.sh
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/obj/%.o: core/%.c $(CORE_HDR) | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DORR_VERSION='"$(VERSION)"' $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/ranks/comm.o: CPPFLAGS += $(MPI_CFLAGS)

$(BUILD)/embed: tools/embed.c | $(BUILD)/.deps
	@mkdir -p $(BUILD)
	$(CC) -std=c11 -O2 -Wall -Wextra -o $@ $<

$(BUILD)/gen/ksrc_embed.c: $(BUILD)/embed $(KSRC)
	@mkdir -p $(dir $@)
	$(BUILD)/embed kernels_src $(patsubst kernels_src/%,%,$(KSRC)) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/ksrc_embed.o: $(BUILD)/gen/ksrc_embed.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/lua/%.o: lua/%.c lua/*.h $(CORE_HDR) | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote lua -DORR_VERSION='"$(VERSION)"' $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/lua_embed.c: $(BUILD)/embed $(LUA_LIB)
	@mkdir -p $(dir $@)
	$(BUILD)/embed -t orr_lua_embedded lua/orrery $(patsubst lua/orrery/%,%,$(LUA_LIB)) > $@.tmp && mv $@.tmp $@

# The live view's page (lua/view/) and three.js with its orbit controls from
# Debian's libjs-three, embedded: the binary serves them with no network.
THREE_DIR := /usr/share/javascript/three
VIEW_PAGE := $(sort $(wildcard lua/view/*))
VIEW_FILES := $(notdir $(VIEW_PAGE)) three.min.js OrbitControls.js
$(BUILD)/gen/view_embed.c: $(BUILD)/embed $(VIEW_PAGE) | $(BUILD)/.deps
	@mkdir -p $(BUILD)/gen/view
	cp $(VIEW_PAGE) $(THREE_DIR)/three.min.js $(THREE_DIR)/examples/js/controls/OrbitControls.js $(BUILD)/gen/view/
	$(BUILD)/embed -t orr_view_page $(BUILD)/gen/view $(VIEW_FILES) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/view_embed.o: $(BUILD)/gen/view_embed.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/lua_embed.o: $(BUILD)/gen/lua_embed.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/liborrery.a: $(CORE_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/orrery: $(MAIN_OBJ) $(LUA_OBJ) $(BUILD)/liborrery.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c tests/testutil.h $(BUILD)/liborrery.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote tests $(CFLAGS) -o $@ $< $(BUILD)/liborrery.a -lcmocka $(LDLIBS)

run: $(BUILD)/orrery
	$(BUILD)/orrery run scripts/plummer.lua

test: $(BUILD)/orrery $(TEST_BIN)
	@bash tests/run.sh $(BUILD)

# No build prerequisites: runs what was built (here or carried to the GPU machine):
# the C GPU tests (test_nccl: NCCL on one rank; it skips where NCCL is absent
# unless ORRERY_REQUIRE_NCCL=1) and tests/lua/test_gpu.lua (build/orrery embeds Lua).
gpu-test:
	@ORRERY_REQUIRE_GPU=1 bash tests/run.sh $(BUILD) test_gpu test_nccl lua:test_gpu lua:test_hermite lua:test_continue lua:test_blowup lua:test_regular mpi

# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over the GPU
# tests; on the GPU machine (no build prerequisites: run it where built)
gpu-sanitize:
	@bash tests/gpu_sanitize.sh $(BUILD)

deps:
	@bash tools/deps.sh

# The whole CPU suite with AddressSanitizer (leaks included, but for the
# processes mpirun starts: tests/test_mpi.sh says why) and UBSan, built into
# build-san/ (kernels the CPU backend compiles at run time, and the libraries
# opened with dlopen, are not instrumented).  Any report exits 99, so it
# fails the test that printed it even where an error exit was expected.
SAN_BUILD := build-san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_ENV   := ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:exitcode=99 \
             UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99
sanitize-test:
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) SANITIZE="$(SAN_FLAGS)" \
	  $(SAN_BUILD)/orrery $(TESTS:%=$(SAN_BUILD)/tests/%)
	@$(SAN_ENV) bash tests/run.sh $(SAN_BUILD)

# Coverage-guided fuzzing (libFuzzer, clang) of the readers of files orrery
# did not necessarily write: text and HDF5 snapshots, checkpoints, the tuning
# store, kernel-cache entries (the HDF5 targets build the file an input
# describes, tests/fuzz/h5desc.h).  The library is built with clang, ASan and
# UBSan into build-fuzz/; each target (tests/fuzz/fuzz_NAME.c) runs for
# FUZZ_SECONDS from its seeds (tests/fuzz/corpus/NAME/) and fails on a crash,
# a leak or undefined behaviour, leaving the input in build-fuzz/fuzz/.
FUZZ_BUILD   := build-fuzz
FUZZ_SECONDS ?= 15
FUZZ_TARGETS := text snapshot checkpoint tunestore kcache
FUZZ_FLAGS   := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
fuzz:
	@bash tools/deps.sh fuzz
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang SANITIZE="$(FUZZ_FLAGS)" \
	  $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz/fuzz_%)
	@bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/h5desc.h $(BUILD)/liborrery.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote tests/fuzz $(CFLAGS) -fsanitize=fuzzer -o $@ $< \
	  $(BUILD)/liborrery.a $(LDLIBS)

bundle: $(BUILD)/orrery $(TEST_BIN)
	bash ../shared/device/bundle.sh $(BUILD)/orrery $(TEST_BIN)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(FUZZ_BUILD)
