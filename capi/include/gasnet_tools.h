/*
 * gasnet_tools.h: the GASNet tools subset of gasnet-ofi (timers, atomics,
 * portability macros, small utilities), written for this project from
 * GASNet's documented names and meanings. Usable without gasnetex.h.
 */
#ifndef GASNET_TOOLS_H
#define GASNET_TOOLS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* The GASNet tools specification version followed (GASNet-EX.txt's). */
#define GASNETT_SPEC_VERSION_MAJOR 1
#define GASNETT_SPEC_VERSION_MINOR 17

/* ---- portability macros --------------------------------------------------- */
#ifdef __cplusplus
#define GASNETT_BEGIN_EXTERNC extern "C" {
#define GASNETT_EXTERNC extern "C"
#define GASNETT_END_EXTERNC }
#else
#define GASNETT_BEGIN_EXTERNC
#define GASNETT_EXTERNC extern
#define GASNETT_END_EXTERNC
#endif

#define GASNETT_INLINE(fnname) static inline
/* The attribute goes first, so the macro also wraps a definition. */
#define GASNETT_NEVER_INLINE(fnname, declarator) __attribute__((__noinline__)) declarator
#define GASNETT_NORETURN __attribute__((__noreturn__))
#define GASNETT_NORETURNP(fnname)
/* The attribute goes first, so the macro also wraps a definition. */
#define GASNETT_FORMAT_PRINTF(fnname, fmtarg, firstvararg, declarator) \
    __attribute__((__format__(__printf__, fmtarg, firstvararg))) declarator
#define GASNETT_IDENT(identName, identText) \
    extern char volatile identName[];      \
    char volatile identName[] = identText
#define GASNETT_TRACE_PRINTF(...) ((void)0)
#define GASNETT_TRACE_SETSOURCELINE(file, line) ((void)0)
#define GASNET_BEGIN_FUNCTION() ((void)0)
#define GASNETT_CURRENT_FUNCTION __func__

#define _STRINGIFY_HELPER(x) #x
#define _STRINGIFY(x) _STRINGIFY_HELPER(x)
#define _CONCAT_HELPER(a, b) a##b
#define _CONCAT(a, b) _CONCAT_HELPER(a, b)

#define GASNETT_PREDICT_TRUE(e) __builtin_expect(!!(e), 1)
#define GASNETT_PREDICT_FALSE(e) __builtin_expect(!!(e), 0)
#define if_pf(cond) if (GASNETT_PREDICT_FALSE(cond))
#define if_pt(cond) if (GASNETT_PREDICT_TRUE(cond))

/* ---- platform --------------------------------------------------------------- */
#define GASNETT_PAGESIZE 4096
/* The data cache line of the CPUs this header is built for. */
#if defined(__powerpc64__) || defined(__ppc64__)
#define GASNETT_CACHE_LINE_BYTES 128
#else
#define GASNETT_CACHE_LINE_BYTES 64
#endif
#define GASNETT_SYSTEM_TUPLE "x86_64-pc-linux-gnu"
#if defined(__clang__)
#define PLATFORM_COMPILER_FAMILYNAME CLANG
#elif defined(__GNUC__)
#define PLATFORM_COMPILER_FAMILYNAME GNU
#else
#define PLATFORM_COMPILER_FAMILYNAME UNKNOWN
#endif
#if defined(__VERSION__)
#define PLATFORM_COMPILER_VERSION_STR __VERSION__
#else
#define PLATFORM_COMPILER_VERSION_STR "unknown"
#endif

GASNETT_BEGIN_EXTERNC

/* ---- timers ------------------------------------------------------------------- */
typedef uint64_t gasnett_tick_t;
#define GASNETT_TICK_MIN ((gasnett_tick_t)0)
#define GASNETT_TICK_MAX (~(gasnett_tick_t)0)
extern gasnett_tick_t gasnett_ticks_now(void);
extern uint64_t gasnett_ticks_to_ns(gasnett_tick_t ticks);
extern uint64_t gasnett_ticks_to_us(gasnett_tick_t ticks);
extern double gasnett_tick_granularityus(void);
extern double gasnett_tick_overheadus(void);

/* ---- memory barriers -------------------------------------------------------------
 * Each is a full fence (a sequentially consistent thread fence, which is
 * also a compiler barrier): stronger than GASNet requires of the write
 * and read barriers, so each meets its definition on every CPU. */
