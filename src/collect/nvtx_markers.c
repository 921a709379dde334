/* MARKERS through NVTX v3 (third_party/nvtx3, header only): the first NVTX call
 * loads the injection library of NVTX_INJECTION64_PATH with dlopen; liblapse links
 * nothing more for it. */
#include "nvtx_markers.h"

#include "../core/names.h"

#include <nvtx3/nvToolsExt.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static nvtxDomainHandle_t domain;

static uint64_t range_start(uint32_t name)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = names_get(name);
    return nvtxDomainRangeStartEx(domain, &a);
}

static void range_end(uint64_t id) { nvtxDomainRangeEnd(domain, id); }

int nvtx_markers_start(core_span_hook *hook, char *why, size_t why_len)
{
    const char *path = getenv("NVTX_INJECTION64_PATH");
    if (!path || !*path) {
        snprintf(why, why_len, "no NVTX tool: NVTX_INJECTION64_PATH is not set (nsys and Kineto set it)");
        return -ENOENT;
    }
    if (!domain)
        domain = nvtxDomainCreateA("lapse");
    if (!domain) { /* the library did not load, or is no NVTX tool */
        snprintf(why, why_len, "no NVTX tool: NVTX_INJECTION64_PATH=%.200s did not attach", path);
        return -ENOENT;
    }
    hook->begin = range_start;
    hook->end = range_end;
    return 0;
}
