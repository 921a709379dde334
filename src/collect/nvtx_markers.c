/* MARKERS: every span is also an NVTX range (start/end in the "lapse" domain, so
 * that spans which overlap on one thread, asyncio tasks, stay correct), for the NVTX
 * tool that captures the process (nsys, Kineto: an injection library named by
 * NVTX_INJECTION64_PATH). A collector whose only work is its span hook, through
 * NVTX v3 (third_party/nvtx3, header only): the first NVTX call loads the injection
 * library with dlopen; liblapse links nothing more for it. */
#include "collector.h"

#include "../core/names.h"
#include "lapse.h"

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

/* Attaches to the process's NVTX tool: 0; -ENOENT when none is named (nothing to
 * send ranges to, as on a machine without nsys: no caveat); -ENOEXEC when the tool
 * named does not attach (a caveat). Without a tool MARKERS would cost every span
 * and record nothing. */
static int markers_start(const collect_config *cfg, char *why, size_t why_len)
{
    (void)cfg;
    const char *path = getenv("NVTX_INJECTION64_PATH");
    if (!path || !*path) {
        snprintf(why, why_len, "no NVTX tool: NVTX_INJECTION64_PATH is not set (nsys and Kineto set it)");
        return -ENOENT;
    }
    if (!domain)
        domain = nvtxDomainCreateA("lapse");
    if (!domain) { /* the library did not load, or is no NVTX tool */
        snprintf(why, why_len, "no NVTX tool: NVTX_INJECTION64_PATH=%.200s did not attach", path);
        return -ENOEXEC;
    }
    return 0;
}

const collector collect_markers = {"markers", LAPSE_FEATURE_MARKERS, markers_start, NULL, NULL,
                                   NULL, NULL, {range_start, range_end}};
