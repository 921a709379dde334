/* The ACTIVITY collector (cupti.h). Attribution: a callback at the entry of each
 * runtime and driver API call that can launch work (cupti_api.h's CUPTI_*_CBIDS; on the
 * launching thread) keeps correlation id -> (thread, the
 * innermost open span's node) in a ring indexed by the id; the activity records,
 * which come later in CUPTI's buffers, are joined to it by their correlation id. A
 * span itself costs nothing more. */
#include "cupti.h"

#include "../core/clock.h"
#include "../core/core.h"
#include "cupti_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING_SLOTS (1u << 18) /* launches between an API call and its record's arrival */
#define MAX_NAMES 4096u       /* distinct kernel names; past it: OTHER_NAME */
#define OTHER_NAME "(kernel names past lapse's bound of 4096)"
#define BUFFER_BYTES (1u << 20)

/* A launch seen: both words carry the correlation id (high half), so that a slot
 * being rewritten reads as another id, never as a mix. */
typedef struct ring_slot {
    uint64_t id_thread, id_node;
    uint64_t launch_ns; /* CLOCK_MONOTONIC, at the API call's entry */
} ring_slot;

static struct {
    uint32_t state;
    int live; /* CUPTI enabled: records may still come */
    int yielded; /* cupti_yield let CUPTI go: cupti_resume takes it back */
    /* the yields (cupti_pauses): how many, their time in all, the first's start, the
     * last's end (CLOCK_MONOTONIC), the start of the one under way (0: none) */
    uint32_t pauses;
    uint64_t paused_ns, pause_first_ns, pause_last_end_ns, pause_since_ns;
    char why[512];
    cupti_api api;
    void *lib;
    void *subscriber;
    int enabled[3]; /* kernel, memcpy, memset kinds enabled */
    int64_t offset_ns; /* CLOCK_MONOTONIC - CUPTI's clock */
    pthread_mutex_t mu; /* the records and names: CUPTI's buffer thread vs take */
    cupti_activity *records;
    uint32_t cap, count;
    uint64_t dropped;       /* records past our bound */
    uint64_t cupti_dropped; /* records CUPTI dropped (no buffer space), in the note */
    char note[700];         /* why, and CUPTI's drops: what the file's note says */
    char **names;
    uint32_t name_count;
    uint32_t *name_slots; /* hash of names: index + 1, 0 empty (2 * MAX_NAMES) */
    ring_slot *ring;
} C = {.mu = PTHREAD_MUTEX_INITIALIZER};

static const int kinds[3] = {CUPTI_KIND_CONCURRENT_KERNEL, CUPTI_KIND_MEMCPY, CUPTI_KIND_MEMSET};

const char *cupti_why(void) { return C.why; }

uint32_t cupti_state(void) { return C.state; }

__attribute__((format(printf, 1, 2))) static int missing(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(C.why, sizeof C.why, fmt, ap);
    va_end(ap);
    C.state = CUPTI_MISSING;
    return -1;
}

static const char *result_text(cupti_result r)
{
    static __thread char buf[64];
    const char *s = NULL;
    if (C.api.GetResultString && C.api.GetResultString(r, &s) == CUPTI_SUCCESS_ && s)
        return s;
    snprintf(buf, sizeof buf, "CUPTI error %d", r);
    return buf;
}

/* ---- on the launching thread ---- */

static void on_api(void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
    (void)userdata;
    (void)domain;
    (void)cbid;
    const cupti_callback_data *d = cbdata;
    if (!d || d->callback_site != CUPTI_SITE_API_ENTER || !C.ring)
        return;
    uint32_t thread, node;
    if (core_innermost(&thread, &node) != 0)
        return;
    uint64_t id = (uint64_t)d->correlation_id << 32;
    ring_slot *s = &C.ring[d->correlation_id & (RING_SLOTS - 1)];
    __atomic_store_n(&s->id_node, 0, __ATOMIC_RELAXED); /* being rewritten: no id matches */
    __atomic_store_n(&s->launch_ns, core_mono_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&s->id_thread, id | thread, __ATOMIC_RELAXED);
    __atomic_store_n(&s->id_node, id | node, __ATOMIC_RELEASE);
}

