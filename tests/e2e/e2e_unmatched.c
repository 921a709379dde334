/* End-to-end test program: LAPSE_BEGIN/LAPSE_END used wrongly, on purpose.
 * Profiling comes from the environment (LAPSE_PROFILE=1 ...). Every mismatch
 * below must be counted (unmatched_ends) and none may crash the program.
 *
 * The mismatches, EXPECTED_UNMATCHED in all:
 *   1. LAPSE_END("never_begun") with nothing open
 *   2. LAPSE_END("outer") while "outer/inner" is still open (inner is closed with it)
 *   3. LAPSE_END("inner") afterwards: inner was already closed by (2)
 *   4. a LAPSE_SCOPE("scoped") block that ends with LAPSE_BEGIN("leaked") still open
 *   5. the same as 1, on a second thread
 * The program prints "expected_unmatched <n>" on stdout.
 */
#include "lapse.h"

#include <pthread.h>
#include <stdio.h>

#define EXPECTED_UNMATCHED 5

static volatile unsigned long sink;

static void busy(void)
{
    for (int i = 0; i < 10000; i++)
        sink += (unsigned long)i * 2654435761u;
}

static void *second_thread(void *arg)
{
    (void)arg;
    LAPSE_END("never_begun_thread");
    {
        LAPSE_SCOPE("thread_ok");
        busy();
    }
    return NULL;
}

int main(void)
{
    LAPSE_END("never_begun");

    LAPSE_BEGIN("outer");
    busy();
    LAPSE_BEGIN("inner");
    busy();
    LAPSE_END("outer");
    LAPSE_END("inner");

    {
        LAPSE_SCOPE("scoped");
        LAPSE_BEGIN("leaked");
        busy();
    }

    {
        LAPSE_SCOPE("well_formed");
        busy();
    }

    pthread_t t;
    if (pthread_create(&t, NULL, second_thread, NULL) == 0)
        pthread_join(t, NULL);

    printf("expected_unmatched %d\n", EXPECTED_UNMATCHED);
    return 0;
}
