/* A fake libcupti.so for the tests: the functions lapse resolves, and entries a test
 * program calls to "launch" work (fake_cupti_launch, _memcpy, _memset, _launch_via) or
 * make an API call that launches nothing (fake_cupti_call). Every call gets a new
 * correlation id; it fires the subscriber's API callback on the calling thread (entry
 * and exit) only when its (domain, callback id) is enabled, as CUPTI does (cuptiEnableDomain
 * enables a whole domain, cuptiEnableCallback one id; fake_cupti_callbacks counts the
 * calls that fired it). A launch then
 * queues the record that CUPTI would write for it (our declared layouts,
 * src/collect/cupti_api.h, which tests/abi checks against CUDA's), on a clock that is
 * CLOCK_MONOTONIC + 10^12 ns. Records reach the collector's buffer callback at
 * cuptiActivityFlushAll, or when a buffer is full.
 *
 * Environment: FAKE_CUPTI_FAIL=cuptiName makes that function fail (CUPTI_ERROR_UNKNOWN);
 * FAKE_CUPTI_OTHER_SUBSCRIBER=1 makes cuptiSubscribe answer as when another tool
 * subscribed; FAKE_CUPTI_VERSION sets what cuptiGetVersion answers (130001);
 * FAKE_CUPTI_MAX_CBID=N makes cuptiEnableCallback refuse ids from N on
 * (CUPTI_ERROR_INVALID_PARAMETER), as an older CUPTI refuses those of a later CUDA;
 * FAKE_CUPTI_DROPPED=N makes cuptiActivityGetNumDroppedRecords answer N for the queue
 * of the first buffer delivered (then 0: CUPTI resets the count when it is read). */
#include "../../src/collect/cupti_api.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))
#define FAKE_OFFSET_NS 1000000000000ull
#define ERROR_UNKNOWN 999
#define ERROR_INVALID_PARAMETER 1
#define MAX_CBID 1024

/* The API ids of the fake's own entries (cupti_runtime_cbid.h's numbers) */
#define CBID_cudaLaunchKernel_v7000 211
#define CBID_cudaMemcpyAsync_v3020 41
#define CBID_cudaMemsetAsync_v3020 51

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cupti_callback_fn callback;
static int subscribed, kinds;
static uint8_t enabled[3][MAX_CBID]; /* [domain][callback id] */
static uint64_t callbacks;           /* calls that fired the callback */
static int dropped_told;
static cupti_buffer_request_fn request;
static cupti_buffer_complete_fn complete;
static uint8_t *buffer;
static size_t buffer_size, buffer_used;
static uint32_t next_id;
static char *names[256];

static int fails(const char *name)
{
    const char *f = getenv("FAKE_CUPTI_FAIL");
    return f && strcmp(f, name) == 0;
}

static uint64_t fake_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + FAKE_OFFSET_NS;
}

static size_t record_size(int32_t kind)
{
    size_t n = kind == CUPTI_KIND_CONCURRENT_KERNEL ? sizeof(cupti_kernel_prefix)
               : kind == CUPTI_KIND_MEMCPY         ? sizeof(cupti_memcpy_prefix)
                                                   : sizeof(cupti_memset_prefix);
    return (n + 7) & ~(size_t)7;
}

/* with mu held */
static void deliver(void)
{
    if (!buffer)
        return;
    uint8_t *b = buffer;
    size_t size = buffer_size, used = buffer_used;
    buffer = NULL;
    buffer_used = 0;
    pthread_mutex_unlock(&mu); /* the collector calls GetNextRecord from it */
    complete(NULL, 0, b, size, used);
    pthread_mutex_lock(&mu);
}