/* ---- on CUPTI's buffer thread ---- */

static void on_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The index of name in the names (added when new); with mu held. */
static uint32_t intern(const char *name)
{
    if (!name)
        name = "";
    uint32_t mask = 2 * MAX_NAMES - 1, i = (uint32_t)name_hash(name) & mask;
    for (; C.name_slots[i]; i = (i + 1) & mask)
        if (strcmp(C.names[C.name_slots[i] - 1], name) == 0)
            return C.name_slots[i] - 1;
    if (C.name_count >= MAX_NAMES - 1)
        return intern(OTHER_NAME); /* found: it was added when the table had room */
    char *copy = strdup(name);
    if (!copy)
        return 0;
    C.names[C.name_count] = copy;
    C.name_slots[i] = ++C.name_count;
    return C.name_count - 1;
}

static uint64_t to_mono(uint64_t t)
{
    int64_t v = (int64_t)t + C.offset_ns;
    return v > 0 ? (uint64_t)v : 0;
}

static void keep(cupti_activity *a, uint32_t correlation)
{
    const ring_slot *s = &C.ring[correlation & (RING_SLOTS - 1)];
    uint64_t n = __atomic_load_n(&s->id_node, __ATOMIC_ACQUIRE);
    uint64_t t = __atomic_load_n(&s->id_thread, __ATOMIC_RELAXED);
    uint64_t launch = __atomic_load_n(&s->launch_ns, __ATOMIC_RELAXED);
    a->thread = a->node = CUPTI_NO_NODE;
    a->launch_ns = 0;
    if (correlation && n >> 32 == correlation && t >> 32 == correlation) {
        a->thread = (uint32_t)t;
        a->node = (uint32_t)n;
        a->launch_ns = launch;
    }
    a->start_ns = to_mono(a->start_ns);
    a->end_ns = to_mono(a->end_ns);
    if (a->end_ns < a->start_ns)
        a->end_ns = a->start_ns;
    if (C.count < C.cap)
        C.records[C.count++] = *a;
    else
        C.dropped++;
}

static void on_buffer_complete(void *context, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)size;
    pthread_mutex_lock(&C.mu);
    cupti_record *r = NULL;
    while (C.records && C.api.ActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS_ && r) {
        cupti_activity a = {0};
        if (r->kind == CUPTI_KIND_KERNEL || r->kind == CUPTI_KIND_CONCURRENT_KERNEL) {
            const cupti_kernel_prefix *k = (const void *)r;
            a = (cupti_activity){CUPTI_ACT_KERNEL, 0, k->device_id, k->stream_id,
                                 intern(k->name), 0, 0, k->start, k->end, 0, 0};
            keep(&a, k->correlation_id);
        } else if (r->kind == CUPTI_KIND_MEMCPY) {
            const cupti_memcpy_prefix *m = (const void *)r;
            a = (cupti_activity){CUPTI_ACT_MEMCPY, m->copy_kind, m->device_id, m->stream_id,
                                 0, 0, 0, m->start, m->end, m->bytes, 0};
            keep(&a, m->correlation_id);
        } else if (r->kind == CUPTI_KIND_MEMSET) {
            const cupti_memset_prefix *m = (const void *)r;
            a = (cupti_activity){CUPTI_ACT_MEMSET, 0, m->device_id, m->stream_id,
                                 0, 0, 0, m->start, m->end, m->bytes, 0};
            keep(&a, m->correlation_id);
        }
    }
    size_t lost = 0; /* CUPTI's count for this buffer's queue, reset by the call */
    if (C.api.ActivityGetNumDroppedRecords(context, stream, &lost) == CUPTI_SUCCESS_)
        C.cupti_dropped += lost;
    pthread_mutex_unlock(&C.mu);
    free(buffer);
}

/* ---- start, take, stop ---- */

