#include "format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

char *fmt_duration(char *buf, size_t n, double ns)
{
    if (!(ns >= 0.0) || !isfinite(ns)) { /* negative or NaN */
        snprintf(buf, n, "n/a");
        return buf;
    }
    if (ns > 0.0 && ns < 9.995) {
        snprintf(buf, n, "%.2fns", ns); /* per-unit costs can be fractions of a ns */
    } else if (ns < 999.5) {
        snprintf(buf, n, "%.0fns", ns);
    } else if (ns < 999950.0) {
        snprintf(buf, n, "%.1fus", ns / 1e3);
    } else if (ns < 999950000.0) {
        snprintf(buf, n, "%.1fms", ns / 1e6);
    } else if (ns < 9.995e9) {
        snprintf(buf, n, "%.2fs", ns / 1e9);
    } else if (ns < 59.95e9) {
        snprintf(buf, n, "%.1fs", ns / 1e9);
    } else {
        uint64_t s = (uint64_t)(ns / 1e9 + 0.5);
        if (s < 3600)
            snprintf(buf, n, "%um %us", (unsigned)(s / 60), (unsigned)(s % 60));
        else if (s < 86400)
            snprintf(buf, n, "%uh %um", (unsigned)(s / 3600), (unsigned)(s % 3600 / 60));
        else
            snprintf(buf, n, "%llud %uh", (unsigned long long)(s / 86400),
                     (unsigned)(s % 86400 / 3600));
    }
    return buf;
}

char *fmt_duration_signed(char *buf, size_t n, double ns)
{
    char tmp[FMT_BUF];
    fmt_duration(tmp, sizeof tmp, fabs(ns));
    snprintf(buf, n, "%s%s", ns > 0 ? "+" : ns < 0 ? "-" : "", tmp);
    return buf;
}

static void group(char *buf, size_t n, const char *digits, const char *rest, int neg)
{
    size_t len = strlen(digits);
    char out[64];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    for (size_t i = 0; i < len && o < sizeof out - 2; i++) {
        if (i && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = 0;
    snprintf(buf, n, "%s%s", out, rest);
}

char *fmt_count(char *buf, size_t n, uint64_t v)
{
    char d[32];
    snprintf(d, sizeof d, "%llu", (unsigned long long)v);
    group(buf, n, d, "", 0);
    return buf;
}

char *fmt_int(char *buf, size_t n, int64_t v)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char d[32];
    snprintf(d, sizeof d, "%llu", (unsigned long long)mag);
    group(buf, n, d, "", v < 0);
    return buf;
}

char *fmt_decimal(char *buf, size_t n, double v, int decimals)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "n/a");
        return buf;
    }
    if (fabs(v) >= 1e18) {
        snprintf(buf, n, "%.3g", v);
        return buf;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*f", decimals, fabs(v));
    char *dot = strchr(tmp, '.');
    char rest[32] = "";
    if (dot) {
        snprintf(rest, sizeof rest, "%s", dot);
        *dot = 0;
    }
    int neg = v < 0 && (strpbrk(tmp, "123456789") || strpbrk(rest, "123456789"));
    group(buf, n, tmp, rest, neg);
    return buf;
}

char *fmt_rate(char *buf, size_t n, double per_second)
{
    char tmp[FMT_BUF];
    fmt_decimal(tmp, sizeof tmp, per_second, fabs(per_second) >= 1e6 ? 0 : 1);
    snprintf(buf, n, "%s/s", tmp);
    return buf;
}

char *fmt_percent(char *buf, size_t n, double fraction)
{
    if (!(fraction >= 0.0) || !isfinite(fraction))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.1f%%", fraction * 100.0);
    return buf;
}

char *fmt_ratio(char *buf, size_t n, double ratio)
{
    if (!(ratio >= 0.0) || !isfinite(ratio))
        snprintf(buf, n, "n/a");
    else if (ratio >= 100.0)
        snprintf(buf, n, "x%.0f", ratio);
    else
        snprintf(buf, n, "x%.2f", ratio);
    return buf;
}

char *fmt_utc(char *buf, size_t n, uint64_t real_ns)
{
    if (!real_ns) {
        snprintf(buf, n, "unknown");
        return buf;
    }
    time_t t = (time_t)(real_ns / 1000000000ull);
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, n, "unknown");
        return buf;
    }
    strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

char *fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
    double b = (double)bytes;
    static const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    unsigned u = 0;
    while (b >= 999.95 && u < 5) {
        b /= 1000.0;
        u++;
    }
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", b, units[u]);
    return buf;
}
