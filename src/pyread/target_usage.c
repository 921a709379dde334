/* What a target of the external sampler used: CPU time, context switches and peak
 * RSS, for the header of its .lapse file. */
#include "sampler.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void sampler_usage_from_rusage(const struct rusage *ru, samples_file_meta *meta)
{
    meta->has_cpu = meta->has_ctx = 1;
    meta->cpu_user_ns = (uint64_t)ru->ru_utime.tv_sec * 1000000000ull + (uint64_t)ru->ru_utime.tv_usec * 1000ull;
    meta->cpu_sys_ns = (uint64_t)ru->ru_stime.tv_sec * 1000000000ull + (uint64_t)ru->ru_stime.tv_usec * 1000ull;
    meta->max_rss_kb = (uint64_t)ru->ru_maxrss;
    meta->ctx_voluntary = (int64_t)ru->ru_nvcsw;
    meta->ctx_involuntary = (int64_t)ru->ru_nivcsw;
}

/* utime and stime (fields 14 and 15 of /proc/PID/stat, in clock ticks), in ns. */
static int read_stat(pid_t pid, uint64_t *user_ns, uint64_t *sys_ns)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *end = strrchr(buf, ')'); /* the command name may hold anything */
    unsigned long long ut, st;
    long hz = sysconf(_SC_CLK_TCK);
    if (!end || hz <= 0 ||
        sscanf(end + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    *user_ns = ut * (1000000000ull / (unsigned long long)hz);
    *sys_ns = st * (1000000000ull / (unsigned long long)hz);
    return 0;
}

/* The context switches of one thread, and the peak RSS, from a status file. */
static int read_status(const char *path, long long *vol, long long *invol, long long *hwm)
{
    char line[256];
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    *vol = *invol = -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "voluntary_ctxt_switches: %lld", vol) == 1)
            continue;
        if (sscanf(line, "nonvoluntary_ctxt_switches: %lld", invol) == 1)
            continue;
        if (hwm)
            sscanf(line, "VmHWM: %lld kB", hwm);
    }
    fclose(f);
    return *vol >= 0 && *invol >= 0 ? 0 : -1;
}

void sampler_usage_of_pid(pid_t pid, samples_file_meta *meta)
{
    uint64_t user, sys;
    if (read_stat(pid, &user, &sys) == 0) {
        meta->has_cpu = 1;
        meta->cpu_user_ns = user;
        meta->cpu_sys_ns = sys;
    }
    char p[96];
    long long hwm = -1, vol, invol;
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    if (read_status(p, &vol, &invol, &hwm) == 0 && meta->has_cpu && hwm >= 0)
        meta->max_rss_kb = (uint64_t)hwm;
    /* each thread's status has its own switches: the process's are their sum (of the
     * threads alive at the end) */
    snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
    DIR *d = opendir(p);
    long long sum_vol = 0, sum_invol = 0;
    int threads = 0, failed = !d;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(p, sizeof p, "/proc/%d/task/%.20s/status", (int)pid, e->d_name);
        if (read_status(p, &vol, &invol, NULL) != 0) {
            failed = 1;
            break;
        }
        sum_vol += vol;
        sum_invol += invol;
        threads++;
    }
    if (d)
        closedir(d);
    if (!failed && threads) {
        meta->has_ctx = 1;
        meta->ctx_voluntary = sum_vol;
        meta->ctx_involuntary = sum_invol;
    }
}

void sampler_usage_since(pid_t pid, const samples_file_meta *start, samples_file_meta *meta)
{
    sampler_usage_of_pid(pid, meta);
    if (meta->has_cpu && (!start->has_cpu || meta->cpu_user_ns < start->cpu_user_ns ||
                          meta->cpu_sys_ns < start->cpu_sys_ns))
        meta->has_cpu = 0, meta->cpu_user_ns = meta->cpu_sys_ns = 0;
    else if (meta->has_cpu) {
        meta->cpu_user_ns -= start->cpu_user_ns;
        meta->cpu_sys_ns -= start->cpu_sys_ns;
    }
    /* the switches of threads that ended meanwhile left the sum: a difference that
     * goes back is unknown, not negative */
    if (meta->has_ctx && (!start->has_ctx || meta->ctx_voluntary < start->ctx_voluntary ||
                          meta->ctx_involuntary < start->ctx_involuntary))
        meta->has_ctx = 0;
    else if (meta->has_ctx) {
        meta->ctx_voluntary -= start->ctx_voluntary;
        meta->ctx_involuntary -= start->ctx_involuntary;
    }
}