static void *open_library(void)
{
    const char *path = getenv("LAPSE_CUPTI_PATH");
    if (path && *path) {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            missing("LAPSE_CUPTI_PATH=%s cannot be loaded: %s", path, dlerror());
        return h;
    }
    if (access("/dev/nvidiactl", F_OK) != 0) {
        missing("no NVIDIA GPU on this machine (no /dev/nvidiactl)");
        C.state = CUPTI_NO_DEVICE;
        return NULL;
    }
    static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    missing("no CUPTI library found (%s, .so.13, .so.12): set LAPSE_CUPTI_PATH to one", names[0]);
    return NULL;
}

static int resolve(void)
{
    static const struct {
        const char *name;
        size_t at;
    } syms[] = {
        {"cuptiGetVersion", offsetof(cupti_api, GetVersion)},
        {"cuptiSubscribe", offsetof(cupti_api, Subscribe)},
        {"cuptiUnsubscribe", offsetof(cupti_api, Unsubscribe)},
        {"cuptiEnableCallback", offsetof(cupti_api, EnableCallback)},
        {"cuptiActivityRegisterCallbacks", offsetof(cupti_api, ActivityRegisterCallbacks)},
        {"cuptiActivityEnable", offsetof(cupti_api, ActivityEnable)},
        {"cuptiActivityDisable", offsetof(cupti_api, ActivityDisable)},
        {"cuptiActivityFlushAll", offsetof(cupti_api, ActivityFlushAll)},
        {"cuptiActivityGetNextRecord", offsetof(cupti_api, ActivityGetNextRecord)},
        {"cuptiGetTimestamp", offsetof(cupti_api, GetTimestamp)},
        {"cuptiActivityGetNumDroppedRecords", offsetof(cupti_api, ActivityGetNumDroppedRecords)},
    };
    memset(&C.api, 0, sizeof C.api);
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *f = dlsym(C.lib, syms[i].name);
        if (!f)
            return missing("the CUPTI library has no %s", syms[i].name);
        memcpy((char *)&C.api + syms[i].at, &f, sizeof f);
    }
    void *f = dlsym(C.lib, "cuptiGetResultString"); /* optional: the reasons' wording */
    memcpy(&C.api.GetResultString, &f, sizeof f);
    return 0;
}

static void undo(void)
{
    for (int i = 0; i < 3; i++)
        if (C.enabled[i]) {
            C.api.ActivityDisable(kinds[i]);
            C.enabled[i] = 0;
        }
    if (C.subscriber) {
        C.api.Unsubscribe(C.subscriber); /* its callbacks with it */
        C.subscriber = NULL;
    }
}

static int failed(const char *call, cupti_result r)
{
    undo();
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED_)
        return missing("another CUPTI subscriber is active (torch.profiler, Nsight Systems, "
                       "...): %s: %s", call, result_text(r));
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES_)
        return missing("no permission to profile the GPU (NVreg_RestrictProfilingToAdminUsers): "
                       "%s: %s", call, result_text(r));
    return missing("%s failed: %s", call, result_text(r));
}

/* The callback on the calls that can launch work only (cupti_api.h), one id each. */
static int enable_callbacks(void)
{
#define ID(name, id) id,
    static const uint32_t runtime[] = {CUPTI_RUNTIME_CBIDS(ID)}, driver[] = {CUPTI_DRIVER_CBIDS(ID)};
#undef ID
    static const struct {
        int domain;
        const uint32_t *ids;
        size_t n;
        const char *what;
    } sets[] = {{CUPTI_DOMAIN_RUNTIME_API, runtime, sizeof runtime / sizeof *runtime, "runtime"},
                {CUPTI_DOMAIN_DRIVER_API, driver, sizeof driver / sizeof *driver, "driver"}};
    for (size_t s = 0; s < 2; s++)
        for (size_t i = 0; i < sets[s].n; i++) {
            cupti_result r = C.api.EnableCallback(1, C.subscriber, sets[s].domain, sets[s].ids[i]);
            if (r != CUPTI_SUCCESS_ && r != CUPTI_ERROR_INVALID_PARAMETER_) { /* that: a
                                                  call of a later CUDA than this CUPTI's */
                char call[80];
                snprintf(call, sizeof call, "cuptiEnableCallback(%s API id %u)", sets[s].what,
                         sets[s].ids[i]);
                return failed(call, r);
            }
        }
    return 0;
}

