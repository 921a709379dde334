/* Numbers as people read them: durations ("812ns", "9.4ms", "2h 31m"), counts with
 * thousands separators, rates, percentages, times of day. Each writes into buf and
 * returns it. */
#ifndef LAPSE_RENDER_FORMAT_H
#define LAPSE_RENDER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define FMT_BUF 48

char *fmt_duration(char *buf, size_t n, double ns);
/* "+1.2s" / "-3.4ms" / "0ns" */
char *fmt_duration_signed(char *buf, size_t n, double ns);
char *fmt_count(char *buf, size_t n, uint64_t v);
char *fmt_int(char *buf, size_t n, int64_t v);
/* v with thousands separators and `decimals` digits after the point. */
char *fmt_decimal(char *buf, size_t n, double v, int decimals);
/* "6,377.0/s" */
char *fmt_rate(char *buf, size_t n, double per_second);
/* fraction 0.829 -> "82.9%" */
char *fmt_percent(char *buf, size_t n, double fraction);
/* B/A ratio: "x1.32"; "n/a" when negative */
char *fmt_ratio(char *buf, size_t n, double ratio);
/* CLOCK_REALTIME ns -> "2026-11-30 11:39:26 UTC"; "unknown" for 0 */
char *fmt_utc(char *buf, size_t n, uint64_t real_ns);
/* Bytes with an SI unit: "408.7 MB". */
char *fmt_bytes(char *buf, size_t n, uint64_t bytes);

#endif