static void queue(const void *record, int32_t kind)
{
    pthread_mutex_lock(&mu);
    size_t n = record_size(kind);
    if (buffer && buffer_used + n > buffer_size)
        deliver();
    if (!buffer && request) {
        size_t max = 0;
        request(&buffer, &buffer_size, &max);
        buffer_used = 0;
    }
    if (buffer && buffer_used + n <= buffer_size) {
        memset(buffer + buffer_used, 0, n);
        memcpy(buffer + buffer_used, record, n);
        buffer_used += n;
    }
    pthread_mutex_unlock(&mu);
}

static int known(int domain, uint32_t cbid)
{
    return (domain == CUPTI_DOMAIN_RUNTIME_API || domain == CUPTI_DOMAIN_DRIVER_API) &&
           cbid < MAX_CBID;
}

/* One API call: its correlation id, and its callback, entry and exit, on the calling
 * thread when its id is enabled. */
static uint32_t api_call(int domain, uint32_t cbid, const char *function)
{
    uint32_t id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    if (subscribed && known(domain, cbid) && enabled[domain][cbid]) {
        __atomic_add_fetch(&callbacks, 1, __ATOMIC_RELAXED);
        cupti_callback_data d = {.callback_site = CUPTI_SITE_API_ENTER, .function_name = function,
                                 .correlation_id = id};
        callback(NULL, domain, cbid, &d);
        d.callback_site = 1; /* exit */
        callback(NULL, domain, cbid, &d);
    }
    return id;
}

/* An API call that launches nothing (cudaStreamQuery: runtime, 132) */
API void fake_cupti_call(int domain, uint32_t cbid) { api_call(domain, cbid, "call"); }

API uint64_t fake_cupti_callbacks(void) { return __atomic_load_n(&callbacks, __ATOMIC_RELAXED); }

static const char *keep_name(const char *name)
{
    pthread_mutex_lock(&mu);
    const char *found = NULL;
    for (int i = 0; i < 256 && !found; i++) {
        if (!names[i])
            names[i] = strdup(name);
        if (names[i] && strcmp(names[i], name) == 0)
            found = names[i];
    }
    pthread_mutex_unlock(&mu);
    return found ? found : "";
}

/* A kernel launched through the API call (domain, cbid) */
API void fake_cupti_launch_via(int domain, uint32_t cbid, const char *name, uint32_t device,
                               uint32_t stream, uint64_t ns)
{
    uint32_t id = api_call(domain, cbid, name);
    if (!(kinds & (1 << CUPTI_KIND_CONCURRENT_KERNEL)))
        return;
    cupti_kernel_prefix k = {.kind = CUPTI_KIND_CONCURRENT_KERNEL, .device_id = device,
                             .stream_id = stream, .correlation_id = id, .name = keep_name(name)};
    k.start = fake_now();
    k.end = k.start + ns;
    k.completed = k.end;
    queue(&k, k.kind);
}

API void fake_cupti_launch(const char *name, uint32_t device, uint32_t stream, uint64_t ns)
{
    fake_cupti_launch_via(CUPTI_DOMAIN_RUNTIME_API, CBID_cudaLaunchKernel_v7000, name, device,
                          stream, ns);
}

