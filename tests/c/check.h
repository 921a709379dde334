/* A minimal test harness: CHECK records a failure and carries on; check_done
 * prints "N passed, N failed" and returns the exit status. */
#ifndef LAPSE_TESTS_CHECK_H
#define LAPSE_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            check_passed++;                                                  \
        } else {                                                             \
            check_failed++;                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                    \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                   \
    do {                                                                     \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ == b_) {                                                      \
            check_passed++;                                                  \
        } else {                                                             \
            check_failed++;                                                  \
            fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, __LINE__, \
                    #a, a_, #b, b_);                                         \
        }                                                                    \
    } while (0)

#define CHECK_U64(a, b) CHECK_EQ_U64(a, b)

#define CHECK_STR(got, want)                                                 \
    do {                                                                     \
        const char *g_ = (got), *w_ = (want);                                \
        if (!strcmp(g_, w_)) {                                               \
            check_passed++;                                                  \
        } else {                                                             \
            check_failed++;                                                  \
            fprintf(stderr, "%s:%d: got \"%s\", expected \"%s\"\n", __FILE__, __LINE__, g_, w_); \
        }                                                                    \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
