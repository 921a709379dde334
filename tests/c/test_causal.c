/* Signals and waits through the public API, read back from the files a session
 * writes: a wait still open is in no snapshot, a completed one is, and a new session
 * starts from no record (the buffer is kept across sessions: what an earlier session
 * left in it must not read as this one's). */
#include "lapse.h"

#include "../../src/store/codec.h"
#include "../../src/store/file_io.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char path[4096];

static void start(const char *dir)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = dir;
    o.role = "causal";
    o.handle_signals = 0;
    o.snapshot_interval_ms = 600000;
    CHECK(lapse_start(&o) == 0);
    snprintf(path, sizeof path, "%s", lapse_file_path() ? lapse_file_path() : "");
}

/* The file's records: their count, and of kind `kind` named `name`. */
static uint32_t records(uint32_t kind, const char *name, uint32_t *named)
{
    store_file f;
    char err[512];
    *named = 0;
    if (store_read_file(path, 0, &f, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", path, err);
        CHECK(0);
        return UINT32_MAX;
    }
    uint32_t n = f.causal_count;
    for (uint32_t i = 0; i < n; i++)
        *named += f.causal[i].kind == kind && !strcmp(f.names[f.causal[i].name], name);
    store_file_free(&f);
    return n;
}

int main(void)
{
    char dir[] = "/tmp/lapse-test-causal-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    uint32_t named;

    lapse_signal("dormant"); /* no session: nothing, no crash */
    lapse_wait w0 = lapse_wait_on("dormant");
    lapse_wait_done(&w0);

    start(dir);
    for (int i = 0; i < 3; i++)
        lapse_signal("a");
    {
        LAPSE_WAIT_ON("b");
    }
    CHECK(lapse_stop() == 0);
    CHECK_EQ_U64(records(STORE_CAUSAL_SIGNAL, "a", &named), 4);
    CHECK_EQ_U64(named, 3);

    start(dir);
    lapse_wait open = lapse_wait_on("c");
    CHECK(lapse_flush() == 0);
    CHECK_EQ_U64(records(STORE_CAUSAL_WAIT, "c", &named), 0); /* open: not yet */
    lapse_wait_done(&open);
    lapse_wait_done(&open); /* twice: the second does nothing */
    CHECK(lapse_stop() == 0);
    CHECK_EQ_U64(records(STORE_CAUSAL_WAIT, "c", &named), 1);
    CHECK_EQ_U64(named, 1);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_done("test_causal");
}
