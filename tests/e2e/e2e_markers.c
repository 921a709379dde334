/* Spans that become NVTX ranges (MARKERS), run by tests/e2e/test_markers.py under
 * a fake NVTX tool: nested scopes, spans that cross (an outer one ended first),
 * keyed stacks whose spans overlap on one thread (what push/pop cannot express),
 * and a second thread. Prints the session's MARKERS state and lapse_missing() on its last line. */
#include <lapse.h>

#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg)
{
    (void)arg;
    LAPSE_SCOPE("thread.work");
    {
        LAPSE_SCOPE("thread.step");
    }
    return NULL;
}

int main(void)
{
    {
        LAPSE_SCOPE("outer");
        LAPSE_SCOPE("inner");
    }
    LAPSE_BEGIN("a");
    LAPSE_BEGIN("b");
    LAPSE_END("a"); /* b was never ended: closed with a, innermost first */
    int k1 = 1, k2 = 2;
    uint32_t x = lapse_intern("task.x"), y = lapse_intern("task.y");
    int tx = lapse_span_begin_keyed(&k1, x);
    int ty = lapse_span_begin_keyed(&k2, y);
    lapse_span_end_keyed(&k1, tx); /* x ends while y, begun after it, is open */
    lapse_span_end_keyed(&k2, ty);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) == 0)
        pthread_join(th, NULL);
    printf("markers=%d why=%s\n", (lapse_features() & LAPSE_FEATURE_MARKERS) != 0, lapse_missing());
    return 0;
}
