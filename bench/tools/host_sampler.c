/* A sampling profiler of the host, preloaded into a process on the GPU machine (which has no
 * perf): LD_PRELOAD=host_sampler.so NDP_SAMPLES=FILE cmd ... A helper thread signals every other
 * thread of the process every 100 us of wall time (the kernel's CPU-time timers tick at only 250
 * Hz), and each records its stack, waiting or not. FILE gets the program's load address, then a
 * line a sample: the thread, then the return addresses. bench/tools/host_samples.py symbolises
 * them against the same binary here, for the thread that ran the program.
 * Build: gcc -O2 -shared -fPIC -pthread -o host_sampler.so host_sampler.c */
#define _GNU_SOURCE
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { kMaxSamples = 400000, kDepth = 24 };
static void* stacks[kMaxSamples][kDepth];
static unsigned char depths[kMaxSamples];
static int threads[kMaxSamples];
static volatile int taken, stopping;
static pid_t helper;

static void on_tick(int sig) {
  (void)sig;
  int k = __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
  if (k >= kMaxSamples) return;
  threads[k] = (int)syscall(SYS_gettid);
  depths[k] = (unsigned char)backtrace(stacks[k], kDepth);
}

/* Every 100 us: SIGPROF to each thread of the process but this one. */
static void* tick_all(void* unused) {
  (void)unused;
  helper = (pid_t)syscall(SYS_gettid);
  const pid_t pid = getpid();
  while (!stopping) {
    DIR* d = opendir("/proc/self/task");
    if (d) {
      struct dirent* e;
      while ((e = readdir(d)) != NULL) {
        const pid_t tid = (pid_t)atoi(e->d_name);
        if (tid > 0 && tid != helper) syscall(SYS_tgkill, pid, tid, SIGPROF);
      }
      closedir(d);
    }
    struct timespec t = {0, 100000};
    nanosleep(&t, NULL);
  }
  return NULL;
}

static int first_object(struct dl_phdr_info* info, size_t size, void* base) {
  (void)size;
  *(unsigned long*)base = info->dlpi_addr;
  return 1; /* the program itself comes first */
}

__attribute__((constructor)) static void start(void) {
  if (!getenv("NDP_SAMPLES")) return;
  void* warm[4];
  backtrace(warm, 4); /* loads the unwinder before any signal */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_tick;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  pthread_t th;
  pthread_create(&th, NULL, tick_all, NULL);
  pthread_detach(th);
}

__attribute__((destructor)) static void finish(void) {
  const char* path = getenv("NDP_SAMPLES");
  if (!path) return;
  stopping = 1;
  struct timespec t = {0, 1000000};
  nanosleep(&t, NULL);
  FILE* f = fopen(path, "w");
  if (!f) return;
  unsigned long base = 0;
  dl_iterate_phdr(first_object, &base);
  fprintf(f, "base %lx\n", base);
  int n = taken < kMaxSamples ? taken : kMaxSamples;
  for (int k = 0; k < n; ++k) {
    fprintf(f, "%d ", threads[k]);
    for (int d = 1; d < depths[k]; ++d) fprintf(f, "%lx ", (unsigned long)stacks[k][d] - base);
    fputc('\n', f);
  }
  fclose(f);
}