/* Registers the buffers, subscribes, enables the callbacks and kinds: 0, or -1 (undone,
 * the state CUPTI_MISSING with why). */
static int subscribe(void)
{
    cupti_result r;
    if ((r = C.api.ActivityRegisterCallbacks(on_buffer_request, on_buffer_complete)))
        return failed("cuptiActivityRegisterCallbacks", r);
    if ((r = C.api.Subscribe(&C.subscriber, on_api, NULL))) {
        C.subscriber = NULL;
        return failed("cuptiSubscribe", r);
    }
    if (enable_callbacks())
        return -1;
    uint64_t ts = 0, before = core_mono_ns();
    if ((r = C.api.GetTimestamp(&ts)))
        return failed("cuptiGetTimestamp", r);
    uint64_t after = core_mono_ns();
    C.offset_ns = (int64_t)(before + (after - before) / 2) - (int64_t)ts;
    for (int i = 0; i < 3; i++) {
        if ((r = C.api.ActivityEnable(kinds[i])))
            return failed("cuptiActivityEnable", r);
        C.enabled[i] = 1;
    }
    return 0;
}

void cupti_reset(void)
{
    pthread_mutex_lock(&C.mu);
    for (uint32_t i = 1; i < C.name_count; i++)
        free(C.names[i]);
    free(C.names);
    free(C.name_slots);
    free(C.records);
    C.names = NULL;
    C.name_slots = NULL;
    C.records = NULL;
    C.name_count = C.cap = C.count = 0;
    C.dropped = C.cupti_dropped = 0;
    C.state = CUPTI_OFF;
    C.yielded = 0;
    C.pauses = 0;
    C.paused_ns = C.pause_first_ns = C.pause_last_end_ns = C.pause_since_ns = 0;
    C.why[0] = 0;
    pthread_mutex_unlock(&C.mu);
}

int cupti_start(void)
{
    cupti_reset();
    if (!C.lib && !(C.lib = open_library()))
        return -1;
    if (resolve())
        return -1;
    uint32_t version = 0;
    cupti_result r = C.api.GetVersion(&version);
    if (r != CUPTI_SUCCESS_)
        return failed("cuptiGetVersion", r);
    if (version < CUPTI_API_VERSION_CUDA12)
        return missing("CUPTI API version %u is older than CUDA 12's (%u): its records are not "
                       "read", version, CUPTI_API_VERSION_CUDA12);
    const char *bound = getenv("LAPSE_MAX_ACTIVITIES");
    unsigned long cap = bound && *bound ? strtoul(bound, NULL, 10) : CUPTI_MAX_RECORDS_DEFAULT;
    if (cap == 0 || cap > (1ul << 24))
        cap = CUPTI_MAX_RECORDS_DEFAULT;
    pthread_mutex_lock(&C.mu);
    C.records = malloc(cap * sizeof *C.records);
    C.names = calloc(MAX_NAMES, sizeof *C.names);
    C.name_slots = calloc(2 * MAX_NAMES, sizeof *C.name_slots);
    if (!C.ring)
        C.ring = calloc(RING_SLOTS, sizeof *C.ring);
    int ok = C.records && C.names && C.name_slots && C.ring;
    if (ok) {
        C.cap = (uint32_t)cap;
        C.names[0] = "";
        C.name_count = 1;
        C.name_slots[(uint32_t)name_hash("") & (2 * MAX_NAMES - 1)] = 1;
    }
    pthread_mutex_unlock(&C.mu);
    if (!ok) {
        cupti_reset();
        return missing("out of memory for the activity records");
    }
    if (subscribe())
        return -1;
    C.state = CUPTI_COLLECTING;
    C.live = 1;
    return 0;
}

/* A flush that fails leaves records in CUPTI's buffers: the file says so (why, while
 * the state stays CUPTI_COLLECTING). */
