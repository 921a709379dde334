/* For the C tests that run a session in this process: stops it and reads the file it
 * wrote (a failure to read ends the test). Include after check.h. */
#ifndef LAPSE_TESTS_SESSION_FILE_H
#define LAPSE_TESTS_SESSION_FILE_H

#include "lapse.h"

#include "../../src/store/file_io.h"

#include <stdio.h>
#include <stdlib.h>

static void stop_and_read(store_file *f)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s", lapse_file_path());
    CHECK(lapse_stop() == 0);
    if (store_read_file(path, 0, f, err, sizeof err)) {
        fprintf(stderr, "read %s: %s\n", path, err);
        exit(1);
    }
}

#endif
