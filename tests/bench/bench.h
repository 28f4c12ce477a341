/* bench.h: the benchmark runner (make bench). Each benchmark writes its numbers to a file in
 * the results folder; timings are medians of repeats measured in one run, since the machine
 * is shared and noisy. Benchmarks assert nothing about speed. */
#ifndef CD_BENCH_H
#define CD_BENCH_H

#include <stdio.h>

typedef void (*cdBenchFn)(const char *outdir);
void cd_benchRegister(const char *name, cdBenchFn fn);
double cd_benchNow(void);                   /* monotonic seconds */
double cd_benchMedian(double *x, int n);    /* sorts x */
FILE *cd_benchOpen(const char *outdir, const char *file); /* outdir/file for writing, echoed to stdout */
/* the number after "key": in a JSON line such as cdsim --summary prints, or NAN */
double cd_benchJsonNumber(const char *line, const char *key);
/* the peer bench (../shared/peer-bench, or $CDSIM_PEER_BENCH) when its program tool is there and
 * python3 runs (its scripts need it); NULL otherwise: the caller says it skipped */
const char *cd_benchPeerBench(const char *tool);

#define CD_BENCH(name)                                                        \
  static void name(const char *outdir);                                       \
  __attribute__((constructor)) static void name##_register(void) { cd_benchRegister(#name, name); } \
  static void name(const char *outdir)

#endif