static void flush(uint32_t flag)
{
    cupti_result r = C.api.ActivityFlushAll(flag);
    if (r != CUPTI_SUCCESS_ && !C.why[0])
        snprintf(C.why, sizeof C.why, "cuptiActivityFlushAll failed: %s (records CUPTI still "
                 "held are not in the file)", result_text(r));
}

/* The file's note, with mu held: why (a failed flush), and the records CUPTI itself
 * dropped, which are not the bound's (dropped_activities) and not in the file either. */
static const char *note(void)
{
    if (!C.cupti_dropped || C.state != CUPTI_COLLECTING)
        return C.why;
    snprintf(C.note, sizeof C.note, "%s%sCUPTI dropped %llu records for lack of buffer space "
             "(cuptiActivityGetNumDroppedRecords)", C.why, C.why[0] ? "; " : "",
             (unsigned long long)C.cupti_dropped);
    return C.note;
}

int cupti_take(cupti_taken *out)
{
    memset(out, 0, sizeof *out);
    if (C.live)
        flush(0); /* the completed buffers, delivered before it returns */
    pthread_mutex_lock(&C.mu);
    out->state = C.state;
    out->why = note();
    out->dropped = C.dropped;
    int rc = 0;
    if (C.count) {
        out->records = malloc(C.count * sizeof *out->records);
        out->names = malloc(C.name_count * sizeof *out->names);
        if (out->records && out->names) {
            memcpy(out->records, C.records, C.count * sizeof *out->records);
            memcpy(out->names, C.names, C.name_count * sizeof *out->names);
            out->count = C.count;
            out->name_count = C.name_count;
        } else {
            rc = -ENOMEM;
        }
    }
    pthread_mutex_unlock(&C.mu);
    if (rc)
        cupti_taken_free(out);
    return rc;
}

void cupti_taken_free(cupti_taken *t)
{
    free(t->records);
    free(t->names);
    t->records = NULL;
    t->names = NULL;
    t->count = t->name_count = 0;
}

void cupti_stop(void)
{
    if (!C.live)
        return;
    flush(CUPTI_FLUSH_FORCED);
    undo();
    flush(CUPTI_FLUSH_FORCED); /* what the disable completed */
    C.live = 0;
}

int cupti_yield(void)
{
    if (!C.live || C.state != CUPTI_COLLECTING)
        return 0;
    cupti_stop();
    C.yielded = 1;
    uint64_t now = core_mono_ns();
    if (!C.pauses++)
        C.pause_first_ns = now;
    C.pause_since_ns = now;
    return 1;
}

void cupti_pauses(cupti_pause_record *out)
{
    uint64_t open = C.pause_since_ns ? core_mono_ns() - C.pause_since_ns : 0;
    *out = (cupti_pause_record){C.pauses, C.paused_ns + open, C.pause_first_ns,
                                C.pause_since_ns ? 0 : C.pause_last_end_ns};
}

int cupti_resume(void)
{
    if (!C.yielded)
        return 0;
    C.yielded = 0;
    uint64_t now = core_mono_ns();
    C.paused_ns += now - C.pause_since_ns;
    C.pause_last_end_ns = now;
    C.pause_since_ns = 0;
    char why[sizeof C.why];
    snprintf(why, sizeof why, "%s", C.why);
    if (subscribe() == 0) {
        C.state = CUPTI_COLLECTING;
        C.live = 1;
        return 0;
    }
    /* the records kept are still the file's: collecting, with the reason in its note */
    char failure[sizeof C.why];
    snprintf(failure, sizeof failure, "%s", C.why);
    snprintf(C.why, sizeof C.why, "%s%scould not subscribe again after torch.profiler had it "
             "(nothing after it was collected): %.300s", why, why[0] ? "; " : "", failure);
    C.state = CUPTI_COLLECTING;
    return -1;
}

void cupti_fork_child(void)
{
    pthread_mutex_init(&C.mu, NULL); /* CUPTI's buffer thread, which may have held it, is
                                        not in the child */
    C.live = 0;
    C.subscriber = NULL;
    memset(C.enabled, 0, sizeof C.enabled);
    cupti_reset();
    missing("a forked child: CUDA and CUPTI do not carry over fork");
}
