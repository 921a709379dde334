/* The CPU sampler's waits between ticks are memoryless (exponential, of mean the
 * period): a tick may come at any time after the last one. A wait that never came
 * within half a period of the last tick (uniform in [0.5, 1.5] x the period) made
 * phases that start when a tick ends, and last less than half a period, read too
 * much wait on busy CPUs (docs/report.md, "wait%"). */
#include "../../src/collect/cpu_sampler.h"
#include "check.h"

#include <math.h>
#include <stdio.h>

int main(void)
{
    const uint64_t period = 1000000; /* 1 ms */
    const int n = 200000;
    cpu_sampler_reset(1);
    double sum = 0;
    int below_half = 0, above_1 = 0, above_half_and_1_5 = 0, above_half = 0;
    for (int i = 0; i < n; i++) {
        uint64_t w = cpu_sampler_next_wait_ns();
        CHECK(w <= 20 * period);
        sum += (double)w;
        below_half += w < period / 2;
        above_1 += w > period;
        if (w > period / 2) {
            above_half++;
            above_half_and_1_5 += w > period + period / 2;
        }
    }
    double mean = sum / n / (double)period;
    double p_below_half = (double)below_half / n;
    double p_above_1 = (double)above_1 / n;
    /* memoryless: having waited half a period, the chance of one more period is
     * the chance of one period from the start */
    double p_more = (double)above_half_and_1_5 / above_half;
    printf("mean %.4f periods, P(< 0.5) %.4f (%.4f), P(> 1) %.4f, P(> 1.5 | > 0.5) %.4f (%.4f)\n",
           mean, p_below_half, 1 - exp(-0.5), p_above_1, p_more, exp(-1.0));
    CHECK(fabs(mean - 1.0) < 0.01);
    CHECK(fabs(p_below_half - (1 - exp(-0.5))) < 0.007);
    CHECK(fabs(p_above_1 - exp(-1.0)) < 0.007);
    CHECK(fabs(p_more - exp(-1.0)) < 0.007);
    return check_done("test_cpu_sampler_wait");
}
