/* A fake NVTX tool: the injection library that nsys or Kineto would be, loaded by the
 * NVTX headers from NVTX_INJECTION64_PATH through their documented entry
 * InitializeInjectionNvtx2. It takes the core functions of NVTX's CORE2 module and
 * appends one line per call to $FAKE_NVTX_LOG:
 *
 *   domain NAME                       nvtxDomainCreateA
 *   start ID TID DOMAIN NAME          nvtxDomainRangeStartEx (ID from 1, per process)
 *   end ID TID DOMAIN                 nvtxDomainRangeEnd
 *   push TID NAME / pop TID           nvtxDomainRangePushEx / Pop (lapse must use neither)
 *
 * With FAKE_NVTX_REFUSE=1 the tool declines to attach (its init returns 0). Without
 * FAKE_NVTX_LOG it records nothing: a tool that costs an id per range, for
 * bench/span_cost. */
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_DOMAINS 16

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;
static char domain_names[MAX_DOMAINS][64];
static int domain_count;

static const char *log_path; /* $FAKE_NVTX_LOG, read at init; NULL: log nothing (a benchmark's tool) */

static void log_line(const char *fmt, ...)
{
    const char *path = log_path;
    if (!path)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) < 0) {
    }
    close(fd);
}

static long tid(void) { return (long)syscall(SYS_gettid); }

static const char *domain_name(nvtxDomainHandle_t d)
{
    intptr_t i = (intptr_t)d - 1;
    return i >= 0 && i < domain_count ? domain_names[i] : "?";
}

static const char *message(const nvtxEventAttributes_t *a)
{
    if (!a || a->messageType != NVTX_MESSAGE_TYPE_ASCII || !a->message.ascii)
        return "(not ascii)";
    return a->message.ascii;
}

static nvtxDomainHandle_t fake_domain_create(const char *name)
{
    pthread_mutex_lock(&mu);
    intptr_t i = domain_count < MAX_DOMAINS ? domain_count++ : MAX_DOMAINS - 1;
    snprintf(domain_names[i], sizeof domain_names[i], "%s", name);
    pthread_mutex_unlock(&mu);
    log_line("domain %s", name);
    return (nvtxDomainHandle_t)(i + 1);
}

static nvtxRangeId_t fake_range_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    uint64_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    if (log_path)
        log_line("start %llu %ld %s %s", (unsigned long long)id, tid(), domain_name(d), message(a));
    return id;
}

static void fake_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    if (log_path)
        log_line("end %llu %ld %s", (unsigned long long)id, tid(), domain_name(d));
}

static int fake_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    log_line("push %ld %s", tid(), message(a));
    return 0;
}

static int fake_pop(nvtxDomainHandle_t d)
{
    (void)d;
    log_line("pop %ld", tid());
    return 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    if (getenv("FAKE_NVTX_REFUSE") && !strcmp(getenv("FAKE_NVTX_REFUSE"), "1"))
        return 0;
    log_path = getenv("FAKE_NVTX_LOG");
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
        size <= NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)fake_domain_create;
    *table[NVTX_CBID_CORE2_DomainRangeStartEx] = (NvtxFunctionPointer)fake_range_start;
    *table[NVTX_CBID_CORE2_DomainRangeEnd] = (NvtxFunctionPointer)fake_range_end;
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)fake_push;
    *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)fake_pop;
    log_line("init %ld", tid());
    return 1;
}
