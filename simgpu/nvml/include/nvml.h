/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of NVML's C API that the simulated NVML (simgpu/nvml) and its
 * tests implement and call, declared as NVML's API reference documents it:
 * the same type layouts, enum values, buffer sizes, struct versions and
 * exported names, so that code compiled against it also runs against the
 * real libnvidia-ml.so.1.  Nothing else of NVML is declared here.  The
 * build uses the CUDA toolkit's nvml.h instead when the toolkit has one
 * (simgpu/nvml/nvml.mk).
 *
 * As in the real header, the plain names of functions that NVML versioned
 * (nvmlInit, nvmlDeviceGetCount, ...) are macros for their newest version
 * unless NVML_NO_UNVERSIONED_FUNC_DEFS is defined; then they are the
 * legacy entry points, which the library exports too.
 */
#ifndef IG_SIMGPU_NVML_H
#define IG_SIMGPU_NVML_H

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes: only those the simulated NVML gives. */
typedef enum nvmlReturn_enum {
	NVML_SUCCESS				= 0,
	NVML_ERROR_UNINITIALIZED		= 1,
	NVML_ERROR_INVALID_ARGUMENT		= 2,
	NVML_ERROR_NOT_SUPPORTED		= 3,
	NVML_ERROR_NO_PERMISSION		= 4,
	NVML_ERROR_ALREADY_INITIALIZED		= 5,
	NVML_ERROR_NOT_FOUND			= 6,
	NVML_ERROR_INSUFFICIENT_SIZE		= 7,
	NVML_ERROR_DRIVER_NOT_LOADED		= 9,
	NVML_ERROR_FUNCTION_NOT_FOUND		= 13,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH	= 18,
	NVML_ERROR_MEMORY			= 20,
	NVML_ERROR_NO_DATA			= 21,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH	= 25,
} nvmlReturn_t;

/* nvmlInitWithFlags' flags. */
#define NVML_INIT_FLAG_NO_GPUS		1
#define NVML_INIT_FLAG_NO_ATTACH	2

/* Buffer sizes large enough for what the queries write. */
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE		96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE		96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE	80

/* A counter the driver cannot report (e.g. usedGpuMemory). */
#define NVML_VALUE_NOT_AVAILABLE	(-1)

typedef struct nvmlDevice_st *nvmlDevice_t;

/* What nvmlDeviceGetComputeRunningProcesses_v3 fills: one per process. */
typedef struct nvmlProcessInfo_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;	/* bytes */
	unsigned int gpuInstanceId;		/* 0xFFFFFFFF without MIG */
	unsigned int computeInstanceId;		/* 0xFFFFFFFF without MIG */
} nvmlProcessInfo_t;

/* Percent of the last sample period busy. */
typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

typedef enum nvmlSamplingType_enum {
	NVML_TOTAL_POWER_SAMPLES	= 0,
	NVML_GPU_UTILIZATION_SAMPLES	= 1,
	NVML_MEMORY_UTILIZATION_SAMPLES	= 2,
	NVML_ENC_UTILIZATION_SAMPLES	= 3,
	NVML_DEC_UTILIZATION_SAMPLES	= 4,
	NVML_PROCESSOR_CLK_SAMPLES	= 5,
	NVML_MEMORY_CLK_SAMPLES		= 6,
} nvmlSamplingType_t;

typedef enum nvmlValueType_enum {
	NVML_VALUE_TYPE_DOUBLE			= 0,
	NVML_VALUE_TYPE_UNSIGNED_INT		= 1,
	NVML_VALUE_TYPE_UNSIGNED_LONG		= 2,
	NVML_VALUE_TYPE_UNSIGNED_LONG_LONG	= 3,
	NVML_VALUE_TYPE_SIGNED_LONG_LONG	= 4,
	NVML_VALUE_TYPE_SIGNED_INT		= 5,
	NVML_VALUE_TYPE_UNSIGNED_SHORT		= 6,
} nvmlValueType_t;

/* A sample's value, read as its nvmlValueType_t says. */
typedef union nvmlValue_st {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlSample_st {
	unsigned long long timeStamp;	/* CPU wall clock, microseconds */
	nvmlValue_t sampleValue;
} nvmlSample_t;

/* nvmlDeviceGetProcessUtilization: one per process and sample. */
typedef struct nvmlProcessUtilizationSample_st {
	unsigned int pid;
	unsigned long long timeStamp;	/* CPU wall clock, microseconds */
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* GPM (GPU performance monitoring): metrics between two samples. */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

typedef enum {
	NVML_GPM_METRIC_GRAPHICS_UTIL	= 1,
	NVML_GPM_METRIC_SM_UTIL		= 2,
	NVML_GPM_METRIC_SM_OCCUPANCY	= 3,
	/* The bound of metric ids; sizes nvmlGpmMetricsGet_t (NVML 13). */
	NVML_GPM_METRIC_MAX		= 210,
} nvmlGpmMetricId_t;

typedef struct {
	unsigned int metricId;		/* in: an nvmlGpmMetricId_t */
	nvmlReturn_t nvmlReturn;	/* out: value is valid when 0 */
	double value;
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo;			/* out: may be NULL */
} nvmlGpmMetric_t;

#define NVML_GPM_METRICS_GET_VERSION	1

typedef struct {
	unsigned int version;		/* NVML_GPM_METRICS_GET_VERSION */
	unsigned int numMetrics;	/* entries of metrics[] asked for */
	nvmlGpmSample_t sample1;
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

#define NVML_GPM_SUPPORT_VERSION	1

typedef struct {
	unsigned int version;		/* NVML_GPM_SUPPORT_VERSION */
	unsigned int isSupportedDevice;	/* out */
} nvmlGpmSupport_t;

/* Initialization and errors. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);

/* Devices. */
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
					   nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
			       unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name,
			       unsigned int length);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device,
				      unsigned int *minorNumber);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_t *infos);

/* Utilization. */
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
					   nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
				  unsigned long long lastSeenTimeStamp,
				  nvmlValueType_t *sampleValType,
				  unsigned int *sampleCount,
				  nvmlSample_t *samples);
nvmlReturn_t nvmlDeviceGetProcessUtilization(
	nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
	unsigned int *processSamplesCount,
	unsigned long long lastSeenTimeStamp);

/* GPM. */
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device,
				       nvmlGpmSupport_t *gpmSupport);
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample);
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet);

#ifndef NVML_NO_UNVERSIONED_FUNC_DEFS
#define nvmlInit				nvmlInit_v2
#define nvmlDeviceGetCount			nvmlDeviceGetCount_v2
#define nvmlDeviceGetHandleByIndex		nvmlDeviceGetHandleByIndex_v2
#define nvmlDeviceGetComputeRunningProcesses	\
	nvmlDeviceGetComputeRunningProcesses_v3
#else
/* The legacy entry points behind the plain names. */
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
					nvmlDevice_t *device);
#endif

#ifdef __cplusplus
}
#endif

#endif
