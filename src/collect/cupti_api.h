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
#define CUPTI_ERROR_INVALID_PARAMETER_ 1
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

/* The API calls whose entry the callback sees (cuptiEnableCallback, one id each): those
 * that can produce a kernel, memcpy or memset record, every form (kernel launches,
 * graph launches, copies, sets; not cudaLaunchHostFunc, which runs no kernel). Names and
 * numbers of CUDA 13's cupti_runtime_cbid.h and cupti_driver_cbid.h (CUPTI_RUNTIME_TRACE_
 * CBID_<name>, CUPTI_DRIVER_TRACE_CBID_<name>; ids are never renumbered), each checked by
 * tests/abi/test_cupti_abi.c. Every other call (cudaStreamQuery, cudaEventQuery,
 * cudaGetDevice ...) gets no callback and pays nothing. An older CUPTI answers an id it
 * does not know (one of a later CUDA: the BatchAsync ids of 12.8 and 13.0) with
 * CUPTI_ERROR_INVALID_PARAMETER: its CUDA has no such call, and lapse goes on. */
#define CUPTI_RUNTIME_CBIDS(X) \
    X(cudaLaunch_v3020, 13) X(cudaMemcpy_v3020, 31) X(cudaMemcpy2D_v3020, 32) \
    X(cudaMemcpyToArray_v3020, 33) X(cudaMemcpy2DToArray_v3020, 34) \
    X(cudaMemcpyFromArray_v3020, 35) X(cudaMemcpy2DFromArray_v3020, 36) \
    X(cudaMemcpyArrayToArray_v3020, 37) X(cudaMemcpy2DArrayToArray_v3020, 38) \
    X(cudaMemcpyToSymbol_v3020, 39) X(cudaMemcpyFromSymbol_v3020, 40) \
    X(cudaMemcpyAsync_v3020, 41) X(cudaMemcpyToArrayAsync_v3020, 42) \
    X(cudaMemcpyFromArrayAsync_v3020, 43) X(cudaMemcpy2DAsync_v3020, 44) \
    X(cudaMemcpy2DToArrayAsync_v3020, 45) X(cudaMemcpy2DFromArrayAsync_v3020, 46) \
    X(cudaMemcpyToSymbolAsync_v3020, 47) X(cudaMemcpyFromSymbolAsync_v3020, 48) \
    X(cudaMemset_v3020, 49) X(cudaMemset2D_v3020, 50) X(cudaMemsetAsync_v3020, 51) \
    X(cudaMemset2DAsync_v3020, 52) X(cudaMemset3D_v3020, 142) X(cudaMemset3DAsync_v3020, 143) \
    X(cudaMemcpy3D_v3020, 144) X(cudaMemcpy3DAsync_v3020, 145) X(cudaMemcpyPeer_v4000, 160) \
    X(cudaMemcpyPeerAsync_v4000, 161) X(cudaMemcpy3DPeer_v4000, 162) \
    X(cudaMemcpy3DPeerAsync_v4000, 163) X(cudaLaunchKernel_v7000, 211) \
    X(cudaLaunch_ptsz_v7000, 213) X(cudaLaunchKernel_ptsz_v7000, 214) \
    X(cudaMemcpy_ptds_v7000, 215) X(cudaMemcpy2D_ptds_v7000, 216) \
    X(cudaMemcpyToArray_ptds_v7000, 217) X(cudaMemcpy2DToArray_ptds_v7000, 218) \
    X(cudaMemcpyFromArray_ptds_v7000, 219) X(cudaMemcpy2DFromArray_ptds_v7000, 220) \
    X(cudaMemcpyArrayToArray_ptds_v7000, 221) X(cudaMemcpy2DArrayToArray_ptds_v7000, 222) \
    X(cudaMemcpyToSymbol_ptds_v7000, 223) X(cudaMemcpyFromSymbol_ptds_v7000, 224) \
    X(cudaMemcpyAsync_ptsz_v7000, 225) X(cudaMemcpyToArrayAsync_ptsz_v7000, 226) \
    X(cudaMemcpyFromArrayAsync_ptsz_v7000, 227) X(cudaMemcpy2DAsync_ptsz_v7000, 228) \
    X(cudaMemcpy2DToArrayAsync_ptsz_v7000, 229) X(cudaMemcpy2DFromArrayAsync_ptsz_v7000, 230) \
    X(cudaMemcpyToSymbolAsync_ptsz_v7000, 231) X(cudaMemcpyFromSymbolAsync_ptsz_v7000, 232) \
    X(cudaMemset_ptds_v7000, 233) X(cudaMemset2D_ptds_v7000, 234) \
    X(cudaMemsetAsync_ptsz_v7000, 235) X(cudaMemset2DAsync_ptsz_v7000, 236) \
    X(cudaMemset3D_ptds_v7000, 243) X(cudaMemset3DAsync_ptsz_v7000, 244) \
    X(cudaMemcpy3D_ptds_v7000, 245) X(cudaMemcpy3DAsync_ptsz_v7000, 246) \
    X(cudaMemcpy3DPeer_ptds_v7000, 249) X(cudaMemcpy3DPeerAsync_ptsz_v7000, 250) \
    X(cudaLaunchCooperativeKernel_v9000, 269) X(cudaLaunchCooperativeKernel_ptsz_v9000, 270) \
    X(cudaLaunchCooperativeKernelMultiDevice_v9000, 272) X(cudaGraphLaunch_v10000, 311) \
    X(cudaGraphLaunch_ptsz_v10000, 312) X(cudaLaunchKernelExC_v11060, 430) \
    X(cudaLaunchKernelExC_ptsz_v11060, 431) X(cudaMemcpyBatchAsync_v12080, 482) \
    X(cudaMemcpyBatchAsync_ptsz_v12080, 483) X(cudaMemcpy3DBatchAsync_v12080, 484) \
    X(cudaMemcpy3DBatchAsync_ptsz_v12080, 485) X(cudaMemcpyBatchAsync_v13000, 509) \
    X(cudaMemcpyBatchAsync_ptsz_v13000, 510) X(cudaMemcpy3DBatchAsync_v13000, 511) \
    X(cudaMemcpy3DBatchAsync_ptsz_v13000, 512)