#define gasnett_local_wmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_rmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* ---- atomics (sequentially consistent; the flags are accepted and unused) -- */
typedef struct {
    volatile uint32_t gasnett_ctr;
} gasnett_atomic_t;
typedef uint32_t gasnett_atomic_val_t;
#define GASNETT_ATOMIC_NONE 0
#define GASNETT_ATOMIC_MAX ((gasnett_atomic_val_t)0xFFFFFFFFu)
#define gasnett_atomic_init(v) { (v) }
#define gasnett_atomic_read(p, flags) (__atomic_load_n(&(p)->gasnett_ctr, __ATOMIC_SEQ_CST))
#define gasnett_atomic_set(p, v, flags) (__atomic_store_n(&(p)->gasnett_ctr, (v), __ATOMIC_SEQ_CST))
#define gasnett_atomic_increment(p, flags) ((void)__atomic_add_fetch(&(p)->gasnett_ctr, 1, __ATOMIC_SEQ_CST))
#define gasnett_atomic_decrement(p, flags) ((void)__atomic_sub_fetch(&(p)->gasnett_ctr, 1, __ATOMIC_SEQ_CST))
#define gasnett_atomic_add(p, v, flags) (__atomic_add_fetch(&(p)->gasnett_ctr, (v), __ATOMIC_SEQ_CST))

/* ---- utilities ------------------------------------------------------------------ */
extern uint64_t gasnett_checksum(const void *p, int numbytes);
extern int gasnett_cpu_count(void);
extern int gasnett_getenv_yesno_withdefault(const char *keyname, int defaultval);
extern const char *gasnett_gethostname(void);
extern void gasnett_nsleep(uint64_t ns_delay);
extern int64_t gasnett_parse_int(const char *str, uint64_t mem_size_multiplier);
extern int gasnett_sched_yield(void);
/* End this process at once with exitcode (output streams flushed), without
 * the job's exit protocol: the launcher ends the other ranks. */
GASNETT_NORETURN extern void gasnett_killmyprocess(int exitcode);
/* Print "*** FATAL ERROR: <message>" and abort this process. */
GASNETT_NORETURN extern void gasnett_fatalerror(const char *msg);
/* No backtrace support: returns non-zero (nothing printed). */
extern int gasnett_print_backtrace(int fd);
typedef void (*gasnett_sighandlerfn_t)(int);
/* Install fn for sig (signal(2)); the previous handler. */
extern gasnett_sighandlerfn_t gasnett_reghandler(int sigtocatch, gasnett_sighandlerfn_t fn);
extern int gasnett_verboseenv(void);
extern const char *gasnett_performance_warning_str(void);

/* ---- VIS metadata as text (GASNet's formatting tools) ---------------------------
 * Each writes at most its _bufsz bytes (NUL included) into buf; list is a
 * gasnet_memvec_t or gex_Memvec_t array; count[] of a strided transfer has
 * stridelevels+1 entries (GASNet-1's, the first in bytes). pstats is not
 * written (pass NULL). */
typedef struct {
    size_t minsz, maxsz;
    uintptr_t totalsz;
    void *minaddr, *maxaddr;
} gasnett_memveclist_stats_t;
typedef struct {
    void *minaddr, *maxaddr;
} gasnett_addrlist_stats_t;
extern size_t gasnett_format_memveclist_bufsz(size_t count);
extern gasnett_memveclist_stats_t gasnett_format_memveclist(char *buf, size_t count, const void *list);
extern size_t gasnett_format_addrlist_bufsz(size_t count);
extern gasnett_addrlist_stats_t gasnett_format_addrlist(char *buf, size_t count, void *const *list,
                                                        size_t len);
extern size_t gasnett_format_strides_bufsz(size_t count);
extern void gasnett_format_strides(char *buf, size_t count, const size_t *list);
extern size_t gasnett_format_putsgets_bufsz(size_t stridelevels);
extern size_t gasnett_format_putsgets(char *buf, void *pstats, uint32_t node, void *dstaddr,
                                      const size_t dststrides[], void *srcaddr,
                                      const size_t srcstrides[], const size_t count[],
                                      size_t stridelevels);

GASNETT_END_EXTERNC

#endif /* GASNET_TOOLS_H */
