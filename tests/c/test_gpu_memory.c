/* The session's VRAM readings from torch (session/gpu_memory.h), as the Python side
 * hands them: each device keeps the largest peak read, a peak below the one before
 * counts as a reset, a failed reading keeps the figures and says why, a reading
 * without a session is refused, a session that read nothing writes no section, and a
 * new session starts with nothing read. */
#include "lapse.h"

#include "../../src/session/gpu_memory.h"
#include "../../src/store/codec.h"
#include "check.h"
#include "session_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char run_dir[256];

static void start(void)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.role = "test";
    o.features = LAPSE_FEATURE_SPANS;
    o.snapshot_interval_ms = 60000;
    o.handle_signals = 0;
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "lapse_start: %s\n", lapse_last_error());
        exit(1);
    }
}

static void reading(uint64_t alloc0, uint64_t res0, uint64_t alloc1)
{
    store_gpu_memory_device d[2] = {{0, "GPU-aaaa", "Fake H200", alloc0, res0},
                                    {1, "GPU-bbbb", "Fake H200", alloc1, alloc1}};
    CHECK(lapse_session_gpu_memory_reading(d, 2, "") == 0);
}

int main(void)
{
    snprintf(run_dir, sizeof run_dir, "/tmp/lapse-test-gpu-memory-XXXXXX");
    if (!mkdtemp(run_dir))
        return 1;
    store_gpu_memory_device none = {0, "", "", 1, 1};
    CHECK(lapse_session_gpu_memory_reading(&none, 1, "") == -EINVAL); /* no session */

    start();
    reading(100, 200, 5);
    reading(300, 400, 5);
    reading(50, 400, 7); /* reset_peak_memory_stats on device 0 */
    reading(80, 90, 7);  /* and of both peaks */
    CHECK(lapse_session_gpu_memory_reading(NULL, 0, "torch.cuda.device_count(): RuntimeError: x") == 0);
    store_file f;
    stop_and_read(&f);
    CHECK(f.gpu_memory != NULL);
    if (f.gpu_memory) {
        const store_gpu_memory *g = f.gpu_memory;
        CHECK_EQ_U64(g->readings, 4);
        CHECK_EQ_U64(g->resets, 2);
        CHECK(!strcmp(g->error, "torch.cuda.device_count(): RuntimeError: x"));
        CHECK_EQ_U64(g->device_count, 2);
        CHECK(!strcmp(g->devices[0].uuid, "GPU-aaaa"));
        CHECK(!strcmp(g->devices[0].name, "Fake H200"));
        CHECK_EQ_U64(g->devices[0].allocated_peak_bytes, 300);
        CHECK_EQ_U64(g->devices[0].reserved_peak_bytes, 400);
        CHECK_EQ_U64(g->devices[1].index, 1);
        CHECK_EQ_U64(g->devices[1].allocated_peak_bytes, 7);
    }
    store_file_free(&f);

    start(); /* a new session: nothing read, no section */
    stop_and_read(&f);
    CHECK(f.gpu_memory == NULL);
    store_file_free(&f);
    return check_done("test_gpu_memory");
}