API void fake_cupti_memcpy(uint32_t copy_kind, uint64_t bytes, uint32_t device, uint32_t stream,
                           uint64_t ns)
{
    uint32_t id = api_call(CUPTI_DOMAIN_RUNTIME_API, CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync_v3020");
    if (!(kinds & (1 << CUPTI_KIND_MEMCPY)))
        return;
    cupti_memcpy_prefix m = {.kind = CUPTI_KIND_MEMCPY, .copy_kind = (uint8_t)copy_kind,
                             .bytes = bytes, .device_id = device, .stream_id = stream,
                             .correlation_id = id};
    m.start = fake_now();
    m.end = m.start + ns;
    queue(&m, m.kind);
}

API void fake_cupti_memset(uint64_t bytes, uint32_t device, uint32_t stream, uint64_t ns)
{
    uint32_t id = api_call(CUPTI_DOMAIN_RUNTIME_API, CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync_v3020");
    if (!(kinds & (1 << CUPTI_KIND_MEMSET)))
        return;
    cupti_memset_prefix m = {.kind = CUPTI_KIND_MEMSET, .bytes = bytes, .device_id = device,
                             .stream_id = stream, .correlation_id = id};
    m.start = fake_now();
    m.end = m.start + ns;
    queue(&m, m.kind);
}

API cupti_result cuptiGetVersion(uint32_t *version)
{
    if (fails("cuptiGetVersion"))
        return ERROR_UNKNOWN;
    const char *v = getenv("FAKE_CUPTI_VERSION");
    *version = v && *v ? (uint32_t)strtoul(v, NULL, 10) : 130001u;
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiSubscribe(void **subscriber, cupti_callback_fn fn, void *userdata)
{
    (void)userdata;
    if (fails("cuptiSubscribe"))
        return ERROR_UNKNOWN;
    const char *other = getenv("FAKE_CUPTI_OTHER_SUBSCRIBER");
    if (subscribed || (other && *other == '1'))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED_;
    callback = fn;
    subscribed = 1;
    *subscriber = &subscribed;
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiUnsubscribe(void *subscriber)
{
    (void)subscriber;
    subscribed = 0;
    memset(enabled, 0, sizeof enabled); /* CUPTI drops the subscriber's callbacks */
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiEnableDomain(uint32_t enable, void *subscriber, int domain)
{
    (void)subscriber;
    if (enable && fails("cuptiEnableDomain"))
        return ERROR_UNKNOWN;
    if (!known(domain, 0))
        return ERROR_INVALID_PARAMETER;
    memset(enabled[domain], enable ? 1 : 0, sizeof enabled[domain]);
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiEnableCallback(uint32_t enable, void *subscriber, int domain, uint32_t cbid)
{
    (void)subscriber;
    if (enable && fails("cuptiEnableCallback"))
        return ERROR_UNKNOWN;
    const char *max = getenv("FAKE_CUPTI_MAX_CBID");
    if (!known(domain, cbid) || (max && *max && cbid >= strtoul(max, NULL, 10)))
        return ERROR_INVALID_PARAMETER;
    enabled[domain][cbid] = enable ? 1 : 0;
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiActivityGetNumDroppedRecords(void *context, uint32_t stream, size_t *dropped)
{
    (void)context;
    (void)stream;
    const char *n = getenv("FAKE_CUPTI_DROPPED");
    *dropped = n && *n && !__atomic_exchange_n(&dropped_told, 1, __ATOMIC_RELAXED)
                   ? (size_t)strtoull(n, NULL, 10)
                   : 0;
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiActivityRegisterCallbacks(cupti_buffer_request_fn req,
                                                cupti_buffer_complete_fn done)
{
    if (fails("cuptiActivityRegisterCallbacks"))
        return ERROR_UNKNOWN;
    request = req;
    complete = done;
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiActivityEnable(int kind)
{
    if (fails("cuptiActivityEnable"))
        return ERROR_UNKNOWN;
    kinds |= 1 << kind;
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiActivityDisable(int kind)
{
    kinds &= ~(1 << kind);
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    if (fails("cuptiActivityFlushAll"))
        return ERROR_UNKNOWN;
    pthread_mutex_lock(&mu);
    deliver();
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, cupti_record **record)
{
    size_t at = *record ? (size_t)((uint8_t *)*record - buf) + record_size((*record)->kind) : 0;
    if (at + sizeof(cupti_record) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED_;
    *record = (cupti_record *)(buf + at);
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiGetTimestamp(uint64_t *timestamp)
{
    if (fails("cuptiGetTimestamp"))
        return ERROR_UNKNOWN;
    *timestamp = fake_now();
    return CUPTI_SUCCESS_;
}

API cupti_result cuptiGetResultString(cupti_result result, const char **str)
{
    *str = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED_
               ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
               : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS_;
}