#define CUPTI_DRIVER_CBIDS(X) \
    X(cuMemcpyHtoD, 43) X(cuMemcpyDtoH, 45) X(cuMemcpyDtoD, 47) X(cuMemcpyDtoA, 49) \
    X(cuMemcpyAtoD, 51) X(cuMemcpyHtoA, 53) X(cuMemcpyAtoH, 54) X(cuMemcpyAtoA, 55) \
    X(cuMemcpy2D, 56) X(cuMemcpy2DUnaligned, 57) X(cuMemcpy3D, 58) X(cuMemcpyHtoDAsync, 60) \
    X(cuMemcpyDtoHAsync, 62) X(cuMemcpyDtoDAsync, 64) X(cuMemcpyHtoAAsync, 66) \
    X(cuMemcpyAtoHAsync, 67) X(cuMemcpy2DAsync, 68) X(cuMemcpy3DAsync, 69) X(cuMemsetD8, 71) \
    X(cuMemsetD16, 73) X(cuMemsetD32, 75) X(cuMemsetD2D8, 77) X(cuMemsetD2D16, 79) \
    X(cuMemsetD2D32, 81) X(cuLaunch, 115) X(cuLaunchGrid, 116) X(cuLaunchGridAsync, 117) \
    X(cuMemsetD8Async, 216) X(cuMemsetD16Async, 218) X(cuMemsetD32Async, 220) \
    X(cuMemsetD2D8Async, 222) X(cuMemsetD2D16Async, 224) X(cuMemsetD2D32Async, 226) \
    X(cuMemcpy_v2, 248) X(cuMemsetD8_v2, 249) X(cuMemsetD16_v2, 250) X(cuMemsetD32_v2, 251) \
    X(cuMemsetD2D8_v2, 252) X(cuMemsetD2D16_v2, 253) X(cuMemsetD2D32_v2, 254) \
    X(cuMemcpyHtoD_v2, 276) X(cuMemcpyHtoDAsync_v2, 277) X(cuMemcpyDtoH_v2, 278) \
    X(cuMemcpyDtoHAsync_v2, 279) X(cuMemcpyDtoD_v2, 280) X(cuMemcpyDtoDAsync_v2, 281) \
    X(cuMemcpyAtoH_v2, 282) X(cuMemcpyAtoHAsync_v2, 283) X(cuMemcpyAtoD_v2, 284) \
    X(cuMemcpyDtoA_v2, 285) X(cuMemcpyAtoA_v2, 286) X(cuMemcpy2D_v2, 287) \
    X(cuMemcpy2DUnaligned_v2, 288) X(cuMemcpy2DAsync_v2, 289) X(cuMemcpy3D_v2, 290) \
    X(cuMemcpy3DAsync_v2, 291) X(cuMemcpyHtoA_v2, 292) X(cuMemcpyHtoAAsync_v2, 293) \
    X(cuMemcpy, 305) X(cuMemcpyAsync, 306) X(cuLaunchKernel, 307) X(cuMemcpyPeer, 318) \
    X(cuMemcpyPeerAsync, 319) X(cuMemcpy3DPeer, 320) X(cuMemcpy3DPeerAsync, 321) \
    X(cuMemcpyHtoD_v2_ptds, 397) X(cuMemcpyDtoH_v2_ptds, 398) X(cuMemcpyDtoD_v2_ptds, 399) \
    X(cuMemcpyDtoA_v2_ptds, 400) X(cuMemcpyAtoD_v2_ptds, 401) X(cuMemcpyHtoA_v2_ptds, 402) \
    X(cuMemcpyAtoH_v2_ptds, 403) X(cuMemcpyAtoA_v2_ptds, 404) X(cuMemcpy2D_v2_ptds, 405) \
    X(cuMemcpy2DUnaligned_v2_ptds, 406) X(cuMemcpy3D_v2_ptds, 407) X(cuMemcpy_ptds, 408) \
    X(cuMemcpyPeer_ptds, 409) X(cuMemcpy3DPeer_ptds, 410) X(cuMemsetD8_v2_ptds, 411) \
    X(cuMemsetD16_v2_ptds, 412) X(cuMemsetD32_v2_ptds, 413) X(cuMemsetD2D8_v2_ptds, 414) \
    X(cuMemsetD2D16_v2_ptds, 415) X(cuMemsetD2D32_v2_ptds, 416) X(cuMemcpyAsync_ptsz, 418) \
    X(cuMemcpyHtoAAsync_v2_ptsz, 419) X(cuMemcpyAtoHAsync_v2_ptsz, 420) \
    X(cuMemcpyHtoDAsync_v2_ptsz, 421) X(cuMemcpyDtoHAsync_v2_ptsz, 422) \
    X(cuMemcpyDtoDAsync_v2_ptsz, 423) X(cuMemcpy2DAsync_v2_ptsz, 424) \
    X(cuMemcpy3DAsync_v2_ptsz, 425) X(cuMemcpyPeerAsync_ptsz, 426) \
    X(cuMemcpy3DPeerAsync_ptsz, 427) X(cuMemsetD8Async_ptsz, 428) \
    X(cuMemsetD16Async_ptsz, 429) X(cuMemsetD32Async_ptsz, 430) X(cuMemsetD2D8Async_ptsz, 431) \
    X(cuMemsetD2D16Async_ptsz, 432) X(cuMemsetD2D32Async_ptsz, 433) \
    X(cuLaunchKernel_ptsz, 442) X(cuLaunchCooperativeKernel, 477) \
    X(cuLaunchCooperativeKernel_ptsz, 478) X(cuLaunchCooperativeKernelMultiDevice, 480) \
    X(cuGraphLaunch, 514) X(cuGraphLaunch_ptsz, 515) X(cuLaunchKernelEx, 652) \
    X(cuLaunchKernelEx_ptsz, 653) X(cuMemcpyBatchAsync, 776) X(cuMemcpyBatchAsync_ptsz, 777) \
    X(cuMemcpy3DBatchAsync, 778) X(cuMemcpy3DBatchAsync_ptsz, 779) \
    X(cuMemcpyBatchAsync_v2, 796) X(cuMemcpyBatchAsync_v2_ptsz, 797) \
    X(cuMemcpy3DBatchAsync_v2, 798) X(cuMemcpy3DBatchAsync_v2_ptsz, 799)

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
    cupti_result (*EnableCallback)(uint32_t enable, void *subscriber, int domain, uint32_t cbid);
    cupti_result (*ActivityRegisterCallbacks)(cupti_buffer_request_fn request,
                                              cupti_buffer_complete_fn complete);
    cupti_result (*ActivityEnable)(int kind);
    cupti_result (*ActivityDisable)(int kind);
    cupti_result (*ActivityFlushAll)(uint32_t flag);
    cupti_result (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid_size, cupti_record **record);
    cupti_result (*GetTimestamp)(uint64_t *timestamp);
    cupti_result (*ActivityGetNumDroppedRecords)(void *context, uint32_t stream_id, size_t *dropped);
    cupti_result (*GetResultString)(cupti_result result, const char **str);
} cupti_api;

#endif
