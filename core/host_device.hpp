// GCB_HD marks a function callable from host and device code: __host__ __device__ under nvcc,
// nothing in plain C++ translation units, so one header serves both compilers.
#pragma once

#if defined(__CUDACC__)
#define GCB_HD __host__ __device__
#else
#define GCB_HD
#endif
