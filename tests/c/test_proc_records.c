/* The process sampler's bounded series, driven directly with made-up counters:
 * thousands of intervals fold into at most 1024 records with every byte kept, and
 * unreadable readings drop exactly the intervals they end or begin. */
#include "../../src/collect/proc_sampler.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fake[4];
static int fail_every; /* the n-th readings fail (0: never) */
static int readings;

static int fake_io(uint64_t out[4])
{
    readings++;
    fake[0] += 100; /* read_chars */
    fake[1] += 10;  /* write_chars */
    fake[2] += 1;
    fake[3] += 2;
    if (fail_every && readings % fail_every == 0)
        return -1;
    memcpy(out, fake, sizeof fake);
    return 0;
}

static void run(int ticks, int every, uint64_t *expect_intervals, store_proc_samples *out)
{
    memset(fake, 0, sizeof fake);
    readings = 0;
    fail_every = every;
    proc_sampler_reset(10);
    for (int i = 0; i < ticks; i++)
        proc_sampler_tick(fake_io, proc_rss_bytes);
    /* interval k (between readings k and k+1) counts when both readings worked */
    uint64_t ok = 0;
    for (int k = 1; k < ticks; k++)
        ok += !(every && (k % every == 0 || (k + 1) % every == 0));
    *expect_intervals = ok;
    CHECK(proc_sampler_take(out) == 0);
}

static void check_series(const store_proc_samples *ps, uint64_t intervals, uint64_t unreadable)
{
    uint64_t n = 0, rchar = 0, wchar = 0, rbytes = 0, wbytes = 0, quiet = 0;
    CHECK(ps->count <= 1024);
    CHECK(ps->per_record && (ps->per_record & (ps->per_record - 1)) == 0);
    for (uint32_t i = 0; i < ps->count; i++) {
        const store_proc_sample *r = &ps->records[i];
        CHECK(r->intervals >= 1 && r->intervals <= ps->per_record);
        CHECK(r->end_ns > r->start_ns);
        if (i)
            CHECK(r->start_ns >= ps->records[i - 1].end_ns);
        n += r->intervals;
        rchar += r->read_chars;
        wchar += r->write_chars;
        rbytes += r->read_bytes;
        wbytes += r->write_bytes;
        quiet += r->quiet_chars;
    }
    CHECK_EQ_U64(n, intervals);
    CHECK_EQ_U64(rchar, 100 * intervals);
    CHECK_EQ_U64(wchar, 10 * intervals);
    CHECK_EQ_U64(rbytes, intervals);
    CHECK_EQ_U64(wbytes, 2 * intervals);
    CHECK_EQ_U64(quiet, 110 * intervals); /* no session: no phase was ever open */
    CHECK_EQ_U64(ps->unreadable, unreadable);
}

int main(void)
{
    store_proc_samples ps;
    uint64_t intervals;

    run(3000, 0, &intervals, &ps); /* 2999 intervals: the resolution halves twice */
    printf("3000 readings: %u records of up to %u intervals\n", ps.count, ps.per_record);
    CHECK_EQ_U64(ps.per_record, 4);
    check_series(&ps, intervals, 0);
    free(ps.records);

    run(5000, 7, &intervals, &ps); /* every 7th reading fails: gaps end records early */
    printf("5000 readings, every 7th unreadable: %u records, %llu intervals kept\n", ps.count,
           (unsigned long long)intervals);
    check_series(&ps, intervals, 4999 - intervals);
    free(ps.records);

    run(1, 0, &intervals, &ps); /* one reading: no interval yet */
    CHECK_EQ_U64(ps.count, 0);
    CHECK_EQ_U64(ps.interval_ms, 10);
    free(ps.records);
    return check_done("test_proc_records");
}
