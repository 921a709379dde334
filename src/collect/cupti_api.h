/* Our own declarations of the part of NVIDIA's CUPTI ABI that lapse uses (the
 * callback and activity APIs, and the leading fields of the records it reads).
 * CUDA's headers are never included in src/: tests/abi/test_cupti_abi.c checks every
 * offset and size here against the toolkit's cupti_activity.h where one is installed.
 *
 * Records: CUPTI fills activity buffers with packed records aligned to 8 bytes. The
 * kernel, memcpy and memset records grew between versions (CUDA 12: Kernel9, Memcpy5,
 * Memset4; CUDA 13: Kernel10, Memcpy6, Memset4), always at their end: the prefixes
 * declared here (kind .. name, kind .. correlationId) are the same in every version
 * CUDA 12 and 13 return, which cupti_start checks by the library's API version. */
#ifndef LAPSE_COLLECT_CUPTI_API_H
#define LAPSE_COLLECT_CUPTI_API_H

#include <stddef.h>
#include <stdint.h>

typedef int cupti_result; /* CUptiResult */
#define CUPTI_SUCCESS_ 0
#define CUPTI_ERROR_MAX_LIMIT_REACHED_ 12
#define CUPTI_ERROR_INSUFFICIENT_PRIVILEGES_ 35
#define CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED_ 39

/* CUpti_ActivityKind values */
#define CUPTI_KIND_MEMCPY 1
#define CUPTI_KIND_MEMSET 2
#define CUPTI_KIND_KERNEL 3
#define CUPTI_KIND_CONCURRENT_KERNEL 10

/* CUpti_CallbackDomain, CUpti_ApiCallbackSite */
#define CUPTI_DOMAIN_DRIVER_API 1
#define CUPTI_DOMAIN_RUNTIME_API 2
#define CUPTI_SITE_API_ENTER 0

/* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: flush records of kernels not yet complete too */
#define CUPTI_FLUSH_FORCED 1u

/* The first CUPTI API version (cuptiGetVersion) of CUDA 12.0, whose records the
 * prefixes below match, as every later one's does. */
#define CUPTI_API_VERSION_CUDA12 18u

typedef struct cupti_callback_data { /* CUpti_CallbackData */
    int callback_site;               /* CUpti_ApiCallbackSite */
    const char *function_name;
    const void *function_params;
    void *function_return_value;
    const char *symbol_name;
    void *context;
    uint32_t context_uid;
    uint64_t *correlation_data;
    uint32_t correlation_id;
} cupti_callback_data;

typedef struct __attribute__((packed, aligned(8))) cupti_record { /* CUpti_Activity */
    int32_t kind;
} cupti_record;

/* The leading fields of CUpti_ActivityKernel4 .. 10 (kind .. name). */
typedef struct __attribute__((packed, aligned(8))) cupti_kernel_prefix {
    int32_t kind;
    uint8_t cache_config;
    uint8_t shared_memory_config;
    uint16_t registers_per_thread;
    int32_t partitioned_global_cache_requested;
    int32_t partitioned_global_cache_executed;
    uint64_t start, end, completed;
    uint32_t device_id, context_id, stream_id;
    int32_t grid[3], block[3];
    int32_t static_shared_memory, dynamic_shared_memory;
    uint32_t local_memory_per_thread, local_memory_total;
    uint32_t correlation_id;
    int64_t grid_id;
    const char *name;
} cupti_kernel_prefix;

/* The leading fields of CUpti_ActivityMemcpy5 and 6 (kind .. correlationId). */
typedef struct __attribute__((packed, aligned(8))) cupti_memcpy_prefix {
    int32_t kind;
    uint8_t copy_kind, src_kind, dst_kind, flags;
    uint64_t bytes, start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
} cupti_memcpy_prefix;

/* The leading fields of CUpti_ActivityMemset4 (kind .. correlationId). */
typedef struct __attribute__((packed, aligned(8))) cupti_memset_prefix {
    int32_t kind;
    uint32_t value;
    uint64_t bytes, start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
} cupti_memset_prefix;

typedef void (*cupti_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
typedef void (*cupti_buffer_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*cupti_buffer_complete_fn)(void *context, uint32_t stream_id, uint8_t *buffer,
                                         size_t size, size_t valid_size);

/* The functions lapse resolves in libcupti (dlsym by these names). */
typedef struct cupti_api {
    cupti_result (*GetVersion)(uint32_t *version);
    cupti_result (*Subscribe)(void **subscriber, cupti_callback_fn fn, void *userdata);
    cupti_result (*Unsubscribe)(void *subscriber);
    cupti_result (*EnableDomain)(uint32_t enable, void *subscriber, int domain);
    cupti_result (*ActivityRegisterCallbacks)(cupti_buffer_request_fn request,
                                              cupti_buffer_complete_fn complete);
    cupti_result (*ActivityEnable)(int kind);
    cupti_result (*ActivityDisable)(int kind);
    cupti_result (*ActivityFlushAll)(uint32_t flag);
    cupti_result (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid_size, cupti_record **record);
    cupti_result (*GetTimestamp)(uint64_t *timestamp);
    cupti_result (*GetResultString)(cupti_result result, const char **str);
} cupti_api;

#endif
