/* Our CUPTI declarations (src/collect/cupti_api.h) against the toolkit's headers:
 * every offset and size we declare equals CUDA's. Built only where CMake finds
 * cupti_activity.h (LAPSE_CUPTI_INCLUDE); elsewhere the test is a skip that says so. */
#include "../../src/collect/cupti_api.h"

#include <stdio.h>

#ifdef LAPSE_HAVE_CUPTI_HEADERS
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>

#define SAME_FIELD(ours, o, theirs, t)                                                       \
    _Static_assert(offsetof(ours, o) == offsetof(theirs, t), #ours "." #o " offset");        \
    _Static_assert(sizeof(((ours *)0)->o) == sizeof(((theirs *)0)->t), #ours "." #o " size")

SAME_FIELD(cupti_record, kind, CUpti_Activity, kind);
_Static_assert(sizeof(cupti_record) == sizeof(CUpti_Activity), "CUpti_Activity size");

SAME_FIELD(cupti_kernel_prefix, kind, CUpti_ActivityKernel10, kind);
SAME_FIELD(cupti_kernel_prefix, cache_config, CUpti_ActivityKernel10, cacheConfig);
SAME_FIELD(cupti_kernel_prefix, shared_memory_config, CUpti_ActivityKernel10, sharedMemoryConfig);
SAME_FIELD(cupti_kernel_prefix, registers_per_thread, CUpti_ActivityKernel10, registersPerThread);
SAME_FIELD(cupti_kernel_prefix, partitioned_global_cache_requested, CUpti_ActivityKernel10,
           partitionedGlobalCacheRequested);
SAME_FIELD(cupti_kernel_prefix, partitioned_global_cache_executed, CUpti_ActivityKernel10,
           partitionedGlobalCacheExecuted);
SAME_FIELD(cupti_kernel_prefix, start, CUpti_ActivityKernel10, start);
SAME_FIELD(cupti_kernel_prefix, end, CUpti_ActivityKernel10, end);
SAME_FIELD(cupti_kernel_prefix, completed, CUpti_ActivityKernel10, completed);
SAME_FIELD(cupti_kernel_prefix, device_id, CUpti_ActivityKernel10, deviceId);
SAME_FIELD(cupti_kernel_prefix, context_id, CUpti_ActivityKernel10, contextId);
SAME_FIELD(cupti_kernel_prefix, stream_id, CUpti_ActivityKernel10, streamId);
SAME_FIELD(cupti_kernel_prefix, grid[0], CUpti_ActivityKernel10, gridX);
SAME_FIELD(cupti_kernel_prefix, grid[2], CUpti_ActivityKernel10, gridZ);
SAME_FIELD(cupti_kernel_prefix, block[0], CUpti_ActivityKernel10, blockX);
SAME_FIELD(cupti_kernel_prefix, block[2], CUpti_ActivityKernel10, blockZ);
SAME_FIELD(cupti_kernel_prefix, static_shared_memory, CUpti_ActivityKernel10, staticSharedMemory);
SAME_FIELD(cupti_kernel_prefix, dynamic_shared_memory, CUpti_ActivityKernel10, dynamicSharedMemory);
SAME_FIELD(cupti_kernel_prefix, local_memory_per_thread, CUpti_ActivityKernel10, localMemoryPerThread);
SAME_FIELD(cupti_kernel_prefix, local_memory_total, CUpti_ActivityKernel10, localMemoryTotal);
SAME_FIELD(cupti_kernel_prefix, correlation_id, CUpti_ActivityKernel10, correlationId);
SAME_FIELD(cupti_kernel_prefix, grid_id, CUpti_ActivityKernel10, gridId);
SAME_FIELD(cupti_kernel_prefix, name, CUpti_ActivityKernel10, name);
_Static_assert(sizeof(cupti_kernel_prefix) <= sizeof(CUpti_ActivityKernel10), "kernel prefix size");

SAME_FIELD(cupti_memcpy_prefix, kind, CUpti_ActivityMemcpy6, kind);
SAME_FIELD(cupti_memcpy_prefix, copy_kind, CUpti_ActivityMemcpy6, copyKind);
SAME_FIELD(cupti_memcpy_prefix, src_kind, CUpti_ActivityMemcpy6, srcKind);
SAME_FIELD(cupti_memcpy_prefix, dst_kind, CUpti_ActivityMemcpy6, dstKind);
SAME_FIELD(cupti_memcpy_prefix, flags, CUpti_ActivityMemcpy6, flags);
SAME_FIELD(cupti_memcpy_prefix, bytes, CUpti_ActivityMemcpy6, bytes);
SAME_FIELD(cupti_memcpy_prefix, start, CUpti_ActivityMemcpy6, start);
SAME_FIELD(cupti_memcpy_prefix, end, CUpti_ActivityMemcpy6, end);
SAME_FIELD(cupti_memcpy_prefix, device_id, CUpti_ActivityMemcpy6, deviceId);
SAME_FIELD(cupti_memcpy_prefix, context_id, CUpti_ActivityMemcpy6, contextId);
SAME_FIELD(cupti_memcpy_prefix, stream_id, CUpti_ActivityMemcpy6, streamId);
SAME_FIELD(cupti_memcpy_prefix, correlation_id, CUpti_ActivityMemcpy6, correlationId);
_Static_assert(sizeof(cupti_memcpy_prefix) <= sizeof(CUpti_ActivityMemcpy6), "memcpy prefix size");

SAME_FIELD(cupti_memset_prefix, kind, CUpti_ActivityMemset4, kind);
SAME_FIELD(cupti_memset_prefix, value, CUpti_ActivityMemset4, value);
SAME_FIELD(cupti_memset_prefix, bytes, CUpti_ActivityMemset4, bytes);
SAME_FIELD(cupti_memset_prefix, start, CUpti_ActivityMemset4, start);
SAME_FIELD(cupti_memset_prefix, end, CUpti_ActivityMemset4, end);
SAME_FIELD(cupti_memset_prefix, device_id, CUpti_ActivityMemset4, deviceId);
SAME_FIELD(cupti_memset_prefix, context_id, CUpti_ActivityMemset4, contextId);
SAME_FIELD(cupti_memset_prefix, stream_id, CUpti_ActivityMemset4, streamId);
SAME_FIELD(cupti_memset_prefix, correlation_id, CUpti_ActivityMemset4, correlationId);
_Static_assert(sizeof(cupti_memset_prefix) <= sizeof(CUpti_ActivityMemset4), "memset prefix size");

SAME_FIELD(cupti_callback_data, callback_site, CUpti_CallbackData, callbackSite);
SAME_FIELD(cupti_callback_data, function_name, CUpti_CallbackData, functionName);
SAME_FIELD(cupti_callback_data, function_params, CUpti_CallbackData, functionParams);
SAME_FIELD(cupti_callback_data, function_return_value, CUpti_CallbackData, functionReturnValue);
SAME_FIELD(cupti_callback_data, symbol_name, CUpti_CallbackData, symbolName);
SAME_FIELD(cupti_callback_data, context, CUpti_CallbackData, context);
SAME_FIELD(cupti_callback_data, context_uid, CUpti_CallbackData, contextUid);
SAME_FIELD(cupti_callback_data, correlation_data, CUpti_CallbackData, correlationData);
SAME_FIELD(cupti_callback_data, correlation_id, CUpti_CallbackData, correlationId);
_Static_assert(sizeof(cupti_callback_data) == sizeof(CUpti_CallbackData), "CUpti_CallbackData size");

_Static_assert(CUPTI_SUCCESS_ == CUPTI_SUCCESS, "CUPTI_SUCCESS");
_Static_assert(CUPTI_ERROR_INVALID_PARAMETER_ == CUPTI_ERROR_INVALID_PARAMETER, "INVALID_PARAMETER");
_Static_assert(CUPTI_ERROR_MAX_LIMIT_REACHED_ == CUPTI_ERROR_MAX_LIMIT_REACHED, "MAX_LIMIT");
_Static_assert(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES_ == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "PRIV");
_Static_assert(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED_ ==
                   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "MULTIPLE_SUBSCRIBERS");
_Static_assert(CUPTI_KIND_MEMCPY == CUPTI_ACTIVITY_KIND_MEMCPY, "KIND_MEMCPY");
_Static_assert(CUPTI_KIND_MEMSET == CUPTI_ACTIVITY_KIND_MEMSET, "KIND_MEMSET");
_Static_assert(CUPTI_KIND_KERNEL == CUPTI_ACTIVITY_KIND_KERNEL, "KIND_KERNEL");
_Static_assert(CUPTI_KIND_CONCURRENT_KERNEL == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "KIND_CK");
_Static_assert(CUPTI_DOMAIN_DRIVER_API == CUPTI_CB_DOMAIN_DRIVER_API, "DRIVER_API");
_Static_assert(CUPTI_DOMAIN_RUNTIME_API == CUPTI_CB_DOMAIN_RUNTIME_API, "RUNTIME_API");
_Static_assert(CUPTI_SITE_API_ENTER == CUPTI_API_ENTER, "API_ENTER");
_Static_assert(CUPTI_FLUSH_FORCED == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, "FLUSH_FORCED");
_Static_assert(CUPTI_API_VERSION >= CUPTI_API_VERSION_CUDA12, "toolkit older than CUDA 12");

/* every callback id lapse enables: its name and number are CUDA's */
#define SAME_RUNTIME_ID(name, id) \
    _Static_assert((id) == CUPTI_RUNTIME_TRACE_CBID_##name, "runtime callback id " #name);
#define SAME_DRIVER_ID(name, id) \
    _Static_assert((id) == CUPTI_DRIVER_TRACE_CBID_##name, "driver callback id " #name);
CUPTI_RUNTIME_CBIDS(SAME_RUNTIME_ID)
CUPTI_DRIVER_CBIDS(SAME_DRIVER_ID)

#define ONE(name, id) +1
int main(void)
{
    printf("cupti ABI: our declarations match %s (CUPTI API version %d), and the %d runtime "
           "and %d driver callback ids\n", LAPSE_CUPTI_HEADER, CUPTI_API_VERSION,
           0 CUPTI_RUNTIME_CBIDS(ONE), 0 CUPTI_DRIVER_CBIDS(ONE));
    return 0;
}
#else
int main(void)
{
    printf("SKIPPED: no cupti_activity.h found (CUDA toolkit): our CUPTI declarations are not "
           "checked here\n");
    return 77;
}
#endif
