#include "wait_share.h"

#include <math.h>

double wait_share(uint64_t ticks, uint64_t wait)
{
    if (!ticks || wait > ticks)
        return -1.0;
    double n = (double)ticks, p = (double)wait / n, z2 = WAIT_Z * WAIT_Z;
    double centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    double half = WAIT_Z / (1.0 + z2 / n) * sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n));
    if (centre + half - p > WAIT_MAX_ERROR || p - (centre - half) > WAIT_MAX_ERROR)
        return -1.0;
    return p;
}
