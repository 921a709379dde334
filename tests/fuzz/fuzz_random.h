/* The fuzz drivers' random numbers: splitmix64 from a seed the driver prints, so a
 * run can be replayed. One state per driver program. */
#ifndef LAPSE_FUZZ_RANDOM_H
#define LAPSE_FUZZ_RANDOM_H

#include <stdint.h>

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static int one_in(unsigned n) { return below(n) == 0; }

#endif
